"""tf.experimental.numpy: values against numpy, dtypes as TF 2.21's tnp gives them (obtained
by running TF 2.21 on the same inputs), NumPy methods on tensors, gradients, and the names."""
import numpy as np
import pytest

import minitf as tf
from minitf import experimental_numpy as _tnp_module

import minitf.experimental.numpy as tnp  # noqa: E402


def value(t):
    return tf.backend.to_numpy(t._value) if isinstance(t, tf.Tensor) else np.asarray(t)


def check(result, expected, dtype):
    assert result.dtype == dtype, (result.dtype, dtype)
    np.testing.assert_allclose(value(result), expected, rtol=1e-12, atol=1e-12)


def test_import_spellings_reach_one_module():
    from minitf.experimental import numpy as tnp2
    assert tnp2 is tnp is tf.experimental.numpy
    assert tnp.ndarray is tf.Tensor
    assert tnp.float32 is np.float32 and tnp.bool_ is np.bool_ and tnp.int_ is np.int64


# (expression, numpy's value, TF 2.21 tnp's result dtype)
CASES = [
    (lambda: tnp.array([1, 2]), [1, 2], "int64"),
    (lambda: tnp.asarray([1.0, 2]), [1.0, 2.0], "float64"),
    (lambda: tnp.ones(2), [1.0, 1.0], "float64"),
    (lambda: tnp.arange(3), [0, 1, 2], "int64"),
    (lambda: tnp.linspace(0, 1, 3), [0.0, 0.5, 1.0], "float64"),
    (lambda: tnp.eye(2), np.eye(2), "float64"),
    (lambda: tnp.mean(tf.constant([1, 2])), 1.5, "float64"),
    (lambda: tnp.sqrt(tf.constant([1, 4])), [1.0, 2.0], "float64"),
    (lambda: tnp.add(tf.constant([1, 2]), 1.5), [2.5, 3.5], "float64"),
    (lambda: tnp.add(tf.constant([1.0, 2.0]), 1.5), [2.5, 3.5], "float32"),
    (lambda: tnp.add(tf.constant([1.0, 2.0]), tnp.array([1, 2])), [2.0, 4.0], "float64"),
    (lambda: tnp.divide(tnp.array([1, 2]), 2), [0.5, 1.0], "float64"),
    (lambda: tnp.sum(tnp.array([True, False])), 1, "int64"),
    (lambda: tnp.prod(tf.constant([1, 2])), 2, "int64"),
    (lambda: tnp.var(tnp.array([1, 2])), 0.25, "float64"),
    (lambda: tnp.std(tf.constant([1.0, 2.0])), 0.5, "float32"),
    (lambda: tnp.full(2, 3), [3, 3], "int64"),
    (lambda: tnp.average(tnp.array([1, 2]), weights=[1, 3]), 1.75, "float64"),
    (lambda: tnp.round(tnp.array([1.25, 2.5]), 1), [1.2, 2.5], "float64"),
    (lambda: tnp.around(tnp.array([0.5, 1.5, 2.5])), [0.0, 2.0, 2.0], "float64"),
    (lambda: tnp.clip(tnp.array([1, 5]), 2, 3), [2, 3], "int64"),
    (lambda: tnp.count_nonzero(tnp.array([1, 0, 2])), 2, "int64"),
    (lambda: tnp.argmax(tnp.array([1, 3, 2])), 1, "int64"),
    (lambda: tnp.nonzero(tnp.array([1, 0, 2]))[0], [0, 2], "int64"),
    (lambda: tnp.cumsum(tf.constant([1, 2])), [1, 3], "int64"),
    (lambda: tnp.heaviside(tnp.array([-1.0, 0, 2]), 0.5), [0.0, 0.5, 1.0], "float64"),
    (lambda: tnp.fix(tnp.array([-1.5, 1.5])), [-1.0, 1.0], "float64"),
    (lambda: tnp.nanmean(tnp.array([1.0, np.nan, 3])), 2.0, "float64"),
    (lambda: tnp.ptp(tnp.array([1, 5, 3])), 4, "int64"),
    (lambda: tnp.polyval([1, 2, 3], 2), 11, "int64"),
    (lambda: tnp.sinc(tnp.array([0.0, 0.5])), np.sinc([0.0, 0.5]), "float64"),
    (lambda: tnp.select([tnp.array([True, False])], [tnp.array([1, 2])], 7), [1, 7], "int64"),
    (lambda: tnp.geomspace(1, 100, 3), [1.0, 10.0, 100.0], "float64"),
    (lambda: tnp.logspace(0, 2, 3), [1.0, 10.0, 100.0], "float64"),
    (lambda: tnp.tri(2), np.tri(2), "float64"),
    (lambda: tnp.vander(tnp.array([1, 2])), [[1, 1], [2, 1]], "int64"),
    (lambda: tnp.compress([True, False], tnp.array([1, 2])), [1], "int64"),
    (lambda: tnp.divmod(tnp.array([7]), 2)[0], [3], "int64"),
    (lambda: tnp.gcd(tnp.array([12]), 8), [4], "int64"),
    (lambda: tnp.matmul(tf.constant([[1]]), tnp.array([[1.0]])), [[1.0]], "float64"),
    (lambda: tnp.mod(tnp.array([-7]), 3), [2], "int64"),
    (lambda: tnp.floor_divide(tnp.array([-7]), 2), [-4], "int64"),
    (lambda: tnp.kron(tnp.array([1, 2]), tnp.array([1, 1])), [1, 1, 2, 2], "int64"),
    (lambda: tnp.cross(tnp.array([1, 0, 0]), tnp.array([0, 1, 0])), [0, 0, 1], "int64"),
    (lambda: tnp.take(tnp.array([1, 2, 3]), [2, 0, 7]), [3, 1, 3], "int64"),
    (lambda: tnp.diff(tnp.array([1, 4, 9])), [3, 5], "int64"),
    (lambda: tnp.trace(tnp.eye(2)), 2.0, "float64"),
    (lambda: tnp.logaddexp(tnp.array([0.0]), 0.0), [np.log(2.0)], "float64"),
    (lambda: tnp.nextafter(tnp.array([1.0]), 2.0), [np.nextafter(1.0, 2.0)], "float64"),
    (lambda: tnp.asarray(1.5), 1.5, "float64"),
    (lambda: tnp.dot(tnp.array([[1, 2], [3, 4]]), tnp.array([1, 1])), [3, 7], "int64"),
    (lambda: tnp.where(tnp.array([True, False]), 1, 2.5), [1.0, 2.5], "float64"),
    (lambda: tnp.diag_indices(2)[0], [0, 1], "int32"),
    (lambda: tnp.einsum("ij->j", tnp.array([[1, 2], [3, 4]])), [4, 6], "int64"),
    (lambda: tnp.sum(tnp.array([1, 2], dtype=tnp.int8)), 3, "int64"),
    (lambda: tnp.sum(tnp.array([1, 2], dtype=tnp.uint8)), 3, "uint64"),
    (lambda: tnp.sum(tnp.array([[1, 2, 3], [4, 5, 6]]), dtype=tnp.float32), 21.0, "float32"),
    (lambda: tnp.prod(tnp.array([True, False])), 0, "int64"),
    (lambda: tnp.arange(0, 1, 0.25), [0.0, 0.25, 0.5, 0.75], "float64"),
    (lambda: tnp.arange(5, 0, -2), [5, 3, 1], "int64"),
    (lambda: tnp.linspace(0.0, 1.0, 5, retstep=True)[1], 0.25, "float64"),
    (lambda: tnp.logspace(0.0, 3.0, 4, base=2.0), [1.0, 2.0, 4.0, 8.0], "float64"),
    (lambda: tnp.full_like(tnp.array([[1, 2, 3]]), 7.5), [[7, 7, 7]], "int64"),
    (lambda: tnp.eye(2, 3, k=1, dtype=tnp.int32), [[0, 1, 0], [0, 0, 1]], "int32"),
    (lambda: tnp.tri(3, 2, k=-1, dtype=tnp.int64), [[0, 0], [1, 0], [1, 1]], "int64"),
    (lambda: tnp.concatenate([tf.constant([1]), tf.constant([2.5])]), [1.0, 2.5], "float64"),
    (lambda: tnp.hstack([tnp.array([1, 2]), tnp.array([3.0])]), [1.0, 2.0, 3.0], "float64"),
    (lambda: tnp.split(tnp.arange(6), [1, 4])[1], [1, 2, 3], "int64"),
    (lambda: tnp.tile(tnp.array([1, 2]), (2, 2)), [[1, 2, 1, 2], [1, 2, 1, 2]], "int64"),
    (lambda: tnp.roll(tnp.array([[1, 2, 3], [4, 5, 6]]), 1, axis=1), [[3, 1, 2], [6, 4, 5]],
     "int64"),
    (lambda: tnp.rot90(tnp.array([[1, 2, 3], [4, 5, 6]])), [[3, 6], [2, 5], [1, 4]], "int64"),
    (lambda: tnp.take_along_axis(tnp.array([[1, 2, 3], [4, 5, 6]]), tnp.array([[0], [2]]),
                                 axis=1), [[1], [6]], "int64"),
    (lambda: tnp.where(tnp.array([True, False]), tnp.array([1, 2]), tnp.array([9.5, 8])),
     [1.0, 8.0], "float64"),
    (lambda: tnp.sort(tnp.array([[3, 1], [2, 0]]), axis=None), [0, 1, 2, 3], "int64"),
    (lambda: tnp.matmul(tnp.array([1, 2]), tnp.array([3, 4])), 11, "int64"),
    (lambda: tnp.dot(2, tnp.array([1, 2])), [2, 4], "int64"),
    (lambda: tnp.inner(tnp.array([[1, 2, 3], [4, 5, 6]]), tnp.array([1, 0, 1])), [4, 10],
     "int64"),
    (lambda: tnp.outer(tnp.array([1, 2]), tnp.array([1.0, 3.0])), [[1.0, 3.0], [2.0, 6.0]],
     "float64"),
    (lambda: tnp.vdot(tnp.array([[1, 2, 3], [4, 5, 6]]), tnp.array([[1, 2, 3], [4, 5, 6]])), 91,
     "int64"),
    (lambda: tnp.cross(tnp.array([1, 2]), tnp.array([3, 4])), -2, "int64"),
    (lambda: tnp.einsum("i,i->", tnp.array([1, 2]), tnp.array([0.5, 1.0])), 2.5, "float64"),
    (lambda: tnp.lcm(tnp.array([4, 6]), 10), [20, 30], "int64"),
    (lambda: tnp.bitwise_not(tnp.array([1, -1])), [-2, 0], "int64"),
    (lambda: tnp.subtract(tf.constant([1], tf.int8), tf.constant([1], tf.uint8)), [0], "int16"),
    (lambda: tnp.mod(tnp.array([-7.5]), 2.0), [0.5], "float64"),
    (lambda: tnp.floor_divide(tnp.array([7.5]), -2), [-4.0], "float64"),
    (lambda: tnp.clip(tnp.array([1.0, 5.0, 3.0]), [2, 2, 2], 4), [2.0, 4.0, 3.0], "float64"),
    (lambda: tnp.clip(tnp.array([1, 5]), None, 3), [1, 3], "int64"),
    (lambda: tnp.log2(tnp.array([8])), [3.0], "float64"),
    (lambda: tnp.hypot(tnp.array([3]), 4), [5.0], "float64"),
    (lambda: tnp.around(tnp.array([1234]), -2), [1200], "int64"),
    (lambda: tnp.polyval(tnp.array([1.0, 0.0, -1.0]), tnp.array([2, 3])), [3.0, 8.0], "float64"),
    (lambda: tnp.select([tnp.array([True, False, False]), tnp.array([True, True, False])],
                        [tnp.array([1, 2, 3]), tnp.array([4.0, 5, 6])]), [1.0, 5.0, 0.0],
     "float64"),
    (lambda: tnp.geomspace(-1, -1000, 4), [-1.0, -10.0, -100.0, -1000.0], "float64"),
    (lambda: tnp.asarray([tf.constant(1), 2.5]), [1.0, 2.5], "float64"),
    (lambda: tnp.array([1, 2], ndmin=3), [[[1, 2]]], "int64"),
    (lambda: tnp.array([1.7, 2], dtype=tnp.int32), [1, 2], "int32"),
    (lambda: tnp.nanmean(tnp.array([[1.0, np.nan], [3.0, 4.0]]), axis=1), [1.0, 3.5], "float64"),
    (lambda: tnp.average(tnp.array([[1, 2, 3], [4, 5, 6]]), axis=0, returned=True)[1],
     [2.0, 2.0, 2.0], "float64"),
    (lambda: tnp.fabs(tnp.array([-3])), [3], "int64"),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_values_and_dtypes_match_tf(index):
    make, expected, dtype = CASES[index]
    check(make(), expected, dtype)


def test_more_functions_against_numpy():
    x = np.array([[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]])
    t = tnp.asarray(x)
    for name in ("sin", "exp", "tanh", "arctan", "cbrt", "exp2", "rad2deg", "abs",
                 "square", "sign", "floor", "ceil", "signbit", "isfinite"):
        np.testing.assert_allclose(value(getattr(tnp, name)(t)), getattr(np, name)(x),
                                   rtol=1e-12, err_msg=name)
    for name in ("sort", "argsort", "cumsum", "cumprod", "flip", "ravel", "transpose"):
        np.testing.assert_allclose(value(getattr(tnp, name)(t)), getattr(np, name)(x),
                                   err_msg=name)
    np.testing.assert_allclose(value(tnp.tensordot(t, t, axes=[[1], [1]])),
                               np.tensordot(x, x, axes=[[1], [1]]))
    np.testing.assert_allclose(value(tnp.outer(t[0], t[1])), np.outer(x[0], x[1]))
    np.testing.assert_allclose(value(tnp.var(t, axis=1, ddof=1)), np.var(x, axis=1, ddof=1))
    np.testing.assert_allclose(value(tnp.pad(t, 1, "reflect")), np.pad(x, 1, "reflect"))
    np.testing.assert_allclose(value(tnp.atleast_3d(t[0])), np.atleast_3d(x[0]))
    np.testing.assert_allclose(value(tnp.moveaxis(t, 0, 1)), np.moveaxis(x, 0, 1))
    assert tnp.shape(t) == (2, 3) and tnp.ndim(t) == 2 and tnp.size(t) == 6
    assert tnp.result_type(tf.constant([1.0]), 1.0) == tf.float32
    assert tnp.promote_types("int32", "float32") == np.float64
    assert tnp.finfo(tnp.float32).eps == np.finfo(np.float32).eps
    assert not tnp.iscomplexobj(t) and tnp.isrealobj(t)


def test_random_functions():
    tnp.random.seed(3)
    a = tnp.random.rand(2, 3)
    tnp.random.seed(3)
    b = tnp.random.rand(2, 3)
    np.testing.assert_array_equal(value(a), value(b))
    assert a.dtype == tf.float64 and tuple(a.shape) == (2, 3)
    assert 0 <= value(a).min() and value(a).max() < 1
    ints = tnp.random.randint(2, 5, size=(100,))
    assert ints.dtype == tf.int64 and set(value(ints).tolist()) <= {2, 3, 4}
    assert tnp.random.randn(4).dtype == tf.float64
    assert tuple(tnp.random.standard_normal(size=(2, 2)).shape) == (2, 2)
    u = value(tnp.random.uniform(-2.0, -1.0, size=50))
    assert u.min() >= -2.0 and u.max() < -1.0
    assert tnp.random.poisson(2.0, size=3).dtype == tf.int64
    with pytest.raises(ValueError, match="randint: low must be less than high, got low=5"):
        tnp.random.randint(5, 2)


def test_errors_name_function_and_value():
    with pytest.raises(ValueError, match=r"reshape: only order='C' is supported, got order='F'"):
        tnp.reshape(tnp.ones(4), [2, 2], order="F")
    with pytest.raises(ValueError, match=r"pad: mode='wrap' is not supported"):
        tnp.pad(tnp.ones(2), 1, "wrap")
    with pytest.raises(ValueError, match="arange: step must be non-zero, got 0"):
        tnp.arange(0, 3, 0)
    with pytest.raises(TypeError, match="gcd: expected integer operands, got float64"):
        tnp.gcd(tnp.array([1.5]), 2)
    with pytest.raises(ValueError, match="dtype_conversion_mode='fast'"):
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="fast")


_MISSING = object()


@pytest.fixture
def numpy_behavior():
    """Enable NumPy behavior for one test, then give tf.Tensor back its own attributes."""
    names = list(_tnp_module.NUMPY_METHODS) + list(_tnp_module._PROMOTING_OPERATORS)
    saved = {name: vars(tf.Tensor).get(name, _MISSING) for name in names}
    try:
        yield
    finally:
        for name, attr in saved.items():
            if attr is _MISSING:
                delattr(tf.Tensor, name)
            else:
                setattr(tf.Tensor, name, attr)


def test_numpy_behavior_operators_promote_like_tf(numpy_behavior):
    tnp.experimental_enable_numpy_behavior()
    # dtypes as TF 2.21 gives them after experimental_enable_numpy_behavior()
    check(tf.ones([], tf.int32) + tf.ones([], tf.float32), 2.0, "float64")
    check(tf.constant([1], tf.int32) + 1.5, [2.5], "float64")
    check(tf.constant([1.0], tf.float32) + 1.5, [2.5], "float32")
    check(tf.constant([1], tf.int32) * 2, [2], "int32")
    check(1.5 * tf.constant([1], tf.int64), [1.5], "float64")
    check(tf.constant([4], tf.int32) ** 0.5, [2.0], "float64")
    check(tf.constant([4], tf.int32) - np.float32(1), [3.0], "float64")
    check(tf.constant([[1.0]], tf.float32) @ tf.constant([[2.0]], tf.float64), [[2.0]],
          "float64")
    check(tf.constant([3], tf.int32) & tf.constant([1], tf.int64), [1], "int64")
    check(tf.constant([1], tf.int32) < tf.constant([2.0], tf.float32), [True], "bool")
    x = tf.constant([1.5, 2.0], tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tnp.sum((x * tf.constant([2, 3], tf.int32)) ** 2)
    assert y.dtype == tf.float64
    np.testing.assert_allclose(value(tape.gradient(y, x)), [2 * 1.5 * 4, 2 * 2.0 * 9])


def test_numpy_behavior_methods_and_prefer_float32(numpy_behavior):
    tnp.experimental_enable_numpy_behavior(prefer_float32=True)
    try:
        x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        np.testing.assert_array_equal(value(x.T), [[1, 4], [2, 5], [3, 6]])
        assert tuple(x.reshape(3, 2).shape) == (3, 2) and tuple(x.reshape((6,)).shape) == (6,)
        assert x.astype(tnp.int32).dtype == tf.int32
        np.testing.assert_array_equal(value(x.ravel()), [1, 2, 3, 4, 5, 6])
        np.testing.assert_array_equal(value(x.flatten()), [1, 2, 3, 4, 5, 6])
        np.testing.assert_array_equal(value(x.clip(2, 5)), [[2, 2, 3], [4, 5, 5]])
        np.testing.assert_array_equal(value(x.transpose(1, 0)), value(x.T))
        assert float(value(x.max())) == 6.0 and float(value(x.min())) == 1.0
        np.testing.assert_allclose(value(x.mean(axis=0)), [2.5, 3.5, 4.5])
        assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] and x.data is x
        assert value(round(tf.constant(2.5))) == 2.0
        # prefer_float32: Python floats become float32 (TF 2.21 gives these dtypes)
        assert tnp.array([1.0, 2.0]).dtype == tf.float32
        assert tnp.linspace(0, 1, 3).dtype == tf.float32
        assert tnp.ones(2).dtype == tf.float64
        assert tnp.mean(tnp.array([1, 2])).dtype == tf.float64
    finally:
        tnp.experimental_enable_numpy_behavior(prefer_float32=False)
    assert tnp.array([1.0]).dtype == tf.float64


def test_tensor_has_no_numpy_methods_until_enabled():
    assert not hasattr(tf.constant([1.0]), "astype")
    with pytest.raises(Exception, match="different dtypes"):
        tf.ones([], tf.int32) + tf.ones([], tf.float32)


def _central_difference(fn, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (float(value(fn(tf.constant(up)))) - float(value(fn(tf.constant(down))))) / (
            2 * eps)
    return grad


@pytest.mark.parametrize("fn", [
    lambda x: tnp.sum(tnp.sin(x) * tnp.exp2(x)),
    lambda x: tnp.mean(tnp.logaddexp(x, tnp.flip(x))),
    lambda x: tnp.std(tnp.matmul(tnp.reshape(x, [2, 2]), tnp.transpose(tnp.reshape(x, [2, 2])))),
    lambda x: tnp.sum(tnp.cumprod(tnp.clip(x, -0.5, 1.0))),
    lambda x: tnp.average(tnp.hypot(x, 1.0), weights=[1.0, 2.0, 3.0, 4.0]),
])
def test_gradients_match_central_differences(fn):
    x = np.array([0.3, -0.7, 1.1, 0.4])
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = fn(xt)
    np.testing.assert_allclose(value(tape.gradient(y, xt)), _central_difference(fn, x),
                               rtol=1e-6, atol=1e-8)


# dir(tf.experimental.numpy) in TF 2.21, public names
TF_NAMES = """abs absolute add all allclose amax amin angle any append arange arccos arccosh arcsin
arcsinh arctan arctan2 arctanh argmax argmin argsort around array array_equal asanyarray asarray
ascontiguousarray atleast_1d atleast_2d atleast_3d average bitwise_and bitwise_not bitwise_or
bitwise_xor bool_ broadcast_arrays broadcast_to cbrt ceil clip complex128 complex64 complex_
compress concatenate conj conjugate copy cos cosh count_nonzero cross cumprod cumsum deg2rad diag
diag_indices diagflat diagonal diff divide divmod dot dsplit dstack e einsum empty empty_like
equal exp exp2 expand_dims experimental_enable_numpy_behavior expm1 eye fabs finfo fix flatten
flip fliplr flipud float16 float32 float64 float_ float_power floor floor_divide full full_like
gcd geomspace greater greater_equal heaviside hsplit hstack hypot identity iinfo imag inexact
inf inner int16 int32 int64 int8 int_ isclose iscomplex iscomplexobj isfinite isinf isnan
isneginf isposinf isreal isrealobj isscalar issubdtype ix_ kron lcm less less_equal linspace log
log10 log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logspace
matmul max maximum mean meshgrid min minimum mod moveaxis multiply nanmean nanprod nansum ndarray
ndim negative newaxis nextafter nonzero not_equal object_ ones ones_like outer pad pi polyval
positive power prod promote_types ptp rad2deg random ravel real reciprocal remainder repeat
reshape result_type roll rot90 round select shape sign signbit sin sinc sinh size sort split
sqrt square squeeze stack std string_ subtract sum swapaxes take take_along_axis tan tanh
tensordot tile trace transpose tri tril triu true_divide uint16 uint32 uint64 uint8 unicode_
vander var vdot vsplit vstack where zeros zeros_like""".split()
TF_RANDOM_NAMES = "poisson rand randint randn random seed standard_normal uniform".split()
UNSUPPORTED = {"complex64", "complex128", "complex_"}   # minitf has no complex dtypes


def test_every_tf_name_is_served_or_listed_unsupported():
    missing = [n for n in TF_NAMES if not hasattr(tnp, n) and n not in UNSUPPORTED]
    assert missing == []
    assert [n for n in UNSUPPORTED if hasattr(tnp, n)] == []
    assert [n for n in TF_RANDOM_NAMES if not hasattr(tnp.random, n)] == []
