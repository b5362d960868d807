"""keras.ops.slogdet / vectorize / rearrange: values against Keras 3.15.1 (run separately,
pasted), numpy.vectorize's and the Keras docstrings' examples; gradients against central
differences in float64."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras

ops = keras.ops


def _value(t):
    return np.asarray(t.numpy())


def _central_difference(f, x, eps=1e-6):
    """d f(x) / dx of a scalar function of a float64 array, by central differences."""
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def _tape_gradient(f, x):
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = f(v)
    return _value(tape.gradient(y, v))


MATRIX = np.array([[2., 1., 0.], [1., 3., 1.], [0., 1., 4.]])


# --- slogdet ---------------------------------------------------------------------------------

def test_slogdet_values():
    # Keras 3.15.1 (TensorFlow backend): sign [1, -1], logabsdet 2.8903717578961645 (det 18)
    sign, logabsdet = ops.slogdet(np.stack([MATRIX, MATRIX[[1, 0, 2]]]))
    np.testing.assert_array_equal(_value(sign), [1.0, -1.0])
    np.testing.assert_allclose(_value(logabsdet), [2.8903717578961645] * 2, rtol=1e-14)
    sign, logabsdet = ops.slogdet(np.array([[1., 2.], [3., 4.]]))     # det -2
    assert float(sign) == -1.0
    np.testing.assert_allclose(float(logabsdet), 0.6931471805599455, rtol=1e-14)
    assert ops.numpy.slogdet is ops.slogdet


def test_slogdet_integer_input_is_float32():
    sign, logabsdet = ops.slogdet(np.array([[1, 2], [3, 4]]))
    assert sign.dtype == tf.float32 and logabsdet.dtype == tf.float32
    np.testing.assert_allclose(float(logabsdet), np.log(2.0), rtol=1e-6)


def test_slogdet_gradient():
    x = np.stack([MATRIX, MATRIX[[1, 0, 2]] + 0.25])
    weights = np.array([1.0, -2.0])
    grad = _tape_gradient(lambda v: tf.reduce_sum(ops.slogdet(v)[1] * weights), x)
    numeric = _central_difference(
        lambda a: float(np.sum(np.linalg.slogdet(a)[1] * weights)), x)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
    # d log|det A| / dA = inverse(A) transposed
    np.testing.assert_allclose(grad[0], np.linalg.inv(MATRIX).T, rtol=1e-12)


def test_slogdet_errors_and_symbolic():
    with pytest.raises(ValueError, match=r"slogdet: input matrix must be square, got shape "
                                         r"\(2, 3\)"):
        ops.slogdet(np.ones((2, 3)))
    sign, logabsdet = ops.slogdet(keras.Input((3, 3)))
    assert tuple(logabsdet.shape) == (None,) and tuple(sign.shape) == (None,)


# --- rearrange -------------------------------------------------------------------------------

X = np.arange(24).reshape(2, 3, 4)

# Keras 3.15.1's keras.ops.rearrange(X, pattern, **lengths): (shape, flattened values)
REARRANGED = [
    ("a b c -> c a b", {}, (4, 2, 3),
     [0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23]),
    ("a b c -> a (b c)", {}, (2, 12), list(range(24))),
    ("a b c -> (c a) b", {}, (8, 3),
     [0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23]),
    ("a (h w) c -> a h w c", {"h": 1}, (2, 1, 3, 4), list(range(24))),
    ("a b (c1 c2) -> (a c2) b c1", {"c2": 2}, (4, 3, 2),
     [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11, 12, 14, 16, 18, 20, 22, 13, 15, 17, 19, 21, 23]),
]


@pytest.mark.parametrize("pattern, lengths, shape, values", REARRANGED)
def test_rearrange_values(pattern, lengths, shape, values):
    out = ops.rearrange(X, pattern, **lengths)
    assert tuple(out.shape) == shape
    assert _value(out).ravel().tolist() == values


# the examples of Keras 3.15's rearrange docstring
@pytest.mark.parametrize("pattern, lengths, shape", [
    ("b h w c -> b c h w", {}, (32, 3, 30, 40)),
    ("b h w c -> (b h) w c", {}, (960, 40, 3)),
    ("b h w c -> h (b w) c", {}, (30, 1280, 3)),
    ("b h w c -> b (c h w)", {}, (32, 3600)),
    ("b (h1 h) (w1 w) c -> (b h1 w1) h w c", {"h1": 2, "w1": 2}, (128, 15, 20, 3)),
    ("b (h h1) (w w1) c -> b h w (c h1 w1)", {"h1": 2, "w1": 2}, (32, 15, 20, 12)),
])
def test_rearrange_docstring_shapes(pattern, lengths, shape):
    images = np.random.default_rng(0).random((32, 30, 40, 3)).astype(np.float32)
    assert tuple(ops.rearrange(images, pattern, **lengths).shape) == shape


def test_rearrange_space_to_depth_values():
    # "b (h h1) (w w1) c -> b h w (c h1 w1)" picks out each 2x2 block, channel first
    x = np.arange(2 * 4 * 4 * 3).reshape(2, 4, 4, 3)
    out = _value(ops.rearrange(x, "b (h h1) (w w1) c -> b h w (c h1 w1)", h1=2, w1=2))
    expected = x.reshape(2, 2, 2, 2, 2, 3).transpose(0, 1, 3, 5, 2, 4).reshape(2, 2, 2, 12)
    np.testing.assert_array_equal(out, expected)
    assert out[0, 0, 0].tolist() == [0, 3, 12, 15, 1, 4, 13, 16, 2, 5, 14, 17]


def test_rearrange_gradient_and_symbolic():
    x = np.random.default_rng(1).normal(size=(2, 6, 3))
    weights = np.random.default_rng(2).normal(size=(3, 4, 3))
    pattern = "b (h h1) c -> c (b h) h1"

    def f(v):
        return tf.reduce_sum(ops.rearrange(v, pattern, h1=3) * weights)
    numeric = _central_difference(
        lambda a: float(np.sum(a.reshape(2, 2, 3, 3).transpose(3, 0, 1, 2).reshape(3, 4, 3)
                               * weights)), x)
    np.testing.assert_allclose(_tape_gradient(f, x), numeric, rtol=1e-6, atol=1e-8)
    inputs = keras.Input((6, 3))
    model = keras.Model(inputs, ops.rearrange(inputs, "b (h w) c -> b h (w c)", w=2))
    assert tuple(model.output.shape) == (None, 3, 6)
    np.testing.assert_array_equal(_value(model(X[:, :, :3].reshape(1, 6, 3).astype("float32"))),
                                  X[:, :, :3].reshape(1, 3, 6))


@pytest.mark.parametrize("pattern, lengths, message", [
    ("a b c", {}, r"rearrange: pattern must have the form 'inputs -> outputs', got 'a b c'"),
    ("a b -> b a", {}, r"names 2 input axes, but the tensor has rank 3 \(shape \(2, 3, 4\)\)"),
    ("a ... -> a ...", {}, r"uses an ellipsis \('...'\), which is not supported"),
    ("a b c -> a b", {}, r"must be the same on both sides; only on one: \['c'\]"),
    ("a b c -> a b c b", {}, r"repeats the output axes \['b'\]"),
    ("a b (c d) -> a b c d", {"c": 3}, r"dimension of size 4 cannot be split into \['c', 'd'\]"),
    ("a b (c d) -> a b c d", {}, r"the sizes of \['c', 'd'\] .* are not known"),
    ("a b c -> c b a", {"z": 2}, r"axes_lengths names \['z'\], which are not input axes"),
    ("a b (c d) -> a b c d", {"c": 3, "d": 2}, r"size 4 does not match \['c', 'd'\]"),
    ("a b 1 -> a b", {}, r"has the axis '1'; axes are identifiers"),
])
def test_rearrange_errors(pattern, lengths, message):
    with pytest.raises(ValueError, match=message):
        ops.rearrange(X, pattern, **lengths)


# --- vectorize -------------------------------------------------------------------------------

def test_vectorize_docstring_example():
    # Keras 3.15's vectorize docstring: vfunc([1, 2, 3, 4], 2) is [3, 4, 5, 6]
    vfunc = ops.vectorize(lambda a, b: a + b)
    assert _value(vfunc([1, 2, 3, 4], 2)).tolist() == [3, 4, 5, 6]
    assert ops.numpy.vectorize is ops.vectorize


def test_vectorize_broadcasts_scalars():
    a, b = np.array([[0.5], [1.0], [2.0]]), np.array([1.0, -1.0, 0.5, 3.0])
    calls = []

    def f(x, y):
        calls.append(tuple(x.shape) + tuple(y.shape))
        return x * y + tf.sin(x)
    out = ops.vectorize(f)(a, b)
    # numpy.vectorize(lambda a, b: a * b + np.sin(a))(a, b)
    expected = [[0.979425538604203, -0.02057446139579699, 0.729425538604203, 1.979425538604203],
                [1.8414709848078965, -0.1585290151921035, 1.3414709848078965,
                 3.8414709848078967],
                [2.909297426825682, -1.0907025731743183, 1.9092974268256817, 6.909297426825682]]
    np.testing.assert_allclose(_value(out), expected, rtol=1e-14)
    assert calls == [()] * 12          # called on scalars, once per element


def test_vectorize_signature_matrix_vector():
    A, v = np.arange(12.).reshape(2, 2, 3), np.array([1., 0.5, -1.])
    matvec = ops.vectorize(lambda m, x: tf.reduce_sum(m * x, axis=-1),
                           signature="(m,n),(n)->(m)")
    # numpy.vectorize(lambda A, v: A @ v, signature="(m,n),(n)->(m)")(A, v)
    np.testing.assert_array_equal(_value(matvec(A, v)), [[-1.5, 0.0], [1.5, 3.0]])


def test_vectorize_several_outputs():
    x = np.array([[1., 4., 2.], [3., -1., 0.]])
    f = ops.vectorize(lambda r: (tf.reduce_sum(r), tf.reduce_max(r)), signature="(n)->(),()")
    total, peak = f(x)
    # numpy.vectorize(lambda r: (r.sum(), r.max()), signature="(n)->(),()")(x)
    assert _value(total).tolist() == [7.0, 2.0] and _value(peak).tolist() == [4.0, 3.0]


def test_vectorize_excluded_and_none():
    power = ops.vectorize(lambda x, p: x ** p, excluded={1})
    seen = []

    def f(x, scale=None, offset=0.0):
        seen.append((type(scale).__name__, offset))
        return x * 2.0 + offset
    assert _value(power(np.array([1., 2., 3.]), 2)).tolist() == [1.0, 4.0, 9.0]
    out = ops.vectorize(f, excluded={"offset"})(np.array([1., 2.]), None, offset=0.5)
    assert _value(out).tolist() == [2.5, 4.5] and seen == [("NoneType", 0.5)] * 2


def test_vectorize_gradient():
    a = np.array([[0.3, -1.2], [0.7, 2.0]])
    b = np.array([0.5, 1.5])

    def g(x, y):
        return tf.sin(x) * y * y + x
    grad = _tape_gradient(lambda v: tf.reduce_sum(ops.vectorize(g)(v, b)), a)
    numeric = _central_difference(lambda x: float(np.sum(np.sin(x) * b * b + x)), a)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
    rows = ops.vectorize(lambda r: tf.reduce_sum(r * r) * r[0], signature="(n)->()")
    grad = _tape_gradient(lambda v: tf.reduce_sum(rows(v)), a)
    numeric = _central_difference(lambda x: float(np.sum(np.sum(x * x, 1) * x[:, 0])), a)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_vectorize_in_functional_model():
    inputs = keras.Input((3,))
    model = keras.Model(inputs, ops.vectorize(lambda t: t * t + 1.0)(inputs))
    np.testing.assert_allclose(_value(model(np.array([[1., 2., 3.]], np.float32))),
                               [[2.0, 5.0, 10.0]])


def test_vectorize_errors():
    with pytest.raises(ValueError, match=r"vectorize: pyfunc must be callable, got 3"):
        ops.vectorize(3)
    with pytest.raises(ValueError, match=r"signature='\(n->\(\)' is not a generalized ufunc"):
        ops.vectorize(abs, signature="(n->()")
    with pytest.raises(TypeError, match=r"signature='\(n\)->\(\)' takes 1 vectorized "
                                        r"argument\(s\), got 2"):
        ops.vectorize(lambda a, b: a, signature="(n)->()")(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match=r"inconsistent size for core dimension 'n': 3 in "
                                         r"argument 1, 2 elsewhere"):
        ops.vectorize(lambda a, b: a[0], signature="(n),(n)->()")(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"output 0 of pyfunc has shape \(2,\), but its core "
                                         r"dimensions are \(\).*must return scalars"):
        ops.vectorize(lambda a: tf.stack([a, a]))(np.ones(3))
    with pytest.raises(ValueError, match=r"loop shapes \[\(2,\), \(3,\)\] do not broadcast"):
        ops.vectorize(lambda a, b: a + b)(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"argument 0 has shape \(\), with fewer dimensions "
                                         r"than its core dimensions \('n',\)"):
        ops.vectorize(lambda r: r[0], signature="(n)->()")(1.0)


def test_complex_views_polar_and_parts():
    pairs = np.array([[1.0, 2.0], [3.0, -4.0]], np.float32)
    z = keras.ops.view_as_complex(pairs)
    assert z.dtype == tf.complex64
    np.testing.assert_allclose(z.numpy(), [1 + 2j, 3 - 4j])
    np.testing.assert_array_equal(keras.ops.view_as_real(z).numpy(), pairs)
    assert keras.ops.math.view_as_complex is keras.ops.view_as_complex
    # Keras's docstring example value: polar(2, 0.5)
    np.testing.assert_allclose(keras.ops.polar(np.array([2.0]), np.array([0.5])).numpy(),
                               [2 * np.exp(0.5j)], rtol=1e-12)
    np.testing.assert_allclose(keras.ops.real(z).numpy(), [1, 3])
    np.testing.assert_allclose(keras.ops.imag(z).numpy(), [2, -4])
    np.testing.assert_allclose(keras.ops.conj(z).numpy(), [1 - 2j, 3 + 4j])
    np.testing.assert_allclose(keras.ops.angle(z).numpy(), np.angle([1 + 2j, 3 - 4j]),
                               rtol=1e-6)
    assert keras.ops.isreal(z).numpy().tolist() == [False, False]
    with pytest.raises(ValueError, match=r"view_as_complex: expected a float tensor whose "
                                         r"last dimension is 2"):
        keras.ops.view_as_complex(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="view_as_real: expected a complex tensor"):
        keras.ops.view_as_real(pairs)
