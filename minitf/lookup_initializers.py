"""The initializers of ``tf.lookup`` tables: ``KeyValueTensorInitializer`` (keys and values
given as tensors) and ``TextFileInitializer`` (one entry per line of a text file, read when a
table is made from it).

An initializer yields its entries as two 1-D host numpy arrays (``entries()``): object arrays
of ``bytes`` for strings, numpy numbers otherwise; the tables in ``lookup_tables`` index them.
"""
import os

import numpy as np

from . import backend as B
from . import dtypes, errors
from ._state import state
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .strings_kernel import describe
from .tensor import Tensor

__all__ = ["KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex"]


def host_array(t):
    """A tensor's value on the host: the object array of a string tensor, numpy otherwise."""
    value = t._value
    return value if isinstance(value, np.ndarray) else np.asarray(B.to_numpy(value))


def as_tensor(value, dtype, where, arg):
    """``value`` as a tensor (of ``dtype`` when given); a TypeError naming ``where``/``arg``
    when it does not convert."""
    if isinstance(value, Tensor) and dtype is None:
        return value
    try:
        return convert_to_tensor(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        wanted = f" of dtype {dtypes.as_dtype(dtype).name}" if dtype is not None else ""
        raise TypeError(f"{where}: `{arg}` must be a tensor{wanted} or convertible to one, "
                        f"got {describe(value)} ({exc})") from None


def _traced(tensors):
    """Whether any of ``tensors`` is a value of the ``minitf.function`` trace under way."""
    tracer = state.tracer
    return tracer is not None and any(isinstance(t, Tensor) and tracer.is_symbolic(t)
                                      for t in tensors)


class KeyValueTensorInitializer:
    """A table's entries from a tensor of keys and a tensor of values of the same length
    (``tf.lookup.KeyValueTensorInitializer``). ``key_dtype``/``value_dtype`` convert Python
    values; by default Python ints are int32 and floats float32, as in TF."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        where = "KeyValueTensorInitializer"
        keys_t = as_tensor(keys, key_dtype, where, "keys")
        values_t = as_tensor(values, value_dtype, where, "values")
        for t, dtype, arg in ((keys_t, key_dtype, "keys"), (values_t, value_dtype, "values")):
            if dtype is not None and t.dtype != dtypes.as_dtype(dtype):
                raise TypeError(f"{where}: `{arg}` has dtype {t.dtype.name}, but "
                                f"`{arg[:-1]}_dtype` is {dtypes.as_dtype(dtype).name}")
        if _traced((keys_t, values_t)):
            # The table holds the keys of this call: a replay could not build it anew.
            state.tracer.run_eagerly("it builds a lookup table from tensors computed in the "
                                     "function")
        self._keys = host_array(keys_t).reshape(-1)
        self._values = host_array(values_t).reshape(-1)
        if self._keys.shape != self._values.shape:
            raise ValueError(f"{where}: `keys` and `values` must have the same number of "
                             f"elements, got {self._keys.size} keys and {self._values.size} "
                             f"values")
        self.key_dtype = keys_t.dtype
        self.value_dtype = values_t.dtype
        self._name = name

    def entries(self):
        """The (keys, values) host arrays."""
        return self._keys, self._values

    def __repr__(self):
        return (f"KeyValueTensorInitializer({self._keys.size} entries, "
                f"{self.key_dtype.name} -> {self.value_dtype.name})")


class TextFileIndex:
    """The special column indices of ``TextFileInitializer``: the whole line, or its number
    (from 0)."""
    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _filename(value, where):
    if isinstance(value, Tensor) and value.dtype == dtypes.string and value._value.ndim == 0:
        return value._value[()].decode("utf-8")
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"{where}: `filename` must be a str, bytes, path or scalar string tensor, "
                    f"got {describe(value)}")


def _column_index(value, dtype, arg, where):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{where}: `{arg}_index` must be an integer, got {describe(value)}")
    index = int(value)
    if index < TextFileIndex.WHOLE_LINE:
        raise ValueError(f"{where}: `{arg}_index` should be >= -2, received: {index}.")
    if index == TextFileIndex.LINE_NUMBER and dtype != dtypes.int64:
        raise ValueError(f"{where}: `{arg}_dtype` must be int64 if `{arg}_index` is -1 "
                         f"(LINE_NUMBER), received: {dtype.name}")
    if index == TextFileIndex.WHOLE_LINE and not (dtype.is_integer or dtype == dtypes.string
                                                  or dtype.is_floating):
        raise ValueError(f"{where}: `{arg}_dtype` must be a string or number type for "
                         f"`{arg}_index` -2 (WHOLE_LINE), received: {dtype.name}")
    return index


class TextFileInitializer:
    """A table's entries from a text file, one per line (``tf.lookup.TextFileInitializer``):
    the key and the value are each a column (``delimiter``-separated, from 0), the whole line
    (``TextFileIndex.WHOLE_LINE``, -2) or the line number (``TextFileIndex.LINE_NUMBER``, -1,
    plus ``value_index_offset``). ``vocab_size``: only the first that many lines, which the
    file must have. The file is read when a table is made from the initializer."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, value_index_offset=0):
        where = "TextFileInitializer"
        self._filename = _filename(filename, where)
        self.key_dtype = dtypes.as_dtype(key_dtype)
        self.value_dtype = dtypes.as_dtype(value_dtype)
        self._key_index = _column_index(key_index, self.key_dtype, "key", where)
        self._value_index = _column_index(value_index, self.value_dtype, "value", where)
        if vocab_size is not None:
            if isinstance(vocab_size, Tensor):
                vocab_size = int(B.to_numpy(vocab_size._value))
            if int(vocab_size) <= 0:
                raise ValueError(f"{where}: `vocab_size` should be > 0, received: "
                                 f"{vocab_size}")
            vocab_size = int(vocab_size)
        self._vocab_size = vocab_size
        if isinstance(delimiter, str):
            delimiter = delimiter.encode("utf-8")
        if not isinstance(delimiter, bytes) or not delimiter:
            raise TypeError(f"{where}: `delimiter` must be a non-empty str or bytes, got "
                            f"{describe(delimiter)}")
        self._delimiter = delimiter
        self._offset = int(value_index_offset)
        self._name = name

    def __repr__(self):
        return (f"TextFileInitializer({self._filename!r}, key_index={self._key_index}, "
                f"value_index={self._value_index})")

    def entries(self):
        """The (keys, values) host arrays read from the file now."""
        lines = self._lines()
        keys = [self._field(line, i, self._key_index, self.key_dtype) for i, line in
                enumerate(lines)]
        values = [self._field(line, i, self._value_index, self.value_dtype) for i, line in
                  enumerate(lines)]
        return _host_column(keys, self.key_dtype), _host_column(values, self.value_dtype)

    def _lines(self):
        try:
            with open(self._filename, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(f"TextFileInitializer: {self._filename}; No such file "
                                       f"or directory") from None
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()     # the newline that ends the last line
        lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise InvalidArgumentError(f"TextFileInitializer: invalid vocab_size in "
                                           f"{self._filename}: expected {self._vocab_size} "
                                           f"but got {len(lines)}")
            lines = lines[:self._vocab_size]
        for i, line in enumerate(lines):
            if not line:
                raise InvalidArgumentError(f"TextFileInitializer: invalid content in "
                                           f"{self._filename}: empty line found at line {i}")
        return lines

    def _field(self, line, number, index, dtype):
        if index == TextFileIndex.LINE_NUMBER:
            return number + self._offset
        if index == TextFileIndex.WHOLE_LINE:
            text = line
        else:
            columns = line.split(self._delimiter)
            if index >= len(columns):
                raise InvalidArgumentError(
                    f"TextFileInitializer: invalid number of columns in {self._filename} line "
                    f"{number} ({line.decode('utf-8', 'replace')}): expected at least "
                    f"{index + 1} got {len(columns)}")
            text = columns[index]
        if dtype == dtypes.string:
            return text
        try:
            return int(text) if dtype.is_integer else float(text)
        except ValueError:
            raise InvalidArgumentError(f"TextFileInitializer: field "
                                       f"{text.decode('utf-8', 'replace')!r} in line {number} "
                                       f"of {self._filename} is not a valid "
                                       f"{dtype.name}") from None


def _host_column(items, dtype):
    if dtype == dtypes.string:
        out = np.empty(len(items), object)
        out[:] = items
        return out
    return np.asarray(items, dtype.np).reshape(-1)


def from_host(keys, values, key_dtype, value_dtype):
    """A KeyValueTensorInitializer around host arrays already converted (tables built from a
    dataset)."""
    init = KeyValueTensorInitializer.__new__(KeyValueTensorInitializer)
    init._keys, init._values = keys.reshape(-1), values.reshape(-1)
    init.key_dtype, init.value_dtype, init._name = key_dtype, value_dtype, None
    return init
