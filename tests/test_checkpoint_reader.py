"""Reading checkpoints: ``tf.train.load_checkpoint``, ``list_variables``, ``load_variable``,
``get_checkpoint_state``, ``latest_checkpoint``, ``checkpoints_iterator``,
``CheckpointOptions`` and ``TrackableView``.

TF's names, shapes, dtypes, scalar results and error messages below were read from TF 2.21
writing the same objects (a ``tf.Module`` with sub-modules, a list and a dict; an Adam step;
``CheckpointManager(max_to_keep=2)`` saving three times); the values are hand-computed.
"""
import os
import threading
import time

import h5py
import numpy as np
import pytest

import minitf as tf


# What TF 2.21's tf.train.list_variables printed for Checkpoint(model=Model()) below.
TF_MODULE_NAMES = {
    "model/dct/a/.ATTRIBUTES/VARIABLE_VALUE": [],
    "model/dense_1/b/.ATTRIBUTES/VARIABLE_VALUE": [3],
    "model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE": [3, 3],
    "model/dense_2/b/.ATTRIBUTES/VARIABLE_VALUE": [2],
    "model/dense_2/w/.ATTRIBUTES/VARIABLE_VALUE": [3, 2],
    "model/lst/0/.ATTRIBUTES/VARIABLE_VALUE": [],
    "model/lst/1/.ATTRIBUTES/VARIABLE_VALUE": [2],
    "save_counter/.ATTRIBUTES/VARIABLE_VALUE": [],
}


class Dense(tf.Module):
    def __init__(self, n_in, n_out, scale):
        super().__init__()
        self.w = tf.Variable(np.arange(n_in * n_out, dtype=np.float32).reshape(n_in, n_out)
                             * scale, name="w")
        self.b = tf.Variable(np.full([n_out], scale, np.float32), name="b")


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.dense_1 = Dense(3, 3, 1.0)
        self.dense_2 = Dense(3, 2, 0.5)
        self.lst = [tf.Variable(1.0), tf.Variable([2.0, 3.0])]
        self.dct = {"a": tf.Variable(4.0)}


def _saved_model(tmp_path):
    model = Model()
    ckpt = tf.train.Checkpoint(model=model)
    return ckpt, model, ckpt.save(str(tmp_path / "ckpt"))


def test_tf_names_shapes_and_values_of_a_module(tmp_path):
    _, _, path = _saved_model(tmp_path)
    reader = tf.train.load_checkpoint(path)
    shapes = reader.get_variable_to_shape_map()
    assert shapes == {name[:-len("/.ATTRIBUTES/VARIABLE_VALUE")]: shape
                      for name, shape in TF_MODULE_NAMES.items()}
    for tf_name, shape in TF_MODULE_NAMES.items():
        assert reader.has_tensor(tf_name)
        assert list(np.shape(reader.get_tensor(tf_name))) == shape
    np.testing.assert_array_equal(reader.get_tensor("model/dense_2/w"),
                                  [[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]])
    np.testing.assert_array_equal(
        reader.get_tensor("model/lst/1/.ATTRIBUTES/VARIABLE_VALUE"), [2.0, 3.0])
    assert reader.get_tensor(b"model/dct/a") == np.float32(4.0)
    assert not reader.has_tensor("model/dense_1") and not reader.has_tensor("nope")


def test_scalars_are_numpy_scalars_and_dtypes_are_tf_dtypes(tmp_path):
    step = tf.Variable(3)
    path = tf.train.Checkpoint(step=step, x=tf.Variable([1.5], dtype=tf.float64),
                               y=tf.Variable([[1.0, 2.0]])).save(str(tmp_path / "c"))
    reader = tf.train.load_checkpoint(path)
    value = reader.get_tensor("step/.ATTRIBUTES/VARIABLE_VALUE")   # TF: np.int32(3)
    assert isinstance(value, np.int32) and value == 3
    counter = reader.get_tensor("save_counter")                     # TF: np.int64(1)
    assert isinstance(counter, np.int64) and counter == 1
    x = reader.get_tensor("x")
    assert isinstance(x, np.ndarray) and x.dtype == np.float64 and x.tolist() == [1.5]
    x[0] = 9.0   # a copy: the reader's value is unchanged
    assert reader.get_tensor("x").tolist() == [1.5]
    assert reader.get_variable_to_dtype_map() == {
        "step": tf.int32, "save_counter": tf.int64, "x": tf.float64, "y": tf.float32}
    # TF's layout: "model/dense_1/w (DT_FLOAT) [3,3]", float64 is DT_DOUBLE
    assert reader.debug_string() == (b"save_counter (DT_INT64) []\nstep (DT_INT32) []\n"
                                     b"x (DT_DOUBLE) [1]\ny (DT_FLOAT) [1,2]\n")


def test_optimizer_state_is_listed_with_its_values(tmp_path):
    v = tf.Variable([1.0, -2.0])
    opt = tf.keras.optimizers.Adam(0.1)
    opt.apply_gradients([(tf.constant([2.0, 4.0]), v)])
    path = tf.train.Checkpoint(v=v, optimizer=opt).save(str(tmp_path / "c"))
    listed = tf.train.list_variables(path)
    assert listed == [("optimizer/iterations", []), ("optimizer/learning_rate", []),
                      ("optimizer/slots/v/m", [2]), ("optimizer/slots/v/v", [2]),
                      ("save_counter", []), ("v", [2])]
    reader = tf.train.load_checkpoint(path)
    # one Adam step: m = (1 - 0.9) g, v = (1 - 0.999) g^2
    np.testing.assert_allclose(reader.get_tensor("optimizer/slots/v/m"), [0.2, 0.4], rtol=1e-6)
    np.testing.assert_allclose(reader.get_tensor("optimizer/slots/v/v"), [0.004, 0.016],
                               rtol=1e-5)
    assert reader.get_tensor("optimizer/iterations") == 1
    dtypes = reader.get_variable_to_dtype_map()   # TF: _iterations int64, _learning_rate float32
    assert dtypes["optimizer/iterations"] == tf.int64
    assert dtypes["optimizer/learning_rate"] == tf.float32
    np.testing.assert_allclose(reader.get_tensor("optimizer/learning_rate"), 0.1, rtol=1e-6)


def test_directory_reads_the_newest_and_load_variable(tmp_path):
    v = tf.Variable([1.0, 2.0])
    ckpt = tf.train.Checkpoint(v=v)
    ckpt.save(str(tmp_path / "ckpt"))
    v.assign([5.0, 6.0])
    ckpt.save(str(tmp_path / "ckpt"))
    assert tf.train.load_variable(str(tmp_path), "v:0").tolist() == [5.0, 6.0]
    assert tf.train.load_variable(tmp_path / "ckpt-1", "v").tolist() == [1.0, 2.0]
    assert tf.train.load_variable(str(tmp_path / "ckpt-1.h5"), "save_counter") == 1
    assert tf.train.list_variables(str(tmp_path)) == [("save_counter", []), ("v", [2])]


def test_errors_name_the_path_and_key(tmp_path):
    _, _, path = _saved_model(tmp_path)
    reader = tf.train.load_checkpoint(path)
    with pytest.raises(tf.errors.NotFoundError, match="Key model/nope not found in checkpoint"):
        reader.get_tensor("model/nope")
    missing = str(tmp_path / "missing")
    with pytest.raises(tf.errors.NotFoundError,
                       match="Failed to find any matching files for .*missing"):
        tf.train.load_checkpoint(missing)
    with pytest.raises(tf.errors.NotFoundError, match="tf.train.list_variables: .*missing"):
        tf.train.list_variables(missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file or checkpoints in "
                                         "given directory .*empty"):
        tf.train.load_checkpoint(str(empty))
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = np.zeros(2)
    with pytest.raises(tf.errors.DataLossError, match="other.h5 is not a tf.train.Checkpoint"):
        tf.train.load_checkpoint(str(tmp_path / "other"))
    (tmp_path / "junk.h5").write_bytes(b"not hdf5")
    with pytest.raises(tf.errors.DataLossError, match="cannot read checkpoint file .*junk.h5"):
        tf.train.load_checkpoint(str(tmp_path / "junk"))


def test_checkpoint_state_of_a_manager(tmp_path):
    directory = str(tmp_path / "run")
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), directory,
                                         max_to_keep=2)
    for _ in range(3):
        manager.save()
    state = tf.train.get_checkpoint_state(directory)
    assert state.model_checkpoint_path == os.path.join(directory, "ckpt-3")
    assert state.all_model_checkpoint_paths == [os.path.join(directory, "ckpt-2"),
                                                os.path.join(directory, "ckpt-3")]
    assert state.all_model_checkpoint_timestamps == [] and state.last_preserved_timestamp == 0
    assert tf.train.get_checkpoint_state(directory, latest_filename="other") is None
    assert tf.train.get_checkpoint_state(str(tmp_path / "nothing")) is None
    assert tf.train.latest_checkpoint(directory) == os.path.join(directory, "ckpt-3")


def test_checkpoint_state_file_written_by_tf(tmp_path):
    # the file TF 2.21's CheckpointManager(max_to_keep=2) wrote after three saves
    (tmp_path / "checkpoint").write_text(
        'model_checkpoint_path: "ckpt-3"\nall_model_checkpoint_paths: "ckpt-2"\n'
        'all_model_checkpoint_paths: "ckpt-3"\n'
        "all_model_checkpoint_timestamps: 1795657588.3392558\n"
        "all_model_checkpoint_timestamps: 1795657588.3433237\n"
        "last_preserved_timestamp: 1795657587.323077\n")
    state = tf.train.get_checkpoint_state(tmp_path)
    assert state.model_checkpoint_path == os.path.join(str(tmp_path), "ckpt-3")
    assert state.all_model_checkpoint_paths == [os.path.join(str(tmp_path), p)
                                                for p in ("ckpt-2", "ckpt-3")]
    assert state.all_model_checkpoint_timestamps == [1795657588.3392558, 1795657588.3433237]
    assert state.last_preserved_timestamp == 1795657587.323077
    assert str(state).startswith(f'model_checkpoint_path: "{tmp_path}/ckpt-3"\n')
    assert tf.train.latest_checkpoint(tmp_path) is None          # no ckpt-3 file
    (tmp_path / "mine").write_text('model_checkpoint_path: "/abs/caf\\303\\251"\n')
    assert tf.train.get_checkpoint_state(tmp_path, "mine").model_checkpoint_path == \
        "/abs/caf\u00e9"


def test_bad_state_files(tmp_path):
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "a"\nbogus_field: "b"\n')
    assert tf.train.get_checkpoint_state(tmp_path) is None      # TF: parse error, ignored
    (tmp_path / "checkpoint").write_text('all_model_checkpoint_paths: "a"\n')
    with pytest.raises(ValueError, match="Invalid checkpoint state loaded from .*has no "
                                         "model_checkpoint_path"):
        tf.train.get_checkpoint_state(tmp_path)


def test_latest_checkpoint_with_latest_filename(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    first = ckpt.write(str(tmp_path / "first"))
    ckpt.save(str(tmp_path / "ckpt"))
    (tmp_path / "best").write_text('model_checkpoint_path: "first"\n')
    assert tf.train.latest_checkpoint(str(tmp_path), latest_filename="best") == first
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-1")
    assert tf.train.latest_checkpoint(str(tmp_path), latest_filename="none") is None


def test_checkpoints_iterator_follows_a_writer(tmp_path):
    directory = str(tmp_path)
    v = tf.Variable(0.0)
    ckpt = tf.train.Checkpoint(v=v)
    next_one = threading.Event()

    def writer():
        for i in range(3):
            if i:
                next_one.wait(5)
                next_one.clear()
            v.assign(float(10 * (i + 1)))
            ckpt.save(os.path.join(directory, "ckpt"))

    thread = threading.Thread(target=writer)
    seen = []
    start = time.time()
    iterator = tf.train.checkpoints_iterator(directory, timeout=1.0)
    thread.start()
    for path in iterator:
        seen.append((os.path.basename(path), float(tf.train.load_variable(path, "v"))))
        next_one.set()
    thread.join()
    assert seen == [("ckpt-1", 10.0), ("ckpt-2", 20.0), ("ckpt-3", 30.0)]
    assert time.time() - start < 2.9


def test_checkpoints_iterator_timeout_fn_and_min_interval(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    calls = []

    def timeout_fn():     # the first timeout: a checkpoint arrives, keep waiting
        calls.append(time.time())
        if len(calls) == 1:
            ckpt.save(str(tmp_path / "ckpt"))
            return False
        return True

    got = list(tf.train.checkpoints_iterator(tmp_path, timeout=0.2, timeout_fn=timeout_fn))
    assert got == [str(tmp_path / "ckpt-1")] and len(calls) == 2

    yields = []
    for path in tf.train.checkpoints_iterator(tmp_path, min_interval_secs=0.4, timeout=0.2):
        yields.append((time.time(), os.path.basename(path)))
        if len(yields) == 1:
            ckpt.save(str(tmp_path / "ckpt"))     # ready at once, yielded after 0.4 s
    assert [name for _, name in yields] == ["ckpt-1", "ckpt-2"]
    assert yields[1][0] - yields[0][0] >= 0.4
    with pytest.raises(TypeError, match="timeout_fn must be callable or None, got int"):
        tf.train.checkpoints_iterator(tmp_path, timeout_fn=3)


def test_checkpoint_options(tmp_path):
    written = []
    options = tf.train.CheckpointOptions(experimental_io_device="/job:localhost",
                                         experimental_enable_async_checkpoint=True,
                                         experimental_write_callbacks=[
                                             lambda: written.append("done"),
                                             lambda path: written.append(path)])
    assert options.enable_async and options.experimental_enable_async_checkpoint
    assert tf.train.CheckpointOptions().enable_async is False
    v = tf.Variable([1.0])
    ckpt = tf.train.Checkpoint(v=v)
    path = ckpt.save(str(tmp_path / "c"), options=options)
    ckpt.write(str(tmp_path / "w"), options=options)
    v.assign([7.0])
    ckpt.restore(path, options=options)
    assert v.numpy().tolist() == [1.0]
    ckpt.read(str(tmp_path / "w"), options=options)
    # Called after each save and write, with the path written.
    assert written == ["done", path, "done", str(tmp_path / "w")]
    with pytest.raises(ValueError, match="experimental_write_callbacks must be a callable "
                                         "taking at most one argument"):
        tf.train.CheckpointOptions(experimental_write_callbacks=[lambda a, b: None])
    with pytest.raises(ValueError, match="experimental_sharding_callback is not supported"):
        tf.train.CheckpointOptions(experimental_sharding_callback=object())


def test_trackable_view_children_and_descendants(tmp_path):
    ckpt, model, _ = _saved_model(tmp_path)
    view = tf.train.TrackableView(ckpt)
    assert view.root is ckpt
    # TF 2.21 after a save: {'model', 'save_counter'}; Model: dense_1, dense_2, lst, dct
    assert set(view.children(ckpt)) == {"model", "save_counter"}
    assert list(view.children(model)) == ["dense_1", "dense_2", "lst", "dct"]
    assert tf.train.TrackableView.children(model.dense_1) == {"w": model.dense_1.w,
                                                              "b": model.dense_1.b}
    assert view.children(model.lst) == {"0": model.lst[0], "1": model.lst[1]}
    order = view.descendants()
    # breadth first: ckpt; model, save_counter; dense_1, dense_2, lst, dct; w, b, w, b, 0, 1, a
    expected = [ckpt, model, ckpt.save_counter, model.dense_1, model.dense_2, model.lst,
                model.dct, model.dense_1.w, model.dense_1.b, model.dense_2.w, model.dense_2.b,
                model.lst[0], model.lst[1], model.dct["a"]]
    assert [id(o) for o in order] == [id(o) for o in expected]


def test_trackable_view_of_keras_layers():
    layer = tf.keras.layers.Dense(2)
    layer.build((None, 3))
    children = tf.train.TrackableView.children(layer)
    assert {k: tuple(v.shape) for k, v in children.items()} == {"kernel": (3, 2), "bias": (2,)}


class SimpleModule(tf.Module):
    """The module of TF's ``tf.train.CheckpointView`` docstring example."""

    def __init__(self, name=None):
        super().__init__(name=name)
        self.a_var = tf.Variable(5.0)
        self.b_var = tf.Variable(4.0)
        self.vars = [tf.Variable(1.0), tf.Variable(2.0)]


def test_checkpoint_view_match_and_diff(tmp_path):
    # TF's docstring example, saved under a keyword (minitf stores a positional root as "root")
    root = SimpleModule(name="root")
    leaf = root.leaf = SimpleModule(name="leaf")
    leaf.leaf3 = tf.Variable(6.0, name="leaf3")
    leaf.leaf4 = tf.Variable(7.0, name="leaf4")
    save_path = tf.train.Checkpoint(model=root).save(str(tmp_path / "tf_ckpts"))
    view = tf.train.CheckpointView(save_path)
    # node ids breadth first over the saved paths (attributes in sorted order)
    assert view.children(0) == {"model": 1, "save_counter": 2}
    assert view.children(1) == {"a_var": 3, "b_var": 4, "leaf": 5, "vars": 6}
    assert view.children(5) == {"a_var": 7, "b_var": 8, "leaf3": 9, "leaf4": 10, "vars": 11}
    assert view.children(6) == {"0": 12, "1": 13} and view.children(11) == {"0": 14, "1": 15}
    assert view.descendants() == list(range(16))

    root2 = SimpleModule(name="root")
    leaf2 = root2.leaf2 = SimpleModule(name="leaf2")
    leaf2.leaf3 = tf.Variable(6.0)
    leaf2.leaf4 = tf.Variable(7.0)
    ckpt2 = tf.train.Checkpoint(model=root2)
    # as TF's example: the root's a_var, b_var, vars and its items match, leaf2 does not
    expected = {0: ckpt2, 1: root2, 2: ckpt2.save_counter, 3: root2.a_var, 4: root2.b_var,
                6: root2.vars, 12: root2.vars[0], 13: root2.vars[1]}
    matched = view.match(ckpt2)
    assert {k: id(v) for k, v in matched.items()} == {k: id(v) for k, v in expected.items()}
    _, only_saved, only_live = view.diff(ckpt2)
    assert only_saved == [5, 7, 8, 9, 10, 11, 14, 15]
    assert [id(o) for o in only_live] == [id(o) for o in (
        leaf2, leaf2.a_var, leaf2.b_var, leaf2.vars, leaf2.leaf3, leaf2.leaf4, leaf2.vars[0],
        leaf2.vars[1])]
    with pytest.raises(ValueError, match="CheckpointView.children: no node 16; node ids are "
                                         "0..15"):
        view.children(16)
    with pytest.raises(ValueError, match="CheckpointView.match: expected a Checkpoint.*got "
                                         "str"):
        view.match("root")
