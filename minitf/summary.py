"""``tf.summary``: TensorBoard scalars and histograms from custom training loops, written with
tensorboardX (the same writer as ``keras.callbacks.TensorBoard``).

    writer = tf.summary.create_file_writer("runs/exp1")
    with writer.as_default():
        tf.summary.scalar("loss", loss, step=epoch)
"""
import contextlib
import itertools
import os

from . import backend as B
from .tensor import Tensor

_DEFAULT = []            # the writers made default with ``as_default``, innermost last
_FILE_COUNTER = itertools.count()


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
            from tensorboardX import SummaryWriter as _Writer
            # unique per file: a flush closes the file, and the next one must not reuse its name
            suffix = f".{os.getpid()}.{next(_FILE_COUNTER)}{self._suffix or '.v2'}"
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
        value = B.to_numpy(data._value) if isinstance(data, Tensor) else data
        step = int(B.to_numpy(step._value)) if isinstance(step, Tensor) else int(step)
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
    if not _DEFAULT:
        return False                 # TF: no default writer, nothing is written
    writer, default_step = _DEFAULT[-1]
    return writer._write(kind, name, data, default_step if step is None else step)


def scalar(name, data, step=None, description=None):
    """Write a scalar to the default writer; False when there is none (as TF)."""
    return _emit("scalar", name, data, step)


def histogram(name, data, step=None, buckets=None, description=None):
    """Write a histogram of ``data`` to the default writer; False when there is none."""
    return _emit("histogram", name, data, step)
