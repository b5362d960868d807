"""A training step does not read values back to the host unless a callback asks: step logs are
read lazily, and on a GPU the NaN guard checks at log records (the running mean loss) instead of
every step. Syncs are counted on the strict backend."""
import math

import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import keras
from datasets import BatchIterator
from minitf.training import callbacks as cb
from minitf.training.builders import build_callbacks
from minitf.training.config import load_config
from minitf.training.runner import Runner
from models import build_model


@pytest.fixture
def strict_backend():
    previous = B.get_backend()
    B.set_backend("strict")
    try:
        yield
    finally:
        B.set_backend(previous)


def _runner(callbacks, x=None):
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    if x is None:
        x = rng.integers(0, 256, (64, 6, 6)).astype(np.float32) / 255.0
    y = rng.integers(0, 2, 64).astype(np.uint8)
    model = build_model("mlp", hidden_units=[8], num_classes=2)
    model(tf.zeros((1, 6, 6)), training=False)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return Runner(model, keras.optimizers.Adam(1e-2), loss, BatchIterator(x, y, 16, seed=1),
                  epochs=1, callbacks=callbacks, use_function=False)


class _Record(cb.Callback):
    def __init__(self, trigger):
        self.trigger, self.seen = trigger, []

    def __call__(self, runner, event, logs):
        self.seen.append((event, logs["loss"]))


def test_steps_nobody_logs_read_nothing_back(strict_backend, monkeypatch):
    monkeypatch.setattr(B, "host_syncs_stall", lambda: True)   # as on a GPU
    record = _Record(cb.IntervalTrigger(2, "step"))
    runner = _runner([record])
    before = B.sync_count()
    runner.train()
    # 4 steps, logged at steps 2 and 4 (one running-mean read each), and the epoch's end
    # (loss and accuracy): nothing else, whatever the number of steps.
    assert [e for e, _ in record.seen] == ["step", "step"]
    assert B.sync_count() - before == 2 + 2


def test_step_logs_read_each_value_once_and_accept_new_keys():
    reads = []

    class Metric:
        def __init__(self, value):
            self.value = value

        def result(self):
            reads.append(self.value)
            return tf.constant(self.value)

    logs = cb.StepLogs(3, 1, tf.constant(0.5), Metric(0.25), Metric(0.75))
    assert reads == []
    assert logs["loss"] == 0.25 and logs["loss"] == 0.25 and reads == [0.25]
    logs["lr"] = 0.1
    assert dict(logs) == {"step": 3, "epoch": 1, "batch_loss": 0.5, "loss": 0.25,
                          "accuracy": 0.75, "lr": 0.1}
    assert reads == [0.25, 0.75]


def test_a_sparse_nan_guard_stops_at_the_next_record_via_the_running_mean():
    x = np.ones((64, 6, 6), np.float32)
    x[20] = np.nan                                        # batch 2 of 4 (no shuffle effect
    guard = cb.NaNGuard(cb.IntervalTrigger(3, "step"))    # on the running mean)
    runner = _runner([guard], x=x)
    with pytest.raises(cb.NonFiniteLossError) as err:
        runner.train()
    assert runner.step == 3 and "step 3" in str(err.value)
    assert math.isnan(float(runner.train_loss.result()))


def test_the_nan_guard_reads_every_step_unless_host_syncs_stall(monkeypatch, tmp_path):
    cfg = load_config(None, ["logging.every_steps=7", "logging.plot=false"])
    guard = build_callbacks(cfg, str(tmp_path))[0]
    assert isinstance(guard, cb.NaNGuard) and guard.trigger is cb.EVERY_STEP
    monkeypatch.setattr(B, "_name", "cupy")               # selection only: nothing runs
    assert B.host_syncs_stall()
    guard = build_callbacks(cfg, str(tmp_path))[0]
    assert guard.trigger is not cb.EVERY_STEP
    assert [guard.trigger("step", type("R", (), {"step": s})()) for s in (6, 7)] == [False, True]


def test_device_batches_follow_the_host_iterator_exactly(strict_backend):
    from minitf.training.device_data import DeviceBatches
    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, (50, 3, 3), dtype=np.uint8)
    y = rng.integers(0, 10, 50).astype(np.uint8)
    scale = (lambda b: b.astype(np.float32) * np.float32(1 / 255))
    host = BatchIterator(x, y, 16, seed=7, normalize=scale)
    device = DeviceBatches(x, y, 16, seed=7, normalize=scale)
    assert len(device) == len(host) == 4
    for _ in range(6):                     # into the second epoch
        (hx, hy), (dx, dy) = next(host), next(device)
        assert type(dx) is B.xp.ndarray and type(dy) is B.xp.ndarray
        np.testing.assert_array_equal(B.to_numpy(dx), hx)
        np.testing.assert_array_equal(B.to_numpy(dy), hy)
    assert (device.epoch, device.batch_index) == (host.epoch, host.batch_index) == (1, 2)
    resumed = DeviceBatches(x, y, 16, seed=7, normalize=scale)
    resumed.load_state_dict(host.state_dict())
    rest = [B.to_numpy(b) for b, _ in resumed.epoch_batches()]
    expected = [b for b, _ in host.epoch_batches()]
    assert len(rest) == len(expected) == 2
    for a, b in zip(rest, expected):
        np.testing.assert_array_equal(a, b)


def test_make_iterators_keeps_the_data_on_the_device_when_syncs_stall(strict_backend, monkeypatch):
    from minitf.training.builders import Data, Normalizer, make_iterators
    from minitf.training.device_data import DeviceBatches
    x = np.zeros((20, 2, 2), np.uint8)
    y = np.zeros(20, np.uint8)
    data = Data((x, y), (x, y), None, (x, y), Normalizer("scale", x))
    cfg = load_config(None, ["train.batch_size=4", "data.prefetch=0"])
    assert not any(isinstance(it, DeviceBatches) for it in make_iterators(cfg, data))
    monkeypatch.setattr(B, "host_syncs_stall", lambda: True)
    train, evaluation = make_iterators(cfg, data)
    assert isinstance(train, DeviceBatches) and isinstance(evaluation, DeviceBatches)
    assert len(train) == 5 and train.seed == cfg["seed"]
