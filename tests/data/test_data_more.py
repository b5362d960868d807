"""tf.data: SparseTensor and RaggedTensor elements (from_tensor_slices, map, batch, unbatch,
element_spec), ragged_batch / sparse_batch, Iterator / Optional / NumpyIterator, and more of
tf.data.experimental. Expected values were produced by TensorFlow 2.21 running the same
pipelines (pasted here as literals) unless a comment says otherwise."""
import numpy as np
import pytest

import minitf as tf


Dataset = tf.data.Dataset


def _sp(value):
    return (value.indices.numpy().tolist(), value.values.numpy().tolist(),
            value.dense_shape.numpy().tolist())


def _sparse_3x4():
    return tf.SparseTensor([[0, 1], [2, 0], [2, 3]], [1.0, 2.0, 3.0], [3, 4])


# --- SparseTensor elements -----------------------------------------------------------------------
def test_sparse_slices_batch_unbatch_match_tf():
    ds = Dataset.from_tensor_slices(_sparse_3x4())
    assert ds.element_spec == tf.SparseTensorSpec([4], tf.float32)
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([4]), tf.float32)"
    rows = [([[1]], [1.0], [4]), ([], [], [4]), ([[0], [3]], [2.0, 3.0], [4])]
    assert [_sp(e) for e in ds] == rows
    batched = ds.batch(2)
    assert batched.element_spec == tf.SparseTensorSpec([None, 4], tf.float32)
    assert [_sp(e) for e in batched] == [([[0, 1]], [1.0], [2, 4]),
                                         ([[0, 0], [0, 3]], [2.0, 3.0], [1, 4])]
    unbatched = batched.unbatch()
    assert unbatched.element_spec == tf.SparseTensorSpec([4], tf.float32)
    assert [_sp(e) for e in unbatched] == rows
    # TF 2.21's as_numpy_iterator gives a SparseTensor as its dense array
    first = next(iter(ds.as_numpy_iterator()))
    np.testing.assert_array_equal(first, [0.0, 1.0, 0.0, 0.0])


def test_map_returning_sparse_of_varying_shape_batches_to_largest():
    ds = Dataset.range(1, 4).map(lambda n: tf.SparseTensor(
        tf.reshape(tf.range(n), [-1, 1]), tf.ones([n]), tf.reshape(n, [1])))
    assert ds.element_spec == tf.SparseTensorSpec([None], tf.float32)
    assert [_sp(e) for e in ds.batch(3)] == [
        ([[0, 0], [1, 0], [1, 1], [2, 0], [2, 1], [2, 2]], [1.0] * 6, [3, 3])]
    assert ds.batch(3).element_spec == tf.SparseTensorSpec([None, None], tf.float32)
    assert ds.batch(3, drop_remainder=True).element_spec == tf.SparseTensorSpec(
        [3, None], tf.float32)


def test_sparse_with_dense_components_zip_shuffle_and_from_tensors():
    sp = _sparse_3x4()
    ds = Dataset.from_tensor_slices((sp, np.arange(3)))
    assert ds.element_spec == (tf.SparseTensorSpec([4], tf.float32),
                               tf.TensorSpec((), tf.int64))
    got = {int(label): _sp(row) for row, label in ds.shuffle(3, seed=1)}
    assert got == {0: ([[1]], [1.0], [4]), 1: ([], [], [4]), 2: ([[0], [3]], [2.0, 3.0], [4])}
    pairs = Dataset.zip((Dataset.from_tensor_slices(sp), Dataset.range(3))).batch(3)
    batch_sp, labels = next(iter(pairs))
    assert _sp(batch_sp) == ([[0, 1], [2, 0], [2, 3]], [1.0, 2.0, 3.0], [3, 4])
    assert labels.numpy().tolist() == [0, 1, 2]
    assert Dataset.from_tensors(sp).element_spec == tf.SparseTensorSpec([3, 4], tf.float32)


def test_from_generator_with_sparse_signature():
    def gen():
        yield tf.SparseTensor([[1]], [5], [3])
    ds = Dataset.from_generator(gen, output_signature=tf.SparseTensorSpec([None], tf.int32))
    assert [_sp(e) for e in ds] == [([[1]], [5], [3])]
    with pytest.raises(TypeError, match="must match SparseTensorSpec"):
        list(Dataset.from_generator(gen, output_signature=tf.SparseTensorSpec([None],
                                                                              tf.float32)))


# --- RaggedTensor elements -----------------------------------------------------------------------
def test_ragged_slices_are_dense_rows_that_batch_into_ragged():
    ds = Dataset.from_tensor_slices(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]))
    assert ds.element_spec == tf.RaggedTensorSpec([None], tf.int32, 0, tf.int64)
    assert repr(ds.element_spec) == "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)"
    rows = list(ds)
    assert all(type(r) is tf.Tensor for r in rows)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3], [4, 5, 6]]
    batched = ds.batch(2)
    assert batched.element_spec == tf.RaggedTensorSpec([None, None], tf.int32, 1, tf.int64)
    assert [b.to_list() for b in batched] == [[[1, 2], [3]], [[4, 5, 6]]]
    assert batched.unbatch().element_spec == tf.RaggedTensorSpec([None], tf.int32, 0)
    assert [b.to_list() for b in batched.unbatch().batch(3)] == [[[1, 2], [3], [4, 5, 6]]]
    numpy_batches = list(batched.as_numpy_iterator())
    assert [a.tolist() for a in numpy_batches[0]] == [[1, 2], [3]]
    np.testing.assert_array_equal(numpy_batches[1], [[4, 5, 6]])


def test_ragged_rows_of_equal_length_still_batch_as_ragged():
    ds = Dataset.from_tensor_slices(tf.ragged.constant([[1, 2], [3, 4]]))
    batch = next(iter(ds.batch(2)))
    assert isinstance(batch, tf.RaggedTensor) and batch.to_list() == [[1, 2], [3, 4]]


def test_ragged_rank_two_slices_and_map_returning_ragged():
    ds = Dataset.from_tensor_slices(tf.ragged.constant([[[1], [2, 3]], [[4]], []]))
    assert ds.element_spec == tf.RaggedTensorSpec([None, None], tf.int32, 1, tf.int64)
    assert [e.to_list() for e in ds] == [[[1], [2, 3]], [[4]], []]
    assert ds.batch(2).element_spec == tf.RaggedTensorSpec([None, None, None], tf.int32, 2)
    mapped = Dataset.range(3).map(lambda n: tf.ragged.range(tf.range(n + 1)))
    assert mapped.element_spec == tf.RaggedTensorSpec([None, None], tf.int64, 1, tf.int64)
    assert mapped.batch(2).element_spec == tf.RaggedTensorSpec([None, None, None], tf.int64, 2)
    assert [b.to_list() for b in mapped.batch(2)] == [[[[]], [[], [0]]], [[[], [0], [0, 1]]]]
    assert Dataset.from_tensors(tf.ragged.constant([[1, 2], [3]])).element_spec == \
        tf.RaggedTensorSpec([2, None], tf.int32, 1, tf.int64)


def test_ragged_tensor_spec_checks_its_arguments():
    with pytest.raises(ValueError, match="ragged_rank must be in \\[0, rank\\).*got 2"):
        tf.RaggedTensorSpec([None, None], tf.int32, 2)
    with pytest.raises(ValueError, match="row_splits_dtype must be int32 or int64, got int16"):
        tf.RaggedTensorSpec([None, None], tf.int32, 1, tf.int16)


# --- ragged_batch / sparse_batch -----------------------------------------------------------------
def test_ragged_batch_matches_tf():
    ds = Dataset.range(1, 5).map(lambda n: tf.range(n))
    r = ds.ragged_batch(3)
    assert r.element_spec == tf.RaggedTensorSpec([None, None], tf.int64, 1, tf.int64)
    assert [b.to_list() for b in r] == [[[0], [0, 1], [0, 1, 2]], [[0, 1, 2, 3]]]
    assert ds.ragged_batch(2, row_splits_dtype=tf.int32).element_spec == \
        tf.RaggedTensorSpec([None, None], tf.int64, 1, tf.int32)
    assert next(iter(ds.ragged_batch(2, row_splits_dtype=tf.int32))).row_splits.dtype == tf.int32
    # fully defined components batch as with batch()
    fixed = Dataset.from_tensor_slices(np.arange(12).reshape(4, 3)).map(
        lambda x: (x, tf.reduce_sum(x))).ragged_batch(2)
    assert fixed.element_spec == (tf.TensorSpec((None, 3), tf.int64),
                                  tf.TensorSpec((None,), tf.int64))
    x, s = next(iter(fixed))
    assert x.numpy().tolist() == [[0, 1, 2], [3, 4, 5]] and s.numpy().tolist() == [3, 12]
    rank2 = Dataset.range(1, 4).map(lambda n: tf.ones([n, 2])).ragged_batch(2)
    assert rank2.element_spec == tf.RaggedTensorSpec([None, None, 2], tf.float32, 1, tf.int64)
    assert next(iter(rank2)).to_list() == [[[1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]]
    applied = ds.apply(tf.data.experimental.dense_to_ragged_batch(2))
    assert [b.to_list() for b in applied] == [[[0], [0, 1]], [[0, 1, 2], [0, 1, 2, 3]]]
    with pytest.raises(ValueError, match="ragged_batch: batch_size must be positive, got 0"):
        ds.ragged_batch(0)


def test_sparse_batch_keeps_every_value_including_zeros():
    ds = Dataset.range(1, 5).map(lambda n: tf.range(n))
    s = ds.sparse_batch(2, row_shape=[5])
    assert s.element_spec == tf.SparseTensorSpec([None, 5], tf.int64)
    assert [_sp(e) for e in s] == [
        ([[0, 0], [1, 0], [1, 1]], [0, 0, 1], [2, 5]),
        ([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [1, 3]], [0, 1, 2, 0, 1, 2, 3],
         [2, 5])]
    z = Dataset.from_tensor_slices(np.array([[0, 1], [2, 0]])).apply(
        tf.data.experimental.dense_to_sparse_batch(2, [3]))
    assert [_sp(e) for e in z] == [([[0, 0], [0, 1], [1, 0], [1, 1]], [0, 1, 2, 0], [2, 3])]
    with pytest.raises(tf.errors.DataLossError, match="had shape \\[3\\].*row shape \\[2\\]"):
        list(ds.sparse_batch(2, row_shape=[2]))


# --- iterators and optionals ---------------------------------------------------------------------
def test_iterator_get_next_as_optional_and_specs():
    it = iter(Dataset.range(2))
    assert isinstance(it, tf.data.Iterator)
    opt = it.get_next_as_optional()
    assert bool(opt.has_value()) and int(opt.get_value()) == 0
    assert opt.element_spec == tf.TensorSpec((), tf.int64)
    next(it)
    end = tf.data.experimental.get_next_as_optional(it)
    assert not bool(end.has_value()) and end.element_spec == tf.TensorSpec((), tf.int64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
        end.get_value()
    spec = tf.data.IteratorSpec(it.element_spec)
    assert repr(spec) == "IteratorSpec(TensorSpec(shape=(), dtype=tf.int64, name=None),)"
    numpy_it = Dataset.range(2).as_numpy_iterator()
    assert isinstance(numpy_it, tf.data.NumpyIterator)
    assert [int(v) for v in numpy_it] == [0, 1]


def test_optional_from_value_and_empty():
    assert tf.experimental.Optional is tf.data.experimental.Optional
    opt = tf.experimental.Optional.from_value((1, 2.0))
    assert opt.element_spec == (tf.TensorSpec((), tf.int32), tf.TensorSpec((), tf.float32))
    a, b = opt.get_value()
    assert int(a) == 1 and float(b) == 2.0
    empty = tf.experimental.Optional.empty(tf.TensorSpec([], tf.int32))
    assert not bool(empty.has_value())
    assert empty.element_spec == tf.TensorSpec([], tf.int32)


# --- tf.data.experimental ------------------------------------------------------------------------
def test_from_list_get_structure_and_constants():
    ds = tf.data.experimental.from_list([(1, "a"), (2, "b")])
    assert list(ds.as_numpy_iterator()) == [(1, b"a"), (2, b"b")]
    assert int(ds.cardinality()) == 2
    assert tf.data.experimental.from_list([{"a": 1}, {"a": 2}]).element_spec == {
        "a": tf.TensorSpec((), tf.int32)}
    with pytest.raises(ValueError, match="from_list: `elements` should not be empty"):
        tf.data.experimental.from_list([])
    with pytest.raises(ValueError, match="from_list: element 1 has the structure"):
        tf.data.experimental.from_list([1, (1, 2)])
    with pytest.raises(TypeError, match="from_list: element 1 has dtypes"):
        tf.data.experimental.from_list([1, 2.5])
    assert tf.data.experimental.get_structure(Dataset.range(3).batch(2)) == \
        tf.TensorSpec((None,), tf.int64)
    with pytest.raises(TypeError, match="get_structure: expected a tf.data.Dataset.*got int"):
        tf.data.experimental.get_structure(3)
    assert tf.data.experimental.SHARD_HINT == -1
    assert [a.value for a in tf.data.experimental.AutotuneAlgorithm] == [0, 1, 2, 3, 4]
    assert [p.name for p in tf.data.experimental.ExternalStatePolicy] == ["WARN", "IGNORE",
                                                                          "FAIL"]


def test_at_reads_one_element_directly():
    at = tf.data.experimental.at
    assert int(at(Dataset.range(10).map(lambda x: x * 3), 4)) == 12
    assert int(at(Dataset.range(10).skip(3).take(5), 2)) == 5        # hand-computed
    assert at(Dataset.range(5).batch(2), 2).numpy().tolist() == [4]   # hand-computed
    i, x = at(Dataset.from_tensor_slices(np.array([7, 8, 9])).enumerate(5), 1)
    assert (int(i), int(x)) == (6, 8)
    with pytest.raises(tf.errors.OutOfRangeError, match="index out of range \\[0, 10\\): 20"):
        at(Dataset.range(10), 20)
    with pytest.raises(tf.errors.UnimplementedError, match="not implemented for Filter"):
        at(Dataset.range(10).filter(lambda x: x > 2), 2)


def test_group_by_reducer_and_parallel_interleave():
    reducer = tf.data.experimental.Reducer(
        init_func=lambda k: (k, np.int64(0)), reduce_func=lambda s, x: (s[0], s[1] + x),
        finalize_func=lambda k, s: (k, s))
    ds = Dataset.from_tensor_slices(np.array([5, 2, 7, 4, 9, 1, 6], dtype=np.int64)).apply(
        tf.data.experimental.group_by_reducer(lambda x: x % 3, reducer))
    assert ds.element_spec == (tf.TensorSpec((), tf.int64), tf.TensorSpec((), tf.int64))
    assert [tuple(int(v) for v in e) for e in ds] == [(0, 15), (1, 12), (2, 7)]
    with pytest.raises(ValueError, match="key_func` must return a single tf.int64 scalar, got "
                                         "a int32"):
        list(Dataset.range(3).apply(tf.data.experimental.group_by_reducer(
            lambda x: tf.cast(x, tf.int32), reducer)))
    pi = Dataset.range(3).apply(tf.data.experimental.parallel_interleave(
        lambda x: Dataset.range(x * 10, x * 10 + 3), cycle_length=2, block_length=2))
    assert [int(v) for v in pi] == [0, 1, 10, 11, 2, 12, 20, 21, 22]


def test_identity_transformations_and_random_dataset():
    ds = Dataset.range(3)
    for transform in (tf.data.experimental.copy_to_device("/gpu:0"),
                      tf.data.experimental.prefetch_to_device("/gpu:0", 2)):
        assert [int(v) for v in ds.apply(transform)] == [0, 1, 2]
    assert tf.data.experimental.enable_debug_mode() is None
    # TF: RandomDataset(seed) and Dataset.random(seed) give the same values
    a = [int(v) for v in tf.data.experimental.RandomDataset(seed=1).take(3)]
    assert a == [int(v) for v in Dataset.random(seed=1).take(3)]


def _write_examples(directory):
    paths = []
    for f in range(2):
        path = str(directory / f"part{f}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(3):
                n = f * 3 + i
                ex = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[n, n * 0.5])),
                    "tags": tf.train.Feature(int64_list=tf.train.Int64List(
                        value=list(range(n % 3)))),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[n % 2]))}))
                writer.write(ex.SerializeToString())
        paths.append(path)
    return paths


_FEATURES = {"x": tf.io.FixedLenFeature([2], tf.float32), "tags": tf.io.VarLenFeature(tf.int64),
             "label": tf.io.FixedLenFeature([], tf.int64)}


def test_make_batched_features_dataset_matches_tf(tmp_path):
    _write_examples(tmp_path)
    ds = tf.data.experimental.make_batched_features_dataset(
        str(tmp_path / "*.tfrecord"), 4, _FEATURES, label_key="label", num_epochs=1,
        shuffle=False)
    assert ds.element_spec == ({"x": tf.TensorSpec((None, 2), tf.float32),
                                "tags": tf.SparseTensorSpec([None, None], tf.int64)},
                               tf.TensorSpec((None,), tf.int64))
    got = [(f["x"].numpy().tolist(), _sp(f["tags"]), label.numpy().tolist()) for f, label in ds]
    assert got == [([[0.0, 0.0], [1.0, 0.5], [2.0, 1.0], [3.0, 1.5]],
                    ([[1, 0], [2, 0], [2, 1]], [0, 0, 1], [4, 2]), [0, 1, 0, 1]),
                   ([[4.0, 2.0], [5.0, 2.5]], ([[0, 0], [1, 0], [1, 1]], [0, 0, 1], [2, 2]),
                    [0, 1])]
    with pytest.raises(ValueError, match="label_key 'y' is not among the features"):
        tf.data.experimental.make_batched_features_dataset(str(tmp_path / "*"), 2, _FEATURES,
                                                           label_key="y")


def test_parse_example_dataset_and_sparse_unbatch(tmp_path):
    first = _write_examples(tmp_path)[0]
    single = tf.data.TFRecordDataset([first]).map(
        lambda s: tf.io.parse_single_example(s, _FEATURES))
    assert single.element_spec["tags"] == tf.SparseTensorSpec([None], tf.int64)
    assert [_sp(e["tags"]) for e in single.batch(3)] == [([[1, 0], [2, 0], [2, 1]], [0, 0, 1],
                                                          [3, 2])]
    rows = tf.data.TFRecordDataset([first]).batch(2).apply(
        tf.data.experimental.parse_example_dataset(_FEATURES)).unbatch()
    assert [_sp(e["tags"]) for e in rows] == [([], [], [1]), ([[0]], [0], [1]),
                                              ([[0], [1]], [0, 1], [2])]
    with pytest.raises(ValueError, match="`features` must be a non-empty dict"):
        tf.data.experimental.parse_example_dataset([])


# --- snapshot / fingerprint (minitf's behaviour: the semantics of TF's docs) ---------------------
class _Calls:
    n = 0


def test_snapshot_writes_on_a_complete_pass_then_reads(tmp_path):
    calls = _Calls()

    def pipeline():
        def double(x):
            calls.n += 1
            return x * 2
        return Dataset.range(5).map(double).snapshot(str(tmp_path / "snap"))
    ds = pipeline()
    assert [int(v) for v in ds.take(2)] == [0, 2]
    assert not (tmp_path / "snap").exists()            # an early stop writes nothing
    assert [int(v) for v in ds] == [0, 2, 4, 6, 8]
    written = calls.n
    assert len(list((tmp_path / "snap").iterdir())) == 1
    assert [int(v) for v in ds] == [0, 2, 4, 6, 8]
    assert [int(v) for v in pipeline()] == [0, 2, 4, 6, 8]   # a new, equal pipeline reads it
    assert calls.n == written
    with pytest.raises(ValueError, match="snapshot: compression must be.*got 'LZ4'"):
        Dataset.range(2).snapshot(str(tmp_path / "s2"), compression="LZ4")


def test_fingerprint_follows_the_pipeline():
    def fp(k):
        return int(Dataset.range(4).map(lambda x: x + k).batch(2).fingerprint())
    assert fp(1) == fp(1) and fp(1) != fp(2)
    assert Dataset.range(3).fingerprint().dtype == tf.uint64


def test_composite_errors_name_the_transformation():
    sparse_rows = Dataset.from_tensor_slices(_sparse_3x4())
    with pytest.raises(TypeError, match="padded_batch: component 0 is a SparseTensor"):
        list(sparse_rows.padded_batch(2))
    ranks = Dataset.from_tensors(tf.SparseTensor([[0]], [1.0], [2])).concatenate(
        Dataset.from_tensors(tf.SparseTensor([[0, 0]], [1.0], [2, 2])))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="batch: cannot batch SparseTensors of different ranks \\[1, 2\\]"):
        list(ranks.batch(2))


def test_from_generator_with_ragged_rows_signature_batches_ragged():
    def gen():
        yield np.array([1, 2], np.int32)
        yield np.array([3], np.int32)
    spec = tf.RaggedTensorSpec([None], tf.int32, 0)
    ds = Dataset.from_generator(lambda: (tf.constant(v) for v in gen()), output_signature=spec)
    assert ds.element_spec == spec
    assert next(iter(ds.batch(2))).to_list() == [[1, 2], [3]]


def test_from_generator_strings_stay_host_bytes():
    def gen():
        yield b"ab"
        yield "c\u00e9"

    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.string))
    got = list(ds)
    assert [t.numpy() for t in got] == [b"ab", "c\u00e9".encode()]
    assert all(t.dtype == tf.string and t._value.dtype == object for t in got)
