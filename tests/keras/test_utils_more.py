"""keras.utils sequence/time-series/split helpers, Progbar, get_file, image files and the
keras.backend helpers."""
import hashlib
import io
import os
import tarfile
import zipfile

import numpy as np
import pytest

import minitf as tf
from tests.local_http import serve, without_proxies

keras = tf.keras


# --- pad_sequences -------------------------------------------------------------------------------

def test_pad_sequences_keras_docstring_examples():
    # Values from the keras.io docstring of keras.utils.pad_sequences.
    seqs = [[1], [2, 3], [4, 5, 6]]
    out = keras.utils.pad_sequences(seqs)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[0, 0, 1], [0, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(keras.utils.pad_sequences(seqs, value=-1),
                                  [[-1, -1, 1], [-1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(keras.utils.pad_sequences(seqs, padding="post"),
                                  [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    np.testing.assert_array_equal(keras.utils.pad_sequences(seqs, maxlen=2),
                                  [[0, 1], [2, 3], [5, 6]])
    assert keras.preprocessing.sequence.pad_sequences is keras.utils.pad_sequences


def test_pad_sequences_truncating_post_float_and_sample_shape():
    out = keras.utils.pad_sequences([[1.5, 2.5, 3.5], []], maxlen=2, truncating="post",
                                    dtype="float32", value=9.0)
    np.testing.assert_array_equal(out, np.array([[1.5, 2.5], [9.0, 9.0]], np.float32))
    vec = keras.utils.pad_sequences([np.ones((1, 2)), np.full((3, 2), 2.0)], dtype="float64")
    expected = np.zeros((2, 3, 2))
    expected[0, 2] = 1.0
    expected[1] = 2.0
    np.testing.assert_array_equal(vec, expected)


def test_pad_sequences_errors():
    with pytest.raises(ValueError, match="padding type \"middle\" not understood"):
        keras.utils.pad_sequences([[1]], padding="middle")
    with pytest.raises(ValueError, match="truncating type"):
        keras.utils.pad_sequences([[1]], truncating="x")
    with pytest.raises(ValueError, match="non-iterable: 3"):
        keras.utils.pad_sequences([[1], 3])
    with pytest.raises(ValueError, match="dtype=object"):
        keras.utils.pad_sequences([["a"]], value="pad")
    with pytest.raises(ValueError, match="shape of sample"):
        keras.utils.pad_sequences([np.ones((1, 2)), np.ones((1, 3))])


# --- timeseries_dataset_from_array ---------------------------------------------------------------

def test_timeseries_keras_docstring_indices():
    # keras.io docstring: indices [0..98], sequence_length=10, sampling_rate=2,
    # sequence_stride=3 -> first [0 2 ... 18], second [3 5 ... 21], last [78 80 ... 96].
    ds = keras.utils.timeseries_dataset_from_array(np.arange(99), None, sequence_length=10,
                                                   sampling_rate=2, sequence_stride=3)
    windows = np.concatenate([b.numpy() for b in ds])
    np.testing.assert_array_equal(windows[0], np.arange(0, 20, 2))
    np.testing.assert_array_equal(windows[1], np.arange(3, 23, 2))
    np.testing.assert_array_equal(windows[2], np.arange(6, 26, 2))
    np.testing.assert_array_equal(windows[-1], np.arange(78, 98, 2))
    assert windows.shape == (27, 10)


def test_timeseries_keras_docstring_regression_targets():
    # keras.io docstring example 2: inputs[0] == data[:10], targets[0] == data[10].
    data = np.random.default_rng(0).normal(size=(200, 3)).astype(np.float32)
    ds = keras.utils.timeseries_dataset_from_array(data[:-10], data[10:], sequence_length=10)
    inputs, targets = next(iter(ds))
    np.testing.assert_array_equal(inputs.numpy()[0], data[:10])
    np.testing.assert_array_equal(targets.numpy()[0], data[10])
    assert inputs.shape == (128, 10, 3) and inputs.dtype == tf.float32
    sizes = [b[0].shape[0] for b in ds]
    assert sizes == [128, 53]   # 190 - 9 = 181 windows


def test_timeseries_keras_docstring_non_overlapping():
    # keras.io docstring example 3: X = arange(100), Y = 2X, windows of 20 with stride 20.
    x = np.arange(100)
    y = x * 2
    inputs = keras.utils.timeseries_dataset_from_array(x, None, sequence_length=20,
                                                       sequence_stride=20)
    targets = keras.utils.timeseries_dataset_from_array(y, None, sequence_length=20,
                                                        sequence_stride=20)
    for a, b in zip(inputs, targets):
        np.testing.assert_array_equal(a.numpy()[0], x[:20])
        np.testing.assert_array_equal(b.numpy()[1], y[20:40])


def test_timeseries_start_end_index_shuffle_and_unbatched():
    data = np.arange(50) * 10
    targets = np.arange(50)
    ds = keras.utils.timeseries_dataset_from_array(data, targets, sequence_length=4,
                                                   sampling_rate=3, start_index=5,
                                                   end_index=40, batch_size=None)
    got = list(ds.as_numpy_iterator())
    # numpy reference: window i = data[5 + i + 3k], target = targets[5 + i], ends before 40
    n = 40 - 5 - 3 * 3
    assert len(got) == n
    for i, (window, target) in enumerate(got):
        np.testing.assert_array_equal(window, data[5 + i + 3 * np.arange(4)])
        assert target == 5 + i
    shuffled = keras.utils.timeseries_dataset_from_array(data, targets, sequence_length=4,
                                                         batch_size=8, shuffle=True, seed=3)
    pairs = [(w, t) for wb, tb in shuffled.as_numpy_iterator() for w, t in zip(wb, tb)]
    assert sorted(int(t) for _, t in pairs) == list(range(47))
    assert [int(t) for _, t in pairs] != list(range(47))
    for window, target in pairs:
        np.testing.assert_array_equal(window, data[target:target + 4])


def test_timeseries_errors():
    with pytest.raises(ValueError, match="sampling_rate"):
        keras.utils.timeseries_dataset_from_array(np.arange(10), None, 3, sampling_rate=0)
    with pytest.raises(ValueError, match="start_index"):
        keras.utils.timeseries_dataset_from_array(np.arange(10), None, 3, start_index=10)
    with pytest.raises(ValueError, match="end_index"):
        keras.utils.timeseries_dataset_from_array(np.arange(10), None, 3, start_index=4,
                                                  end_index=2)


def test_timeseries_feeds_fit():
    data = np.random.default_rng(1).normal(size=(40, 2)).astype(np.float32)
    ds = keras.utils.timeseries_dataset_from_array(data[:-5], data[5:, 0], sequence_length=5,
                                                   batch_size=8)
    model = keras.Sequential([keras.Input((5, 2)), keras.layers.Flatten(),
                              keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(ds, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


# --- split_dataset -------------------------------------------------------------------------------

def test_split_dataset_keras_docstring_example():
    # keras.io docstring: 1000 rows, left_size=0.8 -> cardinalities 800 and 200.
    data = np.random.random(size=(1000, 4))
    left, right = keras.utils.split_dataset(data, left_size=0.8)
    assert int(left.cardinality()) == 800 and int(right.cardinality()) == 200
    np.testing.assert_array_equal(np.stack(list(left.as_numpy_iterator())), data[:800])
    np.testing.assert_array_equal(np.stack(list(right.as_numpy_iterator())), data[800:])


def test_split_dataset_tuples_counts_shuffle_and_batched_dataset():
    x = np.arange(10)
    y = x * 3
    left, right = keras.utils.split_dataset((x, y), left_size=3, right_size=4)
    assert [(int(a), int(b)) for a, b in left.as_numpy_iterator()] == [(0, 0), (1, 3), (2, 6)]
    assert [int(a) for a, _ in right.as_numpy_iterator()] == [6, 7, 8, 9]
    left, right = keras.utils.split_dataset((x, y), right_size=0.3, shuffle=True, seed=1)
    pairs = list(left.as_numpy_iterator()) + list(right.as_numpy_iterator())
    assert sorted(int(a) for a, _ in pairs) == list(range(10))
    assert all(int(b) == 3 * int(a) for a, b in pairs)
    assert [int(a) for a, _ in pairs] != list(range(10))
    batched = tf.data.Dataset.from_tensor_slices(x).batch(4)
    left, right = keras.utils.split_dataset(batched, left_size=6)
    assert [b.tolist() for b in left.as_numpy_iterator()] == [[0, 1, 2, 3], [4, 5]]
    assert [b.tolist() for b in right.as_numpy_iterator()] == [[6, 7, 8, 9]]


def test_split_dataset_errors():
    with pytest.raises(ValueError, match="at least one of"):
        keras.utils.split_dataset(np.arange(4))
    with pytest.raises(ValueError, match="in \\(0, 1\\)"):
        keras.utils.split_dataset(np.arange(4), left_size=1.5)
    with pytest.raises(ValueError, match="more than the dataset length 4"):
        keras.utils.split_dataset(np.arange(4), left_size=3, right_size=2)
    with pytest.raises(ValueError, match="would be empty"):
        keras.utils.split_dataset(np.arange(4), left_size=4)
    with pytest.raises(TypeError, match="left_size"):
        keras.utils.split_dataset(np.arange(4), left_size="half")


# --- Progbar -------------------------------------------------------------------------------------

def test_progbar_verbose1_output(capsys):
    bar = keras.utils.Progbar(10, width=10, interval=0.0)
    bar.update(5, [("loss", 1.0)])
    bar.update(10, [("loss", 2.0)])
    out = capsys.readouterr().out
    plain = out.replace("\x1b[1m", "").replace("\x1b[0m", "").replace("\x1b[32m", "") \
        .replace("\x1b[37m", "")
    assert " 5/10 ━━━━━━━━━━" in plain
    assert "10/10 ━━━━━━━━━━" in plain
    # loss is averaged weighting each update by its steps: (1*5 + 2*5) / 10
    assert plain.rstrip().endswith("loss: 1.5000")
    assert "- loss: 1.0000" in plain
    assert out.endswith("\n") and "/step" in plain


def test_progbar_verbose2_add_and_stateful(capsys):
    bar = keras.utils.Progbar(4, verbose=2, stateful_metrics=["acc"], unit_name="batch")
    bar.add(2, [("loss", 4.0), ("acc", 0.25)])
    assert capsys.readouterr().out == ""
    bar.add(2, [("loss", 2.0), ("acc", 0.75)])
    line = capsys.readouterr().out
    assert line.startswith("4/4 - ") and line.endswith("\n")
    assert "/batch - loss: 3.0000 - acc: 0.7500" in line
    keras.utils.Progbar(3, verbose=0).update(3, [("x", 1.0)])
    assert capsys.readouterr().out == ""


def test_progbar_small_values_use_exponent(capsys):
    bar = keras.utils.Progbar(None, interval=0.0)
    bar.update(1, [("loss", 1e-5)], finalize=True)
    out = capsys.readouterr().out
    assert "1/Unknown" in out and "loss: 1.0000e-05" in out


# --- serialization aliases -----------------------------------------------------------------------

def test_serialization_aliases():
    assert keras.utils.register_keras_serializable is keras.saving.register_keras_serializable
    assert keras.utils.get_custom_objects is keras.saving.get_custom_objects

    @keras.utils.register_keras_serializable(package="UtilsMore")
    def scaled_relu(x):
        return tf.nn.relu(x) * 2.0

    assert keras.utils.get_registered_name(scaled_relu) == "UtilsMore>scaled_relu"
    assert keras.utils.get_registered_object("UtilsMore>scaled_relu") is scaled_relu
    assert keras.utils.get_registered_object("NotThere") is None

    class Marker:
        pass
    with keras.utils.custom_object_scope({"Marker": Marker}):
        assert keras.utils.get_registered_object("Marker") is Marker
    assert keras.utils.get_registered_object("Marker") is None
    assert keras.utils.get_registered_object("M", module_objects={"M": Marker}) is Marker
    assert keras.utils.CustomObjectScope is keras.utils.custom_object_scope


# --- get_file ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server():
    with serve() as srv:
        yield srv


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    without_proxies(monkeypatch)


def _tar_bytes(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip_bytes(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def test_get_file_downloads_caches_and_checks_hashes(server, tmp_path, capsys):
    body = b"a,b\n1,2\n"
    server.routes["/data/table.csv"] = body
    server.log.clear()
    sha = hashlib.sha256(body).hexdigest()
    path = keras.utils.get_file(origin=server.base + "/data/table.csv", file_hash=sha,
                                cache_dir=tmp_path)
    assert path == os.path.join(tmp_path, "datasets", "table.csv")
    assert _read(path) == body
    assert "Downloading data from" in capsys.readouterr().out
    # cached: no second request
    assert keras.utils.get_file("table.csv", server.base + "/data/table.csv",
                                file_hash=sha, cache_dir=tmp_path) == path
    assert server.log == ["/data/table.csv"]
    # md5 (32 characters: "auto" picks md5), other subdirectory, forced download
    md5 = hashlib.md5(body).hexdigest()
    other = keras.utils.get_file("t.csv", server.base + "/data/table.csv", md5_hash=md5,
                                 cache_dir=tmp_path, cache_subdir="sub", force_download=True)
    assert other == os.path.join(tmp_path, "sub", "t.csv") and len(server.log) == 2
    assert not [f for f in os.listdir(os.path.join(tmp_path, "sub")) if f.endswith(".part")]


def test_get_file_bad_hash_leaves_no_file_and_redownloads_stale(server, tmp_path):
    body = b"payload"
    server.routes["/p.bin"] = body
    with pytest.raises(ValueError, match="sha256 file hash does not match"):
        keras.utils.get_file(origin=server.base + "/p.bin", file_hash="0" * 64,
                             cache_dir=tmp_path)
    assert os.listdir(os.path.join(tmp_path, "datasets")) == []
    stale = os.path.join(tmp_path, "datasets", "p.bin")
    with open(stale, "wb") as f:
        f.write(b"old")
    with pytest.warns(UserWarning, match="hash does not match"):
        keras.utils.get_file(origin=server.base + "/p.bin",
                             file_hash=hashlib.sha256(body).hexdigest(), cache_dir=tmp_path)
    assert _read(stale) == body


def test_get_file_offline_and_missing_errors(server, tmp_path):
    with pytest.raises(OSError, match="URL fetch failure on http://127.0.0.1:9/x.zip"):
        keras.utils.get_file(origin="http://127.0.0.1:9/x.zip", cache_dir=tmp_path)
    with pytest.raises(OSError, match="HTTP 404"):
        keras.utils.get_file(origin=server.base + "/missing.txt", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="origin"):
        keras.utils.get_file("x.txt", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="can't parse the file name"):
        keras.utils.get_file(origin=server.base + "/", cache_dir=tmp_path)


def test_get_file_extracts_tar_and_zip(server, tmp_path):
    server.routes["/flowers.tgz"] = _tar_bytes({"flowers/a.txt": b"A", "flowers/b/c.txt": b"C"})
    out = keras.utils.get_file(origin=server.base + "/flowers.tgz", extract=True,
                               cache_dir=tmp_path)
    assert out == os.path.join(tmp_path, "datasets", "flowers_extracted")
    assert _read(os.path.join(out, "flowers", "b", "c.txt")) == b"C"
    assert os.path.isfile(os.path.join(tmp_path, "datasets", "flowers.tgz"))

    server.routes["/pack.zip"] = _zip_bytes({"x/y.txt": b"Y"})
    out = keras.utils.get_file("pack", server.base + "/pack.zip", extract=True,
                               cache_dir=tmp_path)
    assert out == os.path.join(tmp_path, "datasets", "pack")
    assert _read(os.path.join(out, "x", "y.txt")) == b"Y"
    # untar (the deprecated spelling): "name.tar.gz" is extracted into "name"
    server.routes["/old.tar.gz"] = _tar_bytes({"f.txt": b"F"})
    out = keras.utils.get_file("old.tar.gz", server.base + "/old.tar.gz", untar=True,
                               cache_dir=tmp_path)
    assert out == os.path.join(tmp_path, "datasets", "old")
    assert _read(os.path.join(out, "f.txt")) == b"F"


@pytest.mark.parametrize("bad", ["../escape.txt", "/abs/escape.txt", "ok/../../escape.txt"])
def test_get_file_refuses_escaping_members(server, tmp_path, bad):
    server.routes["/evil.tgz"] = _tar_bytes({"fine.txt": b"ok", bad: b"x"})
    server.routes["/evil.zip"] = _zip_bytes({"fine.txt": b"ok", bad: b"x"})
    for name in ("evil.tgz", "evil.zip"):
        cache = tmp_path / name
        with pytest.raises(ValueError, match="refusing to extract archive member"):
            keras.utils.get_file(origin=f"{server.base}/{name}", extract=True,
                                 cache_dir=cache)
        assert not (cache / "escape.txt").exists() and not (tmp_path / "escape.txt").exists()
        assert not (cache / "datasets" / "evil_extracted" / "fine.txt").exists()


def test_get_file_refuses_symlink_out_of_target(server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as archive:
        link = tarfile.TarInfo("link")
        link.type, link.linkname = tarfile.SYMTYPE, "../../outside"
        archive.addfile(link)
    server.routes["/link.tar"] = buf.getvalue()
    with pytest.raises(ValueError, match="links to"):
        keras.utils.get_file(origin=server.base + "/link.tar", extract=True,
                             cache_dir=tmp_path)


# --- images --------------------------------------------------------------------------------------

def _write_png(path, array):
    from PIL import Image
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(array).save(path)


def test_load_img_modes_and_resize(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    path = str(tmp_path / "a.png")
    _write_png(path, pixels)
    img = keras.utils.load_img(path)
    np.testing.assert_array_equal(keras.utils.img_to_array(img), pixels.astype(np.float32))
    gray = keras.utils.img_to_array(keras.utils.load_img(path, color_mode="grayscale"))
    # Pillow's L conversion: ITU-R 601-2 luma L = R*299/1000 + G*587/1000 + B*114/1000
    rgb = pixels.astype(np.int64)
    luma = (rgb[..., 0] * 299 + rgb[..., 1] * 587 + rgb[..., 2] * 114) / 1000
    assert gray.shape == (6, 8, 1)
    assert np.max(np.abs(gray[..., 0] - luma)) <= 1.0
    small = keras.utils.load_img(path, target_size=(3, 4))
    assert small.size == (4, 3)
    # nearest from 6x8 to 3x4: PIL samples the centre of each 2x2 block (rows/cols 1, 3...)
    np.testing.assert_array_equal(np.asarray(small), pixels[1::2, 1::2])
    assert keras.utils.load_img(path, color_mode="rgba").mode == "RGBA"
    with pytest.raises(ValueError, match="color_mode"):
        keras.utils.load_img(path, color_mode="cmyk")
    with pytest.raises(TypeError, match="path should be path-like"):
        keras.utils.load_img(3)


def test_save_img_round_trip(tmp_path):
    pytest.importorskip("PIL")
    pixels = np.arange(2 * 3 * 3, dtype=np.float32).reshape(2, 3, 3) * 10
    path = str(tmp_path / "s.png")
    keras.utils.save_img(path, pixels, scale=False)
    np.testing.assert_array_equal(keras.utils.img_to_array(keras.utils.load_img(path)), pixels)
    assert keras.preprocessing.image.load_img is keras.utils.load_img


def _image_tree(root, counts=(3, 2)):
    rng = np.random.default_rng(1)
    arrays = {}
    for class_index, (name, count) in enumerate(zip(("cats", "dogs"), counts)):
        for i in range(count):
            pixels = rng.integers(0, 256, (4, 6, 3), dtype=np.uint8)
            path = os.path.join(root, name, f"img{i}.png")
            _write_png(path, pixels)
            arrays[path] = (pixels, class_index)
    with open(os.path.join(root, "cats", "notes.txt"), "w") as f:
        f.write("not an image")
    return arrays


def test_image_dataset_from_directory_values(tmp_path, capsys):
    pytest.importorskip("PIL")
    arrays = _image_tree(str(tmp_path))
    ds = keras.utils.image_dataset_from_directory(str(tmp_path), batch_size=2,
                                                  image_size=(4, 6), shuffle=False)
    assert "Found 5 files belonging to 2 classes." in capsys.readouterr().out
    assert ds.class_names == ["cats", "dogs"]
    images, labels = zip(*ds.as_numpy_iterator())
    images, labels = np.concatenate(images), np.concatenate(labels)
    assert images.dtype == np.float32 and images.shape == (5, 4, 6, 3)
    assert labels.dtype == np.int32
    for path, image, label in zip(ds.file_paths, images, labels):
        pixels, class_index = arrays[path]
        np.testing.assert_array_equal(image, pixels.astype(np.float32))
        assert label == class_index
    assert labels.tolist() == [0, 0, 0, 1, 1]


def test_image_dataset_from_directory_resize_modes_and_split(tmp_path):
    pytest.importorskip("PIL")
    arrays = _image_tree(str(tmp_path), counts=(5, 5))
    ds = keras.utils.image_dataset_from_directory(
        str(tmp_path), image_size=(2, 3), label_mode="categorical", color_mode="grayscale",
        interpolation="nearest", shuffle=False, batch_size=None)
    image, label = next(ds.as_numpy_iterator())
    assert image.shape == (2, 3, 1) and image.dtype == np.uint8
    np.testing.assert_array_equal(label, [1.0, 0.0])
    from PIL import Image
    gray = np.asarray(Image.fromarray(arrays[ds.file_paths[0]][0]).convert("L"))
    # TF's half-pixel nearest from 4x6 to 2x3 picks rows 1, 3 and columns 1, 3, 5
    np.testing.assert_array_equal(image[..., 0], gray[1::2, 1::2])

    train, val = keras.utils.image_dataset_from_directory(
        str(tmp_path), image_size=(4, 6), validation_split=0.2, subset="both", seed=7,
        label_mode="binary", batch_size=4)
    assert len(train.file_paths) == 8 and len(val.file_paths) == 2
    assert not set(train.file_paths) & set(val.file_paths)
    for images, labels in train.as_numpy_iterator():
        assert labels.shape[1:] == (1,) and labels.dtype == np.float32
    val_only = keras.utils.image_dataset_from_directory(
        str(tmp_path), image_size=(4, 6), validation_split=0.2, subset="validation", seed=7)
    assert val_only.file_paths == val.file_paths


def test_image_dataset_from_directory_errors(tmp_path):
    pytest.importorskip("PIL")
    _image_tree(str(tmp_path))
    with pytest.raises(ValueError, match="must provide a `seed`"):
        keras.utils.image_dataset_from_directory(str(tmp_path), validation_split=0.2,
                                                 subset="training")
    with pytest.raises(ValueError, match="label_mode"):
        keras.utils.image_dataset_from_directory(str(tmp_path), label_mode="sparse")
    with pytest.raises(ValueError, match="class_names"):
        keras.utils.image_dataset_from_directory(str(tmp_path), class_names=["birds"])
    with pytest.raises(ValueError, match="exactly 2 class_names"):
        os.makedirs(tmp_path / "birds")
        _write_png(str(tmp_path / "birds" / "b.png"), np.zeros((2, 2, 3), np.uint8))
        keras.utils.image_dataset_from_directory(str(tmp_path), label_mode="binary")


def test_image_loading_without_pillow_names_the_package(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="pip install pillow"):
        keras.utils.load_img("anything.png")


# --- keras.backend -------------------------------------------------------------------------------

def test_backend_helpers():
    kb = keras.backend
    assert kb.image_data_format() == "channels_last"
    kb.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="only 'channels_last'"):
        kb.set_image_data_format("channels_first")
    with pytest.raises(ValueError, match="data_format"):
        kb.set_image_data_format("nhwc")
    assert kb.int_shape(tf.zeros((2, 3))) == (2, 3)
    assert kb.int_shape(np.zeros((4,))) == (4,)
    assert kb.int_shape(keras.Input((5,))) == (None, 5)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(kb.mean(tf.constant(x), axis=1).numpy(), x.mean(axis=1))
    assert float(kb.mean(tf.constant(x))) == pytest.approx(2.5)
    kb.set_epsilon(1e-5)
    try:
        assert kb.epsilon() == 1e-5
    finally:
        kb.set_epsilon(1e-7)
    assert kb.epsilon() == 1e-7


def test_backend_set_floatx_changes_new_layer_dtype():
    kb = keras.backend
    assert kb.floatx() == "float32"
    kb.set_floatx("float64")
    try:
        assert kb.floatx() == "float64"
        layer = keras.layers.Dense(2)
        layer.build((None, 3))
        assert layer.kernel.dtype == tf.float64
    finally:
        kb.set_floatx("float32")
    assert keras.mixed_precision.global_policy().name == "float32"
    with pytest.raises(ValueError, match="Unknown `floatx` value"):
        kb.set_floatx("int32")
