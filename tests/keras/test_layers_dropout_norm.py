"""SpatialDropout1D/2D/3D, GaussianDropout, AlphaDropout, UnitNormalization,
GroupNormalization and EinsumDense: values against numpy, training vs inference, noise
statistics, gradients, tf.function, fit, configs and weight files.

The ``misc_norm_einsum`` fixtures in ``tests/fixtures/keras`` were written by Keras 3.15 (numpy
backend, ``tools/make_misc_fixtures.py``): Keras built ``misc_norm_einsum`` defined there (the same
code builds it here, ``K`` = ``keras``), gave every weight ``normal(0, 0.5)`` values, saved them with
``save_weights`` and recorded its inference outputs ``y0..y6`` for the input ``x0``.
"""
import os
import sys

import numpy as np
import pytest

import h5_layout
import minitf as tf
from minitf import keras
from minitf.keras import layers
from minitf.testing import check_grads, check_variable_grads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
sys.path.insert(0, os.path.join(ROOT, "tools"))
from make_misc_fixtures import misc_norm_einsum  # noqa: E402 - the fixture's model
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


# --- dropout family ------------------------------------------------------------------------------

@pytest.mark.parametrize("cls,shape,fmt", [
    (layers.SpatialDropout1D, (8, 5, 6), None),
    (layers.SpatialDropout2D, (8, 3, 4, 6), "channels_last"),
    (layers.SpatialDropout2D, (8, 6, 3, 4), "channels_first"),
    (layers.SpatialDropout3D, (8, 2, 3, 2, 6), "channels_last"),
    (layers.SpatialDropout3D, (8, 6, 2, 3, 2), "channels_first")])
def test_spatial_dropout_drops_whole_channels(cls, shape, fmt):
    tf.random.set_seed(1)
    kwargs = {} if fmt is None else {"data_format": fmt}
    layer = cls(0.5, **kwargs)
    x = np.random.default_rng(0).uniform(1, 2, shape).astype("float32")
    np.testing.assert_array_equal(layer(x).numpy(), x)                 # inference: identity
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    y = layer(x, training=True).numpy()
    ratio = y / x
    assert set(np.unique(np.round(ratio, 5))) <= {0.0, 2.0}
    channel_axis = 1 if fmt == "channels_first" else len(shape) - 1
    spatial = tuple(i for i in range(1, len(shape)) if i != channel_axis)
    # one draw per (example, channel): constant over the spatial axes
    assert np.all(ratio.min(axis=spatial) == ratio.max(axis=spatial))
    kept = (ratio.max(axis=spatial) > 0).mean()
    assert 0.2 < kept < 0.8 and 0 < kept < 1


def test_spatial_dropout_rank_and_rate_errors():
    with pytest.raises(ValueError, match="rank 3"):
        layers.SpatialDropout1D(0.2)(np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="rank 4"):
        layers.SpatialDropout2D(0.2)(np.ones((2, 3, 4), "float32"))
    with pytest.raises(ValueError, match=r"rate must be in \[0, 1\)"):
        layers.SpatialDropout3D(1.5)
    with pytest.raises(ValueError, match="data_format"):
        layers.SpatialDropout2D(0.2, data_format="nhwc")


def test_gaussian_dropout_statistics():
    # Keras 3 docs: multiplicative noise N(1, rate / (1 - rate))
    tf.random.set_seed(3)
    rate = 0.3
    x = np.full((400, 500), 2.0, "float32")
    layer = layers.GaussianDropout(rate)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    noise = layer(x, training=True).numpy() / 2.0
    assert abs(noise.mean() - 1.0) < 0.005
    assert abs(noise.var() - rate / (1 - rate)) < 0.005
    again = layer(x, training=True).numpy() / 2.0
    assert not np.allclose(noise, again)


def test_alpha_dropout_values_and_statistics():
    tf.random.set_seed(4)
    rate = 0.2
    alpha_p = -SELU_ALPHA * SELU_SCALE
    a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * rate
    x = np.random.default_rng(1).standard_normal((500, 400)).astype("float32")
    layer = layers.AlphaDropout(rate)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    y = layer(x, training=True).numpy()
    kept = np.isclose(y, a * x + b, atol=1e-5)
    dropped = np.isclose(y, a * alpha_p + b, atol=1e-5)
    assert np.all(kept | dropped)
    assert abs(dropped.mean() - rate) < 0.01
    # zero mean / unit variance inputs keep their mean and variance (Keras' docstring)
    assert abs(y.mean()) < 0.01 and abs(y.var() - 1.0) < 0.02


def test_alpha_dropout_noise_shape():
    tf.random.set_seed(5)
    y = layers.AlphaDropout(0.5, noise_shape=(None, 1, 4))(
        np.ones((3, 5, 4), "float32"), training=True).numpy()
    assert np.all(y.min(axis=1) == y.max(axis=1))


def test_dropout_variants_draw_anew_in_tf_function():
    tf.random.set_seed(6)
    gauss, alpha, spatial = (layers.GaussianDropout(0.4), layers.AlphaDropout(0.4),
                             layers.SpatialDropout1D(0.4))

    @tf.function
    def step(x):
        return gauss(x, training=True), alpha(x, training=True), spatial(x, training=True)

    x1 = tf.ones((4, 6, 8))
    first = [t.numpy() for t in step(x1)]
    second = [t.numpy() for t in step(x1 * 2.0)]
    for f, s in zip(first, second):
        assert f.shape == (4, 6, 8)
        assert not np.allclose(f * 2.0, s)    # new draws, not the first call's noise replayed


def test_dropout_variants_config_round_trip():
    for layer in (layers.SpatialDropout1D(0.3, seed=2), layers.SpatialDropout2D(
            0.1, data_format="channels_first"), layers.SpatialDropout3D(0.2),
            layers.GaussianDropout(0.25, seed=1), layers.AlphaDropout(0.4, noise_shape=(None, 1))):
        config = layer.get_config()
        clone = type(layer).from_config(config)
        assert clone.get_config() == config
        assert config["rate"] == layer.rate
    assert layers.SpatialDropout2D(0.1, data_format="channels_first").get_config()[
        "data_format"] == "channels_first"


# --- UnitNormalization ---------------------------------------------------------------------------

def test_unit_normalization_values():
    x = np.random.default_rng(2).standard_normal((3, 4, 5)).astype("float32")
    y = layers.UnitNormalization()(x).numpy()
    np.testing.assert_allclose(y, x / np.linalg.norm(x, axis=-1, keepdims=True), rtol=1e-5)
    y2 = layers.UnitNormalization(axis=[1, 2])(x).numpy()
    np.testing.assert_allclose(y2, x / np.sqrt((x ** 2).sum(axis=(1, 2), keepdims=True)),
                               rtol=1e-5)
    # keras.io example: the norm of each output row is 1
    np.testing.assert_allclose(np.sum(y ** 2, axis=-1), 1.0, rtol=1e-5)


def test_unit_normalization_gradient_and_errors():
    layer = layers.UnitNormalization(axis=1, dtype="float64")
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    check_grads(lambda t: layer(t), [x])
    with pytest.raises(ValueError, match="out of range"):
        layers.UnitNormalization(axis=3)(np.ones((2, 3), "float32"))
    with pytest.raises(TypeError, match="axis"):
        layers.UnitNormalization(axis="last")


# --- GroupNormalization --------------------------------------------------------------------------

def _group_norm_reference(x, groups, axis, gamma, beta, eps):
    x = np.moveaxis(x, axis, -1)
    n, c = x.shape[0], x.shape[-1]
    grouped = x.reshape(x.shape[:-1] + (groups, c // groups))
    red = tuple(range(1, grouped.ndim - 2)) + (grouped.ndim - 1,)
    mean = grouped.mean(axis=red, keepdims=True)
    var = grouped.var(axis=red, keepdims=True)
    out = ((grouped - mean) / np.sqrt(var + eps)).reshape(x.shape) * gamma + beta
    assert out.shape[0] == n
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("groups,axis,shape", [(2, -1, (3, 5, 4)), (4, -1, (2, 3, 3, 8)),
                                               (3, 1, (2, 6, 4, 2)), (-1, -1, (2, 5, 3)),
                                               (1, -1, (2, 7, 6))])
def test_group_normalization_values(groups, axis, shape):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype("float32") * 3 + 1
    layer = layers.GroupNormalization(groups=groups, axis=axis, epsilon=1e-3)
    layer.build(x.shape)
    channels = shape[axis]
    gamma, beta = rng.standard_normal(channels), rng.standard_normal(channels)
    layer.set_weights([gamma.astype("float32"), beta.astype("float32")])
    g = channels if groups == -1 else groups
    np.testing.assert_allclose(layer(x).numpy(),
                               _group_norm_reference(x, g, axis % len(shape), gamma, beta, 1e-3),
                               rtol=1e-4, atol=1e-4)


def test_group_normalization_weights_and_errors():
    layer = layers.GroupNormalization(groups=2, center=False)
    layer(np.ones((2, 3, 4), "float32"))
    assert [w.path.split("/")[-1] for w in layer.weights] == ["gamma"]
    assert layers.GroupNormalization(groups=2).count_params() == 0
    full = layers.GroupNormalization(groups=2)
    full.build((None, 4))
    assert [w.path.split("/")[-1] for w in full.weights] == ["gamma", "beta"]
    with pytest.raises(ValueError, match=r"number of groups \(5\) cannot be more than the "
                                         r"number of channels \(4\)"):
        layers.GroupNormalization(groups=5)(np.ones((2, 4), "float32"))
    with pytest.raises(ValueError, match=r"channels \(6\) must be a multiple"):
        layers.GroupNormalization(groups=4)(np.ones((2, 6), "float32"))
    with pytest.raises(ValueError, match="groups must be"):
        layers.GroupNormalization(groups=0)


def test_group_normalization_gradients_central_differences():
    layer = layers.GroupNormalization(groups=2, dtype="float64")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4))
    layer.build(x.shape)
    layer.set_weights([rng.standard_normal(4), rng.standard_normal(4)])
    check_grads(lambda t: layer(t), [x])
    _check_weight_grads(layer, x)


def _check_weight_grads(layer, x):
    """Tape gradients of ``sum(layer(x) * w)`` against central differences per weight."""
    w = np.random.default_rng(9).standard_normal(layer(x).shape)
    check_variable_grads(lambda: tf.reduce_sum(layer(x) * w), layer.trainable_weights,
                         rtol=1e-6, atol=1e-7)


def test_group_normalization_config_round_trip():
    layer = layers.GroupNormalization(groups=4, axis=1, epsilon=1e-5, center=False,
                                      gamma_initializer="zeros")
    config = layer.get_config()
    assert (config["groups"], config["axis"], config["epsilon"], config["center"]) == (
        4, 1, 1e-5, False)
    assert layers.GroupNormalization.from_config(config).get_config() == config


# --- EinsumDense ---------------------------------------------------------------------------------

def test_einsum_dense_keras_io_examples():
    # keras.io EinsumDense examples: the output and kernel shapes
    layer = layers.EinsumDense("ab,bc->ac", output_shape=64, bias_axes="c")
    assert tuple(layer(np.ones((3, 32), "float32")).shape) == (3, 64)
    assert tuple(layer.kernel.shape) == (32, 64) and tuple(layer.bias.shape) == (64,)
    layer = layers.EinsumDense("abc,cd->abd", output_shape=(None, 64), bias_axes="d")
    assert tuple(layer(np.ones((2, 32, 128), "float32")).shape) == (2, 32, 64)
    layer = layers.EinsumDense("...b,bc->...c", output_shape=64, bias_axes="c")
    assert tuple(layer(np.ones((2, 32, 128), "float32")).shape) == (2, 32, 64)
    sym = layers.EinsumDense("abc,cde->abde", output_shape=(4, 2, 3))(keras.Input((4, 5)))
    assert tuple(sym.shape) == (None, 4, 2, 3)


@pytest.mark.parametrize("equation,out_shape,bias_axes,in_shape,kernel,bias", [
    ("abc,cd->abd", (None, 6), "d", (2, 5, 8), (8, 6), (6,)),
    ("ab...,bc->ac...", 3, "c", (2, 5, 8), (5, 3), (3, 1)),
    ("abc,cde->abde", (5, 2, 3), "be", (2, 5, 8), (8, 2, 3), (5, 1, 3)),
    ("...b,bc->...c", 4, None, (2, 3, 5, 8), (8, 4), None)])
def test_einsum_dense_values(equation, out_shape, bias_axes, in_shape, kernel, bias):
    rng = np.random.default_rng(6)
    layer = layers.EinsumDense(equation, out_shape, bias_axes=bias_axes, activation="tanh")
    x = rng.standard_normal(in_shape).astype("float32")
    layer.build(x.shape)
    assert tuple(layer.kernel.shape) == kernel
    assert (None if layer.bias is None else tuple(layer.bias.shape)) == bias
    k = rng.standard_normal(kernel).astype("float32")
    weights = [k] + ([] if bias is None else [rng.standard_normal(bias).astype("float32")])
    layer.set_weights(weights)
    expected = np.einsum(equation, x, k) + (0 if bias is None else weights[1])
    np.testing.assert_allclose(layer(x).numpy(), np.tanh(expected), rtol=1e-5, atol=1e-5)


def test_einsum_dense_gradients_central_differences():
    layer = layers.EinsumDense("abc,cd->abd", (3, 2), bias_axes="bd", dtype="float64")
    x = np.random.default_rng(7).standard_normal((2, 3, 4))
    layer.build(x.shape)
    check_grads(lambda t: layer(t), [x])
    _check_weight_grads(layer, x)


def test_einsum_dense_errors():
    with pytest.raises(ValueError, match="invalid equation"):
        layers.EinsumDense("ab->b", 3)(np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="do not match at the shared dimension 'b'"):
        layers.EinsumDense("abc,cd->abd", (4, 6))(np.ones((2, 5, 8), "float32"))
    with pytest.raises(ValueError, match="bias axis 'x'"):
        layers.EinsumDense("ab,bc->ac", 3, bias_axes="x")(np.ones((2, 5), "float32"))
    with pytest.raises(ValueError, match="weight dimension 'z'"):
        layers.EinsumDense("ab,bz->ab", 5)(np.ones((2, 5), "float32"))


def test_einsum_dense_config_round_trip():
    layer = layers.EinsumDense("abc,cd->abd", output_shape=(None, 6), bias_axes="d",
                               activation="relu")
    config = layer.get_config()
    assert config["equation"] == "abc,cd->abd" and config["output_shape"] == [None, 6]
    assert config["bias_axes"] == "d" and config["activation"] == "relu"
    clone = layers.EinsumDense.from_config(config)
    assert clone.get_config() == config


# --- tf.function, fit, Keras files ---------------------------------------------------------------

def test_layers_in_tf_function_two_calls():
    group = layers.GroupNormalization(groups=2)
    unit = layers.UnitNormalization()
    dense = layers.EinsumDense("abc,cd->abd", (None, 3), bias_axes="d")

    @tf.function
    def f(x):
        return dense(unit(group(x)))

    rng = np.random.default_rng(8)
    for _ in range(2):
        x = rng.standard_normal((2, 3, 4)).astype("float32")
        np.testing.assert_allclose(f(x).numpy(), dense(unit(group(x))).numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_fit_with_new_layers():
    tf.random.set_seed(0)
    rng = np.random.default_rng(10)
    x = rng.standard_normal((64, 6, 4)).astype("float32")
    y = (x.sum(axis=(1, 2)) > 0).astype("float32")[:, None]
    model = keras.Sequential([
        keras.Input((6, 4)), layers.GroupNormalization(groups=2),
        layers.SpatialDropout1D(0.1), layers.EinsumDense("abc,cd->abd", (None, 8),
                                                         bias_axes="d", activation="relu"),
        layers.GaussianDropout(0.1), layers.Flatten(), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy")
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0] * 0.8


def test_keras_weights_file_reproduces_keras_outputs(tmp_path):
    model = misc_norm_einsum(keras)
    data = np.load(os.path.join(FIXTURES, "misc_norm_einsum.npz"))
    model.load_weights(os.path.join(FIXTURES, "misc_norm_einsum.weights.h5"))
    outputs = model(data["x0"])
    for j, out in enumerate(outputs):
        assert np.abs(data[f"y{j}"]).max() > 0.1
        np.testing.assert_allclose(out.numpy(), data[f"y{j}"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layers.UnitNormalization()(data["unit_tiny_in"]).numpy(),
                               data["unit_tiny"], rtol=1e-5)
    model.save_weights(tmp_path / "mine.weights.h5")
    assert h5_layout.listing(tmp_path / "mine.weights.h5") == h5_layout.listing(
        os.path.join(FIXTURES, "misc_norm_einsum.weights.h5"))
    again = misc_norm_einsum(keras)
    again.load_weights(tmp_path / "mine.weights.h5")
    for a, b in zip(again(data["x0"]), outputs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
