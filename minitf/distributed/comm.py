"""The process group: one process, or the ranks of an MPI job (through mpi4py).

mpi4py is imported only when the process was started by an MPI launcher (``mpiexec``,
``mpirun``, ``srun``), recognised by the environment variables the launchers set; a plain
``python`` run is one process and never imports it. ``MINITF_DISTRIBUTED=0`` forces one process.

Arrays travel as buffers (no pickling). With the cupy backend a reduction runs on the device
through NCCL (``cupy.cuda.nccl``) when it is available, else the array is staged through host
memory and reduced over MPI.
"""
import os
import sys

import numpy

from .. import backend as B

#: Environment variables set by MPI launchers: Open MPI, MPICH/Hydra and Intel MPI (PMI),
#: PMIx (Slurm's srun with --mpi=pmix) and MVAPICH.
LAUNCH_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                    "MV2_COMM_WORLD_SIZE", "HYDRA_CONTROL_FD")

REDUCE_OPS = ("average", "sum", "min", "max")


class DistributedError(RuntimeError):
    """A collective could not run (ranks disagree, the MPI extra is missing, ...)."""


def launched_by_mpi(environ=None):
    """True when an MPI launcher started this process (and ``MINITF_DISTRIBUTED`` is not 0)."""
    env = os.environ if environ is None else environ
    if env.get("MINITF_DISTRIBUTED", "1") == "0":
        return False
    return any(name in env for name in LAUNCH_VARIABLES)


class SingleProcess:
    """The group of one process: every collective is the identity (a copy)."""

    rank, size, local_rank, local_size = 0, 1, 0, 1
    backend = "single"

    def allreduce_array(self, array, op):
        _check_op(op, array)
        return array.copy()

    def allgather_array(self, array):
        return array.copy()

    def broadcast_array(self, array, root):
        _check_root(root, self.size)
        return array.copy()

    def allgather_bytes(self, data):
        return [bytes(data)]

    def barrier(self):
        pass

    def abort(self, code=1):
        os._exit(code)


class MPIGroup:
    """The ranks of ``MPI.COMM_WORLD``."""

    backend = "mpi"

    def __init__(self):
        try:
            from mpi4py import MPI
        except ImportError as exc:
            raise DistributedError(
                "this process was started by an MPI launcher but mpi4py cannot be imported "
                f"({exc}); install the extra: pip install -e \".[mpi]\"") from None
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_rank, self.local_size = node.Get_rank(), node.Get_size()
        node.Free()
        self._ops = {"sum": MPI.SUM, "average": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}
        self._nccl = None
        if B.get_backend() == "cupy":
            self._nccl = _nccl_communicator(self)

    # -- arrays -----------------------------------------------------------------------------------
    def allreduce_array(self, array, op):
        _check_op(op, array)
        if self._nccl is not None and self._nccl.supports(array):
            result = self._nccl.allreduce(array, "sum" if op == "average" else op)
        else:
            host = _host(array)
            wide = host.dtype.itemsize < 4 and host.dtype.kind == "f"   # no float16 in MPI
            send = host.astype(numpy.float32) if wide else host
            out = numpy.empty_like(send)
            self.comm.Allreduce(send, out, op=self._ops[op])
            if op == "average":
                out /= out.dtype.type(self.size)
            return B.xp.asarray(out.astype(host.dtype) if wide else out)
        if op == "average":
            result /= result.dtype.type(self.size)
        return result

    def allgather_array(self, array):
        host = _host(array)
        rows = numpy.zeros(self.size, numpy.int64)
        self.comm.Allgather(numpy.array([host.shape[0] if host.ndim else 1], numpy.int64), rows)
        per_row = int(numpy.prod(host.shape[1:])) if host.ndim > 1 else 1
        counts = rows * per_row
        out = numpy.empty((int(rows.sum()),) + host.shape[1:], host.dtype)
        displs = numpy.concatenate([[0], numpy.cumsum(counts)[:-1]])
        self.comm.Allgatherv(host.reshape(-1), [out.reshape(-1), counts, displs, _mpi_type(
            self.MPI, host.dtype)])
        return B.xp.asarray(out)

    def broadcast_array(self, array, root):
        _check_root(root, self.size)
        host = numpy.array(_host(array), copy=True, order="C")
        self.comm.Bcast(host, root=root)
        return B.xp.asarray(host)

    def allgather_bytes(self, data):
        data = numpy.frombuffer(bytes(data), numpy.uint8)
        sizes = numpy.zeros(self.size, numpy.int64)
        self.comm.Allgather(numpy.array([data.size], numpy.int64), sizes)
        out = numpy.empty(int(sizes.sum()), numpy.uint8)
        displs = numpy.concatenate([[0], numpy.cumsum(sizes)[:-1]])
        self.comm.Allgatherv(data, [out, sizes, displs, self.MPI.BYTE])
        return [out[a:a + n].tobytes() for a, n in zip(displs, sizes)]

    def barrier(self):
        self.comm.Barrier()

    def abort(self, code=1):
        sys.stdout.flush()
        sys.stderr.flush()
        self.comm.Abort(code)


def _check_op(op, array):
    if op not in REDUCE_OPS:
        raise ValueError(f"allreduce: op must be one of {REDUCE_OPS}, got {op!r}")
    if op == "average" and array.dtype.kind not in "fc":
        raise TypeError(f"allreduce: op='average' needs a floating-point tensor, got "
                        f"{array.dtype}; use op='sum' for integers")


def _check_root(root, size):
    if not 0 <= int(root) < size:
        raise ValueError(f"broadcast: root_rank must be in [0, {size}), got {root}")


def _host(array):
    return numpy.ascontiguousarray(B.to_numpy(array))


def _mpi_type(MPI, dtype):
    from mpi4py.util.dtlib import from_numpy_dtype
    return from_numpy_dtype(numpy.dtype(dtype))


class _NCCL:
    """Device-side sums through ``cupy.cuda.nccl`` (one communicator, one GPU per rank)."""

    _TYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
              "int32": "NCCL_INT32", "int64": "NCCL_INT64"}
    _OPS = {"sum": "NCCL_SUM", "min": "NCCL_MIN", "max": "NCCL_MAX"}

    def __init__(self, nccl, comm):
        self.nccl, self.comm = nccl, comm

    def supports(self, array):
        return B.get_backend() == "cupy" and numpy.dtype(array.dtype).name in self._TYPES

    def allreduce(self, array, op):
        import cupy
        dtype = self._TYPES[numpy.dtype(array.dtype).name]
        src = cupy.ascontiguousarray(array)
        out = cupy.empty_like(src)
        self.comm.allReduce(src.data.ptr, out.data.ptr, src.size, getattr(self.nccl, dtype),
                            getattr(self.nccl, self._OPS[op]), cupy.cuda.get_current_stream().ptr)
        return out


def _nccl_communicator(group):
    """Pin this rank to GPU ``local_rank`` and open an NCCL communicator, or return None (no
    NCCL in this cupy build, ``MINITF_NCCL=0``): reductions then stage through host memory."""
    import cupy
    cupy.cuda.Device(group.local_rank % cupy.cuda.runtime.getDeviceCount()).use()
    if os.environ.get("MINITF_NCCL", "1") == "0":
        return None
    try:
        from cupy.cuda import nccl
    except ImportError:
        return None
    uid = numpy.zeros(128, numpy.int8)   # ncclUniqueId: 128 bytes, made by rank 0
    if group.rank == 0:
        uid[:] = numpy.array(nccl.get_unique_id(), numpy.int64).astype(numpy.int8)
    group.comm.Bcast(uid, root=0)
    comm = nccl.NcclCommunicator(group.size, tuple(int(v) for v in uid), group.rank)
    return _NCCL(nccl, comm)
