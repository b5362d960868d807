"""Optimizers step by step against hand-written numpy updates of Keras 3's formulas; the
apply_gradients pipeline (None grads, accumulation, clipping, iterations, learning rate) and the
one-host-call contract."""
import math
import os

import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from fake_tracer import tracing
from minitf.keras import optimizers

SHAPES = [(3, 4), (5,), (400, 400)]   # the last one is large enough for the optional thread split


def _grads(rng, steps):
    return [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]


def _init(rng):
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES]


# --- numpy references (Keras 3 formulas) -----------------------------------------------------

def ref_sgd(w, g, st, t, learning_rate=0.01, momentum=0.0, nesterov=False):
    lr = learning_rate
    if momentum == 0:
        return w - lr * g
    m = st.setdefault("m", np.zeros_like(w))
    m[...] = m * momentum - g * lr
    if nesterov:
        return w + (m * momentum - g * lr)
    return w + m


def ref_adam(w, g, st, t, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
             weight_decay=None):
    lr = learning_rate
    if weight_decay:
        w = w - w * weight_decay * lr
    m = st.setdefault("m", np.zeros_like(w))
    v = st.setdefault("v", np.zeros_like(w))
    m[...] = m + (g - m) * (1 - beta_1)
    v[...] = v + (g * g - v) * (1 - beta_2)
    alpha = lr * math.sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
    vv = v
    if amsgrad:
        vh = st.setdefault("vhat", np.zeros_like(w))
        vh[...] = np.maximum(vh, v)
        vv = vh
    return w - (m * alpha) / (np.sqrt(vv) + epsilon)


def ref_rmsprop(w, g, st, t, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False):
    lr = learning_rate
    v = st.setdefault("v", np.zeros_like(w))
    v[...] = rho * v + (1 - rho) * g * g
    if centered:
        a = st.setdefault("a", np.zeros_like(w))
        a[...] = rho * a + (1 - rho) * g
        den = v - a * a + epsilon
    else:
        den = v + epsilon
    inc = lr * g / np.sqrt(den)
    if momentum > 0:
        mom = st.setdefault("mom", np.zeros_like(w))
        mom[...] = momentum * mom + inc
        return w - mom
    return w - inc


def ref_adagrad(w, g, st, t, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7):
    lr = learning_rate
    acc = st.setdefault("acc", np.full_like(w, initial_accumulator_value))
    acc[...] = acc + g * g
    return w - lr * g / np.sqrt(acc + epsilon)


CASES = [
    ("sgd", optimizers.SGD, {"learning_rate": 0.1}, ref_sgd),
    ("sgd-momentum", optimizers.SGD, {"learning_rate": 0.1, "momentum": 0.9}, ref_sgd),
    ("sgd-nesterov", optimizers.SGD, {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True},
     ref_sgd),
    ("adam", optimizers.Adam, {"learning_rate": 0.01}, ref_adam),
    ("adam-amsgrad", optimizers.Adam, {"learning_rate": 0.01, "amsgrad": True}, ref_adam),
    ("adam-wd", optimizers.Adam, {"learning_rate": 0.01, "weight_decay": 0.1}, ref_adam),
    ("rmsprop", optimizers.RMSprop, {"learning_rate": 0.01}, ref_rmsprop),
    ("rmsprop-momentum", optimizers.RMSprop, {"learning_rate": 0.01, "momentum": 0.5}, ref_rmsprop),
    ("rmsprop-centered", optimizers.RMSprop,
     {"learning_rate": 0.01, "centered": True, "momentum": 0.3}, ref_rmsprop),
    ("adagrad", optimizers.Adagrad, {"learning_rate": 0.05}, ref_adagrad),
]


@pytest.mark.parametrize("name,cls,kw,ref", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy_reference(name, cls, kw, ref):
    rng = np.random.default_rng(0)
    init = _init(rng)
    variables = [tf.Variable(a, name=f"v{i}") for i, a in enumerate(init)]
    opt = cls(**kw)
    ws = [a.copy() for a in init]
    sts = [{} for _ in init]
    for t, grads in enumerate(_grads(rng, 5), start=1):
        opt.apply_gradients(zip([tf.constant(g) for g in grads], variables))
        ws = [ref(w, g, st, t, **kw) for w, g, st in zip(ws, grads, sts)]
        for v, w in zip(variables, ws):
            np.testing.assert_allclose(v.numpy(), w, rtol=1e-5, atol=1e-6)
    assert int(opt.iterations) == 5


EPS_CASES = [c for c in CASES if c[0] in ("adam", "adam-amsgrad", "rmsprop", "rmsprop-centered",
                                          "adagrad")]


@pytest.mark.parametrize("name,cls,kw,ref", EPS_CASES, ids=[c[0] for c in EPS_CASES])
def test_epsilon_form_with_tiny_gradients(name, cls, kw, ref):
    """With gradients ~1e-6 epsilon dominates, so where it sits (Adam: outside the square root,
    after bias correction of alpha; RMSprop/Adagrad: inside) decides the result."""
    rng = np.random.default_rng(7)
    variables = [tf.Variable(np.zeros(s, np.float32)) for s in SHAPES[:2]]
    opt = cls(**kw)
    ws, sts = [np.zeros(s, np.float32) for s in SHAPES[:2]], [{}, {}]
    for t in range(1, 4):
        grads = [(rng.standard_normal(s) * 1e-6).astype(np.float32) for s in SHAPES[:2]]
        opt.apply_gradients(zip(grads, variables))
        ws = [ref(w, g, st, t, **kw) for w, g, st in zip(ws, grads, sts)]
    for v, w in zip(variables, ws):
        np.testing.assert_allclose(v.numpy(), w, rtol=1e-4, atol=0)
    if name == "adam":  # the test can tell the forms apart: epsilon inside the sqrt differs
        wrong = ref(np.zeros(5, np.float32), np.full(5, 1e-6, np.float32), {}, 1,
                    **dict(kw, epsilon=0.0))
        right = ref(np.zeros(5, np.float32), np.full(5, 1e-6, np.float32), {}, 1, **kw)
        assert abs(wrong[0] / right[0] - 1) > 1e-2


def test_adamw_matches_reference_with_default_decay():
    rng = np.random.default_rng(1)
    init = _init(rng)
    variables = [tf.Variable(a) for a in init]
    opt = optimizers.AdamW(learning_rate=0.01)
    assert opt.weight_decay == 0.004
    ws, sts = [a.copy() for a in init], [{} for _ in init]
    for t, grads in enumerate(_grads(rng, 4), start=1):
        opt.apply_gradients(zip(grads, variables))
        ws = [ref_adam(w, g, st, t, learning_rate=0.01, weight_decay=0.004) for w, g, st in zip(ws, grads, sts)]
    for v, w in zip(variables, ws):
        np.testing.assert_allclose(v.numpy(), w, rtol=1e-5, atol=1e-6)


def test_keras_defaults():
    adam = optimizers.Adam()
    assert (float(adam.learning_rate), adam.beta_1, adam.beta_2, adam.epsilon) == \
        (pytest.approx(0.001), 0.9, 0.999, 1e-7)
    rms = optimizers.RMSprop()
    assert (rms.rho, rms.momentum, rms.epsilon, rms.centered) == (0.9, 0.0, 1e-7, False)
    ada = optimizers.Adagrad()
    assert (ada.initial_accumulator_value, ada.epsilon) == (0.1, 1e-7)
    sgd = optimizers.SGD()
    assert float(sgd.learning_rate) == pytest.approx(0.01)
    assert (sgd.momentum, sgd.nesterov) == (0.0, False)
    assert optimizers.AdamW().weight_decay == 0.004
    assert optimizers.Adam(1e-5).learning_rate.numpy() == np.float32(1e-5)


def test_weight_decay_exclusion():
    a, b = tf.Variable([1.0, 2.0], name="kernel"), tf.Variable([1.0, 2.0], name="bias")
    opt = optimizers.SGD(0.5, weight_decay=0.1)
    opt.exclude_from_weight_decay(var_names=["bias"])
    opt.apply_gradients([(tf.zeros(2), a), (tf.zeros(2), b)])
    np.testing.assert_allclose(a.numpy(), [0.95, 1.9], rtol=1e-6)
    np.testing.assert_array_equal(b.numpy(), [1.0, 2.0])


def test_none_gradients_are_skipped():
    a, b = tf.Variable([1.0]), tf.Variable([2.0])
    opt = optimizers.SGD(1.0)
    opt.apply_gradients([(None, a), (tf.constant([0.5]), b)])
    assert a.numpy()[0] == 1.0 and b.numpy()[0] == 1.5
    assert len(opt.variables) >= 1 and int(opt.iterations) == 1
    with pytest.raises(ValueError, match="No gradients"):
        opt.apply_gradients([(None, a)])


def test_shape_mismatch_and_non_variable():
    opt = optimizers.SGD()
    with pytest.raises(ValueError, match="does not match"):
        opt.apply_gradients([(tf.zeros(3), tf.Variable(tf.zeros(2)))])
    with pytest.raises(TypeError):
        opt.apply_gradients([(tf.zeros(2), tf.zeros(2))])


def test_gradients_as_numpy_and_float16_are_cast():
    v = tf.Variable([1.0, 1.0])
    opt = optimizers.SGD(0.5)
    opt.apply_gradients([(np.array([1.0, 2.0], np.float32), v)])
    opt.apply_gradients([(tf.constant([1.0, 2.0], dtype="float16"), v)])
    np.testing.assert_allclose(v.numpy(), [0.0, -1.0])
    assert v.dtype == tf.float32


def test_learning_rate_is_settable():
    v = tf.Variable([0.0])
    opt = optimizers.SGD(1.0)
    opt.apply_gradients([(tf.constant([1.0]), v)])
    opt.learning_rate = 0.5
    opt.apply_gradients([(tf.constant([1.0]), v)])
    opt.learning_rate.assign(0.25)
    opt.apply_gradients([(tf.constant([1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [-1.75])
    assert float(opt.learning_rate) == 0.25
    opt.learning_rate = optimizers.schedules.PiecewiseConstantDecay([10], [0.125, 0.0])
    opt.apply_gradients([(tf.constant([1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [-1.875])
    assert float(opt.learning_rate) == 0.125


def test_iterations_counts_updates():
    v = tf.Variable([0.0])
    opt = optimizers.Adam()
    assert int(opt.iterations) == 0 and opt.iterations.dtype == tf.int64
    for _ in range(3):
        opt.apply_gradients([(tf.constant([1.0]), v)])
    assert int(opt.iterations) == 3 and opt.iterations.numpy() == 3


# --- gradient accumulation -------------------------------------------------------------------

def _linear_problem(seed=3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((12, 5)).astype(np.float32)
    y = rng.standard_normal((12, 2)).astype(np.float32)
    w0 = rng.standard_normal((5, 2)).astype(np.float32)
    b0 = rng.standard_normal((2,)).astype(np.float32)
    return x, y, w0, b0


def _grad(w, b, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) + b - tf.constant(y)))
    return tape.gradient(loss, [w, b])


@pytest.mark.parametrize("make", [
    lambda **k: optimizers.SGD(0.1, **k),
    lambda **k: optimizers.SGD(0.1, momentum=0.9, **k),
    lambda **k: optimizers.Adam(0.01, **k),
    lambda **k: optimizers.AdamW(0.01, weight_decay=0.1, **k),
], ids=["sgd", "momentum", "adam", "adamw"])
def test_accumulation_equals_big_batch(make):
    x, y, w0, b0 = _linear_problem()
    w1, b1 = tf.Variable(w0), tf.Variable(b0)
    w2, b2 = tf.Variable(w0), tf.Variable(b0)
    big = make()
    small = make(gradient_accumulation_steps=3)
    for _ in range(2):
        big.apply_gradients(zip(_grad(w1, b1, x, y), [w1, b1]))
        seen = []
        for k in range(3):
            sl = slice(4 * k, 4 * k + 4)
            small.apply_gradients(zip(_grad(w2, b2, x[sl], y[sl]), [w2, b2]))
            seen.append(int(small.iterations))
        assert seen[-3:] == [int(big.iterations) - 1] * 2 + [int(big.iterations)]
    np.testing.assert_allclose(w2.numpy(), w1.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(b2.numpy(), b1.numpy(), rtol=1e-6, atol=1e-6)


def test_accumulation_iterations_and_no_update_before_k():
    v = tf.Variable([1.0, 1.0])
    opt = optimizers.SGD(1.0, gradient_accumulation_steps=3)
    its = []
    for g in ([3.0, 0.0], [0.0, 3.0], [3.0, 3.0]):
        before = v.numpy().copy()
        opt.apply_gradients([(tf.constant(g), v)])
        its.append(int(opt.iterations))
        if len(its) < 3:
            np.testing.assert_array_equal(v.numpy(), before)
    assert its == [0, 0, 1]
    np.testing.assert_allclose(v.numpy(), [-1.0, -1.0])


def test_clipping_happens_once_after_averaging():
    v = tf.Variable([0.0, 0.0])
    opt = optimizers.SGD(1.0, global_clipnorm=1.0, gradient_accumulation_steps=2)
    opt.apply_gradients([(tf.constant([2.0, 0.0]), v)])
    opt.apply_gradients([(tf.constant([0.0, 2.0]), v)])
    np.testing.assert_allclose(-v.numpy(), [0.70710677, 0.70710677], rtol=1e-6)
    assert [int(opt.iterations)] == [1]


def test_schedule_sees_updates_not_micro_steps():
    sched = optimizers.schedules.PiecewiseConstantDecay([0], [1.0, 0.5])  # step 0: 1, then 0.5
    v = tf.Variable([0.0])
    opt = optimizers.SGD(sched, gradient_accumulation_steps=2)
    for _ in range(4):
        opt.apply_gradients([(tf.constant([1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [-1.5])


# --- clipping --------------------------------------------------------------------------------

def test_only_one_clip_option():
    with pytest.raises(ValueError, match="Only one of"):
        optimizers.Adam(clipnorm=1.0, clipvalue=1.0)
    with pytest.raises(ValueError, match="Only one of"):
        optimizers.SGD(clipnorm=1.0, global_clipnorm=1.0)


def test_clipnorm_clipvalue_global_clipnorm():
    g1, g2 = np.array([3.0, 4.0], np.float32), np.array([0.3, 0.4], np.float32)

    def run(**kw):
        a, b = tf.Variable([0.0, 0.0]), tf.Variable([0.0, 0.0])
        optimizers.SGD(1.0, **kw).apply_gradients([(tf.constant(g1), a), (tf.constant(g2), b)])
        return -a.numpy(), -b.numpy()

    a, b = run(clipnorm=1.0)   # per tensor
    np.testing.assert_allclose(a, [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(b, g2, rtol=1e-6)
    a, b = run(clipvalue=0.35)
    np.testing.assert_allclose(a, [0.35, 0.35])
    np.testing.assert_allclose(b, [0.3, 0.35])
    a, b = run(global_clipnorm=1.0)
    norm = math.sqrt(25 + 0.25)
    np.testing.assert_allclose(a, g1 / norm, rtol=1e-6)
    np.testing.assert_allclose(b, g2 / norm, rtol=1e-6)
    a, b = run(global_clipnorm=100.0)
    np.testing.assert_array_equal(a, g1)


def test_non_finite_global_norm_gives_nan():
    v = tf.Variable([0.0, 0.0])
    optimizers.SGD(1.0, global_clipnorm=1.0).apply_gradients([(tf.constant([np.inf, 1.0]), v)])
    assert np.isnan(v.numpy()).all()


def test_clipping_does_not_modify_the_callers_gradient():
    g = tf.constant([3.0, 4.0])
    v = tf.Variable([0.0, 0.0])
    optimizers.SGD(1.0, clipnorm=1.0).apply_gradients([(g, v)])
    np.testing.assert_array_equal(g.numpy(), [3.0, 4.0])


# --- the one-host-call contract --------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"global_clipnorm": 0.5}, {"gradient_accumulation_steps": 2},
                                {"learning_rate": optimizers.schedules.ExponentialDecay(0.1, 1, 0.5)}])
def test_one_host_call_and_replay_matches_eager(kw):
    """A trace records exactly one host call and no ops; replaying it with new gradient arrays
    gives the same result as eager apply_gradients."""
    rng = np.random.default_rng(5)
    init = _init(rng)
    grads = _grads(rng, 6)
    eager_vars = [tf.Variable(a) for a in init]
    traced_vars = [tf.Variable(a) for a in init]
    eager = optimizers.Adam(**kw)
    traced = optimizers.Adam(**kw)
    for g in grads:
        eager.apply_gradients(zip([tf.constant(x) for x in g], eager_vars))
    with tracing() as tracer:
        traced.apply_gradients(zip([tf.constant(x) for x in grads[0]], traced_vars))
    assert len(tracer.hosts) == 1 and tracer.ops == [] and tracer.assigns == []
    fn, _ = tracer.hosts[0]
    for g in grads[1:]:
        fn(*[B.from_numpy(x) for x in g])     # what a replay does: the same fn, new arrays
    for a, b in zip(eager_vars, traced_vars):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert int(eager.iterations) == int(traced.iterations)


def test_replay_follows_learning_rate_changes():
    v = tf.Variable([0.0])
    opt = optimizers.SGD(1.0)
    with tracing() as tracer:
        opt.apply_gradients([(tf.constant([1.0]), v)])
    fn, _ = tracer.hosts[0]
    opt.learning_rate = 0.5
    fn(B.from_numpy(np.array([1.0], np.float32)))
    np.testing.assert_allclose(v.numpy(), [-1.5])


def test_variable_buffers_keep_identity():
    v = tf.Variable(np.ones((300, 500), np.float32))
    buf = v._value
    opt = optimizers.Adam()
    opt.apply_gradients([(tf.ones((300, 500)), v)])
    slots = [s._value for s in opt.variables]
    opt.apply_gradients([(tf.ones((300, 500)), v)])
    assert v._value is buf
    assert all(a is b._value for a, b in zip(slots, opt.variables))


def test_minimize_with_callable_and_tape():
    v = tf.Variable([3.0])
    opt = optimizers.SGD(0.25)
    opt.minimize(lambda: tf.reduce_sum(v * v), [v])
    np.testing.assert_allclose(v.numpy(), [1.5])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    opt.minimize(loss, [v], tape=tape)
    np.testing.assert_allclose(v.numpy(), [0.75])


def test_get_config_from_config_and_get():
    opt = optimizers.Adam(learning_rate=optimizers.schedules.CosineDecay(0.1, 10), beta_1=0.8,
                          clipnorm=2.0)
    config = opt.get_config()
    assert config["beta_1"] == 0.8 and config["clipnorm"] == 2.0
    again = optimizers.Adam.from_config(config)
    assert isinstance(again.learning_rate, tf.Tensor)
    assert again._lr_schedule.get_config() == opt._lr_schedule.get_config()
    assert isinstance(optimizers.get("adam"), optimizers.Adam)
    assert isinstance(optimizers.get("SGD"), optimizers.SGD)
    assert isinstance(optimizers.get("rmsprop"), optimizers.RMSprop)
    assert isinstance(optimizers.get("adagrad"), optimizers.Adagrad)
    assert isinstance(optimizers.get("adamw"), optimizers.AdamW)
    assert optimizers.get(opt) is opt
    ser = optimizers.serialize(opt)
    assert isinstance(optimizers.get(ser), optimizers.Adam)
    with pytest.raises(ValueError):
        optimizers.get("nope")


def test_momentum_slot_created_when_momentum_turned_on():
    v = tf.Variable([0.0])
    opt = optimizers.SGD(1.0)
    opt.apply_gradients([(tf.constant([1.0]), v)])
    assert len(opt.variables) == 2  # iterations, learning rate: no momentum slot
    opt.momentum = 0.5
    opt.apply_gradients([(tf.constant([1.0]), v)])
    opt.apply_gradients([(tf.constant([1.0]), v)])
    # m: -1, then -1.5; w: -1 - 1 - 1.5
    np.testing.assert_allclose(v.numpy(), [-3.5])


@pytest.mark.skipif(not hasattr(tf, "function"), reason="minitf.function not available")
@pytest.mark.parametrize("make", [
    lambda vs: optimizers.Adam(optimizers.schedules.CosineDecay(1e-2, 5), global_clipnorm=0.5),
    lambda vs: optimizers.SGD([{"params": vs[:1], "learning_rate": 0.05}, {"params": vs[1:]}],
                              learning_rate=0.1, momentum=0.9, gradient_accumulation_steps=2),
    lambda vs: optimizers.AdamW(1e-2),
], ids=["adam-schedule-clip", "sgd-groups-accum", "adamw-big"])
def test_traced_step_matches_eager(make):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((256, 600)).astype(np.float32)   # large enough for the split
    b0 = np.zeros(600, np.float32)
    xs = [tf.constant(rng.standard_normal((8, 256)).astype(np.float32)) for _ in range(6)]
    out = []
    for traced in (False, True):
        w, b = tf.Variable(w0), tf.Variable(b0)
        opt = make([w, b])

        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - 1.0))
            opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
            return loss

        fn = tf.function(step) if traced else step
        for x in xs:
            fn(x)
        out.append((w.numpy().copy(), b.numpy().copy(), int(opt.iterations)))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    assert out[0][2] == out[1][2]


@pytest.mark.parametrize("make", [
    lambda: optimizers.AdamW(1e-2, weight_decay=0.1, amsgrad=True),
    lambda: optimizers.AdamW(1e-2, weight_decay=0.1),
    lambda: optimizers.Adam(1e-2),
    lambda: optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    lambda: optimizers.SGD(0.1, momentum=0.9),
    lambda: optimizers.RMSprop(1e-2, momentum=0.5, centered=True),
    lambda: optimizers.Adagrad(0.1),
], ids=["adamw-amsgrad", "adamw", "adam", "nesterov", "momentum", "rmsprop", "adagrad"])
def test_small_variables_updated_together_match_one_by_one(make):
    """Small variables created together share contiguous slot storage and are updated with
    flat calls; the result is bit-identical to updating them one by one, also when a call
    brings gradients for only some of them."""
    rng = np.random.default_rng(11)
    shapes = [(7, 5), (5,), (5, 3), (3,)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    together = [tf.Variable(a, name=f"t{i}") for i, a in enumerate(init)]
    alone = [tf.Variable(a, name=f"a{i}") for i, a in enumerate(init)]
    opt_t, opt_a = make(), make()
    opt_t.exclude_from_weight_decay(var_list=[together[1]])
    opt_a.exclude_from_weight_decay(var_list=[alone[1]])
    opt_t.build(together)
    for v in alone:
        opt_a.build([v])
    assert together[0]._value is not None and opt_t._entries[id(together[0])].arena is not None
    assert all(opt_a._entries[id(v)].arena is None for v in alone)
    for step in range(4):
        grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        if step == 2:
            grads[1] = None     # a partial call: the variables are then updated one by one
        opt_t.apply_gradients(zip(grads, together))
        opt_a.apply_gradients(zip(grads, alone))
    for a, b in zip(together, alone):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    sa = {k[len("slots/t"):]: v for k, v in opt_t.get_state().items() if k.startswith("slots/")}
    sb = {k[len("slots/a"):]: v for k, v in opt_a.get_state().items() if k.startswith("slots/")}
    assert sorted(sa) == sorted(sb) and len(sa) >= 4
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k])


@pytest.mark.parametrize("make", [
    lambda: optimizers.Adam(1e-2, amsgrad=True),
    lambda: optimizers.AdamW(1e-2),
    lambda: optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    lambda: optimizers.RMSprop(1e-2, momentum=0.5, centered=True),
], ids=["adam-amsgrad", "adamw", "nesterov", "rmsprop"])
def test_two_thread_split_is_bit_identical(make, monkeypatch):
    """``parallel = True`` splits large variables in halves updated on two threads: the same
    element-wise arithmetic, so the same bits as the one-thread update."""
    from minitf.keras.optimizers import _host
    monkeypatch.setattr(_host, "_PARALLEL_MIN", 1 << 17)
    monkeypatch.setattr(_host, "_PARALLEL_MIN_FUSED", 1 << 17)
    rng = np.random.default_rng(5)
    shapes = [(400, 400), (400,), (300, 10)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    runs = []
    for parallel in (False, True):
        variables = [tf.Variable(a) for a in init]
        opt = make()
        opt.parallel = parallel
        step_rng = np.random.default_rng(6)
        for _ in range(3):
            opt.apply_gradients(zip([step_rng.standard_normal(s).astype(np.float32)
                                     for s in shapes], variables))
        runs.append(([v.numpy() for v in variables], opt))
    (plain, opt_plain), (split, opt_split) = runs
    plan = opt_split._plan(list(opt_split._entry_list))
    if tf.get_backend() == "numpy" and (os.cpu_count() or 1) > 1:
        assert plan.split and plan.work[1], "the large variable was not split over two threads"
    for a, b in zip(plain, split):
        np.testing.assert_array_equal(a, b)


@pytest.mark.usefixtures("openblas_own_threads")
def test_automatic_split_matches_one_thread_with_and_without_parking(monkeypatch):
    """``parallel = None`` (the default) splits a large update over two threads where OpenBLAS's
    workers can be parked, and stays on one thread while a foreign thread might be inside BLAS;
    every way gives the same bits."""
    import threading

    from minitf import openblas
    from minitf.keras.optimizers import _host, base
    submitted = []
    real_pool = base.pool

    class CountingPool:
        def submit(self, fn, *args):
            submitted.append(fn)
            return real_pool().submit(fn, *args)

    monkeypatch.setattr(base, "pool", CountingPool)
    monkeypatch.setattr(_host, "_PARALLEL_MIN", 1 << 17)
    monkeypatch.setattr(_host, "_PARALLEL_MIN_FUSED", 1 << 17)
    splits = (tf.get_backend() == "numpy" and openblas.available()
              and (os.cpu_count() or 1) > 1 and (openblas.threads() or 1) > 1)
    rng = np.random.default_rng(7)
    shapes = [(500, 400), (400,)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
    results = []
    release = threading.Event()
    foreign = threading.Thread(target=release.wait, name="user-thread")
    for setting, with_foreign_thread, helper_runs in [(False, False, 0), (None, False, 3),
                                                      (None, True, 0)]:
        submitted.clear()
        variables = [tf.Variable(a) for a in init]
        opt = optimizers.Adam(1e-2)
        opt.parallel = setting
        if with_foreign_thread:
            foreign.start()
        try:
            for g in grads:
                np.ones((256, 256), np.float32) @ np.ones((256, 256), np.float32)  # workers on
                opt.apply_gradients(zip(g, variables))
        finally:
            if with_foreign_thread:
                release.set()
                foreign.join()
        results.append([v.numpy() for v in variables])
        assert len(submitted) == (helper_runs if splits else 0)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_a_late_helper_thread_leaves_its_chunks_to_the_caller(monkeypatch):
    """On a busy machine the helper thread may not run before the caller has finished its own
    half: the caller then updates the helper's chunks itself, with the same bits."""
    from minitf.keras.optimizers import _host, base
    monkeypatch.setattr(_host, "_PARALLEL_MIN", 1 << 17)
    monkeypatch.setattr(_host, "_PARALLEL_MIN_FUSED", 1 << 17)

    class LateFuture:          # the helper only runs once the caller waits for it
        def __init__(self, fn):
            self.fn = fn

        def cancel(self):
            return False

        def result(self):
            return self.fn()

        exception = result

    class LatePool:
        def submit(self, fn, *args):
            return LateFuture(lambda: fn(*args))

    monkeypatch.setattr(base, "pool", LatePool)
    rng = np.random.default_rng(9)
    shapes = [(500, 400), (300, 10), (400,)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]
    results = []
    for parallel in (False, True):
        variables = [tf.Variable(a) for a in init]
        opt = optimizers.Adam(1e-2)
        opt.parallel = parallel
        taken = []

        class Recording(list):
            def __getitem__(self, k):
                taken.append(k)
                return list.__getitem__(self, k)

        for g in grads:
            plan = opt._plan(list(opt._entry_list)) if opt._entry_list else None
            if plan is not None and not isinstance(plan.takeover, Recording):
                plan.takeover = Recording(plan.takeover)
            opt.apply_gradients(zip(g, variables))
        results.append([v.numpy() for v in variables])
        if parallel and tf.get_backend() == "numpy" and (os.cpu_count() or 1) > 1:
            assert taken, "the caller did not take over the helper's chunks"
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
