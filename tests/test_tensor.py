"""Tensor and Variable: dtypes, operators, indexing, printing, assignment."""
import weakref

import numpy as np
import pytest

import minitf as tf


def test_python_values_take_tf_default_dtypes():
    assert tf.constant(1.5).dtype == tf.float32
    assert tf.constant(3).dtype == tf.int32
    assert tf.constant([1, 2]).dtype == tf.int32
    assert tf.constant([[1.0, 2]]).dtype == tf.float32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant(np.ones(2)).dtype == tf.float64      # numpy arrays keep their dtype
    assert tf.constant(np.int64(3)).dtype == tf.int64
    assert tf.constant(1, dtype=tf.float64).dtype == tf.float64
    assert tf.Variable(2.0).dtype == tf.float32
    assert tf.Variable(np.random.random()).dtype == tf.float32
    assert tf.Variable(1, dtype=tf.float32).dtype == tf.float32
    assert tf.Variable([[2, 2]], dtype=tf.int8).dtype == tf.int8


def test_python_values_with_a_requested_dtype_are_not_rounded_through_float32():
    # TF converts the Python value straight to the requested dtype ("Introduction to
    # Tensors"): 0.1 as float64 is the double 0.1, and 1e-50 / 1e300 survive.
    assert tf.constant(0.1, dtype=tf.float64).numpy() == 0.1
    np.testing.assert_array_equal(tf.constant([1e-50, 1e300], dtype=tf.float64).numpy(),
                                  [1e-50, 1e300])
    assert tf.Variable(1 / 3, dtype=tf.float64).numpy() == 1 / 3
    v = tf.Variable(tf.zeros(2, tf.float64))
    v.assign([0.1, 0.3])
    np.testing.assert_array_equal(v.numpy(), [0.1, 0.3])
    assert tf.fill([2], tf.constant(0.1, tf.float64)).numpy()[1] == 0.1
    assert tf.linspace(tf.constant(0.0, tf.float64), 0.3, 4).numpy()[-1] == 0.3
    # float32 and float16 still round the value once, to their own precision
    assert tf.constant(0.1, dtype=tf.float32).numpy() == np.float32(0.1)
    assert tf.constant(0.1, dtype=tf.float16).numpy() == np.float16(0.1)
    assert tf.constant(2 ** 40, dtype=tf.int64).numpy() == 2 ** 40


def test_dtype_objects():
    assert tf.float32.name == "float32" and repr(tf.float64) == "tf.float64"
    assert tf.as_dtype("float64") is tf.float64 and tf.float64 != tf.float32
    assert tf.float32 == np.float32 and tf.float32 == "float32"
    assert tf.float64.is_floating and tf.int32.is_integer and tf.bool.is_bool
    with pytest.raises(TypeError, match="unknown dtype 'floaty'"):
        tf.constant(1.0, dtype="floaty")
    with pytest.raises(TypeError, match="dtype"):
        tf.zeros((2,), dtype=np.datetime64)
    # numpy's object dtype is TF's string, as tf.as_dtype(np.object_) is tf.string
    assert tf.as_dtype(object) is tf.string
    assert tf.zeros((2,), dtype=object).numpy().tolist() == [b"", b""]


def test_operators_and_reflected_operators():
    a = tf.constant([1.0, 2.0, 4.0])
    np.testing.assert_array_equal((a + 1).numpy(), [2, 3, 5])
    np.testing.assert_array_equal((1 - a).numpy(), [0, -1, -3])
    np.testing.assert_array_equal((2 * a).numpy(), [2, 4, 8])
    np.testing.assert_array_equal((a / 2).numpy(), [0.5, 1, 2])
    np.testing.assert_array_equal((8 / a).numpy(), [8, 4, 2])
    np.testing.assert_array_equal((a // 2).numpy(), [0, 1, 2])
    np.testing.assert_array_equal((a % 3).numpy(), [1, 2, 1])
    np.testing.assert_array_equal((a ** 2).numpy(), [1, 4, 16])
    np.testing.assert_array_equal((2 ** a).numpy(), [2, 4, 16])
    np.testing.assert_array_equal((-a).numpy(), [-1, -2, -4])
    np.testing.assert_array_equal(abs(-a).numpy(), [1, 2, 4])
    np.testing.assert_array_equal((a > 1.5).numpy(), [False, True, True])
    np.testing.assert_array_equal((a == 2.0).numpy(), [False, True, False])
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal((m @ m).numpy(), [[7, 10], [15, 22]])
    np.testing.assert_array_equal((np.eye(2, dtype=np.float32) @ m).numpy(), m.numpy())
    for result in (a + 1, 1 + a, np.ones(3) * a, np.float32(2) * a, a * np.float64(2)):
        assert isinstance(result, tf.Tensor) and result.dtype == tf.float32
    i = tf.constant([1, 2, 3])
    assert (i * 2).dtype == tf.int32 and (i + 1).numpy().tolist() == [2, 3, 4]
    b = tf.constant([True, False])
    assert (b & tf.constant([True, True])).numpy().tolist() == [True, False]
    assert (~b).numpy().tolist() == [False, True]


def test_variable_arithmetic_gives_tensors():
    v = tf.Variable([1.0, 2.0])
    for result in (v + 1, v * v, -v, 2.0 - v):
        assert type(result) is tf.Tensor
    # a slice is a Tensor that can also be assigned into (TF's v[0].assign(...))
    assert isinstance(v[0], tf.Tensor) and not isinstance(v[0], tf.Variable)
    assert float(v[1]) == 2.0


def test_numpy_functions_on_tensors_compute_on_values():
    t = tf.constant([0.0, 1.0])
    out = np.sin(t)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    assert float(np.mean(tf.constant([[1.0, 3.0]]), axis=0)[1]) == 3.0
    np.testing.assert_array_equal(np.asarray(t), [0.0, 1.0])
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_scalars_len_iter_bool():
    s = tf.constant(2.5)
    assert float(s) == 2.5 and int(tf.constant(3)) == 3 and bool(tf.constant(True))
    assert [1, 2, 3][tf.constant(1)] == 2          # integer tensors work as indexes
    t = tf.constant([[1, 2], [3, 4]])
    assert len(t) == 2 and [r.numpy().tolist() for r in t] == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)
    with pytest.raises(TypeError):
        len(s)
    with pytest.raises(TypeError, match="only integer tensors"):
        [1, 2][tf.constant(1.0)]


def test_numpy_returns_host_values():
    assert isinstance(tf.constant(2.0).numpy(), np.float32)
    arr = tf.constant([1.0, 2.0]).numpy()
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32


def test_indexing_and_slicing():
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    ref = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (slice(None, None, -1),),
                (0, slice(1, 3), slice(None, None, 2)), (None, 1), (tf.constant(1), 0)]:
        np.testing.assert_array_equal(x[key].numpy(), ref[key if not isinstance(key, tuple) else
                                                          tuple(int(k) if isinstance(k, tf.Tensor)
                                                                else k for k in key)])
    np.testing.assert_array_equal(x[:, :, tf.newaxis].shape, (2, 3, 1, 4))
    mask = ref[0, 0] > 1
    np.testing.assert_array_equal(x[0, 0][mask].numpy(), ref[0, 0][mask])
    with pytest.raises((IndexError, ValueError)):
        x[5]


def test_slicing_gradient_with_repeated_indices():
    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather(x, [0, 0, 2]) * tf.constant([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 0.0, 3.0])


def test_printing_like_tf():
    assert str(tf.constant(6.0)) == "tf.Tensor(6.0, shape=(), dtype=float32)"
    assert str(tf.constant([9.0, 9.0])) == "tf.Tensor([9. 9.], shape=(2,), dtype=float32)"
    assert str(tf.constant([[1, 2], [3, 4]])) == ("tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), "
                                                 "dtype=int32)")
    assert repr(tf.constant(0.1)) == "<tf.Tensor: shape=(), dtype=float32, numpy=0.1>"
    assert repr(tf.constant([1.0, 2.0])) == ("<tf.Tensor: shape=(2,), dtype=float32, "
                                             "numpy=array([1., 2.], dtype=float32)>")
    assert repr(tf.constant(True)) == "<tf.Tensor: shape=(), dtype=bool, numpy=True>"
    assert repr(tf.Variable(2.0)) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=2.0>"
    assert str(tf.Variable([1, 2], name="counts")) == (
        "<tf.Variable 'counts:0' shape=(2,) dtype=int32, numpy=array([1, 2], dtype=int32)>")
    assert repr(tf.constant([1.0]).shape) == "TensorShape([1])"
    assert str(tf.constant([[1.0]]).shape) == "(1, 1)"
    assert tf.constant([[1.0]]).shape.as_list() == [1, 1]


def test_f_string_formatting_prints_the_value():
    t = tf.constant(108.0)
    assert f"{t}" == "108.0" and f"{t:.2f}" == "108.00" and f"{t:>7}" == "  108.0"
    assert f"{tf.constant([[3.0]])}" == "[[3.]]"
    assert f"{tf.constant(0.1)}" == format(np.float32(0.1), "")
    v = tf.Variable(1.5)
    assert f"{v:.1f}" == "1.5"
    assert f"{v}" == repr(v)  # a variable formats like its repr, as in TF


def test_assign_updates_in_place_and_returns_the_variable():
    v = tf.Variable([1.0, 2.0])
    buffer = v._value
    assert v.assign([3.0, 4.0]) is v
    assert v.assign_add(tf.constant([1.0, 1.0])) is v
    assert v.assign_sub([0.5, 0.5]) is v
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    assert v._value is buffer  # the same buffer
    with pytest.raises(ValueError, match=r"cannot assign a value of shape \(3,\)"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        v.assign(tf.constant([1, 2]))  # an int32 tensor into a float32 variable


def test_variable_owns_its_buffer():
    data = np.array([1.0, 2.0], np.float32)
    v = tf.Variable(data)
    data[0] = 100.0
    assert float(v[0]) == 1.0
    v2 = tf.Variable(lambda: tf.ones((2,)), trainable=False, name="w")
    assert v2.name == "w:0" and not v2.trainable and v2.shape == (2,)
    snapshot = v.read_value()
    v.assign([5.0, 5.0])
    assert float(snapshot[0]) == 1.0 and type(snapshot) is tf.Tensor


def test_mixed_float_dtypes_are_a_clear_error():
    a = tf.constant(1.0)
    b = tf.constant(1.0, dtype=tf.float64)
    with pytest.raises(TypeError, match="add: operands have different dtypes float32 and "
                                        "float64"):
        a + b
    with pytest.raises(TypeError, match="matmul: operands have different dtypes"):
        tf.ones((2, 2)) @ tf.ones((2, 2), dtype=tf.float64)
    with pytest.raises(TypeError, match="cannot combine the int32 tensor with the float 1.5"):
        tf.constant(1) + 1.5


def test_weakref_and_ref():
    t = tf.constant(1.0)
    r = weakref.ref(t)
    assert r() is t
    del t
    assert r() is None
    a, b = tf.constant(1.0), tf.constant(1.0)
    refs = {a.ref(): "a", b.ref(): "b"}
    assert refs[a.ref()] == "a" and refs[b.ref()] == "b" and a.ref().deref() is a


@pytest.mark.cupy
def test_cupy_backend_matches_numpy():
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)

    def run():
        v = tf.Variable(x)
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.tanh(v @ tf.transpose(v)) ** 2)
        return float(y), tape.gradient(y, v).numpy()

    before = tf.get_backend()
    try:
        tf.set_backend("numpy")
        want = run()
        tf.set_backend("cupy")
        got = run()
    finally:
        tf.set_backend(before)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)


def test_numpy_gives_a_copy_and_variables_refuse_in_place_operators():
    # TF: Tensor.numpy() copies (tensors are immutable); `variable += 1` raises RuntimeError
    # (resource_variable_ops), pointing at assign_add.
    t = tf.constant([1.0, 2.0])
    host = t.numpy()
    host[0] = 50.0
    also = np.array(t)
    also[1] = 9.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    v = tf.Variable(1.0, constraint=lambda w: tf.minimum(w, 0.5))
    with pytest.raises(RuntimeError, match="assign_add"):
        v += 1
    assert float(v.constraint(tf.constant(3.0))) == 0.5
    assert tf.Variable(1.0).constraint is None


def test_dtype_printing_and_predicates_as_tf():
    assert str(tf.float32) == "<dtype: 'float32'>" and repr(tf.float32) == "tf.float32"
    assert f"{tf.int64}" == "<dtype: 'int64'>"
    assert [d.is_unsigned for d in (tf.uint8, tf.uint16, tf.int8, tf.bool, tf.float32)] == [
        True, True, False, False, False]
    assert not tf.float64.is_complex


def test_assign_without_reading_the_value_returns_none():
    v = tf.Variable([1.0, 2.0])
    assert v.assign([3.0, 4.0], read_value=False) is None
    assert v.assign_add([1.0, 1.0], read_value=False) is None
    assert v.assign_sub([0.5, 0.5], read_value=False) is None
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    assert v.assign([0.0, 0.0]) is v
