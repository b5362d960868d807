"""Triggers and callbacks on a stand-in runner (no model needed)."""
import csv
import json
import math
import os

import pytest

from minitf.training import callbacks as cb
from minitf.training.triggers import AnyTrigger, IntervalTrigger, get_trigger


class FakeIterator:
    def __init__(self, n=10):
        self.n, self.epoch, self.batch_index = n, 0, 0

    def __len__(self):
        return self.n


class FakeRunner:
    """The attributes callbacks read, and a save_checkpoint that records what it wrote."""

    def __init__(self):
        self.step, self.epochs, self.epoch_end_pending = 0, 3, False
        self.train_iter = FakeIterator()
        self.history, self.saved, self.stop_reason = [], [], None
        self.epoch_seconds, self.epoch_samples = 1.0, 100

    @property
    def epoch(self):
        return self.train_iter.epoch

    def position(self):
        return (self.step, self.epoch_end_pending)

    def learning_rate(self):
        return 0.5

    def request_stop(self, reason):
        self.stop_reason = reason

    def save_checkpoint(self, path):
        with open(path, "w") as fh:
            fh.write(str(self.step))
        self.saved.append(os.path.basename(path))


def test_interval_and_any_triggers():
    r = FakeRunner()
    every3 = IntervalTrigger(3, "step")
    each_epoch = IntervalTrigger(1, "epoch")
    fired = []
    for step in range(1, 8):
        r.step = step
        fired.append(every3("step", r))
    assert fired == [False, False, True, False, False, True, False]
    assert not every3("epoch", r)
    r.train_iter.epoch = 2
    assert each_epoch("epoch", r) and not each_epoch("step", r)
    assert IntervalTrigger(2, "epoch")("epoch", r)
    both = AnyTrigger(every3, (1, "epoch"))
    r.step = 4
    assert both("epoch", r) and not both("step", r)
    assert not get_trigger(None)("step", r)
    with pytest.raises(ValueError):
        IntervalTrigger(0, "step")
    with pytest.raises(ValueError):
        IntervalTrigger(1, "iteration")


def test_nan_guard_names_the_step():
    r = FakeRunner()
    r.step = 17
    guard = cb.NaNGuard()
    guard(r, "step", {"batch_loss": 0.3, "epoch": 2})
    with pytest.raises(cb.NonFiniteLossError, match=r"\(nan\) at step 17 \(epoch 2\)"):
        guard(r, "step", {"batch_loss": math.nan, "epoch": 2})
    with pytest.raises(cb.NonFiniteLossError, match="inf"):
        guard(r, "step", {"batch_loss": math.inf, "epoch": 2})


def _epoch_logs(epoch, step, loss=1.0):
    return {"epoch": epoch, "step": step, "loss": loss, "accuracy": 0.5, "val_loss": loss,
            "val_accuracy": 0.6, "lr": 0.1, "epoch_time": 1.0, "samples_per_sec": 10.0}


def test_csv_logger_one_header_and_resume_truncation(tmp_path):
    path = str(tmp_path / "metrics.csv")
    r = FakeRunner()
    logger = cb.CSVLogger(path)
    logger(r, "epoch", _epoch_logs(1, 10))
    state = logger.state_dict()  # a checkpoint taken here
    logger(r, "epoch", _epoch_logs(2, 20, loss=float("nan")))  # written, then the run dies
    resumed = cb.CSVLogger(path)
    resumed.load_state_dict(state)
    resumed(r, "epoch", _epoch_logs(2, 20, loss=0.5))
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == list(cb.CSV_COLUMNS)
    assert [row[0] for row in rows[1:]] == ["1", "2"]
    assert rows[2][2] == "0.5"


def test_jsonl_logger_records_and_nonfinite_as_null(tmp_path):
    path = str(tmp_path / "metrics.jsonl")
    r = FakeRunner()
    logger = cb.JSONLinesLogger(path, trigger=AnyTrigger((2, "step"), (1, "epoch")))
    logger(r, "step", {"step": 2, "loss": float("inf")})
    logger(r, "epoch", _epoch_logs(1, 10))
    with open(path) as fh:
        records = [json.loads(line) for line in fh]
    assert records[0]["event"] == "step" and records[0]["loss"] is None
    assert records[1]["event"] == "epoch" and records[1]["val_accuracy"] == 0.6


def test_learning_rate_monitor_fills_logs():
    logs = {}
    cb.LearningRateMonitor()(FakeRunner(), "epoch", logs)
    assert logs["lr"] == 0.5


def test_early_stopping_patience_and_state():
    r = FakeRunner()
    es = cb.EarlyStopping("val_loss", patience=2)
    for epoch, value in enumerate([1.0, 0.8, 0.9], start=1):
        es(r, "epoch", {"epoch": epoch, "val_loss": value})
    assert r.stop_reason is None and es.wait == 1
    state = es.state_dict()
    again = cb.EarlyStopping("val_loss", patience=2)
    again.load_state_dict(state)
    again(r, "epoch", {"epoch": 4, "val_loss": 0.85})
    assert "did not improve for 2 epochs" in r.stop_reason and "epoch 2" in r.stop_reason
    assert cb.EarlyStopping("val_accuracy").mode == "max"


def test_model_checkpoint_keep_last_best_and_final(tmp_path):
    d = str(tmp_path / "ckpts")
    r = FakeRunner()
    mc = cb.ModelCheckpoint(d, trigger=cb.step_trigger(2, every_epoch=True), keep_last=2,
                            best_metric="val_accuracy")
    mc.on_run_begin(r)
    for step in range(1, 6):
        r.step = step
        if mc.trigger("step", r):
            mc(r, "step", {})
    r.train_iter.epoch = 1
    mc(r, "epoch", {"val_accuracy": 0.7})   # step 5: regular + best
    r.step = 7
    mc(r, "epoch", {"val_accuracy": 0.6})   # not better: regular only
    assert r.saved == ["ckpt-00000002.h5", "ckpt-00000004.h5", "ckpt-00000005.h5", "best.h5",
                       "ckpt-00000007.h5"]
    assert sorted(os.listdir(d)) == ["best.h5", "ckpt-00000005.h5", "ckpt-00000007.h5"]
    assert mc.state_dict() == {"best": 0.7, "best_step": 5}
    mc.on_run_end(r)                      # nothing new since step 7
    assert len(r.saved) == 5
    r.step = 8
    mc.on_run_end(r)                      # a final save of the newer state
    assert r.saved[-1] == "ckpt-00000008.h5"


def test_progress_lines_when_not_a_terminal(capsys):
    r = FakeRunner()
    progress = cb.ProgressDisplay("line")
    progress.on_run_epoch_begin(r)
    progress(r, "step", {"loss": 1.0, "accuracy": 0.5})
    progress(r, "epoch", _epoch_logs(1, 10))
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    assert out[0].startswith("epoch 1/3  step 10  loss 1.0000  accuracy 0.5000")
    assert "samples/s" in out[0] and "lr 0.1" in out[0]
