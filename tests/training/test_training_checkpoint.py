"""HDF5 checkpoint files: exact dict round trips, atomic writes, clear errors on bad files."""
import os

import h5py
import numpy as np
import pytest

from minitf.training import checkpoint as ck
from minitf.training.checkpoint import CheckpointError


def _roundtrip(tmp_path, tree):
    path = str(tmp_path / "t.h5")
    ck.atomic_write(path, lambda f: ck.write_tree(f.create_group("s"), tree))
    with h5py.File(path, "r") as f:
        return ck.read_tree(f["s"])


def test_bit_generator_state_round_trips_exactly(tmp_path):
    rng = np.random.Generator(np.random.PCG64(2 ** 62 + 7))
    rng.random(13)
    rng.integers(0, 10, 3, dtype=np.uint32)  # leaves has_uint32 set
    state = rng.bit_generator.state
    assert state["state"]["state"] >= 2 ** 64  # 128-bit ints: stored as strings
    back = _roundtrip(tmp_path, {"rng": state})["rng"]
    assert back == state
    fresh = np.random.Generator(np.random.PCG64())
    fresh.bit_generator.state = back
    assert np.array_equal(fresh.random(5), rng.random(5))


def test_types_keys_and_values_round_trip(tmp_path):
    tree = {
        "slots/dense/kernel/m": np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3),
        "half": np.array([1.5, -2.25], dtype=np.float16),
        "scalar_array": np.array(3.0),
        "iterations": 7, "big": -(2 ** 100), "lr": 0.1 + 0.2, "nan": float("nan"),
        "name": "Adam", "flag": True, "nothing": None, "np_scalar": np.float32(0.5),
        "np_int": np.int64(-3), ".": 1, "": 2, "%": "percent", "__minitf_types__": "clash",
        "nested": {"list": [1, "two", {"three": 3.0}], "tuple": (4, 5)},
    }
    back = _roundtrip(tmp_path, tree)
    assert list(back) == list(tree)
    for key, value in tree.items():
        got = back[key]
        assert type(got) is type(value), key
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and got.shape == value.shape
            assert np.array_equal(got, value)
        elif key == "nan":
            assert np.isnan(got)
        else:
            assert got == value, key


def test_path_keyed_state_is_stored_as_nested_groups(tmp_path):
    optimizer = {"optimizer": "Adam", "iterations": 3,
                 "slots/mlp/dense/kernel/m": np.ones((2, 2), np.float32),
                 "slots/mlp/dense/kernel/v": np.zeros((2, 2), np.float32),
                 "accumulators/mlp/dense/kernel": np.full((2, 2), 0.5, np.float32)}
    ambiguous = {"a": 1, "a/b": 2}  # "a" would be a leaf and a group: kept flat
    path = str(tmp_path / "t.h5")
    tree = {"optimizer": optimizer, "ambiguous": ambiguous}
    ck.atomic_write(path, lambda f: ck.write_tree(f.create_group("s"), tree))
    with h5py.File(path, "r") as f:
        assert f["s/optimizer/slots/mlp/dense/kernel/m"].shape == (2, 2)
        assert f["s/optimizer"].attrs["iterations"] == 3
        back = ck.read_tree(f["s"])
    assert back["ambiguous"] == ambiguous
    assert back["optimizer"].keys() == optimizer.keys()
    for key, value in optimizer.items():
        assert np.array_equal(back["optimizer"][key], value)


def test_unsupported_values_name_the_entry(tmp_path):
    with pytest.raises(TypeError, match="/outer/obj"):
        _roundtrip(tmp_path, {"outer": {"obj": object()}})
    with pytest.raises(TypeError, match="keys must be strings"):
        _roundtrip(tmp_path, {1: 2})


def _write_minimal(path, step=1, version=ck.FORMAT_VERSION):
    def fill(f):
        f.attrs["format"] = ck.FORMAT
        f.attrs["format_version"] = version
        f.attrs["step"] = step
        f.attrs["config"] = "seed: 0\n"
        f.create_group("model_weights")
        ck.write_tree(f.create_group("state"), {"x": np.arange(3)})
    ck.atomic_write(path, fill)


def test_a_failed_save_leaves_the_previous_file_intact(tmp_path):
    path = str(tmp_path / "ckpt.h5")
    _write_minimal(path, step=1)

    def explode(f):
        f.create_dataset("big", data=np.zeros(1000))
        raise KeyboardInterrupt  # a kill-like interruption in the middle of writing

    with pytest.raises(KeyboardInterrupt):
        ck.atomic_write(path, explode)
    with ck.open_checkpoint(path) as c:
        assert c.step == 1
        assert np.array_equal(c.read_state()["x"], np.arange(3))
    assert os.listdir(tmp_path) == ["ckpt.h5"]  # no temporary left behind


def test_stale_temporaries_are_removed(tmp_path):
    (tmp_path / ".tmp-ckpt-00000010.h5.abc.tmp").write_bytes(b"partial")
    (tmp_path / "keep.txt").write_text("x")
    ck.remove_stale_temporaries(str(tmp_path))
    assert os.listdir(tmp_path) == ["keep.txt"]


def test_missing_corrupt_and_foreign_files(tmp_path):
    with pytest.raises(CheckpointError, match="no such file"):
        ck.open_checkpoint(str(tmp_path / "nope.h5"))
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"this is not hdf5" * 100)
    with pytest.raises(CheckpointError, match=r"junk\.h5: not a readable HDF5 file"):
        ck.open_checkpoint(str(junk))
    good = str(tmp_path / "good.h5")
    _write_minimal(good)
    data = (tmp_path / "good.h5").read_bytes()
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes(data[:len(data) // 2])
    with pytest.raises(CheckpointError, match=r"truncated\.h5"):
        with ck.open_checkpoint(str(truncated)) as c:
            c.read_state()
    foreign = str(tmp_path / "foreign.h5")
    with h5py.File(foreign, "w") as f:
        f.create_dataset("weights", data=np.ones(3))
    with pytest.raises(CheckpointError, match=r"foreign\.h5: an HDF5 file but not a minitf"):
        ck.open_checkpoint(foreign)
    future = str(tmp_path / "future.h5")
    _write_minimal(future, version=ck.FORMAT_VERSION + 1)
    with pytest.raises(CheckpointError, match="newer than"):
        ck.open_checkpoint(future)
    with pytest.raises(CheckpointError, match="is a directory"):
        ck.open_checkpoint(str(tmp_path))


def test_a_damaged_state_group_is_reported_with_the_file(tmp_path):
    path = str(tmp_path / "damaged.h5")
    _write_minimal(path)
    with h5py.File(path, "a") as f:
        del f["state"].attrs[ck._TYPES]
    with ck.open_checkpoint(path) as c:
        with pytest.raises(CheckpointError, match=r"damaged\.h5: cannot read the training state"):
            c.read_state()


def test_listing_latest_and_pruning(tmp_path):
    d = str(tmp_path)
    assert ck.latest_checkpoint(d) is None
    for step in (5, 100, 20, 7):
        _write_minimal(os.path.join(d, ck.checkpoint_name(step)), step)
    _write_minimal(os.path.join(d, "best.h5"))
    assert [s for s, _ in ck.list_checkpoints(d)] == [5, 7, 20, 100]
    assert ck.latest_checkpoint(d).endswith("ckpt-00000100.h5")
    ck.prune_checkpoints(d, keep_last=2)
    assert sorted(os.listdir(d)) == ["best.h5", "ckpt-00000020.h5", "ckpt-00000100.h5"]


def _small_model(seed):
    from minitf import keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4),
                              keras.layers.BatchNormalization(), keras.layers.Dense(2)])
    rng = np.random.default_rng(seed)
    for v in model.weights:
        v.assign(rng.standard_normal(tuple(v.shape)).astype("float32"))
    return model


def test_model_weights_use_the_keras_layout_and_older_checkpoints_load(tmp_path):
    from minitf.keras import saving
    model = _small_model(0)
    path = str(tmp_path / "ckpt.h5")
    ck.save_checkpoint(path, model=model, state={"x": 1}, attrs={"step": 1, "epoch": 0},
                       config_text="", write_weights=saving.write_weights)
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["model_weights/layers/batch_normalization/vars/2"][()],
                                      model.layers[1].moving_mean.numpy())
    fresh = _small_model(1)
    with ck.open_checkpoint(path) as c:
        c.read_weights(fresh, saving.read_weights)
    for a, b in zip(model.weights, fresh.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    fresh = _small_model(2)
    fresh.load_weights(path)  # model.load_weights reads a checkpoint's weights too
    np.testing.assert_array_equal(fresh.layers[2].kernel.numpy(), model.layers[2].kernel.numpy())

    # the path layout of older checkpoints (one dataset per variable path) still loads
    model._assign_paths()
    old = str(tmp_path / "old.h5")
    ck.save_checkpoint(old, model=model.weights, state={"x": 1}, attrs={"step": 1, "epoch": 0},
                       config_text="", write_weights=saving.write_weights)
    fresh = _small_model(3)
    with ck.open_checkpoint(old) as c:
        c.read_weights(fresh, saving.read_weights)
    for a, b in zip(model.weights, fresh.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    from minitf import keras  # an architecture that does not fit gives a clear error
    keras_wrong = keras.Sequential([keras.Input((3,)), keras.layers.Dense(5)])
    with ck.open_checkpoint(path) as c:
        with pytest.raises(CheckpointError, match=r"(?s)do not fit the model.*layers/dense/"
                                                  r"vars.*model \(3, 5\), file \(3, 4\)"):
            c.read_weights(keras_wrong, saving.read_weights)


_SAVER = r"""
import sys
import numpy as np
from minitf import keras
from minitf.keras import saving
from minitf.training import checkpoint as ck

model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256),
                          keras.layers.BatchNormalization(), keras.layers.Dense(10)])
path, step = sys.argv[1], 0
print("ready", flush=True)
while True:  # keeps rewriting one checkpoint until it is killed
    step += 1
    for v in model.weights:
        v.assign(np.full(tuple(v.shape), float(step), "float32"))
    ck.save_checkpoint(path, model=model, state={"step": step, "big": np.zeros(20000) + step},
                       attrs={"step": step, "epoch": 0}, config_text="",
                       write_weights=saving.write_weights)
"""


def test_kill_9_during_saves_leaves_a_loadable_checkpoint(tmp_path):
    """SIGKILL at random moments of a save loop: the file on disk is always a whole checkpoint
    whose weights and state agree (one save, never a mix)."""
    import signal
    import subprocess
    import sys
    import time

    from minitf import keras
    from minitf.keras import saving
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = str(tmp_path / "ckpt.h5")
    rng = np.random.default_rng(0)
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", _SAVER, path], cwd=root,
                                stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": root})
        assert proc.stdout.readline().strip() == b"ready"
        deadline = time.monotonic() + 30
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(float(rng.uniform(0.05, 0.4)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256),
                                  keras.layers.BatchNormalization(), keras.layers.Dense(10)])
        with ck.open_checkpoint(path) as c:
            state = c.read_state()
            c.read_weights(model, saving.read_weights)
            step = c.step
        assert state["step"] == step and np.all(state["big"] == step)
        for v in model.weights:
            assert np.all(v.numpy() == step)
        ck.remove_stale_temporaries(str(tmp_path))
        assert os.listdir(tmp_path) == ["ckpt.h5"]
