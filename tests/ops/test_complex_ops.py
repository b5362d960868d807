"""Complex dtypes and ops: complex64/complex128 tensors, tf.complex, tf.math.real/imag/conj/
angle/abs, casts, arithmetic, and gradients with TF's convention (for a real loss L and
z = x + iy, tape.gradient(L, z) is dL/dx + i dL/dy)."""
import numpy as np
import pytest

import minitf as tf


# Expected values computed with TensorFlow 2.21 (same expressions, complex128/float64):
# (real parts, imaginary parts) for complex results.
G_ABS = ([0.4472136, 0.9486833], [0.8944272, -0.3162278])
G_REAL = ([1.0, 1.0], [0.0, 0.0])
G_IMAG = ([0.0, 0.0], [1.0, 1.0])
G_ANGLE = ([-0.4, 0.1], [0.2, 0.3])
G_CONJ_MUL = ([1.0, 2.1213203], [2.0, -0.7071068])
G_EXP_MUL = ([3.812249, -22.9505312], [-4.7341354, 38.6059204])
G_DIV_SUB = ([-0.125, 0.1314879], [0.25, -0.0034602])
G_SQUARE_MEAN = ([-1.7392527, 1.7392527], [-1.1067972, -2.0554805])
G_FFT = ([0.4154423, 1.5248427], [1.0745859, -0.5895147])
G_MATMUL = ([[11.7359989, 4.4276145], [30.9378776, -29.4719631]],
            [[36.1719342, -34.3541436], [-13.4823616, -0.2787261]])
G_COMPLEX_R = [1.6, 2.2]
G_COMPLEX_I = [1.8, -0.6]
G_CONJ = ([[2.6, -0.4, 6.0], [1.4, -0.8, 2.2]], [[-0.8, 2.2, 0.1], [-1.8, 3.2, 0.4]])
G_GATHER = ([[0.6, -2.4, 4.0], [2.8, -1.6, 4.4]], [[0.8, -2.2, -0.1], [3.6, -6.4, -0.8]])
G1_SECOND = ([20.0, -2.5], [40.0, 5.0])
G2_SECOND = ([2400.0, -75.0], [4800.0, 150.0])
MEAN = (2.0, 0.5)
ANGLE_REAL = [3.1415927410125732, 0.0]
EXP = ([-1.1312044, 10.8522619], [2.4717267, -16.9013965])
SQRT = ([2.0, 0.0], [1.0, 1.0])
MATMUL = ([[-1.91, -2.4], [1.0, 3.0]], [[1.4, -3.7], [-1.7, 2.0]])


def _c(pair):
    return np.asarray(pair[0]) + 1j * np.asarray(pair[1])


def _close(actual, expected, atol=1e-6):
    expected = _c(expected) if isinstance(expected, tuple) else np.asarray(expected)
    np.testing.assert_allclose(np.asarray(actual.numpy()), expected, rtol=1e-6, atol=atol)


Z = np.array([1 + 2j, 3 - 1j])


def test_dtype_objects():
    assert tf.complex64.name == "complex64" and tf.dtypes.complex128 is tf.complex128
    assert tf.complex64.is_complex and not tf.complex64.is_floating
    assert not tf.float32.is_complex
    assert tf.complex64.real_dtype is tf.float32 and tf.complex128.real_dtype is tf.float64
    assert tf.float32.real_dtype is tf.float32
    assert tf.as_dtype("complex64") is tf.complex64 and tf.as_dtype(np.complex128) is tf.complex128
    assert tf.dtypes.real_dtype("complex128") is tf.float64
    assert tf.dtypes.is_complex(np.dtype("complex64")) and not tf.dtypes.is_complex(np.float32)
    assert tf.complex64.size == 8 and repr(tf.complex128) == "tf.complex128"
    with pytest.raises(TypeError, match="Cannot find maximum value of .*complex64"):
        tf.complex64.max


def test_constants_variables_and_printing():
    x = tf.constant(Z)
    assert x.dtype is tf.complex128      # Python complex numbers give complex128, as in TF
    assert tf.constant(1 + 2j).dtype is tf.complex128
    assert tf.constant([1, 2], tf.complex64).numpy().tolist() == [1 + 0j, 2 + 0j]
    assert tf.constant([1.5], tf.complex64).dtype is tf.complex64
    # TF's repr: tf.Tensor([1.+2.j 3.-1.j], shape=(2,), dtype=complex128)
    assert str(x) == "tf.Tensor([1.+2.j 3.-1.j], shape=(2,), dtype=complex128)"
    v = tf.Variable(x)
    assert repr(v) == ("<tf.Variable 'Variable:0' shape=(2,) dtype=complex128, "
                       "numpy=array([1.+2.j, 3.-1.j])>")
    v.assign(v * 2)
    assert v.numpy().tolist() == [2 + 4j, 6 - 2j]
    assert tf.zeros((2,), tf.complex64).numpy().tolist() == [0j, 0j]
    with pytest.raises(TypeError, match="cannot convert .*1j.* to a tensor of dtype float32"):
        tf.constant([1j, 2], tf.float32)


def test_complex_real_imag_conj_angle_abs():
    c = tf.complex(tf.constant([1.0, 3.0]), tf.constant([2.0, -1.0]))
    assert c.dtype is tf.complex64 and c.numpy().tolist() == [1 + 2j, 3 - 1j]
    assert tf.complex(np.float64(1.0), np.float64(2.0)).dtype is tf.complex128
    x = tf.constant(Z)
    assert tf.math.real(x).numpy().tolist() == [1.0, 3.0] and tf.math.real(x).dtype is tf.float64
    assert tf.math.imag(x).numpy().tolist() == [2.0, -1.0]
    assert tf.math.conj(x).numpy().tolist() == [1 - 2j, 3 + 1j]
    assert tf.math.conj(x).dtype is tf.complex128
    np.testing.assert_allclose(tf.math.angle(x).numpy(), [1.10714872, -0.32175055])
    np.testing.assert_allclose(tf.abs(x).numpy(), [5 ** 0.5, 10 ** 0.5])
    assert tf.math.abs(x).dtype is tf.float64
    real = tf.constant([-1.0, 2.0])
    assert tf.math.real(real) is real and tf.math.conj(real) is real
    assert tf.math.imag(real).numpy().tolist() == [0.0, 0.0]
    _close(tf.math.angle(real), ANGLE_REAL)
    with pytest.raises(TypeError, match="complex: real and imag must have the same dtype, got "
                                        "float32 and float64"):
        tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64))
    with pytest.raises(TypeError, match="complex: expected float32 or float64 parts, got int32"):
        tf.complex(1, 2)


def test_casts():
    x = tf.constant([1.5 + 2j, -3.25 - 1j])
    assert tf.cast(x, tf.float32).numpy().tolist() == [1.5, -3.25]   # TF keeps the real part
    assert tf.cast(x, tf.int32).numpy().tolist() == [1, -3]
    assert tf.cast(x, tf.complex64).dtype is tf.complex64
    y = tf.cast(tf.constant([1.0, 2.0]), tf.complex64)
    assert y.dtype is tf.complex64 and y.numpy().tolist() == [1 + 0j, 2 + 0j]


def test_arithmetic_and_array_ops():
    x = tf.constant(Z)
    assert (x + 1).numpy().tolist() == [2 + 2j, 4 - 1j]
    assert (x * x).numpy().tolist() == [-3 + 4j, 8 - 6j]
    assert (x - 1j).numpy().tolist() == [1 + 1j, 3 - 2j]
    assert (x / x).numpy().tolist() == [1 + 0j, 1 + 0j]
    assert (2j * x).numpy().tolist() == [-4 + 2j, 2 + 6j]
    _close(tf.exp(x), EXP)
    _close(tf.sqrt(tf.constant([3 + 4j, -1 + 0j], tf.complex64)), SQRT)
    assert tf.reduce_sum(x).numpy() == 4 + 1j
    _close(tf.reduce_mean(x), MEAN)
    m = tf.constant([[0.3 - 1j, 2 + 1j], [1j, -2.0 + 0j]])
    _close(tf.matmul(m, m), MATMUL)
    _close(m @ m, MATMUL)
    assert tf.reshape(x, (2, 1)).shape == (2, 1)
    assert tf.transpose(m).numpy().tolist() == [[0.3 - 1j, 1j], [2 + 1j, -2 + 0j]]
    assert tf.concat([x, x], 0).numpy().tolist() == [1 + 2j, 3 - 1j, 1 + 2j, 3 - 1j]
    assert tf.stack([x, x]).shape == (2, 2)
    assert tf.gather(x, [1]).numpy().tolist() == [3 - 1j]
    assert x[0].numpy() == 1 + 2j and x[::-1].numpy().tolist() == [3 - 1j, 1 + 2j]
    assert tf.equal(x, tf.constant([1 + 2j, 3 + 1j])).numpy().tolist() == [True, False]


def test_real_only_ops_refuse_complex():
    x = tf.constant(Z)
    with pytest.raises(TypeError, match="add: cannot combine the float32 tensor with the "
                                        "complex 1j"):
        tf.constant([1.0]) + 1j
    with pytest.raises(TypeError, match="relu: .*complex tensors are not supported"):
        tf.nn.relu(x)
    with pytest.raises(TypeError, match="maximum: .*complex tensors are not supported"):
        tf.maximum(x, x)
    with pytest.raises(TypeError, match="less: .*complex tensors are not supported"):
        tf.less(x, x)
    with pytest.raises(TypeError, match="reduce_max: .*complex tensors are not supported"):
        tf.reduce_max(x)
    with pytest.raises(TypeError, match="floor: .*complex"):
        tf.floor(x)
    with pytest.raises(TypeError, match="operands have different dtypes float64 and complex128"):
        tf.constant([1.0, 2.0], tf.float64) + x


# --- gradients -----------------------------------------------------------------------------

def _tape_grad(f, z):
    v = tf.Variable(z)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(f(v))
    return tape.gradient(loss, v)


def _numeric_grad(f, z, eps=1e-6):
    """dL/dx + i dL/dy by central differences on the real and imaginary parts separately."""
    z = np.asarray(z, np.complex128)
    out = np.zeros_like(z)
    for k in np.ndindex(z.shape):
        for step in (1.0, 1j):
            hi, lo = z.copy(), z.copy()
            hi[k] += eps * step
            lo[k] -= eps * step
            diff = (float(tf.reduce_sum(f(tf.constant(hi)))) -
                    float(tf.reduce_sum(f(tf.constant(lo))))) / (2 * eps)
            out[k] += diff * step
    return out


GRAD_CASES = {
    "abs": (tf.abs, G_ABS), "real": (tf.math.real, G_REAL), "imag": (tf.math.imag, G_IMAG),
    "angle": (tf.math.angle, G_ANGLE),
    "conj_mul": (lambda z: tf.abs(tf.math.conj(z) * (2 + 1j)), G_CONJ_MUL),
    "exp_mul": (lambda z: tf.math.real(tf.exp(z) * (1 - 2j)), G_EXP_MUL),
    "div_sub": (lambda z: tf.math.imag((z - 2j) / (z + 1)), G_DIV_SUB),
    "square_mean": (lambda z: tf.abs(tf.reduce_mean(tf.square(z) - z)), G_SQUARE_MEAN),
    "fft": (lambda z: tf.abs(tf.signal.fft(z)), G_FFT),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_tensorflow_and_finite_differences(name):
    f, expected = GRAD_CASES[name]
    z = np.array([1 + 2j, 3 - 1j])
    g = _tape_grad(f, z)
    assert g.dtype is tf.complex128
    _close(g, expected)
    np.testing.assert_allclose(g.numpy(), _numeric_grad(f, z), atol=1e-6)


def test_matmul_and_elementwise_gradient():
    a = np.array([[1 + 2j, 0.5 - 1j], [2 + 0.1j, -1 + 1j]])
    b = tf.constant([[0.3 - 1j, 2 + 1j], [1j, -2.0 + 0j]])

    def f(v):
        return tf.reduce_sum(tf.abs(tf.matmul(v, b)) ** 2) + tf.reduce_sum(
            tf.math.real(tf.exp(v) / (v + 3)))
    g = _tape_grad(f, a)
    _close(g, G_MATMUL)
    np.testing.assert_allclose(g.numpy(), _numeric_grad(f, a), atol=1e-5)


def test_gradient_to_real_parts_through_complex():
    r, i = tf.Variable(np.array([1.0, 2.0])), tf.Variable(np.array([0.5, -1.0]))
    with tf.GradientTape() as tape:
        z = tf.complex(r, i)
        loss = tf.reduce_sum(tf.abs(z * (1 + 2j)) + tf.math.angle(z))
    gr, gi = tape.gradient(loss, [r, i])
    assert gr.dtype is tf.float64
    _close(gr, G_COMPLEX_R)
    _close(gi, G_COMPLEX_I)


def test_gradient_through_array_ops():
    z = np.array([[0.3 - 0.4j, -1.2 + 1.1j, 2.0 + 0.05j], [0.7 - 0.9j, -0.4 + 1.6j, 1.1 + 0.2j]])

    def f(v):
        flat = tf.reshape(tf.transpose(v), (-1,))[::2]
        return tf.math.imag(tf.math.conj(v) * v * (1 + 1j)) + tf.math.real(tf.reduce_mean(flat))
    _close(_tape_grad(f, z), G_CONJ)

    def g(v):
        picked = tf.gather(tf.concat([v, v * 2], 0), [0, 3])
        return tf.math.real(picked * tf.stack([v[0], v[1]]))
    _close(_tape_grad(g, z), G_GATHER)
    np.testing.assert_allclose(_tape_grad(g, z).numpy(), _numeric_grad(g, z), atol=1e-6)


def test_second_order_gradient():
    z = tf.Variable(np.array([1 + 2j, -0.5 + 1j]))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = tf.reduce_sum(tf.abs(z * z) ** 2)
        g = inner.gradient(loss, z)
        norm = tf.reduce_sum(tf.math.real(g * tf.math.conj(g)))
    _close(g, G1_SECOND)
    _close(outer.gradient(norm, z), G2_SECOND)


def test_forward_mode_through_complex_values():
    x0, v = np.array([0.3, -1.2, 2.0, 0.7]), np.array([0.5, 1.0, -0.25, 2.0])

    def f(x):
        return tf.reduce_sum(tf.abs(tf.signal.rfft(x) + (0.5 + 1j)) ** 1.5)
    x = tf.constant(x0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(v)) as acc:
        y = f(x)
    eps = 1e-6
    numeric = (float(f(tf.constant(x0 + eps * v))) - float(f(tf.constant(x0 - eps * v)))) / (
        2 * eps)
    np.testing.assert_allclose(float(acc.jvp(y)), numeric, rtol=1e-6)


def test_unconnected_and_watched_complex():
    z = tf.constant(Z)
    with tf.GradientTape() as tape:
        tape.watch(z)
        loss = tf.reduce_sum(tf.math.real(z) * 3.0)
    assert tape.gradient(loss, z).numpy().tolist() == [3 + 0j, 3 + 0j]
    v = tf.Variable(Z)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.constant([1.0]))
    assert tape.gradient(loss, v) is None
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.constant([1.0]))
    zero = tape.gradient(loss, v, unconnected_gradients="zero")
    assert zero.dtype is tf.complex128 and zero.numpy().tolist() == [0j, 0j]
