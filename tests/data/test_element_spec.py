"""``element_spec`` static shapes (None where TF's are unknown) and ``Tensor.set_shape``.

Every expected spec below was printed by TensorFlow 2.21 for the same pipeline, except in
``test_map_spec_falls_back_when_the_probe_fails`` (minitf's documented fallback rule)."""
import numpy as np
import pytest

import minitf as tf
from minitf.data import Dataset

F32, F64, I32, I64 = tf.float32, tf.float64, tf.int32, tf.int64


def spec(shape, dtype=F32):
    return tf.TensorSpec(shape, dtype)


@pytest.fixture
def rows():
    return Dataset.from_tensor_slices(np.zeros((100, 3), np.float32))


# --- Tensor.set_shape --------------------------------------------------------------------------

def test_set_shape_compatible_returns_none():
    x = tf.zeros([32, 7, 5])[:, :6, :]
    assert x.set_shape([None, 6, None]) is None
    assert x.set_shape((32, None, 5)) is None
    assert x.set_shape(tf.TensorShape([None, 6, 5])) is None
    assert x.set_shape(None) is None and x.set_shape(tf.TensorShape(None)) is None
    assert x.shape == (32, 6, 5)


@pytest.mark.parametrize("shape, text", [
    ([None, 5, None], "(None, 5, None)"), ([32, 6], "(32, 6)"), ([32, 6, 5, 1], "(32, 6, 5, 1)")])
def test_set_shape_incompatible_raises_naming_both(shape, text):
    x = tf.zeros([32, 6, 5])
    with pytest.raises(ValueError, match=(r"Tensor's shape \(32, 6, 5\) is not compatible with "
                                          r"supplied shape " + text.replace("(", r"\(")
                                          .replace(")", r"\)"))):
        x.set_shape(shape)


def test_set_shape_inside_function():
    @tf.function
    def ok(x):
        x.set_shape([None, 3])
        return x * 2

    assert ok(tf.zeros([2, 3])).shape == (2, 3) and ok(tf.zeros([4, 3])).shape == (4, 3)

    @tf.function
    def bad(x):
        x.set_shape([None, 4])
        return x

    with pytest.raises(ValueError, match="not compatible"):
        bad(tf.zeros([2, 3]))


# --- element_spec as TF reports it -------------------------------------------------------------

def test_timeseries_dataset_specs():
    data = np.zeros((100, 5), np.float32)
    ts = tf.keras.utils.timeseries_dataset_from_array
    assert ts(data, None, sequence_length=7, batch_size=32).element_spec == spec((None, None, 5))
    assert ts(data, None, sequence_length=7, batch_size=32, shuffle=True,
              seed=1).element_spec == spec((None, None, 5))
    assert ts(data, np.zeros(100, np.int32), sequence_length=7, batch_size=32).element_spec == (
        spec((None, None, 5)), spec((None,), I32))
    assert ts(data, np.zeros((100, 2)), sequence_length=7, batch_size=None).element_spec == (
        spec((None, 5)), spec((2,), F64))
    assert ts(np.zeros(100), None, sequence_length=7, batch_size=32).element_spec == \
        spec((None, None), F64)


def test_map_specs_follow_the_input_spec(rows):
    b = rows.batch(10)
    assert rows.batch(32).map(lambda x: x * 2).element_spec == spec((None, 3))
    assert rows.map(lambda x: x * 2).batch(32).element_spec == spec((None, 3))
    assert rows.map(lambda x: x[:2]).batch(32, drop_remainder=True).element_spec == \
        spec((32, 2))
    assert rows.map(lambda x: (x, tf.reduce_sum(x))).element_spec == (spec((3,)), spec(()))
    assert b.map(lambda x: tf.reshape(x, [-1, 3, 1])).element_spec == spec((None, 3, 1))
    assert b.map(lambda x: tf.reduce_sum(x, 0)).element_spec == spec((3,))
    assert b.map(lambda x: tf.reduce_sum(x, 1)).element_spec == spec((None,))
    assert b.map(lambda x: x[:, :2]).element_spec == spec((None, 2))
    assert b.map(lambda x: x[:4]).element_spec == spec((None, 3))
    assert b.map(lambda x: x[0]).element_spec == spec((3,))
    assert b.map(lambda x: tf.transpose(x)).element_spec == spec((3, None))
    assert b.map(lambda x: tf.matmul(x, x, transpose_a=True)).element_spec == spec((3, 3))
    assert b.map(lambda x: (tf.cast(x, tf.int32), tf.shape(x))).element_spec == (
        spec((None, 3), I32), spec((2,), I32))
    assert Dataset.range(10).batch(3).map(lambda x: x + 1).element_spec == spec((None,), I64)


def test_window_zip_dict_padded_specs(rows):
    w = rows.window(4, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(4))
    assert w.element_spec == spec((None, 3))
    assert w.map(lambda x: x[:-1]).element_spec == spec((None, 3))
    assert w.batch(8).element_spec == spec((None, None, 3))
    assert Dataset.zip((rows.batch(4), rows)).map(lambda a, b: a + b).element_spec == \
        spec((None, 3))
    d = Dataset.from_tensor_slices({"a": np.zeros((10, 2)), "b": np.zeros(10)}).batch(4)
    assert d.map(lambda e: (e["a"], e["b"])).element_spec == (spec((None, 2), F64),
                                                               spec((None,), F64))
    padded = Dataset.range(10).map(lambda x: tf.range(x)).padded_batch(3)
    assert padded.map(lambda x: x * 2).element_spec == spec((None, None), I64)
    assert rows.batch(4).unbatch().element_spec == spec((3,))
    assert rows.batch(4).concatenate(rows.batch(4, drop_remainder=True)).element_spec == \
        spec((None, 3))


def test_set_shape_in_map_tightens_the_spec(rows):
    def fix_batch(x):
        x.set_shape([32, None])
        return x
    assert rows.batch(32).map(fix_batch).element_spec == spec((32, 3))

    def split_window(features):       # the time-series tutorial's pattern
        inputs, labels = features[:, :6, :], features[:, 6:, :1]
        inputs.set_shape([None, 6, None])
        labels.set_shape([None, 1, None])
        return inputs, labels
    ds = tf.keras.utils.timeseries_dataset_from_array(
        np.zeros((100, 5), np.float32), None, sequence_length=7, batch_size=32).map(split_window)
    assert ds.element_spec == (spec((None, 6, 5)), spec((None, 1, 1)))
    inputs, labels = next(iter(ds))
    assert inputs.shape == (32, 6, 5) and labels.shape == (32, 1, 1)


def test_set_shape_in_map_checks_real_elements(rows):
    def wrong(x):
        x.set_shape([None, 4])
        return x
    ds = rows.batch(8).map(wrong)
    with pytest.raises(ValueError, match="not compatible"):
        ds.element_spec
    with pytest.raises(ValueError, match="not compatible"):
        next(iter(ds))


def test_map_spec_draws_no_random_numbers(rows):
    ds = rows.batch(8).map(lambda x: x + tf.random.uniform(tf.shape(x)))
    tf.random.set_seed(3)
    expected = tf.random.uniform([4]).numpy()
    tf.random.set_seed(3)
    assert ds.element_spec == spec((None, 3))
    np.testing.assert_array_equal(tf.random.uniform([4]).numpy(), expected)


def test_map_spec_falls_back_when_the_probe_fails(rows):
    # minitf's rule (docs/compat.md), not TF's: when the function fails on the probe, a leading
    # dim the size of an unknown leading input dim is None (TF, tracing, gives (8, 3, 1)).
    def fixed(x):                      # works only with the real batch size
        return tf.reshape(x, [8, 3, 1]) if x.shape[0] == 8 else tf.reshape(x, [8, -1])
    assert rows.batch(8).map(fixed).element_spec == spec((None, 3, 1))
