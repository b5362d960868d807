"""Helpers behind ``tf.test.TestCase``: numpy values of tensors (``evaluate``), the eager
stand-in for sessions, absltest-style temporary directories and files, and checked threads."""
import collections
import contextlib
import os
import tempfile
import threading

from . import backend as B
from .ragged_tensor import RaggedTensor
from .sparse_tensor import SparseTensor
from .tensor import Tensor
from .variable_updates import IndexedSlices

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])
IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])


class RaggedTensorValue:
    """The numpy value of a ragged tensor, as ``TestCase.evaluate`` returns it."""

    def __init__(self, values, row_splits, rows):
        self.values, self.row_splits, self._rows = values, row_splits, rows

    @property
    def flat_values(self):
        values = self.values
        while isinstance(values, RaggedTensorValue):
            values = values.values
        return values

    @property
    def nested_row_splits(self):
        splits, values = [self.row_splits], self.values
        while isinstance(values, RaggedTensorValue):
            splits.append(values.row_splits)
            values = values.values
        return tuple(splits)

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype

    def to_list(self):
        """The value as nested Python lists."""
        return self._rows

    def __repr__(self):
        return f"RaggedTensorValue({self._rows!r})"


def _evaluate_leaf(value):
    if value is None:
        return None
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, RaggedTensor):
        return RaggedTensorValue(_evaluate_leaf(value.values), value.row_splits.numpy(),
                                 value.to_list())
    if isinstance(value, SparseTensor):
        return SparseTensorValue(value.indices.numpy(), value.values.numpy(),
                                 value.dense_shape.numpy())
    if isinstance(value, IndexedSlices):
        return IndexedSlicesValue(value.values.numpy(), value.indices.numpy(),
                                  None if value.dense_shape is None
                                  else value.dense_shape.numpy())
    if callable(value):
        return evaluate(value())
    if B.is_array(value):
        return B.to_numpy(value)
    return value


def evaluate(tensors):
    """Numpy values of a Tensor or of a nest (dict, namedtuple, list, tuple) of them; callables
    are called and their results evaluated; other leaves are returned as they are."""
    if isinstance(tensors, dict):
        return type(tensors)((k, evaluate(v)) for k, v in tensors.items())
    if isinstance(tensors, tuple) and hasattr(tensors, "_fields"):
        return type(tensors)(*(evaluate(v) for v in tensors))
    if isinstance(tensors, (list, tuple)):
        return type(tensors)(evaluate(v) for v in tensors)
    return _evaluate_leaf(tensors)


class _EagerSession:
    """What ``cached_session()`` yields under eager execution: ``run`` evaluates tensors."""

    def __init__(self, test_case):
        self._test_case = test_case

    def run(self, fetches, *args, **kwargs):
        """Numpy values of ``fetches``; ``feed_dict`` and other options are not supported."""
        if kwargs.pop("feed_dict", None):
            raise RuntimeError("Session.run: feed_dict is not supported under eager execution "
                               "(sess.run(t) is shorthand for t.numpy())")
        if args or kwargs:
            raise RuntimeError(f"Session.run: optional arguments {sorted(kwargs) or args} are "
                               f"not supported under eager execution (sess.run(t) is shorthand "
                               f"for t.numpy())")
        return self._test_case.evaluate(fetches)

    @contextlib.contextmanager
    def as_default(self):
        yield self

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class TempDir:
    """A directory made by ``TestCase.create_tempdir`` (absltest's ``_TempDir``)."""

    def __init__(self, path):
        self._path = path

    @property
    def full_path(self):
        return self._path

    def __fspath__(self):
        return self._path

    def create_file(self, file_path=None, content=None, mode="w", encoding="utf8",
                    errors="strict"):
        """A new file in this directory (a random name unless ``file_path``), with ``content``."""
        return TempFile._create(self._path, file_path, content, mode, encoding, errors)

    def mkdir(self, dir_path=None):
        """A new directory in this one (a random name unless ``dir_path``)."""
        if dir_path:
            path = os.path.join(self._path, dir_path)
            os.makedirs(path, exist_ok=True)
        else:
            path = tempfile.mkdtemp(dir=self._path)
        return TempDir(path)


class TempFile:
    """A file made by ``TestCase.create_tempfile`` (absltest's ``_TempFile``)."""

    def __init__(self, path):
        self._path = path

    @classmethod
    def _create(cls, base, file_path, content, mode, encoding, errors):
        if file_path:
            path = os.path.join(base, file_path)
            os.makedirs(os.path.dirname(path), exist_ok=True)
        else:
            os.makedirs(base, exist_ok=True)
            fd, path = tempfile.mkstemp(dir=base)
            os.close(fd)
        result = cls(path)
        if content is None:
            content = b"" if "b" in mode else ""
        if isinstance(content, bytes):
            result.write_bytes(content, mode=mode if "b" in mode else mode + "b")
        else:
            result.write_text(content, mode=mode, encoding=encoding, errors=errors)
        return result

    @property
    def full_path(self):
        return self._path

    def __fspath__(self):
        return self._path

    def read_text(self, encoding="utf8", errors="strict"):
        with open(self._path, encoding=encoding, errors=errors) as f:
            return f.read()

    def read_bytes(self):
        with open(self._path, "rb") as f:
            return f.read()

    def write_text(self, text, mode="w", encoding="utf8", errors="strict"):
        with open(self._path, mode, encoding=encoding, errors=errors) as f:
            f.write(text)

    def write_bytes(self, data, mode="wb"):
        with open(self._path, mode) as f:
            f.write(data)


class _CheckedThread:
    """A thread whose exception fails the test when it is joined (``TestCase.checkedThread``)."""

    def __init__(self, test_case, target, args, kwargs):
        self._test_case, self._target = test_case, target
        self._args, self._kwargs = tuple(args or ()), dict(kwargs or {})
        self._thread = threading.Thread(target=self._protected_run)
        self._exception = None
        self._joined = False

    def _protected_run(self):
        try:
            self._target(*self._args, **self._kwargs)
        except Exception as exc:  # noqa: BLE001 - reported by join()
            self._exception = exc

    def start(self):
        self._thread.start()

    def join(self):
        self._joined = True
        self._thread.join()
        if self._exception is not None:
            self._test_case.fail(f"Error in checkedThread: {self._exception}")

    def is_alive(self):
        return self._thread.is_alive()

    def check_termination(self):
        if not self._joined:
            self._test_case.fail("A checked thread was not joined.")
        if self.is_alive():
            raise RuntimeError("Thread was not joined with main thread, and is still running "
                               "when the test finished.")
