"""``keras.utils.audio_dataset_from_directory``: a ``tf.data.Dataset`` of WAV files.

    train_ds, val_ds = keras.utils.audio_dataset_from_directory(
        "mini_speech_commands", batch_size=64, validation_split=0.2, seed=0,
        output_sequence_length=16000, subset="both")
    for audio, labels in train_ds:      # audio: float32 (64, 16000, 1), labels: int32 (64,)
        ...

The files are listed, checked, shuffled and split by the helpers of
``image_dataset_from_directory`` (``utils_files``), and decoded with ``tf.audio.decode_wav``
when the dataset is iterated.
"""
import os
import struct

from ..audio_ops import decode_wav
from ..data.dataset import AUTOTUNE
from ..io_files import read_file
from ..ragged_tensor import RaggedTensor
from .utils_files import (_check_label_args, _check_split_args, _list_labelled_files,
                          _split_files)
from .utils_text_files import check_subsets, labelled_files

__all__ = ["audio_dataset_from_directory"]

ALLOWED_AUDIO_FORMATS = (".wav",)

# How the shared directory helpers name audio files in their messages.


def _wav_sampling_rate(path):
    """The sampling rate in the header of the WAV file ``path``, or None when the header
    cannot be read (decoding the file then reports what is wrong with it)."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
            if len(head) < 12 or head[:4] != b"RIFF" or head[8:] != b"WAVE":
                return None
            while True:
                chunk = f.read(8)
                if len(chunk) < 8:
                    return None
                size = struct.unpack("<I", chunk[4:])[0]
                if chunk[:4] == b"fmt ":
                    body = f.read(8)
                    return struct.unpack("<I", body[4:8])[0] if len(body) == 8 else None
                f.seek(size + (size & 1), os.SEEK_CUR)
    except OSError:
        return None


def _check_sampling_rate(where, sampling_rate, file_paths):
    """Keras's checks of ``sampling_rate``; files at another rate would need resampling."""
    if isinstance(sampling_rate, bool) or not isinstance(sampling_rate, int):
        raise ValueError(f"{where}: `sampling_rate` should have an integer value. Received: "
                         f"sampling_rate={sampling_rate!r}")
    if sampling_rate <= 0:
        raise ValueError(f"{where}: `sampling_rate` should be higher than 0. Received: "
                         f"sampling_rate={sampling_rate}")
    for path in file_paths:
        rate = _wav_sampling_rate(path)
        if rate is not None and rate != sampling_rate:
            raise ImportError(f"{where}: the file {path} has a sampling rate of {rate} Hz; "
                              f"resampling it to sampling_rate={sampling_rate} needs "
                              f"tensorflow_io's `tfio.audio.resample`, which is not "
                              f"available. Pass sampling_rate=None (or the files' own rate) "
                              f"to read the files as they are.")


def _read_audio(path, output_sequence_length, ragged):
    """The float32 ``[samples, channels]`` audio of the WAV file named by the scalar string
    ``path``, cut or zero-padded to ``output_sequence_length`` samples if given; a
    RaggedTensor (ragged samples) when ``ragged``."""
    desired = -1 if output_sequence_length is None else output_sequence_length
    audio, _ = decode_wav(read_file(path), desired_samples=desired)
    return RaggedTensor.from_tensor(audio) if ragged else audio


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, batch_size=32, sampling_rate=None,
                                 output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None,
                                 follow_links=False, verbose=True):
    """A ``tf.data.Dataset`` of ``(audio, labels)`` batches from the ``.wav`` files of
    ``directory``, as Keras makes it.

    Audio is float32 ``[batch, samples, channels]`` (16-bit PCM WAV). With
    ``output_sequence_length`` every clip is cut or zero-padded to that many samples;
    without it each batch is zero-padded to its longest clip, or with ``ragged=True`` is a
    RaggedTensor keeping each clip's length. ``batch_size=None`` gives single clips.
    ``sampling_rate`` is accepted when every file already has that rate (resampling is not
    available). Labels, ``class_names``, ``shuffle``/``seed`` and ``validation_split`` with
    ``subset`` (``"both"`` returns ``(train_ds, val_ds)``) are as in
    ``text_dataset_from_directory``. The dataset has a ``class_names`` attribute.
    """
    where = "audio_dataset_from_directory"
    labels, label_mode = _check_label_args(where, "audio", labels, label_mode, class_names)
    if ragged and output_sequence_length is not None:
        raise ValueError(f"{where}: cannot set both `ragged` and `output_sequence_length`. "
                         f"Received: ragged={ragged!r}, "
                         f"output_sequence_length={output_sequence_length!r}")
    if output_sequence_length is not None and (
            isinstance(output_sequence_length, bool)
            or not isinstance(output_sequence_length, int) or output_sequence_length < 0):
        raise ValueError(f"{where}: `output_sequence_length` must be None or a non-negative "
                         f"integer. Received: output_sequence_length="
                         f"{output_sequence_length!r}")
    seed = _check_split_args(where, validation_split, subset, shuffle, seed)
    file_paths, file_labels, class_names = _list_labelled_files(
        where, "audio", directory, labels, label_mode, class_names, ALLOWED_AUDIO_FORMATS,
        follow_links, shuffle, seed, verbose)
    if sampling_rate is not None:
        _check_sampling_rate(where, sampling_rate, file_paths)
    num_classes = len(class_names) if class_names else 0
    parts = _split_files(file_paths, file_labels, validation_split, subset, verbose)
    check_subsets(where, "audio files", parts, validation_split, subset, file_paths, directory)

    def make(paths, targets, shuffled):
        ds = labelled_files(paths, targets, label_mode, num_classes, shuffled, batch_size, seed,
                            lambda path: _read_audio(path, output_sequence_length, ragged))
        ds = ds.prefetch(AUTOTUNE)
        if batch_size is not None:
            if output_sequence_length is None and not ragged:
                ds = ds.padded_batch(batch_size)
            else:
                ds = ds.batch(batch_size)
        ds.class_names = class_names
        return ds

    # As in Keras, the validation half of subset="both" keeps its (already shuffled) order.
    datasets = [make(paths, targets, shuffle and i == 0)
                for i, (paths, targets) in enumerate(parts)]
    return tuple(datasets) if len(datasets) == 2 else datasets[0]
