"""``tf.distribute`` for one process: ``MirroredStrategy``, ``OneDeviceStrategy`` and the
default strategy, so scripts written for TF's strategies run unchanged on one device.

minitf runs one replica per process (one CPU or one GPU). Every strategy here has
``num_replicas_in_sync == 1``: ``scope()`` changes nothing, ``run`` calls the function,
``reduce`` reduces over ``axis`` only, datasets are returned as they are. Training on several
processes goes through ``minitf.distributed`` (Horovod's API over MPI); a
``MultiWorkerMirroredStrategy`` started on several ranks says so.
"""
import contextlib
import enum
from types import SimpleNamespace

from .nest import map_structure


class ReduceOp(enum.Enum):
    """How ``Strategy.reduce`` and ``ReplicaContext.all_reduce`` combine values."""
    SUM = "SUM"
    MEAN = "MEAN"


class VariableAggregation(enum.Enum):
    """Accepted by ``tf.Variable`` and ``add_weight``; with one replica nothing is aggregated."""
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class VariableSynchronization(enum.Enum):
    """Accepted by ``tf.Variable`` and ``add_weight``; with one replica nothing is synced."""
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class InputContext:
    """What ``distribute_datasets_from_function`` passes to its dataset function."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size):
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(f"the global batch size {global_batch_size} does not divide by "
                             f"the {self.num_replicas_in_sync} replicas")
        return global_batch_size // self.num_replicas_in_sync


class ReplicaContext:
    """``tf.distribute.get_replica_context()``: the one replica."""
    replica_id_in_sync_group = 0
    num_replicas_in_sync = 1

    def __init__(self, strategy):
        self.strategy = strategy

    def all_reduce(self, reduce_op, value, options=None):
        """With one replica, the value itself (for SUM and MEAN alike)."""
        _reduce_op(reduce_op)
        return value

    def merge_call(self, merge_fn, args=(), kwargs=None):
        return merge_fn(self.strategy, *args, **(kwargs or {}))


def _reduce_op(op):
    if isinstance(op, ReduceOp):
        return op
    try:
        return ReduceOp[str(op).upper()]
    except KeyError:
        raise ValueError(f"reduce_op must be tf.distribute.ReduceOp.SUM or MEAN (or 'SUM' / "
                         f"'MEAN'), got {op!r}") from None


_STACK = []


class Strategy:
    """One replica on this process's device (see the module docstring)."""
    num_replicas_in_sync = 1

    def __init__(self, devices=None, cross_device_ops=None, **kwargs):
        self.devices = tuple(devices) if devices else ("/device:CPU:0",)
        self.extended = self

    @contextlib.contextmanager
    def scope(self):
        """Variables, models and optimizers made inside belong to the strategy (with one
        replica: as anywhere)."""
        _STACK.append(self)
        try:
            yield self
        finally:
            _STACK.pop()

    def run(self, fn, args=(), kwargs=None, options=None):
        """``fn(*args, **kwargs)`` on the replica; its result is the per-replica value."""
        with self.scope():
            return fn(*args, **(kwargs or {}))

    def reduce(self, reduce_op, value, axis=None):
        """Combine a per-replica value (with one replica, the value) and, with ``axis``, also
        reduce that axis of it (TF's ``axis`` argument: sum or mean over the batch)."""
        from .ops.reduce_ops import reduce_mean, reduce_sum
        op = _reduce_op(reduce_op)
        if axis is None:
            return value
        return map_structure(lambda v: (reduce_sum if op is ReduceOp.SUM else reduce_mean)(
            v, axis=axis), value)

    def gather(self, value, axis):
        return value

    def experimental_distribute_dataset(self, dataset, options=None):
        return dataset

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        return dataset_fn(InputContext())

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def experimental_local_results(self, value):
        return (value,)

    def experimental_distribute_values_from_function(self, value_fn):
        return value_fn(ReplicaContext(self))

    def __repr__(self):
        return f"<tf.distribute.{type(self).__name__} with 1 replica>"


class MirroredStrategy(Strategy):
    """Synchronous training over the devices of one machine; minitf uses one device."""


class OneDeviceStrategy(Strategy):
    """Everything on one device."""

    def __init__(self, device="/device:CPU:0"):
        super().__init__(devices=[device])


class MultiWorkerMirroredStrategy(Strategy):
    """One worker here; on several MPI ranks use ``minitf.distributed`` (Horovod's API)."""

    def __init__(self, cluster_resolver=None, communication_options=None):
        from .distributed import comm
        if comm.launched_by_mpi():
            raise NotImplementedError(
                "tf.distribute.MultiWorkerMirroredStrategy on several processes is not "
                "supported; use minitf.distributed (hvd.DistributedOptimizer, "
                "hvd.DistributedGradientTape) or train.py, which average gradients over MPI ranks")
        super().__init__()


_DEFAULT = Strategy()


def get_strategy():
    """The strategy of the innermost ``scope()``, else the default one-replica strategy."""
    return _STACK[-1] if _STACK else _DEFAULT


def has_strategy():
    return bool(_STACK)


def in_cross_replica_context():
    return True


def get_replica_context():
    return ReplicaContext(get_strategy())


experimental = SimpleNamespace(MultiWorkerMirroredStrategy=MultiWorkerMirroredStrategy,
                               CentralStorageStrategy=MirroredStrategy)

__all__ = ["ReduceOp", "VariableAggregation", "VariableSynchronization", "InputContext",
           "ReplicaContext", "Strategy", "MirroredStrategy", "OneDeviceStrategy",
           "MultiWorkerMirroredStrategy", "get_strategy", "has_strategy",
           "in_cross_replica_context", "get_replica_context", "experimental"]
