"""``tf.lookup``: hash tables that map keys (strings or numbers) to values.

* ``StaticHashTable(initializer, default_value)``: fixed entries; keys not in it give
  ``default_value``.
* ``StaticVocabularyTable(initializer, num_oov_buckets)``: fixed int64 ids; a key not in it
  gets ``vocab_size + Fingerprint64(key) % num_oov_buckets``, the FarmHash of its bytes (of its
  decimal string for integer keys), as TF's ``to_hash_bucket_fast``.
* ``experimental.MutableHashTable`` / ``experimental.DenseHashTable``: ``insert``/``remove``.

Lookups take a dense tensor, a ``SparseTensor`` (its values are looked up) or a
``RaggedTensor`` (its flat values), and return the same structure. Tables live on the host.
Inside a ``minitf.function`` a static table's lookup is a step of the plan, run again on each
call's keys; a mutable table's operations make the function run eagerly (one
``EagerFallbackWarning``), so inserts, removes and lookups happen in program order on every
call.
"""
import numpy as np

from . import backend as B
from . import dtypes, errors
from ._state import NoTrace, state
from .keras.layers import farmhash
from .lookup_initializers import (KeyValueTensorInitializer, TextFileIndex,
                                  TextFileInitializer, as_tensor, from_host, host_array)
from .namespace_imports import namespace
from .ops.registry import InvalidArgumentError
from .ragged_tensor import RaggedTensor
from .sparse_tensor import SparseTensor
from .string_tensors import string_tensor
from .strings_kernel import describe, kernel, run_kernel
from .tensor import Tensor

__all__ = ["StaticHashTable", "StaticVocabularyTable", "MutableHashTable", "DenseHashTable",
           "table_from_dataset", "index_table_from_dataset", "install"]


def _to_tensor(host, dtype):
    """A host array as a tensor of ``dtype`` (strings stay on the host)."""
    if dtype == dtypes.string:
        return string_tensor(np.asarray(host, object))
    return Tensor(B.from_numpy(np.array(host, dtype.np)))


def _host_keys(array):
    return array if isinstance(array, np.ndarray) else np.asarray(B.to_numpy(array))


def _find(keys, table):
    """The lookup kernel: ``table``'s values for the key array ``keys``."""
    out = table._find_host(_host_keys(keys))
    return out if out.dtype == object else B.from_numpy(out)


_FIND = kernel("lookup_table_find", _find)


class _Table:
    """What every table shares: key checks, the dense/sparse/ragged lookup and ``size``."""

    def __init__(self, key_dtype, value_dtype, name):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        self._name = name

    key_dtype = property(lambda self: self._key_dtype, doc="The dtype of the keys.")
    value_dtype = property(lambda self: self._value_dtype, doc="The dtype of the values.")
    name = property(lambda self: self._name, doc="The table's name (None if not given).")

    def _check_keys(self, keys, what="keys"):
        """``keys`` as a tensor of the table's key dtype; a TypeError naming the table, the
        expected and the given dtype otherwise."""
        where = f"{type(self).__name__}"
        if not isinstance(keys, Tensor):
            try:
                keys = as_tensor(keys, self._lookup_dtype(), where, what)
            except TypeError:
                raise TypeError(f"{where}: `{what}` must have dtype "
                                f"{self._lookup_dtype().name} (the table's key dtype), got "
                                f"{describe(keys)}") from None
        if keys.dtype != self._lookup_dtype():
            raise TypeError(f"{where}: `{what}` must have dtype {self._lookup_dtype().name} "
                            f"(the table's key dtype), got dtype {keys.dtype.name}")
        return keys

    def _lookup_dtype(self):
        return self._key_dtype

    def lookup(self, keys, name=None):
        """The value of each key: a tensor shaped like ``keys`` (a SparseTensor or
        RaggedTensor for sparse or ragged ``keys``, their values looked up)."""
        if isinstance(keys, SparseTensor):
            return keys.with_values(self._lookup_dense(keys.values))
        if isinstance(keys, RaggedTensor):
            return keys.with_flat_values(self._lookup_dense(keys.flat_values))
        return self._lookup_dense(keys)

    def __getitem__(self, keys):
        """``table[keys]`` is ``table.lookup(keys)``."""
        return self.lookup(keys)

    def _lookup_dense(self, keys):
        keys = self._check_keys(keys)
        return run_kernel(_FIND, (keys,), table=self)


class _IndexedEntries:
    """Fixed entries: a key -> row dict over 1-D host arrays of keys and values."""

    def __init__(self, keys, values, owner):
        self.values = values
        self.rows = {}
        for row, (key, value) in enumerate(zip(keys.tolist(), values.tolist())):
            seen = self.rows.setdefault(key, row)
            if seen != row and values[seen] != value:
                raise errors.FailedPreconditionError(
                    f"{owner}: key {key!r} appears twice in the initializer with different "
                    f"values ({values[seen]!r} and {value!r})")
        self.keys = keys if len(self.rows) == keys.size else keys[sorted(self.rows.values())]

    def find_rows(self, host):
        """The row of each key of ``host`` (int64, -1 where absent)."""
        get = self.rows.get
        flat = host.reshape(-1).tolist()
        return np.fromiter((get(k, -1) for k in flat), np.int64, len(flat)).reshape(host.shape)

    def __len__(self):
        return len(self.rows)


def _initializer_entries(initializer, owner):
    if not isinstance(initializer, (KeyValueTensorInitializer, TextFileInitializer)):
        raise TypeError(f"{owner}: `initializer` must be a tf.lookup.KeyValueTensorInitializer "
                        f"or TextFileInitializer, got {describe(initializer)}")
    keys, values = initializer.entries()
    return _IndexedEntries(keys, values, owner)


class StaticHashTable(_Table):
    """A table whose entries come from ``initializer`` and never change
    (``tf.lookup.StaticHashTable``); a key not in it maps to ``default_value`` (a scalar of
    the values' dtype). Duplicate keys must have equal values."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        where = type(self).__name__
        super().__init__(initializer.key_dtype if hasattr(initializer, "key_dtype")
                         else dtypes.string, getattr(initializer, "value_dtype",
                                                     dtypes.string), name)
        self._entries = _initializer_entries(initializer, where)
        self._initializer = initializer
        default = as_tensor(default_value, self._value_dtype, where, "default_value")
        if len(default.shape) != 0:
            raise ValueError(f"{where}: `default_value` must be a scalar (shape ()), got shape "
                             f"{tuple(default.shape)}")
        self._default = default
        self._default_host = host_array(default)[()]

    initializer = property(lambda self: self._initializer, doc="The table's initializer.")
    default_value = property(lambda self: self._default,
                             doc="The value of keys not in the table.")

    def size(self, name=None):
        """The number of entries, an int64 scalar."""
        return _to_tensor(np.int64(len(self._entries)), dtypes.int64)

    def export(self, name=None):
        """``(keys, values)``: the entries as two 1-D tensors, in initializer order."""
        entries = self._entries
        rows = np.fromiter(entries.rows.values(), np.int64, len(entries))
        return (_to_tensor(entries.keys, self._key_dtype),
                _to_tensor(entries.values[rows], self._value_dtype))

    def _find_host(self, host):
        rows = self._entries.find_rows(host)
        out = np.empty(host.shape, self._value_dtype.np)
        out[...] = self._default_host
        found = rows >= 0
        out[found] = self._entries.values[rows[found]]
        return out


def _oov_buckets(host, num_buckets):
    """``to_hash_bucket_fast`` of each key: Fingerprint64 of its bytes, or of the decimal
    string of an integer key, modulo ``num_buckets``."""
    if host.dtype == object:
        hashed = farmhash.fingerprint64(host.reshape(-1).tolist()).reshape(host.shape)
    else:
        hashed = farmhash.fingerprint64_of_ints(host)
    return (hashed % np.uint64(num_buckets)).astype(np.int64)


class StaticVocabularyTable(_Table):
    """Fixed int64 ids for the keys of ``initializer`` (string or int64 keys) and
    ``num_oov_buckets`` (> 0) hashed ids for the others: ``vocab_size +
    Fingerprint64(key) % num_oov_buckets`` (``tf.lookup.StaticVocabularyTable``).
    ``lookup_key_dtype`` int32 accepts int32 keys for an int64 vocabulary."""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        where = type(self).__name__
        if isinstance(num_oov_buckets, bool) or not isinstance(num_oov_buckets,
                                                               (int, np.integer)):
            raise TypeError(f"{where}: `num_oov_buckets` must be an integer, got "
                            f"{describe(num_oov_buckets)}")
        if num_oov_buckets <= 0:
            raise ValueError(f"{where}: `num_oov_buckets` must be > 0, got {num_oov_buckets}; "
                             f"use StaticHashTable for a table without OOV buckets")
        key_dtype = getattr(initializer, "key_dtype", None)
        value_dtype = getattr(initializer, "value_dtype", None)
        if value_dtype is not None and value_dtype != dtypes.int64:
            raise TypeError(f"{where}: the initializer's values must be int64 (the ids), got "
                            f"{value_dtype.name}")
        if key_dtype is not None and key_dtype not in (dtypes.int64, dtypes.string):
            raise TypeError(f"{where}: the initializer's keys must be int64 or string, got "
                            f"{key_dtype.name}")
        self._entries = _initializer_entries(initializer, where)
        self._initializer = initializer
        lookup = key_dtype if lookup_key_dtype is None else dtypes.as_dtype(lookup_key_dtype)
        allowed = (dtypes.int32, dtypes.int64) if key_dtype == dtypes.int64 else (key_dtype,)
        if lookup not in allowed:
            raise TypeError(f"{where}: `lookup_key_dtype` must be one of "
                            f"{[d.name for d in allowed]} for {key_dtype.name} keys, got "
                            f"{lookup.name}")
        super().__init__(lookup, dtypes.int64, name)
        self._num_oov = int(num_oov_buckets)

    initializer = property(lambda self: self._initializer, doc="The table's initializer.")

    def size(self, name=None):
        """The number of ids: the vocabulary size plus the OOV buckets, an int64 scalar."""
        return _to_tensor(np.int64(len(self._entries) + self._num_oov), dtypes.int64)

    def _find_host(self, host):
        if host.dtype != object:
            host = host.astype(np.int64)
        rows = self._entries.find_rows(host)
        out = np.empty(host.shape, np.int64)
        found = rows >= 0
        out[found] = self._entries.values[rows[found]]
        missing = ~found
        if missing.any():
            out[missing] = len(self._entries) + _oov_buckets(host[missing], self._num_oov)
        return out


class MutableHashTable(_Table):
    """A table that starts empty and changes with ``insert`` and ``remove``
    (``tf.lookup.experimental.MutableHashTable``). Values may be vectors: ``default_value``'s
    shape is the value shape. ``export`` gives the entries in insertion order."""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True, experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype, name)
        default = as_tensor(default_value, self._value_dtype, type(self).__name__,
                            "default_value")
        self._default = default
        self._value_shape = tuple(default.shape)
        self._default_host = host_array(default)
        self._store = {}
        self._dynamic = None    # the dynamic_default_values of the lookup under way

    default_value = property(lambda self: self._default,
                             doc="The value of keys not in the table.")

    def _eager(self, what):
        """Inside a function trace, make the function run eagerly: the table's state changes
        in Python, which a replayed plan would not repeat in order."""
        if state.tracer is not None:
            state.tracer.run_eagerly(f"it uses a {type(self).__name__} ({what}), whose state "
                                     f"changes on every call")
        return NoTrace()

    def _check_key_values(self, host):
        """DenseHashTable's reserved keys; nothing here."""

    def size(self, name=None):
        """The number of entries, an int64 scalar."""
        with self._eager("size"):
            return _to_tensor(np.int64(len(self._store)), dtypes.int64)

    def insert(self, keys, values, name=None):
        """Set the value of each key (replacing an existing one). ``values`` has the shape of
        ``keys`` followed by the value shape."""
        where = f"{type(self).__name__}.insert"
        with self._eager("insert"):
            keys = self._check_keys(keys)
            if not isinstance(values, Tensor):
                values = as_tensor(values, self._value_dtype, where, "values")
            if values.dtype != self._value_dtype:
                raise TypeError(f"{where}: `values` must have dtype {self._value_dtype.name} "
                                f"(the table's value dtype), got dtype {values.dtype.name}")
            expected = tuple(keys.shape) + self._value_shape
            if tuple(values.shape) != expected:
                raise InvalidArgumentError(f"{where}: expected shape {list(expected)} for "
                                           f"`values` (the keys' shape then the value shape), "
                                           f"got {list(values.shape)}")
            host = _host_keys(keys._value)
            self._check_key_values(host)
            flat_values = host_array(values).reshape((-1,) + self._value_shape)
            for key, value in zip(host.reshape(-1).tolist(), flat_values):
                self._store[key] = value.copy() if isinstance(value, np.ndarray) else value

    def insert_or_assign(self, keys, values, name=None):
        """Same as ``insert``."""
        return self.insert(keys, values, name)

    def remove(self, keys, name=None):
        """Remove the entries of ``keys``; keys not in the table are ignored."""
        with self._eager("remove"):
            host = _host_keys(self._check_keys(keys)._value)
            self._check_key_values(host)
            for key in host.reshape(-1).tolist():
                self._store.pop(key, None)

    def erase(self, keys, name=None):
        """Same as ``remove``."""
        return self.remove(keys, name)

    def lookup(self, keys, dynamic_default_values=None, name=None):
        """The value of each key (shape: the keys' then the value shape); absent keys get
        ``default_value``, or the matching element of ``dynamic_default_values`` when given."""
        with self._eager("lookup"):
            self._dynamic = None
            if dynamic_default_values is not None:
                self._dynamic = host_array(as_tensor(dynamic_default_values, self._value_dtype,
                                                     type(self).__name__,
                                                     "dynamic_default_values"))
            try:
                return super().lookup(keys)
            finally:
                self._dynamic = None

    def export(self, name=None):
        """``(keys, values)``: the entries as tensors of shapes ``(n,)`` and ``(n,) +
        value_shape``, in insertion order."""
        with self._eager("export"):
            keys = np.empty(len(self._store), self._key_dtype.np)
            keys[:] = list(self._store)
            values = np.empty((len(self._store),) + self._value_shape, self._value_dtype.np)
            for i, value in enumerate(self._store.values()):
                values[i] = value
            return _to_tensor(keys, self._key_dtype), _to_tensor(values, self._value_dtype)

    def _find_host(self, host):
        self._check_key_values(host)
        out = np.empty(host.shape + self._value_shape, self._value_dtype.np)
        dynamic = self._dynamic
        if dynamic is not None:
            if dynamic.shape != out.shape:
                raise InvalidArgumentError(f"{type(self).__name__}.lookup: "
                                           f"`dynamic_default_values` must have shape "
                                           f"{list(out.shape)}, got {list(dynamic.shape)}")
            out[...] = dynamic
        else:
            out[...] = self._default_host
        flat = out.reshape((-1,) + self._value_shape)
        get = self._store.get
        for i, key in enumerate(host.reshape(-1).tolist()):
            value = get(key)
            if value is not None:
                flat[i] = value
        return out


class DenseHashTable(MutableHashTable):
    """A mutable table (``tf.lookup.experimental.DenseHashTable``) with TF's restrictions on
    keys: ``empty_key`` and ``deleted_key`` (different) may not be inserted, removed or
    looked up; ``initial_num_buckets`` must be a power of 2 (at least 4). ``export`` gives the
    entries only, in insertion order (not TF's bucket array)."""

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets=None, name="MutableDenseHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype, default_value, name)
        where = type(self).__name__
        self._empty = host_array(as_tensor(empty_key, self._key_dtype, where,
                                           "empty_key")).reshape(-1).tolist()
        self._deleted = host_array(as_tensor(deleted_key, self._key_dtype, where,
                                             "deleted_key")).reshape(-1).tolist()
        if len(self._empty) != 1 or len(self._deleted) != 1:
            raise ValueError(f"{where}: `empty_key` and `deleted_key` must be scalars")
        self._empty, self._deleted = self._empty[0], self._deleted[0]
        if self._empty == self._deleted:
            raise InvalidArgumentError(f"{where}: `empty_key` and `deleted_key` cannot be "
                                       f"equal, got {self._empty!r} for both")
        if initial_num_buckets is not None:
            n = int(initial_num_buckets)
            if n < 4 or n & (n - 1):
                raise InvalidArgumentError(f"{where}: `initial_num_buckets` must be at least 4 "
                                           f"and a power of 2, got {initial_num_buckets}")

    def _check_key_values(self, host):
        flat = host.reshape(-1).tolist()
        for key, what in ((self._empty, "empty_key"), (self._deleted, "deleted_key")):
            if key in flat:
                raise InvalidArgumentError(f"{type(self).__name__}: using the {what} "
                                           f"({key!r}) as a table key is not allowed")


def _dataset_entries(dataset, vocab_size, where):
    """The (keys, values) of a dataset of pairs, as host arrays, with their dtypes."""
    keys, values, key_dtype, value_dtype = [], [], None, None
    for element in dataset:
        if not (isinstance(element, (tuple, list)) and len(element) == 2):
            raise ValueError(f"{where}: the dataset must contain (key, value) pairs, got an "
                             f"element {describe(element)}")
        if vocab_size is not None and len(keys) == vocab_size:
            break
        key, value = element
        keys.append(host_array(key).reshape(-1)[0])
        values.append(host_array(value).reshape(-1)[0])
        key_dtype, value_dtype = key.dtype, value.dtype
    if vocab_size is not None and len(keys) < vocab_size:
        raise InvalidArgumentError(f"{where}: `vocab_size` is {vocab_size}, but the dataset "
                                   f"has only {len(keys)} elements")
    if key_dtype is None:
        raise ValueError(f"{where}: the dataset is empty")
    return (np.asarray(keys, key_dtype.np), np.asarray(values, value_dtype.np), key_dtype,
            value_dtype)


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None,
                       hasher_spec=None, key_dtype=dtypes.string, name=None):
    """A static table of the (key, value) pairs of ``dataset``
    (``tf.data.experimental.table_from_dataset``): a StaticHashTable, or with
    ``num_oov_buckets`` a StaticVocabularyTable (int64 values) hashing other keys into ids
    from the vocabulary size on. ``vocab_size``: only the first that many pairs."""
    where = "table_from_dataset"
    if hasher_spec is not None and getattr(hasher_spec, "hasher", "fasthash") != "fasthash":
        raise NotImplementedError(f"{where}: only the default FarmHash hasher is supported, "
                                  f"got {hasher_spec!r}")
    if num_oov_buckets < 0:
        raise ValueError(f"{where}: `num_oov_buckets` must be >= 0, got {num_oov_buckets}")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"{where}: `vocab_size` must be greater than 0, got {vocab_size}")
    key_dtype = dtypes.as_dtype(key_dtype)
    if not (key_dtype.is_integer or key_dtype == dtypes.string):
        raise TypeError(f"{where}: `key_dtype` must be an integer or string type, got "
                        f"{key_dtype.name}")
    keys, values, found_key_dtype, value_dtype = _dataset_entries(dataset, vocab_size, where)
    initializer = from_host(keys, values, found_key_dtype, value_dtype)
    if num_oov_buckets:
        return StaticVocabularyTable(initializer, int(num_oov_buckets), name=name)
    if default_value is None:
        if not (value_dtype.is_integer or value_dtype.is_floating):
            raise ValueError(f"{where}: `default_value` must be given for a dataset of "
                             f"{value_dtype.name} values")
        default_value = -1
    return StaticHashTable(initializer, default_value, name=name)


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                             default_value=-1, hasher_spec=None, key_dtype=dtypes.string,
                             name=None):
    """A table mapping each element of ``dataset`` to its position (int64)
    (``tf.data.experimental.index_table_from_dataset``); see ``table_from_dataset``."""
    return table_from_dataset(dataset.enumerate().map(lambda i, key: (key, i)),
                              num_oov_buckets, vocab_size, default_value, hasher_spec,
                              key_dtype, name)


def install(tf):
    """Create ``tf.lookup`` (with ``tf.lookup.experimental``) and set
    ``tf.data.experimental.table_from_dataset``/``index_table_from_dataset`` (idempotent)."""
    lookup = namespace(tf, "lookup")
    lookup.KeyValueTensorInitializer = KeyValueTensorInitializer
    lookup.TextFileInitializer = TextFileInitializer
    lookup.TextFileIndex = TextFileIndex
    lookup.StaticHashTable = StaticHashTable
    lookup.StaticVocabularyTable = StaticVocabularyTable
    experimental = namespace(lookup, "experimental")
    experimental.MutableHashTable = MutableHashTable
    experimental.DenseHashTable = DenseHashTable
    tf.data.experimental.table_from_dataset = table_from_dataset
    tf.data.experimental.index_table_from_dataset = index_table_from_dataset
