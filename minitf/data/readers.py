"""Datasets read from files: ``tf.data.TextLineDataset`` and ``Dataset.list_files``.

    lines = tf.data.TextLineDataset(["a.txt", "b.txt"])    # b'first line of a', ...
    zipped = tf.data.TextLineDataset("log.gz", compression_type="GZIP")
    files = tf.data.Dataset.list_files("/data/*.csv", shuffle=False)  # sorted paths

Lines are split as TF splits them: at each ``"\\n"``, without it and without a ``"\\r"`` just
before it; a last line without ``"\\n"`` is kept unless it is empty. Files are read lazily, on
each iteration, ``buffer_size`` bytes at a time; a missing file raises
``tf.errors.NotFoundError`` when the iteration reaches it, a corrupt compressed file
``tf.errors.DataLossError``.
"""
import gzip
import os
import zlib

import numpy

from .. import dtypes, errors
from ..io_files import matching_paths
from ..io_gfile import _local, _os_errors
from ..string_tensors import OBJECT, bytes_array, string_tensor
from ..tensor_spec import TensorSpec
from .dataset import AUTOTUNE, UNKNOWN_CARDINALITY, Dataset

__all__ = ["TextLineDataset", "list_files"]

_DEFAULT_BUFFER_SIZE = 256 * 1024   # TF's default reader buffer, in bytes
_COMPRESSION_TYPES = ("", "ZLIB", "GZIP")


def _string_vector(values):
    """A 1-D string tensor of ``bytes`` values."""
    out = numpy.empty((len(values),), OBJECT)
    for i, value in enumerate(values):
        out[i] = value
    return string_tensor(out)


def _scalar_string_tensor(value):
    out = numpy.empty((), OBJECT)
    out[()] = value
    return string_tensor(out)


def _filenames_dataset(filenames, where):
    """``filenames`` (a path, a list of them, a string tensor or a dataset of scalar strings)
    as a dataset of scalar strings."""
    if isinstance(filenames, Dataset):
        try:
            spec = filenames.element_spec
        except ValueError:      # an empty dataset: nothing to read, nothing to check
            return filenames
        if not (isinstance(spec, TensorSpec) and spec.dtype == dtypes.string
                and spec._dims == ()):
            raise TypeError(f"{where}: a `filenames` dataset must have scalar tf.string "
                            f"elements, got elements {spec}")
        return filenames
    if isinstance(filenames, os.PathLike):
        filenames = os.fspath(filenames)
    elif isinstance(filenames, (list, tuple)):
        filenames = [os.fspath(f) if isinstance(f, os.PathLike) else f for f in filenames]
    try:
        names = bytes_array(filenames, where)
    except TypeError:
        raise TypeError(f"{where}: `filenames` must be a path, a list of paths, a tf.string "
                        f"tensor or a dataset of scalar tf.string elements, got "
                        f"{type(filenames).__name__} {filenames!r:.80}") from None
    return Dataset.from_tensor_slices(string_tensor(names.reshape(-1)))


def _compression(compression_type, where):
    if compression_type is None:
        return ""
    try:
        value = bytes_array(compression_type, where)
    except TypeError:
        value = None
    if value is None or value.ndim != 0 or value[()].decode("utf-8", "replace") \
            not in _COMPRESSION_TYPES:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: unsupported compression_type {compression_type!r}; "
                        f"expected None, '' (no compression), 'ZLIB' or 'GZIP'")
    return value[()].decode()


def _buffer_size(buffer_size, where):
    if buffer_size is None:
        return _DEFAULT_BUFFER_SIZE
    size = int(buffer_size)
    if size < 0:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: buffer_size must be >= 0 (0 for the default), got {size}")
    return size or _DEFAULT_BUFFER_SIZE


def _decompressed_chunks(stream, compression, chunk_size, display, where):
    """The bytes of ``stream`` (an open binary file), decompressed, in chunks."""
    try:
        if compression == "GZIP":
            with gzip.GzipFile(fileobj=stream) as unzipped:
                while chunk := unzipped.read(chunk_size):
                    yield chunk
        elif compression == "ZLIB":
            inflate = zlib.decompressobj()
            while raw := stream.read(chunk_size):
                if chunk := inflate.decompress(raw):
                    yield chunk
            if tail := inflate.flush():
                yield tail
            if not inflate.eof:
                raise EOFError("the zlib stream ends before its end marker")
        else:
            while chunk := stream.read(chunk_size):
                yield chunk
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise errors.DataLossError(
            None, None, f"{where}: cannot read {display!r} as {compression} data: "
                        f"{exc}") from exc


def _file_lines(display, compression, chunk_size, where):
    """The lines of one file (``bytes``), split as TF's ``TextLineDataset`` splits them."""
    local = _local(display, where, "filename")
    with _os_errors(where, display):
        stream = open(local, "rb")
    with stream:
        pending = b""
        for chunk in _decompressed_chunks(stream, compression, chunk_size, display, where):
            pieces = (pending + chunk).split(b"\n")
            pending = pieces.pop()
            for line in pieces:
                yield line[:-1] if line.endswith(b"\r") else line
        if pending.endswith(b"\r"):
            pending = pending[:-1]
        if pending:
            yield pending


class _FileLines(Dataset):
    """The lines of the file named by a scalar string tensor."""

    def __init__(self, filename, compression, chunk_size, where):
        self.display = os.fsdecode(filename._value[()])
        self.compression, self.chunk_size, self.where = compression, chunk_size, where

    def _iterate(self):
        for line in _file_lines(self.display, self.compression, self.chunk_size, self.where):
            yield _scalar_string_tensor(line)

    def _element_spec(self):
        return TensorSpec((), dtypes.string)


def read_files(filenames, read_one_file, num_parallel_reads, where):
    """The records of the files that the dataset ``filenames`` names (``read_one_file(name)``
    is a dataset of one file's records): the files one after another (``num_parallel_reads``
    None), or ``n`` at a time (``tf.data.AUTOTUNE``: the number of CPU cores), one record from
    each in turn, as TF orders them."""
    if num_parallel_reads is None:
        return filenames.flat_map(read_one_file)
    if int(num_parallel_reads) == AUTOTUNE:
        return filenames.interleave(read_one_file, block_length=1)
    if int(num_parallel_reads) < 1:
        raise ValueError(f"{where}: num_parallel_reads must be None, a positive number or "
                         f"tf.data.AUTOTUNE, got {num_parallel_reads!r}")
    return filenames.interleave(read_one_file, cycle_length=int(num_parallel_reads),
                                block_length=1)


class TextLineDataset(Dataset):
    """The lines of one or more text files, one scalar ``tf.string`` element per line, the
    files one after another (``num_parallel_reads`` files at a time, their lines
    interleaved one by one, as TF orders them).

    ``filenames``: a path, a list of paths, a ``tf.string`` tensor or a dataset of scalar
    strings. ``compression_type``: None or ``""`` (none), ``"ZLIB"`` or ``"GZIP"``.
    ``buffer_size``: bytes read at a time (0 or None: 256 KiB). ``num_parallel_reads``: None
    reads the files in order; ``n`` (or ``tf.data.AUTOTUNE``, the number of CPU cores) cycles
    through ``n`` files, one line from each in turn. Files are read in the iterating thread.
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        where = "TextLineDataset"
        self._filenames = _filenames_dataset(filenames, where)
        compression = _compression(compression_type, where)
        chunk_size = _buffer_size(buffer_size, where)

        def read_one_file(filename):
            return _FileLines(filename, compression, chunk_size, where)

        self._lines = read_files(self._filenames, read_one_file, num_parallel_reads, where)

    def _iterate(self):
        return self._lines._iterate()

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _element_spec(self):
        return TensorSpec((), dtypes.string)

    def __repr__(self):
        return f"<TextLineDataset element_spec={self.element_spec}>"


def list_files(file_pattern, shuffle=None, seed=None, name=None):
    """A dataset of the paths matching ``file_pattern`` (a glob pattern or a list of them;
    see ``tf.io.matching_files``), sorted, then shuffled unless ``shuffle=False`` (a new order
    on each iteration; ``seed`` makes the orders reproducible). Raises
    ``tf.errors.InvalidArgumentError`` when nothing matches."""
    where = "Dataset.list_files"
    patterns, paths = matching_paths(file_pattern, where)
    if not paths:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: no files matched pattern: {', '.join(patterns)}")
    dataset = Dataset.from_tensor_slices(_string_vector(paths))
    if shuffle is None or shuffle:
        dataset = dataset.shuffle(len(paths), seed=seed)
    return dataset


Dataset.list_files = staticmethod(list_files)
