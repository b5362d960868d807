"""``tf.train.Example`` and friends: TF's ``example.proto``/``feature.proto`` messages, with
the protocol buffer wire format encoded and decoded here (no protobuf dependency).

    ex = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, 2.0]))}))
    data = ex.SerializeToString()
    tf.train.Example.FromString(data).features.feature["x"].float_list.value   # [1.5, 2.0]

Values are kept as protobuf keeps them: ``FloatList`` values rounded to float32, ``Int64List``
values as Python ints in the int64 range, ``BytesList`` values as ``bytes``. Lists are written
packed (as protobuf writes them for proto3) and read packed or unpacked. Map entries are
written in insertion order (protobuf's own order is unspecified); unknown fields are skipped.
``str(message)`` is protobuf's text format, map entries sorted by key.
"""
import struct

import numpy

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
           "FeatureLists", "Example", "SequenceExample", "DecodeError"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class DecodeError(ValueError):
    """Raised for bytes that are not a valid serialized message (protobuf's DecodeError)."""


# --- wire format ---------------------------------------------------------------------------

def _varint(value):
    """The varint bytes of a non-negative int (negatives as their 64-bit two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_varint(data, pos, end):
    result = shift = 0
    while True:
        if pos >= end:
            raise DecodeError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & ((1 << 64) - 1), pos
        shift += 7
        if shift >= 70:
            raise DecodeError("varint longer than 10 bytes")


def _signed64(value):
    return value - (1 << 64) if value >= (1 << 63) else value


def _packed_varints(data):
    """The int64 values of concatenated varints, decoded with numpy."""
    raw = numpy.frombuffer(data, numpy.uint8)
    if raw.size == 0:
        return []
    if raw[-1] >= 0x80:
        raise DecodeError("truncated packed varint")
    ends = numpy.flatnonzero(raw < 0x80)
    starts = numpy.concatenate(([0], ends[:-1] + 1))
    position = numpy.arange(raw.size) - numpy.repeat(starts, ends - starts + 1)
    if position.max() >= 10:
        raise DecodeError("varint longer than 10 bytes")
    parts = (raw & 0x7F).astype(numpy.uint64) << (7 * position).astype(numpy.uint64)
    return numpy.bitwise_or.reduceat(parts, starts).view(numpy.int64).tolist()


def _fields(data):
    """``(field_number, wire_type, value)`` for each field of a serialized message: ints for
    varint/fixed fields, ``memoryview`` slices for length-delimited ones."""
    view = memoryview(data)
    pos, end = 0, len(view)
    while pos < end:
        key, pos = _read_varint(view, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise DecodeError("field number 0")
        if wire == 0:
            value, pos = _read_varint(view, pos, end)
        elif wire == 1:
            if pos + 8 > end:
                raise DecodeError("truncated 64-bit field")
            value, pos = int.from_bytes(view[pos:pos + 8], "little"), pos + 8
        elif wire == 2:
            size, pos = _read_varint(view, pos, end)
            if pos + size > end:
                raise DecodeError(f"length-delimited field {number} of {size} bytes runs past "
                                  f"the end of the message")
            value, pos = view[pos:pos + size], pos + size
        elif wire == 5:
            if pos + 4 > end:
                raise DecodeError("truncated 32-bit field")
            value, pos = int.from_bytes(view[pos:pos + 4], "little"), pos + 4
        else:
            raise DecodeError(f"unsupported wire type {wire} (field {number})")
        yield number, wire, value


def _length_delimited(number, payload):
    return _varint((number << 3) | 2) + _varint(len(payload)) + payload


# --- repeated scalar containers --------------------------------------------------------------

class _Repeated(list):
    """A list that converts what is put in it, as protobuf's repeated containers do."""
    __slots__ = ()
    _convert = staticmethod(lambda v: v)

    def __init__(self, values=()):
        super().__init__(self._convert(v) for v in _iterable(values))

    def append(self, value):
        super().append(self._convert(value))

    def extend(self, values):
        super().extend(self._convert(v) for v in _iterable(values))

    def insert(self, index, value):
        super().insert(index, self._convert(value))

    def __setitem__(self, index, value):
        if isinstance(index, slice):
            super().__setitem__(index, [self._convert(v) for v in value])
        else:
            super().__setitem__(index, self._convert(value))


def _iterable(values):
    if isinstance(values, numpy.ndarray):
        return values.reshape(-1).tolist()
    if hasattr(values, "_value") and hasattr(values, "numpy"):     # a minitf Tensor
        return numpy.asarray(values.numpy()).reshape(-1).tolist()
    return values


def _host_scalar(value):
    """A rank-0 minitf Tensor as its numpy scalar (protobuf takes scalar tensors)."""
    if hasattr(value, "_value") and hasattr(value, "numpy") and value.shape.rank == 0:
        return numpy.asarray(value.numpy())[()]
    return value


def _to_float32(value):
    value = _host_scalar(value)
    if isinstance(value, (bool, numpy.bool_)) or not isinstance(
            value, (int, float, numpy.integer, numpy.floating)):
        raise TypeError(f"FloatList: {value!r:.60} has type {type(value).__name__}, but "
                        f"expected one of: int, float")
    return float(numpy.float32(value))


def _to_int64(value):
    # Bools are taken as 0/1, as protobuf did before version 5 (TF's TFRecord tutorial stores
    # bool features that way); protobuf 5+ rejects them.
    value = _host_scalar(value)
    if isinstance(value, (float, numpy.floating)) or not isinstance(
            value, (int, numpy.integer, numpy.bool_)):
        raise TypeError(f"Int64List: {value!r:.60} has type {type(value).__name__}, but "
                        f"expected one of: int")
    value = int(value)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"Int64List: value out of range for int64: {value}")
    return value


def _to_bytes(value):
    if isinstance(value, numpy.bytes_):
        return bytes(value)
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"BytesList: {value!r:.60} has type {type(value).__name__}, but "
                        f"expected one of: bytes (encode str values first, e.g. "
                        f"s.encode('utf-8'))")
    return bytes(value)


class _FloatValues(_Repeated):
    __slots__ = ()
    _convert = staticmethod(_to_float32)

    def __array__(self, dtype=None, copy=None):     # numpy.array(values) is float32
        return numpy.array(list(self), dtype or numpy.float32)


class _Int64Values(_Repeated):
    __slots__ = ()
    _convert = staticmethod(_to_int64)


class _BytesValues(_Repeated):
    __slots__ = ()
    _convert = staticmethod(_to_bytes)


# --- text format: what str() of a protobuf message prints --------------------------------------

_ESCAPES = {ord("\n"): b"\\n", ord("\r"): b"\\r", ord("\t"): b"\\t", ord('"'): b'\\"',
            ord("'"): b"\\'", ord("\\"): b"\\\\"}


def _quoted(data, keep_utf8=False):
    """``data`` (bytes) as a quoted text-format literal: C escapes, and octal escapes for bytes
    that are not printable ASCII (UTF-8 bytes of ``string`` fields are kept as they are)."""
    out = bytearray(b'"')
    for b in data:
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif 0x20 <= b < 0x7F or (keep_utf8 and b >= 0x80):
            out.append(b)
        else:
            out += b"\\%03o" % b
    return (out + b'"').decode("utf-8")


def _float_text(value):
    """A float32 value in the fewest digits (6, else 9) that read back as the same float32."""
    text = "%.6g" % value
    return text if value != value or float(numpy.float32(text)) == value else "%.9g" % value


def _block(name, lines):
    return [f"{name} {{", *("  " + line for line in lines), "}"]


# --- messages ------------------------------------------------------------------------------

class _Message:
    """What every message here offers, as protobuf messages do."""
    __slots__ = ()

    @classmethod
    def FromString(cls, data):
        """The message that ``data`` (bytes) serializes."""
        message = cls()
        message.ParseFromString(data)
        return message

    def ParseFromString(self, data):
        """Replace this message's contents by the message ``data`` serializes."""
        if hasattr(data, "numpy") and hasattr(data, "_value"):    # a scalar string tensor
            data = data.numpy()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{type(self).__name__}.ParseFromString: expected bytes, got "
                            f"{type(data).__name__}")
        self.Clear()
        self._merge(data)
        return len(data)

    def MergeFromString(self, data):
        self._merge(data)
        return len(data)

    def CopyFrom(self, other):
        if other is not self:
            self.ParseFromString(other.SerializeToString())

    def ByteSize(self):
        return len(self.SerializeToString())

    def __eq__(self, other):
        return type(other) is type(self) and self._compare_key() == other._compare_key()

    __hash__ = None

    def __repr__(self):
        return f"{type(self).__name__}({self._repr_body()})"

    def __str__(self):
        """The message in protobuf text format (map entries sorted by key)."""
        return "".join(line + "\n" for line in self._text_lines())


class _ListMessage(_Message):
    __slots__ = ("_values",)
    _container = _Repeated

    def __init__(self, value=()):
        self._values = self._container(value)

    @property
    def value(self):
        """The list of values."""
        return self._values

    def Clear(self):
        del self._values[:]

    def _compare_key(self):
        return list(self._values)

    def _repr_body(self):
        return f"value={list(self._values)!r}"

    def _text_lines(self):
        return [f"value: {self._text_value(v)}" for v in self._values]


class BytesList(_ListMessage):
    """``tf.train.BytesList``: a list of byte strings."""
    __slots__ = ()
    _container = _BytesValues
    _text_value = staticmethod(_quoted)

    def SerializeToString(self, deterministic=None):
        return b"".join(_length_delimited(1, v) for v in self._values)

    def _merge(self, data):
        for number, wire, value in _fields(data):
            if number == 1 and wire == 2:
                list.append(self._values, bytes(value))


class FloatList(_ListMessage):
    """``tf.train.FloatList``: a list of float32 values."""
    __slots__ = ()
    _container = _FloatValues
    _text_value = staticmethod(_float_text)

    def SerializeToString(self, deterministic=None):
        if not self._values:
            return b""
        payload = numpy.asarray(self._values, "<f4").tobytes()
        return _length_delimited(1, payload)

    def _merge(self, data):
        for number, wire, value in _fields(data):
            if number != 1:
                continue
            if wire == 2:
                if len(value) % 4:
                    raise DecodeError(f"FloatList: packed float data of {len(value)} bytes is "
                                      f"not a multiple of 4")
                list.extend(self._values, numpy.frombuffer(value, "<f4").tolist())
            elif wire == 5:
                list.append(self._values, struct.unpack("<f", value.to_bytes(4, "little"))[0])


class Int64List(_ListMessage):
    """``tf.train.Int64List``: a list of int64 values."""
    __slots__ = ()
    _container = _Int64Values
    _text_value = str

    def SerializeToString(self, deterministic=None):
        if not self._values:
            return b""
        return _length_delimited(1, b"".join(_varint(v) for v in self._values))

    def _merge(self, data):
        for number, wire, value in _fields(data):
            if number != 1:
                continue
            if wire == 2:
                list.extend(self._values, _packed_varints(value))
            elif wire == 0:
                list.append(self._values, _signed64(value))


_KINDS = {"bytes_list": (1, BytesList), "float_list": (2, FloatList),
          "int64_list": (3, Int64List)}
_KIND_OF_NUMBER = {number: (name, cls) for name, (number, cls) in _KINDS.items()}


class Feature(_Message):
    """``tf.train.Feature``: one of ``bytes_list``, ``float_list`` or ``int64_list`` (the
    ``kind`` oneof; ``WhichOneof("kind")`` names the one set)."""
    __slots__ = ("_kind", "_lists")

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        self._kind, self._lists = None, {}
        for name, given in (("bytes_list", bytes_list), ("float_list", float_list),
                            ("int64_list", int64_list)):
            if given is None:
                continue
            cls = _KINDS[name][1]
            if not isinstance(given, cls):
                raise TypeError(f"Feature: {name} must be a tf.train.{cls.__name__}, got "
                                f"{type(given).__name__}")
            self._lists = {name: cls(given.value)}
            self._kind = name

    def _list(self, name):
        if self._kind is not None and self._kind != name:
            return _KINDS[name][1]()     # reading another member of the oneof: a default
        if name not in self._lists:
            self._lists[name] = _KINDS[name][1]()
        return self._lists[name]

    bytes_list = property(lambda self: self._list("bytes_list"),
                          doc="The BytesList (empty unless this is the kind set).")
    float_list = property(lambda self: self._list("float_list"),
                          doc="The FloatList (empty unless this is the kind set).")
    int64_list = property(lambda self: self._list("int64_list"),
                          doc="The Int64List (empty unless this is the kind set).")

    def WhichOneof(self, oneof_group):
        """The name of the list set (``"bytes_list"``, ...) or None."""
        if oneof_group != "kind":
            raise ValueError(f"Feature.WhichOneof: protocol message has no oneof "
                             f"{oneof_group!r} (its oneof is 'kind')")
        if self._kind is not None:
            return self._kind
        for name in _KINDS:     # a list filled after reading the attribute
            if self._lists.get(name) is not None and self._lists[name].value:
                return name
        return None

    def HasField(self, name):
        if name == "kind":
            return self.WhichOneof("kind") is not None
        return self.WhichOneof("kind") == name

    def Clear(self):
        self._kind, self._lists = None, {}

    def SerializeToString(self, deterministic=None):
        kind = self.WhichOneof("kind")
        if kind is None:
            return b""
        return _length_delimited(_KINDS[kind][0], self._lists[kind].SerializeToString())

    def _merge(self, data):
        for number, wire, value in _fields(data):
            if wire == 2 and number in _KIND_OF_NUMBER:
                name, cls = _KIND_OF_NUMBER[number]
                if self._kind != name:
                    self._lists = {name: cls()}
                    self._kind = name
                self._lists[name]._merge(value)

    def _compare_key(self):
        kind = self.WhichOneof("kind")
        return kind, (self._lists[kind]._compare_key() if kind else None)

    def _repr_body(self):
        kind = self.WhichOneof("kind")
        return f"{kind}={self._lists[kind]!r}" if kind else ""

    def _text_lines(self):
        kind = self.WhichOneof("kind")
        return _block(kind, self._lists[kind]._text_lines()) if kind else []


class _MessageMap(dict):
    """A map field: string keys to messages; reading a missing key adds an empty message."""
    __slots__ = ("_cls",)

    def __init__(self, cls, items=None):
        super().__init__()
        self._cls = cls
        for key, value in (items or {}).items():
            self[key] = value

    def __missing__(self, key):
        value = self[key] = self._cls()
        return value

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"map keys must be str, got {type(key).__name__} {key!r:.60}")
        if not isinstance(value, self._cls):
            raise TypeError(f"map values must be tf.train.{self._cls.__name__}, got "
                            f"{type(value).__name__}")
        super().__setitem__(key, value)

    def get_or_create(self, key):
        return self[key]

    def serialize(self, number):
        out = []
        for key, value in self.items():
            entry = _length_delimited(1, key.encode("utf-8")) + _length_delimited(
                2, value.SerializeToString())
            out.append(_length_delimited(number, entry))
        return b"".join(out)

    def merge_entry(self, data):
        key, value = "", self._cls()
        for number, wire, field in _fields(data):
            if number == 1 and wire == 2:
                try:
                    key = bytes(field).decode("utf-8")
                except UnicodeDecodeError:
                    raise DecodeError("map key is not valid UTF-8") from None
            elif number == 2 and wire == 2:
                value._merge(field)
        dict.__setitem__(self, key, value)


class _MapMessage(_Message):
    """A message whose only field (number 1) is a map of string keys to ``_value_cls``."""
    __slots__ = ("_map",)
    _value_cls = None
    _field = None

    def __init__(self, **kwargs):
        unknown = set(kwargs) - {self._field}
        if unknown:
            raise ValueError(f"{type(self).__name__}: protocol message has no field "
                             f"{sorted(unknown)[0]!r} (its field is {self._field!r})")
        self._map = _MessageMap(self._value_cls, kwargs.get(self._field))

    def Clear(self):
        self._map.clear()

    def SerializeToString(self, deterministic=None):
        return self._map.serialize(1)

    def _merge(self, data):
        for number, wire, value in _fields(data):
            if number == 1 and wire == 2:
                self._map.merge_entry(value)

    def _compare_key(self):
        return {k: v._compare_key() for k, v in self._map.items()}

    def _repr_body(self):
        return f"{self._field}={dict(self._map)!r}"

    def _text_lines(self):
        lines = []
        for key in sorted(self._map):
            lines += _block(self._field, [f"key: {_quoted(key.encode('utf-8'), True)}",
                                          *_block("value", self._map[key]._text_lines())])
        return lines


class Features(_MapMessage):
    """``tf.train.Features``: ``feature``, a map of names to ``tf.train.Feature``."""
    __slots__ = ()
    _value_cls, _field = Feature, "feature"
    feature = property(lambda self: self._map, doc="The map of names to Feature.")


class FeatureList(_Message):
    """``tf.train.FeatureList``: ``feature``, a list of ``tf.train.Feature``."""
    __slots__ = ("_features",)

    def __init__(self, feature=()):
        self._features = list(feature)
        for f in self._features:
            if not isinstance(f, Feature):
                raise TypeError(f"FeatureList: feature must hold tf.train.Feature values, got "
                                f"{type(f).__name__}")

    feature = property(lambda self: self._features, doc="The list of Feature.")

    def add(self, **kwargs):
        self._features.append(Feature(**kwargs))
        return self._features[-1]

    def Clear(self):
        self._features = []

    def SerializeToString(self, deterministic=None):
        return b"".join(_length_delimited(1, f.SerializeToString()) for f in self._features)

    def _merge(self, data):
        for number, wire, value in _fields(data):
            if number == 1 and wire == 2:
                feature = Feature()
                feature._merge(value)
                self._features.append(feature)

    def _compare_key(self):
        return [f._compare_key() for f in self._features]

    def _repr_body(self):
        return f"feature={self._features!r}"

    def _text_lines(self):
        return [line for f in self._features for line in _block("feature", f._text_lines())]


class FeatureLists(_MapMessage):
    """``tf.train.FeatureLists``: ``feature_list``, a map of names to ``FeatureList``."""
    __slots__ = ()
    _value_cls, _field = FeatureList, "feature_list"
    feature_list = property(lambda self: self._map, doc="The map of names to FeatureList.")


class _Composite(_Message):
    """A message of optional sub-message fields: ``_FIELDS`` maps names to (number, cls)."""
    __slots__ = ("_parts", "_read_only")
    _FIELDS = {}

    def __init__(self, **kwargs):
        self._parts, self._read_only = {}, set()
        for name, value in kwargs.items():
            if name not in self._FIELDS:
                raise ValueError(f"{type(self).__name__}: protocol message has no field "
                                 f"{name!r} (fields: {', '.join(self._FIELDS)})")
            cls = self._FIELDS[name][1]
            if value is not None:
                if not isinstance(value, cls):
                    raise TypeError(f"{type(self).__name__}: {name} must be a "
                                    f"tf.train.{cls.__name__}, got {type(value).__name__}")
                self._parts[name] = value

    def _part(self, name):
        if name not in self._parts:
            # Only read so far: present once it holds something (protobuf's field presence).
            self._parts[name] = self._FIELDS[name][1]()
            self._read_only.add(name)
        return self._parts[name]

    def _present(self, name):
        if name in self._read_only and self._parts[name].SerializeToString():
            self._read_only.discard(name)
        return name in self._parts and name not in self._read_only

    def HasField(self, name):
        return self._present(name)

    def Clear(self):
        self._parts, self._read_only = {}, set()

    def SerializeToString(self, deterministic=None):
        return b"".join(_length_delimited(number, self._parts[name].SerializeToString())
                        for name, (number, _) in self._FIELDS.items() if self._present(name))

    def _merge(self, data):
        by_number = {number: name for name, (number, _) in self._FIELDS.items()}
        for number, wire, value in _fields(data):
            if wire == 2 and number in by_number:
                name = by_number[number]
                self._part(name)._merge(value)
                self._read_only.discard(name)

    def _compare_key(self):
        return {n: p._compare_key() for n, p in self._parts.items() if self._present(n)}

    def _repr_body(self):
        return ", ".join(f"{n}={p!r}" for n, p in self._parts.items() if self._present(n))

    def _text_lines(self):
        return [line for name in self._FIELDS if self._present(name)
                for line in _block(name, self._parts[name]._text_lines())]


class Example(_Composite):
    """``tf.train.Example``: ``features``, a ``tf.train.Features``."""
    __slots__ = ()
    _FIELDS = {"features": (1, Features)}
    features = property(lambda self: self._part("features"), doc="The Features.")


class SequenceExample(_Composite):
    """``tf.train.SequenceExample``: ``context`` (``Features``) and ``feature_lists``
    (``FeatureLists``)."""
    __slots__ = ()
    _FIELDS = {"context": (1, Features), "feature_lists": (2, FeatureLists)}
    context = property(lambda self: self._part("context"), doc="The context Features.")
    feature_lists = property(lambda self: self._part("feature_lists"),
                             doc="The FeatureLists.")


def install(tf):
    """Set the message classes on ``tf.train`` (idempotent)."""
    for name in ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
                 "FeatureLists", "Example", "SequenceExample"):
        setattr(tf.train, name, globals()[name])
