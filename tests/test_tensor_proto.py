"""tf.io.serialize_tensor / parse_tensor, the SparseTensor serializations, decode_json_example
and SparseFeature / RaggedFeature parsing. Expected bytes and values were produced by
TensorFlow 2.21 and are pasted here as literals."""
import numpy as np
import pytest

import minitf as tf


SERIALIZED = [
    (tf.float32, 1.5, b'\x08\x01\x12\x00"\x04\x00\x00\xc0?'),
    (tf.float32, [1.5, -2.0], b'\x08\x01\x12\x04\x12\x02\x08\x02"\x08\x00\x00\xc0?\x00\x00\x00\xc0'),
    (tf.int32, [[1, 2, 3], [4, 5, 6]],
     b'\x08\x03\x12\x08\x12\x02\x08\x02\x12\x02\x08\x03"\x18\x01\x00\x00\x00\x02\x00\x00\x00'
     b'\x03\x00\x00\x00\x04\x00\x00\x00\x05\x00\x00\x00\x06\x00\x00\x00'),
    (tf.int64, [1, -2], b'\x08\t\x12\x04\x12\x02\x08\x02"\x10\x01\x00\x00\x00\x00\x00\x00\x00'
                        b'\xfe\xff\xff\xff\xff\xff\xff\xff'),
    (tf.float64, [1.0, 2.5], b'\x08\x02\x12\x04\x12\x02\x08\x02"\x10\x00\x00\x00\x00\x00\x00'
                             b'\xf0?\x00\x00\x00\x00\x00\x00\x04@'),
    (tf.bool, [True, False, True], b'\x08\n\x12\x04\x12\x02\x08\x03"\x03\x01\x00\x01'),
    (tf.uint8, [1, 255], b'\x08\x04\x12\x04\x12\x02\x08\x02"\x02\x01\xff'),
    (tf.float16, [1.0, -0.5], b'\x08\x13\x12\x04\x12\x02\x08\x02"\x04\x00<\x00\xb8'),
    (tf.int8, 7, b'\x08\x06\x12\x00"\x01\x07'),
    (tf.int16, [1, -2], b'\x08\x05\x12\x04\x12\x02\x08\x02"\x04\x01\x00\xfe\xff'),
    (tf.uint16, [1, 2], b'\x08\x11\x12\x04\x12\x02\x08\x02"\x04\x01\x00\x02\x00'),
    (tf.uint32, [1, 2], b'\x08\x16\x12\x04\x12\x02\x08\x02"\x08\x01\x00\x00\x00\x02\x00\x00\x00'),
    (tf.uint64, [1, 2], b'\x08\x17\x12\x04\x12\x02\x08\x02"\x10\x01\x00\x00\x00\x00\x00\x00\x00'
                        b'\x02\x00\x00\x00\x00\x00\x00\x00'),
    (tf.string, [[b"ab", b""], [b"xyz", "é".encode()]],
     b'\x08\x07\x12\x08\x12\x02\x08\x02\x12\x02\x08\x02B\x02abB\x00B\x03xyzB\x02\xc3\xa9'),
    (tf.string, b"hello", b'\x08\x07\x12\x00B\x05hello'),
]


@pytest.mark.parametrize("dtype,value,expected", SERIALIZED,
                         ids=[f"{d.name}-{i}" for i, (d, _, _) in enumerate(SERIALIZED)])
def test_serialize_tensor_matches_tf_bytes_and_round_trips(dtype, value, expected):
    t = tf.constant(value, dtype=dtype)
    data = tf.io.serialize_tensor(t)
    assert data.dtype == tf.string and data.shape == ()
    assert data.numpy() == expected
    back = tf.io.parse_tensor(expected, dtype)
    assert back.dtype == dtype and back.shape == t.shape
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_empty_tensor_has_no_content():
    data = tf.io.serialize_tensor(tf.zeros((0, 3))).numpy()
    assert data == b'\x08\x01\x12\x06\x12\x00\x12\x02\x08\x03'
    assert tf.io.parse_tensor(data, tf.float32).shape == (0, 3)


def test_parse_tensor_reads_typed_value_fields():
    # tf.make_tensor_proto(...).SerializeToString(): float_val with one value repeated to fill
    filled = b'\x08\x01\x12\x08\x12\x02\x08\x02\x12\x02\x08\x02*\x04\x00\x00@@'
    np.testing.assert_array_equal(tf.io.parse_tensor(filled, tf.float32).numpy(),
                                  [[3.0, 3.0], [3.0, 3.0]])
    zeros = b'\x08\x01\x12\x04\x12\x02\x08\x02'   # no values: zeros
    assert tf.io.parse_tensor(zeros, tf.float32).numpy().tolist() == [0.0, 0.0]
    ints = b'\x08\x03\x12\x04\x12\x02\x08\x02:\x0b\x05\xf9\xff\xff\xff\xff\xff\xff\xff\xff\x01'
    np.testing.assert_array_equal(tf.io.parse_tensor(ints, tf.int32).numpy(), [5, -7])


def test_parse_tensor_errors():
    data = tf.io.serialize_tensor(tf.constant([1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"parse_tensor: type mismatch.*"
                                                             r"\(float32\).*\(int32\)"):
        tf.io.parse_tensor(data, tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="parse_tensor: could not parse"):
        tf.io.parse_tensor(b"\x08\x01\x22\x09abc", tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a scalar string"):
        tf.io.parse_tensor([data.numpy()], tf.float32)


def test_serialize_sparse_matches_tf():
    sp = tf.SparseTensor([[0, 1], [2, 3]], [1.5, 2.5], [3, 4])
    assert tf.io.serialize_sparse(sp).numpy().tolist() == [
        b'\x08\t\x12\x08\x12\x02\x08\x02\x12\x02\x08\x02" \x00\x00\x00\x00\x00\x00\x00\x00'
        b'\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00'
        b'\x00\x00\x00\x00',
        b'\x08\x01\x12\x04\x12\x02\x08\x02"\x08\x00\x00\xc0?\x00\x00 @',
        b'\x08\t\x12\x04\x12\x02\x08\x02"\x10\x03\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00'
        b'\x00\x00\x00\x00']
    strings = tf.io.serialize_sparse(tf.SparseTensor([[0, 1], [2, 3]], [b"a", b"bc"], [3, 4]))
    assert strings.numpy()[1] == b'\x08\x07\x12\x04\x12\x02\x08\x02"\x05\x01\x02abc'


def test_serialize_many_sparse_and_back():
    sp = tf.SparseTensor([[0, 0], [0, 2], [2, 1]], [1, 2, 3], [3, 4])
    table = tf.io.serialize_many_sparse(sp)
    assert table.shape == (3, 3)
    assert table.numpy()[1].tolist() == [b'\x08\t\x12\x06\x12\x00\x12\x02\x08\x01',
                                         b'\x08\x03\x12\x02\x12\x00',
                                         b'\x08\t\x12\x04\x12\x02\x08\x01"\x08\x04\x00\x00\x00'
                                         b'\x00\x00\x00\x00']
    assert table.numpy()[2, 1] == b'\x08\x03\x12\x04\x12\x02\x08\x01"\x04\x03\x00\x00\x00'
    back = tf.io.deserialize_many_sparse(table, tf.int32)
    assert back.indices.numpy().tolist() == [[0, 0], [0, 2], [2, 1]]
    assert back.values.numpy().tolist() == [1, 2, 3] and back.dtype == tf.int32
    assert back.dense_shape.numpy().tolist() == [3, 4]
    with pytest.raises(tf.errors.InvalidArgumentError, match="entry 0 holds int32 values, "
                                                             "dtype is float32"):
        tf.io.deserialize_many_sparse(table, tf.float32)
    with pytest.raises(TypeError, match="out_type must be tf.string"):
        tf.io.serialize_sparse(sp, out_type=tf.int32)


def test_decode_json_example_matches_tf_bytes():
    text = ('{"features": {"feature": {"a": {"int64List": {"value": ["1", 2]}}, '
            '"b": {"bytesList": {"value": ["aGk="]}}, "c": {"floatList": {"value": [1.5]}}}}}')
    out = tf.io.decode_json_example([text])
    assert out.numpy().tolist() == [
        b'\n(\n\x0b\n\x01a\x12\x06\x1a\x04\x08\x01\x08\x02\n\x0b\n\x01b\x12\x06\n\x04\n\x02hi'
        b'\n\x0c\n\x01c\x12\x07\x12\x05\r\x00\x00\xc0?']
    parsed = tf.io.parse_single_example(out[0], {"a": tf.io.VarLenFeature(tf.int64)})
    assert parsed["a"].values.numpy().tolist() == [1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_json_example: not valid"):
        tf.io.decode_json_example("{")
    with pytest.raises(tf.errors.InvalidArgumentError, match="feature 'x' must be an object"):
        tf.io.decode_json_example('{"features": {"feature": {"x": {"intList": {}}}}}')


def test_serialization_inside_function_follows_values():
    serialize = tf.function(tf.io.serialize_tensor)   # a replayed plan step
    assert serialize(tf.constant([1, 2])).numpy() == tf.io.serialize_tensor([1, 2]).numpy()
    assert serialize(tf.constant([5, 7])).numpy() == tf.io.serialize_tensor([5, 7]).numpy()
    round_trip = tf.function(lambda x: tf.io.parse_tensor(tf.io.serialize_tensor(x), tf.int32))
    with pytest.warns(tf.EagerFallbackWarning, match="parse_tensor"):
        assert round_trip(tf.constant([1, 2])).numpy().tolist() == [1, 2]
    assert round_trip(tf.constant([5, 7, 9])).numpy().tolist() == [5, 7, 9]


# Two Examples written by TF (tf.train.Example(...).SerializeToString()).
E1 = (b'\nb\n\x0f\n\x02rv\x12\t\x1a\x07\n\x05\x01\x02\x03\x04\x05\n\r\n\x02rl\x12\x07\x1a\x05'
      b'\n\x03\x02\x00\x03\n\x0c\n\x02iy\x12\x06\x1a\x04\n\x02\x00\x02\n\x0f\n\x05inner\x12'
      b'\x06\x1a\x04\n\x02\x01\x01\n\x0c\n\x02ix\x12\x06\x1a\x04\n\x02\x03\x01\n\x13\n\x03val'
      b'\x12\x0c\x12\n\n\x08\x00\x00\xc0?\x00\x00 @')
E2 = (b'\nU\n\x0b\n\x02rv\x12\x05\x1a\x03\n\x01\x07\n\x0b\n\x02rl\x12\x05\x1a\x03\n\x01\x01\n'
      b'\x0b\n\x02iy\x12\x05\x1a\x03\n\x01\x01\n\x0e\n\x05inner\x12\x05\x1a\x03\n\x01\x01\n'
      b'\x0b\n\x02ix\x12\x05\x1a\x03\n\x01\x04\n\x0f\n\x03val\x12\x08\x12\x06\n\x04\x00\x00'
      b'\x10A')


def _spec():
    return {"sp": tf.io.SparseFeature(["ix", "iy"], "val", tf.float32, [5, 3]),
            "sp1": tf.io.SparseFeature("ix", "val", tf.float32, 6),
            "rg": tf.io.RaggedFeature(tf.int64, value_key="rv",
                                      partitions=[tf.io.RaggedFeature.RowLengths("rl")]),
            "rv": tf.io.RaggedFeature(tf.int64),
            "rg2": tf.io.RaggedFeature(tf.int64, value_key="rv",
                                       partitions=[tf.io.RaggedFeature.UniformRowLength(1)])}


def _sparse(sp):
    return sp.indices.numpy().tolist(), sp.values.numpy().tolist(), sp.dense_shape.numpy().tolist()


def test_sparse_and_ragged_features_single_example():
    out = tf.io.parse_single_example(E1, _spec())
    assert _sparse(out["sp"]) == ([[1, 2], [3, 0]], [2.5, 1.5], [5, 3])
    assert _sparse(out["sp1"]) == ([[1], [3]], [2.5, 1.5], [6])
    assert out["rg"].to_list() == [[1, 2], [], [3, 4, 5]]
    assert out["rg"].row_splits.dtype == tf.int32
    assert out["rv"].numpy().tolist() == [1, 2, 3, 4, 5]
    assert out["rg2"].numpy().tolist() == [[1], [2], [3], [4], [5]]
    assert set(out) == {"sp", "sp1", "rg", "rv", "rg2"}


def test_sparse_and_ragged_features_batch():
    out = tf.io.parse_example([E1, E2], _spec())
    assert _sparse(out["sp"]) == ([[0, 1, 2], [0, 3, 0], [1, 4, 1]], [2.5, 1.5, 9.0], [2, 5, 3])
    assert _sparse(out["sp1"]) == ([[0, 1], [0, 3], [1, 4]], [2.5, 1.5, 9.0], [2, 6])
    assert out["rg"].to_list() == [[[1, 2], [], [3, 4, 5]], [[7]]]
    assert out["rv"].to_list() == [[1, 2, 3, 4, 5], [7]]
    assert out["rg2"].to_list() == [[[1], [2], [3], [4], [5]], [[7]]]
    assert tuple(out["rg2"].shape) == (2, None, 1)


def test_feature_errors():
    bad = {"sp": tf.io.SparseFeature("ix", "val", tf.float32, 2)}
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"SparseFeature 'sp': index \[3\] of example 0 is out of bounds"):
        tf.io.parse_single_example(E1, bad)
    lengths = {"r": tf.io.RaggedFeature(tf.int64, value_key="rv",
                                        partitions=[tf.io.RaggedFeature.RowLengths("inner")])}
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"RaggedFeature 'r': RowLengths\('inner'\) = \[1, 1\] does not "
                             r"partition 5 values"):
        tf.io.parse_single_example(E1, lengths)
