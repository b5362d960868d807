"""train.py writes TensorBoard scalars by default (keras.callbacks.TensorBoard run by the
runner); read back from the event files, they equal metrics.csv, and a resumed run hides what
the interrupted one wrote after its checkpoint."""
import csv
import os
import subprocess
import sys

import pytest

import minitf
from minitf.training import checkpoint as ck
from tests.tb_events import read_scalars

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(ROOT, "train.py")

TINY = ["--set", "data.train_limit=256", "--set", "data.eval_limit=100",
        "--set", "data.test_at_end=false", "--set", "train.batch_size=32",
        "--set", "train.epochs=3", "--set", "model.kwargs={hidden_units: [8]}",
        "--set", "logging.plot=false", "--set", "optimizer.schedule.name=cosine"]


def run(*args):
    proc = subprocess.run([sys.executable, TRAIN, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def _csv(run_dir):
    with open(os.path.join(run_dir, "metrics.csv"), newline="") as fh:
        return list(csv.DictReader(fh))


def _check_against_csv(run_dir):
    rows = _csv(run_dir)
    train = read_scalars(os.path.join(run_dir, "tensorboard", "train"))
    val = read_scalars(os.path.join(run_dir, "tensorboard", "validation"))
    assert [s for s, _ in train["epoch_loss"]] == [0, 1, 2]  # Keras' 0-based epoch index
    for tag, rows_key, scalars in [("epoch_loss", "loss", train),
                                   ("epoch_accuracy", "accuracy", train),
                                   ("epoch_lr", "lr", train),
                                   ("epoch_loss", "val_loss", val),
                                   ("epoch_accuracy", "val_accuracy", val)]:
        got = [v for _, v in scalars[tag]]
        want = [float(r[rows_key]) for r in rows]
        assert got == pytest.approx(want, rel=1e-6), (tag, rows_key)
    rates = [v for _, v in train["epoch_samples_per_sec"]]
    assert len(rates) == 3 and all(r > 0 for r in rates)
    # the cosine schedule decays the learning rate from epoch to epoch
    lrs = [v for _, v in train["epoch_lr"]]
    assert lrs[0] > lrs[1] > lrs[2]


def test_train_writes_tensorboard_scalars_by_default(tmp_path):
    run_dir = str(tmp_path / "run")
    run("--run-dir", run_dir, *TINY)
    _check_against_csv(run_dir)
    # --overwrite starts afresh: the old event files go with the old logs
    run("--run-dir", run_dir, *TINY, "--set", "optimizer.learning_rate=0.01", "--overwrite")
    _check_against_csv(run_dir)
    assert len(os.listdir(os.path.join(run_dir, "tensorboard", "train"))) == 1


@pytest.mark.skipif(minitf.get_backend() != "numpy",
                    reason="the cupy generator state cannot be checkpointed")
def test_resumed_run_purges_scalars_written_after_the_checkpoint(tmp_path):
    run_dir = str(tmp_path / "run")
    # 8 steps per epoch; a complete run, then a resume from step 12 (inside epoch 2), as after
    # a crash that lost everything after that checkpoint: epochs 2 and 3 are written again.
    run("--run-dir", run_dir, *TINY, "--set", "checkpoint.every_steps=12")
    first = read_scalars(os.path.join(run_dir, "tensorboard", "train"))["epoch_loss"]
    run("--run-dir", run_dir, "--resume",
        os.path.join(run_dir, "checkpoints", ck.checkpoint_name(12)))
    _check_against_csv(run_dir)
    again = read_scalars(os.path.join(run_dir, "tensorboard", "train"))["epoch_loss"]
    assert again[0] == first[0] and len(again) == 3
    files = os.listdir(os.path.join(run_dir, "tensorboard", "train"))
    assert len(files) == 2  # one event file per process


def test_tensorboard_can_be_switched_off(tmp_path):
    run_dir = str(tmp_path / "run")
    run("--run-dir", run_dir, *TINY, "--set", "train.epochs=1",
        "--set", "logging.tensorboard=false")
    assert not os.path.exists(os.path.join(run_dir, "tensorboard"))
