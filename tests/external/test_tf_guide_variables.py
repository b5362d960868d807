"""The examples of the tensorflow.org guide "Introduction to Variables"
(https://www.tensorflow.org/guide/variable), run with ``import minitf as tf``. Values are the ones
the guide prints, or float64 numpy; the printed forms are TensorFlow 2.21's output.

Left out: the complex variable (``tf.Variable([5 + 4j, 6 + 1j])``; minitf has no complex dtypes,
see docs/compat.md) and the device-placement timing; ``tf.device`` blocks are kept (placement
itself is not observable here). Added: a variable created inside a ``tf.function`` on its first
call, as the guide's "Lifecycles" section refers to the tf.function guide for.
"""
import numpy as np
import pytest

import minitf as tf


def _my_tensor():
    return tf.constant([[1.0, 2.0], [3.0, 4.0]])


def test_create_variables_of_several_dtypes():
    my_tensor = _my_tensor()
    my_variable = tf.Variable(my_tensor)
    assert my_variable.dtype == tf.float32 and my_variable.shape == (2, 2)
    np.testing.assert_array_equal(my_variable.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    # Variables can be all kinds of types, just like tensors
    bool_variable = tf.Variable([False, False, False, True])
    assert bool_variable.dtype == tf.bool and bool_variable.shape == (4,)
    np.testing.assert_array_equal(bool_variable.numpy(), [False, False, False, True])
    int_variable = tf.Variable(1)
    assert int_variable.dtype == tf.int32 and int_variable.shape == ()
    float_variable = tf.Variable(1.0)
    assert float_variable.dtype == tf.float32
    from_numpy = tf.Variable(np.zeros(3))
    assert from_numpy.dtype == tf.float64
    given = tf.Variable([1, 2], dtype=tf.float16)
    assert given.dtype == tf.float16
    np.testing.assert_array_equal(given.numpy(), np.array([1, 2], np.float16))


def test_shape_dtype_numpy_and_printing(capsys):
    my_variable = tf.Variable(_my_tensor())
    print("Shape: ", my_variable.shape)
    print("DType: ", my_variable.dtype)
    print("As NumPy: ", my_variable.numpy())
    assert capsys.readouterr().out.splitlines() == [
        "Shape:  (2, 2)",
        "DType:  <dtype: 'float32'>",
        "As NumPy:  [[1. 2.]",
        " [3. 4.]]",
    ]
    assert isinstance(my_variable.numpy(), np.ndarray)
    assert my_variable.numpy().dtype == np.float32
    assert my_variable.shape.as_list() == [2, 2]


def test_variable_repr_names_the_variable():
    my_variable = tf.Variable(_my_tensor())
    assert repr(my_variable).startswith("<tf.Variable '")
    assert repr(my_variable).endswith(
        ":0' shape=(2, 2) dtype=float32, numpy=\narray([[1., 2.],\n       [3., 4.]], "
        "dtype=float32)>")


def test_most_tensor_operations_work_on_variables():
    my_variable = tf.Variable(_my_tensor())
    viewed = tf.convert_to_tensor(my_variable)
    assert isinstance(viewed, tf.Tensor) and not isinstance(viewed, tf.Variable)
    assert viewed.dtype == tf.float32
    np.testing.assert_array_equal(viewed.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    idx = tf.math.argmax(my_variable)
    assert idx.dtype == tf.int64
    np.testing.assert_array_equal(idx.numpy(), [1, 1])
    # This creates a new tensor; it does not reshape the variable.
    reshaped = tf.reshape(my_variable, [1, 4])
    assert isinstance(reshaped, tf.Tensor) and not isinstance(reshaped, tf.Variable)
    np.testing.assert_array_equal(reshaped.numpy(), [[1.0, 2.0, 3.0, 4.0]])
    assert my_variable.shape == (2, 2)
    np.testing.assert_array_equal((my_variable + 1).numpy(), [[2.0, 3.0], [4.0, 5.0]])
    np.testing.assert_array_equal((my_variable @ my_variable).numpy(),
                                  [[7.0, 10.0], [15.0, 22.0]])


def test_assign_keeps_dtype_and_rejects_other_shapes():
    a = tf.Variable([2.0, 3.0])
    # This will keep the same dtype, float32
    a.assign([1, 2])
    assert a.dtype == tf.float32
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
    # Not allowed as it resizes the variable:
    with pytest.raises(ValueError, match="[Ss]hape"):
        a.assign([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])


def test_copying_a_variable_and_assign_add_sub():
    a = tf.Variable([2.0, 3.0])
    # Create b based on the value of a
    b = tf.Variable(a)
    a.assign([5, 6])
    # a and b are different
    np.testing.assert_array_equal(a.numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(b.numpy(), [2.0, 3.0])
    # There are other versions of assign
    np.testing.assert_array_equal(a.assign_add([2, 3]).numpy(), [7.0, 9.0])
    np.testing.assert_array_equal(a.assign_sub([7, 9]).numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(a.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(b.numpy(), [2.0, 3.0])


def test_a_tensor_read_from_a_variable_does_not_change_with_it():
    a = tf.Variable([2.0, 3.0])
    snapshot = tf.convert_to_tensor(a)
    total = a + 0.0
    a.assign([10.0, 20.0])
    np.testing.assert_array_equal(snapshot.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(total.numpy(), [2.0, 3.0])


def test_names_and_trainable():
    my_tensor = _my_tensor()
    # Create a and b; they will have the same name but will be backed by different tensors.
    a = tf.Variable(my_tensor, name="Mark")
    # A new variable with the same name, but different value
    # Note that the scalar add is broadcast
    b = tf.Variable(my_tensor + 1, name="Mark")
    assert a.name == "Mark:0" and b.name == "Mark:0"
    # These are elementwise-unequal, despite having the same name
    eq = a == b
    assert eq.dtype == tf.bool
    np.testing.assert_array_equal(eq.numpy(), [[False, False], [False, False]])
    assert a.trainable
    step_counter = tf.Variable(1, trainable=False)
    assert not step_counter.trainable
    assert step_counter.dtype == tf.int32


def test_trainable_false_variables_are_not_watched():
    x = tf.Variable(3.0)
    step_counter = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as tape:
        y = x * x * step_counter
    dx, ds = tape.gradient(y, [x, step_counter])
    assert float(dx) == 12.0
    assert ds is None


def test_placing_variables_and_tensors():
    with tf.device("CPU:0"):
        # Create some tensors
        a = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        c = tf.matmul(a, b)
    np.testing.assert_array_equal(c.numpy(), [[22.0, 28.0], [49.0, 64.0]])

    with tf.device("CPU:0"):
        a = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = tf.Variable([[1.0, 2.0, 3.0]])
    with tf.device("GPU:0"):
        # Element-wise multiply
        k = a * b
    np.testing.assert_array_equal(k.numpy(), [[1.0, 4.0, 9.0], [4.0, 10.0, 18.0]])


def test_variable_created_under_a_function_on_its_first_call():
    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(tf.ones_like(x) * 2.0)
            return self.v * x

    s = Scale()
    np.testing.assert_array_equal(s(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    s.v.assign([3.0, 4.0])
    np.testing.assert_array_equal(s(tf.constant([1.0, 2.0])).numpy(), [3.0, 8.0])
    assert len(s.trainable_variables) == 1


def test_variable_assignments_inside_a_function():
    v = tf.Variable(1.0)

    @tf.function
    def step(x):
        v.assign_add(x)
        v.assign(v * 2.0)
        return v.read_value()

    assert float(step(tf.constant(1.0))) == 4.0
    assert float(step(tf.constant(1.0))) == 10.0
    assert float(v.numpy()) == 10.0
    assert step.experimental_get_tracing_count() == 1
