"""``tf.summary``: TensorBoard scalars and histograms from custom training loops, written with
tensorboardX (the same writer as ``keras.callbacks.TensorBoard``).

    writer = tf.summary.create_file_writer("runs/exp1")
    with writer.as_default():
        tf.summary.scalar("loss", loss, step=epoch)
"""
import atexit
import contextlib
import itertools
import os
import weakref
from types import SimpleNamespace

from . import backend as B
from .host import host_call
from .tensor import Tensor

_DEFAULT = []            # the writers made default with ``as_default``, innermost last
_FILE_COUNTER = itertools.count()
_OPEN = weakref.WeakSet()  # writers with an open file: closed at exit, so no record is lost


@atexit.register
def _close_open_writers():
    for writer in list(_OPEN):
        writer.flush()


class SummaryWriter:
    """A TensorBoard event file in ``logdir``; ``create_file_writer`` makes one."""

    def __init__(self, logdir, max_queue=10, flush_millis=None, filename_suffix=None):
        self.logdir = os.fspath(logdir)
        self._max_queue = max_queue
        self._flush_secs = 120 if flush_millis is None else max(1, int(flush_millis) // 1000)
        self._suffix = filename_suffix
        self._writer = None

    def _open(self):
        if self._writer is None:
            _OPEN.add(self)
            from tensorboardX import SummaryWriter as _Writer
            # unique per file: a flush closes the file, and the next one must not reuse its
            # name; zero-padded so that files of the same second sort in writing order
            suffix = f".{os.getpid()}.{next(_FILE_COUNTER):06d}{self._suffix or '.v2'}"
            self._writer = _Writer(self.logdir, max_queue=self._max_queue,
                                   flush_secs=self._flush_secs, filename_suffix=suffix)
        return self._writer

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Make this writer the one ``tf.summary.scalar``/``histogram`` write to."""
        _DEFAULT.append((self, step))
        try:
            yield self
        finally:
            _DEFAULT.pop()
            self.flush()

    def set_as_default(self, step=None):
        _DEFAULT.append((self, step))

    def flush(self):
        """Write everything so far to disk. tensorboardX writes from a background queue that
        only closing drains, so the file is closed here; later records go to a new event file
        in the same directory (TensorBoard reads them all)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    close = flush

    def _write(self, kind, name, data, step):
        if step is None:
            raise ValueError(f"tf.summary.{kind}({name!r}): no step given and no default step "
                             "(pass step=, or writer.as_default(step=...))")
        value = B.to_numpy(data._value if isinstance(data, Tensor) else data)
        step = int(B.to_numpy(step._value if isinstance(step, Tensor) else step))
        if kind == "scalar":
            self._open().add_scalar(name, float(value), step)
        else:
            self._open().add_histogram(name, value, step)
        return True


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None):
    """A writer of TensorBoard event files under ``logdir``."""
    return SummaryWriter(logdir, max_queue=10 if max_queue is None else max_queue,
                         flush_millis=flush_millis, filename_suffix=filename_suffix)


def _emit(kind, name, data, step):
    """Write through ``host_call``: inside a ``minitf.function`` every replay writes again,
    with that call's values, to the writer that was the default when it was traced."""
    if not _DEFAULT:
        return False                 # TF: no default writer, nothing is written
    writer, default_step = _DEFAULT[-1]
    step = default_step if step is None else step
    if step is None:
        step = _STEP[0]
    tensors = [t for t in (data, step) if isinstance(t, Tensor)]

    def write(*arrays):
        values = iter(arrays)
        writer._write(kind, name, next(values) if isinstance(data, Tensor) else data,
                      next(values) if isinstance(step, Tensor) else step)

    write.reads_only = True          # a replay may reorder guards before it
    host_call(write, tensors)
    return True


_STEP = [None]                       # ``experimental.set_step``'s default step


def _set_step(step):
    """TF's ``tf.summary.experimental.set_step``: the step of writes that give none."""
    _STEP[0] = step


def _get_step():
    return _STEP[0]


experimental = SimpleNamespace(set_step=_set_step, get_step=_get_step)


def scalar(name, data, step=None, description=None):
    """Write a scalar to the default writer; False when there is none (as TF)."""
    return _emit("scalar", name, data, step)


def histogram(name, data, step=None, buckets=None, description=None):
    """Write a histogram of ``data`` to the default writer; False when there is none."""
    return _emit("histogram", name, data, step)
