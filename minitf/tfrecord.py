"""TFRecord files: ``tf.io.TFRecordWriter``, ``tf.io.TFRecordOptions`` and the record framing
that ``tf.data.TFRecordDataset`` reads.

    with tf.io.TFRecordWriter("train.tfrecord") as writer:
        writer.write(example.SerializeToString())

Each record is framed as TF frames it: its length (uint64, little endian), the masked CRC-32C
of those 8 bytes (uint32), the data, and the masked CRC-32C of the data. A whole file can be
GZIP or ZLIB compressed. The writer writes a temporary file beside the target and renames it
over the target on ``close()``, so a file is never seen half-written.
"""
import gzip
import os
import zlib

import numpy

from . import errors
from .io_gfile import _local, _open_temp_beside, _os_errors, _publish
from .string_tensors import scalar_text_argument

__all__ = ["TFRecordWriter", "TFRecordOptions", "crc32c", "masked_crc32c"]

_POLY = 0x82F63B78      # Castagnoli, reflected
_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


def _make_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (_POLY if crc & 1 else 0)
        table.append(crc)
    return table


_TABLE = _make_table()
_NP_TABLE = numpy.array(_TABLE, numpy.uint32)
_LANE = 512                  # bytes per lane of the vectorized CRC
_VECTOR_MIN = 16 * 1024      # shorter data takes the plain table loop


def _crc_raw_bytes(crc, data):
    """The CRC register after feeding ``data`` to a register holding ``crc`` (no pre/post
    inversion), one table lookup per byte."""
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def _apply(columns, regs):
    """The GF(2)-linear map given by its 32 ``columns`` (images of the bits) on ``regs``."""
    out = numpy.zeros_like(regs)
    for bit in range(32):
        out ^= numpy.where((regs >> numpy.uint32(bit)) & numpy.uint32(1), columns[bit],
                           numpy.uint32(0))
    return out


def _lane_registers(lanes, start):
    """Each row's CRC register after feeding it (rows: a 2-D uint8 array), vectorized over
    the rows; ``start`` holds the initial registers."""
    regs = start.copy()
    eight = numpy.uint32(8)
    for column in numpy.ascontiguousarray(lanes.T):
        regs = _NP_TABLE[(regs ^ column) & numpy.uint32(0xFF)] ^ (regs >> eight)
    return regs


_ZERO_SHIFT = []    # the map "feed _LANE zero bytes" on the register, as 32 columns


def _zero_shift_columns():
    if not _ZERO_SHIFT:
        units = numpy.uint32(1) << numpy.arange(32, dtype=numpy.uint32)
        _ZERO_SHIFT.append(_lane_registers(numpy.zeros((32, _LANE), numpy.uint8), units))
    return _ZERO_SHIFT[0]


def _crc_raw_vectorized(data):
    """The register (from 0) after feeding ``data``: lanes of ``_LANE`` bytes run in parallel,
    then lane results are combined pairwise (CRC is linear, and leading zero bytes do not
    change a register that starts at 0)."""
    raw = numpy.frombuffer(data, numpy.uint8)
    pad = (-raw.size) % _LANE
    if pad:
        raw = numpy.concatenate((numpy.zeros(pad, numpy.uint8), raw))
    lanes = raw.reshape(-1, _LANE)
    regs = _lane_registers(lanes, numpy.zeros(lanes.shape[0], numpy.uint32))
    shift = _zero_shift_columns()
    while regs.size > 1:
        if regs.size % 2:
            regs = numpy.concatenate((numpy.zeros(1, numpy.uint32), regs))
        regs = _apply(shift, regs[0::2]) ^ regs[1::2]
        shift = _apply(shift, shift)       # the map for twice as many zero bytes
    return int(regs[0])


def crc32c(data):
    """The CRC-32C (Castagnoli) checksum of ``data`` (bytes-like)."""
    data = bytes(data)
    if len(data) < _VECTOR_MIN:
        return _crc_raw_bytes(_U32, data) ^ _U32
    # An initial register of all ones is the same as inverting the first 4 bytes.
    head = bytes(b ^ 0xFF for b in data[:4])
    return _crc_raw_vectorized(head + data[4:]) ^ _U32


def masked_crc32c(data):
    """TFRecord's masked CRC-32C of ``data``."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & _U32) + _MASK_DELTA) & _U32


def frame_record(data):
    """One record as it is stored in a TFRecord file."""
    length = len(data).to_bytes(8, "little")
    return (length + masked_crc32c(length).to_bytes(4, "little") + data
            + masked_crc32c(data).to_bytes(4, "little"))


def read_records(stream, display, where):
    """The records of an (uncompressed) TFRecord byte stream, checking both CRCs."""
    offset = 0
    while True:
        header = stream.read(12)
        if not header:
            return
        if len(header) < 12:
            raise errors.DataLossError(
                None, None, f"{where}: truncated record at byte offset {offset} in "
                            f"{display!r}: a record header needs 12 bytes, found "
                            f"{len(header)}")
        length_bytes = header[:8]
        if masked_crc32c(length_bytes) != int.from_bytes(header[8:], "little"):
            raise errors.DataLossError(
                None, None, f"{where}: corrupted record at byte offset {offset} in "
                            f"{display!r}: the length's checksum does not match")
        length = int.from_bytes(length_bytes, "little")
        data = stream.read(length)
        footer = stream.read(4)
        if len(data) < length or len(footer) < 4:
            raise errors.DataLossError(
                None, None, f"{where}: truncated record at byte offset {offset} in "
                            f"{display!r}: expected {length} bytes of data and a checksum")
        if masked_crc32c(data) != int.from_bytes(footer, "little"):
            raise errors.DataLossError(
                None, None, f"{where}: corrupted record at byte offset {offset} in "
                            f"{display!r}: the data's checksum does not match")
        yield data
        offset += 16 + length


_COMPRESSION = {None: "", "": "", "NONE": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


def compression_name(value, where):
    """``value`` (None, '', 'GZIP', 'ZLIB' or a TFRecordOptions) as '', 'GZIP' or 'ZLIB'."""
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) or value is None:
        key = value.upper() if isinstance(value, str) else value
        if key in _COMPRESSION:
            return _COMPRESSION[key]
    raise ValueError(f"{where}: unsupported compression_type {value!r}; expected None, '' "
                     f"(no compression), 'ZLIB' or 'GZIP'")


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: how a TFRecord file is compressed.

    ``compression_type``: None/'' (none), 'GZIP' or 'ZLIB'; ``compression_level``: 0-9
    (None: zlib's default, 6). The buffer and window settings are accepted for
    compatibility; only ``compression_strategy`` and ``mem_level`` also reach zlib."""

    compression_type_map = {"": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        self.compression_type = compression_name(compression_type, "TFRecordOptions")
        if compression_level is not None and not -1 <= int(compression_level) <= 9:
            raise ValueError(f"TFRecordOptions: compression_level must be in [-1, 9], got "
                             f"{compression_level!r}")
        self.compression_level = compression_level
        self.flush_mode, self.input_buffer_size = flush_mode, input_buffer_size
        self.output_buffer_size, self.window_bits = output_buffer_size, window_bits
        self.compression_method, self.mem_level = compression_method, mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """'' , 'GZIP' or 'ZLIB' for ``options`` (a TFRecordOptions, a string or None)."""
        return compression_name(options, "TFRecordOptions.get_compression_type_string")

    def _compressor(self):
        level = -1 if self.compression_level is None else int(self.compression_level)
        wbits = 31 if self.compression_type == "GZIP" else 15
        return zlib.compressobj(level, zlib.DEFLATED, wbits,
                                8 if self.mem_level is None else int(self.mem_level),
                                0 if self.compression_strategy is None
                                else int(self.compression_strategy))

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _record_bytes(record):
    if isinstance(record, (bytes, bytearray, memoryview)):
        return bytes(record)
    return scalar_text_argument(record, "TFRecordWriter.write", "record",
                                "bytes, str or a scalar tf.string tensor")


class TFRecordWriter:
    """``tf.io.TFRecordWriter(path, options=None)``: writes records to a TFRecord file.

    ``options``: a ``TFRecordOptions`` or a compression type ('', 'GZIP', 'ZLIB'). Use it as
    a context manager or call ``close()``; the file appears at ``path`` only then."""

    def __init__(self, path, options=None):
        where = "TFRecordWriter"
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            raise TypeError(f"{where}: path must be a str, bytes or os.PathLike, got "
                            f"{type(path).__name__} {path!r:.60}")
        self._options = options if isinstance(options, TFRecordOptions) else \
            TFRecordOptions(compression_name(options, where))
        self._display, self._path = path, _local(path, where)
        with _os_errors(where, path):
            self._out, self._tmp = _open_temp_beside(self._path, copy_existing=False)
        self._compress = self._options._compressor() \
            if self._options.compression_type else None

    def _check_open(self, what):
        if self._out is None:
            raise errors.FailedPreconditionError(
                None, None, f"TFRecordWriter.{what}: the writer for {self._display!r} is "
                            f"closed")

    def write(self, record):
        """Append one record (bytes, str or a scalar tf.string tensor)."""
        self._check_open("write")
        framed = frame_record(_record_bytes(record))
        self._out.write(self._compress.compress(framed) if self._compress else framed)

    def flush(self):
        """Push buffered data to the temporary file (the target appears on ``close``)."""
        self._check_open("flush")
        if self._compress:
            self._out.write(self._compress.flush(zlib.Z_SYNC_FLUSH))
        self._out.flush()

    def close(self):
        """Finish the file and move it to its path (a second call does nothing)."""
        if self._out is None:
            return
        out, self._out = self._out, None
        if self._compress:
            out.write(self._compress.flush())
        with _os_errors("TFRecordWriter.close", self._display):
            _publish(out, self._tmp, self._path)

    def _abandon(self):
        out, self._out = self._out, None
        if out is not None:
            out.close()
            try:
                os.unlink(self._tmp)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:       # nothing half-written reaches the path
            self._abandon()
        return False

    def __del__(self):
        if getattr(self, "_out", None) is not None:
            self._abandon()


def open_decompressed(stream, compression):
    """A binary file-like object reading ``stream`` decompressed."""
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=stream)
    if compression == "ZLIB":
        return _ZlibReader(stream)
    return stream


class _ZlibReader:
    """``read(n)`` over a zlib stream."""

    def __init__(self, stream, chunk_size=256 * 1024):
        self._stream, self._chunk = stream, chunk_size
        self._inflate, self._buffer = zlib.decompressobj(), bytearray()

    def read(self, size):
        while len(self._buffer) < size and not self._inflate.eof:
            raw = self._stream.read(self._chunk)
            if not raw:
                self._buffer += self._inflate.flush()
                if not self._inflate.eof:
                    raise EOFError("the zlib stream ends before its end marker")
                break
            self._buffer += self._inflate.decompress(raw)
        out = bytes(self._buffer[:size])
        del self._buffer[:size]
        return out


def install(tf):
    """Set ``tf.io.TFRecordWriter`` and ``tf.io.TFRecordOptions`` (idempotent)."""
    tf.io.TFRecordWriter = TFRecordWriter
    tf.io.TFRecordOptions = TFRecordOptions
