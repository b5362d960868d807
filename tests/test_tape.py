"""GradientTape semantics, as TF defines them."""
import collections
import logging

import numpy as np
import pytest

import minitf as tf
from minitf._state import state


def messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "minitf"]


# --- what gets watched ---------------------------------------------------------------------------

def test_trainable_variables_are_watched_automatically():
    w = tf.Variable(2.0)
    frozen = tf.Variable(5.0, trainable=False)
    c = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = w * frozen * c
    gw, gf, gc = tape.gradient(y, [w, frozen, c])
    assert float(gw) == 15.0 and gf is None and gc is None
    assert tape.watched_variables() == (w,)


def test_watch_constants_variables_and_nests():
    a, b = tf.constant(1.0), tf.constant(2.0)
    frozen = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as tape:
        tape.watch([a, {"b": b, "v": (frozen,)}])
        y = a * b * frozen
    ga, gb, gv = tape.gradient(y, [a, b, frozen])
    assert (float(ga), float(gb), float(gv)) == (6.0, 3.0, 2.0)
    assert tape.watched_variables() == (frozen,)


def test_watch_rejects_non_tensors():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="of type .float., expected a Tensor or Variable"):
            tape.watch(3.0)
        with pytest.raises(ValueError, match="ndarray"):
            tape.watch(np.ones(2))


def test_watch_accessed_variables_false():
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(y)
        z = x * x + y * y
    gx, gy = tape.gradient(z, [x, y])
    assert gx is None and float(gy) == 6.0
    assert tape.watched_variables() == (y,)


def test_watched_variables_in_creation_order_not_access_order():
    first, second, third = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = third * second * first
    assert tape.watched_variables() == (first, second, third)


def test_integer_and_bool_tensors_flow_but_carry_no_gradient(caplog):
    x = tf.Variable([1.0, -2.0, 3.0])
    with caplog.at_level(logging.WARNING, logger="minitf"):
        with tf.GradientTape(persistent=True) as tape:
            mask = x > 0                                  # bool
            counts = tf.cast(x, tf.int32) * 2             # int32, cut from x
            y = tf.where(mask, x, tf.zeros_like(x))       # float, through where
            z = tf.cast(counts, tf.float32) * x           # the int path cuts the gradient
        assert mask.dtype == tf.bool and counts.dtype == tf.int32
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 0.0, 1.0])
        np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [2.0, -4.0, 6.0])
        assert tape.gradient(counts, x) is None
        assert tape.gradient(mask, x) is None
    assert messages(caplog) == [
        "The dtype of the target tensor must be floating (e.g. tf.float32) when calling "
        "GradientTape.gradient, got tf.int32",
        "The dtype of the target tensor must be floating (e.g. tf.float32) when calling "
        "GradientTape.gradient, got tf.bool"]


def test_integer_source_warns_and_gives_none(caplog):
    i = tf.constant(3)
    x = tf.Variable(2.0)
    with caplog.at_level(logging.WARNING, logger="minitf"):
        with tf.GradientTape() as tape:
            tape.watch(i)
            y = x * tf.cast(i, tf.float32)
        gi, gx = tape.gradient(y, [i, x])
    assert gi is None and float(gx) == 3.0
    assert messages(caplog) == [
        "The dtype of the watched tensor must be floating (e.g. tf.float32), got tf.int32",
        "The dtype of the source tensor must be floating (e.g. tf.float32) when calling "
        "GradientTape.gradient, got tf.int32"]


# --- gradient() ----------------------------------------------------------------------------------

def test_non_persistent_tape_can_be_used_once():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="can only be called once on non-persistent tapes: "
                                           "this tape already computed one set of gradients"):
        tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.jacobian(y, x)


def test_persistent_tape_many_gradients():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(z, x)) == 108.0
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(z, y)) == 18.0
    assert float(tape.jacobian(z, x)) == 108.0


@pytest.mark.parametrize("make", [
    lambda a, b: [a, b],
    lambda a, b: (a, b),
    lambda a, b: {"a": a, "b": b},
    lambda a, b: {"z": [a, {"y": (b,)}], "a": a},
    lambda a, b: collections.namedtuple("Pair", "first second")(a, b),
])
def test_sources_keep_their_structure(make):
    a, b = tf.Variable(2.0), tf.Variable(5.0)
    with tf.GradientTape() as tape:
        y = a * a * b
    sources = make(a, b)
    grads = tape.gradient(y, sources)
    want = make(20.0, 4.0)
    assert type(grads) is type(sources)
    flat = list(tf.nest.flatten(grads))
    assert [float(g) for g in flat] == list(tf.nest.flatten(want))
    assert tf.nest.pack_sequence_as(want, flat).__class__ is type(want)


def test_dict_keys_keep_their_insertion_order():
    a, b = tf.Variable(2.0), tf.Variable(5.0)
    with tf.GradientTape() as tape:
        y = a * b
    grads = tape.gradient(y, {"z": a, "b": b})
    assert list(grads) == ["z", "b"]
    assert float(grads["z"]) == 5.0 and float(grads["b"]) == 2.0


def test_target_nests_are_summed_and_output_gradients_weight_them():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
        z = 3.0 * x
    np.testing.assert_array_equal(tape.gradient([y, z], x).numpy(), [5.0, 7.0])
    g = tape.gradient(y, x, output_gradients=tf.constant([10.0, 0.5]))
    np.testing.assert_array_equal(g.numpy(), [20.0, 2.0])
    g = tape.gradient([y, z], x, output_gradients=[tf.ones(2), tf.constant([0.0, 2.0])])
    np.testing.assert_array_equal(g.numpy(), [2.0, 10.0])
    g = tape.gradient(y, x, output_gradients=[10.0, 0.5])  # one target: a list is its value
    np.testing.assert_array_equal(g.numpy(), [20.0, 2.0])
    with pytest.raises(ValueError, match=r"output_gradients shape \(3,\) does not match target "
                                         r"shape \(2,\)"):
        tape.gradient(y, x, output_gradients=tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="2 targets but 1 output_gradients"):
        tape.gradient([y, z], x, output_gradients=[tf.ones(2)])


def test_unconnected_gradients():
    x, y = tf.Variable([1.0, 2.0]), tf.Variable([[3.0]])
    with tf.GradientTape(persistent=True) as tape:
        z = x * 2.0
    assert tape.gradient(z, y) is None
    assert tape.gradient(z, y, unconnected_gradients=tf.UnconnectedGradients.NONE) is None
    zero = tape.gradient(z, y, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert zero.shape == (1, 1) and zero.dtype == tf.float32 and float(zero) == 0.0
    assert float(tape.gradient(z, y, unconnected_gradients="zero")) == 0.0
    with pytest.raises(ValueError):
        tape.gradient(z, y, unconnected_gradients="sometimes")


def test_target_that_is_a_watched_source():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_array_equal(tape.gradient(x, x).numpy(), [1.0, 1.0])


def test_same_source_twice_and_reused_values():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x + x  # x used three times
    g1, g2 = tape.gradient(y, [x, x])
    assert float(g1) == float(g2) == 7.0


def test_broadcasting_gradients_are_summed_back():
    a = tf.Variable(np.ones((3, 1), np.float32))
    b = tf.Variable(np.arange(4, dtype=np.float32))
    with tf.GradientTape() as tape:
        y = a * b + b  # (3, 4)
    ga, gb = tape.gradient(y, [a, b])
    np.testing.assert_array_equal(ga.numpy(), np.full((3, 1), 6.0))
    np.testing.assert_array_equal(gb.numpy(), np.full(4, 6.0))


def test_gradient_dtype_follows_the_source():
    x = tf.constant([1.0, 2.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.sin(x) * x)
    g = tape.gradient(y, x)
    assert g.dtype == tf.float64
    np.testing.assert_allclose(g.numpy(), np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0]))

    h = tf.constant(1.5, dtype=tf.float16)
    with tf.GradientTape() as tape:
        tape.watch(h)
        y = h * h
    assert tape.gradient(y, h).dtype == tf.float16 and float(tape_result(y)) == 2.25


def tape_result(t):
    return t.numpy()


def test_cast_between_floats_passes_the_gradient():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.cast(x, tf.float64) ** 3
    g = tape.gradient(y, x)
    assert g.dtype == tf.float32 and float(g) == 12.0


# --- recording control ----------------------------------------------------------------------------

def test_stop_recording_only_affects_its_tape():
    x = tf.Variable(2.0)
    with tf.GradientTape() as outer, tf.GradientTape() as inner:
        with inner.stop_recording():
            y = x * x
        z = y * x
    assert float(outer.gradient(z, x)) == 12.0
    assert float(inner.gradient(z, x)) == 4.0  # y is a constant for inner


def test_reset_forgets_records_and_watches():
    x = tf.constant(2.0)
    v = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * v
        tape.reset()
        z = y * v
    assert tape.gradient(z, x) is None
    assert float(tape.gradient(z, v)) == 4.0
    assert tape.watched_variables() == (v,)


def test_gradient_inside_the_context_of_a_non_persistent_tape_stops_recording():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
        g = tape.gradient(y, x)
        assert state.tapes == []  # TF: the tape stops recording
        z = g * x
    assert float(g) == 6.0 and float(z) == 18.0
    assert state.tapes == []


def test_persistent_tape_in_context_records_its_own_gradient(caplog, monkeypatch):
    import minitf.tape as tape_module
    monkeypatch.setattr(tape_module, "_warned_in_context", False)  # TF logs it once
    x = tf.Variable(3.0)
    with caplog.at_level(logging.WARNING, logger="minitf"):
        with tf.GradientTape(persistent=True) as tape:
            y = x ** 3
            dy = tape.gradient(y, x)
            dy_again = tape.gradient(y, x)
    d2y = tape.gradient(dy, x)
    assert float(dy) == float(dy_again) == 27.0 and float(d2y) == 18.0
    warned = [m for m in messages(caplog) if "persistent tape inside its context" in m]
    assert len(warned) == 1 and "higher order derivatives" in warned[0]


def test_several_tapes_at_once_and_exception_exit():
    a, b = tf.constant(1.0), tf.constant(2.0)
    t1, t2 = tf.GradientTape(), tf.GradientTape()
    with t1:
        t1.watch(a)
        with t2:
            t2.watch(b)
            y = a * b
        assert state.tapes == [t1]
    assert state.tapes == []
    assert float(t1.gradient(y, a)) == 2.0 and float(t2.gradient(y, b)) == 1.0

    with pytest.raises(ZeroDivisionError):
        with tf.GradientTape():
            1 / 0
    assert state.tapes == []


def test_reentering_an_active_tape_is_an_error_and_reentry_continues_recording():
    x = tf.Variable(2.0)
    tape = tf.GradientTape(persistent=True)
    with tape:
        with pytest.raises(ValueError, match="re-enter an already-active tape"):
            tape.__enter__()
        y = x * x
    with tape:  # continue recording on the same tape
        z = y * x
    assert float(tape.gradient(z, x)) == 12.0


# --- higher order --------------------------------------------------------------------------------

def test_second_and_third_derivatives():
    x = tf.Variable(2.0)
    with tf.GradientTape() as t3:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = x ** 4
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert (float(d1), float(d2), float(d3)) == (32.0, 48.0, 48.0)


def test_higher_order_through_many_ops():
    x = tf.constant([0.3, -0.7, 1.1], dtype=tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.tanh(x) * tf.exp(x) / (1.0 + x * x))
        g = inner.gradient(y, x)
    h = outer.jacobian(g, x).numpy()
    xv = x.numpy()

    def grad(v):
        t, e, d = np.tanh(v), np.exp(v), 1.0 + v * v
        return ((1 - t * t) * e + t * e) / d - t * e * 2 * v / d ** 2

    eps = 1e-6
    numeric = np.stack([(grad(xv + eps * np.eye(3)[i]) - grad(xv - eps * np.eye(3)[i])) / (2 * eps)
                        for i in range(3)], axis=1)
    np.testing.assert_allclose(h, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.diag(np.diag(h)), h, atol=1e-12)  # elementwise: diagonal


def test_gradient_of_a_gradient_norm_with_watch_accessed_variables_false():
    w = tf.Variable([[1.0, -1.0], [0.5, 2.0]])
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as outer:
        with tf.GradientTape(watch_accessed_variables=False) as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.tanh(x @ w) ** 2)
        gx = inner.gradient(y, x)
        penalty = tf.reduce_sum(gx * gx)
    gw = outer.gradient(penalty, w)
    assert gw.shape == (2, 2) and np.all(np.isfinite(gw.numpy()))
    assert inner.watched_variables() == () and outer.watched_variables() == (w,)


def test_indexing_is_differentiable():
    x = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x[1:, ::2] * 2.0) + x[0, 3] + tf.reduce_sum(x[..., -1])
    g = tape.gradient(y, x).numpy()
    want = np.zeros((3, 4), np.float32)
    want[1:, ::2] += 2.0
    want[0, 3] += 1.0
    want[:, -1] += 1.0
    np.testing.assert_array_equal(g, want)


def test_assign_is_not_differentiated_and_returns_the_variable():
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        out = v.assign(3.0)
        assert out is v
        y = v * 2.0
        v.assign_add(1.0)
        v.assign_sub(0.5)
    assert float(tape.gradient(y, v)) == 2.0
    assert float(v) == 3.5


# --- variables written after a tape read them (TF: a read is a snapshot) --------------------------

def test_gradient_uses_the_value_read_before_an_assign():
    """d(v*v)/dv at the value read (3 -> 6), not at the value assigned afterwards (TF's
    ReadVariableOp semantics); the same for assign_add/assign_sub, sliced and scatter updates."""
    writes = [lambda v: v.assign([10.0, 10.0]), lambda v: v.assign_add([7.0, 7.0]),
              lambda v: v.assign_sub([1.0, 1.0]), lambda v: v[0].assign(5.0),
              lambda v: v.scatter_nd_update([[1]], [9.0])]
    for write in writes:
        v = tf.Variable([3.0, -2.0])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v * v)
            write(v)
        np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [6.0, -4.0])


def test_persistent_tape_keeps_the_values_its_records_read():
    w = tf.Variable([[1.0, 2.0]])
    x = tf.constant([[3.0], [4.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.matmul(w, x)
    w.assign([[5.0, 7.0]])        # after the context, before gradient()
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[1.0], [2.0]])
    np.testing.assert_array_equal(tape.gradient(y, w).numpy(), [[3.0, 4.0]])
    # a later read records the new value
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.matmul(w, x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[5.0], [7.0]])


def test_traced_step_snapshots_before_the_assign_on_every_call():
    v = tf.Variable([3.0])

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            y = v * v
            v.assign_add([1.0])
        return tape.gradient(y, v)

    for start in (3.0, 4.0, 5.0):      # the trace, then two replays
        np.testing.assert_array_equal(step().numpy(), [2 * start])
    assert float(v.numpy()[0]) == 6.0
