"""Byte codecs of ``tf.io``: ``decode_raw``, ``encode_base64``/``decode_base64`` (web-safe
base64, as TF) and ``decode_compressed``.

    tf.io.decode_raw(record, tf.uint8)                 # bytes -> [n] uint8
    tf.io.encode_base64(b"\\xfb\\xff")                   # b'-_8' (no padding by default)
    tf.io.decode_compressed(blob, compression_type="GZIP")

They work element-wise on string tensors of any shape.
"""
import base64
import binascii
import gzip
import re
import zlib

import numpy

from . import backend as B, dtypes, errors
from .string_tensors import OBJECT, bytes_array, map_bytes, string_tensor
from .tensor import Tensor

__all__ = ["decode_raw", "encode_base64", "decode_base64", "decode_compressed"]

_RAW_TYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
              "uint16", "uint32", "uint64", "bool")


def _strings(value, where):
    try:
        return bytes_array(value, f"{where}: input")
    except TypeError:
        raise TypeError(f"{where}: expected a string tensor, bytes or str (or a list of them), "
                        f"got {type(value).__name__} {value!r:.60}") from None


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """Each string's bytes read as numbers of ``out_type``: a tensor of shape
    ``input.shape + [n]``. All strings must have the same length (a multiple of the type's
    size), unless ``fixed_length`` bytes are taken from each (cut, or padded with zeros)."""
    where = "decode_raw"
    array = _strings(input_bytes, where)
    dtype = dtypes.as_dtype(out_type)
    if dtype.name not in _RAW_TYPES:
        raise TypeError(f"{where}: out_type must be one of {', '.join(_RAW_TYPES)}, got "
                        f"{dtype.name}")
    np_type = numpy.dtype(dtype.np).newbyteorder("<" if little_endian else ">")
    size = np_type.itemsize
    flat = list(array.reshape(-1))
    if fixed_length is not None:
        length = int(fixed_length)
        if length < 0 or length % size:
            raise errors.InvalidArgumentError(
                None, None, f"{where}: fixed_length ({length}) must be a non-negative "
                            f"multiple of the size of {dtype.name} ({size})")
        flat = [s[:length].ljust(length, b"\0") for s in flat]
    elif flat:
        length = len(flat[0])
        if length % size:
            raise errors.InvalidArgumentError(
                None, None, f"{where}: input has length {length} that is not a multiple of "
                            f"{size}, the size of {dtype.name}")
        for i, s in enumerate(flat):
            if len(s) != length:
                raise errors.InvalidArgumentError(
                    None, None, f"{where}: input strings must all be the same size, but "
                                f"element {i} has size {len(s)} != {length}")
    else:
        length = 0
    values = numpy.frombuffer(b"".join(flat), np_type).astype(dtype.np)
    values = values.reshape(array.shape + (length // size,))
    return Tensor(B.from_numpy(numpy.array(values, order="C")))


def encode_base64(input, pad=False, name=None):
    """Each string in web-safe base64 (``-`` and ``_`` for ``+`` and ``/``), without ``=``
    padding unless ``pad``."""
    def encode(s):
        text = base64.urlsafe_b64encode(s)
        return text if pad else text.rstrip(b"=")
    return string_tensor(map_bytes(encode, _strings(input, "encode_base64")))


_WEB_SAFE = re.compile(rb"[A-Za-z0-9_-]*")


def _decode_one(s):
    body = s.rstrip(b"=")
    padding = len(s) - len(body)
    if not _WEB_SAFE.fullmatch(body) or padding > 2 or (padding and len(s) % 4):
        raise errors.InvalidArgumentError(
            None, None, f"decode_base64: invalid character found in base64 {s[:60]!r} "
                        f"(expected web-safe base64: A-Z a-z 0-9 - _, optional '=' padding "
                        f"to a multiple of 4)")
    if len(body) % 4 == 1:
        raise errors.InvalidArgumentError(
            None, None, f"decode_base64: base64 string length cannot be 1 modulo 4, got "
                        f"{len(body)} characters in {s[:60]!r}")
    try:
        return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
    except binascii.Error as exc:     # pragma: no cover - excluded by the checks above
        raise errors.InvalidArgumentError(None, None, f"decode_base64: {exc}") from None


def decode_base64(input, name=None):
    """Each web-safe base64 string decoded (``=`` padding optional)."""
    return string_tensor(map_bytes(_decode_one, _strings(input, "decode_base64")))


def _decompressor(compression_type):
    kind = compression_type
    if isinstance(kind, Tensor):
        kind = bytes_array(kind, "decode_compressed: compression_type")[()]
    if isinstance(kind, bytes):
        kind = kind.decode("utf-8", "replace")
    if kind in (None, ""):
        return lambda s: s
    if kind == "ZLIB":
        return zlib.decompress
    if kind == "GZIP":
        return gzip.decompress
    raise errors.InvalidArgumentError(
        None, None, f"decode_compressed: unsupported compression_type {compression_type!r}; "
                    f"expected '' (none), 'ZLIB' or 'GZIP'")


def decode_compressed(bytes, compression_type="", name=None):
    """Each string decompressed: ``compression_type`` '' (as is), 'ZLIB' or 'GZIP'. Data that
    does not decompress raises ``tf.errors.DataLossError``."""
    inflate = _decompressor(compression_type)
    array = _strings(bytes, "decode_compressed")

    def one(s):
        try:
            return inflate(s)
        except (zlib.error, gzip.BadGzipFile, EOFError, OSError) as exc:
            raise errors.DataLossError(
                None, None, f"decode_compressed: cannot decompress {s[:40]!r} as "
                            f"{compression_type}: {exc}") from None
    return string_tensor(map_bytes(one, array, OBJECT))


def install(tf):
    """Set the codecs on ``tf.io`` (idempotent)."""
    for name in __all__:
        setattr(tf.io, name, globals()[name])
