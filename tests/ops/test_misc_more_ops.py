"""bitcast, realdiv, parallel_stack, histogram_fixed_width_bins, edit_distance, fingerprint,
invert_permutation, approx_max_k/min_k and the small graph helpers.

Expected values were computed with TensorFlow 2.21 and pasted as literals, except where a
comment says they are hand-computed.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.ops import misc_more_ops as _m


@pytest.mark.parametrize("src, dtype, shape, expected", [
    (np.array([1.0, -2.5], np.float32), "int32", (2,), [1065353216, -1071644672]),
    (np.array([1, 256, 65535], np.int32), "uint8", (3, 4),
     [[1, 0, 0, 0], [0, 1, 0, 0], [255, 255, 0, 0]]),
    (np.array([[1, 2], [3, 4]], np.uint8), "int16", (2,), [513, 1027]),
    (np.array(3.0, np.float64), "int32", (2,), [0, 1074266112]),
])
def test_bitcast(src, dtype, shape, expected):
    out = tf.bitcast(tf.constant(src), getattr(tf, dtype))
    assert out.dtype == getattr(tf, dtype)
    assert tuple(out.shape) == shape
    assert out.numpy().tolist() == expected


def test_bitcast_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="last dimension must be 2"):
        tf.bitcast(tf.constant([1, 2, 3], tf.uint8), tf.int16)
    with pytest.raises(TypeError, match="bitcast: input dtype must be numeric, got bool"):
        tf.bitcast(tf.constant([True]), tf.uint8)


def test_realdiv_and_parallel_stack():
    assert tf.realdiv(tf.constant([7.0, -1.0]), 2.0).numpy().tolist() == [3.5, -0.5]
    with pytest.raises(TypeError, match="realdiv: expects floating-point .* got dtype int32"):
        tf.realdiv(tf.constant(7), tf.constant(2))
    assert tf.parallel_stack([[1, 2], [3, 4], [5, 6]]).numpy().tolist() == [[1, 2], [3, 4],
                                                                           [5, 6]]


def test_histogram_fixed_width_bins():
    # also the example of TF's docs: values [-1, 0, 1.5, 2, 5, 15], range [0, 5], 5 bins
    bins = tf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0, 15], [0.0, 5.0], nbins=5)
    assert bins.dtype == tf.int32
    assert bins.numpy().tolist() == [0, 0, 1, 2, 4, 4]
    two_d = tf.histogram_fixed_width_bins([[0.1, 0.9], [0.5, 0.49]], [0.0, 1.0], nbins=2)
    assert two_d.numpy().tolist() == [[0, 1], [1, 0]]    # hand-computed
    with pytest.raises(tf.errors.InvalidArgumentError, match="nbins must be >= 1, got 0"):
        tf.histogram_fixed_width_bins([1.0], [0.0, 1.0], nbins=0)


def test_math_members():
    assert tf.math.invert_permutation([3, 4, 0, 2, 1]).numpy().tolist() == [2, 4, 3, 0, 1]
    with pytest.raises(tf.errors.InvalidArgumentError, match="permutation of 0..2, got "
                       "\\[0, 0, 2\\]"):
        tf.math.invert_permutation([0, 0, 2])
    assert tf.math.softsign([-3.0, 0.5]).numpy().tolist() == pytest.approx([-0.75, 1 / 3])
    zf = tf.math.zero_fraction([[0.0, 1.0], [0.0, 0.0]])
    assert zf.dtype == tf.float32 and float(zf) == 0.75
    assert tf.math.scalar_mul(2.0, tf.constant([1.0, -3.0])).numpy().tolist() == [2.0, -6.0]
    assert tf.math.logical_xor([True, True, False], [True, False, False]).numpy().tolist() == [
        False, True, False]


def test_approx_top_k():
    v = np.array([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]], np.float32)
    values, indices = tf.math.approx_max_k(v, 2)
    assert values.numpy().tolist() == [[5.0, 4.0], [9.0, 6.0]]
    assert indices.numpy().tolist() == [[4, 2], [0, 2]]
    assert tf.nn.approx_max_k is tf.math.approx_max_k
    # hand-computed (TF's CPU kernel has only the max version on the last axis)
    values, indices = tf.math.approx_min_k(v, 2)
    assert values.numpy().tolist() == [[1.0, 1.0], [2.0, 3.0]]
    assert indices.numpy().tolist() == [[1, 3], [1, 4]]
    values, indices = tf.math.approx_max_k(v, 1, reduction_dimension=0)
    assert values.numpy().tolist() == [[9.0, 2.0, 6.0, 5.0, 5.0]]
    assert indices.numpy().tolist() == [[1, 1, 1, 1, 0]]
    values, _ = tf.approx_top_k(v, 2, is_max_k=False)
    assert values.numpy().tolist() == [[1.0, 1.0], [2.0, 3.0]]
    x = tf.constant(v)
    with tf.GradientTape() as tape:
        tape.watch(x)
        total = tf.reduce_sum(tf.math.approx_max_k(x, 2)[0])
    assert tape.gradient(total, x).numpy().tolist() == [[0, 0, 1, 0, 1], [1, 0, 1, 0, 0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="k=6 must be in \\[0, 5\\]"):
        tf.math.approx_max_k(v, 6)


def test_edit_distance_strings_docs_example():
    # the example of tf.edit_distance's documentation
    hypothesis = tf.SparseTensor([[0, 0, 0], [1, 0, 0]], ["a", "b"], (2, 1, 1))
    truth = tf.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]],
                            ["a", "b", "c", "a"], (2, 2, 2))
    out = tf.edit_distance(hypothesis, truth, normalize=True)
    assert out.dtype == tf.float32
    assert out.numpy().tolist() == [[np.inf, 1.0], [0.5, 1.0]]
    assert tf.edit_distance(hypothesis, truth, normalize=False).numpy().tolist() == [
        [1.0, 1.0], [1.0, 1.0]]


def test_edit_distance_ints():
    h = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [2, 0]], [1, 2, 3, 4, 5, 6],
                        (4, 3))
    t = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [1, 3]], [1, 3, 5, 4, 5, 7],
                        (3, 4))
    assert tf.edit_distance(h, t).numpy().tolist() == [0.5, 0.5, np.inf, 0.0]
    assert tf.edit_distance(h, t, normalize=False).numpy().tolist() == [1.0, 2.0, 1.0, 0.0]
    with pytest.raises(TypeError, match="truth must be a SparseTensor, got list"):
        tf.edit_distance(h, [1, 2])
    with pytest.raises(TypeError, match="same dtype, got int32 and float32"):
        tf.edit_distance(h, tf.SparseTensor([[0, 0]], [1.0], (1, 1)))


def test_fingerprint():
    assert tf.fingerprint(tf.constant(["a", "hello"])).numpy().tolist() == [
        [227, 117, 223, 182, 101, 66, 69, 179], [232, 12, 56, 49, 169, 229, 139, 180]]
    out = tf.fingerprint(tf.constant([["a", "b"], ["c", "d"]]))
    assert out.dtype == tf.uint8
    assert out.numpy().tolist() == [[122, 64, 59, 169, 136, 60, 55, 83],
                                    [52, 252, 224, 38, 64, 226, 155, 60]]
    assert tf.fingerprint(np.array([[1, 2], [3, 4]], np.int32)).numpy().tolist() == [
        [76, 18, 253, 133, 168, 204, 240, 10], [254, 162, 60, 240, 103, 244, 53, 255]]
    assert tf.fingerprint(np.array([1.5, 2.0], np.float32)).numpy().tolist() == [
        [64, 181, 56, 72, 223, 224, 189, 72], [156, 206, 45, 21, 1, 1, 236, 37]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="unsupported method 'md5'"):
        tf.fingerprint(tf.constant(["a"]), method="md5")
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank >= 1, got shape \\(\\)"):
        tf.fingerprint(tf.constant(1))


def test_graph_helpers():
    assert tf.no_op() is None
    assert tf.group(tf.constant(1), tf.constant(2)) is None
    a = tf.constant([1.0, 2.0])
    out = tf.tuple([a, None])
    assert isinstance(out, list) and out[1] is None
    assert out[0].numpy().tolist() == [1.0, 2.0]
    assert tf.get_current_name_scope() == ""
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            assert tf.get_current_name_scope() == "outer/inner"
    assert tf.AggregationMethod.ADD_N == tf.AggregationMethod.DEFAULT == 0
    assert tf.AggregationMethod.EXPERIMENTAL_TREE == 1


def test_grad_pass_through():
    x = tf.Variable([0.4, 1.6])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.grad_pass_through(tf.round)(x) * [2.0, 3.0])
    assert float(y) == 6.0                                   # round: [0, 2]
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 3.0]  # identity gradient


def test_no_gradient():
    tf.no_gradient("MyCustomOpWithoutGradient")
    assert "MyCustomOpWithoutGradient" in _m.NO_GRADIENT
    with pytest.raises(KeyError, match="Registering two gradient with name 'Sin'"):
        tf.no_gradient("Sin")
    with pytest.raises(TypeError, match="op_type must be a string, got 3"):
        tf.no_gradient(3)


def test_inside_function_uses_each_call_values():
    @tf.function
    def inverse_and_bits(perm, x):
        return tf.math.invert_permutation(perm), tf.bitcast(x, tf.int32)

    inv, bits = inverse_and_bits(tf.constant([2, 0, 1]), tf.constant([1.0]))
    assert inv.numpy().tolist() == [1, 2, 0] and bits.numpy().tolist() == [1065353216]
    inv, bits = inverse_and_bits(tf.constant([1, 2, 0]), tf.constant([2.0]))
    assert inv.numpy().tolist() == [2, 0, 1] and bits.numpy().tolist() == [1073741824]
