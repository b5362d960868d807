"""Conv3D, Conv3DTranspose, Conv1DTranspose, the 3-D pooling layers, UpSampling3D,
ZeroPadding3D and Cropping3D: outputs against numpy, gradients, tf.function, training,
configs, weight files and errors.

The ``conv3d_*`` fixtures in ``tests/fixtures/keras`` were written by Keras 3.15 (numpy backend)
with ``tools/make_conv3d_fixtures.py``: Keras built the models defined there (the same code
builds them here, ``K`` = ``keras``), gave every weight ``normal(0, 0.5)`` values, saved them with ``save_weights`` and
recorded its inference outputs ``y0, y1...`` for the input ``x0`` and the keys of each layer's
``get_config()``.
"""
import json
import os
import sys

import numpy as np
import pytest

import h5_layout
import minitf as tf
from minitf import keras
from minitf.testing import check_variable_grads
from minitf.keras import layers
from tests.conv3d_reference import conv3d_loops

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
sys.path.insert(0, os.path.join(ROOT, "tools"))
from make_conv3d_fixtures import MODELS  # noqa: E402 - the models the fixtures were made from
RNG = np.random.default_rng(0)


def _randomize(layer, seed=1):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.standard_normal(v.shape.as_list()) * 0.5)


@pytest.mark.parametrize("kernel_size,strides,dilation", [
    ((3, 2, 3), (1, 1, 1), (1, 1, 1)), ((2, 2, 2), (2, 1, 2), (1, 1, 1)),
    ((2, 3, 2), (1, 1, 1), (2, 1, 1))])
def test_conv3d_layer_matches_loops(kernel_size, strides, dilation):
    layer = layers.Conv3D(4, kernel_size, strides=strides, dilation_rate=dilation,
                          activation="relu", dtype="float64")
    x = RNG.standard_normal((2, 5, 6, 5, 3))
    layer.build(x.shape)
    _randomize(layer)
    assert layer.kernel.shape == kernel_size + (3, 4) and layer.bias.shape == (4,)
    assert [v.path.split("/", 1)[1] for v in layer.weights] == ["kernel", "bias"]
    want = np.maximum(conv3d_loops(x, layer.kernel.numpy(), strides, dilations=dilation)
                      + layer.bias.numpy(), 0)
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-12, atol=1e-12)
    assert layer.compute_output_shape((None, 5, 6, 5, 3)) == (None,) + want.shape[1:]


def test_transposed_layers_are_input_gradients_of_the_forward_convolution():
    layer = layers.Conv3DTranspose(3, (2, 3, 2), strides=(2, 1, 3), padding="same",
                                   use_bias=False, dtype="float64")
    y = RNG.standard_normal((2, 3, 4, 2, 5))
    out = layer(y)
    assert layer.kernel.shape == (2, 3, 2, 3, 5) and out.shape == (2, 6, 4, 6, 3)
    x = tf.Variable(np.zeros(out.shape))
    with tf.GradientTape() as tape:
        fwd = tf.nn.conv3d(x, layer.kernel, (2, 1, 3), "SAME")
        loss = tf.reduce_sum(fwd * y)
    np.testing.assert_allclose(out.numpy(), tape.gradient(loss, x).numpy(), rtol=1e-12)

    one = layers.Conv1DTranspose(2, 3, strides=2, padding="valid", dtype="float64")
    v = RNG.standard_normal((2, 5, 4))
    out = one(v)
    _randomize(one)
    out = one(v)
    assert one.kernel.shape == (3, 2, 4) and out.shape == (2, 11, 2)
    x = tf.Variable(np.zeros(out.shape))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.conv1d(x, one.kernel, 2, "VALID") * v)
    np.testing.assert_allclose(out.numpy(), tape.gradient(loss, x).numpy() + one.bias.numpy(),
                               rtol=1e-12)
    # Keras 3's lengths: valid with stride > kernel, and output_padding
    assert layers.Conv1DTranspose(1, 2, strides=3).compute_output_shape((None, 4, 1)) == (
        None, 12, 1)
    assert layers.Conv1DTranspose(1, 3, strides=2, padding="same", output_padding=1
                                  ).compute_output_shape((None, 4, 1)) == (None, 8, 1)


def test_pooling_and_reshaping_layers_match_numpy():
    x = RNG.standard_normal((2, 4, 6, 4, 3)).astype("float32")
    blocks = x.reshape(2, 2, 2, 3, 2, 2, 2, 3)
    np.testing.assert_array_equal(layers.MaxPooling3D()(x).numpy(),
                                  blocks.max(axis=(2, 4, 6)))
    np.testing.assert_allclose(layers.AveragePooling3D()(x).numpy(),
                               blocks.mean(axis=(2, 4, 6)), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(layers.GlobalMaxPooling3D()(x).numpy(), x.max(axis=(1, 2, 3)))
    np.testing.assert_allclose(layers.GlobalAveragePooling3D(keepdims=True)(x).numpy(),
                               x.mean(axis=(1, 2, 3), keepdims=True), rtol=1e-6)
    up = layers.UpSampling3D((2, 1, 3))(x).numpy()
    np.testing.assert_array_equal(up, x.repeat(2, axis=1).repeat(3, axis=3))
    padded = layers.ZeroPadding3D(((1, 0), 2, (0, 3)))(x).numpy()
    np.testing.assert_array_equal(padded, np.pad(x, [(0, 0), (1, 0), (2, 2), (0, 3), (0, 0)]))
    cropped = layers.Cropping3D(((1, 0), 2, (0, 1)))(x).numpy()
    np.testing.assert_array_equal(cropped, x[:, 1:, 2:-2, :-1])
    assert layers.Cropping3D(((1, 0), 2, (0, 1))).compute_output_shape(
        (None, 4, 6, 4, 3)) == (None, 3, 2, 3, 3)


def test_layer_gradients_match_central_differences():
    layer = layers.Conv3D(2, (2, 2, 2), strides=(1, 2, 1), padding="same", activation="tanh",
                          dtype="float64")
    x = RNG.standard_normal((1, 3, 4, 3, 2))
    layer(x)
    _randomize(layer)
    target = RNG.standard_normal((1, 3, 2, 3, 2))

    def loss():
        return tf.reduce_sum((layer(x) - target) ** 2)

    check_variable_grads(loss, layer.trainable_variables, rtol=1e-6, atol=1e-8)


def test_layers_in_tf_function_over_two_calls():
    conv = layers.Conv3D(3, 2, dtype="float64")
    conv.build((None, 4, 4, 4, 2))
    _randomize(conv)
    pool = layers.MaxPooling3D(pool_size=(1, 3, 3), strides=1, dtype="float64")

    @tf.function
    def run(x):
        return pool(conv(x))

    for _ in range(2):
        x = RNG.standard_normal((2, 4, 4, 4, 2))
        y = conv3d_loops(x, conv.kernel.numpy()) + conv.bias.numpy()
        want = y.max(axis=(2, 3), keepdims=True)   # one 3x3 window covers each 3x3 slice
        np.testing.assert_allclose(run(tf.constant(x)).numpy(), want, rtol=1e-12)


def _small_net():
    return keras.Sequential([keras.Input((4, 6, 6, 1)),
                             layers.Conv3D(4, 3, padding="same", activation="relu"),
                             layers.MaxPooling3D((1, 2, 2)),
                             layers.Conv3D(4, 2, activation="relu"),
                             layers.GlobalAveragePooling3D(), layers.Dense(1)])


def test_fit_reduces_the_loss():
    tf.random.set_seed(0)
    model = _small_net()
    x = RNG.standard_normal((64, 4, 6, 6, 1)).astype("float32")
    y = x.mean(axis=(1, 2, 3, 4))[:, None] * 12.0     # variance about 1
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    losses = model.fit(x, y, epochs=25, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.3 * losses[0] and losses[-1] < 0.3 * y.var()


def test_configs_round_trip():
    made = [layers.Conv3D(3, (1, 2, 3), strides=2, padding="same", activation="relu"),
            layers.Conv3DTranspose(2, 3, strides=2, output_padding=1),
            layers.Conv1DTranspose(4, 3, dilation_rate=2, use_bias=False),
            layers.MaxPooling3D(3, strides=(1, 2, 1)), layers.AveragePooling3D(padding="same"),
            layers.GlobalMaxPooling3D(keepdims=True), layers.GlobalAveragePooling3D(),
            layers.UpSampling3D(3), layers.ZeroPadding3D(2), layers.Cropping3D((1, 2, 0))]
    for layer in made:
        config = layer.get_config()
        again = layers.deserialize(layers.serialize(layer))
        assert type(again) is type(layer) and again.get_config() == config
    assert made[0].get_config()["kernel_size"] == (1, 2, 3)
    assert made[0].get_config()["strides"] == (2, 2, 2)
    assert made[1].get_config()["output_padding"] == (1, 1, 1)
    assert made[2].get_config()["dilation_rate"] == (2,)
    assert made[9].get_config()["cropping"] == ((1, 1), (2, 2), (0, 0))


def test_weights_h5_and_archive_round_trip(tmp_path):
    model = _small_net()
    x = RNG.standard_normal((2, 4, 6, 6, 1)).astype("float32")
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
    with pytest.raises(ValueError, match="padding must be 'valid' or 'same'"):
        layers.Conv3D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="only data_format='channels_last'"):
        layers.MaxPooling3D(data_format="channels_first")
    with pytest.raises(ValueError, match=r"kernel_size must be an int or 3 ints"):
        layers.Conv3D(2, (3, 3))
    with pytest.raises(ValueError, match=r"output_padding \(2,\) must be smaller than strides"):
        layers.Conv1DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match=r"expects inputs \(batch, depth, height, width, "
                                         r"channels\)"):
        layers.Conv3D(2, 3)(np.zeros((2, 5, 5, 5)))
    with pytest.raises(ValueError, match=r"expects inputs \(batch, depth, height, width"):
        layers.UpSampling3D()(np.zeros((2, 5, 5, 5)))
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping3D(2)(np.zeros((1, 4, 6, 6, 1)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="conv3d: a 3x3x3 filter"):
        layers.Conv3D(2, 3)(np.zeros((1, 2, 5, 5, 1)))


# --- Keras 3 files -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(MODELS))
def test_keras_files_reproduce_keras_outputs_and_configs(name, tmp_path):
    model = MODELS[name](keras)
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    outputs = [k for k in sorted(data.files) if k.startswith("y")]
    if model.weights:
        assert np.abs(model(data["x0"]).numpy() - data["y0"]).max() > 1e-2
        model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    got = model(data["x0"])
    got = got if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(outputs)
    for y, key in zip(got, outputs):
        assert np.abs(data[key]).max() > 0.1
        np.testing.assert_allclose(y.numpy(), data[key], rtol=1e-5, atol=1e-5)
    keras_keys = [(cls, keys) for cls, keys in json.loads(str(data["config_keys"]))
                  if cls != "InputLayer"]
    mine = [(type(layer).__name__, sorted(layer.get_config())) for layer in model.layers
            if type(layer).__name__ != "InputLayer"]
    assert [tuple(k) for k in keras_keys] == mine
    if model.weights:
        model.save_weights(tmp_path / "mine.weights.h5")
        assert h5_layout.listing(tmp_path / "mine.weights.h5") == h5_layout.listing(
            os.path.join(FIXTURES, f"{name}.weights.h5"))
