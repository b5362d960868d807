"""TF's rules for what a conversion copies and which dtype ``tf.range`` infers, checkpoints of
lists and dicts, and the errors a replayed function raises (as the eager call would)."""
import numpy as np
import pytest

import minitf as tf


def test_convert_to_tensor_of_a_variable_is_a_snapshot_with_the_gradient():
    v = tf.Variable([1.0, 2.0])
    t = tf.convert_to_tensor(v)
    assert type(t) is tf.Tensor
    v.assign([5.0, 6.0])
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.convert_to_tensor(v) * [2.0, 3.0])
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 3.0])


def test_constant_copies_a_numpy_array_of_its_dtype():
    a = np.array([1.0, 2.0], np.float32)
    c = tf.constant(a)
    a[0] = 99.0
    np.testing.assert_array_equal(c.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("args, kwargs, dtype", [
    ((5,), {}, tf.int32),
    ((tf.constant(5, tf.int64),), {}, tf.int64),
    ((np.int64(4),), {}, tf.int64),
    ((0, 2**40, 2**39), {}, tf.int64),
    ((0.0, 3.0), {}, tf.float32),
    ((tf.constant(3.0, tf.float64),), {}, tf.float64),
    ((1, tf.constant(3.0, tf.float64), 0.5), {}, tf.float64),
    ((3,), {"dtype": tf.float32}, tf.float32),
])
def test_range_infers_the_widest_argument_dtype(args, kwargs, dtype):
    # TF's order int32 < int64 < float32 < float64 (tf.range API page).
    r = tf.range(*args, **kwargs)
    assert r.dtype == dtype
    bounds = [float(a.numpy()) if isinstance(a, tf.Tensor) else a for a in args]
    np.testing.assert_array_equal(r.numpy(), np.arange(*bounds).astype(dtype.as_numpy_dtype))


def test_checkpoint_saves_lists_and_dicts_of_variables(tmp_path):
    vs = [tf.Variable(1.0), tf.Variable([2.0, 3.0])]
    d = {"a": tf.Variable(4.0), "nested": [tf.Variable(5.0)]}
    ckpt = tf.train.Checkpoint(vs=vs, d=d)
    path = ckpt.save(str(tmp_path / "ckpt"))
    vs[0].assign(0.0), vs[1].assign([0.0, 0.0]), d["a"].assign(0.0), d["nested"][0].assign(0.0)
    ckpt.restore(path)
    assert float(vs[0].numpy()) == 1.0 and float(d["a"].numpy()) == 4.0
    np.testing.assert_array_equal(vs[1].numpy(), [2.0, 3.0])
    assert float(d["nested"][0].numpy()) == 5.0
    with pytest.raises(TypeError, match=r"vs\[1\]=str cannot be checkpointed"):
        tf.train.Checkpoint(vs=[tf.Variable(1.0), "x"])


def test_a_replayed_kernel_error_is_the_eager_error_type_naming_the_op():
    @tf.function
    def pick(x, i):
        return tf.gather(x, i) * 2.0

    x = tf.constant([1.0, 2.0])
    assert pick(x, tf.constant([1])).numpy().tolist() == [4.0]     # traced
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"gather: invalid inputs of shapes \(2,\) float32 and \(1,\) int32"):
        pick(x, tf.constant([5]))                                  # replayed

    @tf.function
    def invert(a):
        return tf.linalg.inv(a)

    np.testing.assert_array_equal(invert(tf.eye(2)).numpy(), np.eye(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="inv: .*Singular"):
        invert(tf.zeros((2, 2)))
    with pytest.raises(ValueError):          # InvalidArgumentError is also a ValueError, as in TF
        invert(tf.zeros((2, 2)))
