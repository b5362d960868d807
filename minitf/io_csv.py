"""``tf.io.decode_csv``: CSV records (strings) to one tensor per column, as TF's DecodeCSV.

    a, b, c = tf.io.decode_csv(["1,x,2.5", '2,"y, z",'], record_defaults=[[0], [""], [0.0]])
    # a: [1, 2] int32, b: [b"x", b"y, z"], c: [2.5, 0.0] float32

Each column's dtype is its default's (float32, float64, int32, int64 or string); an empty
default (``[]``, ``tf.constant([], tf.int64)``) makes the column required. An empty field, or
one equal to ``na_value``, takes the default (``""`` quoted counts as empty). Fields are
split as TF splits them: ``"..."`` quotes a field (``""`` inside is one quote) when
``use_quote_delim``, and then a quote inside an unquoted field is an error. Numbers may have
ASCII spaces around them; integers are decimal, floats decimal with an optional exponent,
``inf``/``infinity``/``nan``. Bad input raises ``tf.errors.InvalidArgumentError`` with TF's
wording (``Field 1 in record 0 is not a valid float: abc``).

What ``tf.data.experimental.CsvDataset`` shares with it (the column defaults, the field
conversion, the column selection checks) is here too.
"""
import re

import numpy

from . import backend as B
from . import dtypes
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .string_tensors import OBJECT, scalar_text_argument
from .strings_convert import _to_float32
from .strings_kernel import kernel, run_kernel, string_input
from .tensor import Tensor

__all__ = ["decode_csv"]

CSV_DTYPES = ("float32", "float64", "int32", "int64", "string")
_KIND_NAMES = {"float32": "float", "float64": "double", "int32": "int32", "int64": "int64"}
_SPACE = b" \t\n\v\f\r"
_INT = re.compile(rb"[+-]?[0-9]+")
_FLOAT = re.compile(rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    rb"|(?i:inf|infinity|nan))")
_QUOTE, _CR, _LF = 34, 13, 10


class CsvColumn:
    """One output column: its dtype, its default (None: the column is required) and the
    function that turns a field's bytes into a value (None when the field is not valid)."""
    __slots__ = ("dtype", "default", "parse")

    def __init__(self, dtype, default):
        self.dtype, self.default = dtype, default
        self.parse = _PARSERS[dtype.name]

    def kind(self):
        """The type name TF's messages use (``float`` for float32, ``double`` for float64)."""
        return _KIND_NAMES[self.dtype.name]


def _parse_int(bits):
    low, high = -2 ** (bits - 1), 2 ** (bits - 1) - 1

    def parse(field):
        text = field.strip(_SPACE)
        if _INT.fullmatch(text) is None:
            return None
        value = int(text)
        return value if low <= value <= high else None
    return parse


def _parse_float(single):
    def parse(field):
        text = field.strip(_SPACE)
        if _FLOAT.fullmatch(text) is None:
            return None
        value = float(text)     # decimal text, inf, infinity or nan: Python's syntax too
        return _to_float32(text, value) if single else value
    return parse


_PARSERS = {"int32": _parse_int(32), "int64": _parse_int(64), "float32": _parse_float(True),
            "float64": _parse_float(False), "string": bytes}


def _is_dtype(value):
    return isinstance(value, dtypes.DType) or (
        isinstance(value, type) and issubclass(value, numpy.generic))


def csv_columns(record_defaults, where, allow_dtypes=False):
    """``record_defaults`` as a list of ``CsvColumn``. Each item is a default value (a scalar
    or a one-element vector: the column is optional) or an empty vector (required); with
    ``allow_dtypes`` a dtype also makes a required column, as ``CsvDataset`` accepts."""
    if isinstance(record_defaults, Tensor) or not isinstance(record_defaults, (list, tuple)):
        raise TypeError(f"{where}: `record_defaults` must be a list with one default per "
                        f"column, got {type(record_defaults).__name__} "
                        f"{record_defaults!r:.80}")
    columns = []
    for i, item in enumerate(record_defaults):
        if allow_dtypes and _is_dtype(item):
            dtype = dtypes.as_dtype(item)
            if dtype.name not in CSV_DTYPES:
                raise TypeError(f"{where}: record_defaults[{i}] is the dtype {dtype.name}; "
                                f"expected one of {', '.join(CSV_DTYPES)}")
            columns.append(CsvColumn(dtype, None))
            continue
        try:
            t = item if isinstance(item, Tensor) else convert_to_tensor(item)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{where}: record_defaults[{i}] ({item!r:.60}) cannot be a column "
                            f"default: {exc}") from None
        if t.dtype.name not in CSV_DTYPES:
            allowed = ("a dtype or " if allow_dtypes else "") + "a tensor of " + \
                ", ".join(CSV_DTYPES)
            raise TypeError(f"{where}: record_defaults[{i}] has dtype {t.dtype.name}; "
                            f"expected {allowed}")
        value = t._value if t.dtype is dtypes.string else numpy.asarray(B.to_numpy(t._value))
        if value.ndim > 1:
            raise InvalidArgumentError(
                f"{where}: Each record default should be at most rank 1, but "
                f"record_defaults[{i}] has shape {tuple(value.shape)}")
        if value.size > 1:
            raise InvalidArgumentError(
                f"{where}: There should only be 1 default per field but field {i} has "
                f"{value.size}")
        columns.append(CsvColumn(t.dtype, value.reshape(-1)[0] if value.size else None))
    return columns


def delimiter(field_delim, where):
    """``field_delim`` (one character) as a byte value."""
    text = scalar_text_argument(field_delim, where, "field_delim")
    if len(text) != 1:
        raise InvalidArgumentError(f"{where}: field_delim should be only 1 char, got "
                                   f"{text!r}")
    return text[0]




def na_bytes(na_value, where):
    """``na_value`` as bytes."""
    return scalar_text_argument(na_value, where, "na_value")


def column_indices(cols, where, arg="select_cols"):
    """``cols`` (None or a list of column numbers) as a list of ints, checked as TF checks
    them: non-negative and strictly increasing."""
    if cols is None:
        return []
    if isinstance(cols, Tensor):
        cols = numpy.asarray(B.to_numpy(cols._value)).reshape(-1).tolist()
    try:
        values = [int(c) for c in cols]
    except (TypeError, ValueError):
        raise TypeError(f"{where}: `{arg}` must be a list of column numbers, got "
                        f"{cols!r:.80}") from None
    if any(b <= a for a, b in zip(values, values[1:])):
        raise InvalidArgumentError(f"{where}: {arg} should be strictly increasing indices, got "
                                   f"{values}")
    if values and values[0] < 0:
        raise InvalidArgumentError(f"{where}: {arg} should be non-negative indices, got "
                                   f"{values}")
    return values


def field_value(column, field, na_value, f, record, col=None):
    """The value of ``field`` (bytes) in output column ``f`` of ``record`` (its name in
    messages), or the InvalidArgumentError TF gives for it (returned, not raised)."""
    if not field or field == na_value:
        if column.default is None:
            return _error(f"Field {f} is required but missing in {record}!", f, col)
        return column.default
    value = column.parse(field)
    if value is None:
        text = field.decode("utf-8", "replace")
        return _error(f"Field {f} in {record} is not a valid {column.kind()}: {text}", f, col)
    return value


def _error(message, f, col):
    if col is not None and col != f:
        message += f" (column {col} of the record)"
    return InvalidArgumentError(message)


def split_record(record, delim, use_quote, select):
    """The fields of one record (bytes) as TF's DecodeCSV splits it, only the columns in
    ``select`` (a list) when it is not empty; a syntax error raises InvalidArgumentError."""
    if not record:
        return []
    if (not use_quote or b'"' not in record) and b"\n" not in record and b"\r" not in record:
        fields = record.split(bytes((delim,)))
        return [fields[c] for c in select if c < len(fields)] if select else fields
    return _split_slowly(record, delim, use_quote, select)


def _split_slowly(record, delim, use_quote, select):
    # TF's field loop, quirks included: a CR or LF where a field would start is skipped.
    n, i, fields, parsed = len(record), 0, [], 0
    while i < n:
        if record[i] in (_CR, _LF):
            i += 1
            continue
        include = not select or select[len(fields)] == parsed
        if use_quote and record[i] == _QUOTE:
            i += 1
            field = bytearray()
            while i < n - 1 and not (record[i] == _QUOTE and record[i + 1] == delim):
                if record[i] != _QUOTE:
                    field.append(record[i])
                    i += 1
                elif record[i + 1] == _QUOTE:
                    field.append(_QUOTE)
                    i += 2
                else:
                    raise InvalidArgumentError("Quote inside a string has to be escaped by "
                                               "another quote")
            if not (i < n and record[i] == _QUOTE and (i == n - 1 or record[i + 1] == delim)):
                raise InvalidArgumentError("Quoted field has to end with quote followed by "
                                           "delim or end")
            field, i = bytes(field), i + 2
        else:
            end = record.find(bytes((delim,)), i)
            end = n if end < 0 else end
            field = record[i:end]
            if (use_quote and b'"' in field) or b"\n" in field or b"\r" in field:
                raise InvalidArgumentError("Unquoted fields cannot have quotes/CRLFs inside")
            i = end + 1
        parsed += 1
        if include:
            fields.append(field)
            if select and len(fields) == len(select):
                return fields
    if (not select or select[len(fields)] == parsed) and record[-1] == delim:
        fields.append(b"")
    return fields


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, na_value="",
               select_cols=None, name=None):
    """Split each string of ``records`` (any shape) into CSV fields and convert them: a list
    with one tensor per column of ``record_defaults``, each of the shape of ``records`` and
    the dtype of its default. ``select_cols`` (increasing column numbers) picks the columns
    to return, one default per selected column."""
    where = "decode_csv"
    t = string_input(records, where, "records")
    columns = tuple(csv_columns(record_defaults, where))
    select = column_indices(select_cols, where)
    if select_cols is not None and len(select) != len(columns):
        raise ValueError(f"{where}: Length of select_cols and record_defaults do not match: "
                         f"{len(select)} columns selected, {len(columns)} defaults")
    parsed = run_kernel(_DECODE, (t,), columns=columns, delim=delimiter(field_delim, where),
                        use_quote=bool(use_quote_delim), na=na_bytes(na_value, where),
                        select=tuple(select))
    return [run_kernel(_COLUMN, (parsed,), index=f, column=column)
            for f, column in enumerate(columns)]


def _decode(records, columns, delim, use_quote, na, select):
    """The values of every record's fields: an object array of the records' shape plus one
    dimension, the columns."""
    out = numpy.empty((records.size, len(columns)), OBJECT)
    for i, record in enumerate(records.reshape(-1)):
        label = f"record {i}"
        try:
            fields = split_record(record, delim, use_quote, select)
        except InvalidArgumentError as exc:
            raise InvalidArgumentError(f"decode_csv: {exc} (in {label}: "
                                       f"{record.decode('utf-8', 'replace')!r:.80})") from None
        if len(fields) != len(columns):
            raise InvalidArgumentError(f"decode_csv: Expect {len(columns)} fields but have "
                                       f"{len(fields)} in {label}")
        for f, (column, field) in enumerate(zip(columns, fields)):
            value = field_value(column, field, na, f, label, select[f] if select else None)
            if isinstance(value, InvalidArgumentError):
                raise InvalidArgumentError(f"decode_csv: {value}")
            out[i, f] = value
    return out.reshape(records.shape + (len(columns),))


def _column(parsed, index, column):
    values = parsed[..., index]
    if column.dtype is dtypes.string:
        return values.copy()
    with numpy.errstate(over="ignore"):
        return B.from_numpy(values.astype(column.dtype.np))


# Two host kernels, so that a function trace repeats the parsing on each call's records.
_DECODE = kernel("decode_csv", _decode)
_COLUMN = kernel("decode_csv_column", _column)
