"""TF's ``TensorProto`` wire format: ``tf.io.serialize_tensor`` / ``tf.io.parse_tensor``, the
SparseTensor serializations (``serialize_sparse``, ``serialize_many_sparse``,
``deserialize_many_sparse``) and ``tf.io.decode_json_example``.

A serialized tensor is written as TF writes it: ``dtype`` (field 1), ``tensor_shape`` (field 2,
one ``dim`` message per dimension) and the values as little-endian ``tensor_content``
(field 4), or one ``string_val`` (field 8) per string. Parsing also reads the typed value
fields (``float_val``, ``int_val``, ... packed or not) that ``make_tensor_proto`` writes.
"""
import base64
import binascii
import json

import numpy

from . import backend as B, dtypes
from .errors import InvalidArgumentError
from .example_proto import (DecodeError, _fields, _length_delimited, _packed_varints,
                            _read_varint, _signed64, _varint)
from .sparse_more import runs_in_python
from .sparse_tensor import SparseTensor
from .string_tensors import OBJECT, bytes_array, string_tensor
from .strings_kernel import kernel, run_kernel
from .tensor import Tensor

__all__ = ["serialize_tensor", "parse_tensor", "serialize_sparse", "serialize_many_sparse",
           "deserialize_many_sparse", "decode_json_example"]

# TF's DataType enum values of the dtypes minitf has.
_ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
         "string": 7, "int64": 9, "bool": 10, "bfloat16": 14, "uint16": 17, "float16": 19,
         "uint32": 22, "uint64": 23}
_NAME_OF_ENUM = {number: name for name, number in _ENUM.items()}
# Typed value fields (float_val, double_val, int_val, int64_val, bool_val, half_val,
# uint32_val, uint64_val): field number -> how their values are written.
_VAL_FIELDS = {5: "f4", 6: "f8", 7: "varint", 10: "varint", 11: "varint", 13: "varint",
               16: "varint", 17: "varint"}


def _np_dtype(name):
    return OBJECT if name == "string" else getattr(dtypes, name).np


# --- encoding -----------------------------------------------------------------------------
def _shape_proto(shape):
    dims = b"".join(_length_delimited(2, _varint(0x08) + _varint(int(d)) if d else b"")
                    for d in shape)
    return dims


def _string_list_content(values):
    """Strings as TF's ``tensor_content`` holds them: all lengths (varints), then the bytes."""
    return b"".join(_varint(len(v)) for v in values) + b"".join(values)


def encode_tensor(array, dtype_name, strings_as_content=False):
    """The serialized TensorProto of a host array of ``dtype_name``."""
    if dtype_name not in _ENUM:
        raise TypeError(f"serialize_tensor: dtype {dtype_name} has no TensorProto encoding")
    out = _varint(0x08) + _varint(_ENUM[dtype_name])
    out += _length_delimited(2, _shape_proto(array.shape))
    if dtype_name == "string":
        flat = [bytes(v) for v in array.reshape(-1)]
        if strings_as_content:
            content = _string_list_content(flat)
            return out + (_length_delimited(4, content) if content else b"")
        return out + b"".join(_length_delimited(8, v) for v in flat)
    content = numpy.require(array, requirements='C').tobytes()   # little-endian hosts, as TF
    return out + (_length_delimited(4, content) if content else b"")


def _host_array(tensor, where):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{where}: expected a Tensor, got {type(tensor).__name__}")
    if tensor.dtype is dtypes.string:
        return tensor._value, "string"
    return numpy.asarray(B.to_numpy(tensor._value)), tensor.dtype.name


def _string_scalar(data):
    out = numpy.empty((), OBJECT)
    out[()] = data
    return out


def _serialize_forward(array, dtype_name):
    host = array if dtype_name == "string" else numpy.asarray(B.to_numpy(array))
    return _string_scalar(encode_tensor(host, dtype_name))


_SERIALIZE = kernel("serialize_tensor", _serialize_forward)   # replayed by a function trace


def serialize_tensor(tensor, name=None):
    """The serialized ``TensorProto`` of ``tensor`` (a scalar string tensor), byte for byte as
    TF writes it."""
    if not isinstance(tensor, Tensor):
        from .ops.convert import convert_to_tensor
        tensor = convert_to_tensor(tensor)
    if tensor.dtype.name not in _ENUM:
        raise TypeError(f"serialize_tensor: dtype {tensor.dtype.name} has no TensorProto "
                        f"encoding")
    return run_kernel(_SERIALIZE, (tensor,), dtype_name=tensor.dtype.name)


# --- decoding -----------------------------------------------------------------------------
def _dims(data):
    shape = []
    for number, wire, value in _fields(data):
        if number == 2 and wire == 2:
            size = 0
            for n, w, v in _fields(value):
                if n == 1 and w == 0:
                    size = _signed64(v)
            shape.append(size)
        elif number == 3 and wire == 0 and value:
            raise DecodeError("the tensor shape has unknown rank")
    return tuple(shape)


def _typed_values(raw, codec):
    if codec == "f4":
        return numpy.frombuffer(bytes(raw), "<f4")
    if codec == "f8":
        return numpy.frombuffer(bytes(raw), "<f8")
    return numpy.asarray(_packed_varints(bytes(raw)), numpy.int64)


def _read_string_content(content, count):
    lengths, pos, end = [], 0, len(content)
    for _ in range(count):
        size, pos = _read_varint(content, pos, end)
        lengths.append(size)
    out = []
    for size in lengths:
        if pos + size > end:
            raise DecodeError("string tensor_content is shorter than its lengths say")
        out.append(bytes(content[pos:pos + size]))
        pos += size
    return out


def decode_tensor(data, where):
    """``(dtype name, host array)`` of a serialized TensorProto."""
    dtype_number, shape, content, values, strings = 0, (), None, [], []
    try:
        for number, wire, value in _fields(data):
            if number == 1 and wire == 0:
                dtype_number = value
            elif number == 2 and wire == 2:
                shape = _dims(value)
            elif number == 4 and wire == 2:
                content = bytes(value)
            elif number == 8 and wire == 2:
                strings.append(bytes(value))
            elif number in _VAL_FIELDS:
                codec = _VAL_FIELDS[number]
                if wire == 2:
                    values.append(_typed_values(value, codec))
                elif wire == 5:
                    values.append(numpy.asarray([value], numpy.uint32).view("<f4"))
                elif wire == 1:
                    values.append(numpy.asarray([value], numpy.uint64).view("<f8"))
                else:
                    values.append(numpy.asarray([_signed64(value)], numpy.int64))
        name = _NAME_OF_ENUM.get(dtype_number)
        if name is None:
            raise DecodeError(f"unsupported dtype enum {dtype_number}")
        count = int(numpy.prod(shape, dtype=numpy.int64))
        if name == "string":
            flat = _read_string_content(content, count) if content is not None else strings
            array = numpy.empty(len(flat), OBJECT)
            array[:] = flat
        elif content is not None:
            np_dtype = numpy.dtype(_np_dtype(name))
            if len(content) != count * np_dtype.itemsize:
                raise DecodeError(f"tensor_content has {len(content)} bytes, shape "
                                  f"{list(shape)} of {name} needs {count * np_dtype.itemsize}")
            array = numpy.frombuffer(content, np_dtype).copy()
        else:
            flat = numpy.concatenate(values) if values else numpy.zeros(0)
            if name in ("float16", "bfloat16"):   # half_val holds the raw 16-bit patterns
                array = flat.astype(numpy.uint16).view(_np_dtype(name))
            else:
                array = flat.astype(_np_dtype(name))
        if array.size > count:
            raise DecodeError(f"{array.size} values for shape {list(shape)}")
        if array.size < count:   # TF repeats the last value (or zero) to fill the shape
            last = array[-1:] if array.size else numpy.full(1, b"" if name == "string" else 0,
                                                            array.dtype)
            array = numpy.concatenate([array, numpy.repeat(last, count - array.size)])
        return name, array.reshape(shape)
    except DecodeError as exc:
        raise InvalidArgumentError(None, None, f"{where}: could not parse a TensorProto from "
                                               f"{bytes(data[:40])!r}: {exc}") from None


def _tensor_of(name, array):
    if name == "string":
        return string_tensor(array)
    return Tensor(B.from_numpy(numpy.require(array, requirements='C')))


def parse_tensor(serialized, out_type, name=None):
    """The Tensor of a serialized ``TensorProto`` (a scalar string); ``out_type`` must be its
    dtype."""
    where = "parse_tensor"
    runs_in_python(where)
    records = bytes_array(serialized, f"{where}: serialized")
    if records.ndim != 0:
        raise InvalidArgumentError(None, None, f"{where}: serialized must be a scalar string, "
                                               f"got shape {list(records.shape)}")
    wanted = dtypes.as_dtype(out_type).name
    dtype_name, array = decode_tensor(records[()], where)
    if dtype_name != wanted:
        raise InvalidArgumentError(None, None, f"{where}: type mismatch between the parsed "
                                               f"tensor ({dtype_name}) and out_type ({wanted})")
    return _tensor_of(dtype_name, array)


# --- SparseTensor serializations -----------------------------------------------------------
def _sparse_parts(sp_input, where):
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"{where}: sp_input must be a tf.SparseTensor, got "
                        f"{type(sp_input).__name__}")
    indices = numpy.asarray(B.to_numpy(sp_input.indices._value), numpy.int64)
    values, dtype_name = _host_array(sp_input.values, where)
    return indices, values, dtype_name, numpy.asarray(sp_input._dims, numpy.int64)


def _three(parts, out_type, where):
    """The (indices, values, dense_shape) protos as a string tensor, or as objects of
    ``out_type`` ``tf.variant`` (unsupported)."""
    if dtypes.as_dtype(out_type) is not dtypes.string:
        raise TypeError(f"{where}: out_type must be tf.string (tf.variant is not supported), "
                        f"got {dtypes.as_dtype(out_type).name}")
    out = numpy.empty(len(parts), OBJECT)
    out[:] = parts
    return out


def serialize_sparse(sp_input, out_type=dtypes.string, name=None):
    """A string vector of 3: the serialized indices, values and dense shape of
    ``sp_input``."""
    where = "serialize_sparse"
    runs_in_python(where)
    indices, values, dtype_name, shape = _sparse_parts(sp_input, where)
    return string_tensor(_three([encode_tensor(indices, "int64"),
                                 encode_tensor(values, dtype_name, strings_as_content=True),
                                 encode_tensor(shape, "int64")], out_type, where))


def serialize_many_sparse(sp_input, out_type=dtypes.string, name=None):
    """A string matrix ``[N, 3]``: ``serialize_sparse`` of each minibatch entry (the first
    dimension) of ``sp_input``, of rank >= 2."""
    where = "serialize_many_sparse"
    runs_in_python(where)
    indices, values, dtype_name, shape = _sparse_parts(sp_input, where)
    if len(shape) < 2:
        raise InvalidArgumentError(None, None, f"{where}: sp_input must have rank >= 2 (a "
                                               f"minibatch), got dense shape {shape.tolist()}")
    rows = []
    for b in range(int(shape[0])):
        mine = indices[:, 0] == b
        rows.append(_three([encode_tensor(indices[mine, 1:], "int64"),
                            encode_tensor(values[mine], dtype_name, strings_as_content=True),
                            encode_tensor(shape[1:], "int64")], out_type, where))
    out = numpy.empty((len(rows), 3), OBJECT)
    for i, row in enumerate(rows):
        out[i] = row
    return string_tensor(out)


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """One SparseTensor of rank ``R + 1`` from a string matrix ``[N, 3]`` of serialized
    SparseTensors of rank ``R``: entry ``i`` becomes minibatch entry ``i``, and the dense
    shape is ``N`` and the largest of each dimension."""
    where = "deserialize_many_sparse"
    runs_in_python(where)
    table = bytes_array(serialized_sparse, f"{where}: serialized_sparse")
    if table.ndim != 2 or table.shape[1] != 3:
        raise InvalidArgumentError(None, None, f"{where}: serialized_sparse must be a matrix "
                                               f"[N, 3], got shape {list(table.shape)}")
    wanted = dtypes.as_dtype(dtype).name
    all_indices, all_values, shapes = [], [], []
    for b, (ind, val, shp) in enumerate(table):
        _, indices = decode_tensor(ind, where)
        values_dtype, values = decode_tensor(val, where)
        _, shape = decode_tensor(shp, where)
        if values_dtype != wanted:
            raise InvalidArgumentError(None, None, f"{where}: entry {b} holds {values_dtype} "
                                                   f"values, dtype is {wanted}")
        if indices.ndim != 2 or indices.shape[1] != shape.size or shapes and \
                shape.size != shapes[0].size:
            raise InvalidArgumentError(None, None, f"{where}: entry {b} has indices of shape "
                                                   f"{list(indices.shape)} and dense shape "
                                                   f"{shape.tolist()}; the ranks must agree")
        all_indices.append(numpy.concatenate(
            [numpy.full((len(indices), 1), b, numpy.int64), indices.astype(numpy.int64)], 1))
        all_values.append(values)
        shapes.append(shape)
    if rank is not None and shapes and shapes[0].size + 1 != int(rank):
        raise InvalidArgumentError(None, None, f"{where}: rank is {int(rank)}, the "
                                               f"SparseTensors have rank {shapes[0].size + 1}")
    inner = numpy.max(numpy.stack(shapes), 0) if shapes else numpy.zeros(
        0 if rank is None else int(rank) - 1, numpy.int64)
    dims = (len(shapes),) + tuple(int(d) for d in inner)
    indices = numpy.concatenate(all_indices) if all_indices else numpy.zeros((0, len(dims)),
                                                                             numpy.int64)
    values = numpy.concatenate(all_values) if all_values else numpy.zeros(0, _np_dtype(wanted))
    order = numpy.lexsort(indices.T[::-1]) if len(indices) else numpy.zeros(0, numpy.int64)
    return SparseTensor._trusted(Tensor(B.from_numpy(indices[order])),
                                 _tensor_of(wanted, values[order]), dims)


# --- JSON Example -----------------------------------------------------------------------------
_JSON_KINDS = {"bytesList": 1, "floatList": 2, "int64List": 3}   # Feature's fields


def _feature_from_json(key, feature, where):
    """The serialized ``Feature`` of one JSON feature, its list written unpacked as TF's JSON
    parser writes it."""
    if not isinstance(feature, dict) or len(feature) != 1 or \
            next(iter(feature)) not in _JSON_KINDS:
        raise InvalidArgumentError(None, None, f"{where}: feature {key!r} must be an object with "
                                               f"one of {sorted(_JSON_KINDS)}, got "
                                               f"{json.dumps(feature)[:60]}")
    kind, body = next(iter(feature.items()))
    values = body.get("value", []) if isinstance(body, dict) else None
    if not isinstance(values, list):
        raise InvalidArgumentError(None, None, f"{where}: feature {key!r}: {kind} needs a "
                                               f"'value' list, got {json.dumps(body)[:60]}")
    try:
        if kind == "bytesList":
            items = b"".join(_length_delimited(1, base64.b64decode(v, validate=True))
                             for v in values)
        elif kind == "floatList":
            items = b"".join(b"\x0d" + numpy.float32(float(v)).tobytes() for v in values)
        else:
            items = b"".join(b"\x08" + _varint(_checked_int64(v)) for v in values)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InvalidArgumentError(None, None, f"{where}: feature {key!r}: bad {kind} value: "
                                               f"{exc}") from None
    return _length_delimited(_JSON_KINDS[kind], items)


def _checked_int64(value):
    number = int(value)
    if not -(1 << 63) <= number < (1 << 63) or isinstance(value, (bool, float)):
        raise ValueError(f"{value!r} is not an int64")
    return number


def _example_from_json(text, where):
    try:
        message = json.loads(text)
    except ValueError as exc:
        raise InvalidArgumentError(None, None, f"{where}: not valid JSON: {exc}") from None
    if not isinstance(message, dict) or set(message) - {"features"}:
        raise InvalidArgumentError(None, None, f"{where}: expected a JSON Example "
                                               f'{{"features": {{"feature": {{...}}}}}}, got '
                                               f"{text[:60]!r}")
    features = message.get("features", {})
    feature_map = features.get("feature", {}) if isinstance(features, dict) else None
    if not isinstance(feature_map, dict):
        raise InvalidArgumentError(None, None, f"{where}: 'features' must hold a 'feature' "
                                               f"object, got {json.dumps(features)[:60]}")
    entries = b"".join(_length_delimited(1, _length_delimited(1, k.encode("utf-8"))
                                         + _length_delimited(2, _feature_from_json(k, v, where)))
                       for k, v in feature_map.items())
    return _length_delimited(1, entries) if "features" in message else b""


def decode_json_example(json_examples, name=None):
    """Each JSON ``tf.train.Example`` (protobuf's JSON mapping: ``bytesList`` values in
    base64, ``int64List`` values as numbers or strings) as a serialized Example."""
    where = "decode_json_example"
    runs_in_python(where)
    texts = bytes_array(json_examples, f"{where}: json_examples")
    out = numpy.empty(texts.shape, OBJECT)
    flat = out.reshape(-1)
    for i, text in enumerate(texts.reshape(-1)):
        flat[i] = _example_from_json(text.decode("utf-8"), where)
    return string_tensor(out)


def install(tf):
    """Set the serialization functions on ``tf.io`` (idempotent)."""
    for name in __all__:
        setattr(tf.io, name, globals()[name])
