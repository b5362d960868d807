"""keras.utils.audio_dataset_from_directory against Keras 3.15 (keras/src/utils/
audio_dataset_utils.py and its docstring): classes from the subdirectories in alphanumeric
order, only ``.wav`` files (found recursively), audio float32 ``[batch, samples, channels]``
with 16-bit samples ``s`` read as ``s / 32768`` (tf.audio.decode_wav), batches zero-padded to
their longest clip, or cut/padded to ``output_sequence_length``, or ragged. The expected
batches, labels, printed lines and split orders were obtained by running Keras 3.15 (with
TensorFlow 2.21) on the same files."""
import os
import wave

import numpy as np
import pytest

import minitf as tf
from minitf import keras


LENGTHS = {"cat": [5, 8, 3], "dog": [6, 4], "owl": [7, 2]}   # plus owl/sub/owl_2.wav (4)
SCALE = 300


def samples(class_index, file_index, length, channels=1):
    """Distinct int16 samples for every file (multiples of SCALE in [-30000, 29700])."""
    n = np.arange(length * channels)
    values = ((n * 7 + 100 * class_index + 13 * file_index) % 200) - 100
    return (values * SCALE).astype(np.int16).reshape(length, channels)


def write_wav(path, data, rate=16000):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(data.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data.astype("<i2").tobytes())


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "speech"
    for c, (name, lengths) in enumerate(LENGTHS.items()):
        for i, length in enumerate(lengths):
            write_wav(root / name / f"{name}_{i}.wav", samples(c, i, length))
    write_wav(root / "owl" / "sub" / "owl_2.wav", samples(2, 2, 4))
    (root / "owl" / "notes.txt").write_text("not audio")
    return str(root)


# The files in sorted path order: (class index, file index, length).
SORTED = [(0, 0, 5), (0, 1, 8), (0, 2, 3), (1, 0, 6), (1, 1, 4), (2, 0, 7), (2, 1, 2), (2, 2, 4)]


def clip(c, i, length):
    return samples(c, i, length).astype(np.float32) / 32768


def padded(files, length):
    out = np.zeros((len(files), length, 1), np.float32)
    for row, (c, i, n) in enumerate(files):
        out[row, :min(n, length)] = clip(c, i, n)[:length]
    return out


def scaled_first_channel(x):
    """The samples of a batch as the small ints they were written from."""
    return np.rint(np.asarray(x)[:, :, 0] * 32768 / SCALE).astype(int).tolist()


def test_inferred_labels_unshuffled_batches_padded_to_longest(tree, capsys):
    ds = keras.utils.audio_dataset_from_directory(tree, batch_size=3, shuffle=False)
    assert capsys.readouterr().out == "Found 8 files belonging to 3 classes.\n"
    assert ds.class_names == ["cat", "dog", "owl"]
    batches = list(ds.as_numpy_iterator())
    assert [x.shape for x, _ in batches] == [(3, 8, 1), (3, 7, 1), (2, 4, 1)]
    assert [y.tolist() for _, y in batches] == [[0, 0, 0], [1, 1, 2], [2, 2]]
    for (x, y), start, length in zip(batches, [0, 3, 6], [8, 7, 4]):
        assert x.dtype == np.float32 and y.dtype == np.int32
        np.testing.assert_array_equal(x, padded(SORTED[start:start + 3], length))
    # Keras 3.15's first batch, as written
    assert scaled_first_channel(batches[0][0]) == [
        [-100, -93, -86, -79, -72, 0, 0, 0], [-87, -80, -73, -66, -59, -52, -45, -38],
        [-74, -67, -60, 0, 0, 0, 0, 0]]
    audio_spec, label_spec = ds.element_spec
    assert audio_spec.dtype == tf.float32 and list(audio_spec.shape)[:2] == [None, None]
    assert label_spec.dtype == tf.int32 and list(label_spec.shape) == [None]


def test_output_sequence_length_cuts_and_pads(tree):
    ds = keras.utils.audio_dataset_from_directory(tree, batch_size=3, shuffle=False,
                                                  output_sequence_length=6, verbose=False)
    batches = list(ds.as_numpy_iterator())
    assert [x.shape for x, _ in batches] == [(3, 6, 1), (3, 6, 1), (2, 6, 1)]
    for (x, _), start in zip(batches, [0, 3, 6]):
        np.testing.assert_array_equal(x, padded(SORTED[start:start + 3], 6))
    assert scaled_first_channel(batches[2][0]) == [[-87, -80, 0, 0, 0, 0],
                                                   [-74, -67, -60, -53, 0, 0]]
    assert list(ds.element_spec[0].shape)[:2] == [None, 6]


def test_ragged_batches_keep_each_length(tree):
    ds = keras.utils.audio_dataset_from_directory(tree, batch_size=3, shuffle=False,
                                                  ragged=True, verbose=False)
    spec = ds.element_spec[0]
    assert isinstance(spec, tf.RaggedTensorSpec) and spec.ragged_rank == 2
    lengths, labels = [], []
    for start, (x, y) in zip([0, 3, 6], ds):
        assert isinstance(x, tf.RaggedTensor) and x.ragged_rank == 2 and x.dtype == tf.float32
        lengths.append(np.asarray(x.row_lengths()).tolist())
        labels.append(np.asarray(y).tolist())
        for row, (c, i, n) in zip(x.to_list(), SORTED[start:start + 3]):
            np.testing.assert_array_equal(np.array(row, np.float32), clip(c, i, n))
    assert lengths == [[5, 8, 3], [6, 4, 7], [2, 4]]
    assert labels == [[0, 0, 0], [1, 1, 2], [2, 2]]


def test_unbatched_clips(tree):
    ds = keras.utils.audio_dataset_from_directory(tree, batch_size=None, shuffle=False,
                                                  verbose=False)
    items = list(ds.as_numpy_iterator())
    assert [x.shape for x, _ in items] == [(n, 1) for _, _, n in SORTED]
    assert [int(y) for _, y in items] == [c for c, _, _ in SORTED]
    np.testing.assert_array_equal(items[3][0], clip(1, 0, 6))
    ragged = keras.utils.audio_dataset_from_directory(tree, batch_size=None, shuffle=False,
                                                      ragged=True, verbose=False)
    x, _ = next(iter(ragged))
    assert isinstance(x, tf.RaggedTensor) and x.ragged_rank == 1
    np.testing.assert_array_equal(np.array(x.to_list(), np.float32), clip(0, 0, 5))


def test_subset_both_with_seed(tree, capsys):
    train, val = keras.utils.audio_dataset_from_directory(
        tree, validation_split=0.25, subset="both", seed=1337, batch_size=4)
    assert capsys.readouterr().out == ("Found 8 files belonging to 3 classes.\n"
                                       "Using 6 files for training.\n"
                                       "Using 2 files for validation.\n")
    assert train.class_names == val.class_names == ["cat", "dog", "owl"]
    # Keras 3.15 with seed=1337: validation holds owl_0 then sub/owl_2, not reshuffled
    (x, y), = list(val.as_numpy_iterator())
    assert x.shape == (2, 7, 1) and y.tolist() == [2, 2]
    np.testing.assert_array_equal(x, padded([(2, 0, 7), (2, 2, 4)], 7))
    train_items = [(xb[k], int(yb[k])) for xb, yb in train.as_numpy_iterator()
                   for k in range(len(yb))]
    assert sorted(y for _, y in train_items) == [0, 0, 0, 1, 1, 2]
    # the training clips are the six other files, each padded within its batch
    firsts = sorted(int(np.rint(x[0, 0] * 32768 / SCALE)) for x, _ in train_items)
    assert firsts == sorted(int(samples(c, i, 1)[0, 0]) // SCALE for c, i, _ in SORTED
                            if (c, i) not in [(2, 0), (2, 2)])
    only_val = keras.utils.audio_dataset_from_directory(
        tree, validation_split=0.25, subset="validation", seed=1337, verbose=False)
    assert sorted(np.asarray(next(iter(only_val))[1]).tolist()) == [2, 2]


def test_validation_without_shuffle_is_last_files(tree, capsys):
    val = keras.utils.audio_dataset_from_directory(tree, validation_split=0.25,
                                                   subset="validation", shuffle=False)
    assert capsys.readouterr().out == ("Found 8 files belonging to 3 classes.\n"
                                       "Using 2 files for validation.\n")
    (x, y), = list(val.as_numpy_iterator())
    np.testing.assert_array_equal(x, padded([(2, 1, 2), (2, 2, 4)], 4))
    assert y.tolist() == [2, 2]


def test_label_modes(tree, capsys):
    ds = keras.utils.audio_dataset_from_directory(tree, batch_size=8, shuffle=False,
                                                  label_mode="categorical", verbose=False)
    _, y = next(ds.as_numpy_iterator())
    assert y.dtype == np.float32
    assert y.tolist() == [[1, 0, 0]] * 3 + [[0, 1, 0]] * 2 + [[0, 0, 1]] * 3
    binary = keras.utils.audio_dataset_from_directory(
        tree, batch_size=8, shuffle=False, label_mode="binary", class_names=["owl", "cat"])
    assert capsys.readouterr().out == "Found 6 files belonging to 2 classes.\n"
    x, y = next(binary.as_numpy_iterator())
    assert x.shape == (6, 8, 1) and y.dtype == np.float32
    assert y.tolist() == [[0.0]] * 3 + [[1.0]] * 3
    np.testing.assert_array_equal(x, padded([(2, 0, 7), (2, 1, 2), (2, 2, 4), (0, 0, 5),
                                             (0, 1, 8), (0, 2, 3)], 8))


def test_no_labels_and_explicit_labels(tree, capsys):
    ds = keras.utils.audio_dataset_from_directory(tree, labels=None, batch_size=8,
                                                  shuffle=False)
    assert capsys.readouterr().out == "Found 8 files.\n"
    assert ds.class_names is None
    (x,) = [np.asarray(b) for b in ds]
    np.testing.assert_array_equal(x, padded(SORTED, 8))
    listed = keras.utils.audio_dataset_from_directory(
        tree, labels=[3, 1, 0, 1, 0, 1, 0, 1], batch_size=8, shuffle=False, verbose=False)
    x, y = next(listed.as_numpy_iterator())
    assert y.tolist() == [3, 1, 0, 1, 0, 1, 0, 1] and x.shape == (8, 8, 1)


def test_stereo_files(tmp_path):
    write_wav(tmp_path / "a" / "s0.wav", samples(0, 0, 3, channels=2))
    write_wav(tmp_path / "a" / "s1.wav", samples(0, 1, 5, channels=2))
    ds = keras.utils.audio_dataset_from_directory(str(tmp_path), batch_size=2, shuffle=False,
                                                  verbose=False)
    x, y = next(ds.as_numpy_iterator())
    assert x.shape == (2, 5, 2) and y.tolist() == [0, 0]
    # Keras 3.15's values (x * 32768 / 300)
    assert np.rint(x * 32768 / SCALE).astype(int).tolist() == [
        [[-100, -93], [-86, -79], [-72, -65], [0, 0], [0, 0]],
        [[-87, -80], [-73, -66], [-59, -52], [-45, -38], [-31, -24]]]


def test_sampling_rate(tree):
    same = keras.utils.audio_dataset_from_directory(tree, sampling_rate=16000, batch_size=8,
                                                    shuffle=False, verbose=False)
    np.testing.assert_array_equal(next(same.as_numpy_iterator())[0], padded(SORTED, 8))
    with pytest.raises(ImportError, match=r"16000 Hz.*sampling_rate=8000.*tfio"):
        keras.utils.audio_dataset_from_directory(tree, sampling_rate=8000, verbose=False)
    with pytest.raises(ValueError, match=r"integer value\. Received: sampling_rate=16000\.0"):
        keras.utils.audio_dataset_from_directory(tree, sampling_rate=16000.0)
    with pytest.raises(ValueError, match=r"higher than 0\. Received: sampling_rate=0"):
        keras.utils.audio_dataset_from_directory(tree, sampling_rate=0)


def test_bad_arguments(tree, tmp_path):
    f = keras.utils.audio_dataset_from_directory
    with pytest.raises(ValueError, match="cannot set both `ragged` and "
                                         "`output_sequence_length`"):
        f(tree, ragged=True, output_sequence_length=4)
    with pytest.raises(ValueError, match=r"output_sequence_length.*Received: "
                                         r"output_sequence_length=-3"):
        f(tree, output_sequence_length=-3)
    with pytest.raises(ValueError, match=r'`label_mode` argument must be one of "int", '
                                         r'"categorical", "binary", or None\. Received: '
                                         r"label_mode='sparse'"):
        f(tree, label_mode="sparse")
    with pytest.raises(ValueError, match=r"number of audio files.*only contains audio "
                                         r"samples.*labels='foo'"):
        f(tree, labels="foo")
    with pytest.raises(ValueError, match=r"class_names.*Expected: \['cat', 'dog', 'owl'\]"):
        f(tree, class_names=["zebra"], verbose=False)
    with pytest.raises(ValueError, match=r"exactly 2 class_names.*\['cat', 'dog', 'owl'\]"):
        f(tree, label_mode="binary", verbose=False)
    with pytest.raises(ValueError, match="must provide a `seed`"):
        f(tree, validation_split=0.25, subset="both")
    with pytest.raises(ValueError, match=r"no validation audio files: "
                                         r"validation_split=0\.01"):
        f(tree, validation_split=0.01, subset="both", seed=1, verbose=False)
    (tmp_path / "empty" / "x").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"no audio files found in directory .*empty\. "
                                         r"Allowed formats: \('\.wav',\)"):
        f(str(tmp_path / "empty"), verbose=False)
