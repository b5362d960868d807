"""train.py end to end, in subprocesses: a short training resumed, exact resume (mid-epoch and
mid-accumulation-window, float32 and mixed_float16), the NaN exit, eval-only and CLI errors."""
import csv
import json
import os
import subprocess
import sys

import h5py
import matplotlib.image
import numpy as np
import pytest
import yaml

import minitf
from minitf.training import checkpoint as ck

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = os.path.join(ROOT, "train.py")

needs_rng_state = pytest.mark.skipif(minitf.get_backend() == "cupy",
                                     reason="the cupy generator state cannot be checkpointed")


def run(*args, expect=0):
    proc = subprocess.run([sys.executable, TRAIN, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == expect, (
        f"exit {proc.returncode} (expected {expect}) for {args}\n--- stdout\n{proc.stdout}\n"
        f"--- stderr\n{proc.stderr}")
    return proc


def sets(*pairs):
    out = []
    for pair in pairs:
        out += ["--set", pair]
    return out


def _h5_tree(group):
    """Every dataset and attribute under a group, path -> (dtype, bytes) or plain value."""
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            value = obj[()]
            out[name] = (np.asarray(value).dtype.str, np.asarray(value).tobytes())
        for key, value in obj.attrs.items():
            out[f"{name}@{key}"] = value.tobytes() if isinstance(value, np.ndarray) else value

    visit("", group)
    group.visititems(visit)
    return out


def _exact_parts(path):
    """What must be bit-identical between a straight and a resumed run."""
    with h5py.File(path, "r") as f:
        parts = {"weights": _h5_tree(f["model_weights"])}
        for key in ("optimizer", "rng", "data", "metrics"):
            parts[key] = _h5_tree(f["state"][key])
        parts["step"] = int(f.attrs["step"])
    return parts


def _csv_rows(run_dir):
    with open(os.path.join(run_dir, "metrics.csv"), newline="") as fh:
        return list(csv.reader(fh))


TINY_MLP = sets("data.validation_split=0",
                "data.train_limit=384", "data.eval_limit=200", "data.test_at_end=false",
                "train.batch_size=32", "train.epochs=2", "train.eval_batch_size=100",
                "model.kwargs={hidden_units: [16], dropout: 0.25}",
                "optimizer.gradient_accumulation_steps=3", "optimizer.schedule.name=cosine",
                "optimizer.clip.global_norm=1.0",
                "optimizer.param_groups=[{prefix: hidden, learning_rate: 3e-3}]",
                "checkpoint.every_epoch=false", "logging.plot=false", "logging.every_steps=5")
TINY_CNN = sets("data.validation_split=0", "model.name=cnn",
                "model.kwargs={filters: [4, 4], dense_units: 8, dropout: 0.25}",
                "precision.policy=mixed_float16", "precision.dynamic_growth_steps=4",
                "data.train_limit=128", "data.eval_limit=64", "data.test_at_end=false",
                "train.batch_size=16", "train.epochs=2", "train.eval_batch_size=64",
                "optimizer.gradient_accumulation_steps=2", "checkpoint.every_epoch=false",
                "logging.plot=false")


@needs_rng_state
@pytest.mark.parametrize("case, stop_at, total", [
    ("mlp_float32", 17, 24),    # epoch 2, batch 5 of 12; 17 = 5*3 + 2: inside a window of 3
    ("cnn_mixed_float16", 11, 16),  # epoch 2, batch 3 of 8; odd: inside a window of 2
])
def test_exact_resume_matches_an_uninterrupted_run(tmp_path, case, stop_at, total):
    extra = TINY_MLP if case.startswith("mlp") else TINY_CNN
    straight, split = str(tmp_path / "straight"), str(tmp_path / "split")
    run("--run-dir", straight, *extra)
    first = run("--run-dir", split, *extra, "--max-steps", str(stop_at))
    assert f"reached max_steps={stop_at}" in first.stdout
    # A new process; the config comes from the checkpoint.
    second = run("--run-dir", split, "--resume")
    assert "resumed from" in second.stdout and f"at step {stop_at}" in second.stdout

    final = ck.checkpoint_name(total)
    a = _exact_parts(os.path.join(straight, "checkpoints", final))
    b = _exact_parts(os.path.join(split, "checkpoints", final))
    assert a["step"] == b["step"] == total
    for part in ("weights", "optimizer", "rng", "data", "metrics"):
        assert a[part].keys() == b[part].keys(), part
        diff = [k for k in a[part] if a[part][k] != b[part][k]]
        assert not diff, f"{part} differs at {diff[:5]}"
    # Same per-epoch numbers (timings aside), one header, no duplicated rows.
    ra, rb = _csv_rows(straight), _csv_rows(split)
    assert ra[0] == rb[0] and len(ra) == len(rb) == 3
    assert [r[:7] for r in ra] == [r[:7] for r in rb]


@needs_rng_state
def test_short_training_resumed_end_to_end(tmp_path):
    run_dir = str(tmp_path / "run")
    args = ["--config", "fashion_mnist", "--run-dir", run_dir,
            *sets("data.train_limit=2000", "data.eval_limit=1000", "train.batch_size=32",
                  "train.epochs=4", "model.kwargs={hidden_units: [64], dropout: 0.1}",
                  "checkpoint.keep_last=2", "checkpoint.every_steps=50",
                  "logging.every_steps=20")]
    first = run(*args, "--max-steps", "100")
    assert "epoch 1/4" in first.stdout  # one summary line per epoch without a terminal
    assert os.path.exists(os.path.join(run_dir, "results.json"))
    assert matplotlib.image.imread(os.path.join(run_dir, "curves.png")).shape[:2] == (400, 1400)
    refused = run(*args, expect=2)  # a second fresh start in the same directory
    assert "already holds a run" in refused.stderr and "--resume" in refused.stderr
    run(*args, "--resume")

    with open(os.path.join(run_dir, "config.yaml")) as fh:
        cfg = yaml.safe_load(fh)
    assert cfg["data"]["train_limit"] == 2000 and cfg["optimizer"]["learning_rate"] == 1e-3
    rows = _csv_rows(run_dir)
    assert rows[0][:4] == ["epoch", "step", "loss", "accuracy"]
    assert [r[0] for r in rows[1:]] == ["1", "2", "3", "4"]  # one header, no duplicates
    # 10% of the 2000 samples are held out for validation: 1800 / 32 = 56 steps per epoch
    assert [int(r[1]) for r in rows[1:]] == [56, 112, 168, 224]
    with open(os.path.join(run_dir, "metrics.jsonl")) as fh:
        records = [json.loads(line) for line in fh]
    steps = [r["step"] for r in records if r["event"] == "step"]
    assert steps == list(range(20, 225, 20))
    assert all("lr" in r for r in records)
    lrs = [r["lr"] for r in records if r["event"] == "epoch"]
    assert lrs == sorted(lrs, reverse=True) and lrs[-1] < 1e-4  # cosine decay over the run

    ckpts = os.listdir(os.path.join(run_dir, "checkpoints"))
    assert sorted(ckpts) == ["best.h5", "ckpt-00000200.h5", "ckpt-00000224.h5"]
    with open(os.path.join(run_dir, "results.json")) as fh:
        results = json.load(fh)
    assert results["step"] == 224 and results["epochs_completed"] == 4
    assert results["test_accuracy"] > 0.6  # chance is 0.1
    assert float(rows[-1][5]) > 0.6          # val_accuracy of the last epoch

    final = os.path.join(run_dir, "checkpoints", "ckpt-00000224.h5")
    out = run("--eval-only", "--checkpoint", final)
    evaluated = json.loads(out.stdout.strip().splitlines()[-1])
    assert evaluated["test_accuracy"] == pytest.approx(results["test_accuracy"], abs=1e-6)
    assert evaluated["eval_split"] == "validation"


def test_non_finite_loss_exits_non_zero_without_saving_it(tmp_path):
    run_dir = str(tmp_path / "nan")
    proc = run("--run-dir", run_dir, *sets(
        "data.train_limit=256", "train.batch_size=32", "model.kwargs={hidden_units: [8]}",
        "optimizer.learning_rate=1e30", "checkpoint.every_steps=1", "logging.plot=false"),
        expect=3)
    assert "non-finite loss (nan) at step" in proc.stderr
    assert "Traceback" not in proc.stderr
    step = int(proc.stderr.split("at step ")[1].split()[0])
    saved = [s for s, _ in ck.list_checkpoints(os.path.join(run_dir, "checkpoints"))]
    assert saved and max(saved) == step - 1


def test_config_errors_exit_2_with_a_suggestion(tmp_path):
    proc = run("--config", "fashion_mnist", "--set", "optimizer.learnig_rate=0.1", expect=2)
    assert "did you mean 'optimizer.learning_rate'?" in proc.stderr
    proc = run("--set", "train.batch_size=0", expect=2)
    assert "train.batch_size = 0" in proc.stderr and "an integer >= 1" in proc.stderr
    proc = run("--set", "model.name=mlpp", expect=2)
    assert "did you mean 'mlp'?" in proc.stderr
    proc = run("--set", "model.kwargs.hiden_units=[3]", expect=2)
    assert "did you mean 'hidden_units'?" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_checkpoints_are_reported_by_name(tmp_path):
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"\x00" * 4096)
    proc = run("--resume", str(junk), expect=1)
    assert f"{junk}: not a readable HDF5 file" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run("--run-dir", str(tmp_path / "empty"), "--resume", expect=2)
    assert "no checkpoint to resume" in proc.stderr


def test_help_documents_the_options_and_config():
    out = run("--help").stdout
    for text in ("--config", "--set", "--resume", "--eval-only", "--checkpoint", "--run-dir",
                 "--max-steps", "optimizer.gradient_accumulation_steps", "checkpoint.keep_last",
                 "exit codes"):
        assert text in out
