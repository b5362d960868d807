"""Jobs launched with ``mpiexec -n 2`` against one process: train.py gives the same weights and
test loss (float32 rounding apart), resumes exactly, writes from rank 0 only, and a failure or a
mismatch on one rank ends the whole job quickly."""
import csv
import json
import os

import h5py
import numpy as np
import pytest
from mpi_helpers import SCRIPTS, TRAIN, check, mpirun, mpmd, needs_mpi, python

pytestmark = needs_mpi

TINY = ["--config", "fashion_mnist",
        "--set", "data.train_limit=256", "--set", "data.eval_limit=100",
        "--set", "train.batch_size=32", "--set", "train.epochs=2",
        "--set", "train.eval_batch_size=64",
        "--set", "model.kwargs.hidden_units=[16]", "--set", "model.kwargs.dropout=0.0",
        "--set", "data.prefetch=0", "--set", "logging.progress=none",
        "--set", "optimizer.clip.global_norm=1.0"]


def _weights(run_dir):
    ckpts = sorted(f for f in os.listdir(os.path.join(run_dir, "checkpoints"))
                   if f.startswith("ckpt-"))
    out = {}
    with h5py.File(os.path.join(run_dir, "checkpoints", ckpts[-1]), "r") as f:
        f["model_weights"].visititems(
            lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset)
            else None)
        for name in ("optimizer", "metrics", "data"):
            f[f"state/{name}"].visititems(
                lambda key, obj: out.__setitem__(f"{name}/{key}", obj[()])
                if isinstance(obj, h5py.Dataset) else None) if f"state/{name}" in f else None
    return ckpts[-1], out


def _results(run_dir):
    with open(os.path.join(run_dir, "results.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def one_and_two(tmp_path_factory):
    base = tmp_path_factory.mktemp("runs")
    one, two = str(base / "one"), str(base / "two")
    check(python(TRAIN, *TINY, "--run-dir", one))
    proc = check(mpirun(2, TRAIN, *TINY, "--run-dir", two))
    return one, two, proc


def test_two_ranks_train_like_one_process(one_and_two):
    one, two, _ = one_and_two
    name1, w1 = _weights(one)
    name2, w2 = _weights(two)
    assert name1 == name2 == "ckpt-00000014.h5"  # 230 training samples after the 10% split
    assert sorted(w1) == sorted(w2) and any("kernel" in k for k in w1)
    for key in w1:
        if np.asarray(w1[key]).dtype.kind == "f":
            np.testing.assert_allclose(w2[key], w1[key], rtol=1e-4, atol=1e-6, err_msg=key)
    r1, r2 = _results(one), _results(two)
    assert r2["step"] == r1["step"] == 14
    assert r2["test_loss"] == pytest.approx(r1["test_loss"], rel=1e-5)
    assert r2["test_accuracy"] == pytest.approx(r1["test_accuracy"], abs=1e-9)
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):   # global, not one rank's
        assert r2["last_epoch"][key] == pytest.approx(r1["last_epoch"][key], rel=1e-5), key


def test_only_rank_zero_prints_and_writes(one_and_two):
    one, two, proc = one_and_two
    assert sorted(os.listdir(two)) == sorted(os.listdir(one))
    assert sorted(os.listdir(os.path.join(two, "checkpoints"))) == \
        sorted(os.listdir(os.path.join(one, "checkpoints")))
    with open(os.path.join(two, "metrics.csv")) as f:
        rows = list(csv.reader(f))
    assert len(rows) == 1 + 2                              # header + one row per epoch
    assert proc.stdout.count("test: loss") == 1
    assert proc.stdout.count("run directory:") == 1
    assert "2 ranks of 16 samples" in proc.stdout


def test_resume_on_two_ranks_continues_exactly(one_and_two, tmp_path):
    _, two, _ = one_and_two
    run_dir = str(tmp_path / "resumed")
    check(mpirun(2, TRAIN, *TINY, "--run-dir", run_dir, "--max-steps", "5"))
    proc = check(mpirun(2, TRAIN, *TINY, "--run-dir", run_dir, "--resume"))
    assert "resumed from" in proc.stdout and "at step 5" in proc.stdout
    name_a, straight = _weights(two)
    name_b, resumed = _weights(run_dir)
    assert name_a == name_b
    for key in straight:
        np.testing.assert_array_equal(resumed[key], straight[key], err_msg=key)
    assert _results(run_dir)["test_loss"] == _results(two)["test_loss"]


def test_a_one_process_checkpoint_resumes_on_two_ranks(one_and_two, tmp_path):
    """Same global batch, same sample order: the rank count may change at a checkpoint."""
    one, _, _ = one_and_two
    run_dir = str(tmp_path / "switched")
    check(python(TRAIN, *TINY, "--run-dir", run_dir, "--max-steps", "6"))
    check(mpirun(2, TRAIN, *TINY, "--run-dir", run_dir, "--resume"))
    _, straight = _weights(one)
    _, switched = _weights(run_dir)
    for key in straight:
        if np.asarray(straight[key]).dtype.kind == "f":
            np.testing.assert_allclose(switched[key], straight[key], rtol=1e-4, atol=1e-6,
                                       err_msg=key)
    assert _results(run_dir)["test_loss"] == pytest.approx(_results(one)["test_loss"], rel=1e-5)


def test_mixed_precision_accumulation_and_clipping_match_one_process(tmp_path):
    """The allreduce comes before the loss-scale check, the accumulation and the clipping."""
    extra = ["--set", "precision.policy=mixed_float16",
             "--set", "optimizer.gradient_accumulation_steps=2", "--set", "optimizer.clip.norm=0.5",
             "--set", "optimizer.clip.global_norm=null", "--set", "checkpoint.every_epoch=false",
             "--set", "checkpoint.best_metric=null", "--set", "logging.csv=false",
             "--set", "logging.jsonl=false", "--set", "logging.plot=false"]
    one, two = str(tmp_path / "one"), str(tmp_path / "two")
    check(python(TRAIN, *TINY, *extra, "--run-dir", one))
    check(mpirun(2, TRAIN, *TINY, *extra, "--run-dir", two))
    r1, r2 = _results(one), _results(two)
    assert r2["test_loss"] == pytest.approx(r1["test_loss"], rel=1e-4)
    assert r2["last_epoch"]["loss"] == pytest.approx(r1["last_epoch"]["loss"], rel=1e-4)


def test_a_failing_rank_ends_the_job_within_seconds():
    proc, seconds = mpirun(2, os.path.join(SCRIPTS, "fail_on_rank.py"), timeout=60)
    assert proc.returncode != 0
    assert seconds < 30
    assert "injected failure on rank 1" in proc.stderr and "[rank 1/2]" in proc.stderr
    assert "did not stop" not in proc.stdout


def test_mismatched_variables_are_named():
    proc, _ = mpirun(2, os.path.join(SCRIPTS, "mismatch.py"), timeout=60)
    assert proc.returncode != 0
    assert "ranks disagree on the variables" in proc.stderr
    assert "(3, 4)" in proc.stderr and "(3, 5)" in proc.stderr


def test_mismatched_configs_stop_the_job(tmp_path):
    run_dir = str(tmp_path / "run")
    proc, _ = mpmd([TRAIN, *TINY, "--run-dir", run_dir],
                   [TRAIN, *TINY, "--run-dir", run_dir, "--set", "optimizer.learning_rate=0.5"],
                   timeout=60)
    assert proc.returncode != 0
    assert "ranks disagree on the resolved config" in proc.stderr
    assert "learning_rate" in proc.stderr


def test_a_batch_that_does_not_split_is_a_config_error(tmp_path):
    proc, _ = mpirun(2, TRAIN, *TINY, "--run-dir", str(tmp_path / "r"),
                     "--set", "train.batch_size=33", timeout=60)
    assert proc.returncode == 2
    assert "train.batch_size: 33 is the global batch and must divide by the 2 ranks" \
        in proc.stderr


def test_collectives_give_numpy_values():
    proc = check(mpirun(2, os.path.join(SCRIPTS, "collectives.py"), timeout=60))
    assert proc.stdout.count("OK rank") == 2


def test_custom_loop_matches_one_process():
    proc = check(mpirun(2, os.path.join(SCRIPTS, "custom_loop.py")))
    assert "OK rank 0 of 2" in proc.stdout and "OK rank 1 of 2" in proc.stdout


def test_dropout_on_two_ranks_drops_what_one_process_drops(tmp_path):
    """Each rank draws the global batch's dropout mask and keeps its own rows, so with dropout
    on, 2 ranks still train like one process (float32 rounding apart)."""
    dropout = [*TINY, "--set", "model.kwargs.dropout=0.5", "--set", "train.epochs=1"]
    one, two = str(tmp_path / "one"), str(tmp_path / "two")
    check(python(TRAIN, *dropout, "--run-dir", one))
    check(mpirun(2, TRAIN, *dropout, "--run-dir", two))
    (name1, w1), (name2, w2) = _weights(one), _weights(two)
    assert name1 == name2
    for key in w1:
        if "kernel" in key:
            np.testing.assert_allclose(w2[key], w1[key], rtol=1e-4, atol=1e-6, err_msg=key)
    assert _results(two)["test_loss"] == pytest.approx(_results(one)["test_loss"], rel=1e-5)


def test_horovod_arguments_constants_and_callbacks():
    proc = check(mpirun(2, os.path.join(SCRIPTS, "horovod_api.py"), timeout=90))
    assert proc.stdout.count("OK rank") == 2
