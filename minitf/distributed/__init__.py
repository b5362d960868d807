"""Data-parallel training over MPI with Horovod's names (``import minitf.distributed as hvd``).

    import minitf as tf
    import minitf.distributed as hvd

    hvd.init()
    opt = hvd.DistributedOptimizer(tf.keras.optimizers.Adam(1e-3 * hvd.size()))
    ...  # build the model, then start all ranks from rank 0's weights:
    hvd.broadcast_variables(model.variables, root_rank=0)

Run with ``mpiexec -n 4 python script.py``. Started without an MPI launcher, the job is one
process: ``size() == 1``, every collective is the identity and mpi4py is never imported.
See docs/distributed.md.
"""
from .collectives import allgather, broadcast, grouped_allreduce  # noqa: F401
from .comm import DistributedError, launched_by_mpi  # noqa: F401
from .runtime import (abort_on_exception, init, is_initialized,  # noqa: F401
                      local_rank, local_size, rank, size)
from .training import (DistributedGradientTape, DistributedOptimizer,  # noqa: F401
                       broadcast_optimizer_state, broadcast_variables)
from .horovod_api import (Adasum, Average, Compression, Max, Min, Product, Sum,  # noqa: F401
                          allgather_object, allreduce, broadcast_object, cross_rank, cross_size,
                          cuda_built, gloo_built, gloo_enabled, is_homogeneous, join, mpi_built,
                          mpi_enabled, mpi_threads_supported, nccl_built, rocm_built, shutdown)
from . import callbacks  # noqa: F401,E402

__all__ = ["init", "is_initialized", "rank", "size", "local_rank", "local_size", "allreduce",
           "allgather", "broadcast", "grouped_allreduce", "broadcast_variables",
           "broadcast_optimizer_state", "DistributedGradientTape", "DistributedOptimizer",
           "DistributedError", "launched_by_mpi", "abort_on_exception", "Average", "Sum", "Min",
           "Max", "Adasum", "Product", "Compression", "broadcast_object", "allgather_object",
           "cross_rank", "cross_size", "is_homogeneous", "shutdown", "join", "mpi_built",
           "mpi_enabled", "mpi_threads_supported", "nccl_built", "gloo_built", "gloo_enabled",
           "cuda_built", "rocm_built", "callbacks"]
