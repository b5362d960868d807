"""Datasets of binary records read from files: ``tf.data.TFRecordDataset`` and
``tf.data.FixedLengthRecordDataset``.

    records = tf.data.TFRecordDataset(["a.tfrecord", "b.tfrecord"])      # scalar tf.string
    parsed = records.map(lambda r: tf.io.parse_single_example(r, spec))
    images = tf.data.FixedLengthRecordDataset("cifar.bin", record_bytes=3073)

Files are read lazily, one after another (or ``num_parallel_reads`` at a time, their records
interleaved one by one, as ``TextLineDataset`` does). A missing file raises
``tf.errors.NotFoundError`` when the iteration reaches it; a corrupt record (a checksum that
does not match), a truncated file or bad compressed data raises ``tf.errors.DataLossError``.
"""
import gzip
import os
import zlib

from .. import dtypes, errors
from ..io_gfile import _local, _os_errors
from ..tensor_spec import TensorSpec
from ..tfrecord import TFRecordWriter as _FileWriter, compression_name, open_decompressed, \
    read_records
from .dataset import UNKNOWN_CARDINALITY, Dataset
from .readers import (_buffer_size, _compression, _decompressed_chunks, _filenames_dataset,
                      _scalar_string_tensor, read_files)

__all__ = ["TFRecordDataset", "FixedLengthRecordDataset", "TFRecordWriter"]


def _tfrecord_file(display, compression, chunk_size, where):
    """The records of one TFRecord file (``bytes``)."""
    local = _local(display, where, "filename")
    with _os_errors(where, display):
        raw = open(local, "rb", buffering=chunk_size)
    with raw:
        stream = open_decompressed(raw, compression)
        try:
            yield from read_records(stream, display, where)
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise errors.DataLossError(
                None, None, f"{where}: cannot read {display!r} as {compression} data: "
                            f"{exc}") from exc


def _fixed_length_file(display, record_bytes, header_bytes, footer_bytes, compression,
                       chunk_size, where):
    """The fixed-size records of one file, its header and footer left out."""
    local = _local(display, where, "filename")
    if not compression:
        with _os_errors(where, display):
            size = os.path.getsize(local)
        body = size - header_bytes - footer_bytes
        if body < 0 or body % record_bytes:
            raise errors.InvalidArgumentError(
                None, None, _partial_message(where, display, header_bytes, footer_bytes, body,
                                             record_bytes))
    with _os_errors(where, display):
        stream = open(local, "rb")
    with stream:
        buffer, to_skip, emitted = bytearray(), header_bytes, 0
        for chunk in _decompressed_chunks(stream, compression, chunk_size, display, where):
            buffer += chunk
            if to_skip:
                skipped = min(to_skip, len(buffer))
                del buffer[:skipped]
                to_skip -= skipped
            start = 0
            while len(buffer) - start >= record_bytes + footer_bytes:
                yield bytes(buffer[start:start + record_bytes])
                start += record_bytes
            emitted += start
            del buffer[:start]
        body = len(buffer) - footer_bytes - to_skip
        if body:
            raise errors.DataLossError(
                None, None, _partial_message(where, display, header_bytes, footer_bytes,
                                             emitted + body, record_bytes))


def _partial_message(where, display, header_bytes, footer_bytes, body, record_bytes):
    return (f"{where}: excluding the header ({header_bytes} bytes) and footer "
            f"({footer_bytes} bytes), input file {display!r} has a body of {body} bytes, "
            f"which is not an exact multiple of the record length "
            f"({record_bytes} bytes)")


class _FileRecords(Dataset):
    """The records of the file named by a scalar string tensor, read by ``read(display)``."""

    def __init__(self, filename, read):
        self.display, self.read = os.fsdecode(filename._value[()]), read

    def _iterate(self):
        for record in self.read(self.display):
            yield _scalar_string_tensor(record)

    def _element_spec(self):
        return TensorSpec((), dtypes.string)


class _RecordFiles(Dataset):
    """The records of several files, read by ``read(display)``, in order or interleaved."""

    def _setup(self, filenames, read, num_parallel_reads, where):
        self._filenames = _filenames_dataset(filenames, where)

        def read_one_file(filename):
            return _FileRecords(filename, read)

        self._records = read_files(self._filenames, read_one_file, num_parallel_reads, where)

    def _iterate(self):
        return self._records._iterate()

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _element_spec(self):
        return TensorSpec((), dtypes.string)

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self.element_spec}>"


class TFRecordDataset(_RecordFiles):
    """The records of one or more TFRecord files, one scalar ``tf.string`` element each.

    ``filenames``: a path, a list of paths, a ``tf.string`` tensor or a dataset of scalar
    strings. ``compression_type``: None or ``""`` (none), ``"ZLIB"`` or ``"GZIP"``.
    ``buffer_size``: bytes read at a time (0 or None: 256 KiB). ``num_parallel_reads``: None
    reads the files in order; ``n`` (or ``tf.data.AUTOTUNE``) cycles through ``n`` files, one
    record from each in turn."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        where = "TFRecordDataset"
        compression = _compression(compression_type, where)
        chunk_size = _buffer_size(buffer_size, where)
        self._setup(filenames,
                    lambda display: _tfrecord_file(display, compression, chunk_size, where),
                    num_parallel_reads, where)


def _non_negative(value, what, where, minimum=0):
    if value is None:
        return 0
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = None
    if number is None or number < minimum:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: {what} must be an integer >= {minimum}, got {value!r}")
    return number


class FixedLengthRecordDataset(_RecordFiles):
    """Records of ``record_bytes`` bytes from one or more binary files, each file's first
    ``header_bytes`` and last ``footer_bytes`` bytes left out. A file whose body is not a
    multiple of ``record_bytes`` raises ``InvalidArgumentError`` (``DataLossError`` when
    compressed) as in TF. Other arguments as in ``TFRecordDataset``."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None, name=None):
        where = "FixedLengthRecordDataset"
        record_bytes = _non_negative(record_bytes, "record_bytes", where, minimum=1)
        header_bytes = _non_negative(header_bytes, "header_bytes", where)
        footer_bytes = _non_negative(footer_bytes, "footer_bytes", where)
        compression = _compression(compression_type, where)
        chunk_size = _buffer_size(buffer_size, where)
        self._setup(filenames,
                    lambda display: _fixed_length_file(display, record_bytes, header_bytes,
                                                       footer_bytes, compression, chunk_size,
                                                       where),
                    num_parallel_reads, where)


class TFRecordWriter:
    """``tf.data.experimental.TFRecordWriter(filename, compression_type=None)``: writes the
    scalar ``tf.string`` elements of a dataset to a TFRecord file with ``write(dataset)``
    (TF deprecates it in favour of ``tf.io.TFRecordWriter``)."""

    def __init__(self, filename, compression_type=None):
        self._filename = filename
        self._compression = compression_name(compression_type, "TFRecordWriter")

    def write(self, dataset):
        """Write every element of ``dataset`` as one record; the file replaces ``filename``
        once all are written."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Invalid `dataset.` Expected a `tf.data.Dataset` object but got "
                            f"{type(dataset)}.")
        spec = dataset.element_spec
        if not (isinstance(spec, TensorSpec) and spec.dtype == dtypes.string
                and spec.shape.is_compatible_with(())):
            shapes = getattr(spec, "shape", spec)
            types = getattr(spec, "dtype", spec)
            raise TypeError(f"Invalid `dataset`. Expected a`dataset` that produces scalar "
                            f"`tf.string` elements, but got a dataset which produces elements "
                            f"with shapes {shapes} and types {types}.")
        with _FileWriter(self._filename, self._compression) as writer:
            for record in dataset:
                writer.write(record)


def install(tf):
    """Set ``tf.data.TFRecordDataset``, ``tf.data.FixedLengthRecordDataset`` and
    ``tf.data.experimental.TFRecordWriter`` (idempotent)."""
    tf.data.TFRecordDataset = TFRecordDataset
    tf.data.FixedLengthRecordDataset = FixedLengthRecordDataset
    tf.data.experimental.TFRecordWriter = TFRecordWriter
