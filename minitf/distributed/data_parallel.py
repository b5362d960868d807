"""``train.py`` on several ranks: sharded batches, global metrics, rank 0 writes.

Every rank builds the same ``BatchIterator`` (same seed, same shuffle) over the whole data and
keeps its slice of each batch: rank ``r`` of ``N`` takes samples ``[r*b/N, (r+1)*b/N)`` of the
global batch of ``b``. The ranks together see exactly the batches one process sees, the averaged
gradient is the gradient of the global batch's mean loss, and the iterator's position (what a
checkpoint stores) is the same on every rank. Evaluation splits each batch in ``N`` near-equal
parts and adds up the sums of all ranks.
"""
import os

import numpy

from . import runtime
from .collectives import allgather, allreduce, host_allreduce
from .training import DistributedOptimizer, broadcast_optimizer_state, broadcast_variables


class ShardedBatches:
    """A ``BatchIterator`` seen by one rank: its slice of every batch. Position and state are
    the wrapped iterator's (identical on all ranks)."""

    def __init__(self, iterator, rank, size, even):
        self.iterator, self.rank, self.size, self.even = iterator, rank, size, even

    def _slice(self, xb, yb):
        n = len(yb)
        if self.even:
            if n % self.size:
                raise ValueError(f"a training batch of {n} samples does not split over "
                                 f"{self.size} ranks")
            step = n // self.size
            lo, hi = self.rank * step, (self.rank + 1) * step
        else:
            bounds = numpy.linspace(0, n, self.size + 1).astype(int)
            lo, hi = bounds[self.rank], bounds[self.rank + 1]
        return xb[lo:hi], yb[lo:hi]

    def epoch_batches(self):
        for xb, yb in self.iterator.epoch_batches():
            xs, ys = self._slice(xb, yb)
            if len(ys):
                yield xs, ys

    def reduce_sums(self, *sums):
        """Add up per-rank sums (loss, correct, count) over all ranks."""
        return tuple(float(v) for v in host_allreduce(list(sums), "sum"))

    def __len__(self):
        return len(self.iterator)

    def __getattr__(self, name):          # epoch, batch_index, state_dict, close, ...
        if name.startswith("__") or name == "iterator":
            raise AttributeError(name)
        return getattr(self.iterator, name)

    def __enter__(self):
        self.iterator.__enter__()
        return self

    def __exit__(self, *exc):
        return self.iterator.__exit__(*exc)


def global_metric_inputs(loss, y, logits):
    """(loss averaged over ranks, labels and logits of the whole global batch): what the
    training metrics see, so they report the global batch on every rank."""
    return allreduce(loss, "average"), allgather(y), allgather(logits)


def _writes(callback):
    from ..keras.callbacks import TensorBoard
    from ..training import callbacks as cb
    return isinstance(callback, (cb.ProgressDisplay, cb.CSVLogger, cb.JSONLinesLogger,
                                 cb.ModelCheckpoint, cb.PlotCurves, TensorBoard))


_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_blas_threads(local_size):
    """Share this machine's cores among its ranks: each rank's BLAS gets ``cores //
    local_size`` threads (at least 1), unless the user set a thread count in the environment.
    Without it every rank starts a BLAS thread per core, and ranks on one machine spend their
    time preempting each other's spinning workers (measured here: 10x slower on 2 ranks).
    Needs threadpoolctl (part of the ``[mpi]`` extra); returns its limiter, or None."""
    if local_size <= 1 or any(os.environ.get(v) for v in _THREAD_VARIABLES):
        return None
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    return threadpool_limits(max(1, cores // local_size), user_api="blas")


class DataParallel:
    """What ``train.py`` does differently on ``size() > 1`` ranks; ``setup`` returns None in
    one process."""

    def __init__(self, cfg):
        from ..training.config import ConfigError
        self.group = runtime.group()
        self.rank, self.size = self.group.rank, self.group.size
        self.chief = self.rank == 0
        t, d = cfg["train"], cfg["data"]
        if t["batch_size"] % self.size:
            raise ConfigError(f"train.batch_size: {t['batch_size']} is the global batch and "
                              f"must divide by the {self.size} ranks of this job (each rank "
                              f"takes batch_size / {self.size} samples)")
        if not d["drop_remainder"]:
            raise ConfigError(f"data.drop_remainder: must be true with {self.size} ranks (a "
                              "smaller last batch would not split evenly over the ranks)")
        from ..ops import random_ops
        random_ops.set_batch_shard(self.rank, self.size)   # dropout as on the global batch
        self._blas_limit = limit_blas_threads(self.group.local_size)

    @classmethod
    def setup(cls, cfg):
        return cls(cfg) if runtime.size() > 1 else None

    def check_config(self, config_text):
        runtime.check_same("the resolved config (train.py --config/--set)", config_text)

    def shard_train(self, iterator):
        return ShardedBatches(iterator, self.rank, self.size, even=True)

    def shard_eval(self, iterator):
        return ShardedBatches(iterator, self.rank, self.size, even=False)

    def wrap_optimizer(self, optimizer):
        return DistributedOptimizer(optimizer)

    def callbacks(self, callbacks):
        """Rank 0 keeps them all; the others drop the ones that print or write files."""
        return callbacks if self.chief else [c for c in callbacks if not _writes(c)]

    def synchronize(self, model, optimizer):
        """Check that the ranks built the same variables, then copy rank 0's weights and
        optimizer state to all (after a fresh start and after a resume)."""
        broadcast_variables(model.variables, root_rank=0)
        broadcast_optimizer_state(optimizer, model.trainable_variables, root_rank=0)



def run_job(main):
    """Run ``main()`` (returning an exit code) as one rank of a job: a failure on any rank, an
    exception or a non-zero code, ends every rank (``MPI.COMM_WORLD.Abort``) instead of leaving
    the others waiting in a collective. In one process it just calls ``main``."""
    from .comm import launched_by_mpi
    if not launched_by_mpi():
        return main()
    import sys
    g = runtime.init()
    if g.size == 1:
        return main()
    if g.rank != 0:   # only rank 0 prints; errors still reach stderr
        sys.stdout = open(os.devnull, "w")
    try:
        code = main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        runtime.abort_job(*sys.exc_info(), code=1)
        raise
    if code:
        sys.stderr.write(f"[rank {g.rank}/{g.size}] exited with code {code}: aborting the "
                         "job\n")
        runtime.abort_job(code=code)
    return code
