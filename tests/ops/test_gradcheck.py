"""Gradient checks driven by the op registry, plus composite public functions.

Every differentiable op in ``minitf.ops.registry.OPS`` is checked on its own float64 samples:
VJP vs central differences, JVP vs VJP, vectorised jacobian vs the loop, RAW vs TENSOR rules,
and (smooth ops) all of that again for the gradient itself. See ``minitf.testing.gradcheck``.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.ops import conv_ops, einsum_ops, math_ops, nn_ops, random_ops
from minitf.ops.registry import OPS
from minitf.testing import GradCheckError, check_grads, check_op

DIFFERENTIABLE = [op for op in OPS.values() if op.vjp is not None]


@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=lambda op: op.name)
def test_registered_op_gradients(op):
    assert op.samples is not None, (
        f"op {op.name!r} has a gradient rule but no samples= for the gradient check")
    assert op.jvp is not None, f"op {op.name!r} has a gradient rule but no forward-mode rule"
    samples = list(op.samples())
    assert samples, f"op {op.name!r}: samples() yielded nothing"
    for k, (inputs, attrs) in enumerate(samples):
        for x in inputs:
            assert isinstance(x, np.ndarray) and x.dtype in (np.float64, np.int64, np.int32,
                                                             np.bool_), (
                f"op {op.name!r} sample {k}: inputs must be float64 (or integer/bool) numpy "
                f"arrays, got {type(x).__name__} {getattr(x, 'dtype', '')}")
        check_op(op, inputs, attrs, name=f"op {op.name!r} sample {k} {attrs}")


@pytest.mark.parametrize("name, kernel", [("conv2d_valid", "conv"),
                                          ("conv2d_input_grad", "input_grad"),
                                          ("conv2d_filter_grad", "filter_grad")])
def test_convolution_gradients_on_winograds_kernels(monkeypatch, winograd_everywhere, name,
                                                    kernel):
    """The registry's convolution samples are small images, which run on im2col
    (``winograd.pays``); here the ones Winograd can take run on its kernels, second
    derivatives included."""
    from minitf import native, winograd
    calls = []
    real = getattr(winograd, kernel)
    monkeypatch.setattr(winograd, kernel, lambda *a, **k: calls.append(1) or real(*a, **k))
    op = OPS[name]
    for k, (inputs, attrs) in enumerate(op.samples()):
        check_op(op, inputs, attrs, name=f"op {name!r} sample {k} {attrs}")
    native_kernels = tf.get_backend() == "numpy" and native.kernels() is not None
    assert bool(calls) == (native_kernels and native.kernels().winograd is not None)


def test_checker_catches_a_wrong_rule():
    op = OPS["sin"]
    rule = op.vjp
    op.vjp = lambda F, g, x, y: (g * F.cos(x[0]) * 1.001,)
    # Fixed inputs: the registry's samples come from a shared generator whose draws depend on
    # which tests ran first, and a projection that happens to be near zero would hide 0.1 %.
    inputs = (np.linspace(0.1, 1.2, 12).reshape(3, 4),)
    try:
        with pytest.raises(GradCheckError, match="sin.*VJP vs finite differences"):
            check_op(op, inputs, {})
    finally:
        op.vjp = rule


def test_checker_catches_a_wrong_tensor_rule():
    from minitf.ops.registry import TENSOR
    op = OPS["tanh"]
    rule = op.vjp
    op.vjp = lambda F, g, x, y: (g * (1.0 - y * y) * (1.01 if F is TENSOR else 1.0),)
    try:
        with pytest.raises(GradCheckError, match="tanh.*RAW vs TENSOR"):
            check_op(op, *next(iter(op.samples())), order=1, modes=("rev",), jacobian=False)
    finally:
        op.vjp = rule


def test_checker_catches_a_wrong_second_order():
    from minitf.ops.registry import TENSOR
    op = OPS["tanh"]
    rule = op.vjp
    # right values, but y is cut from the graph: only derivatives of the gradient are wrong
    op.vjp = lambda F, g, x, y: (g * (1.0 - (F.stop_gradient(y) if F is TENSOR else y) * y),)
    try:
        with pytest.raises(GradCheckError, match="tanh.*second order"):
            check_op(op, *next(iter(op.samples())), namespaces=False)
    finally:
        op.vjp = rule


def test_checker_catches_a_wrong_forward_rule():
    op = OPS["softmax"]
    rule = op.jvp
    op.jvp = lambda F, t, x, y, axis=-1: t[0] * y  # misses the normalisation term
    try:
        with pytest.raises(GradCheckError, match="softmax.*JVP vs VJP"):
            check_op(op, *next(iter(op.samples())), order=1)
    finally:
        op.jvp = rule


def test_checker_catches_a_wrong_batched_rule():
    op = OPS["exp"]
    rule = op.vjp
    op.vjp = lambda F, g, x, y: (g * y * (2.0 if F.nb else 1.0),)
    try:
        with pytest.raises(GradCheckError, match="jacobian"):
            check_op(op, *next(iter(op.samples())), order=1, modes=("rev",))
    finally:
        op.vjp = rule


# --- composite public functions -------------------------------------------------------------------

_rng = np.random.default_rng(7)


def _u(*shape, lo=-2.0, hi=2.0):
    return _rng.uniform(lo, hi, size=shape)


def _away(*shape, lo=0.3, hi=2.0):
    return _u(*shape, lo=lo, hi=hi) * _rng.choice([-1.0, 1.0], size=shape)


def _seeded_dropout(x):
    random_ops.set_seed(3)  # the same mask at every evaluation of the finite differences
    return nn_ops.dropout(x, 0.4)


def _prod_with_zeros():
    x = _away(3, 4, lo=0.5)
    x[1, 2] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    return x


# (name, function, inputs, check_grads options)
COMPOSITES = [
    ("clip_by_value", lambda x: tf.clip_by_value(x, -0.5, 0.7), [_away(3, 4)], {"order": 1}),
    ("clip_by_value bounds", lambda x, lo, hi: tf.clip_by_value(x, lo, hi),
     [_u(3, 4), _u(4, lo=-1.5, hi=-0.2), _u(4, lo=0.2, hi=1.5)], {"order": 1}),
    ("norm", lambda x: tf.norm(x), [_u(3, 4)], {}),
    ("norm axis", lambda x: tf.norm(x, axis=1, keepdims=True), [_u(3, 4)], {}),
    ("norm ord 1", lambda x: tf.norm(x, ord=1, axis=0), [_away(3, 4)], {"order": 1}),
    ("norm inf", lambda x: tf.norm(x, ord=np.inf), [_u(3, 4)], {"order": 1}),
    ("linalg.norm", lambda x: tf.linalg.norm(x), [_u(2, 3)], {}),
    ("tensordot 1", lambda a, b: tf.tensordot(a, b, 1), [_u(2, 3), _u(3, 4)], {}),
    ("tensordot axes", lambda a, b: tf.tensordot(a, b, [[0, 2], [1, 0]]),
     [_u(2, 3, 4), _u(4, 2, 3)], {}),
    ("matmul transposed", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
     [_u(3, 2), _u(4, 3)], {}),
    ("squeeze", lambda x: tf.squeeze(x, [0, 2]), [_u(1, 3, 1, 2)], {}),
    ("expand_dims", lambda x: tf.expand_dims(x, -1), [_u(2, 3)], {}),
    ("stack", lambda a, b: tf.stack([a, b], axis=1), [_u(2, 3), _u(2, 3)], {}),
    ("unstack", lambda x: tf.unstack(x, axis=1), [_u(2, 3)], {}),
    ("split", lambda x: tf.split(x, [1, -1], axis=1), [_u(2, 4)], {}),
    ("split equal", lambda x: tf.split(x, 2, axis=0), [_u(4, 2)], {}),
    ("concat", lambda a, b: tf.concat([a, b], axis=-1), [_u(2, 3), _u(2, 2)], {}),
    ("tile", lambda x: tf.tile(x, [2, 1]), [_u(2, 3)], {}),
    ("pad reflect", lambda x: tf.pad(x, [[1, 1], [2, 0]], mode="REFLECT"), [_u(3, 3)], {}),
    ("gather", lambda x: tf.gather(x, np.array([2, 0, 2])), [_u(3, 2)], {}),
    ("gather axis", lambda x: tf.gather(x, np.array([[1, 1], [0, 2]]), axis=1), [_u(2, 3)], {}),
    ("boolean_mask", lambda x: tf.boolean_mask(x, np.array([True, False, True])), [_u(3, 2)],
     {}),
    ("where", lambda c, x, y: tf.where(c, x, y), [np.array([[True], [False]]), _u(2, 3), _u(3)],
     {}),
    ("getitem", lambda x: x[1:, ::-1][:, 1], [_u(3, 4)], {}),
    ("reduce_prod with zeros", lambda x: tf.reduce_prod(x, axis=1), [_prod_with_zeros()],
     {"order": 1}),
    ("reduce_mean all", lambda x: tf.reduce_mean(x), [_u(2, 3)], {}),
    ("reduce_max", lambda x: tf.reduce_max(x, axis=0), [_u(3, 4)], {"order": 1}),
    ("cumsum", lambda x: tf.cumsum(x, axis=1, reverse=True), [_u(2, 3)], {}),
    ("softmax", lambda x: tf.nn.softmax(x, axis=0), [_u(3, 4)], {}),
    ("log_softmax", lambda x: tf.nn.log_softmax(x), [_u(3, 4)], {}),
    ("sparse softmax CE", lambda y, x: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=x), [np.array([1, 0, 3]), _u(3, 4)], {}),
    ("softmax CE", lambda y, x: tf.nn.softmax_cross_entropy_with_logits(y, x),
     [_u(3, 4, lo=0, hi=1), _u(3, 4)], {}),
    ("sigmoid CE", lambda y, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=x),
     [_u(3, 4, lo=0, hi=1), _u(3, 4)], {}),
    # TF's moments stops the gradient through the mean inside the variance: exact at first
    # order only (the same holds in TF).
    ("moments", lambda x: tf.nn.moments(x, axes=[0]), [_u(4, 3)], {"order": 1}),
    ("batch_normalization", lambda x, m, v, b, s: tf.nn.batch_normalization(x, m, v, b, s, 1e-3),
     [_u(4, 3), _u(3), _u(3, lo=0.5, hi=2), _u(3), _u(3)], {}),
    ("dropout", _seeded_dropout, [_u(3, 4)], {}),
    ("l2_loss", lambda x: tf.nn.l2_loss(x), [_u(3)], {}),
    ("silu", lambda x: tf.nn.silu(x), [_u(3, 4)], {}),
    ("softsign", lambda x: tf.nn.softsign(x), [_away(3, 4)], {"order": 1}),
    ("divide_no_nan", lambda a, b: tf.math.divide_no_nan(a, b), [_u(2, 3), _away(2, 3)], {}),
    ("divide_no_nan zeros", lambda a: tf.math.divide_no_nan(
        a, tf.constant([[0.5, 0.0, -1.5], [2.0, 1.0, 0.0]], dtype=tf.float64)), [_u(2, 3)], {}),
    ("clip_by_norm", lambda x: tf.clip_by_norm(x, 1.0), [_u(3, 4)], {"order": 1}),
    ("clip_by_global_norm", lambda a, b: tf.clip_by_global_norm([a, None, b], 1.0),
     [_u(2, 3), _u(4)], {"order": 1}),
    ("global_norm", lambda a, b: tf.linalg.global_norm([a, b]), [_u(2, 3), _u(4)], {}),
    ("linalg.solve adjoint", lambda a, b: tf.linalg.solve(a, b, adjoint=True),
     [_u(3, 3) + 3 * np.eye(3), _u(3, 2)], {}),
    ("linalg.inv batched", lambda a: tf.linalg.inv(a), [_u(2, 3, 3) + 3 * np.eye(3)], {}),
    ("linalg.det batched", lambda a: tf.linalg.det(a), [_u(2, 3, 3) + 3 * np.eye(3)], {}),
    ("pow operator", lambda a, b: a ** b, [_u(2, 3, lo=0.5, hi=2), _u(3)], {}),
    ("einsum matmul", lambda a, b: einsum_ops.einsum("ij,jk->ik", a, b), [_u(2, 3), _u(3, 2)],
     {}),
    ("einsum trace", lambda a: einsum_ops.einsum("ii", a), [_u(3, 3)], {}),
    ("einsum broadcast", lambda a, b: einsum_ops.einsum("...ij,...j->...i", a, b),
     [_u(2, 1, 3, 4), _u(3, 4)], {}),
    ("einsum same operand", lambda a: einsum_ops.einsum("i,i->", a, a), [_u(4)], {}),
    ("conv2d valid", lambda x, w: conv_ops.conv2d(x, w, 1, "VALID"),
     [_u(2, 4, 4, 2), _u(3, 3, 2, 2)], {}),
    ("conv2d same strided", lambda x, w: conv_ops.conv2d(x, w, [1, 2, 2, 1], "SAME"),
     [_u(1, 5, 4, 2), _u(3, 2, 2, 3)], {}),
    ("conv2d dilated", lambda x, w: conv_ops.conv2d(x, w, 1, "SAME", dilations=2),
     [_u(1, 5, 5, 1), _u(2, 2, 1, 2)], {}),
    ("conv2d explicit NCHW", lambda x, w: conv_ops.conv2d(
        x, w, 1, [[0, 0], [0, 0], [1, 0], [0, 2]], data_format="NCHW"),
     [_u(1, 2, 3, 3), _u(2, 2, 2, 2)], {}),
    ("max_pool2d same", lambda x: conv_ops.max_pool2d(x, 2, 2, "SAME"), [_u(2, 5, 5, 2)],
     {"order": 1}),
    ("max_pool2d overlapping", lambda x: conv_ops.max_pool2d(x, 3, 1, "VALID"),
     [_u(1, 4, 5, 2)], {"order": 1}),
    ("avg_pool2d same", lambda x: conv_ops.avg_pool2d(x, [3, 2], [2, 2], "SAME"),
     [_u(2, 5, 5, 2)], {}),
    ("avg_pool2d valid", lambda x: conv_ops.avg_pool2d(x, 2, 2, "VALID"), [_u(1, 4, 4, 2)], {}),
    ("max_pool 1d", lambda x: conv_ops.max_pool(x, 2, 2, "VALID"), [_u(2, 6, 2)],
     {"order": 1}),
    ("gelu composite", lambda x: math_ops.gelu(x, approximate=True), [_u(3, 4)], {}),
]


@pytest.mark.parametrize("name,fn,inputs,options", COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_composite_gradients(name, fn, inputs, options):
    check_grads(fn, inputs, name=name, **options)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name,fn,shapes", [
    ("matmul", lambda a, b: tf.matmul(a, b), [(3, 4), (4, 2)]),
    ("tanh", lambda x: tf.tanh(x), [(3, 4)]),
    ("softmax CE", lambda y, x: tf.nn.softmax_cross_entropy_with_logits(y, x), [(2, 3), (2, 3)]),
    ("conv2d", lambda x, w: conv_ops.conv2d(x, w, 1, "SAME"), [(1, 4, 4, 2), (3, 3, 2, 2)]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_low_precision_gradients(dtype, name, fn, shapes):
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-1, 1, size=s).astype(dtype) for s in shapes]
    check_grads(fn, inputs, order=1, name=f"{name} {dtype}")


# --- the public names of API.md's "Ops" section ---------------------------------------------------

API_OPS = """add subtract multiply divide pow square sqrt rsqrt exp log log1p sin cos tanh abs sign
maximum minimum negative reciprocal identity matmul einsum tensordot transpose reshape squeeze
expand_dims concat stack unstack split tile pad gather boolean_mask where clip_by_value reduce_sum
reduce_mean reduce_max reduce_min reduce_prod reduce_logsumexp argmax argmin norm one_hot cumsum
math.sigmoid math.softplus math.log_sigmoid math.erf linalg.solve linalg.inv linalg.det
linalg.norm nn.relu nn.relu6 nn.leaky_relu nn.elu nn.gelu nn.sigmoid nn.tanh nn.softmax
nn.log_softmax nn.sparse_softmax_cross_entropy_with_logits nn.softmax_cross_entropy_with_logits
nn.sigmoid_cross_entropy_with_logits nn.dropout nn.conv2d nn.max_pool2d nn.avg_pool2d nn.moments
nn.batch_normalization clip_by_norm clip_by_global_norm global_norm""".split()


def _resolve(name):
    if "." in name:
        space, attr = name.split(".")
        return getattr(getattr(tf, space), attr, None)
    for space in (tf, tf.math, tf.linalg, tf.nn):
        fn = getattr(space, name, None)
        if fn is not None:
            return fn
    return None


def test_api_op_names_are_exported():
    missing = [name for name in API_OPS if not callable(_resolve(name))]
    assert not missing, f"API.md ops not exported by minitf: {missing}"


def test_variable_checker_catches_a_wrong_gradient():
    from minitf.testing import check_variable_grads
    v = tf.Variable(np.array([0.5, -1.25]))

    @tf.custom_gradient
    def cube(x):
        return x ** 3, lambda g: g * 3.0 * x * x * 1.001       # 0.1 % off

    check_variable_grads(lambda: tf.reduce_sum(v ** 3), [v])
    with pytest.raises(AssertionError, match="gradient of"):
        check_variable_grads(lambda: tf.reduce_sum(cube(v)), [v])
    np.testing.assert_array_equal(v.numpy(), [0.5, -1.25])    # restored
