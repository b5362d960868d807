"""Activation, merging, reshaping, 1-D convolution/pooling, transposed convolution,
preprocessing and Lambda layers: values against numpy, gradients against central
differences, configs that rebuild the layer."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers
from minitf.testing.gradcheck import check_grads

RNG = np.random.default_rng(0)


def _conv_transpose_reference(x, k, stride, padding):
    """Scatter each input pixel times the kernel into the output (float64)."""
    n, h, w, c = x.shape
    kh, kw, f, _ = k.shape
    full = np.zeros((n, (h - 1) * stride + kh, (w - 1) * stride + kw, f))
    for i in range(h):
        for j in range(w):
            full[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :] += np.einsum(
                "nc,abfc->nabf", x[:, i, j, :], k)
    if padding == "valid":
        return full
    out = np.zeros((n, h * stride, w * stride, f))
    bh, bw = max(kh - stride, 0) // 2, max(kw - stride, 0) // 2
    part = full[:, bh:bh + h * stride, bw:bw + w * stride, :]
    out[:, :part.shape[1], :part.shape[2], :] = part
    return out


@pytest.mark.parametrize("stride,padding,k", [(1, "valid", 3), (2, "valid", 3), (2, "same", 3),
                                              (2, "same", 4), (3, "same", 2), (2, "same", 1)])
def test_conv2d_transpose_against_numpy(stride, padding, k):
    x = RNG.normal(size=(2, 4, 5, 3))
    layer = layers.Conv2DTranspose(2, k, strides=stride, padding=padding, dtype="float64",
                                   bias_initializer="ones")
    y = layer(x)
    expected = _conv_transpose_reference(x, layer.kernel.numpy(), stride, padding) + 1.0
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-10, atol=1e-12)
    assert tuple(layer.compute_output_shape((None, 4, 5, 3))) == (None,) + y.shape[1:]


def test_conv2d_transpose_gradients():
    layer = layers.Conv2DTranspose(2, 3, strides=2, padding="same", dtype="float64")
    x = RNG.normal(size=(1, 3, 3, 2))
    layer(x)
    check_grads(lambda inp, kernel: _call_with_kernel(layer, inp, kernel),
                [x, layer.kernel.numpy()], order=1, modes=("rev",), jacobian=False,
                namespaces=False)


def _call_with_kernel(layer, x, kernel):
    saved = layer.kernel
    layer.__dict__["kernel"] = kernel
    try:
        return layer.call(x)
    finally:
        layer.__dict__["kernel"] = saved


@pytest.mark.parametrize("padding,strides,dilation", [("valid", 1, 1), ("same", 2, 1),
                                                      ("causal", 1, 2)])
def test_conv1d_against_numpy(padding, strides, dilation):
    x = RNG.normal(size=(2, 9, 3))
    layer = layers.Conv1D(4, 3, strides=strides, padding=padding, dilation_rate=dilation,
                          dtype="float64")
    y = layer(x).numpy()
    k = layer.kernel.numpy()
    span = (3 - 1) * dilation + 1
    if padding == "causal":
        xp = np.pad(x, ((0, 0), (span - 1, 0), (0, 0)))
    elif padding == "same":
        total = max((-(-9 // strides) - 1) * strides + span - 9, 0)
        xp = np.pad(x, ((0, 0), (total // 2, total - total // 2), (0, 0)))
    else:
        xp = x
    steps = (xp.shape[1] - span) // strides + 1
    expected = np.stack([sum(xp[:, t * strides + a * dilation, :] @ k[a] for a in range(3))
                         for t in range(steps)], axis=1)
    np.testing.assert_allclose(y, expected, rtol=1e-10)
    assert tuple(layer.compute_output_shape((None, 9, 3))) == (None,) + y.shape[1:]


def test_pooling_1d():
    x = RNG.normal(size=(2, 7, 3))
    np.testing.assert_allclose(layers.MaxPooling1D(2)(x).numpy(),
                               x[:, :6].reshape(2, 3, 2, 3).max(axis=2), rtol=1e-6)
    np.testing.assert_allclose(layers.AveragePooling1D(2)(x).numpy(),
                               x[:, :6].reshape(2, 3, 2, 3).mean(axis=2), rtol=1e-6)
    np.testing.assert_allclose(layers.GlobalMaxPooling1D()(x).numpy(), x.max(axis=1), rtol=1e-6)
    np.testing.assert_allclose(layers.GlobalAveragePooling1D(keepdims=True)(x).numpy(),
                               x.mean(axis=1, keepdims=True), rtol=1e-6)


def test_activation_layers():
    x = np.array([[-3.0, -0.5, 0.0, 0.5, 8.0]], np.float32)
    np.testing.assert_allclose(layers.LeakyReLU()(x).numpy(), np.where(x > 0, x, 0.3 * x))
    np.testing.assert_allclose(layers.LeakyReLU(negative_slope=0.1)(x).numpy(),
                               np.where(x > 0, x, 0.1 * x))
    np.testing.assert_allclose(layers.ReLU(max_value=6.0)(x).numpy(), np.clip(x, 0, 6))
    np.testing.assert_allclose(layers.ReLU(negative_slope=0.5, threshold=1.0)(x).numpy(),
                               np.where(x > 1, x, 0.5 * (x - 1)))
    np.testing.assert_allclose(layers.ELU(alpha=2.0)(x).numpy(),
                               np.where(x > 0, x, 2.0 * np.expm1(x)), rtol=1e-6)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(layers.Softmax()(x).numpy(), e / e.sum(), rtol=1e-6)
    masked = layers.Softmax()(x, mask=np.array([[True, True, False, True, False]]))
    em = e * np.array([1, 1, 0, 1, 0])
    np.testing.assert_allclose(masked.numpy(), em / em.sum(), rtol=1e-5, atol=1e-7)


def test_prelu_learns_its_slopes():
    x = RNG.normal(size=(4, 3)).astype("float32")
    layer = layers.PReLU(alpha_initializer=keras.initializers.Constant(0.25))
    np.testing.assert_allclose(layer(x).numpy(), np.where(x > 0, x, 0.25 * x), rtol=1e-6)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x))
    np.testing.assert_allclose(tape.gradient(y, layer.alpha).numpy(),
                               np.minimum(x, 0).sum(axis=0), rtol=1e-5)


def test_merge_layers_against_numpy():
    a, b, c = (RNG.normal(size=(3, 4)).astype("float32") for _ in range(3))
    np.testing.assert_allclose(layers.add([a, b, c]).numpy(), a + b + c, rtol=1e-6)
    np.testing.assert_allclose(layers.Subtract()([a, b]).numpy(), a - b, rtol=1e-6)
    np.testing.assert_allclose(layers.multiply([a, b]).numpy(), a * b, rtol=1e-6)
    np.testing.assert_allclose(layers.average([a, b, c]).numpy(), (a + b + c) / 3, rtol=1e-6)
    np.testing.assert_allclose(layers.maximum([a, b, c]).numpy(), np.maximum(np.maximum(a, b), c))
    np.testing.assert_allclose(layers.minimum([a, b]).numpy(), np.minimum(a, b))
    np.testing.assert_allclose(layers.concatenate([a, b], axis=0).numpy(), np.concatenate([a, b]))
    np.testing.assert_allclose(layers.Dot(axes=1)([a, b]).numpy(),
                               (a * b).sum(axis=1, keepdims=True), rtol=1e-5)
    an = a / np.linalg.norm(a, axis=1, keepdims=True)
    bn = b / np.linalg.norm(b, axis=1, keepdims=True)
    np.testing.assert_allclose(layers.dot([a, b], axes=1, normalize=True).numpy(),
                               (an * bn).sum(axis=1, keepdims=True), rtol=1e-5)
    x3, y3 = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 5, 4))
    np.testing.assert_allclose(layers.Dot(axes=(2, 2), dtype="float64")([x3, y3]).numpy(),
                               np.einsum("bik,bjk->bij", x3, y3), rtol=1e-10)
    with pytest.raises(ValueError, match="exactly 2"):
        layers.Subtract()([a, b, c])
    with pytest.raises(ValueError, match="at least 2"):
        layers.Add()([a])


def test_merge_gradients():
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    check_grads(lambda x, y: layers.Dot(axes=1, normalize=True, dtype="float64")([x, y]),
                [a, b], order=1, modes=("rev",), jacobian=False, namespaces=False)
    check_grads(lambda x, y: layers.Maximum(dtype="float64")([x, y]) *
                layers.Average(dtype="float64")([x, y]), [a, b], order=1, modes=("rev",),
                jacobian=False, namespaces=False)


def test_reshaping_layers():
    x = RNG.normal(size=(2, 4, 5, 3)).astype("float32")
    np.testing.assert_array_equal(
        layers.ZeroPadding2D(((1, 2), (0, 1)))(x).numpy(),
        np.pad(x, ((0, 0), (1, 2), (0, 1), (0, 0))))
    np.testing.assert_array_equal(layers.Cropping2D(((1, 0), (1, 2)))(x).numpy(),
                                  x[:, 1:, 1:3, :])
    np.testing.assert_array_equal(layers.UpSampling2D((2, 3))(x).numpy(),
                                  x.repeat(2, axis=1).repeat(3, axis=2))
    v = RNG.normal(size=(2, 3)).astype("float32")
    np.testing.assert_array_equal(layers.RepeatVector(4)(v).numpy(),
                                  np.repeat(v[:, None, :], 4, axis=1))
    np.testing.assert_array_equal(layers.Permute((3, 1, 2))(x).numpy(),
                                  x.transpose(0, 3, 1, 2))
    check_grads(lambda t: layers.UpSampling2D(dtype="float64")(t) ** 2,
                [RNG.normal(size=(1, 2, 2, 1))], order=1, modes=("rev",), jacobian=False,
                namespaces=False)
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping2D(3)(x)


def test_one_dimensional_reshaping_and_identity_layers():
    x = RNG.normal(size=(2, 5, 3)).astype("float32")
    np.testing.assert_array_equal(layers.ZeroPadding1D((1, 2))(x).numpy(),
                                  np.pad(x, ((0, 0), (1, 2), (0, 0))))
    np.testing.assert_array_equal(layers.Cropping1D((1, 2))(x).numpy(), x[:, 1:3])
    np.testing.assert_array_equal(layers.UpSampling1D(3)(x).numpy(), x.repeat(3, axis=1))
    np.testing.assert_array_equal(layers.Identity()(x).numpy(), x)
    reg = layers.ActivityRegularization(l1=0.1, l2=0.01)
    reg(x)
    np.testing.assert_allclose(float(reg.losses[0]),
                               0.1 * np.abs(x).sum() + 0.01 * (x ** 2).sum(), rtol=1e-5)
    noise = layers.GaussianNoise(0.5)
    np.testing.assert_array_equal(noise(x).numpy(), x)
    noisy = noise(np.zeros((200, 50), np.float32), training=True).numpy()
    assert abs(noisy.std() - 0.5) < 0.02


def test_rescaling_and_normalization():
    pixels = np.array([[0, 128, 255]], np.uint8)
    y = layers.Rescaling(1.0 / 255)(pixels)
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy(), pixels / 255.0, rtol=1e-6)
    data = RNG.normal(3.0, 2.0, size=(50, 4))
    norm = layers.Normalization()
    norm.adapt(data)
    out = norm(data).numpy()
    np.testing.assert_allclose(out.mean(axis=0), 0, atol=1e-5)
    np.testing.assert_allclose(out.std(axis=0), 1, rtol=1e-4)
    fixed = layers.Normalization(mean=2.0, variance=4.0)
    np.testing.assert_allclose(fixed(np.array([[4.0]], np.float32)).numpy(), [[1.0]])
    inv = layers.Normalization(mean=2.0, variance=4.0, invert=True)
    np.testing.assert_allclose(inv(np.array([[1.0]], np.float32)).numpy(), [[4.0]])


def test_lambda_layer_and_its_refusal_to_serialize():
    inputs = keras.Input((3,))
    outputs = layers.Lambda(lambda t, scale: t * scale, arguments={"scale": 2.0})(inputs)
    model = keras.Model(inputs, outputs)
    np.testing.assert_array_equal(model(np.ones((1, 3), np.float32)).numpy(), [[2.0] * 3])
    with pytest.raises(ValueError, match="never serializes"):
        model.layers[1].get_config()


def test_integer_inputs_cast_by_numeric_layers_only():
    ids = np.array([[1, 2]], np.int32)
    assert layers.Dense(2)(ids).dtype == tf.float32
    assert layers.Embedding(5, 2)(ids).dtype == tf.float32
    assert layers.Flatten()(ids).dtype == tf.int32   # reshaping keeps the dtype

    class Identity(layers.Layer):
        def call(self, x):
            return x
    assert Identity()(ids).dtype == tf.int32         # custom layers see what they were given


def test_regularizers():
    w = np.array([[1.0, -2.0], [0.5, 0.0]], np.float32)
    assert float(keras.regularizers.L1(0.1)(w)) == pytest.approx(0.35)
    assert float(keras.regularizers.l2(0.1)(w)) == pytest.approx(0.525)
    assert float(keras.regularizers.l1_l2(l1=0.1, l2=0.1)(w)) == pytest.approx(0.875)
    assert isinstance(keras.regularizers.get("l2"), keras.regularizers.L2)
    assert keras.regularizers.get("l2").l2 == pytest.approx(0.01)
    reg = keras.regularizers.deserialize(keras.regularizers.serialize(keras.regularizers.L1L2(
        0.2, 0.3)))
    assert (reg.l1, reg.l2) == (0.2, 0.3)
    with pytest.raises(ValueError, match="unknown regularizer"):
        keras.regularizers.get("l3")
    layer = layers.Dense(2, kernel_regularizer="l2", bias_regularizer=keras.regularizers.L1(1.0),
                         activity_regularizer=keras.regularizers.L2(0.5),
                         bias_initializer="ones")
    x = np.ones((1, 3), np.float32)
    y = layer(x).numpy()
    k = layer.kernel.numpy()
    values = sorted(float(v) for v in layer.losses)
    expected = sorted([0.01 * (k ** 2).sum(), 2.0, 0.5 * (y ** 2).sum()])
    np.testing.assert_allclose(values, expected, rtol=1e-5)
    conv = layers.Conv2D(2, 3, kernel_regularizer=keras.regularizers.L1(0.1))
    conv(np.ones((1, 4, 4, 1), np.float32))
    np.testing.assert_allclose(float(conv.losses[0]), 0.1 * np.abs(conv.kernel.numpy()).sum(),
                               rtol=1e-5)


ALL_LAYERS = [
    lambda: layers.Dense(3, activation="relu", kernel_regularizer="l2"),
    lambda: layers.Conv2D(2, 3, strides=2, padding="same"),
    lambda: layers.Conv2DTranspose(2, 3, strides=2),
    lambda: layers.Conv1D(2, 3, padding="causal", dilation_rate=2),
    lambda: layers.MaxPooling2D(2), lambda: layers.AveragePooling1D(3, strides=1),
    lambda: layers.GlobalAveragePooling2D(), lambda: layers.GlobalMaxPooling1D(keepdims=True),
    lambda: layers.Dropout(0.3), lambda: layers.Flatten(), lambda: layers.Reshape((2, -1)),
    lambda: layers.Activation("tanh"), lambda: layers.Embedding(10, 4),
    lambda: layers.BatchNormalization(momentum=0.9), lambda: layers.LayerNormalization(),
    lambda: layers.LeakyReLU(0.2), lambda: layers.ReLU(6.0), lambda: layers.ELU(0.5),
    lambda: layers.Softmax(axis=1), lambda: layers.Concatenate(axis=1), lambda: layers.Add(),
    lambda: layers.Dot(axes=1), lambda: layers.ZeroPadding2D(2), lambda: layers.Cropping2D(1),
    lambda: layers.UpSampling2D(3), lambda: layers.RepeatVector(3),
    lambda: layers.Permute((2, 1)), lambda: layers.Rescaling(0.5, 1.0),
    lambda: layers.Normalization(mean=[1.0, 2.0], variance=[1.0, 4.0]),
    lambda: layers.ZeroPadding1D((1, 2)), lambda: layers.Cropping1D(2),
    lambda: layers.UpSampling1D(3), lambda: layers.Identity(),
    lambda: layers.ActivityRegularization(l1=0.5), lambda: layers.GaussianNoise(0.1),
    lambda: layers.Dense(2, activity_regularizer="l1"),
    lambda: layers.PReLU(shared_axes=[1]),
]


@pytest.mark.parametrize("make", ALL_LAYERS)
def test_get_config_rebuilds_the_layer(make):
    layer = make()
    config = layer.get_config()
    assert {"name", "trainable", "dtype"} <= set(config)
    clone = type(layer).from_config(config)
    assert clone.get_config() == config


def test_global_pooling_channels_first_matches_keras():
    # values printed by Keras 3.15 (numpy backend) for the same inputs
    layers = keras.layers
    x = np.arange(2 * 3 * 4, dtype="float32").reshape(2, 3, 4) ** 1.5
    x4 = np.arange(2 * 3 * 4 * 5, dtype="float32").reshape(2, 3, 4, 5) % 7
    mean1d = layers.GlobalAveragePooling1D(data_format="channels_first")
    np.testing.assert_allclose(mean1d(x).numpy().ravel(), [2.2561, 13.0994, 29.4333, 49.7298,
                                                           73.3199, 99.7925], rtol=1e-4)
    max1d = layers.GlobalMaxPooling1D(data_format="channels_first", keepdims=True)
    assert max1d(x).shape == (2, 3, 1) == max1d.compute_output_shape((2, 3, 4))
    np.testing.assert_allclose(max1d(x).numpy().ravel(), x.max(axis=2).ravel())
    mean2d = layers.GlobalAveragePooling2D(data_format="channels_first", keepdims=True)
    np.testing.assert_allclose(mean2d(x4).numpy(), x4.mean(axis=(2, 3), keepdims=True),
                               rtol=1e-6)
    assert layers.GlobalMaxPooling2D(data_format="channels_first")(x4).shape == (2, 3)
    keep = np.array([[1, 1, 0, 0], [1, 0, 1, 1]], bool)
    np.testing.assert_allclose(mean1d(x, mask=tf.constant(keep)).numpy(),
                               [[0.5, 9.5902, 24.8137], [50.6824, 74.3955, 100.9787]], rtol=1e-4)
    with pytest.raises(ValueError, match="data_format must be"):
        layers.GlobalAveragePooling1D(data_format="nchw")
    assert mean1d.get_config()["data_format"] == "channels_first"
