"""jacobian / batch_jacobian: the vectorised path (one backward pass over a batch of one-hot
cotangents) agrees with the reference loop, with finite differences and with Hessians."""
import numpy as np
import pytest

import minitf as tf

RNG = np.random.default_rng(42)


def const(*shape, dtype=np.float64):
    return tf.constant(RNG.standard_normal(shape).astype(dtype))


def var(*shape, dtype=np.float64):
    return tf.Variable(RNG.standard_normal(shape).astype(dtype))


X = const(4, 3)
W = var(3, 5)
B = var(5)
V = var(5, 2)

FUNCTIONS = {
    "dense_relu": (lambda x: tf.nn.relu(x @ W + B), [X, W, B]),
    "dense_elu": (lambda x: tf.nn.elu(x @ W + B) @ V, [X, W, B, V]),
    "softmax": (lambda x: tf.nn.softmax(x @ W, axis=-1), [X, W]),
    "log_softmax": (lambda x: tf.nn.log_softmax(x @ W), [X, W]),
    "reduce_sum_axis": (lambda x: tf.reduce_sum(tf.sin(x) * x, axis=1), [X]),
    "reduce_mean_keepdims": (lambda x: tf.reduce_mean(x * x, axis=0, keepdims=True), [X]),
    "reduce_max": (lambda x: tf.reduce_max(x @ W, axis=1), [X, W]),
    "logsumexp": (lambda x: tf.reduce_logsumexp(x @ W, axis=-1), [X, W]),
    "scalar_loss": (lambda x: tf.reduce_mean((tf.tanh(x @ W + B) - 0.5) ** 2), [X, W, B]),
    "broadcast_sub": (lambda x: (x[:, :1] - x) * tf.exp(-x), [X]),
    "slices_concat": (lambda x: tf.concat([x[::2] * 2.0, tf.square(x[1:3])], axis=0), [X]),
    "transpose_reshape": (lambda x: tf.reshape(tf.transpose(x @ W), [-1]) ** 2, [X, W]),
    "sigmoid_where": (lambda x: tf.where(x > 0, tf.sigmoid(x), x * 0.1), [X]),
    # Row-sparse cotangents (minitf.row_cotangent): two paths meeting with the same rows, a
    # bias broadcast along the rows as (1, n), a rank-3 target, and a sparse path meeting a
    # dense one (the reduction needs the dense batch).
    "two_paths": (lambda x: tf.tanh(x @ W) * (x @ W) + x @ W, [X, W]),
    "row_broadcast_bias": (lambda x: x @ W * tf.reshape(B, (1, 5)) - tf.reshape(B, (1, 5)),
                           [X, W, B]),
    "rank3_target": (lambda x: tf.sigmoid(tf.reshape(x @ W, (4, 5, 1)) * V[:, 0]), [X, W, V]),
    "sparse_meets_dense": (lambda x: x @ W + tf.reduce_sum(x @ W, axis=0), [X, W]),
}


def jacobians(fn, sources, use_pfor, parallel_iterations=None, extra_tape=False):
    outer = tf.GradientTape() if extra_tape else None
    if outer is not None:  # another active tape: the rules run as recorded minitf ops
        outer.__enter__()
        outer.watch(tf.constant(0.0))
    try:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(sources[0])
            y = fn(sources[0])
        result = tape.jacobian(y, sources, experimental_use_pfor=use_pfor,
                               parallel_iterations=parallel_iterations,
                               unconnected_gradients=tf.UnconnectedGradients.ZERO)
    finally:
        if outer is not None:
            outer.__exit__(None, None, None)
    return y, result


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vectorised_jacobian_matches_loop(name):
    fn, sources = FUNCTIONS[name]
    y, vec = jacobians(fn, sources, True)
    _, loop = jacobians(fn, sources, False)
    _, chunked = jacobians(fn, sources, True, parallel_iterations=3)
    _, tensor_rules = jacobians(fn, sources, True, extra_tape=True)
    for s, a, b, c, d in zip(sources, vec, loop, chunked, tensor_rules):
        assert a.shape == tuple(y.shape) + tuple(s.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.numpy(), d.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["dense_elu", "softmax", "broadcast_sub", "logsumexp"])
def test_jacobian_matches_finite_differences(name):
    fn, sources = FUNCTIONS[name]
    x = sources[0]
    _, (j, *_) = jacobians(fn, sources, True)
    eps = 1e-6
    xv = x.numpy()
    numeric = np.zeros(tuple(fn(x).shape) + xv.shape)
    for idx in np.ndindex(*xv.shape):
        d = np.zeros_like(xv)
        d[idx] = eps
        diff = (fn(tf.constant(xv + d)).numpy() - fn(tf.constant(xv - d)).numpy()) / (2 * eps)
        numeric[(Ellipsis,) + idx] = diff
    np.testing.assert_allclose(j.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_jacobian_sum_is_the_gradient_float32():
    x = tf.constant(RNG.standard_normal((7, 5)).astype(np.float32))
    kernel = tf.Variable(RNG.standard_normal((5, 10)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.relu(x @ kernel)
    j = tape.jacobian(y, kernel)
    g = tape.gradient(y, kernel)
    assert j.shape == (7, 10, 5, 10) and j.dtype == tf.float32
    assert float(tf.reduce_max(abs(g - tf.reduce_sum(j, axis=[0, 1])))) < 1e-4


def test_jacobian_unconnected_and_structure():
    x, unused = var(3), var(2, 2)
    with tf.GradientTape(persistent=True) as tape:
        y = x * 2.0
    result = tape.jacobian(y, {"x": x, "u": unused})
    assert result["u"] is None
    np.testing.assert_array_equal(result["x"].numpy(), 2.0 * np.eye(3))
    zero = tape.jacobian(y, unused, unconnected_gradients="zero")
    assert zero.shape == (3, 2, 2) and not zero.numpy().any()
    loop = tape.jacobian(y, [unused], experimental_use_pfor=False)
    assert loop == [None]


def test_jacobian_of_a_scalar_and_of_a_scalar_source():
    x = var(4)
    s = tf.Variable(0.5, dtype=tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(x * x) * s
        v = tf.sin(x * s)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), 2 * x.numpy() * 0.5)
    np.testing.assert_allclose(tape.jacobian(v, s).numpy(), np.cos(x.numpy() * 0.5) * x.numpy())
    assert tape.jacobian(v, s).shape == (4,)


def test_hessian_via_jacobian_of_gradient():
    x = tf.Variable([0.5, -1.0, 2.0], dtype=tf.float64)
    A = tf.constant([[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 4.0]], dtype=tf.float64)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            ax = tf.reshape(A @ tf.reshape(x, [3, 1]), [3])
            y = 0.5 * tf.reduce_sum(x * ax) + tf.reduce_sum(x ** 4)
        g = inner.gradient(y, x)
    h = outer.jacobian(g, x)
    np.testing.assert_allclose(h.numpy(), A.numpy() + np.diag(12 * x.numpy() ** 2), rtol=1e-12)


def test_hessian_loop_and_vectorised_agree_on_a_network():
    x = const(6, 3)
    w1, w2 = var(3, 4), var(4, 2)
    for use_pfor in (True, False):
        with tf.GradientTape(persistent=True) as outer:
            with tf.GradientTape() as inner:
                loss = tf.reduce_mean(tf.nn.softmax(tf.tanh(x @ w1) @ w2) ** 2)
            g = inner.gradient(loss, w1)
        h = outer.jacobian(g, w1, experimental_use_pfor=use_pfor)
        if use_pfor:
            first = h.numpy()
    np.testing.assert_allclose(first, h.numpy(), rtol=1e-10, atol=1e-14)
    m = first.reshape(12, 12)
    np.testing.assert_allclose(m, m.T, atol=1e-12)


def test_batch_jacobian_matches_loop_and_full_jacobian():
    x = const(5, 3)
    w, b = var(3, 4), var(4)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.nn.elu(x @ w + b) * tf.reduce_sum(x * x, axis=1, keepdims=True)
    jb = tape.batch_jacobian(y, x)
    jl = tape.batch_jacobian(y, x, experimental_use_pfor=False)
    full = tape.jacobian(y, x).numpy()
    assert jb.shape == (5, 4, 3)
    np.testing.assert_allclose(jb.numpy(), jl.numpy(), rtol=1e-12)
    np.testing.assert_allclose(jb.numpy(), np.einsum("bxby->bxy", full), rtol=1e-12)


def test_batch_jacobian_shapes_and_errors():
    x = const(4, 2, 3)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(x, axis=2)        # (4, 2)
        s = tf.reduce_sum(x, axis=[1, 2])   # (4,)
    assert tape.batch_jacobian(y, x).shape == (4, 2, 2, 3)
    with pytest.raises(ValueError, match="rank at least 2"):  # TF needs rank >= 2
        tape.batch_jacobian(s, x)
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(y[:3], x)
    other = const(4, 1)
    assert tape.batch_jacobian(y, other) is None
    assert not tape.batch_jacobian(y, other, unconnected_gradients="zero").numpy().any()


def test_jacobian_through_custom_gradient_and_overrides_runs_them_per_row():
    @tf.custom_gradient
    def clip_norm_grad(v):
        def grad(dy):  # not elementwise: the norm of each cotangent row matters
            return tf.clip_by_norm(dy, 1.0) * 3.0
        return tf.identity(v), grad

    x = var(3)
    with tf.GradientTape(persistent=True) as tape:
        y = clip_norm_grad(x) * 2.0
    vec = tape.jacobian(y, x).numpy()
    loop = tape.jacobian(y, x, experimental_use_pfor=False).numpy()
    np.testing.assert_allclose(vec, loop)
    np.testing.assert_allclose(vec, np.eye(3) * 3.0)  # each row: clip(2 e_i, 1) * 3


def test_jacobian_records_on_an_outer_tape():
    x = tf.Variable([1.0, 2.0], dtype=tf.float64)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x ** 3
        j = inner.jacobian(y, x)          # diag(3 x^2)
        trace = tf.reduce_sum(j * tf.eye(2, dtype=tf.float64))
    np.testing.assert_allclose(outer.gradient(trace, x).numpy(), 6 * x.numpy())


def test_chunked_jacobian_where_some_chunks_do_not_reach_a_source():
    x, z = var(2), var(3)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.concat([x * 2.0, z * 3.0, z * z], axis=0)   # 8 elements
    for chunk in (1, 2, 3, 5):
        jx, jz = tape.jacobian(y, [x, z], parallel_iterations=chunk)
        full_x, full_z = tape.jacobian(y, [x, z])
        np.testing.assert_array_equal(jx.numpy(), full_x.numpy())
        np.testing.assert_array_equal(jz.numpy(), full_z.numpy())
    np.testing.assert_array_equal(full_x.numpy()[:2], 2.0 * np.eye(2))
    assert not full_x.numpy()[2:].any()


def test_an_mlp_jacobian_stays_row_sparse_to_the_weights(monkeypatch):
    """Element-wise ops and 2-D products pass the one-hot rows along: the batch of cotangents
    is never densified, and the result equals the reference loop's."""
    from minitf.row_cotangent import RowCotangent
    densified = []
    original = RowCotangent.dense
    monkeypatch.setattr(RowCotangent, "dense",
                        lambda self: densified.append(self.shape) or original(self))
    x = const(6, 4)
    w1, b1, w2, b2 = var(4, 3), var(3), var(3, 2), var(2)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.relu(x @ w1 + b1) @ w2 + b2
    vec = tape.jacobian(y, [w1, b1, w2, b2])
    assert densified == []
    loop = tape.jacobian(y, [w1, b1, w2, b2], experimental_use_pfor=False)
    for a, b in zip(vec, loop):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    # The bias gradient of the last layer is the identity, block by block.
    np.testing.assert_array_equal(vec[3].numpy(), np.tile(np.eye(2), (6, 1, 1)))


def test_a_weight_jacobian_written_in_parts_over_threads_matches_the_loop(monkeypatch):
    """On numpy the outer products of a weight's jacobian are written by row blocks on several
    threads where it is large; forced here into many small blocks, the result is still the
    loop's and the closed form ``d y[i, j] / d w[k, l] = x[i, k] * (j == l)``."""
    from minitf import kernel_threads
    from minitf.ops import linalg_ops
    monkeypatch.setattr(linalg_ops, "_OUTER_PART", 7)
    monkeypatch.setattr(kernel_threads, "count", lambda: 3)
    calls = []
    real_run = kernel_threads.run
    monkeypatch.setattr(kernel_threads, "run", lambda fn, parts, **kw: (
        calls.append(len(parts)) or real_run(fn, parts, **kw)))
    x = const(5, 4)
    w = var(4, 3)
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w
    vec = tape.jacobian(y, w)
    if tf.get_backend() == "numpy":   # other backends write it in one broadcast multiply
        assert max(calls) == 3
    loop = tape.jacobian(y, w, experimental_use_pfor=False)
    np.testing.assert_array_equal(vec.numpy(), loop.numpy())
    want = np.einsum("ik,jl->ijkl", x.numpy(), np.eye(3))
    np.testing.assert_array_equal(vec.numpy(), want)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])  # row / column-sparse seeds
def test_check_numerics_names_the_op_on_the_sparse_path(method):
    x = tf.constant(np.array([[1.0, -1.0], [0.0, 4.0]]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sqrt(x) * 2.0
    tf.debugging.enable_check_numerics()
    try:
        with pytest.raises(tf.InvalidArgumentError, match="sqrt"):
            getattr(tape, method)(y, x)
    finally:
        tf.debugging.disable_check_numerics()
