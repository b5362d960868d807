"""Mini-batch iteration over in-memory arrays with exact, resumable state.

``BatchIterator`` is an endless stream of ``(x_batch, y_batch)`` pairs that
walks the data epoch after epoch.  Epoch ``e`` visits the samples in the
order ``numpy.random.Generator(PCG64([seed, e])).permutation(n)`` (or in
order when ``shuffle=False``), cut into batches of ``batch_size``.  Because
each epoch's order depends only on ``(seed, e)``, the whole stream is a pure
function of the seed, and the position in it is just ``(epoch,
batch_index)``: that is what ``state_dict()`` records (plus the current
epoch's permutation, so that the epoch in progress resumes exactly even if
a different numpy version would shuffle differently).
"""

import contextlib
import math
import queue
import secrets
import threading
import weakref

import numpy as np

__all__ = ["BatchIterator"]

_FORMAT = "minitf.datasets.BatchIterator"
_VERSION = 1
_RNG = "numpy.random.Generator(numpy.random.PCG64([seed, epoch])).permutation(num_samples)"


class _Plan:
    """What the stream contains; read-only, so the prefetch thread can share it."""

    def __init__(self, x, y, batch_size, shuffle, seed, drop_remainder, normalize,
                 restored=None):
        self.x, self.y = x, y
        self.batch_size, self.shuffle, self.seed = batch_size, shuffle, seed
        self.drop_remainder, self.normalize = drop_remainder, normalize
        self.restored = restored  # (epoch, permutation) taken from a state dict, or None
        n = len(x)
        self.num_batches = n // batch_size if drop_remainder else math.ceil(n / batch_size)

    def permutation(self, epoch):
        if self.restored is not None and self.restored[0] == epoch:
            return self.restored[1]
        if not self.shuffle:
            return np.arange(len(self.x), dtype=np.int64)
        rng = np.random.Generator(np.random.PCG64([self.seed, epoch]))
        return rng.permutation(len(self.x)).astype(np.int64, copy=False)

    def batch(self, perm, index):
        idx = perm[index * self.batch_size:(index + 1) * self.batch_size]
        xb, yb = self.x[idx], self.y[idx]
        if self.normalize is not None:
            xb = self.normalize(xb)
        return xb, yb


class _Failure:
    """Carries an exception from the prefetch thread to the consumer."""

    def __init__(self, exc):
        self.exc = exc


def _produce(plan, epoch, index, q, stop, around_batch):
    """Prefetch thread body: put ``(epoch, index, xb, yb)`` items from the given position on."""

    def put(item):
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                pass
        return False

    try:
        perm = plan.permutation(epoch)
        while True:
            with around_batch():
                item = (epoch, index) + plan.batch(perm, index)
            if not put(item):
                break
            index += 1
            if index == plan.num_batches:
                epoch, index = epoch + 1, 0
                perm = plan.permutation(epoch)
    except BaseException as exc:  # noqa: BLE001 - handed to the consumer, not swallowed
        put(_Failure(exc))


def _shutdown(stop, q, thread):
    stop.set()
    while True:  # unblock a producer waiting on a full queue
        try:
            q.get_nowait()
        except queue.Empty:
            break
    thread.join()


def _as_int(value, name):
    if isinstance(value, (bytes, str)) or np.ndim(value) != 0:
        raise ValueError(f"state_dict[{name!r}] must be an integer, got {value!r}")
    return int(value)


def _as_str(value):
    if isinstance(value, np.ndarray):
        value = value.item()
    return value.decode() if isinstance(value, bytes) else str(value)


class BatchIterator:
    """Endless iterator of ``(x_batch, y_batch)`` numpy batches, epoch after epoch.

    Args:
        x, y: arrays with the same first dimension (samples).
        batch_size: samples per batch; the last batch of an epoch is smaller
            unless ``drop_remainder`` is true, in which case it is skipped.
        shuffle: visit samples in a new seeded random order each epoch.
        seed: non-negative int (< 2**63); ``None`` draws a random one (kept in
            the state, so the stream is still reproducible from a state dict).
        drop_remainder: drop the last incomplete batch of each epoch.
        normalize: optional callable applied to each ``x_batch`` (e.g.
            ``lambda b: b.astype("float32") / 255``); labels are untouched.
        prefetch: if > 0, a background thread prepares up to this many
            batches ahead.  Batches and state are exactly as without it.
        around_batch: optional zero-argument callable returning a context
            manager that the prefetch thread enters around the preparation
            of each batch (minitf's trainer passes
            ``minitf.openblas.may_use_blas``).

    Semantics:
        * ``next(it)`` / ``for xb, yb in it`` never stop; use
          ``epoch_batches()`` (or ``itertools.islice``) for finite loops.
        * ``it.epoch`` counts completed epochs and ``it.batch_index`` counts
          batches already handed out in the current one; together they name
          the next batch.  Both move when a batch is *received* by the
          caller (never when prefetching), and the epoch rolls over as the
          last batch of an epoch is handed out.
        * Every epoch covers each sample exactly once (bar the dropped
          remainder), and batches are fresh copies, safe to modify.
        * ``state_dict()`` / ``load_state_dict()`` save and restore that
          position; a restored iterator yields exactly the batches the
          original would have yielded next.
        * Not safe to use from several threads at once.
    """

    def __init__(self, x, y, batch_size, shuffle=True, seed=0, drop_remainder=False,
                 normalize=None, prefetch=0, around_batch=None):
        x, y = np.asarray(x), np.asarray(y)
        if x.ndim == 0 or y.ndim == 0 or len(x) != len(y):
            raise ValueError(f"x and y need the same number of samples, got shapes "
                             f"{x.shape} and {y.shape}")
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if seed is None:
            seed = secrets.randbits(63)
        if int(seed) != seed or not 0 <= seed < 2 ** 63:
            raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}")
        if int(prefetch) != prefetch or prefetch < 0:
            raise ValueError(f"prefetch must be a non-negative integer, got {prefetch!r}")
        if normalize is not None and not callable(normalize):
            raise TypeError(f"normalize must be None or callable, got {normalize!r}")
        self._plan = _Plan(x, y, int(batch_size), bool(shuffle), int(seed),
                           bool(drop_remainder), normalize)
        if self._plan.num_batches == 0:
            raise ValueError(f"no batches: {len(x)} samples, batch_size {batch_size}, "
                             f"drop_remainder={drop_remainder}")
        if around_batch is not None and not callable(around_batch):
            raise TypeError(f"around_batch must be None or callable, got {around_batch!r}")
        self._prefetch = int(prefetch)
        self._around_batch = around_batch or contextlib.nullcontext
        self._epoch = 0
        self._index = 0
        self._perm_cache = None  # (epoch, permutation) for the consumer side
        self._thread = None

    # -- position -------------------------------------------------------------

    @property
    def epoch(self):
        """Number of completed epochs (= index of the epoch the next batch is from)."""
        return self._epoch

    @property
    def batch_index(self):
        """Number of batches already handed out in the current epoch."""
        return self._index

    @property
    def seed(self):
        """The seed that determines every epoch's order."""
        return self._plan.seed

    @property
    def num_samples(self):
        """Number of samples in the data."""
        return len(self._plan.x)

    def __len__(self):
        """Batches per epoch."""
        return self._plan.num_batches

    def _permutation(self):
        if self._perm_cache is None or self._perm_cache[0] != self._epoch:
            self._perm_cache = (self._epoch, self._plan.permutation(self._epoch))
        return self._perm_cache[1]

    # -- iteration ------------------------------------------------------------

    def __iter__(self):
        return self

    def __next__(self):
        if self._prefetch:
            xb, yb = self._receive()
        else:
            xb, yb = self._plan.batch(self._permutation(), self._index)
        self._index += 1
        if self._index == self._plan.num_batches:
            self._epoch += 1
            self._index = 0
        return xb, yb

    def epoch_batches(self):
        """Yield the remaining batches of the current epoch, then stop.

        ``epoch`` has been incremented once the last batch is yielded, so the
        next call yields the following epoch in full.  Breaking out early
        leaves the iterator just after the last batch received.
        """
        start = self._epoch
        while self._epoch == start:
            yield next(self)

    def _receive(self):
        if self._thread is None:
            self._start_thread()
        while True:
            try:
                item = self._queue.get(timeout=1.0)
                break
            except queue.Empty:
                if not self._thread.is_alive():
                    self.close()
                    raise RuntimeError("BatchIterator prefetch thread stopped unexpectedly")
        if isinstance(item, _Failure):
            self.close()
            raise item.exc
        epoch, index, xb, yb = item
        assert (epoch, index) == (self._epoch, self._index), "prefetch out of step"
        return xb, yb

    def _start_thread(self):
        self._queue = queue.Queue(maxsize=self._prefetch)
        stop = threading.Event()
        # The thread holds only the plan and the queue, never self, so an
        # abandoned iterator can still be collected; the finalizer then stops it.
        self._thread = threading.Thread(
            target=_produce, args=(self._plan, self._epoch, self._index, self._queue, stop,
                  self._around_batch),
            name="BatchIterator-prefetch", daemon=True)
        self._thread.start()
        self._finalizer = weakref.finalize(self, _shutdown, stop, self._queue, self._thread)

    def close(self):
        """Stop the prefetch thread, if any (it restarts on the next batch)."""
        if self._thread is not None:
            self._finalizer()
            self._thread = None
            self._queue = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- state ----------------------------------------------------------------

    def state_dict(self):
        """The exact position in the stream, as plain ints, strings and numpy arrays.

        Keys: ``format``, ``version``, ``rng`` (how permutations are made),
        ``seed``, ``shuffle``, ``drop_remainder`` (0/1), ``batch_size``,
        ``num_samples``, ``epoch``, ``batch_index`` and ``permutation`` (the
        current epoch's sample order, int64).  Suitable for HDF5 storage.
        """
        plan = self._plan
        return {
            "format": _FORMAT,
            "version": _VERSION,
            "rng": _RNG,
            "seed": plan.seed,
            "shuffle": int(plan.shuffle),
            "drop_remainder": int(plan.drop_remainder),
            "batch_size": plan.batch_size,
            "num_samples": len(plan.x),
            "epoch": self._epoch,
            "batch_index": self._index,
            "permutation": np.array(self._permutation(), dtype=np.int64),
        }

    def load_state_dict(self, state):
        """Restore a position saved by ``state_dict()`` (values may be numpy scalars or bytes).

        The data, ``batch_size``, ``shuffle`` and ``drop_remainder`` must match
        the saved ones (ValueError otherwise); the saved seed replaces this
        iterator's seed.  Any prefetched batches are discarded.
        """
        plan = self._plan
        if _as_str(state.get("format", "")) != _FORMAT:
            raise ValueError(f"not a BatchIterator state (format {state.get('format')!r})")
        if _as_int(state["version"], "version") != _VERSION:
            raise ValueError(f"unsupported BatchIterator state version {state['version']!r}")
        if _as_str(state["rng"]) != _RNG:
            raise ValueError(f"unsupported shuffling scheme {state['rng']!r}")
        expected = {"num_samples": len(plan.x), "batch_size": plan.batch_size,
                    "shuffle": int(plan.shuffle), "drop_remainder": int(plan.drop_remainder)}
        for key, value in expected.items():
            if _as_int(state[key], key) != value:
                raise ValueError(f"state_dict[{key!r}] is {state[key]!r} but this "
                                 f"iterator has {value}")
        seed = _as_int(state["seed"], "seed")
        epoch = _as_int(state["epoch"], "epoch")
        index = _as_int(state["batch_index"], "batch_index")
        if epoch < 0 or not 0 <= index < plan.num_batches:
            raise ValueError(f"state position epoch={epoch}, batch_index={index} is out "
                             f"of range ({plan.num_batches} batches per epoch)")
        perm = np.asarray(state["permutation"])
        if perm.shape != (len(plan.x),) or not np.array_equal(
                np.sort(perm), np.arange(len(plan.x))):
            raise ValueError("state_dict['permutation'] is not a permutation of the samples")
        perm = perm.astype(np.int64)
        self.close()
        self._plan = _Plan(plan.x, plan.y, plan.batch_size, plan.shuffle, seed,
                           plan.drop_remainder, plan.normalize, restored=(epoch, perm))
        self._epoch, self._index = epoch, index
        self._perm_cache = None
