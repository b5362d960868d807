"""Keras' legacy HDF5 model format (``model.save("m.h5")``): files real Keras 3.15 wrote load
and reproduce Keras' outputs (fixtures from ``tools/make_keras_fixtures.py``, which also checks
that Keras loads the files minitf writes), minitf's own files round-trip with their optimizer
state, and mismatches are refused before anything is assigned."""
import os
import sys

import h5py
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import legacy_h5

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import keras_fixture_models as fm  # noqa: E402


@pytest.mark.parametrize("name", fm.ARCHIVED)
def test_keras_written_h5_model_loads_with_keras_outputs(name):
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    model = keras.models.load_model(os.path.join(FIXTURES, f"{name}.h5"))
    np.testing.assert_allclose(model(data["x"], training=False).numpy(), data["y"],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", fm.ARCHIVED)
def test_load_weights_reads_the_layers_of_a_keras_h5_model_file(name):
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    model = fm.MODELS[name](keras)
    model.load_weights(os.path.join(FIXTURES, f"{name}.h5"))
    np.testing.assert_allclose(model(data["x"], training=False).numpy(), data["y"],
                               rtol=1e-5, atol=1e-5)


def _trained(tmp_path):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 4)).astype("float32"), rng.normal(size=(16, 2))
    model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    return model, x, y


def test_round_trip_keeps_weights_compile_and_optimizer_state(tmp_path):
    model, x, y = _trained(tmp_path)
    path = tmp_path / "model.h5"
    model.save(path)
    with h5py.File(path, "r") as f:
        assert [n.decode() for n in f["model_weights"].attrs["layer_names"]] == \
            [layer.name for layer in model.layers]
        assert "training_config" in f.attrs and "optimizer_weights" in f
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert int(loaded.optimizer.iterations.numpy()) == 4
    for a, b in zip(model.optimizer.variables, loaded.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # training continues exactly where it stopped
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    loaded.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    uncompiled = keras.models.load_model(path, compile=False)
    assert not uncompiled.compiled


def test_mismatches_name_the_layers_and_assign_nothing(tmp_path):
    model, x, _ = _trained(tmp_path)
    path = tmp_path / "model.h5"
    model.save(path)
    wider = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(2)])
    before = [w.numpy() for w in wider.weights]
    with pytest.raises(ValueError, match=r"layer 'dense_\d+': .*kernel has shape \(4, 5\)"):
        wider.load_weights(path)
    for w, b in zip(wider.weights, before):
        np.testing.assert_array_equal(w.numpy(), b)
    shorter = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="weights for 3 layers .* has 1 layers"):
        shorter.load_weights(path)


def test_weights_only_and_non_hdf5_files_are_refused_clearly(tmp_path):
    model, _, _ = _trained(tmp_path)
    weights = tmp_path / "w.h5"
    with h5py.File(weights, "w") as f:
        legacy_h5.write_model_weights(f, model)
    with pytest.raises(ValueError, match="no model_config .* model.load_weights"):
        keras.models.load_model(weights)
    fresh = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dense(2)])
    fresh.load_weights(weights)                        # tf.keras' save_weights("w.h5") layout
    for a, b in zip(fresh.weights, model.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    text = tmp_path / "bad.h5"
    text.write_text("not hdf5")
    with pytest.raises(ValueError, match="not an HDF5 file"):
        keras.models.load_model(text)


def test_long_name_lists_are_split_as_keras_splits_them(tmp_path):
    names = [f"layer_{i:05d}_" + "x" * 200 for i in range(400)]     # ~83 kB of names
    with h5py.File(tmp_path / "n.h5", "w") as f:
        legacy_h5._write_names(f, "layer_names", names)
        assert "layer_names" not in f.attrs and "layer_names0" in f.attrs
        assert legacy_h5._names(f, "layer_names") == names


def test_save_refuses_an_unbuilt_model_and_writes_nothing(tmp_path):
    model = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="not built"):
        model.save(tmp_path / "m.h5")
    assert os.listdir(tmp_path) == []
    assert tf.keras.models.load_model is keras.models.load_model
