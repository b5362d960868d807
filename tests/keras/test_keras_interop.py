"""Keras 3 ``.weights.h5`` interchange against files real Keras 3.15 wrote.

The fixtures in ``tests/fixtures/keras`` come from ``tools/make_keras_fixtures.py``: Keras built
the models of ``tools/keras_fixture_models.py`` with seeded random weights, saved them with
``model.save_weights`` and recorded its inference outputs on fixed inputs. The layout rules
checked here are those of Keras 3's ``keras/src/saving/saving_lib.py``.
"""
import os
import sys

import h5py
import numpy as np
import pytest

from minitf import keras

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import keras_fixture_models as fm  # noqa: E402


def _groups(path):
    found = {}
    with h5py.File(path, "r") as f:
        assert dict(f.attrs) == {}
        f.visititems(lambda n, o: found.__setitem__(n, getattr(o, "shape", None)))
    return found


@pytest.mark.parametrize("name", sorted(fm.MODELS))
def test_keras_file_loads_and_reproduces_keras_outputs(name):
    model = fm.MODELS[name](keras)
    fm.randomize(model.weights, seed=1)
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    before = model(data["x"], training=False).numpy()
    assert np.max(np.abs(before - data["y"])) > 1e-2  # the fixture's weights differ
    model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    np.testing.assert_allclose(model(data["x"], training=False).numpy(), data["y"],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(fm.MODELS))
def test_written_layout_equals_keras_layout(name, tmp_path):
    model = fm.MODELS[name](keras)
    path = tmp_path / f"{name}.weights.h5"
    model.save_weights(path)
    assert _groups(path) == _groups(os.path.join(FIXTURES, f"{name}.weights.h5"))


def test_batch_normalization_stores_four_variables_in_keras_order():
    model = fm.cnn(keras)
    model.load_weights(os.path.join(FIXTURES, "cnn.weights.h5"))
    bn = model.layers[1]
    with h5py.File(os.path.join(FIXTURES, "cnn.weights.h5"), "r") as f:
        group = f["layers/batch_normalization/vars"]
        assert sorted(group) == ["0", "1", "2", "3"]
        for i, var in enumerate([bn.gamma, bn.beta, bn.moving_mean, bn.moving_variance]):
            np.testing.assert_array_equal(var.numpy(), group[str(i)][()])
        assert (group["3"][()] > 0).all()  # moving_variance
        assert list(f["layers/max_pooling2d/vars"]) == []
        assert list(f["layers/flatten/vars"]) == []


def test_subclassed_paths_follow_attributes():
    """Attributes are visited in sorted order and the ``layers`` property is one of them: it
    reaches ``norm`` and ``stem`` (sorted after it) first, under their class names."""
    with h5py.File(os.path.join(FIXTURES, "subclassed.weights.h5"), "r") as f:
        for path in ("blocks/dense/vars/0", "blocks/dense_1/vars/1", "head/layers/dense/vars/0",
                     "layers/batch_normalization/vars/3", "layers/dense/vars/0", "vars"):
            assert path in f
        assert "norm" not in f and "stem" not in f


def test_mismatch_names_the_layer_and_shapes():
    L = keras.layers
    wrong = keras.Sequential([keras.Input((8,)), L.Dense(15, activation="relu"), L.Dense(4)])
    before = [v.numpy().copy() for v in wrong.weights]
    with pytest.raises(ValueError) as info:
        wrong.load_weights(os.path.join(FIXTURES, "mlp.weights.h5"))
    message = str(info.value)
    assert "layer 'dense" in message and "/layers/dense/vars" in message
    assert "model (8, 15), file (8, 16)" in message
    for v, old in zip(wrong.weights, before):  # nothing assigned
        np.testing.assert_array_equal(v.numpy(), old)
    missing = keras.Sequential([keras.Input((8,)), L.Dense(16), L.Dense(4), L.Dense(2)])
    with pytest.raises(ValueError, match=r"layers/dense_2/vars\): missing from the file; "
                                         r"the model has 2 variable\(s\) \[kernel \(4, 2\)"):
        missing.load_weights(os.path.join(FIXTURES, "mlp.weights.h5"))
    short = keras.Sequential([keras.Input((8,)), L.Dense(16)])
    with pytest.raises(ValueError, match=r"layers in the file that the model does not have: "
                                         r"/layers/dense_1/vars"):
        short.load_weights(os.path.join(FIXTURES, "mlp.weights.h5"))


@pytest.mark.parametrize("name", fm.ARCHIVED)
def test_keras_archive_loads_with_load_model(name):
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    model = keras.models.load_model(os.path.join(FIXTURES, f"{name}.keras"))
    reference = fm.MODELS[name](keras)
    assert [type(a).__name__ for a in model.layers] == \
        [type(b).__name__ for b in reference.layers]
    np.testing.assert_allclose(model(data["x"], training=False).numpy(), data["y"],
                               rtol=1e-5, atol=1e-5)


def test_keras_only_options_must_be_neutral(tmp_path):
    import json
    import zipfile
    source = os.path.join(FIXTURES, "mlp.keras")
    with zipfile.ZipFile(source) as zf:
        config = json.loads(zf.read("config.json"))
        files = {n: zf.read(n) for n in zf.namelist()}
    config["config"]["layers"][1]["config"]["lora_rank"] = 4
    files["config.json"] = json.dumps(config).encode()
    path = tmp_path / "lora.keras"
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in files.items():
            zf.writestr(n, data)
    with pytest.raises(ValueError, match=r"Dense: the Keras option lora_rank=4 is not supported"):
        keras.models.load_model(path)


def test_optimizer_group_from_keras_loads_into_a_built_optimizer():
    data = np.load(os.path.join(FIXTURES, "mlp_adam.npz"))
    keras_values = [data[f"optimizer_{i}"] for i in range(10)]
    assert int(keras_values[0]) == 7 and keras_values[1] == np.float32(0.0025)
    model = fm.mlp_adam(keras)
    model.load_weights(os.path.join(FIXTURES, "mlp_adam.weights.h5"))
    variables = model.optimizer.variables
    assert len(variables) == 10  # iteration, learning rate, (m, v) for 4 variables
    for v, want in zip(variables, keras_values):
        np.testing.assert_array_equal(np.asarray(v.numpy()), want.astype(v.numpy().dtype))
    assert model.optimizer.iterations.numpy() == 7
    np.testing.assert_allclose(model(data["x"], training=False).numpy(), data["y"],
                               rtol=1e-5, atol=1e-5)


def test_optimizer_group_is_skipped_with_a_message_when_it_does_not_fit(caplog):
    data = np.load(os.path.join(FIXTURES, "mlp_adam.npz"))
    plain = fm.mlp(keras)  # not compiled: the group is ignored
    plain.load_weights(os.path.join(FIXTURES, "mlp_adam.weights.h5"))
    np.testing.assert_allclose(plain(data["x"]).numpy(), data["y"], rtol=1e-5, atol=1e-5)
    unbuilt = fm.mlp(keras)
    unbuilt.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    with caplog.at_level("WARNING", logger="minitf"):
        unbuilt.load_weights(os.path.join(FIXTURES, "mlp_adam.weights.h5"))
    assert "skipped the optimizer variables" in caplog.text
    np.testing.assert_allclose(unbuilt(data["x"]).numpy(), data["y"], rtol=1e-5, atol=1e-5)


def test_compiled_model_writes_the_optimizer_group(tmp_path):
    model = fm.mlp_adam(keras)
    values = fm.randomize_optimizer(model.optimizer, seed=5)
    model.save_weights(tmp_path / "m.weights.h5")
    assert _groups(tmp_path / "m.weights.h5") == _groups(
        os.path.join(FIXTURES, "mlp_adam.weights.h5"))
    with h5py.File(tmp_path / "m.weights.h5", "r") as f:
        assert f["optimizer/vars"].attrs["name"] == model.optimizer.name
        for i, want in enumerate(values):
            np.testing.assert_array_equal(f[f"optimizer/vars/{i}"][()], want)
