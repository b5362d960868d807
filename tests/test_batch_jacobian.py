"""batch_jacobian's vectorised path: column-sparse seeds (minitf.column_cotangent) through
element-wise ops and products agree with the reference loop, with the dense seeds that a
recorded backward pass uses, and with central differences; the cotangents stay example-major
(the result's layout) through products and relu gradients."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import native_nn
from minitf.column_cotangent import ColumnCotangent
from minitf.ops.registry import RAW
from tests.test_conv_fusion import _awkward, _same_bits, native_only

RNG = np.random.default_rng(7)


def const(*shape, dtype=np.float64):
    return tf.constant(RNG.standard_normal(shape).astype(dtype))


X = const(5, 4)
X3 = const(5, 2, 3)
W = tf.Variable(RNG.standard_normal((4, 3)))
V = tf.Variable(RNG.standard_normal((3, 2)))
BIAS = tf.Variable(RNG.standard_normal(4))
C3 = const(3)
X4 = const(2, 5, 4, 3)
K4 = tf.Variable(RNG.standard_normal((3, 3, 3, 2)))
K_UP = tf.Variable(RNG.standard_normal((2, 2, 4, 3)))
PER_EXAMPLE = const(5, 1)

FUNCTIONS = {
    "elementwise_chain": (lambda x: tf.sin(x) * x + tf.exp(-x ** 2), X),
    "scalar_constants": (lambda x: x ** 2 * 3.0 - 1.0, X),
    "bias_broadcast": (lambda x: tf.tanh(x + BIAS) / (1.0 + BIAS ** 2), X),
    "per_example_scale": (lambda x: tf.sigmoid(x * PER_EXAMPLE) - PER_EXAMPLE, X),
    "same_columns_meet": (lambda x: tf.tanh(x) * x + x, X),
    "where_and_maximum": (lambda x: tf.where(x > 0, tf.sigmoid(x), x * 0.1)
                          + tf.maximum(x, 0.25), X),
    "dense_last_layer": (lambda x: tf.tanh(x @ W), X),
    "mlp": (lambda x: tf.nn.relu(x @ W + 0.1) @ V + 1.0, X),
    "scaled_before_the_last_product": (lambda x: (tf.nn.relu(x @ W) @ V) * 3.0 - x[:, :2], X),
    "rank3_bias_last_axis": (lambda x: tf.sigmoid(x * C3) + C3, X3),
    "rank3_to_rank2_reshape": (lambda x: tf.reshape(tf.sin(x), (5, 6)) * 2.0, X3),
    # Convolutions: their rules take the stack of cotangents folded into the batch axis.
    "conv_same_relu": (lambda x: tf.nn.relu(tf.nn.conv2d(x, K4, 1, "SAME")), X4),
    "conv_strided_valid": (lambda x: tf.tanh(tf.nn.conv2d(x, K4, 2, "VALID")), X4),
    "conv_transpose": (lambda x: tf.nn.conv2d_transpose(x, K_UP, (2, 10, 8, 4), 2), X4),
    # A broadcast input that needs a gradient, a sparse path meeting a dense one, and a
    # product whose right operand depends on the source: each takes the dense path there.
    "broadcast_input_needs_gradient": (lambda x: x * tf.reduce_sum(x, axis=1, keepdims=True),
                                       X),
    "sparse_meets_dense": (lambda x: tf.sin(x) + tf.nn.softmax(x), X),
    "right_operand_from_source": (lambda x: tf.tanh(x @ tf.transpose(x)), X),
}


def batch_jacobian(fn, x, use_pfor, extra_tape=False):
    outer = tf.GradientTape() if extra_tape else None
    if outer is not None:  # another active tape: dense seeds, rules run as recorded ops
        outer.__enter__()
        outer.watch(tf.constant(0.0))
    try:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return y, tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor)
    finally:
        if outer is not None:
            outer.__exit__(None, None, None)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vectorised_batch_jacobian_matches_loop_and_dense_seeds(name):
    fn, x = FUNCTIONS[name]
    y, vec = batch_jacobian(fn, x, True)
    _, loop = batch_jacobian(fn, x, False)
    _, dense = batch_jacobian(fn, x, True, extra_tape=True)
    assert vec.shape == tuple(y.shape) + tuple(x.shape[1:])
    np.testing.assert_allclose(vec.numpy(), loop.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(vec.numpy(), dense.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["elementwise_chain", "bias_broadcast", "mlp",
                                  "rank3_bias_last_axis", "conv_same_relu", "conv_transpose"])
def test_batch_jacobian_matches_central_differences(name):
    fn, x = FUNCTIONS[name]
    _, j = batch_jacobian(fn, x, True)
    xv = x.numpy()
    eps = 1e-6
    numeric = np.zeros(j.shape)
    for idx in np.ndindex(*xv.shape[1:]):
        d = np.zeros_like(xv)
        d[(slice(None),) + idx] = eps  # every example moves: each only sees its own change
        diff = (fn(tf.constant(xv + d)).numpy() - fn(tf.constant(xv - d)).numpy()) / (2 * eps)
        numeric[(Ellipsis,) + idx] = diff
    np.testing.assert_allclose(j.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_float32_elementwise_chain_is_bitwise_the_loop():
    x = const(64, 100, dtype=np.float32)

    def fn(v):
        return tf.sin(v) * v + v ** 2 * 0.5

    _, vec = batch_jacobian(fn, x, True)
    _, loop = batch_jacobian(fn, x, False)
    assert vec.dtype == tf.float32
    np.testing.assert_array_equal(vec.numpy(), loop.numpy())
    # An element-wise function's per-example Jacobian is diagonal: d/dx = sin x + x cos x + x.
    xv = x.numpy().astype(np.float64)
    want = np.sin(xv) + xv * np.cos(xv) + xv
    got = vec.numpy()
    np.testing.assert_allclose(np.einsum("bii->bi", got), want, rtol=1e-5, atol=1e-6)
    assert not (got * (1 - np.eye(100))).any()


def test_elementwise_chain_and_dense_layer_never_densify_the_seeds(monkeypatch):
    densified = []
    original = ColumnCotangent.dense
    monkeypatch.setattr(ColumnCotangent, "dense",
                        lambda self: densified.append(self.shape) or original(self))
    for name in ("elementwise_chain", "bias_broadcast", "per_example_scale", "dense_last_layer",
                 "rank3_bias_last_axis"):
        fn, x = FUNCTIONS[name]
        batch_jacobian(fn, x, True)
    assert densified == []
    fn, x = FUNCTIONS["sparse_meets_dense"]
    batch_jacobian(fn, x, True)
    # softmax needs the dense batch, and sin's sparse gradient then meets it at x
    assert densified == [(4, 5, 4), (4, 5, 4)]


def test_column_cotangent_dense_and_per_example_layouts():
    cols = np.array([2, 0, 5])
    vals = RNG.standard_normal((3, 4))
    g = ColumnCotangent(B.xp.asarray(cols), B.xp.asarray(vals), (4, 2, 3))
    want = np.zeros((3, 4, 6))
    for k, c in enumerate(cols):
        want[k, :, c] = vals[k]
    want = want.reshape(3, 4, 2, 3)
    np.testing.assert_array_equal(B.to_numpy(g.dense()), want)
    np.testing.assert_array_equal(B.to_numpy(g.per_example((2, 3))), want.transpose(1, 0, 2, 3))
    both = g + g.like(2 * g.vals)
    assert isinstance(both, ColumnCotangent)
    np.testing.assert_array_equal(B.to_numpy(both.vals), 3 * vals)
    dense = B.xp.ones((3, 4, 2, 3))
    np.testing.assert_array_equal(B.to_numpy(dense + g), want + 1)
    np.testing.assert_array_equal(B.to_numpy(g + dense), want + 1)


def test_batch_jacobian_of_the_source_itself_is_the_identity():
    x = const(3, 4)
    with tf.GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_array_equal(tape.batch_jacobian(x, x).numpy(), np.tile(np.eye(4), (3, 1, 1)))


def test_batch_jacobian_inside_function_matches_eager():
    fn, x = FUNCTIONS["mlp"]

    @tf.function
    def traced(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = fn(v)
        return tape.batch_jacobian(y, v)

    _, eager = batch_jacobian(fn, x, True)
    for _ in range(2):
        np.testing.assert_allclose(traced(x).numpy(), eager.numpy(), rtol=1e-12, atol=1e-14)


def test_a_dense_layers_batch_jacobian_is_written_in_its_own_layout():
    # relu(x @ W1) @ W2 as benchmarks/jacobian.py: the cotangents are stored example-major
    # from the first product on, so the (batch, out, in) result is one C-ordered array.
    x = const(16, 8, dtype=np.float32)
    w1, w2 = (tf.Variable(RNG.standard_normal(s).astype(np.float32)) for s in [(8, 6), (6, 5)])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.relu(x @ w1 + 0.5) @ w2
    got = tape.batch_jacobian(y, x)
    mask = (x.numpy() @ w1.numpy() + 0.5 > 0).astype(np.float64)
    want = np.einsum("kj,bk,ik->bji", w2.numpy(), mask, w1.numpy())
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    if B.get_backend() == "numpy":
        assert got._value.flags.c_contiguous


@pytest.mark.parametrize("perm", [(1, 0, 2), (0, 1, 2), (2, 0, 1, 3), (1, 2, 0, 3)])
def test_matmul_of_a_stack_stored_in_another_order_keeps_that_order(perm):
    shape = (3, 4, 5, 6)[:len(perm)]
    a = B.xp.asarray(RNG.standard_normal(shape)).transpose(perm)
    b = B.xp.asarray(RNG.standard_normal((shape[-1], 7)))
    got = RAW.matmul(a, b)
    want = np.einsum("...k,kn->...n", B.to_numpy(a), B.to_numpy(b))
    np.testing.assert_allclose(B.to_numpy(got), want, rtol=1e-12, atol=1e-12)
    # In memory the result's leading axes lie in the operand's order.
    assert got.transpose(tuple(np.argsort(perm))).flags.c_contiguous
    # A stack that is not contiguous in any order takes numpy's loop, with the same values.
    strided = a[:, ::2]
    np.testing.assert_allclose(B.to_numpy(RAW.matmul(strided, b)),
                               np.einsum("...k,kn->...n", B.to_numpy(strided), B.to_numpy(b)),
                               rtol=1e-12, atol=1e-12)


@native_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stored", ["example-major", "stack-major"])
def test_relu_grad_of_a_stack_of_cotangents_over_one_activation(stored, dtype):
    rng = np.random.default_rng(5)
    y = _awkward(rng, (6, 5, 4), dtype)
    if stored == "example-major":   # (examples, stack, ...) in memory, seen (stack, examples, ...)
        g = _awkward(rng, (6, 3, 5, 4), dtype).swapaxes(0, 1)
    else:
        g = _awkward(rng, (3, 6, 5, 4), dtype)
    with np.errstate(all="ignore"):
        want = np.multiply(g, y > 0)
    got = native_nn.relu_grad(g, y)
    _same_bits(got, want)
    assert got.strides == g.strides    # written in the stack's own order
    assert native_nn.relu_grad(g, y, out=g) is g
    _same_bits(g, want)


@pytest.mark.parametrize("name", ["conv_same_relu", "conv_transpose"])
def test_a_convolutions_rule_runs_once_for_the_whole_stack(name, monkeypatch):
    # The input gradient of example n needs only example n of the cotangent, so the stack of
    # cotangents is one larger batch for the rule: one call, not one per cotangent.
    from minitf.ops.registry import OPS
    fn, x = FUNCTIONS[name]
    calls = []
    for op_name in ("conv2d_valid", "conv2d_input_grad"):
        op = OPS[op_name]
        monkeypatch.setattr(op, "vjp", lambda F, g, *a, _rule=op.vjp, **k:
                            calls.append(g.shape) or _rule(F, g, *a, **k))
    y, vec = batch_jacobian(fn, x, True)
    assert len(calls) == 1 and calls[0][0] == np.prod(y.shape[1:]) * x.shape[0]
    calls.clear()
    batch_jacobian(fn, x, False)
    assert len(calls) == np.prod(y.shape[1:])
    # Asked for the filter too, the rule sees one cotangent at a time again (a filter's
    # gradient sums over the examples).
    calls.clear()
    kernel = K4 if name == "conv_same_relu" else K_UP
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = fn(x)
    full = tape.jacobian(out, [x, kernel])
    assert len(calls) == np.prod(out.shape)
    np.testing.assert_allclose(np.einsum("bjbi->bji", full[0].numpy().reshape(
        x.shape[0], -1, x.shape[0], np.prod(x.shape[1:]))),
        vec.numpy().reshape(x.shape[0], -1, np.prod(x.shape[1:])), rtol=1e-12, atol=1e-12)


def test_large_results_reuse_freed_blocks_and_never_one_still_held():
    # 64 examples x 400 x 400 float32 = 41 MB: past glibc's fresh-mapping threshold, such
    # results come from kept blocks (minitf.backend.empty_result), never from one still held.
    x = const(64, 400, dtype=np.float32)

    def jacobian(fn):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return tape.batch_jacobian(y, x)

    first = jacobian(lambda v: v * v)
    second = B.empty_result((400, 64, 400), np.float32)   # a freed block full of values
    second.fill(1.0)
    del second
    third = jacobian(lambda v: v * v * 5.0)   # may take that block: zeros written again
    for result, scale in ((first, 1.0), (third, 5.0)):
        got = result.numpy()
        np.testing.assert_allclose(np.einsum("bii->bi", got), 2 * scale * x.numpy(), rtol=1e-6)
        assert np.count_nonzero(got) == np.count_nonzero(x.numpy())
