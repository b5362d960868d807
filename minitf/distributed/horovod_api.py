"""The rest of Horovod's ``horovod.tensorflow`` surface that scripts use: reduction constants,
``Compression``, ``allreduce``'s legacy and scaling arguments, object collectives and the
build/topology queries. The collectives themselves are in ``collectives``."""
import json

import numpy

from .. import backend as B
from ..tensor import Tensor
from . import runtime
from .collectives import allreduce as _allreduce
from .comm import DistributedError

Average, Sum, Min, Max = "average", "sum", "min", "max"
#: Horovod's other reductions: recognised, refused with an explanation when used.
Adasum, Product = "adasum", "product"


class Compression:
    """Horovod's gradient compression: ``Compression.none`` (identity) and ``Compression.fp16``
    (floating tensors travel as float16 and are cast back: fewer bytes, float16 rounding)."""

    class none:   # noqa: N801 - Horovod's name
        @staticmethod
        def compress(tensor):
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor

    class fp16:   # noqa: N801
        @staticmethod
        def compress(tensor):
            from ..ops.math_ops import cast
            if tensor.dtype.is_floating and tensor.dtype.name != "float16":
                return cast(tensor, "float16"), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            from ..ops.math_ops import cast
            return tensor if ctx is None else cast(tensor, ctx)


def reduce_op(op=None, average=None, where="allreduce"):
    """Horovod's ``op`` / legacy ``average`` pair as one of our reduction names."""
    if op is not None and average is not None:
        raise ValueError(f"{where}: pass op= or the deprecated average=, not both")
    if op is None:
        op = Sum if average is False else Average
    op = str(op).lower()
    if op in (Adasum, Product):
        raise NotImplementedError(f"{where}: op={op!r} is not supported; use hvd.Average, "
                                  f"hvd.Sum, hvd.Min or hvd.Max")
    return op


def allreduce(tensor, average=None, device_dense="", device_sparse="",
              compression=Compression.none, op=None, prescale_factor=1.0,
              postscale_factor=1.0, name=None, process_set=None):
    """Horovod's ``allreduce``: ``postscale_factor * reduce(prescale_factor * tensor)`` over all
    ranks, where reduce is ``op`` (default average; ``average=False`` means sum), the tensor
    travelling compressed by ``compression``."""
    op = reduce_op(op, average)
    t = tensor if isinstance(tensor, Tensor) else _as_tensor(tensor)
    if prescale_factor != 1.0:
        t = t * prescale_factor
    sent, ctx = compression.compress(t)
    out = compression.decompress(_allreduce(sent, op=op), ctx)
    if postscale_factor != 1.0:
        out = out * postscale_factor
    return out


def _as_tensor(value):
    from ..ops.convert import convert_to_tensor
    return convert_to_tensor(value)


def _encode(obj, where):
    try:
        return json.dumps(obj, sort_keys=True).encode()
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where}: the object must be JSON-serialisable (numbers, strings, "
                        f"lists, dicts; objects are never unpickled here): {exc}") from None


def broadcast_object(obj, root_rank=0, session=None, name=None, process_set=None):
    """``obj`` as it is on ``root_rank``, on every rank (JSON values: numbers, strings, lists,
    dicts; a tuple comes back as a list)."""
    g = runtime.group()
    if not 0 <= root_rank < g.size:
        raise ValueError(f"broadcast_object: root_rank {root_rank} is not a rank of {g.size}")
    data = g.allgather_bytes(_encode(obj, "broadcast_object"))[root_rank]
    return json.loads(data.decode())


def allgather_object(obj, session=None, name=None, process_set=None):
    """``[obj of rank 0, obj of rank 1, ...]`` on every rank (JSON values)."""
    return [json.loads(d.decode()) for d in
            runtime.group().allgather_bytes(_encode(obj, "allgather_object"))]


def cross_rank():
    """This process's node index (ranks are numbered node by node, as mpiexec places them)."""
    return runtime.rank() // runtime.local_size()


def cross_size():
    """The number of nodes."""
    return runtime.size() // runtime.local_size()


def is_homogeneous():
    """True when every node runs the same number of ranks."""
    sizes = allgather_object(runtime.local_size())
    return len(set(sizes)) == 1


def shutdown():
    """Horovod stops its background thread here; minitf has none (MPI ends with the process)."""


def join(device=""):
    """Horovod's ``join`` for ranks with uneven batch counts is not supported: give every rank
    the same number of batches (``minitf.distributed.DataParallel`` shards them evenly)."""
    raise DistributedError("hvd.join() is not supported: give every rank the same number of "
                           "batches (see docs/distributed.md)")


def mpi_built():
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def mpi_enabled():
    return runtime.group().backend == "mpi"


def mpi_threads_supported():
    g = runtime.group()
    if g.backend != "mpi":
        return False
    return g.MPI.Query_thread() == g.MPI.THREAD_MULTIPLE


def nccl_built():
    return B.get_backend() == "cupy" and getattr(runtime.group(), "_nccl", None) is not None


def gloo_built():
    return False


def gloo_enabled():
    return False


def cuda_built():
    return B.cupy_available()


def rocm_built():
    return False


def check_scale(factor, where):
    factor = float(factor)
    if not numpy.isfinite(factor) or factor <= 0:
        raise ValueError(f"{where}: gradient_predivide_factor must be a positive number, got "
                         f"{factor}")
    return factor
