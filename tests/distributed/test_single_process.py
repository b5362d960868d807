"""minitf.distributed in one process (no launcher): the identity collectives, fused buckets,
the traced allreduce, sharding, config checks and SyncBatchNormalization. A fake two-rank group
stands in for MPI where the count of messages matters."""
import os
import subprocess
import sys

import numpy as np
import pytest

import minitf as tf
import minitf.distributed as hvd
from datasets import BatchIterator
from minitf.distributed import comm, runtime
from minitf.distributed.data_parallel import DataParallel, ShardedBatches
from minitf.training.config import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TwinGroup(comm.SingleProcess):
    """Two ranks holding the same values: a sum doubles; every message is counted."""
    rank, size, local_rank, local_size = 0, 2, 0, 2

    def __init__(self):
        self.messages = []

    def allreduce_array(self, array, op):
        comm._check_op(op, array)
        self.messages.append(int(array.size))
        return array * 2 if op == "sum" else array.copy()


@pytest.fixture
def twins():
    group = TwinGroup()
    runtime._reset_for_tests(group)
    yield group
    runtime._reset_for_tests(None)


def test_importing_minitf_does_not_import_mpi4py():
    code = ("import sys, minitf, minitf.distributed as d; d.init(); "
            "print(d.size(), d.rank(), 'mpi4py' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ROOT}).stdout
    assert out.split() == ["1", "0", "False"]


def test_launch_detection():
    assert not comm.launched_by_mpi({})
    assert comm.launched_by_mpi({"PMI_RANK": "0", "PMI_SIZE": "2"})
    assert comm.launched_by_mpi({"OMPI_COMM_WORLD_SIZE": "4"})
    assert not comm.launched_by_mpi({"PMI_SIZE": "2", "MINITF_DISTRIBUTED": "0"})


def test_one_process_collectives_are_copies():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    for y in (hvd.allreduce(x), hvd.allreduce(x, op="sum"), hvd.allgather(x), hvd.broadcast(x)):
        np.testing.assert_array_equal(y.numpy(), x.numpy())
        assert y._value is not x._value
    assert hvd.allgather(tf.constant(3.0)).shape == (1,)
    assert (hvd.rank(), hvd.size(), hvd.local_rank(), hvd.local_size()) == (0, 1, 0, 1)
    with pytest.raises(ValueError, match="op must be one of"):
        hvd.allreduce(x, op="mean")
    with pytest.raises(TypeError, match="op='sum' for integers"):
        hvd.allreduce(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="root_rank must be in"):
        hvd.broadcast(x, root_rank=1)


def test_gradients_are_fused_into_few_messages(twins):
    grads = [tf.constant(np.full(shape, 1.5, np.float32)) for shape in [(3, 4), (4,), (5,)]]
    grads.append(tf.constant(np.ones(2, np.float64)))
    out = hvd.grouped_allreduce(grads + [None], op="sum")
    assert twins.messages == [12 + 4 + 5, 2]          # one per dtype
    assert out[-1] is None
    for g, r in zip(grads, out):
        assert r.shape == g.shape and r.dtype == g.dtype
        np.testing.assert_array_equal(r.numpy(), 2 * g.numpy())
    twins.messages.clear()
    hvd.grouped_allreduce(grads, bucket_bytes=40)      # 48 bytes alone, then 16 + 20 <= 40
    assert twins.messages == [12, 4 + 5, 2]


def test_the_traced_step_replays_the_allreduce(twins):
    v = tf.Variable([1.0, 2.0, 3.0])
    opt = hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.5))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(v * x)
        opt.apply_gradients([(tape.gradient(loss, v), v)])
        return loss

    for _ in range(3):
        step(tf.constant([1.0, 1.0, 2.0]))
    assert step.experimental_get_tracing_count() == 1
    assert twins.messages == [3, 3, 3]                 # traced once, reduced every step
    np.testing.assert_allclose(v.numpy(), [1 - 1.5, 2 - 1.5, 3 - 3.0])


def test_distributed_optimizer_shares_the_optimizer_state():
    inner = tf.keras.optimizers.Adam(0.1, global_clipnorm=1.0)
    opt = hvd.DistributedOptimizer(inner)
    assert isinstance(opt, tf.keras.optimizers.Adam) and hvd.DistributedOptimizer(opt) is opt
    v = tf.Variable([1.0, -1.0])
    opt.apply_gradients([(tf.constant([3.0, 4.0]), v)])
    assert int(inner.iterations) == 1 and opt.get_state().keys() == inner.get_state().keys()
    opt.learning_rate = 0.01
    assert float(inner.learning_rate) == pytest.approx(0.01)
    plain = tf.keras.optimizers.Adam(0.1, global_clipnorm=1.0)
    plain.set_state(opt.get_state())          # a checkpoint of N ranks resumes in one process
    opt.set_state(plain.get_state())
    assert type(opt).__name__ == "Adam"
    scaled = hvd.DistributedOptimizer(tf.keras.mixed_precision.LossScaleOptimizer(
        tf.keras.optimizers.SGD(0.1)))
    assert float(scaled.loss_scale) == 2.0 ** 15 and "loss_scale" in str(scaled.get_state())


def test_distributed_tape_sums_or_averages(twins):
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    grads = hvd.DistributedGradientTape(tape, op="sum").gradient(loss, [v])
    np.testing.assert_allclose(grads[0].numpy(), [4.0, 8.0])


@pytest.mark.parametrize("size", [2, 3])
def test_shards_cover_every_sample_once(size):
    n, batch = 60, 12
    x = np.arange(n, dtype=np.float32)[:, None]
    y = np.arange(n)

    def epoch(kind, rank):
        it = BatchIterator(x, y, batch, shuffle=kind == "train", seed=5, drop_remainder=True)
        return [yb for _, yb in ShardedBatches(it, rank, size, even=kind == "train")
                .epoch_batches()]

    whole = [yb for _, yb in BatchIterator(x, y, batch, shuffle=True, seed=5,
                                           drop_remainder=True).epoch_batches()]
    parts = [epoch("train", r) for r in range(size)]
    for step, batch_labels in enumerate(whole):       # step by step, the same samples
        joined = np.concatenate([p[step] for p in parts])
        np.testing.assert_array_equal(joined, batch_labels)
        assert len({len(p[step]) for p in parts}) == 1
    it = BatchIterator(x[:55], y[:55], 25, shuffle=False)   # uneven evaluation batches
    seen = np.concatenate([yb for r in range(size)
                           for _, yb in ShardedBatches(it, r, size, even=False).epoch_batches()])
    assert sorted(seen.tolist()) == list(range(55))


def test_config_errors_name_the_key(twins):
    from minitf.training import config as config_lib
    cfg = config_lib.load_config(base={}, overrides=["train.batch_size=33"])
    with pytest.raises(ConfigError, match="train.batch_size: 33 is the global batch"):
        DataParallel(cfg)
    cfg = config_lib.load_config(base={}, overrides=["data.drop_remainder=false"])
    with pytest.raises(ConfigError, match="data.drop_remainder"):
        DataParallel(cfg)


def test_sync_batch_norm_is_batch_norm_in_one_process():
    x = tf.constant(np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32) * 3 + 1)
    plain = tf.keras.layers.BatchNormalization()
    sync = tf.keras.layers.SyncBatchNormalization()
    plain(x), sync(x)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = plain(x, training=True)
        b = sync(x, training=True)
        la, lb = tf.reduce_sum(a * x), tf.reduce_sum(b * x)
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tape.gradient(lb, x).numpy(), tape.gradient(la, x).numpy(),
                               rtol=1e-4, atol=1e-5)
    del tape
    np.testing.assert_allclose(sync.moving_variance.numpy(), plain.moving_variance.numpy(),
                               rtol=1e-5)
    assert sync.get_config()["synchronized"] is True


def test_only_rank_zero_keeps_the_callbacks_that_write(tmp_path):
    """Ranks other than 0 drop every callback that prints or writes files (two ranks creating
    the same TensorBoard directory race), and keep the rest (the NaN guard, early stopping)."""
    from minitf.distributed import data_parallel
    from minitf.training import config as config_lib
    from minitf.training.builders import build_callbacks
    cfg = config_lib.load_config(os.path.join("configs", "fashion_mnist.yaml"))
    callbacks = build_callbacks(cfg, str(tmp_path))
    other = data_parallel.DataParallel.__new__(data_parallel.DataParallel)
    other.chief = False
    kept = other.callbacks(callbacks)
    names = {type(c).__name__ for c in kept}
    assert "TensorBoard" in {type(c).__name__ for c in callbacks}
    assert names.isdisjoint({"TensorBoard", "CSVLogger", "JSONLinesLogger", "ModelCheckpoint",
                             "PlotCurves", "ProgressDisplay"})
    assert "NaNGuard" in names
