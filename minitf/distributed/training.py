"""Data-parallel training pieces with Horovod's names: ``DistributedGradientTape``,
``DistributedOptimizer`` and ``broadcast_variables``.

Gradients are averaged over ranks in fused buckets (``collectives.grouped_allreduce``) before
the optimizer sees them, so loss-scale checks, gradient accumulation and clipping behave as in
one process on the global batch. Everything here is made of registered ops and host calls, so a
``minitf.function``-traced step replays the allreduce with the rest of the step.
"""
import numpy

from .. import backend as B
from . import runtime
from .collectives import grouped_allreduce


class DistributedGradientTape:
    """Wraps a ``GradientTape``: ``gradient()`` returns gradients averaged (or summed, with
    ``op=hvd.Sum``) over all ranks::

        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)

    Horovod's ``compression`` and ``gradient_predivide_factor`` apply; its device, sparse and
    grouping arguments are accepted and have nothing to choose here (gradients are dense and
    fused into buckets of ``bucket_bytes``).
    """

    def __init__(self, gradtape, device_dense="", device_sparse="", compression=None,
                 sparse_as_dense=False, op=None, gradient_predivide_factor=1.0, num_groups=0,
                 groups=None, process_set=None, bucket_bytes=None):
        self._tape = gradtape
        self._reduction = _Reduction(op, compression, gradient_predivide_factor, bucket_bytes,
                                     "DistributedGradientTape")

    def gradient(self, target, sources, output_gradients=None, **kwargs):
        grads = self._tape.gradient(target, sources, output_gradients=output_gradients,
                                    **kwargs)
        if runtime.size() == 1:
            return grads
        from ..nest import flatten, pack_sequence_as
        return pack_sequence_as(grads, self._reduction(list(flatten(grads))))

    def __enter__(self):
        self._tape.__enter__()
        return self

    def __exit__(self, *exc):
        return self._tape.__exit__(*exc)

    def __getattr__(self, name):
        if name.startswith("__") or name == "_tape":
            raise AttributeError(name)
        return getattr(self._tape, name)


class _DistributedMixin:
    """Averages the gradients over ranks, then runs the wrapped optimizer's own step."""

    def _reduce(self, grads):
        if runtime.size() == 1:
            return list(grads)
        return self._dist_reduction(list(grads))

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        pairs = list(grads_and_vars)
        grads = self._reduce([g for g, _ in pairs])
        return super().apply_gradients(list(zip(grads, [v for _, v in pairs])), *args,
                                       **kwargs)

    def apply(self, grads, trainable_variables=None):
        return super().apply(self._reduce(grads), trainable_variables)


def DistributedOptimizer(optimizer, name=None, use_locking=False, device_dense="",
                         device_sparse="", compression=None, sparse_as_dense=False,
                         backward_passes_per_step=1, op=None, gradient_predivide_factor=1.0,
                         average_aggregated_gradients=False, num_groups=0, groups=None,
                         process_set=None, bucket_bytes=None):
    """The optimizer (a keras optimizer or a ``LossScaleOptimizer``) with its gradients
    averaged over ranks before its update: before loss-scale checks, accumulation, clipping.

    The result shares the optimizer's state (variables, hyperparameters, checkpoint format)
    and is an instance of its class; use it in place of the original. Horovod's arguments as
    for ``DistributedGradientTape``; ``backward_passes_per_step`` > 1 is refused (use the
    optimizer's ``gradient_accumulation_steps``)."""
    if backward_passes_per_step != 1:
        raise NotImplementedError(
            f"DistributedOptimizer: backward_passes_per_step={backward_passes_per_step} is not "
            f"supported; use the optimizer's gradient_accumulation_steps={backward_passes_per_step}"
            f" (the average over ranks then covers every accumulated step)")
    if isinstance(optimizer, _DistributedMixin):
        return optimizer
    reduction = _Reduction(op, compression, gradient_predivide_factor, bucket_bytes,
                           "DistributedOptimizer")
    base = type(optimizer)
    # The class keeps its name: checkpoints record it, and they must load in one process too.
    cls = type(base.__name__, (_DistributedMixin, base),
               {"__module__": base.__module__, "__qualname__": base.__qualname__})
    wrapped = object.__new__(cls)
    wrapped.__dict__ = optimizer.__dict__     # one state: the two objects stay in step
    wrapped.__dict__["_dist_reduction"] = reduction
    return wrapped


class _Reduction:
    """Horovod's gradient reduction: ``op`` over ranks in fused buckets, each gradient sent
    through ``compression``; with ``gradient_predivide_factor`` f an average is computed as
    ``sum(g / f) * f / size`` (Horovod's split of the division around the sum)."""

    def __init__(self, op, compression, predivide, bucket_bytes, where):
        from .horovod_api import Compression, check_scale, reduce_op
        self.op = reduce_op(op, None, where)
        self.compression = compression or Compression.none
        self.predivide = check_scale(predivide, where)
        if self.predivide != 1.0 and self.op != "average":
            raise ValueError(f"{where}: gradient_predivide_factor needs op=hvd.Average")
        self.bucket_bytes = bucket_bytes

    def __call__(self, grads):
        op, scale = self.op, None
        if self.predivide != 1.0:
            grads = [None if g is None else g * (1.0 / self.predivide) for g in grads]
            op, scale = "sum", self.predivide / runtime.size()
        sent = [(None, None) if g is None else self.compression.compress(g) for g in grads]
        reduced = grouped_allreduce([t for t, _ in sent], op, self.bucket_bytes)
        out = [None if r is None else self.compression.decompress(r, ctx)
               for r, (_, ctx) in zip(reduced, sent)]
        return out if scale is None else [None if g is None else g * scale for g in out]


def broadcast_variables(variables, root_rank=0):
    """Set every variable to its value on ``root_rank``, in place (one message per dtype).
    Raises ``DistributedError`` when the ranks pass different variables (paths, shapes or
    dtypes)."""
    variables = list(variables)
    g = runtime.group()
    if g.size == 1:
        return
    runtime.check_same("the variables to broadcast (path shape dtype)",
                       runtime.describe_variables(variables))
    by_dtype = {}
    for v in variables:
        by_dtype.setdefault(v._value.dtype.name, []).append(v)
    for members in by_dtype.values():
        flat = numpy.concatenate([B.to_numpy(v._value).reshape(-1) for v in members])
        flat = B.to_numpy(g.broadcast_array(flat, root_rank))
        start = 0
        for v in members:
            n = int(v._value.size)
            v.assign(B.xp.asarray(flat[start:start + n].reshape(v._value.shape)))
            start += n


def broadcast_optimizer_state(optimizer, variables, root_rank=0):
    """Create the optimizer's slots for ``variables`` and broadcast all its variables."""
    optimizer.build(list(variables))
    broadcast_variables(optimizer.variables, root_rank)
