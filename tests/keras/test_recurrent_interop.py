"""Recurrent models against files real Keras 3.15 wrote (``tests/fixtures/keras/rnn_*``,
from ``tools/make_rnn_fixtures.py``): Keras' ``.weights.h5`` and ``.keras`` files load into minitf
and reproduce Keras' outputs, and minitf writes the same weight-file layout."""
import os
import sys

import h5py
import numpy as np
import pytest

import h5_layout
from minitf import keras

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import rnn_fixture_models as rnn_models  # noqa: E402


def _data(name):
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    x = [data["x"], data["x2"]] if "x2" in data else data["x"]
    return x, data["y"]


@pytest.mark.parametrize("name", sorted(rnn_models.MODELS))
def test_keras_weights_reproduce_keras_outputs(name):
    model = rnn_models.MODELS[name](keras)
    rnn_models.randomize(model.weights, seed=1)
    x, y = _data(name)
    assert np.abs(model(x, training=False).numpy() - y).max() > 1e-2
    model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    np.testing.assert_allclose(model(x, training=False).numpy(), y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(rnn_models.MODELS))
def test_keras_archive_loads(name):
    model = keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"))
    x, y = _data(name)
    np.testing.assert_allclose(model(x, training=False).numpy(), y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(rnn_models.MODELS))
def test_written_layout_equals_keras_layout(name, tmp_path):
    model = rnn_models.MODELS[name](keras)
    path = tmp_path / f"{name}.weights.h5"
    model.save_weights(path)
    assert h5_layout.listing(path) == h5_layout.listing(os.path.join(FIXTURES, f"{name}.weights.h5"))


def test_keras_file_variables_land_in_the_cells():
    """The file's ``layers/<rnn>/cell/vars/0..2`` are kernel, recurrent kernel and bias."""
    model = rnn_models.rnn_gru(keras)
    path = os.path.join(FIXTURES, "rnn_gru.weights.h5")
    model.load_weights(path)
    with h5py.File(path, "r") as f:
        for layer, group in [(model.layers[0], "gru"), (model.layers[1], "gru_1")]:
            cell = layer.cell
            for i, var in enumerate([cell.kernel, cell.recurrent_kernel, cell.bias]):
                np.testing.assert_array_equal(var.numpy(), f[f"layers/{group}/cell/vars/{i}"][()])
    assert model.layers[0].cell.bias.shape == (2, 12)     # reset_after=True
    assert model.layers[1].cell.bias.shape == (9,)        # reset_after=False
