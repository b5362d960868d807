"""``Dataset.snapshot`` and ``Dataset.fingerprint``, added when ``minitf.data`` loads.

``fingerprint()`` hashes the pipeline: the kinds of its datasets, their numeric and string
arguments, the code, constants and closure values of their functions, and the contents of
source tensors (a uint64 scalar; TF's values differ).

``snapshot(path)``: the first complete iteration keeps the elements and writes them under
``path/<fingerprint>`` (in ``Dataset.save``'s format, renamed into place once complete);
later iterations, in this program or another, read them from there instead of running the
pipeline. An iteration stopped early writes nothing.
"""
import hashlib
import os
import types

import numpy as np

from .. import backend as B
from ..ragged_tensor import RaggedTensor
from ..sparse_tensor import SparseTensor
from ..tensor import Tensor
from ..tensor_spec import TensorSpec
from .dataset import Dataset, _Elements, _Unary
from .transforms import _method

__all__ = ["fingerprint_of"]

# attributes that change while a dataset is iterated or cache results, not what it yields
_VOLATILE = frozenset({"_iterations", "_elements", "_spec", "_ragged", "_directory"})


def _feed(h, obj, seen):
    if isinstance(obj, (Dataset, Tensor, SparseTensor, RaggedTensor)) or callable(obj):
        if id(obj) in seen:
            h.update(b"<seen>")
            return
        seen.add(id(obj))
    if obj is None or isinstance(obj, (bool, int, float, str, bytes, range, np.generic)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, Tensor):
        value = obj._value
        host = value if isinstance(value, np.ndarray) else B.to_numpy(value)
        h.update(f"T{host.dtype}{host.shape}".encode())
        h.update(repr(host.tolist()).encode() if host.dtype == object
                 else np.ascontiguousarray(host).tobytes())
    elif isinstance(obj, np.ndarray):
        _feed(h, Tensor(obj) if obj.dtype != object else obj.tolist(), seen)
    elif isinstance(obj, SparseTensor):
        _feed(h, (obj._indices, obj._values, obj._dims), seen)
    elif isinstance(obj, RaggedTensor):
        _feed(h, (obj._values, obj._splits), seen)
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}[".encode())
        for item in obj:
            _feed(h, item, seen)
        h.update(b"]")
    elif isinstance(obj, dict):
        h.update(b"{")
        for key in sorted(obj, key=repr):
            _feed(h, key, seen)
            _feed(h, obj[key], seen)
        h.update(b"}")
    elif isinstance(obj, Dataset):
        h.update(type(obj).__qualname__.encode())
        _feed(h, {k: v for k, v in vars(obj).items() if k not in _VOLATILE}, seen)
    elif isinstance(obj, types.CodeType):
        h.update(obj.co_code)
        _feed(h, (obj.co_names, obj.co_consts), seen)
    elif isinstance(obj, types.FunctionType):
        _feed(h, obj.__code__, seen)
        cells = tuple(c.cell_contents for c in obj.__closure__ or ()
                      if _filled(c))
        _feed(h, (cells, obj.__defaults__), seen)
    elif isinstance(obj, (TensorSpec,)) or hasattr(obj, "dtype"):
        h.update(repr(obj).encode())
    else:   # other objects (bound methods, classes, ...): their kind
        h.update(getattr(obj, "__qualname__", type(obj).__qualname__).encode())


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def fingerprint_of(dataset):
    """A 64-bit hash of ``dataset``'s pipeline (see the module docstring)."""
    h = hashlib.sha256()
    _feed(h, dataset, set())
    return int.from_bytes(h.digest()[:8], "little")


@_method
def fingerprint(self):
    """A uint64 scalar identifying this pipeline (see the module docstring)."""
    return Tensor(B.xp.asarray(fingerprint_of(self), dtype=B.xp.uint64))


def _compression(value):
    if value is None or str(value).upper() in ("", "NONE", "AUTO", "SNAPPY"):
        return None
    if str(value).upper() == "GZIP":
        return "GZIP"
    raise ValueError(f"Dataset.snapshot: compression must be 'AUTO', 'GZIP', 'SNAPPY' or None, "
                     f"got {value!r}")


class _Stored(_Elements):
    def __init__(self, elements, spec):
        super().__init__(elements)
        self.spec = spec

    def _element_spec(self):
        return self.spec


class _Snapshot(_Unary):
    def __init__(self, source, path, compression, reader_func, shard_func):
        super().__init__(source)
        self.path, self.compression = path, compression
        self.reader_func, self.shard_func = reader_func, shard_func
        self._directory = None

    def directory(self):
        if self._directory is None:
            self._directory = os.path.join(self.path, f"{fingerprint_of(self.source):016x}")
        return self._directory

    def _iterate(self):
        from .persistence import SPEC_FILE, load
        directory = self.directory()
        if os.path.isfile(os.path.join(directory, SPEC_FILE)):
            yield from load(directory, reader_func=self.reader_func)._iterate()
            return
        elements = []
        for element in self.source._iterate():
            elements.append(element)
            yield element
        if elements and not os.path.isfile(os.path.join(directory, SPEC_FILE)):
            stored = _Stored(elements, self.source.element_spec)
            stored.save(directory, compression=self.compression, shard_func=self.shard_func)

    def _element_spec(self):
        return self.source._element_spec()


@_method
def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None, name=None):
    """This dataset, written under ``path`` on the first complete iteration and read from
    there afterwards (see the module docstring)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"Dataset.snapshot: `path` must be a directory path, got "
                        f"{type(path).__name__}")
    return _Snapshot(self, os.path.abspath(os.fspath(path)), _compression(compression),
                     reader_func, shard_func)
