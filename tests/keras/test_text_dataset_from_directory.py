"""keras.utils.text_dataset_from_directory against Keras 3's documented behaviour
(keras.io/api/data_loading/text and keras/src/utils/text_dataset_utils.py): classes from the
subdirectories in alphanumeric order, only ``.txt`` files, texts as the files' bytes, labels
int32 / one-hot float32 / float32 ``(n, 1)``, the files shuffled once with ``seed`` and the
last ``int(validation_split * n)`` of them used for validation. Expected values are the
contents the tests write."""
import os

import numpy as np
import pytest

import minitf as tf
from minitf import keras

FILES = {  # path below the root: contents
    "neg/a.txt": b"bad movie",
    "neg/b.TXT": b"awful\r\nreally",       # the extension is matched case-insensitively
    "pos/c.txt": b"great",
    "pos/deep/d.txt": "h\u00e9llo w\u00f6rld".encode(),
    "pos/e.txt": b"",
}
IGNORED = {"neg/notes.md": b"not text", "pos/f.txt.bak": b"backup"}
LABEL = {"neg": 0, "pos": 1}


@pytest.fixture
def tree(tmp_path):
    for rel, data in {**FILES, **IGNORED}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return tmp_path


def sorted_paths(root):
    return [os.path.join(str(root), rel) for rel in sorted(FILES)]


def contents(path, root):
    return FILES[os.path.relpath(path, str(root)).replace(os.sep, "/")]


def label_of(path, root):
    return LABEL[os.path.relpath(path, str(root)).split(os.sep)[0]]


def elements(ds):
    """(text, label) pairs of a labelled dataset, batched or not."""
    out = []
    for texts, labels in ds.as_numpy_iterator():
        if np.ndim(labels) == 0 or (np.ndim(labels) == 1 and np.ndim(texts) == 0):
            out.append((texts, np.asarray(labels).tolist()))
        else:
            out.extend(zip(list(texts), np.asarray(labels).tolist()))
    return out


def test_inferred_labels_unshuffled_exact_batches(tree, capsys):
    ds = keras.utils.text_dataset_from_directory(str(tree), batch_size=3, shuffle=False)
    assert capsys.readouterr().out == "Found 5 files belonging to 2 classes.\n"
    assert ds.class_names == ["neg", "pos"]
    assert ds.file_paths == sorted_paths(tree)
    batches = list(ds.as_numpy_iterator())
    assert len(batches) == 2
    texts, labels = batches[0]
    assert texts.dtype == object and texts.tolist() == [b"bad movie", b"awful\r\nreally",
                                                        b"great"]
    assert labels.dtype == np.int32 and labels.tolist() == [0, 0, 1]
    texts, labels = batches[1]
    assert texts.tolist() == ["h\u00e9llo w\u00f6rld".encode(), b""]
    assert labels.tolist() == [1, 1]
    text_spec, label_spec = ds.element_spec
    assert text_spec.dtype == tf.string and tuple(text_spec.shape) == (None,)
    assert label_spec.dtype == tf.int32 and tuple(label_spec.shape) == (None,)


def test_label_modes(tree):
    kwargs = dict(shuffle=False, verbose=False)
    categorical = keras.utils.text_dataset_from_directory(str(tree), label_mode="categorical",
                                                          batch_size=5, **kwargs)
    texts, labels = next(categorical.as_numpy_iterator())
    assert labels.dtype == np.float32
    np.testing.assert_array_equal(labels, [[1, 0], [1, 0], [0, 1], [0, 1], [0, 1]])
    binary = keras.utils.text_dataset_from_directory(str(tree), label_mode="binary",
                                                     batch_size=5, **kwargs)
    texts, labels = next(binary.as_numpy_iterator())
    assert labels.dtype == np.float32 and labels.shape == (5, 1)
    assert labels[:, 0].tolist() == [0.0, 0.0, 1.0, 1.0, 1.0]
    texts_only = keras.utils.text_dataset_from_directory(str(tree), label_mode=None,
                                                         batch_size=5, **kwargs)
    batch = next(texts_only.as_numpy_iterator())
    assert batch.tolist() == [FILES[rel] for rel in sorted(FILES)]


def test_unbatched_and_max_length_in_bytes(tree):
    # Keras cuts with tf.strings.substr(text, 0, max_length), whose unit is "BYTE": the
    # two-byte UTF-8 "é" is cut in half.
    ds = keras.utils.text_dataset_from_directory(str(tree), batch_size=None, max_length=2,
                                                 shuffle=False, verbose=False)
    got = list(ds.as_numpy_iterator())
    assert [(text, int(label)) for text, label in got] == [
        (b"ba", 0), (b"aw", 0), (b"gr", 1), (b"h\xc3", 1), (b"", 1)]
    assert np.ndim(got[0][0]) == 0 and got[0][1].dtype == np.int32
    zero = keras.utils.text_dataset_from_directory(str(tree), batch_size=None, max_length=0,
                                                   shuffle=False, verbose=False)
    assert [text for text, _ in zero.as_numpy_iterator()] == [b""] * 5


def test_no_labels_and_explicit_labels(tree, capsys):
    ds = keras.utils.text_dataset_from_directory(str(tree), labels=None, batch_size=None,
                                                 shuffle=False)
    assert capsys.readouterr().out == "Found 5 files.\n"
    assert ds.class_names is None
    assert list(ds.as_numpy_iterator()) == [FILES[rel] for rel in sorted(FILES)]
    # explicit labels follow the sorted file paths
    ds = keras.utils.text_dataset_from_directory(str(tree), labels=[2, 0, 1, 2, 0],
                                                 batch_size=None, shuffle=False, verbose=False)
    assert ds.class_names == ["0", "1", "2"]
    assert [int(y) for _, y in ds.as_numpy_iterator()] == [2, 0, 1, 2, 0]
    # Keras 3.15 names the distinct labels given, sorted (not 0..max)
    ds = keras.utils.text_dataset_from_directory(str(tree), labels=[3, 0, 3, 1, 0],
                                                 batch_size=None, shuffle=False)
    assert ds.class_names == ["0", "1", "3"]
    assert capsys.readouterr().out == "Found 5 files belonging to 3 classes.\n"


def test_class_names_choose_order_and_subset(tree):
    ds = keras.utils.text_dataset_from_directory(str(tree), class_names=["pos", "neg"],
                                                 batch_size=None, shuffle=False, verbose=False)
    assert ds.class_names == ["pos", "neg"]
    got = [(text, int(y)) for text, y in ds.as_numpy_iterator()]
    assert got == [(b"great", 0), ("h\u00e9llo w\u00f6rld".encode(), 0), (b"", 0),
                   (b"bad movie", 1), (b"awful\r\nreally", 1)]
    only = keras.utils.text_dataset_from_directory(str(tree), class_names=["pos"],
                                                   batch_size=None, shuffle=False,
                                                   verbose=False)
    assert [int(y) for _, y in only.as_numpy_iterator()] == [0, 0, 0]


def test_shuffled_is_a_seeded_permutation(tree):
    def run(seed):
        ds = keras.utils.text_dataset_from_directory(str(tree), batch_size=2, seed=seed,
                                                     verbose=False)
        return ds, elements(ds)

    ds, first = run(11)
    _, again = run(11)
    assert first == again                               # the same seed, the same order
    assert sorted(ds.file_paths) == sorted_paths(tree)
    expected = sorted((FILES[rel], LABEL[rel.split("/")[0]]) for rel in FILES)
    assert sorted(first) == expected                    # every file once, with its label
    unsorted = [run(seed)[0].file_paths != sorted_paths(tree) for seed in range(5)]
    assert any(unsorted)                                # the files are shuffled at all


def test_validation_split_partitions(tree, capsys):
    kwargs = dict(validation_split=0.4, seed=5, batch_size=2)
    train, val = keras.utils.text_dataset_from_directory(str(tree), subset="both", **kwargs)
    out = capsys.readouterr().out
    assert out == ("Found 5 files belonging to 2 classes.\nUsing 3 files for training.\n"
                   "Using 2 files for validation.\n")
    assert len(train.file_paths) == 3 and len(val.file_paths) == 2   # int(0.4 * 5) == 2
    assert not set(train.file_paths) & set(val.file_paths)
    assert sorted(train.file_paths + val.file_paths) == sorted_paths(tree)
    assert train.class_names == val.class_names == ["neg", "pos"]
    for ds in (train, val):
        got = elements(ds)
        assert sorted(got) == sorted((contents(p, tree), label_of(p, tree))
                                     for p in ds.file_paths)
    # As in Keras, the validation dataset of subset="both" is not shuffled again.
    assert [text for text, _ in elements(val)] == [contents(p, tree) for p in val.file_paths]

    train_only = keras.utils.text_dataset_from_directory(str(tree), subset="training",
                                                         **kwargs)
    assert capsys.readouterr().out.endswith("Using 3 files for training.\n")
    val_only = keras.utils.text_dataset_from_directory(str(tree), subset="validation",
                                                       **kwargs)
    assert train_only.file_paths == train.file_paths
    assert val_only.file_paths == val.file_paths


def test_validation_split_without_shuffle_takes_the_last_files(tree):
    train, val = keras.utils.text_dataset_from_directory(
        str(tree), validation_split=0.2, subset="both", shuffle=False, batch_size=None,
        verbose=False)
    assert train.file_paths == sorted_paths(tree)[:4]
    assert val.file_paths == sorted_paths(tree)[4:]
    assert [int(y) for _, y in val.as_numpy_iterator()] == [1]


def test_follow_links(tree, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "x.txt").write_bytes(b"linked")
    try:
        os.symlink(str(outside), str(tree / "pos" / "link"), target_is_directory=True)
    except (OSError, NotImplementedError):
        pytest.skip("symbolic links are not available")
    plain = keras.utils.text_dataset_from_directory(str(tree), shuffle=False, verbose=False)
    assert len(plain.file_paths) == 5
    linked = keras.utils.text_dataset_from_directory(str(tree), shuffle=False, verbose=False,
                                                     follow_links=True)
    assert os.path.join(str(tree), "pos", "link", "x.txt") in linked.file_paths
    assert (b"linked", 1) in elements(linked)


def test_aliases():
    assert keras.preprocessing.text_dataset_from_directory is \
        keras.utils.text_dataset_from_directory
    from minitf.keras.utils import text_dataset_from_directory
    assert text_dataset_from_directory is keras.utils.text_dataset_from_directory


def test_argument_errors(tree, tmp_path_factory):
    fn = keras.utils.text_dataset_from_directory
    root = str(tree)
    with pytest.raises(ValueError, match=r"text_dataset_from_directory: `labels` argument "
                                         r"should be a list/tuple.*number of text files.*"
                                         r"labels='x'"):
        fn(root, labels="x")
    with pytest.raises(ValueError, match=r"only pass `class_names` if `labels=\"inferred\"`"):
        fn(root, labels=[0] * 5, class_names=["a", "b"])
    with pytest.raises(ValueError, match=r"`label_mode` argument must be one of .* "
                                         r"label_mode='sparse'"):
        fn(root, label_mode="sparse")
    with pytest.raises(ValueError, match="must provide a `seed`"):
        fn(root, validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="`validation_split` must be between 0 and 1, "
                                         "received: 1.5"):
        fn(root, validation_split=1.5, subset="training", seed=1)
    with pytest.raises(ValueError, match="`subset` must be either .* received: 'train'"):
        fn(root, validation_split=0.2, subset="train", seed=1)
    with pytest.raises(ValueError, match="`subset` needs a `validation_split`"):
        fn(root, subset="training")
    with pytest.raises(ValueError, match=r"`class_names` passed did not match.*"
                                         r"\['neg', 'pos'\].*class_names=\['birds'\]"):
        fn(root, class_names=["birds"])
    with pytest.raises(ValueError, match="len\\(labels\\) is 2 while we found 5 files"):
        fn(root, labels=[0, 1], verbose=False)
    with pytest.raises(ValueError, match="`max_length` must be None or a non-negative "
                                         "integer, received: max_length=-1"):
        fn(root, max_length=-1)
    with pytest.raises(ValueError, match="only format=\"tf\".*format='grain'"):
        fn(root, format="grain")
    with pytest.raises(ValueError, match="no validation text files: validation_split=0.1 of "
                                         "the 5 files"):
        fn(root, validation_split=0.1, subset="both", seed=1, verbose=False)
    (tree / "birds").mkdir()
    (tree / "birds" / "b.txt").write_bytes(b"tweet")
    with pytest.raises(ValueError, match=r"exactly 2 class_names. Received: "
                                         r"class_names=\['birds', 'neg', 'pos'\]"):
        fn(root, label_mode="binary", verbose=False)
    empty = tmp_path_factory.mktemp("empty")
    (empty / "cls").mkdir()
    (empty / "cls" / "image.png").write_bytes(b"")
    with pytest.raises(ValueError, match=r"no text files found in directory .*empty.*"
                                         r"Allowed formats: \('.txt',\)"):
        fn(str(empty), verbose=False)
