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
    ``op="sum"``) over all ranks::

        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)
    """

    def __init__(self, gradtape, op="average", bucket_bytes=None):
        self._tape = gradtape
        self._op = op
        self._bucket_bytes = bucket_bytes

    def gradient(self, target, sources, output_gradients=None, **kwargs):
        grads = self._tape.gradient(target, sources, output_gradients=output_gradients,
                                    **kwargs)
        if runtime.size() == 1:
            return grads
        from ..nest import flatten, pack_sequence_as
        flat = list(flatten(grads))
        return pack_sequence_as(grads, grouped_allreduce(flat, self._op, self._bucket_bytes))

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
        return grouped_allreduce(list(grads), self._dist_op, self._dist_bucket_bytes)

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        pairs = list(grads_and_vars)
        grads = self._reduce([g for g, _ in pairs])
        return super().apply_gradients(list(zip(grads, [v for _, v in pairs])), *args,
                                       **kwargs)

    def apply(self, grads, trainable_variables=None):
        return super().apply(self._reduce(grads), trainable_variables)


def DistributedOptimizer(optimizer, op="average", bucket_bytes=None):
    """The optimizer (a keras optimizer or a ``LossScaleOptimizer``) with its gradients
    averaged over ranks before its update: before loss-scale checks, accumulation, clipping.

    The result shares the optimizer's state (variables, hyperparameters, checkpoint format)
    and is an instance of its class; use it in place of the original."""
    if isinstance(optimizer, _DistributedMixin):
        return optimizer
    base = type(optimizer)
    # The class keeps its name: checkpoints record it, and they must load in one process too.
    cls = type(base.__name__, (_DistributedMixin, base),
               {"__module__": base.__module__, "__qualname__": base.__qualname__})
    wrapped = object.__new__(cls)
    wrapped.__dict__ = optimizer.__dict__     # one state: the two objects stay in step
    wrapped.__dict__["_dist_op"] = op
    wrapped.__dict__["_dist_bucket_bytes"] = bucket_bytes
    return wrapped


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
