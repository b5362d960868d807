"""``tf.summary`` in a custom loop (tensorflow.org "TensorBoard" guide's pattern:
``create_file_writer`` + ``with writer.as_default(): tf.summary.scalar(..., step=epoch)``), read
back from the event files."""
import numpy as np
import pytest

import minitf as tf
from tests.tb_events import read_events, read_scalars


def test_scalars_written_under_as_default_read_back(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path / "train"))
    losses = [0.9, 0.5, 0.25]
    assert tf.summary.scalar("loss", 1.0, step=0) is False        # no default writer
    with writer.as_default():
        for epoch, loss in enumerate(losses):
            assert tf.summary.scalar("loss", tf.constant(loss), step=epoch)
        tf.summary.histogram("weights", tf.constant(np.arange(6.0)), step=2)
    got = read_scalars(str(tmp_path / "train"))
    assert [s for s, _ in got["loss"]] == [0, 1, 2]
    np.testing.assert_allclose([v for _, v in got["loss"]], losses, rtol=1e-6)
    files = list((tmp_path / "train").glob("events.out.tfevents.*"))
    histograms = [v for f in files for e in read_events(str(f)) for v in e.summary.value
                  if v.HasField("histo")]
    assert len(histograms) == 1 and histograms[0].histo.num == 6
    assert histograms[0].histo.sum == pytest.approx(15.0)


def test_default_step_and_missing_step(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=7):
        tf.summary.scalar("acc", 0.5)
    assert read_scalars(str(tmp_path))["acc"] == [(7, 0.5)]
    with writer.as_default():
        with pytest.raises(ValueError, match="no step"):
            tf.summary.scalar("acc", 0.5)


def test_writes_inside_a_function_happen_on_every_call(tmp_path):
    # tensorflow.org tf.summary API page: a summary op inside tf.function writes on each call.
    writer = tf.summary.create_file_writer(str(tmp_path))

    @tf.function
    def log(step, value):
        with writer.as_default():
            tf.summary.scalar("v", value * 2, step=step)

    for i in range(4):
        log(tf.constant(i, tf.int64), tf.constant(float(i)))
    writer.flush()
    assert read_scalars(str(tmp_path))["v"] == [(0, 0.0), (1, 2.0), (2, 4.0), (3, 6.0)]
    assert log.experimental_get_tracing_count() == 1


def test_experimental_step_and_event_file_order(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    step = tf.Variable(0, dtype=tf.int64)
    tf.summary.experimental.set_step(step)
    try:
        assert tf.summary.experimental.get_step() is step
        for i in range(12):          # a file per block: names must sort in writing order
            step.assign(i)
            with writer.as_default():
                tf.summary.scalar("loss", 1.0 / (i + 1))
    finally:
        tf.summary.experimental.set_step(None)
    files = sorted(str(p) for p in tmp_path.glob("events.out.tfevents.*"))  # TensorBoard's order
    steps = [e.step for f in files for e in read_events(f) for v in e.summary.value
             if v.tag == "loss"]
    assert steps == list(range(12))
