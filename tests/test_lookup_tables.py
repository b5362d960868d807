"""tf.lookup tables and initializers.

Expected OOV ids were computed with TensorFlow 2.21 (tf.lookup.StaticVocabularyTable and
tf.data.experimental.index_table_from_dataset on the same inputs) and pasted here.
"""
import warnings

import numpy as np
import pytest

import minitf as tf


def _vocab_table(keys, num_oov, ids=None, **kwargs):
    ids = list(range(len(keys))) if ids is None else ids
    init = tf.lookup.KeyValueTensorInitializer(keys, tf.constant(ids, tf.int64))
    return tf.lookup.StaticVocabularyTable(init, num_oov, **kwargs)


# --- StaticVocabularyTable -------------------------------------------------------------------

def test_vocabulary_table_string_oov_ids_match_tf():
    table = _vocab_table(["emerson", "lake", "palmer"], 5)
    ids = table.lookup(tf.constant(["emerson", "lake", "palmer", "king", "crimson", "", "é"]))
    assert ids.dtype == tf.int64
    np.testing.assert_array_equal(ids.numpy(), [0, 1, 2, 6, 7, 6, 3])
    assert table.size().numpy() == 8      # vocabulary plus OOV buckets, as TF
    assert table.key_dtype == tf.string and table.value_dtype == tf.int64


def test_vocabulary_table_int64_keys_hash_their_decimal_strings():
    init = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20, 30], tf.int64),
                                               tf.constant([0, 1, 2], tf.int64))
    table = tf.lookup.StaticVocabularyTable(init, 7)
    ids = table.lookup(tf.constant([10, 20, 30, 40, 50, -1, 0, 123456789012], tf.int64))
    np.testing.assert_array_equal(ids.numpy(), [0, 1, 2, 8, 9, 7, 5, 7])


def test_vocabulary_table_ids_from_initializer_values_and_int32_lookup_keys():
    table = _vocab_table(tf.constant([1, 2], tf.int64), 3, ids=[5, 9])
    np.testing.assert_array_equal(table.lookup(tf.constant([1, 2, 9], tf.int64)).numpy(),
                                  [5, 9, 4])
    narrow = _vocab_table(tf.constant([7, 8], tf.int64), 4, lookup_key_dtype=tf.int32)
    assert narrow.key_dtype == tf.int32
    np.testing.assert_array_equal(
        narrow.lookup(tf.constant([8, 7, 100, -5, 2 ** 31 - 1], tf.int32)).numpy(),
        [1, 0, 5, 2, 3])


def test_vocabulary_table_argument_errors():
    init = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([0, 1], tf.int64))
    with pytest.raises(ValueError, match=r"num_oov_buckets.*> 0, got 0.*StaticHashTable"):
        tf.lookup.StaticVocabularyTable(init, 0)
    int32_ids = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([0, 1], tf.int32))
    with pytest.raises(TypeError, match=r"StaticVocabularyTable.*int64.*got int32"):
        tf.lookup.StaticVocabularyTable(int32_ids, 3)
    int32_keys = tf.lookup.KeyValueTensorInitializer(tf.constant([1, 2], tf.int32),
                                                     tf.constant([0, 1], tf.int64))
    with pytest.raises(TypeError, match=r"keys must be int64 or string, got int32"):
        tf.lookup.StaticVocabularyTable(int32_keys, 3)
    table = tf.lookup.StaticVocabularyTable(init, 2)
    with pytest.raises(TypeError, match=r"StaticVocabularyTable: `keys` must have dtype string "
                                        r"\(the table's key dtype\), got dtype int64"):
        table.lookup(tf.constant([1], tf.int64))


# --- StaticHashTable -------------------------------------------------------------------------

def test_static_hash_table_lookup_size_export_getitem():
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1, 2, 3],
                                                                          [10, 20, 30]), -1)
    assert table.key_dtype == tf.int32 and table.value_dtype == tf.int32
    np.testing.assert_array_equal(table.lookup(tf.constant([[1, 5], [3, 3]])).numpy(),
                                  [[10, -1], [30, 30]])
    np.testing.assert_array_equal(table[tf.constant([2])].numpy(), [20])
    assert table.size().numpy() == 3 and table.size().dtype == tf.int64
    keys, values = table.export()
    np.testing.assert_array_equal(keys.numpy(), [1, 2, 3])
    np.testing.assert_array_equal(values.numpy(), [10, 20, 30])
    assert int(table.default_value.numpy()) == -1


def test_static_hash_table_string_values_and_float_default():
    words = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant([0, 1], tf.int64), ["zero", "one"]),
        "UNK")
    assert words.lookup(tf.constant([1, 7, 0], tf.int64)).numpy().tolist() == [
        b"one", b"UNK", b"zero"]
    scores = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["x", "y"],
                                                                           [0.5, 1.5]), -1)
    assert scores.value_dtype == tf.float32
    np.testing.assert_allclose(scores.lookup(tf.constant(["y", "z"])).numpy(), [1.5, -1.0])


def test_static_hash_table_errors():
    init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2])
    table = tf.lookup.StaticHashTable(init, -1)
    with pytest.raises(TypeError, match=r"StaticHashTable: `keys` must have dtype string.*"
                                        r"got dtype int32"):
        table.lookup(tf.constant([1, 2]))
    ints = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1], [1]), -1)
    with pytest.raises(TypeError, match=r"must have dtype int32.*got dtype int64"):
        ints.lookup(tf.constant([1], tf.int64))
    with pytest.raises(ValueError, match=r"default_value.*scalar.*\(2,\)"):
        tf.lookup.StaticHashTable(init, [1, 2])
    with pytest.raises(tf.errors.FailedPreconditionError, match=r"b'a' appears twice"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]), -1)
    with pytest.raises(ValueError, match=r"same number of elements, got 3 keys and 2"):
        tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [1, 2])
    with pytest.raises(TypeError, match=r"`initializer` must be"):
        tf.lookup.StaticHashTable({"a": 1}, -1)


def test_sparse_and_ragged_keys_keep_their_structure():
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([1, 2], tf.int64)), -1)
    sparse = tf.SparseTensor([[0, 0], [1, 2]], tf.constant(["a", "q"]), [2, 3])
    out = table.lookup(sparse)
    assert isinstance(out, tf.SparseTensor)
    np.testing.assert_array_equal(out.values.numpy(), [1, -1])
    np.testing.assert_array_equal(out.indices.numpy(), [[0, 0], [1, 2]])
    np.testing.assert_array_equal(out.dense_shape.numpy(), [2, 3])
    ragged = tf.ragged.constant([["a", "b"], ["zz"]])
    assert table.lookup(ragged).to_list() == [[1, 2], [-1]]
    vocab = _vocab_table(["a", "b"], 3)
    assert vocab.lookup(ragged).to_list() == [[0, 1], [3]]
    np.testing.assert_array_equal(vocab.lookup(sparse).values.numpy(), [0, 4])


# --- TextFileInitializer ---------------------------------------------------------------------

def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_text_file_initializer_columns_lines_and_offsets(tmp_path):
    index = tf.lookup.TextFileIndex
    assert (index.WHOLE_LINE, index.LINE_NUMBER) == (-2, -1)
    pairs = _write(tmp_path, "pairs.txt", b"emerson 10\nlake 20\npalmer 30\n")
    init = tf.lookup.TextFileInitializer(pairs, tf.string, 0, tf.int64, 1, delimiter=" ")
    table = tf.lookup.StaticHashTable(init, -1)
    np.testing.assert_array_equal(table.lookup(tf.constant(["lake", "x"])).numpy(), [20, -1])
    words = _write(tmp_path, "words.txt", b"a\r\nb\r\nc")
    vocab = tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
        words, tf.string, index.WHOLE_LINE, tf.int64, index.LINE_NUMBER), 2)
    np.testing.assert_array_equal(vocab.lookup(tf.constant(["c", "a", "zz"])).numpy(),
                                  [2, 0, 3])
    assert vocab.size().numpy() == 5
    shifted = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        words, tf.string, index.WHOLE_LINE, tf.int64, index.LINE_NUMBER,
        value_index_offset=5), -1)
    np.testing.assert_array_equal(shifted.lookup(tf.constant(["c", "a"])).numpy(), [7, 5])
    inverse = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        words, tf.int64, index.LINE_NUMBER, tf.string, index.WHOLE_LINE), "UNK")
    assert inverse.lookup(tf.constant([2, 0, 9], tf.int64)).numpy().tolist() == [
        b"c", b"a", b"UNK"]
    first_two = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        words, tf.string, index.WHOLE_LINE, tf.int64, index.LINE_NUMBER, vocab_size=2), -1)
    np.testing.assert_array_equal(first_two.lookup(tf.constant(["a", "b", "c"])).numpy(),
                                  [0, 1, -1])
    floats = _write(tmp_path, "f.csv", b"a,1.5\nb,2.5\n")
    table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        floats, tf.string, 0, tf.float32, 1, delimiter=","), 0.0)
    np.testing.assert_allclose(table.lookup(tf.constant(["b", "q"])).numpy(), [2.5, 0.0])


def test_text_file_initializer_errors(tmp_path):
    index = tf.lookup.TextFileIndex
    words = _write(tmp_path, "w.txt", b"a\nb\nc\n")
    tsv = _write(tmp_path, "t.tsv", b"x\ty\t7\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"vocab_size.*expected 4 but got 3"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            words, tf.string, index.WHOLE_LINE, tf.int64, index.LINE_NUMBER, vocab_size=4), -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"columns.*line 0.*at least 6 got 3"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(tsv, tf.string, 1, tf.int64, 5),
                                  -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"'x' in line 0.*not a valid int64"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(tsv, tf.string, 1, tf.int64, 0),
                                  -1)
    with pytest.raises(tf.errors.NotFoundError, match=r"nope.txt"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(tmp_path / "nope.txt"), tf.string, index.WHOLE_LINE, tf.int64,
            index.LINE_NUMBER), -1)
    with pytest.raises(ValueError, match=r"`key_dtype` must be int64 if `key_index` is -1"):
        tf.lookup.TextFileInitializer(words, tf.string, index.LINE_NUMBER, tf.string,
                                      index.WHOLE_LINE)
    with pytest.raises(ValueError, match=r"`key_index` should be >= -2, received: -3"):
        tf.lookup.TextFileInitializer(words, tf.string, -3, tf.int64, index.LINE_NUMBER)
    gap = _write(tmp_path, "gap.txt", b"a\n\nb\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"empty line found at line 1"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            gap, tf.string, index.WHOLE_LINE, tf.int64, index.LINE_NUMBER), -1)


# --- mutable tables --------------------------------------------------------------------------

def test_mutable_hash_table_insert_remove_lookup_export():
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    assert table.size().numpy() == 0
    table.insert(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64))
    table.insert(["b"], tf.constant([7], tf.int64))
    np.testing.assert_array_equal(table.lookup(tf.constant(["a", "b", "z"])).numpy(),
                                  [1, 7, -1])
    assert table.size().numpy() == 3
    table.remove(tf.constant(["a", "nothere"]))
    keys, values = table.export()
    assert keys.numpy().tolist() == [b"b", b"c"] and values.numpy().tolist() == [7, 3]
    np.testing.assert_array_equal(
        table.lookup(tf.constant(["b", "q"]),
                     dynamic_default_values=tf.constant([0, 42], tf.int64)).numpy(), [7, 42])
    np.testing.assert_array_equal(table[tf.constant(["c"])].numpy(), [3])


def test_mutable_hash_table_vector_values_and_errors():
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [0.0, 0.0])
    table.insert(tf.constant([1, 2], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(table.lookup(tf.constant([[2, 5]], tf.int64)).numpy(),
                                  [[[3.0, 4.0], [0.0, 0.0]]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"expected shape \[1, 2\].*got \[2\]"):
        table.insert(tf.constant([1], tf.int64), tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match=r"MutableHashTable: `keys` must have dtype int64.*"
                                        r"got dtype string"):
        table.lookup(tf.constant(["a"]))
    with pytest.raises(TypeError, match=r"`values` must have dtype float32.*got dtype float64"):
        table.insert(tf.constant([3], tf.int64), tf.constant([[1.0, 2.0]], tf.float64))


def test_mutable_hash_table_string_values():
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.string, "none")
    table.insert(tf.constant([1, 2], tf.int64), tf.constant(["one", "two"]))
    table.insert([5], ["five"])
    assert table.lookup(tf.constant([[2, 3], [5, 1]], tf.int64)).numpy().tolist() == [
        [b"two", b"none"], [b"five", b"one"]]
    keys, values = table.export()
    assert keys.numpy().tolist() == [1, 2, 5]
    assert values.numpy().tolist() == [b"one", b"two", b"five"]


def test_dense_hash_table_reserved_keys():
    dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1,
                                                  empty_key=0, deleted_key=-1)
    dense.insert(tf.constant([5, 6, 7], tf.int64), tf.constant([50, 60, 70], tf.int64))
    np.testing.assert_array_equal(dense.lookup(tf.constant([5, 8, 7], tf.int64)).numpy(),
                                  [50, -1, 70])
    dense.erase(tf.constant([6], tf.int64))
    assert dense.size().numpy() == 2
    keys, values = dense.export()
    assert keys.numpy().tolist() == [5, 7] and values.numpy().tolist() == [50, 70]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"empty_key \(0\).*not allowed"):
        dense.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"deleted_key \(-1\).*not allowed"):
        dense.lookup(tf.constant([-1], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"cannot be equal"):
        tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0,
                                              deleted_key=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"power of 2, got 5"):
        tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, 0, -1,
                                              initial_num_buckets=5)
    words = tf.lookup.experimental.DenseHashTable(tf.string, tf.int64, -1, empty_key="",
                                                  deleted_key="$")
    words.insert_or_assign(tf.constant(["x", "y"]), tf.constant([1, 2], tf.int64))
    np.testing.assert_array_equal(words.lookup(tf.constant(["y", "q"])).numpy(), [2, -1])


# --- inside tf.function and Dataset.map -----------------------------------------------------

def _tutorial_table():
    # As TF's "Load text" tutorial: ids from 2 (0 padding, 1 OOV there), here 3 OOV buckets.
    vocab = ["the", "cat", "sat", "on", "mat"]
    init = tf.lookup.KeyValueTensorInitializer(vocab, tf.range(2, len(vocab) + 2,
                                                               dtype=tf.int64))
    return tf.lookup.StaticVocabularyTable(init, num_oov_buckets=3)


def test_static_lookup_in_function_uses_each_calls_keys():
    table = _tutorial_table()

    @tf.function
    def ids(words):
        return table.lookup(words) + 0

    np.testing.assert_array_equal(ids(tf.constant(["the", "dog", "sat"])).numpy(), [2, 7, 4])
    np.testing.assert_array_equal(ids(tf.constant(["mat", "bird", "fish"])).numpy(), [6, 5, 5])
    assert ids.experimental_get_tracing_count() == 1
    ints = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant([3, 4], tf.int64), tf.constant([30, 40], tf.int64)), -1)
    square = tf.function(lambda k: ints.lookup(k) * 2)
    np.testing.assert_array_equal(square(tf.constant([4, 1], tf.int64)).numpy(), [80, -2])
    np.testing.assert_array_equal(square(tf.constant([3, 3], tf.int64)).numpy(), [60, 60])


def test_lookup_in_dataset_map():
    table = _tutorial_table()
    ds = tf.data.Dataset.from_tensor_slices(["the cat sat", "a dog on the mat"])
    ds = ds.map(lambda line: table.lookup(tf.strings.split(line)))
    assert [x.numpy().tolist() for x in ds] == [[2, 3, 4], [5, 7, 5, 2, 6]]


def test_mutable_table_in_function_runs_in_order_eagerly():
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)

    @tf.function
    def put_then_get(keys, values, probe):
        before = table.lookup(probe)
        table.insert(keys, values)
        return before, table.lookup(probe)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tf.EagerFallbackWarning)
        before, after = put_then_get(tf.constant(["a"]), tf.constant([1], tf.int64),
                                     tf.constant(["a", "b"]))
        np.testing.assert_array_equal(before.numpy(), [-1, -1])
        np.testing.assert_array_equal(after.numpy(), [1, -1])
        before, after = put_then_get(tf.constant(["b"]), tf.constant([2], tf.int64),
                                     tf.constant(["a", "b"]))
    np.testing.assert_array_equal(before.numpy(), [1, -1])
    np.testing.assert_array_equal(after.numpy(), [1, 2])
    assert table.size().numpy() == 2


# --- tables from datasets, namespaces --------------------------------------------------------

def test_tables_from_datasets():
    keys = tf.data.Dataset.from_tensor_slices(["b", "a", "c"])
    table = tf.data.experimental.index_table_from_dataset(keys)
    np.testing.assert_array_equal(table.lookup(tf.constant(["a", "b", "c", "z"])).numpy(),
                                  [1, 0, 2, -1])
    hashed = tf.data.experimental.index_table_from_dataset(
        tf.data.Dataset.from_tensor_slices(["x", "y", "z"]), num_oov_buckets=2)
    np.testing.assert_array_equal(hashed.lookup(tf.constant(["z", "w", "q"])).numpy(),
                                  [2, 4, 4])
    # The example of TF's table_from_dataset docstring.
    pairs = tf.data.Dataset.zip((tf.data.Dataset.range(100), tf.data.Dataset.range(100).map(
        lambda x: tf.strings.as_string(x * 2))))
    table = tf.data.experimental.table_from_dataset(pairs, default_value="n/a",
                                                    key_dtype=tf.int64)
    assert table.lookup(tf.constant([0, 1, 2, 500], tf.int64)).numpy().tolist() == [
        b"0", b"2", b"4", b"n/a"]
    first = tf.data.experimental.index_table_from_dataset(
        tf.data.Dataset.from_tensor_slices(["a", "b"]), vocab_size=1)
    np.testing.assert_array_equal(first.lookup(tf.constant(["a", "b"])).numpy(), [0, -1])
    with pytest.raises(ValueError, match=r"\(key, value\) pairs"):
        tf.data.experimental.table_from_dataset(keys)


def test_namespace_imports():
    import minitf.lookup as lookup
    from minitf.lookup.experimental import MutableHashTable
    assert lookup.StaticHashTable is tf.lookup.StaticHashTable
    assert MutableHashTable is tf.lookup.experimental.MutableHashTable
    assert not hasattr(tf.lookup, "MutableHashTable")    # only under experimental, as TF


def test_table_built_from_traced_tensors_runs_eagerly_with_each_calls_entries():
    @tf.function
    def build_and_lookup(keys, values):
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1)
        return table.lookup(tf.constant(["x", "y"]))

    with pytest.warns(tf.EagerFallbackWarning, match=r"builds a lookup table"):
        first = build_and_lookup(tf.constant(["x"]), tf.constant([1]))
    second = build_and_lookup(tf.constant(["y"]), tf.constant([2]))
    np.testing.assert_array_equal(first.numpy(), [1, -1])
    np.testing.assert_array_equal(second.numpy(), [-1, 2])
