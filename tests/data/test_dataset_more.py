"""tf.data.Dataset: reduce, scan, padded_batch, interleave, flat_map, window, take_while,
shard, choose/sample_from_datasets, get_single_element, unbatch/range details: values (from
TF's documentation examples where named, else plain Python), element structure, cardinality,
element_spec, errors, and use inside minitf.function."""
import warnings

import numpy as np
import pytest

import minitf as tf

Dataset = tf.data.Dataset


def _np(ds):
    return list(ds.as_numpy_iterator())


def _windows(ds):
    return [list(w.as_numpy_iterator()) for w in ds]


# --- reduce / scan -------------------------------------------------------------------------------
def test_reduce_folds_elements_with_structured_state():
    # TF docs: range(5).reduce(np.int64(0), lambda x, _: x + 1) == 5 and a sum == 10
    assert int(Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1)) == 5
    total = Dataset.range(5).reduce(np.int64(0), lambda x, y: x + y)
    assert isinstance(total, tf.Tensor) and total.dtype == tf.int64 and int(total) == 10
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 1.5))
    # the element is passed whole (not unpacked) as the second argument, as in TF
    state = pairs.reduce((np.int64(0), np.float64(1.0)),
                         lambda s, e: (s[0] + e[0], s[1] * (e[1] + 1.0)))
    assert int(state[0]) == 6
    assert float(state[1]) == pytest.approx(np.prod(np.arange(4) * 1.5 + 1.0))
    dicts = Dataset.from_tensor_slices({"a": np.arange(3)}).reduce(
        {"n": np.int64(0)}, lambda s, e: {"n": s["n"] + e["a"]})
    assert list(dicts) == ["n"] and int(dicts["n"]) == 3
    assert int(Dataset.range(0).reduce(np.int64(7), lambda s, x: s + x)) == 7
    with pytest.raises(TypeError, match="types of the new state.*int64.*float32"):
        Dataset.range(3).reduce(np.int64(0), lambda s, x: tf.cast(s + x, tf.float32))
    with pytest.raises(TypeError, match="structure of the initial state"):
        Dataset.range(3).reduce(np.int64(0), lambda s, x: (s, x))


def test_scan_running_sum_restarts_on_each_iteration():
    # TF docs: a running sum over range(10)
    ds = Dataset.range(10).scan(tf.constant(0, dtype=tf.int64),
                                lambda state, i: (state + i, state + i))
    expected = list(np.cumsum(np.arange(10)))
    assert _np(ds) == expected and _np(ds) == expected
    assert len(ds) == 10 and ds.element_spec == tf.TensorSpec((), tf.int64)
    via_apply = Dataset.range(4).apply(tf.data.experimental.scan(
        np.int64(1), lambda s, x: (s * 2, (s, x * 10))))
    assert _np(via_apply) == [(1, 0), (2, 10), (4, 20), (8, 30)]
    with pytest.raises(TypeError, match="pair"):
        list(Dataset.range(2).scan(np.int64(0), lambda s, x: s + x))


def test_reduce_inside_a_function_runs_eagerly_with_each_calls_values():
    @tf.function
    def weighted_total(scale):
        return Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x * scale)

    with pytest.warns(tf.EagerFallbackWarning, match="Dataset.reduce"):
        assert int(weighted_total(tf.constant(1, tf.int64))) == 10
    assert int(weighted_total(tf.constant(2, tf.int64))) == 20
    assert int(weighted_total(tf.constant(-3, tf.int64))) == -30


# --- padded_batch --------------------------------------------------------------------------------
def _ragged():
    # TF docs: A = range(1, 5, output_type=int32).map(lambda x: tf.fill([x], x))
    return Dataset.range(1, 5, output_type=tf.int32).map(lambda x: tf.fill([x], x))


def test_padded_batch_matches_tf_documentation():
    got = _np(_ragged().padded_batch(2))
    assert [b.tolist() for b in got] == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert got[0].dtype == np.int32
    five = _np(_ragged().padded_batch(2, padded_shapes=5))
    assert [b.tolist() for b in five] == [[[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]],
                                          [[3, 3, 3, 0, 0], [4, 4, 4, 4, 0]]]
    minus = _np(_ragged().padded_batch(2, padded_shapes=5, padding_values=-1))
    assert minus[0].tolist() == [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]]
    # one padding value for every component of a tuple element
    both = _np(Dataset.zip((_ragged(), _ragged())).padded_batch(2, padding_values=-1))
    assert [[c.tolist() for c in b] for b in both] == [
        [[[1, -1], [2, 2]]] * 2, [[[3, 3, 3, -1], [4, 4, 4, 4]]] * 2]
    # components padded independently
    elements = [([1, 2, 3], [10]), ([4, 5], [11, 12])]
    gen = Dataset.from_generator(lambda: iter(elements), (tf.int32, tf.int32))
    (first, second), = _np(gen.padded_batch(2, padded_shapes=([4], [None]),
                                            padding_values=(-1, 100)))
    assert first.tolist() == [[1, 2, 3, -1], [4, 5, -1, -1]]
    assert second.tolist() == [[10, 100], [11, 12]]


def test_padded_batch_against_numpy_and_its_specs():
    rng = np.random.default_rng(0)
    rows = [rng.normal(size=(int(n), 2)).astype(np.float32) for n in rng.integers(1, 6, 7)]
    ds = Dataset.from_generator(lambda: iter(({"x": r, "n": np.int64(len(r))} for r in rows)),
                                output_signature={"x": tf.TensorSpec((None, 2), tf.float32),
                                                  "n": tf.TensorSpec((), tf.int64)})
    batched = ds.padded_batch(3, padding_values={"x": np.float32(9.0), "n": np.int64(0)})
    assert len(list(batched)) == 3 and int(batched.cardinality()) == \
        tf.data.UNKNOWN_CARDINALITY
    for k, b in enumerate(batched.as_numpy_iterator()):
        chunk = rows[3 * k:3 * k + 3]
        longest = max(len(r) for r in chunk)
        expected = np.full((len(chunk), longest, 2), 9.0, np.float32)
        for i, r in enumerate(chunk):
            expected[i, :len(r)] = r
        np.testing.assert_array_equal(b["x"], expected)
        assert b["n"].tolist() == [len(r) for r in chunk]
    assert batched.element_spec == {"x": tf.TensorSpec((None, None, 2), tf.float32),
                                    "n": tf.TensorSpec((None,), tf.int64)}
    fixed = Dataset.range(5).map(lambda x: tf.fill([2], x)).padded_batch(
        2, padded_shapes=[3], drop_remainder=True)
    assert len(fixed) == 2 and fixed.element_spec == tf.TensorSpec((2, 3), tf.int64)
    assert _np(fixed)[1].tolist() == [[2, 2, 0], [3, 3, 0]]


def test_padded_batch_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="smaller size than the input"):
        list(_ragged().padded_batch(2, padded_shapes=[2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \(1,\).*rank 2"):
        list(_ragged().padded_batch(2, padded_shapes=[None, 3]))
    with pytest.raises(TypeError, match="padding value.*float32.*int32"):
        list(_ragged().padded_batch(2, padding_values=tf.constant(1.0)))
    with pytest.raises(ValueError, match="structure of the elements"):
        list(Dataset.zip((_ragged(), _ragged())).padded_batch(2, padded_shapes=[None]))
    with pytest.raises(ValueError, match="batch_size must be positive"):
        _ragged().padded_batch(0)


# --- interleave / flat_map -----------------------------------------------------------------------
def test_interleave_order_matches_tf():
    # TF docs: cycle_length=2, block_length=4 over range(1, 6), each repeated 6 times
    ds = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6),
                                        cycle_length=2, block_length=4)
    assert _np(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4,
                       5, 5, 5, 5, 5, 5]
    # inputs of lengths 1, 2, 3 (values 10x + i), three at a time, one from each in turn;
    # an exhausted slot is refilled when the cycle comes back to it
    ragged = Dataset.range(3).interleave(
        lambda x: Dataset.range(x + 1).map(lambda i: 10 * x + i), cycle_length=3)
    assert _np(ragged) == [0, 10, 20, 11, 21, 22]
    assert _np(Dataset.range(4).interleave(lambda x: Dataset.range(2).map(lambda i: 10 * x + i),
                                           cycle_length=1)) == [0, 1, 10, 11, 20, 21, 30, 31]
    # tuple elements are unpacked into map_func's arguments
    pairs = Dataset.from_tensor_slices((np.array([1, 2]), np.array([5, 7])))
    assert _np(pairs.interleave(lambda a, b: Dataset.from_tensors(a * b).repeat(2),
                                cycle_length=2)) == [5, 14, 5, 14]
    auto = Dataset.range(3).interleave(lambda x: Dataset.from_tensors(x),
                                       num_parallel_calls=tf.data.AUTOTUNE)
    assert sorted(_np(auto)) == [0, 1, 2]


def test_flat_map_and_errors():
    # TF docs: flat_map(from_tensor_slices) flattens rows
    rows = Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    flat = rows.flat_map(Dataset.from_tensor_slices)
    assert _np(flat) == list(range(1, 10))
    assert int(flat.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        list(Dataset.range(2).flat_map(lambda x: x * 2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="cycle_length must be greater"):
        Dataset.range(2).interleave(Dataset.from_tensors, cycle_length=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="block_length must be greater"):
        Dataset.range(2).interleave(Dataset.from_tensors, cycle_length=1, block_length=-2)


# --- window --------------------------------------------------------------------------------------
def test_window_matches_tf_documentation():
    assert _windows(Dataset.range(7).window(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert _windows(Dataset.range(7).window(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert _windows(Dataset.range(7).window(3, 2, 1, True)) == [[0, 1, 2], [2, 3, 4],
                                                                [4, 5, 6]]
    assert _windows(Dataset.range(7).window(3, 1, 2, True)) == [[0, 2, 4], [1, 3, 5],
                                                                [2, 4, 6]]
    # nested elements give nested structures of datasets
    pairs = Dataset.from_tensor_slices(([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])).window(2)
    got = [tuple(list(d.as_numpy_iterator()) for d in w) for w in pairs]
    assert got == [([1, 2], [6, 7]), ([3, 4], [8, 9]), ([5], [10])]
    dicts = Dataset.from_tensor_slices({"a": [1, 2, 3], "b": [4, 5, 6]}).window(2)
    assert [{k: list(v.as_numpy_iterator()) for k, v in w.items()} for w in dicts] == [
        {"a": [1, 2], "b": [4, 5]}, {"a": [3], "b": [6]}]
    assert pairs.element_spec == (tf.data.DatasetSpec(tf.TensorSpec((), tf.int32)),) * 2


@pytest.mark.parametrize("size,shift,stride,drop", [
    (3, None, 1, False), (3, 1, 1, False), (2, 3, 1, False), (2, 3, 1, True), (3, 2, 2, False),
    (3, 2, 2, True), (4, 1, 3, True), (1, 1, 1, False), (5, 5, 2, False), (8, 1, 1, True)])
def test_window_positions_and_cardinality_against_python(size, shift, stride, drop):
    n = 11
    starts = range(0, n, shift or size)
    expected = [[s + j * stride for j in range(size) if s + j * stride < n] for s in starts]
    if drop:
        expected = [w for w in expected if len(w) == size]
    ds = Dataset.range(n).window(size, shift, stride, drop)
    assert _windows(ds) == expected and len(ds) == len(expected)
    batches = ds.flat_map(lambda w: w.batch(size))
    assert [b.tolist() for b in batches.as_numpy_iterator()] == expected


def test_window_errors_and_infinite_input():
    with pytest.raises(tf.errors.InvalidArgumentError, match="window size must be greater"):
        Dataset.range(3).window(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="shift must be greater"):
        Dataset.range(3).window(2, shift=0)
    with pytest.raises(TypeError, match="as_numpy_iterator"):
        list(Dataset.range(3).window(2).as_numpy_iterator())
    forever = Dataset.range(3).repeat().window(2, shift=1)
    assert int(forever.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert _windows(forever.take(4)) == [[0, 1], [1, 2], [2, 0], [0, 1]]


# --- take_while / shard / unbatch / range --------------------------------------------------------
def test_take_while_and_shard():
    assert _np(Dataset.range(10).take_while(lambda x: x < 5)) == [0, 1, 2, 3, 4]  # TF docs
    pairs = Dataset.from_tensor_slices((np.array([1, 3, 5, 2, 7]), np.arange(5)))
    assert _np(pairs.take_while(lambda a, i: a % 2 == 1)) == [(1, 0), (3, 1), (5, 2)]
    assert int(Dataset.range(3).take_while(lambda x: True).cardinality()) == \
        tf.data.UNKNOWN_CARDINALITY
    with pytest.raises(ValueError, match="scalar boolean"):
        list(Dataset.range(3).take_while(lambda x: x))
    # TF docs: range(10).shard(num_shards=3, index=0) -> [0, 3, 6, 9]
    for index in range(3):
        shard = Dataset.range(10).shard(num_shards=3, index=index)
        assert _np(shard) == list(range(index, 10, 3)) and len(shard) == len(range(index, 10, 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="index must be between 0 and 2"):
        Dataset.range(10).shard(3, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_shards must be greater"):
        Dataset.range(10).shard(0, 0)


def test_unbatch_range_and_single_element():
    assert len(Dataset.range(10).batch(3, drop_remainder=True).unbatch()) == 9
    assert int(Dataset.range(10).batch(3).unbatch().cardinality()) == \
        tf.data.UNKNOWN_CARDINALITY
    with pytest.raises(ValueError, match="scalar components"):
        list(Dataset.range(3).unbatch())
    assert _np(Dataset.range(10, 0, -3)) == [10, 7, 4, 1]
    assert Dataset.range(3, output_type=tf.int32).element_spec == tf.TensorSpec((), tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="step size cannot be 0"):
        Dataset.range(0, 5, 0)
    single = Dataset.from_tensors((np.int64(4), np.array([1.0, 2.0]))).get_single_element()
    assert int(single[0]) == 4 and single[1].numpy().tolist() == [1.0, 2.0]
    assert int(tf.data.experimental.get_single_element(Dataset.range(7, 8))) == 7
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
        Dataset.range(0).get_single_element()
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one"):
        Dataset.range(2).get_single_element()
    experimental = tf.data.experimental
    assert _np(Dataset.range(5).apply(experimental.take_while(lambda x: x < 2))) == [0, 1]
    assert _np(Dataset.range(4).batch(2).apply(experimental.unbatch())) == [0, 1, 2, 3]
    assert _np(Dataset.range(2).apply(experimental.enumerate_dataset(5))) == [(5, 0), (6, 1)]


# --- choose_from_datasets / sample_from_datasets -------------------------------------------------
def test_choose_from_datasets():
    # TF docs: three repeated datasets chosen by range(3).repeat(3)
    datasets = [Dataset.from_tensors(np.int64(v)).repeat() for v in (10, 20, 30)]
    chosen = Dataset.choose_from_datasets(datasets, Dataset.range(3).repeat(3))
    assert _np(chosen) == [10, 20, 30] * 3
    short = [Dataset.range(2), Dataset.range(100, 103)]
    choices = Dataset.from_tensor_slices(np.array([0, 1, 0, 0, 1, 1], dtype=np.int64))
    assert _np(Dataset.choose_from_datasets(short, choices)) == [0, 100, 1]
    assert _np(tf.data.experimental.choose_from_datasets(
        short, choices, stop_on_empty_dataset=False)) == [0, 100, 1, 101, 102]
    with pytest.raises(tf.errors.InvalidArgumentError, match="selector index out of range: 5"):
        list(Dataset.choose_from_datasets(short, Dataset.range(5, 6)))
    with pytest.raises(TypeError, match="int64 scalars"):
        list(Dataset.choose_from_datasets(short, Dataset.range(1, output_type=tf.int32)))


def test_sample_from_datasets_weights_exhaustion_and_seeds():
    ones, twos = Dataset.from_tensors(np.int64(1)).repeat(), Dataset.from_tensors(
        np.int64(2)).repeat()
    only_first = Dataset.sample_from_datasets([ones, twos], weights=[1.0, 0.0], seed=3)
    assert set(_np(only_first.take(50))) == {1}
    assert int(only_first.cardinality()) == tf.data.INFINITE_CARDINALITY
    mix = Dataset.sample_from_datasets([ones, twos], weights=[0.25, 0.75], seed=7)
    draws = np.array(_np(mix.take(4000)))
    assert abs((draws == 2).mean() - 0.75) < 0.03       # binomial sd ~ 0.007
    assert _np(mix.take(30)) == _np(mix.take(30))        # same order on every iteration
    again = Dataset.sample_from_datasets([ones, twos], seed=7, rerandomize_each_iteration=True)
    assert _np(again.take(40)) != _np(again.take(40))
    # exhausted datasets drop out: every element of both comes out, each in its own order
    a, b = Dataset.range(5), Dataset.range(100, 103)
    both = _np(Dataset.sample_from_datasets([a, b], seed=1))
    assert sorted(both) == [0, 1, 2, 3, 4, 100, 101, 102]
    assert [v for v in both if v < 100] == [0, 1, 2, 3, 4]
    stopped = _np(Dataset.sample_from_datasets([a, b], seed=1, stop_on_empty_dataset=True))
    assert len(stopped) < 8 and stopped == both[:len(stopped)]
    with pytest.raises(ValueError, match="one entry per dataset"):
        Dataset.sample_from_datasets([a, b], weights=[1.0])
    with pytest.raises(TypeError, match="datasets"):
        Dataset.sample_from_datasets([a, [1, 2]])


# --- in a traced function ------------------------------------------------------------------------
def test_new_transformations_feed_a_traced_step_through_an_iterator():
    ds = (Dataset.range(20).window(4, shift=2, drop_remainder=True)
          .flat_map(lambda w: w.batch(4))
          .map(lambda b: tf.py_function(lambda v: v * 2, [b], tf.int64))
          .padded_batch(2, padded_shapes=[5], padding_values=np.int64(-1)))
    iterator = iter(ds)

    @tf.function
    def step(it):
        return tf.reduce_sum(next(it), axis=1)

    expected = []
    for b in _np(ds):
        expected.append(b.sum(axis=1).tolist())
    with warnings.catch_warnings():
        warnings.simplefilter("error", tf.EagerFallbackWarning)
        got = [step(iterator).numpy().tolist() for _ in range(len(expected))]
    assert got == expected and step.experimental_get_tracing_count() == 1
    # by hand: window starting at 2k is [2k .. 2k+3], doubled and summed, minus 1 of padding
    assert expected[0] == [2 * (0 + 1 + 2 + 3) - 1, 2 * (2 + 3 + 4 + 5) - 1]
