"""Forward values against plain numpy (float64, float32, float16), TF's kink conventions with exact
gradients, and the errors that bad shapes and dtypes raise."""
import math

import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf.ops import conv_ops, einsum_ops

_rng = np.random.default_rng(11)


def _u(*shape, lo=-2.0, hi=2.0):
    return _rng.uniform(lo, hi, size=shape)


def _erf(x):
    return np.vectorize(math.erf)(x)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _conv_reference(x, w, stride, pads, dilation=(1, 1)):
    """Direct loops over output pixels and kernel offsets."""
    x = np.pad(x, ((0, 0),) + tuple(pads) + ((0, 0),))
    kh, kw = w.shape[:2]
    oh = (x.shape[1] - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (x.shape[2] - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    out[:, i, j] += x[:, i * stride[0] + a * dilation[0],
                                      j * stride[1] + b * dilation[1]] @ w[a, b]
    return out


def _pool_reference(x, k, s, pads, reduce):
    """Windows clipped to the real image (SAME pools ignore the padding, as TF)."""
    h, w = x.shape[1:3]
    oh = (h + sum(pads[0]) - k[0]) // s[0] + 1
    ow = (w + sum(pads[1]) - k[1]) // s[1] + 1
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for i in range(oh):
        for j in range(ow):
            r, c = i * s[0] - pads[0][0], j * s[1] - pads[1][0]
            out[:, i, j] = reduce(x[:, max(r, 0):r + k[0], max(c, 0):c + k[1]], axis=(1, 2))
    return out


# (name, minitf function, numpy reference, inputs as float64 arrays (or ints/bools))
CASES = [
    ("add", tf.add, np.add, [_u(2, 3), _u(3)]),
    ("subtract", tf.subtract, np.subtract, [_u(2, 3), _u(2, 1)]),
    ("multiply", tf.multiply, np.multiply, [_u(2, 3), _u(2, 3)]),
    ("divide", tf.divide, np.divide, [_u(2, 3), _u(3, lo=0.5)]),
    ("pow", tf.pow, np.power, [_u(2, 3, lo=0.5), _u(2, 3)]),
    ("square", tf.square, np.square, [_u(2, 3)]),
    ("sqrt", tf.sqrt, np.sqrt, [_u(2, 3, lo=0.1)]),
    ("rsqrt", tf.math.rsqrt, lambda x: 1 / np.sqrt(x), [_u(2, 3, lo=0.1)]),
    ("exp", tf.exp, np.exp, [_u(2, 3)]),
    ("log", tf.math.log, np.log, [_u(2, 3, lo=0.1)]),
    ("log1p", tf.math.log1p, np.log1p, [_u(2, 3, lo=-0.5)]),
    ("sin", tf.sin, np.sin, [_u(2, 3)]),
    ("cos", tf.cos, np.cos, [_u(2, 3)]),
    ("tanh", tf.tanh, np.tanh, [_u(2, 3)]),
    ("abs", tf.abs, np.abs, [_u(2, 3)]),
    ("sign", tf.sign, np.sign, [np.array([-2.0, 0.0, 3.0])]),
    ("maximum", tf.maximum, np.maximum, [_u(2, 3), _u(3)]),
    ("minimum", tf.minimum, np.minimum, [_u(2, 3), _u(3)]),
    ("negative", tf.negative, np.negative, [_u(2, 3)]),
    ("reciprocal", tf.math.reciprocal, np.reciprocal, [_u(2, 3, lo=0.5)]),
    ("identity", tf.identity, lambda x: x, [_u(2, 3)]),
    ("matmul", tf.matmul, np.matmul, [_u(2, 3, 4), _u(4, 2)]),
    ("einsum", lambda a, b: einsum_ops.einsum("bij,bkj->bik", a, b),
     lambda a, b: np.einsum("bij,bkj->bik", a, b), [_u(2, 3, 4), _u(2, 5, 4)]),
    ("einsum diagonal", lambda x: einsum_ops.einsum("bxby->bxy", x),
     lambda x: np.einsum("bxby->bxy", x), [_u(2, 3, 2, 4)]),
    ("einsum implicit", lambda x: einsum_ops.einsum("ba", x), lambda x: x.T, [_u(2, 3)]),
    ("tensordot", lambda a, b: tf.tensordot(a, b, [[1], [0]]),
     lambda a, b: np.tensordot(a, b, [[1], [0]]), [_u(2, 3), _u(3, 4)]),
    ("transpose", lambda x: tf.transpose(x, [2, 0, 1]), lambda x: x.transpose(2, 0, 1),
     [_u(2, 3, 4)]),
    ("reshape", lambda x: tf.reshape(x, [3, -1]), lambda x: x.reshape(3, -1), [_u(2, 3, 2)]),
    ("squeeze", tf.squeeze, np.squeeze, [_u(1, 3, 1)]),
    ("expand_dims", lambda x: tf.expand_dims(x, 1), lambda x: x[:, None], [_u(2, 3)]),
    ("concat", lambda a, b: tf.concat([a, b], 0), lambda a, b: np.concatenate([a, b]),
     [_u(1, 3), _u(2, 3)]),
    ("stack", lambda a, b: tf.stack([a, b], axis=-1), lambda a, b: np.stack([a, b], -1),
     [_u(2, 3), _u(2, 3)]),
    ("unstack", lambda x: tf.unstack(x, axis=1), lambda x: list(np.moveaxis(x, 1, 0)),
     [_u(2, 3)]),
    ("split", lambda x: tf.split(x, [1, 2], axis=1), lambda x: np.split(x, [1], axis=1),
     [_u(2, 3)]),
    ("tile", lambda x: tf.tile(x, [2, 3]), lambda x: np.tile(x, (2, 3)), [_u(2, 3)]),
    ("pad", lambda x: tf.pad(x, [[1, 0], [0, 2]], constant_values=1.5),
     lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=1.5), [_u(2, 3)]),
    ("pad reflect", lambda x: tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT"),
     lambda x: np.pad(x, ((1, 1), (2, 2)), mode="reflect"), [_u(3, 3)]),
    ("pad symmetric", lambda x: tf.pad(x, [[0, 2], [3, 1]], mode="symmetric"),
     lambda x: np.pad(x, ((0, 2), (3, 1)), mode="symmetric"), [_u(3, 3)]),
    ("gather", lambda x, i: tf.gather(x, i, axis=1), lambda x, i: np.take(x, i, axis=1),
     [_u(2, 4), np.array([3, 0, 3])]),
    ("boolean_mask", tf.boolean_mask, lambda x, m: x[m],
     [_u(3, 2), np.array([True, False, True])]),
    ("where", tf.where, np.where, [np.array([True, False, True]), _u(2, 3), _u(2, 3)]),
    ("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 1.0), lambda x: np.clip(x, -0.5, 1.0),
     [_u(2, 3)]),
    ("reduce_sum", lambda x: tf.reduce_sum(x, axis=1), lambda x: x.sum(axis=1), [_u(2, 3)]),
    ("reduce_mean", lambda x: tf.reduce_mean(x, axis=[0, 2], keepdims=True),
     lambda x: x.mean(axis=(0, 2), keepdims=True), [_u(2, 3, 4)]),
    ("reduce_max", lambda x: tf.reduce_max(x, axis=0), lambda x: x.max(axis=0), [_u(2, 3)]),
    ("reduce_min", tf.reduce_min, np.min, [_u(2, 3)]),
    ("reduce_prod", lambda x: tf.reduce_prod(x, axis=-1), lambda x: x.prod(axis=-1), [_u(2, 3)]),
    ("reduce_logsumexp", lambda x: tf.reduce_logsumexp(x, axis=1),
     lambda x: np.log(np.exp(x).sum(axis=1)), [_u(2, 3)]),
    ("argmax", lambda x: tf.argmax(x, axis=1), lambda x: x.argmax(axis=1), [_u(2, 3)]),
    ("argmin", tf.argmin, lambda x: x.argmin(axis=0), [_u(2, 3)]),
    ("norm", tf.norm, np.linalg.norm, [_u(2, 3)]),
    ("norm axis", lambda x: tf.norm(x, axis=-1), lambda x: np.linalg.norm(x, axis=-1),
     [_u(2, 3)]),
    ("one_hot", lambda i: tf.one_hot(i, 4), lambda i: np.eye(4)[i], [np.array([0, 3, 1])]),
    ("cumsum", lambda x: tf.cumsum(x, axis=1), lambda x: np.cumsum(x, axis=1), [_u(2, 3)]),
    ("cumsum exclusive reverse", lambda x: tf.cumsum(x, exclusive=True, reverse=True),
     lambda x: np.cumsum(x[::-1], axis=0)[::-1] - x, [_u(3, 2)]),
    ("sigmoid", tf.math.sigmoid, lambda x: 1 / (1 + np.exp(-x)), [_u(2, 3, lo=-30, hi=30)]),
    ("softplus", tf.math.softplus, lambda x: np.log1p(np.exp(x)), [_u(2, 3, lo=-10, hi=10)]),
    ("log_sigmoid", tf.math.log_sigmoid, lambda x: -np.log1p(np.exp(-x)), [_u(2, 3)]),
    ("erf", tf.math.erf, _erf, [_u(2, 3)]),
    ("linalg.solve", tf.linalg.solve, np.linalg.solve, [_u(3, 3) + 3 * np.eye(3), _u(3, 2)]),
    ("linalg.inv", tf.linalg.inv, np.linalg.inv, [_u(2, 3, 3) + 3 * np.eye(3)]),
    ("linalg.det", tf.linalg.det, np.linalg.det, [_u(3, 3)]),
    ("linalg.norm", lambda x: tf.linalg.norm(x, ord=1, axis=0),
     lambda x: np.abs(x).sum(axis=0), [_u(2, 3)]),
    ("relu", tf.nn.relu, lambda x: np.maximum(x, 0), [_u(2, 3)]),
    ("relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6), [_u(2, 3, lo=-3, hi=9)]),
    ("leaky_relu", tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), [_u(2, 3)]),
    ("elu", tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), [_u(2, 3)]),
    ("gelu", tf.nn.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), [_u(2, 3)]),
    ("gelu tanh", lambda x: tf.nn.gelu(x, approximate=True),
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
     [_u(2, 3)]),
    ("nn.sigmoid", tf.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x)), [_u(2, 3)]),
    ("nn.tanh", tf.nn.tanh, np.tanh, [_u(2, 3)]),
    ("softmax", tf.nn.softmax, _softmax, [_u(2, 3)]),
    ("softmax axis 0", lambda x: tf.nn.softmax(x, axis=0), lambda x: _softmax(x, 0), [_u(2, 3)]),
    ("log_softmax", tf.nn.log_softmax, lambda x: np.log(_softmax(x)), [_u(2, 3)]),
    ("sparse softmax CE", lambda y, x: tf.nn.sparse_softmax_cross_entropy_with_logits(y, x),
     lambda y, x: -np.log(_softmax(x))[np.arange(3), y], [np.array([2, 0, 1]), _u(3, 4)]),
    ("softmax CE", tf.nn.softmax_cross_entropy_with_logits,
     lambda y, x: -(y * np.log(_softmax(x))).sum(-1), [_softmax(_u(3, 4)), _u(3, 4)]),
    ("sigmoid CE", tf.nn.sigmoid_cross_entropy_with_logits,
     lambda y, x: -(y * np.log(1 / (1 + np.exp(-x))) + (1 - y) * np.log(1 - 1 / (1 + np.exp(-x)))),
     [_u(2, 3, lo=0, hi=1), _u(2, 3)]),
    ("dropout rate 0", lambda x: tf.nn.dropout(x, 0.0), lambda x: x, [_u(2, 3)]),
    ("moments", lambda x: tf.nn.moments(x, axes=[0]), lambda x: (x.mean(0), x.var(0)),
     [_u(4, 3)]),
    ("batch_normalization",
     lambda x, m, v, b, s: tf.nn.batch_normalization(x, m, v, b, s, 1e-3),
     lambda x, m, v, b, s: (x - m) / np.sqrt(v + 1e-3) * s + b,
     [_u(4, 3), _u(3), _u(3, lo=0.1), _u(3), _u(3)]),
    ("conv2d SAME", lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"),
     lambda x, w: _conv_reference(x, w, (1, 1), ((1, 1), (1, 1))),
     [_u(2, 5, 4, 3), _u(3, 3, 3, 2)]),
    ("conv2d SAME even kernel, strided", lambda x, w: tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME"),
     lambda x, w: _conv_reference(x, w, (2, 2), ((0, 0), (0, 1))),  # TF: the extra pad at the end
     [_u(1, 6, 5, 2), _u(2, 2, 2, 3)]),
    ("conv2d VALID dilated", lambda x, w: tf.nn.conv2d(x, w, 1, "VALID", dilations=[2, 1]),
     lambda x, w: _conv_reference(x, w, (1, 1), ((0, 0), (0, 0)), (2, 1)),
     [_u(1, 6, 5, 2), _u(2, 3, 2, 2)]),
    ("conv2d explicit", lambda x, w: tf.nn.conv2d(x, w, 2, [[0, 0], [2, 1], [0, 1], [0, 0]]),
     lambda x, w: _conv_reference(x, w, (2, 2), ((2, 1), (0, 1))),
     [_u(1, 5, 5, 1), _u(3, 3, 1, 2)]),
    ("conv2d NCHW", lambda x, w: tf.nn.conv2d(x, w, 1, "VALID", data_format="NCHW"),
     lambda x, w: _conv_reference(x.transpose(0, 2, 3, 1), w, (1, 1),
                                  ((0, 0), (0, 0))).transpose(0, 3, 1, 2),
     [_u(1, 2, 4, 4), _u(3, 3, 2, 2)]),
    ("max_pool2d VALID", lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"),
     lambda x: _pool_reference(x, (2, 2), (2, 2), ((0, 0), (0, 0)), np.max), [_u(2, 5, 4, 3)]),
    ("max_pool2d SAME", lambda x: tf.nn.max_pool2d(x, [3, 3], [2, 2], "SAME"),
     lambda x: _pool_reference(x, (3, 3), (2, 2), ((1, 1), (1, 1)), np.max),
     [_u(2, 5, 5, 3, lo=-5, hi=-1)]),
    ("avg_pool2d VALID", lambda x: tf.nn.avg_pool2d(x, [2, 3], [1, 2], "VALID"),
     lambda x: _pool_reference(x, (2, 3), (1, 2), ((0, 0), (0, 0)), np.mean), [_u(2, 4, 5, 2)]),
    ("avg_pool2d SAME", lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"),
     lambda x: _pool_reference(x, (3, 3), (2, 2), ((1, 1), (1, 1)), np.mean), [_u(1, 5, 5, 2)]),
    ("avg_pool2d SAME uneven", lambda x: tf.nn.avg_pool2d(x, 2, 2, "SAME"),
     lambda x: _pool_reference(x, (2, 2), (2, 2), ((0, 1), (0, 1)), np.mean), [_u(1, 5, 5, 2)]),
    ("max_pool 1-D", lambda x: tf.nn.max_pool(x, 2, 2, "SAME"),
     lambda x: _pool_reference(x[:, None], (1, 2), (1, 2), ((0, 0), (0, 1)), np.max)[:, 0],
     [_u(2, 5, 3)]),
]

_NO_FLOAT16 = {"linalg.solve", "linalg.inv", "linalg.det"}  # numpy.linalg has no float16
# float16 results vs the float64 reference on float16-rounded inputs: relative and absolute
_TOL = {"float64": (1e-12, 1e-12), "float32": (2e-5, 2e-6), "float16": (1e-2, 4e-3)}
_LOOSE_F64 = {"erf": 2e-7}  # erf is a rational fit, |error| < 1.2e-7


def _flat(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("name,fn,ref,inputs", CASES, ids=[c[0] for c in CASES])
def test_forward_matches_numpy(name, fn, ref, inputs, dtype):
    if dtype == "float16" and name in _NO_FLOAT16:
        pytest.skip("numpy.linalg has no float16")
    args = [x.astype(dtype) if x.dtype == np.float64 else x for x in inputs]
    got = _flat(fn(*[tf.constant(a) for a in args]))
    want = _flat(ref(*[a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]))
    assert len(got) == len(want), name
    rtol, atol = _TOL[dtype]
    if dtype == "float64":
        rtol = atol = max(rtol, _LOOSE_F64.get(name, 0.0))
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert tuple(g.shape) == w.shape, f"{name}: shape {tuple(g.shape)} != {w.shape}"
        if w.dtype.kind in "iu":
            assert g.dtype.is_integer, f"{name}: result dtype {g.dtype.name}, expected integers"
        elif any(a.dtype.kind == "f" for a in args):
            assert g.dtype == dtype, f"{name}: result dtype {g.dtype.name}, input dtype {dtype}"
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), w, rtol=rtol, atol=atol,
                                   err_msg=f"{name} ({dtype})")


def test_large_inputs_stay_finite():
    x = tf.constant([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    np.testing.assert_allclose(tf.math.sigmoid(x).numpy(), [0.0, 1.9287498e-22, 0.5, 1.0, 1.0],
                               rtol=1e-6)
    assert np.isfinite(tf.math.softplus(x).numpy()).all()
    assert np.isfinite(tf.math.log_sigmoid(x).numpy()).all()
    assert np.isfinite(tf.nn.log_softmax(x).numpy()).all()
    assert np.isfinite(tf.reduce_logsumexp(x).numpy())


# --- kink conventions (TF's), exact values -----------------------------------------------------

def _grad(fn, *values):
    xs = [tf.constant(np.asarray(v, dtype=np.float32)) for v in values]
    with tf.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
    grads = tape.gradient(y, xs)
    return [None if g is None else g.numpy().tolist() for g in grads]


def test_relu_and_relu6_kinks():
    assert _grad(tf.nn.relu, [-1.0, 0.0, 2.0]) == [[0.0, 0.0, 1.0]]
    assert _grad(tf.nn.relu6, [0.0, 3.0, 6.0, 7.0]) == [[0.0, 1.0, 0.0, 0.0]]


def test_abs_and_sign_kinks():
    assert _grad(tf.abs, [-2.0, 0.0, 3.0]) == [[-1.0, 0.0, 1.0]]
    assert _grad(tf.sign, [-2.0, 0.0, 3.0]) == [[0.0, 0.0, 0.0]]


def test_leaky_relu_and_elu_at_zero():
    assert _grad(lambda x: tf.nn.leaky_relu(x, alpha=0.25), [-1.0, 0.0, 1.0]) == [
        [0.25, 0.25, 1.0]]
    assert _grad(tf.nn.elu, [0.0]) == [[1.0]]


def test_maximum_minimum_ties_go_to_the_first_argument():
    assert _grad(tf.maximum, [1.0, 2.0, 3.0], [1.0, 2.5, 3.0]) == [[1.0, 0.0, 1.0],
                                                                    [0.0, 1.0, 0.0]]
    assert _grad(tf.minimum, [1.0, 2.0, 3.0], [1.0, 1.5, 3.0]) == [[1.0, 0.0, 1.0],
                                                                    [0.0, 1.0, 0.0]]


def test_reduce_max_and_min_split_ties():
    assert _grad(tf.reduce_max, [1.0, 3.0, 3.0, 2.0]) == [[0.0, 0.5, 0.5, 0.0]]
    third = float(np.float32(1) / np.float32(3))
    assert _grad(lambda x: tf.reduce_min(x, axis=1),
                 [[1.0, 1.0, 1.0, 4.0], [0.0, 2.0, 3.0, 4.0]]) == [
        [[third, third, third, 0.0], [1.0, 0.0, 0.0, 0.0]]]


def test_clip_by_value_passes_the_gradient_at_its_bounds():
    assert _grad(lambda x: tf.clip_by_value(x, 0.0, 1.0), [-1.0, 0.0, 0.5, 1.0, 2.0]) == [
        [0.0, 1.0, 1.0, 1.0, 0.0]]


def test_max_pool_ties_go_to_the_first_maximum():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 0.0, 0.0]]).reshape(1, 2, 4, 1)
    (g,) = _grad(lambda t: tf.nn.max_pool2d(t, 2, 2, "VALID"), x)
    # the left window [1, 3; 3, 2] ties (the first 3 wins); the right [3, 0; 0, 0] does not
    assert np.array(g).reshape(2, 4).tolist() == [[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]


def test_reduce_prod_gradient_with_zeros():
    x = [[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]]
    assert _grad(lambda t: tf.reduce_prod(t, axis=1), x) == [
        [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [6.0, 3.0, 2.0]]]


def test_avg_pool_same_divides_by_real_pixels():
    x = tf.ones((1, 3, 3, 1))
    assert np.array_equal(tf.nn.avg_pool2d(x, 2, 2, "SAME").numpy(), np.ones((1, 2, 2, 1)))
    (g,) = _grad(lambda t: tf.nn.avg_pool2d(t, 2, 2, "SAME"), np.ones((1, 3, 3, 1)))
    assert np.array(g).reshape(3, 3).tolist() == [[0.25, 0.25, 0.5], [0.25, 0.25, 0.5],
                                                  [0.5, 0.5, 1.0]]


# --- errors ---------------------------------------------------------------------------------------

def test_broadcast_error_names_the_op_and_both_shapes():
    with pytest.raises(ValueError, match=r"add.*\(2, 3\).*\(4, 5\)"):
        tf.add(tf.ones((2, 3)), tf.ones((4, 5)))
    with pytest.raises(ValueError, match=r"multiply.*\(2, 3\).*\(4, 5\)"):
        tf.ones((2, 3)) * tf.ones((4, 5))


def test_mixed_float_dtypes_are_a_type_error():
    with pytest.raises(TypeError, match="float32.*float64"):
        tf.add(tf.ones((2,)), tf.ones((2,), dtype=tf.float64))
    with pytest.raises(TypeError):
        tf.constant(1.0) * tf.constant(1.0, dtype=tf.float64)
    with pytest.raises(TypeError, match="matmul"):
        tf.matmul(tf.ones((2, 2)), tf.ones((2, 2), dtype=tf.float64))
    with pytest.raises(TypeError, match="concat"):
        tf.concat([tf.ones((2,)), tf.ones((2,), dtype=tf.float64)], 0)
    with pytest.raises(TypeError, match="einsum"):
        tf.einsum("i,i->", tf.ones((2,)), tf.ones((2,), dtype=tf.float64))


def test_shape_errors_name_the_op():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        tf.matmul(tf.ones((2, 3)), tf.ones((4, 5)))
    with pytest.raises(ValueError, match="reshape"):
        tf.reshape(tf.ones((2, 3)), (4, 2))
    with pytest.raises(ValueError, match="einsum"):
        tf.einsum("ij,jk->ik", tf.ones((2, 3)))
    with pytest.raises(ValueError, match="einsum"):
        tf.einsum("ij,jk->ik", tf.ones((2, 3)), tf.ones((4, 5)))
    with pytest.raises(ValueError, match="einsum"):
        tf.einsum("ijk->i", tf.ones((2, 3)))
    with pytest.raises(ValueError, match=r"conv2d.*\(3, 3, 2, 4\)"):
        tf.nn.conv2d(tf.ones((1, 5, 5, 3)), tf.ones((3, 3, 2, 4)), 1, "SAME")
    with pytest.raises(ValueError, match="conv2d"):
        tf.nn.conv2d(tf.ones((1, 2, 2, 1)), tf.ones((3, 3, 1, 1)), 1, "VALID")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(tf.ones((1, 5, 5, 1)), tf.ones((3, 3, 1, 1)), 1, "FULL")
    with pytest.raises(ValueError, match="strides"):
        tf.nn.conv2d(tf.ones((1, 5, 5, 1)), tf.ones((3, 3, 1, 1)), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="pad"):
        tf.pad(tf.ones((2, 2)), [[2, 0], [0, 0]], mode="REFLECT")
    with pytest.raises(ValueError, match="concat"):
        tf.concat([tf.ones((2, 3)), tf.ones((2, 4))], 0)


def test_repeat_matches_numpy_and_its_gradient_counts_copies():
    x = np.arange(6.0).reshape(2, 3)
    t = tf.constant(x)
    np.testing.assert_array_equal(tf.repeat(t, 2, axis=1).numpy(), np.repeat(x, 2, axis=1))
    np.testing.assert_array_equal(tf.repeat(t, [1, 2], axis=0).numpy(),
                                  np.repeat(x, [1, 2], axis=0))
    np.testing.assert_array_equal(tf.repeat(t, 2).numpy(), np.repeat(x, 2))
    np.testing.assert_array_equal(tf.repeat([1, 2], 2).numpy(), [1, 1, 2, 2])
    with tf.GradientTape() as tape:
        tape.watch(t)
        y = tf.repeat(t, [0, 1, 3], axis=1)
    np.testing.assert_array_equal(tape.gradient(y, t).numpy(), [[0, 1, 3], [0, 1, 3]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="repeat: repeats"):
        tf.repeat(t, [1, 2], axis=1)


def test_linalg_diag_and_diag_part():
    v = np.array([[1.0, np.inf], [3.0, -4.0]])
    d = tf.linalg.diag(tf.constant(v)).numpy()
    np.testing.assert_array_equal(d, np.stack([np.diag(r) for r in v]))
    m = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tf.linalg.diag_part(tf.constant(m)).numpy(),
                                  np.stack([np.diag(x) for x in m]))
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.linalg.diag(x) * tf.constant([[3.0, 5.0], [7.0, 11.0]]))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 11.0])


def test_map_fn_and_vectorized_map_stack_per_slice_results():
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(tf.map_fn(lambda r: r * r, x).numpy(), x.numpy() ** 2)
    total, first = tf.vectorized_map(lambda r: (tf.reduce_sum(r), r[0]), x)
    np.testing.assert_array_equal(total.numpy(), [1.0, 5.0, 9.0])
    np.testing.assert_array_equal(first.numpy(), [0.0, 2.0, 4.0])
    pairs = tf.map_fn(lambda ab: ab[0] * ab[1], (x, 2.0 * x))
    np.testing.assert_array_equal(pairs.numpy(), 2.0 * x.numpy() ** 2)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.map_fn(lambda r: tf.reduce_prod(r), x))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), x.numpy()[:, ::-1])


def test_embedding_lookup_is_gather_with_a_dense_gradient():
    params = tf.Variable(np.arange(8.0).reshape(4, 2))
    with tf.GradientTape() as tape:
        rows = tf.nn.embedding_lookup(params, [3, 0, 3])
    np.testing.assert_array_equal(rows.numpy(), params.numpy()[[3, 0, 3]])
    np.testing.assert_array_equal(tape.gradient(rows, params).numpy(),
                                  [[1, 1], [0, 0], [0, 0], [2, 2]])


@pytest.mark.parametrize("shape", [(128, 10, 512), (64, 16, 300), (3, 4, 5), (128, 17, 512)])
def test_matmul_by_a_transposed_operand_with_few_rows(shape):
    """``g @ W.T`` with a few-row ``W.T`` (copied to C order before the product where that
    is faster) gives numpy's product of the same arrays, eagerly and into a planned buffer."""
    from minitf.ops import linalg_ops
    m, k, n = shape
    rng = np.random.default_rng(5)
    g = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    want = g @ w.T
    np.testing.assert_allclose(want, g.astype(np.float64) @ w.T.astype(np.float64), rtol=1e-4,
                               atol=1e-4)
    got = tf.matmul(tf.constant(g), tf.constant(w), transpose_b=True).numpy()
    np.testing.assert_array_equal(got, want)
    if B.get_backend() == "numpy":
        out = np.empty((m, n), np.float32)
        np.testing.assert_array_equal(linalg_ops._matmul_out(out, g, w.T), want)
        copied = linalg_ops._few_rows_in_order(g, w.T)
        assert copied.flags.c_contiguous == (k <= 16 and m * n >= 1 << 14)


def test_small_products_run_on_one_blas_thread(monkeypatch):
    """A product above OpenBLAS's split threshold (65536 x 4 multiply-adds) and up to about a
    million runs with the calling thread's OpenBLAS count at 1, handed back to the global
    count after; smaller and larger ones are left to OpenBLAS. The values are numpy's."""
    from minitf import mkl_blas, openblas
    from minitf.ops import linalg_ops
    monkeypatch.setattr(mkl_blas, "_state", False)   # numpy's BLAS (MKL, where used, differs)
    real = openblas.local_threads_setter() if B.get_backend() == "numpy" else None
    if real is None:
        pytest.skip("numpy's OpenBLAS with openblas_set_num_threads_local (0.3.27+) only")
    global_count = openblas.threads()
    counts = []

    def recording(n):
        previous = real(n)
        counts.append(openblas.threads())
        return previous

    monkeypatch.setattr(openblas, "local_threads_setter", lambda: recording)
    rng = np.random.default_rng(11)
    cases = [((128, 512, 10), [1, global_count]), ((32, 784, 32), [1, global_count]),
             ((64, 64, 64), []), ((128, 784, 512), [])]
    for (m, k, n), want_counts in cases:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        counts.clear()
        got = tf.matmul(tf.constant(a), tf.constant(b)).numpy()
        assert counts == want_counts, (m, k, n)
        np.testing.assert_array_equal(got, a @ b)
        np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
        out = np.empty((m, n), np.float32)
        assert linalg_ops._matmul_out(out, a, b) is out
        np.testing.assert_array_equal(out, a @ b)
    assert openblas.threads() == global_count


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("rate", [0.2, 0.5, 2 / 3, 1e-4])
def test_dropout_keeps_with_the_draws_and_scales_by_one_over_keep(rate, dtype):
    # The mask is uniform draws (float32, the global generator) below keep = 1 - rate, scaled
    # by 1 / keep rounded once to the dtype: an independent numpy computation of the same
    # draws gives the same bits.
    shape = (64, 129)
    tf.random.set_seed(7)
    x = tf.ones(shape, dtype)
    y = tf.nn.dropout(x, rate).numpy()
    draws = np.random.Generator(np.random.PCG64(7)).random(size=shape, dtype=np.float32)
    keep = 1.0 - rate
    want = np.where(draws < keep, np.float64(1.0) / keep, 0.0).astype(dtype)
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name,fn,derivative", [
    ("gelu", tf.nn.gelu, lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2)))
     + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi)),
    ("softplus", tf.nn.softplus, lambda v: 1 / (1 + math.exp(-v))),
    ("log_sigmoid", tf.math.log_sigmoid, lambda v: 1 / (1 + math.exp(v))),
    ("sigmoid", tf.nn.sigmoid, lambda v: math.exp(-v) / (1 + math.exp(-v)) ** 2),
    ("elu", tf.nn.elu, lambda v: 1.0 if v > 0 else math.exp(v)),
])
def test_activations_of_a_scalar_keep_its_shape_and_dtype(name, fn, derivative, dtype):
    for v in (-1.5, 0.75):
        x = tf.constant(v, dtype)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        g = tape.gradient(y, x)
        assert y.shape == () and g.shape == () and y.dtype == x.dtype, (name, y.shape)
        tol = 2e-3 if dtype == "float16" else 1e-6
        assert abs(float(g.numpy()) - derivative(v)) <= tol * max(1.0, abs(derivative(v)))


def test_softplus_names_itself_and_the_dtype_it_wants():
    with pytest.raises(TypeError, match="softplus: expected a floating-point tensor, got int32"):
        tf.nn.softplus(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="log_sigmoid: expected a floating-point tensor"):
        tf.math.log_sigmoid(tf.constant([1, 2]))
