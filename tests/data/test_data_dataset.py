"""tf.data.Dataset: every transformation on small known inputs (values, order, cardinality,
element_spec), the shuffle buffer's semantics and its seeds."""
import numpy as np
import pytest

import minitf as tf

Dataset = tf.data.Dataset


def _np(ds):
    return list(ds.as_numpy_iterator())


def test_from_tensor_slices_tuples_dicts_and_lists():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    y = np.array([0, 1, 2])
    ds = Dataset.from_tensor_slices((x, y))
    items = list(ds)
    assert len(ds) == 3 and isinstance(items[0][0], tf.Tensor)
    np.testing.assert_array_equal(items[2][0].numpy(), [4.0, 5.0])
    assert int(items[2][1]) == 2
    assert ds.element_spec == (tf.TensorSpec((2,), tf.float32), tf.TensorSpec((), tf.int64))
    d = _np(Dataset.from_tensor_slices({"a": x, "b": y}))
    assert d[1]["b"] == 1 and list(d[1]["a"]) == [2.0, 3.0]
    # a list is one tensor, as in TF: [[1, 2], [3, 4]] gives two rows
    assert [list(v) for v in _np(Dataset.from_tensor_slices([[1, 2], [3, 4]]))] == [[1, 2],
                                                                                    [3, 4]]
    with pytest.raises(ValueError, match="same first dimension"):
        Dataset.from_tensor_slices((x, np.arange(4)))


def test_from_tensors_range_and_generator():
    one = _np(Dataset.from_tensors(np.array([1, 2, 3])))
    assert len(one) == 1 and list(one[0]) == [1, 2, 3]
    assert _np(Dataset.range(5)) == [0, 1, 2, 3, 4]
    assert _np(Dataset.range(2, 9, 3)) == [2, 5, 8]
    assert Dataset.range(3).element_spec == tf.TensorSpec((), tf.int64)

    def gen():
        for i in range(3):
            yield i, float(i) * 0.5

    ds = Dataset.from_generator(gen, output_signature=(tf.TensorSpec((), tf.int32),
                                                       tf.TensorSpec((), tf.float32)))
    assert _np(ds) == [(0, 0.0), (1, 0.5), (2, 1.0)] and _np(ds) == _np(ds)  # re-iterable
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY


def test_batch_drop_remainder_and_unbatch():
    ds = Dataset.range(7).batch(3)
    assert [list(b) for b in _np(ds)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(ds) == 3 and ds.element_spec == tf.TensorSpec((None,), tf.int64)
    dropped = Dataset.range(7).batch(3, drop_remainder=True)
    assert len(dropped) == 2 and dropped.element_spec == tf.TensorSpec((3,), tf.int64)
    assert _np(Dataset.range(7).batch(3).unbatch()) == list(range(7))
    pairs = Dataset.from_tensor_slices((np.ones((5, 2)), np.arange(5))).batch(2)
    xb, yb = next(iter(pairs))
    assert tuple(xb.shape) == (2, 2) and list(yb.numpy()) == [0, 1]
    ragged = Dataset.from_generator(lambda: iter([np.ones(2), np.ones(3)]))
    with pytest.raises(ValueError, match="different shapes"):
        list(ragged.batch(2))


def test_map_filter_and_parallel_arguments():
    ds = Dataset.from_tensor_slices((np.arange(6), np.arange(6) * 10))
    mapped = ds.map(lambda a, b: a + b, num_parallel_calls=tf.data.AUTOTUNE)
    assert _np(mapped) == [0, 11, 22, 33, 44, 55] and len(mapped) == 6
    evens = mapped.filter(lambda v: tf.equal(v % 2, 0))
    assert _np(evens) == [0, 22, 44]
    assert int(evens.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="unknown"):
        len(evens)
    dicts = Dataset.from_tensor_slices({"x": np.arange(3)}).map(lambda d: {"y": d["x"] * 2})
    assert [e["y"] for e in _np(dicts)] == [0, 2, 4]
    assert mapped.element_spec == tf.TensorSpec((), tf.int64)


def test_take_skip_repeat_concatenate_zip_enumerate():
    ds = Dataset.range(5)
    assert _np(ds.take(2)) == [0, 1] and _np(ds.take(-1)) == list(range(5))
    assert _np(ds.skip(3)) == [3, 4] and len(ds.skip(3)) == 2 and len(ds.skip(9)) == 0
    assert _np(ds.repeat(2)) == list(range(5)) * 2 and len(ds.repeat(2)) == 10
    forever = ds.repeat()
    assert int(forever.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert _np(forever.take(7)) == [0, 1, 2, 3, 4, 0, 1] and len(forever.take(7)) == 7
    with pytest.raises(TypeError, match="infinite"):
        len(forever)
    assert _np(ds.concatenate(Dataset.range(10, 12))) == [0, 1, 2, 3, 4, 10, 11]
    z = Dataset.zip((ds, Dataset.range(100, 103)))
    assert _np(z) == [(0, 100), (1, 101), (2, 102)] and len(z) == 3
    zd = Dataset.zip({"a": ds, "b": ds.map(lambda v: -v)})
    assert _np(zd)[4] == {"a": 4, "b": -4}
    assert _np(ds.enumerate(start=10).take(2)) == [(10, 0), (11, 1)]


def test_cache_and_prefetch_keep_the_elements():
    calls = []

    def record(v):
        calls.append(int(v))
        return v

    ds = Dataset.range(3).map(record).cache().prefetch(tf.data.AUTOTUNE)
    assert _np(ds) == [0, 1, 2] and _np(ds) == [0, 1, 2]
    assert calls == [0, 1, 2]  # the second pass came from the cache


def test_shuffle_buffer_semantics_and_seeds():
    n = 10
    full = Dataset.range(n).shuffle(n, seed=7)
    first, second = _np(full), _np(full)
    assert sorted(first) == list(range(n)) and sorted(second) == list(range(n))
    assert first != second  # reshuffle_each_iteration=True: a new order per pass
    assert _np(Dataset.range(n).shuffle(n, seed=7)) == first  # same seed, same first order
    fixed = Dataset.range(n).shuffle(n, seed=7, reshuffle_each_iteration=False)
    assert _np(fixed) == _np(fixed)
    # buffer 1: no shuffling at all
    assert _np(Dataset.range(n).shuffle(1, seed=3)) == list(range(n))
    # buffer 2: element k enters the buffer after k - 1 outputs, so it never comes out more
    # than one position early; the first element out is one of the first two
    for seed in range(20):
        order = _np(Dataset.range(n).shuffle(2, seed=seed))
        assert order[0] in (0, 1) and sorted(order) == list(range(n))
        assert all(order.index(k) >= k - 1 for k in range(n))
    tf.random.set_seed(4)
    a = _np(Dataset.range(n).shuffle(n))
    tf.random.set_seed(4)
    assert _np(Dataset.range(n).shuffle(n)) == a  # the global seed decides without seed=


def test_shuffle_is_uniform_over_many_seeds():
    counts = np.zeros((4, 4))
    for seed in range(2000):
        for pos, v in enumerate(_np(Dataset.range(4).shuffle(4, seed=seed))):
            counts[v, pos] += 1
    # every element lands in every position with probability 1/4 (500 +- 5 sigma)
    assert np.all(np.abs(counts - 500) < 5 * np.sqrt(2000 * 0.25 * 0.75))


def test_iteration_yields_minitf_tensors_in_a_training_loop():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    w = tf.Variable([[1.0], [2.0]])
    total = 0.0
    for xb in Dataset.from_tensor_slices(x).batch(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(xb, w))
        total += float(loss)
        assert tape.gradient(loss, w) is not None
    assert total == pytest.approx(float(np.sum(x @ np.array([[1.0], [2.0]]))))
