"""``keras.utils.text_dataset_from_directory``: a ``tf.data.Dataset`` of text files.

    train_ds, val_ds = keras.utils.text_dataset_from_directory(
        "aclImdb/train", validation_split=0.2, subset="both", seed=42, batch_size=32)
    for texts, labels in train_ds:      # texts: tf.string (32,), labels: int32 (32,)
        ...

The files are listed, checked, shuffled and split by the helpers that
``image_dataset_from_directory`` uses (``utils_files``), and read when the dataset is iterated.
"""
import os

import numpy as np

from ..data.dataset import AUTOTUNE, Dataset
from ..io_files import read_file
from ..string_tensors import OBJECT, string_tensor
from .utils_files import (_check_label_args, _check_split_args, _label_values,
                          _list_labelled_files, _split_files)

__all__ = ["text_dataset_from_directory"]

ALLOWED_TEXT_FORMATS = (".txt",)


def _read_text(path, max_length):
    """The bytes of the file named by the scalar string tensor ``path``, the first
    ``max_length`` of them if given (as Keras's ``tf.strings.substr(text, 0, max_length)``)."""
    text = read_file(path)
    if max_length is None:
        return text
    out = np.empty((), OBJECT)
    out[()] = text._value[()][:max_length]
    return string_tensor(out)


def _paths_tensor(paths):
    out = np.empty((len(paths),), OBJECT)
    for i, path in enumerate(paths):
        out[i] = os.fsencode(path)
    return string_tensor(out)


def check_subsets(where, noun, parts, validation_split, subset, file_paths, directory):
    """Keras's error for a training or validation subset left empty by ``validation_split``
    (``parts``: the ``(paths, labels)`` of each requested subset)."""
    if validation_split is None:
        return
    for (paths, _), part in zip(parts, ["training", "validation"] if subset == "both"
                                else [subset]):
        if not paths:
            raise ValueError(f"{where}: no {part} {noun}: validation_split="
                             f"{validation_split} of the {len(file_paths)} files found in "
                             f"directory {directory} leaves none for {part}")


def labelled_files(paths, targets, label_mode, num_classes, shuffled, batch_size, seed, read):
    """The dataset of ``read(path)`` for each file (with its label unless ``label_mode`` is
    None), shuffled first as Keras shuffles the paths (a buffer of eight batches)."""
    ds = Dataset.from_tensor_slices(_paths_tensor(paths))
    if label_mode is not None:
        values = _label_values(targets, label_mode, num_classes)
        ds = Dataset.zip((ds, Dataset.from_tensor_slices(values)))
    if shuffled:
        ds = ds.shuffle(1024 if batch_size is None else batch_size * 8, seed=seed)
    if label_mode is None:
        return ds.map(read)
    return ds.map(lambda path, y: (read(path), y))


def text_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                class_names=None, batch_size=32, max_length=None, shuffle=True,
                                seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):  # noqa: A002
    """A ``tf.data.Dataset`` of ``(texts, labels)`` batches from the ``.txt`` files of
    ``directory``, as Keras makes it.

    With ``labels="inferred"`` each subdirectory of ``directory`` is a class (alphanumeric
    order, or the order of ``class_names``); ``labels`` may also be a list of integer labels
    for the files in sorted path order, or None (texts only). ``label_mode``: ``"int"``
    (int32), ``"categorical"`` (float32 one-hot), ``"binary"`` (float32 ``(n, 1)``, two
    classes) or None. Texts are scalar ``tf.string`` tensors of each file's bytes, cut to the
    first ``max_length`` bytes if given; ``batch_size=None`` gives single samples.
    ``validation_split`` with ``subset`` ``"training"``, ``"validation"`` or ``"both"`` (a
    ``(train_ds, val_ds)`` pair) splits the shuffled files; ``seed`` fixes the shuffle. The
    dataset has ``class_names`` and ``file_paths`` attributes.
    """
    where = "text_dataset_from_directory"
    if format != "tf":
        raise ValueError(f'{where}: only format="tf" (a tf.data.Dataset) is supported, '
                         f'received: format={format!r}')
    if max_length is not None and (isinstance(max_length, bool)
                                   or not isinstance(max_length, (int, np.integer))
                                   or max_length < 0):
        raise ValueError(f"{where}: `max_length` must be None or a non-negative integer, "
                         f"received: max_length={max_length!r}")
    labels, label_mode = _check_label_args(where, "text", labels, label_mode, class_names)
    seed = _check_split_args(where, validation_split, subset, shuffle, seed)
    file_paths, file_labels, class_names = _list_labelled_files(
        where, "text", directory, labels, label_mode, class_names, ALLOWED_TEXT_FORMATS,
        follow_links, shuffle, seed, verbose)
    num_classes = len(class_names) if class_names else 0
    parts = _split_files(file_paths, file_labels, validation_split, subset, verbose)
    check_subsets(where, "text files", parts, validation_split, subset, file_paths, directory)

    def make(paths, targets, shuffled):
        ds = labelled_files(paths, targets, label_mode, num_classes, shuffled, batch_size, seed,
                            lambda path: _read_text(path, max_length))
        if batch_size is not None:
            ds = ds.batch(batch_size)
        ds = ds.prefetch(AUTOTUNE)
        ds.class_names, ds.file_paths = class_names, list(paths)
        return ds

    # As in Keras, the validation half of subset="both" keeps its (already shuffled) order.
    datasets = [make(paths, targets, shuffle and i == 0)
                for i, (paths, targets) in enumerate(parts)]
    return tuple(datasets) if len(datasets) == 2 else datasets[0]
