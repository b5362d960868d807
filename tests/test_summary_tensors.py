"""``tf.summary.text`` / ``audio`` / ``write``, ``record_if``, ``should_record_summaries``,
``create_noop_writer`` and ``flush``, read back from the event files. The expected records
(dtypes, shapes, WAV bytes, plugin metadata) are what TensorFlow 2.21 with TensorBoard wrote
for the same calls."""
import glob

import numpy as np
import pytest

import minitf as tf
from tests.tb_events import read_events


def values(directory):
    """``[(step, Summary.Value)]`` of every event file in ``directory``."""
    out = []
    for path in sorted(glob.glob(str(directory / "events.out.tfevents.*"))):
        for event in read_events(path):
            out += [(event.step, v) for v in event.summary.value]
    return out


def test_text_keeps_shape_and_utf8(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=3):
        assert tf.summary.text("notes", tf.constant([["a", "bc"], ["d", "é"]]))
        assert tf.summary.text("one", "hello")
    (s1, notes), (s2, one) = values(tmp_path)
    assert (s1, s2) == (3, 3)
    assert notes.tag == "notes" and notes.metadata.plugin_data.plugin_name == "text"
    assert notes.tensor.dtype == 7 and [d.size for d in notes.tensor.tensor_shape.dim] == [2, 2]
    assert list(notes.tensor.string_val) == [b"a", b"bc", b"d", "é".encode()]
    assert list(one.tensor.string_val) == [b"hello"] and not one.tensor.tensor_shape.dim
    with writer.as_default(step=1), pytest.raises(TypeError, match="text.*string tensor.*float32"):
        tf.summary.text("bad", tf.constant([1.0]))


def test_audio_writes_tf_wav_bytes(tmp_path):
    clip = np.array([[[-1.2, 0.5], [-0.6, 0.25], [0.3, -0.0001], [1.0, 0.99999], [2.0, -0.5]]],
                    np.float32)
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=4):
        assert tf.summary.audio("snd", np.concatenate([clip, clip * 0.5]), 16000, max_outputs=1)
    [(step, value)] = values(tmp_path)
    assert step == 4 and value.tag == "snd"
    assert value.metadata.SerializeToString().hex() == "0a0b0a05617564696f1202100b"
    assert [d.size for d in value.tensor.tensor_shape.dim] == [1, 2]
    wav, label = value.tensor.string_val
    assert label == b""
    assert wav.hex() == ("524946463800000057415645666d74201000000001000200803e000000fa0000040010"
                         "0064617461140000000080004033b300206626fdffff7fff7fff7f00c0")
    with writer.as_default(step=1), pytest.raises(ValueError, match=r"audio.*\[k, t, c\]"):
        tf.summary.audio("bad", np.zeros((3, 4), np.float32), 8000)


def test_write_raw_tensors_with_and_without_metadata(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=4):
        assert tf.summary.write("raw", tf.constant([[1.5, 2.0]], tf.float64))
        assert tf.summary.write("flags", tf.constant([True, False]), step=9)
        from tensorboardX.proto import summary_pb2
        described = summary_pb2.SummaryMetadata(summary_description="counts")
        assert tf.summary.write("counts", tf.constant([1, 2], tf.int64), metadata=described)
    got = {v.tag: (step, v) for step, v in values(tmp_path)}
    step, raw = got["raw"]
    assert step == 4 and raw.tensor.dtype == 2
    assert raw.tensor.tensor_content.hex() == "000000000000f83f0000000000000040"
    step, flags = got["flags"]
    assert step == 9 and flags.tensor.dtype == 10 and flags.tensor.tensor_content.hex() == "0100"
    counts = got["counts"][1]
    assert counts.metadata.summary_description == "counts" and counts.tensor.dtype == 9
    np.testing.assert_array_equal(np.frombuffer(counts.tensor.tensor_content, "<i8"), [1, 2])


def test_record_if_and_should_record(tmp_path):
    writer = tf.summary.create_file_writer(str(tmp_path))
    assert tf.summary.should_record_summaries() is False        # no default writer
    with writer.as_default(step=0):
        assert tf.summary.should_record_summaries() is True
        with tf.summary.record_if(False):
            assert tf.summary.should_record_summaries() is False
            assert tf.summary.scalar("off", 1.0) is False
        with tf.summary.record_if(lambda: True):
            assert tf.summary.scalar("on", 2.0) is True
        with tf.summary.record_if(tf.constant(False)):
            assert tf.summary.scalar("off_tensor", 3.0) is False
    assert sorted(v.tag for _, v in values(tmp_path)) == ["on"]


@pytest.mark.parametrize("odd", [lambda step: int(step.numpy()) % 2 == 1,
                                 lambda step: tf.equal(step % 2, 1)], ids=["python", "tensor"])
def test_record_if_callable_is_read_on_every_call_of_a_function(tmp_path, odd):
    # TF's pattern: record every other step inside a traced step function.
    step = tf.Variable(0, dtype=tf.int64)
    writer = tf.summary.create_file_writer(str(tmp_path))

    @tf.function
    def train_step(x):
        tf.summary.scalar("x", x, step=step)
        step.assign_add(1)

    with writer.as_default(), tf.summary.record_if(lambda: odd(step)):
        for k in range(5):
            train_step(tf.constant(float(k)))
    got = sorted((s, v.simple_value) for s, v in values(tmp_path))
    assert got == [(1, 1.0), (3, 3.0)]


def test_noop_writer_and_flush(tmp_path):
    noop = tf.summary.create_noop_writer()
    with noop.as_default(step=1):
        assert tf.summary.should_record_summaries() is False
        assert tf.summary.scalar("z", 1.0) is False
    writer = tf.summary.create_file_writer(str(tmp_path))
    writer.init()
    writer.set_as_default(step=2)
    try:
        tf.summary.scalar("y", 5.0)
        tf.summary.flush()
        assert [(s, v.simple_value) for s, v in values(tmp_path)] == [(2, 5.0)]
    finally:
        from minitf import summary
        summary._DEFAULT.pop()
