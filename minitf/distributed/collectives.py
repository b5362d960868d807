"""Collectives as registered ops, so tapes differentiate them and ``minitf.function`` traces
replay them: a traced training step keeps its allreduce.

``allreduce`` is linear: the gradient of an average over ranks is the average of the upstream
gradients over ranks (a sum gives a sum). In one process every collective is the identity.
"""
from .. import backend as B
from ..ops import array_ops
from ..ops._samples import u
from ..ops.convert import convert_to_tensor
from ..ops.registry import defop
from ..tensor import Tensor
from . import runtime

#: Bytes per fused message: gradients are packed into buckets of about this size (Horovod's
#: fusion threshold is 64 MiB, DDP's bucket 25 MiB); ``MINITF_FUSION_BYTES`` overrides it.
DEFAULT_BUCKET_BYTES = 64 << 20


def _allreduce_forward(x, reduce_op="average"):
    return runtime.group().allreduce_array(x, reduce_op)


def _allreduce_vjp(F, g, x, y, reduce_op="average"):
    if reduce_op not in ("average", "sum"):
        raise NotImplementedError(f"allreduce(op={reduce_op!r}) has no gradient")
    return (F.mpi_allreduce(g, reduce_op=reduce_op),)


def _allreduce_samples():
    return [((u(3, 4),), {"reduce_op": "average"}), ((u(5),), {"reduce_op": "sum"})]


_allreduce = defop("mpi_allreduce", _allreduce_forward, vjp=_allreduce_vjp, jvp="linear",
                   save=(), samples=_allreduce_samples, type="MPIAllreduce")
_allgather = defop("mpi_allgather", lambda x: runtime.group().allgather_array(x),
                   type="MPIAllgather")
_broadcast = defop("mpi_broadcast",
                   lambda x, root_rank=0: runtime.group().broadcast_array(x, root_rank),
                   type="MPIBroadcast")


def _tensor(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def allreduce(tensor, op="average", name=None):
    """The average (``op="average"``, default), sum, min or max of ``tensor`` over all ranks."""
    return _allreduce(_tensor(tensor), reduce_op=op)


def allgather(tensor, name=None):
    """``tensor`` of every rank concatenated along the first axis, in rank order (the first
    dimension may differ between ranks)."""
    t = _tensor(tensor)
    if len(t.shape) == 0:
        t = array_ops.reshape(t, (1,))
    return _allgather(t)


def broadcast(tensor, root_rank=0, name=None):
    """``tensor`` as it is on ``root_rank``, on every rank."""
    return _broadcast(_tensor(tensor), root_rank=int(root_rank))


def grouped_allreduce(tensors, op="average", bucket_bytes=None):
    """Allreduce a list of tensors (None passes through) in a few fused messages: tensors of
    one dtype are flattened and concatenated into buckets of about ``bucket_bytes``, each
    bucket is reduced in one call and split back. Returns the reduced tensors in order."""
    if bucket_bytes is None:
        bucket_bytes = runtime.bucket_bytes()
    out = list(tensors)
    groups = {}
    for index, t in enumerate(out):
        if t is not None:
            out[index] = t = _tensor(t)
            groups.setdefault(t.dtype.name, []).append(index)
    for indexes in groups.values():
        for bucket in _buckets(indexes, out, bucket_bytes):
            if len(bucket) == 1:
                (i,) = bucket
                out[i] = allreduce(out[i], op)
                continue
            flat = array_ops.concat([array_ops.reshape(out[i], (-1,)) for i in bucket], 0)
            reduced = allreduce(flat, op)
            sizes = [int(out[i]._value.size) for i in bucket]
            for i, part in zip(bucket, array_ops.split(reduced, sizes, 0)):
                out[i] = array_ops.reshape(part, tuple(out[i].shape))
    return out


def _buckets(indexes, tensors, limit):
    bucket, size = [], 0
    for i in indexes:
        nbytes = tensors[i]._value.nbytes
        if bucket and size + nbytes > limit:
            yield bucket
            bucket, size = [], 0
        bucket.append(i)
        size += nbytes
    if bucket:
        yield bucket


def host_allreduce(arrays, op="sum"):
    """Reduce a list of host numbers/arrays in one message (outside any tape or trace)."""
    import numpy
    flat = numpy.concatenate([numpy.asarray(a, numpy.float64).reshape(-1) for a in arrays])
    reduced = B.to_numpy(runtime.group().allreduce_array(B.xp.asarray(flat), op))
    out, start = [], 0
    for a in arrays:
        n = numpy.asarray(a).size
        out.append(reduced[start:start + n].reshape(numpy.shape(a)))
        start += n
    return out


def global_moments(x, axes, keepdims):
    """Mean and biased variance of ``x`` over ``axes`` and over all ranks (equal per-rank
    batches): the mean is averaged first, then the squared deviations from it."""
    from ..ops import math_ops, reduce_ops
    mean = allreduce(reduce_ops.reduce_mean(x, axis=list(axes), keepdims=True), "average")
    centered = math_ops.square(x - mean)
    variance = allreduce(reduce_ops.reduce_mean(centered, axis=list(axes), keepdims=True),
                         "average")
    if not keepdims:
        mean = array_ops.reshape(mean, (-1,))
        variance = array_ops.reshape(variance, (-1,))
    return mean, variance
