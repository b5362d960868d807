"""TF-compatibility of TensorShape, tf.nest, DType.min/max, saturate_cast, one_hot's dtype
and dtype=None / missing bfloat16 errors."""
import collections
import copy
import pickle

import numpy as np
import pytest

import minitf as tf


# --- tf.TensorShape (https://www.tensorflow.org/api_docs/python/tf/TensorShape) -------------

def test_shape_equals_lists_and_tuples():
    shape = tf.zeros([3, 4, 5]).shape
    assert shape == [3, 4, 5] and [3, 4, 5] == shape
    assert shape == (3, 4, 5) and shape == tf.TensorShape([3, 4, 5])
    assert shape != [3, 4] and not (shape != [3, 4, 5])
    assert shape != [3, 4, 6] and shape != "345" and shape != 3
    assert tf.TensorShape([None, 3]) == [None, 3]


def test_shape_hashes_like_a_tuple():
    shape = tf.zeros([3, 4]).shape
    assert hash(shape) == hash((3, 4))
    assert {shape: "x"}[(3, 4)] == "x" and {(3, 4): "y"}[shape] == "y"


def test_shape_indexing_and_slicing():
    shape = tf.zeros([3, 4, 5]).shape
    assert shape[0] == 3 and type(shape[0]) is int and shape[-1] == 5
    rest = shape[1:]
    assert isinstance(rest, tf.TensorShape) and rest == [4, 5]
    assert repr(rest) == "TensorShape([4, 5])"
    assert tf.TensorShape([None, 2])[0] is None
    assert str(shape) == "(3, 4, 5)" and repr(shape) == "TensorShape([3, 4, 5])"


def test_shape_rank_dims_and_elements():
    shape = tf.TensorShape([2, None, 3])
    assert shape.rank == shape.ndims == 3
    assert shape.dims == [2, None, 3] and shape.as_list() == [2, None, 3]
    assert not shape.is_fully_defined() and shape.num_elements() is None
    full = tf.TensorShape([2, 3, 4])
    assert full.is_fully_defined() and full.num_elements() == 24
    assert tf.TensorShape([]).num_elements() == 1 and tf.TensorShape([]).rank == 0


def test_shape_compatibility_merge_and_concatenate():
    shape = tf.TensorShape([None, 3])
    assert shape.is_compatible_with([5, 3]) and shape.is_compatible_with([None, None])
    assert not shape.is_compatible_with([5, 4]) and not shape.is_compatible_with([5, 3, 1])
    assert shape.is_compatible_with(tf.TensorShape(None))
    merged = shape.merge_with([7, None])
    assert isinstance(merged, tf.TensorShape) and merged == [7, 3]
    with pytest.raises(ValueError):
        shape.merge_with([7, 4])
    with pytest.raises(ValueError):
        shape.merge_with([7])
    assert shape.concatenate([5]) == [None, 3, 5]
    assert isinstance(shape.concatenate(tf.TensorShape([1])), tf.TensorShape)


def test_unknown_rank_shape():
    unknown = tf.TensorShape(None)
    assert isinstance(unknown, tf.TensorShape)
    assert unknown.rank is None and unknown.ndims is None and unknown.dims is None
    with pytest.raises(ValueError):
        unknown.as_list()
    with pytest.raises(ValueError):
        len(unknown)
    assert not unknown.is_fully_defined() and unknown.num_elements() is None
    assert unknown.is_compatible_with([1, 2, 3]) and unknown.is_compatible_with(unknown)
    assert unknown.merge_with([1, None]) == [1, None]
    assert tf.TensorShape([1]).merge_with(unknown) == [1]
    assert unknown.concatenate([2]).rank is None
    assert unknown == tf.TensorShape(None) and unknown != tf.TensorShape([])
    assert tf.TensorShape([]) != unknown
    assert repr(unknown) == "TensorShape(None)" and str(unknown) == "<unknown>"
    assert unknown[0] is None


def test_shape_pickles_and_copies():
    for shape in (tf.TensorShape([2, None]), tf.TensorShape(None)):
        for again in (pickle.loads(pickle.dumps(shape)), copy.deepcopy(shape)):
            assert isinstance(again, tf.TensorShape)
            assert again.rank == shape.rank and again == shape


# --- tf.nest (https://www.tensorflow.org/api_docs/python/tf/nest) -----------------------------

def test_nest_flatten_returns_a_list():
    flat = tf.nest.flatten([1, [2, (3, {"b": 5, "a": 4})]])
    assert isinstance(flat, list) and flat == [1, 2, 3, 4, 5] and flat[0] == 1
    assert tf.nest.flatten(None) == [None] and tf.nest.flatten("ab") == ["ab"]


def test_nest_is_nested():
    Point = collections.namedtuple("Point", "x y")
    assert tf.nest.is_nested([1]) and tf.nest.is_nested((1,)) and tf.nest.is_nested({"a": 1})
    assert tf.nest.is_nested(Point(1, 2))
    assert not tf.nest.is_nested(1) and not tf.nest.is_nested("abc")
    assert not tf.nest.is_nested(np.zeros(3)) and not tf.nest.is_nested(tf.constant([1, 2]))


def test_nest_assert_same_structure():
    tf.nest.assert_same_structure([1, (2, 3)], ["a", ("b", "c")])
    tf.nest.assert_same_structure({"a": 1, "b": [2]}, {"b": [0], "a": 0})
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure([1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure([1, [2]], [1, 2])
    with pytest.raises(ValueError):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure([1, 2], (1, 2))
    tf.nest.assert_same_structure([1, 2], (1, 2), check_types=False)


def test_nest_assert_same_structure_namedtuples():
    P1 = collections.namedtuple("P", "x y")
    P2 = collections.namedtuple("P", "x y")
    Q = collections.namedtuple("Q", "x y")
    tf.nest.assert_same_structure(P1(1, 2), P2(3, 4))  # same name and fields: one type
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure(P1(1, 2), Q(1, 2))
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure(P1(1, 2), (1, 2))


# --- tf.dtypes.DType.min/max (https://www.tensorflow.org/api_docs/python/tf/dtypes/DType) ---

def test_dtype_min_max():
    assert tf.float32.min == np.finfo(np.float32).min and tf.float32.max == np.finfo(np.float32).max
    assert tf.float64.max == np.finfo(np.float64).max and tf.float16.min == -65504.0
    assert tf.int32.max == 2**31 - 1 and tf.int32.min == -2**31
    assert tf.int64.max == 2**63 - 1 and tf.uint8.min == 0 and tf.uint8.max == 255
    assert tf.int8.min == -128 and tf.int16.max == 32767
    with pytest.raises(TypeError):  # TF: bool has no min or max
        tf.bool.min
    with pytest.raises(TypeError):
        tf.bool.max


# https://www.tensorflow.org/api_docs/python/tf/dtypes/saturate_cast
def test_saturate_cast():
    out = tf.dtypes.saturate_cast(tf.constant([300.0, -5.0, 7.0]), tf.uint8)
    assert out.dtype == tf.uint8 and out.numpy().tolist() == [255, 0, 7]
    big = tf.saturate_cast(tf.constant([3e10, -3e10]), tf.int32).numpy()
    assert big.dtype == np.int32 and big[0] > 2**31 - 200 and big[1] == -2**31
    assert tf.saturate_cast(tf.constant([1000], tf.int32), tf.int8).numpy().tolist() == [127]
    wide = tf.saturate_cast(tf.constant([1e300], tf.float64), tf.float32).numpy()
    assert wide[0] == np.finfo(np.float32).max


# --- tf.one_hot (https://www.tensorflow.org/api_docs/python/tf/one_hot) -----------------------

def test_one_hot_dtype_from_values():
    out = tf.one_hot([0, 2], 3, on_value=1, off_value=0)
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), [[1, 0, 0], [0, 0, 1]])
    assert tf.one_hot([1], 2, on_value=5.0).dtype == tf.float32
    assert tf.one_hot([1], 2, off_value=-1).numpy().tolist() == [[-1, 1]]
    assert tf.one_hot([1], 2).dtype == tf.float32
    assert tf.one_hot([1], 2, dtype=tf.int64).dtype == tf.int64
    both = tf.one_hot([1], 2, on_value=3, off_value=-3, dtype=tf.float64)  # ints take dtype
    assert both.dtype == tf.float64 and both.numpy().tolist() == [[-3.0, 3.0]]
    t = tf.one_hot([0], 2, on_value=tf.constant(2, tf.int64), off_value=tf.constant(0, tf.int64))
    assert t.dtype == tf.int64 and t.numpy().tolist() == [[2, 0]]


def test_one_hot_dtype_mismatch_is_type_error():
    with pytest.raises(TypeError):
        tf.one_hot([0], 2, on_value=1.0, off_value=0)
    with pytest.raises(TypeError):
        tf.one_hot([0], 2, on_value=tf.constant(1.0), dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.one_hot([0], 2, off_value=tf.constant(0, tf.int64), dtype=tf.int32)


# --- dtype None / bfloat16 (https://www.tensorflow.org/api_docs/python/tf/dtypes/as_dtype) ---

def test_dtype_none_is_a_type_error():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="dtype is None"):
        tf.cast(x, None)
    with pytest.raises(TypeError, match="dtype is None"):
        tf.as_dtype(None)
    assert tf.float64 != None  # noqa: E711 - numpy.dtype(None) is float64; a DType is not None


def test_bfloat16_unavailable_is_clear():
    x = tf.constant([1.0, 2.0])
    if tf.bfloat16 is not None:
        y = tf.cast(x, tf.bfloat16)
        assert y.dtype == tf.bfloat16 and y.dtype.name == "bfloat16"
        assert float(tf.bfloat16.max) == pytest.approx(3.3895314e38, rel=1e-6)
        return
    with pytest.raises(TypeError, match="ml_dtypes"):
        tf.cast(x, tf.bfloat16)
    with pytest.raises(TypeError, match="ml_dtypes"):
        tf.cast(x, "bfloat16")
