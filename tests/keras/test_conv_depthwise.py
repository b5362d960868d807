"""DepthwiseConv2D, SeparableConv2D, their 1-D forms and the ``depthwise_conv2d`` /
``separable_conv2d`` functions: outputs against explicit numpy loops, gradients, tf.function,
training, configs, weight files, errors.

The ``dwconv_*`` fixtures in ``tests/fixtures/keras`` were written by Keras 3.15 (numpy backend):
Keras built the models ``dwconv_2d`` and ``dwconv_1d`` of ``tools/layer_fixture_models.py``
(the same code builds them here, ``K`` = ``keras``), gave every weight ``normal(0, 0.5)`` values, saved them with ``save_weights`` and
recorded its inference output ``y0`` for the input ``x0``.
"""
import os
import sys

import numpy as np
import pytest

import h5_layout
import minitf as tf
from minitf import keras
from minitf.keras import layers
from minitf.ops.depthwise_conv_ops import depthwise_conv2d, separable_conv2d
from minitf.testing import check_grads, check_variable_grads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import layer_fixture_models as fixture_models  # noqa: E402 - the models of the fixtures
RNG = np.random.default_rng(0)


def _randomize(layer, seed=1):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.standard_normal(v.shape.as_list()) * 0.5)


def _same_pads(size, k, s, d):
    total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def _depthwise_loops(x, kernel, strides=(1, 1), padding="valid", dilation=(1, 1)):
    """out[n, i, j, c * M + m] = sum_{a, b} x[n, i*s + a*d, j*s + b*d, c] * kernel[a, b, c, m]
    over the (TF-style 'same'-padded) input, one output element at a time."""
    (kh, kw, channels, mult), (sh, sw), (dh, dw) = kernel.shape, strides, dilation
    if padding == "same":
        x = np.pad(x, ((0, 0), _same_pads(x.shape[1], kh, sh, dh),
                       _same_pads(x.shape[2], kw, sw, dw), (0, 0)))
    n, h, w, _ = x.shape
    oh, ow = (h - (kh - 1) * dh - 1) // sh + 1, (w - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, oh, ow, channels * mult))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for c in range(channels):
                    for m in range(mult):
                        total = 0.0
                        for a in range(kh):
                            for e in range(kw):
                                total += x[b, i * sh + a * dh, j * sw + e * dw, c] * \
                                    kernel[a, e, c, m]
                        out[b, i, j, c * mult + m] = total
    return out


@pytest.mark.parametrize("kernel_size,strides,padding,mult,dilation", [
    ((3, 3), (1, 1), "valid", 1, (1, 1)),
    ((3, 2), (2, 1), "same", 2, (1, 1)),
    ((2, 3), (1, 1), "same", 3, (2, 1)),
    ((3, 3), (2, 2), "valid", 1, (1, 2)),
])
def test_depthwise_conv2d_matches_loops(kernel_size, strides, padding, mult, dilation):
    layer = layers.DepthwiseConv2D(kernel_size, strides=strides, padding=padding,
                                   depth_multiplier=mult, dilation_rate=dilation,
                                   dtype="float64")
    x = RNG.standard_normal((2, 7, 6, 3))
    layer.build(x.shape)
    _randomize(layer)
    kernel, bias = layer.kernel.numpy(), layer.bias.numpy()
    assert kernel.shape == kernel_size + (3, mult) and bias.shape == (3 * mult,)
    want = _depthwise_loops(x, kernel, strides, padding, dilation) + bias
    out = layer(x)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-12)
    assert layer.compute_output_shape((None, 7, 6, 3)) == (None,) + want.shape[1:]


def test_separable_conv2d_matches_loops_and_pointwise_product():
    layer = layers.SeparableConv2D(4, 3, strides=2, padding="same", depth_multiplier=2,
                                   activation="relu", dtype="float64")
    x = RNG.standard_normal((2, 7, 7, 3))
    layer(x)
    _randomize(layer)
    dw, pw, bias = (v.numpy() for v in layer.weights)
    assert [v.path.split("/", 1)[1] for v in layer.weights] == [
        "depthwise_kernel", "pointwise_kernel", "bias"]
    assert dw.shape == (3, 3, 3, 2) and pw.shape == (1, 1, 6, 4) and bias.shape == (4,)
    depthwise = _depthwise_loops(x, dw, (2, 2), "same")
    want = np.maximum(depthwise @ pw[0, 0] + bias, 0.0)
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-12, atol=1e-12)


def test_one_dimensional_layers_match_loops():
    x = RNG.standard_normal((2, 9, 3))
    layer = layers.DepthwiseConv1D(3, strides=2, padding="same", depth_multiplier=2,
                                   dtype="float64")
    layer(x)
    _randomize(layer)
    assert layer.kernel.shape == (3, 3, 2)
    want = _depthwise_loops(x[:, None], layer.kernel.numpy()[None], (1, 2), "same")[:, 0]
    np.testing.assert_allclose(layer(x).numpy(), want + layer.bias.numpy(), rtol=1e-12)

    sep = layers.SeparableConv1D(4, 2, dilation_rate=2, use_bias=False, dtype="float64")
    sep(x)
    _randomize(sep)
    dw, pw = sep.depthwise_kernel.numpy(), sep.pointwise_kernel.numpy()
    assert dw.shape == (2, 3, 1) and pw.shape == (1, 3, 4)
    depthwise = _depthwise_loops(x[:, None], dw[None], dilation=(1, 2))[:, 0]
    np.testing.assert_allclose(sep(x).numpy(), depthwise @ pw[0], rtol=1e-12)
    assert sep.compute_output_shape((None, 9, 3)) == (None, 7, 4)


def test_functions_take_tf_arguments():
    x = RNG.standard_normal((1, 5, 5, 2))
    w = RNG.standard_normal((3, 3, 2, 2))
    pw = RNG.standard_normal((1, 1, 4, 3))
    want = _depthwise_loops(x, w, (2, 2), "same")
    got = depthwise_conv2d(x, w, strides=[1, 2, 2, 1], padding="SAME")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    nchw = depthwise_conv2d(x.transpose(0, 3, 1, 2), w, strides=[1, 1, 2, 2], padding="SAME",
                            data_format="NCHW")
    np.testing.assert_allclose(nchw.numpy(), want.transpose(0, 3, 1, 2), rtol=1e-12)
    sep = separable_conv2d(x, w, pw, strides=[1, 2, 2, 1], padding="SAME")
    np.testing.assert_allclose(sep.numpy(), want @ pw[0, 0], rtol=1e-12)


def test_depthwise_gradients_match_central_differences():
    x = RNG.standard_normal((1, 4, 5, 2))
    w = RNG.standard_normal((2, 3, 2, 2))
    check_grads(lambda x, w: depthwise_conv2d(x, w, strides=(2, 1), padding="SAME",
                                              dilations=1), [x, w], order=2)

    layer = layers.DepthwiseConv2D((2, 2), depth_multiplier=2, activation="tanh",
                                   dtype="float64")
    layer(x)
    _randomize(layer)
    target = RNG.standard_normal((1, 3, 4, 4))

    def loss():
        return tf.reduce_sum((layer(x) - target) ** 2)

    check_variable_grads(loss, layer.trainable_variables, rtol=1e-6, atol=1e-8)


def test_layers_in_tf_function_over_two_calls():
    layer = layers.SeparableConv2D(3, 3, padding="same", dtype="float64")
    layer.build((None, 5, 5, 2))
    _randomize(layer)

    @tf.function
    def run(x):
        return layer(x)

    dw, pw, bias = (v.numpy() for v in layer.weights)
    for _ in range(2):
        x = RNG.standard_normal((2, 5, 5, 2))
        want = _depthwise_loops(x, dw, padding="same") @ pw[0, 0] + bias
        np.testing.assert_allclose(run(tf.constant(x)).numpy(), want, rtol=1e-12)


def _small_net():
    return keras.Sequential([keras.Input((8, 8, 2)),
                             layers.DepthwiseConv2D(3, depth_multiplier=2, activation="relu"),
                             layers.SeparableConv2D(4, 3, padding="same", activation="relu"),
                             layers.GlobalAveragePooling2D(), layers.Dense(1)])


def test_fit_reduces_the_loss():
    tf.random.set_seed(0)
    model = _small_net()
    x = RNG.standard_normal((64, 8, 8, 2)).astype("float32")
    y = x[..., 0].mean(axis=(1, 2))[:, None] * 8.0      # variance 1
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    losses = model.fit(x, y, epochs=30, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.3 * losses[0] and losses[-1] < 0.3 * y.var()


def test_configs_round_trip_with_keras_keys():
    layer = layers.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2,
                                   activation="relu", name="dw")
    config = layer.get_config()
    # the keys Keras 3.15's DepthwiseConv2D.get_config returns
    assert set(config) == {
        "name", "trainable", "dtype", "depth_multiplier", "kernel_size", "strides", "padding",
        "data_format", "dilation_rate", "activation", "use_bias", "depthwise_initializer",
        "bias_initializer", "depthwise_regularizer", "bias_regularizer", "activity_regularizer",
        "depthwise_constraint", "bias_constraint"}
    assert config["kernel_size"] == (3, 3) and config["strides"] == (2, 2)
    assert layers.DepthwiseConv2D.from_config(config).get_config() == config
    sep = layers.SeparableConv2D(5, (2, 3), depth_multiplier=3, use_bias=False)
    config = sep.get_config()
    assert {"filters", "depth_multiplier", "pointwise_initializer", "pointwise_regularizer",
            "pointwise_constraint", "depthwise_initializer"} <= set(config)
    again = layers.deserialize(layers.serialize(sep))
    assert type(again) is layers.SeparableConv2D and again.get_config() == config
    one = layers.deserialize(layers.serialize(layers.SeparableConv1D(2, 3)))
    assert type(one) is layers.SeparableConv1D and one.kernel_size == (3,)


def test_weights_h5_and_archive_round_trip(tmp_path):
    model = _small_net()
    x = RNG.standard_normal((2, 8, 8, 2)).astype("float32")
    before = model(x).numpy()
    model.save_weights(str(tmp_path / "net.weights.h5"))
    fresh = _small_net()
    assert np.abs(fresh(x).numpy() - before).max() > 1e-5
    fresh.load_weights(str(tmp_path / "net.weights.h5"))
    np.testing.assert_array_equal(fresh(x).numpy(), before)
    model.save(str(tmp_path / "net.keras"))
    loaded = keras.models.load_model(str(tmp_path / "net.keras"))
    np.testing.assert_array_equal(loaded(x).numpy(), before)


def test_errors():
    with pytest.raises(ValueError, match="depth_multiplier must be a positive integer"):
        layers.DepthwiseConv2D(3, depth_multiplier=0)
    with pytest.raises(ValueError, match="padding must be 'valid' or 'same'"):
        layers.DepthwiseConv2D(3, padding="full")
    with pytest.raises(ValueError, match="only data_format='channels_last'"):
        layers.SeparableConv2D(2, 3, data_format="channels_first")
    with pytest.raises(ValueError, match="filters must be a positive integer"):
        layers.SeparableConv2D(0, 3)
    with pytest.raises(ValueError, match=r"expects inputs \(batch, height, width, channels\)"):
        layers.DepthwiseConv2D(3)(np.zeros((2, 5, 5)))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"depthwise_conv2d: filter must be \(KH, KW, C, M\) with C = 3"):
        depthwise_conv2d(np.zeros((1, 5, 5, 3)), np.zeros((3, 3, 2, 1)), 1, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"input shape \(1, 2, 2, 1\)"):
        depthwise_conv2d(np.zeros((1, 2, 2, 1)), np.zeros((3, 3, 1, 1)), 1, "VALID")


# --- Keras 3 files -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["dwconv_2d", "dwconv_1d"])
def test_keras_weights_file_reproduces_keras_outputs(name, tmp_path):
    model = fixture_models.MODELS[name](keras)
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    assert np.abs(model(data["x0"]).numpy() - data["y0"]).max() > 1e-2
    model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    assert np.abs(data["y0"]).max() > 0.1
    np.testing.assert_allclose(model(data["x0"]).numpy(), data["y0"], rtol=1e-5, atol=1e-5)
    model.save_weights(tmp_path / "mine.weights.h5")
    assert h5_layout.listing(tmp_path / "mine.weights.h5") == h5_layout.listing(
        os.path.join(FIXTURES, f"{name}.weights.h5"))
