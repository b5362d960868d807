"""The examples of the tensorflow.org guide "Introduction to graphs and tf.function"
(https://www.tensorflow.org/guide/intro_to_graphs), run with ``import minitf as tf``. Values are
the ones the guide prints, float64/int32 numpy, and the printed lines and trace counts the guide
states.

Left out: graph inspection (``tf.autograph.to_code``, ``.graph.as_graph_def()``,
``pretty_printed_concrete_signatures()``; minitf has no graph object, see docs/compat.md section
"function"; the trace counts are asserted with ``experimental_get_tracing_count`` instead) and the
timings of the speed-up section (the results of the eager and graph runs are compared instead).
The MSE example uses fixed integer inputs in place of ``tf.random.uniform`` so that the value
can be asserted.
"""
import numpy as np
import pytest

import minitf as tf


def a_regular_function(x, y, b):
    x = tf.matmul(x, y)
    x = x + b
    return x


def test_tf_function_of_a_python_function():
    # `a_function_that_uses_a_graph` is a TensorFlow `Function`.
    a_function_that_uses_a_graph = tf.function(a_regular_function)
    x1 = tf.constant([[1.0, 2.0]])
    y1 = tf.constant([[2.0], [3.0]])
    b1 = tf.constant(4.0)
    orig_value = a_regular_function(x1, y1, b1).numpy()
    # Call a `tf.function` like a Python function.
    tf_function_value = a_function_that_uses_a_graph(x1, y1, b1).numpy()
    assert orig_value == tf_function_value
    np.testing.assert_array_equal(tf_function_value, [[12.0]])
    assert tf_function_value.dtype == np.float32


def inner_function(x, y, b):
    x = tf.matmul(x, y)
    x = x + b
    return x


# Use the decorator to make `outer_function` a `tf.function`.
@tf.function
def outer_function(x):
    y = tf.constant([[2.0], [3.0]])
    b = tf.constant(4.0)
    return inner_function(x, y, b)


def test_tf_function_applies_to_nested_functions():
    # Note that the callable will create a graph that includes `inner_function` as well as
    # `outer_function`.
    out = outer_function(tf.constant([[1.0, 2.0]]))
    assert out.shape == (1, 1) and out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [[12.0]])
    out = outer_function(tf.constant([[-1.0, 0.5]]))
    np.testing.assert_array_equal(out.numpy(), [[-2.0 + 1.5 + 4.0]])


def simple_relu(x):
    if tf.greater(x, 0):
        return x
    else:
        return 0


def test_converting_python_control_flow():
    # `tf_simple_relu` is a TensorFlow `Function` that wraps `simple_relu`.
    tf_simple_relu = tf.function(simple_relu)
    assert tf_simple_relu(tf.constant(1)).numpy() == 1
    assert tf_simple_relu(tf.constant(-1)).numpy() == 0
    assert tf_simple_relu(tf.constant(7)).numpy() == 7
    assert tf_simple_relu(tf.constant(-3)).numpy() == 0


def test_polymorphism_one_function_many_graphs():
    @tf.function
    def my_relu(x):
        return tf.maximum(0., x)

    # `my_relu` creates new graphs as it observes different input signatures.
    r = my_relu(tf.constant(5.5))
    assert r.dtype == tf.float32 and r.shape == () and float(r) == 5.5
    np.testing.assert_array_equal(my_relu([1, -1]).numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(my_relu(tf.constant([3., -3.])).numpy(), [3.0, 0.0])
    assert my_relu.experimental_get_tracing_count() == 3
    # These two calls do *not* create new graphs.
    assert float(my_relu(tf.constant(-2.5))) == 0.0  # Signature matches `tf.constant(5.5)`.
    np.testing.assert_array_equal(my_relu([1, -1]).numpy(), [1.0, 0.0])
    assert my_relu.experimental_get_tracing_count() == 3
    # A new Python value is a new signature.
    np.testing.assert_array_equal(my_relu([-2, 2]).numpy(), [0.0, 2.0])
    assert my_relu.experimental_get_tracing_count() == 4

    concrete = my_relu.get_concrete_function(tf.constant(3.))
    assert my_relu.experimental_get_tracing_count() == 4  # the scalar float32 graph exists
    assert float(concrete(tf.constant(-1.0))) == 0.0
    assert float(concrete(tf.constant(8.0))) == 8.0
    vector = my_relu.get_concrete_function(tf.TensorSpec(shape=[2], dtype=tf.float32))
    np.testing.assert_array_equal(vector(tf.constant([-4.0, 4.0])).numpy(), [0.0, 4.0])
    assert my_relu.experimental_get_tracing_count() == 4


@tf.function
def get_MSE(y_true, y_pred):
    sq_diff = tf.pow(y_true - y_pred, 2)
    return tf.reduce_mean(sq_diff)


Y_TRUE = [1, 0, 4, 4, 7]
Y_PRED = [3, 6, 3, 6, 3]
# int32 mean of the squared differences (4 + 36 + 1 + 4 + 16) / 5, truncated
MSE = 61 // 5


def test_run_functions_eagerly_gives_the_same_value():
    y_true = tf.constant(Y_TRUE)
    y_pred = tf.constant(Y_PRED)
    graph_value = get_MSE(y_true, y_pred)
    assert graph_value.dtype == tf.int32 and int(graph_value) == MSE
    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly()
        eager_value = get_MSE(y_true, y_pred)
    finally:
        # Don't forget to set it back when you are done.
        tf.config.run_functions_eagerly(False)
    assert not tf.config.functions_run_eagerly()
    assert eager_value.dtype == tf.int32 and int(eager_value) == MSE


def test_random_inputs_mse_matches_numpy():
    tf.random.set_seed(3)
    y_true = tf.random.uniform([5], maxval=10, dtype=tf.int32)
    y_pred = tf.random.uniform([5], maxval=10, dtype=tf.int32)
    assert y_true.dtype == tf.int32
    t, p = y_true.numpy().astype(np.int64), y_pred.numpy().astype(np.int64)
    assert ((0 <= t) & (t < 10)).all() and ((0 <= p) & (p < 10)).all()
    assert int(get_MSE(y_true, y_pred)) == int(np.sum((t - p) ** 2) // 5)


def test_print_runs_once_while_tracing_and_every_call_when_eager(capsys):
    @tf.function
    def get_MSE(y_true, y_pred):
        print("Calculating MSE!")
        sq_diff = tf.pow(y_true - y_pred, 2)
        return tf.reduce_mean(sq_diff)

    y_true, y_pred = tf.constant(Y_TRUE), tf.constant(Y_PRED)
    for _ in range(3):
        assert int(get_MSE(y_true, y_pred)) == MSE
    # `print` runs once: while the function is traced.
    assert capsys.readouterr().out == "Calculating MSE!\n"

    # Now, globally set everything to run eagerly to force eager execution.
    tf.config.run_functions_eagerly(True)
    try:
        for _ in range(3):
            assert int(get_MSE(y_true, y_pred)) == MSE
    finally:
        tf.config.run_functions_eagerly(False)
    assert capsys.readouterr().out == "Calculating MSE!\n" * 3

    # Back in graph mode: the existing trace is used again and nothing is printed.
    assert int(get_MSE(y_true, y_pred)) == MSE
    assert capsys.readouterr().out == ""


def test_tf_print_runs_on_every_call(capfd):
    @tf.function
    def get_MSE(y_true, y_pred):
        tf.print("Calculating MSE!")
        sq_diff = tf.pow(y_true - y_pred, 2)
        return tf.reduce_mean(sq_diff)

    y_true, y_pred = tf.constant(Y_TRUE), tf.constant(Y_PRED)
    for _ in range(3):
        assert int(get_MSE(y_true, y_pred)) == MSE
    # tf.print writes to stderr by default (TF writes to the file descriptor: capfd)
    assert capfd.readouterr().err == "Calculating MSE!\n" * 3


def unused_return_eager(x):
    # Get index 1 will fail when `len(x) == 1`
    tf.gather(x, [1])  # unused
    return x


def test_non_strict_execution_eager_raises():
    with pytest.raises(tf.errors.InvalidArgumentError):
        unused_return_eager(tf.constant([0.0]))


def test_unused_failing_op_still_raises_in_a_function():
    # TF prunes the unused gather from the graph and returns [0.]. minitf traces by running
    # the Python function, so every op runs once: a documented difference (docs/compat.md).
    @tf.function
    def unused_return_graph(x):
        tf.gather(x, [1])  # unused
        return x

    with pytest.raises(tf.errors.InvalidArgumentError, match="gather: indices out of range"):
        unused_return_graph(tf.constant([0.0]))


def power(x, y):
    result = tf.eye(10, dtype=tf.dtypes.int32)
    for _ in range(y):
        result = tf.matmul(x, result)
    return result


def test_speed_up_example_same_result_eager_and_graph():
    tf.random.set_seed(0)
    x = tf.random.uniform(shape=[10, 10], minval=-1, maxval=2, dtype=tf.dtypes.int32)
    xv = x.numpy()
    assert set(np.unique(xv)) <= {-1, 0, 1}
    eager = power(x, 100)
    power_as_graph = tf.function(power)
    graph = power_as_graph(x, 100)
    assert eager.dtype == graph.dtype == tf.int32
    # int32 products wrap around as in numpy's int32 matmul
    ref = np.eye(10, dtype=np.int32)
    for _ in range(100):
        ref = xv @ ref
    np.testing.assert_array_equal(eager.numpy(), ref)
    np.testing.assert_array_equal(graph.numpy(), ref)
    assert power_as_graph.experimental_get_tracing_count() == 1


def test_when_is_a_function_tracing(capsys):
    @tf.function
    def a_function_with_python_side_effect(x):
        print("Tracing!")  # An eager-only side effect.
        return x * x + tf.constant(2)

    # This is traced the first time.
    assert int(a_function_with_python_side_effect(tf.constant(2))) == 6
    assert capsys.readouterr().out == "Tracing!\n"
    # The second time through, you won't see the side effect.
    assert int(a_function_with_python_side_effect(tf.constant(3))) == 11
    assert capsys.readouterr().out == ""
    # This retraces each time the Python argument changes, as a Python argument could be an
    # epoch count or other hyperparameter.
    assert int(a_function_with_python_side_effect(2)) == 6
    assert capsys.readouterr().out == "Tracing!\n"
    assert int(a_function_with_python_side_effect(3)) == 11
    assert capsys.readouterr().out == "Tracing!\n"
    assert a_function_with_python_side_effect.experimental_get_tracing_count() == 3


def test_retracing_with_different_dtypes_and_shapes(capsys):
    @tf.function
    def f(x):
        print("Tracing", x.dtype.name, tuple(x.shape))
        return tf.reduce_sum(x * 2)

    assert int(f(tf.constant([1, 2]))) == 6
    assert int(f(tf.constant([3, 4]))) == 14
    assert float(f(tf.constant([1.5, 2.0]))) == 7.0
    assert int(f(tf.constant([1, 2, 3]))) == 12
    assert int(f(tf.constant([[1, 2], [3, 4]]))) == 20
    assert float(f(tf.constant([0.5, 0.5]))) == 2.0
    assert capsys.readouterr().out.splitlines() == [
        "Tracing int32 (2,)", "Tracing float32 (2,)", "Tracing int32 (3,)",
        "Tracing int32 (2, 2)"]
    assert f.experimental_get_tracing_count() == 4


def test_numpy_of_a_traced_tensor_is_an_attribute_error():
    # `.numpy()` of a traced tensor fails while tracing: a symbolic tensor has no value.
    @tf.function
    def uses_numpy(x):
        return x.numpy() * 2

    with pytest.raises((AttributeError, NotImplementedError)):
        uses_numpy(tf.constant([1.0]))


def test_static_shape_error_in_a_function_is_a_value_error():
    # A shape error that TF finds while building the graph is a ValueError.
    @tf.function
    def bad_reshape(x):
        return tf.reshape(x, [7, -1])

    with pytest.raises(ValueError):
        bad_reshape(tf.range(30))

