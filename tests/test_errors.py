"""Bad input gives clear errors, and the numeric checks name the op that made a NaN/Inf."""
import numpy as np
import pytest

import minitf as tf
from minitf.ops.registry import InvalidArgumentError


def assert_no_numpy_traceback(excinfo):
    """The error is raised from minitf's check, not chained onto numpy's exception."""
    assert excinfo.value.__cause__ is None
    assert excinfo.value.__context__ is None or excinfo.value.__suppress_context__


def test_shape_mismatch_names_the_op_and_both_shapes():
    with pytest.raises(ValueError, match=r"add: .*\(2,\) float32 and \(3,\) float32") as e:
        tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])
    assert_no_numpy_traceback(e)
    with pytest.raises(ValueError, match=r"matmul: .*\(2, 3\) and \(2, 3\)"):
        tf.matmul(tf.ones((2, 3)), tf.ones((2, 3)))
    with pytest.raises(ValueError, match=r"reshape: .*\(2, 3\).*'shape': \(4,\)") as e:
        tf.reshape(tf.ones((2, 3)), [4])
    assert_no_numpy_traceback(e)
    x = tf.Variable(tf.ones((2, 3)))
    with tf.GradientTape():
        with pytest.raises(ValueError, match=r"multiply: .*\(2, 3\) float32 and \(2,\) float32"):
            x * tf.ones((2,))


def test_unknown_dtype():
    with pytest.raises(TypeError, match="unknown dtype 'float31'"):
        tf.zeros((2,), dtype="float31")
    with pytest.raises(TypeError, match="cannot interpret"):
        tf.cast(tf.ones(2), dtype=3.5)


def test_mixed_float32_float64():
    with pytest.raises(TypeError, match=r"different dtypes float32 and float64 \(shapes \(2,\) "
                                        r"and \(2,\)\); cast one with minitf.cast") as e:
        tf.ones(2) * tf.ones(2, dtype=tf.float64)
    assert_no_numpy_traceback(e)
    with pytest.raises(TypeError):
        tf.concat([tf.ones(2), tf.ones(2, dtype=tf.float64)], axis=0)


def test_gradient_of_a_non_tensor_target_and_non_tensor_sources():
    x = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * 2.0
    with pytest.raises(TypeError, match="target must be a Tensor or Variable.*got float"):
        tape.gradient(3.0, x)
    with pytest.raises(TypeError, match="target must be a Tensor.*got list"):
        tape.jacobian([y], x)
    with pytest.raises(TypeError, match="sources must be Tensors or Variables.*got float"):
        tape.gradient(y, [x, 2.0])
    with pytest.raises(TypeError, match="got ndarray"):
        tape.gradient(y, np.ones(2))
    with pytest.raises(TypeError, match="got NoneType"):
        tape.gradient(y, None)


def test_unconvertible_values():
    with pytest.raises(TypeError, match="cannot convert"):
        tf.constant({"a": 1})
    with pytest.raises(TypeError, match="multiply: cannot use"):
        tf.ones(2) * "abc"


def test_enable_check_numerics_names_the_first_bad_op_its_shapes_and_line():
    a = tf.constant([1.0, 0.0])
    tf.debugging.enable_check_numerics()
    try:
        fine = tf.sqrt(a)  # finite: no error
        with pytest.raises(InvalidArgumentError) as e:
            bad = tf.math.log(a) * 2.0  # the log makes -inf; the multiply is never checked
        message = str(e.value)
        assert "'log'" in message and "Inf" in message and "(2,)" in message
        assert "test_errors.py" in message and "bad = tf.math.log(a) * 2.0" in message
        with pytest.raises(InvalidArgumentError, match=r"'divide' produced NaN .*\(2,\), \(2,\)"):
            tf.zeros(2) / tf.zeros(2)
    finally:
        tf.debugging.disable_check_numerics()
    assert np.isnan((tf.zeros(2) / tf.zeros(2)).numpy()).all()  # silently, once disabled
    assert fine.shape == (2,)


def test_check_numerics_also_checks_gradients():
    x = tf.Variable([0.0, 1.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.sqrt(x))  # finite, but d sqrt/dx at 0 is inf
    tf.debugging.enable_check_numerics()
    try:
        with pytest.raises(InvalidArgumentError, match=r"gradient of op 'sqrt' produced Inf"):
            tape.gradient(y, x)
    finally:
        tf.debugging.disable_check_numerics()


def test_check_numerics_op():
    x = tf.constant([1.0, 2.0])
    assert tf.debugging.check_numerics(x, "fine") is not None
    with pytest.raises(InvalidArgumentError, match=r"check_numerics: bad input : Tensor had NaN"):
        tf.debugging.check_numerics(tf.constant([1.0, np.nan]), "bad input")
    with pytest.raises(InvalidArgumentError, match="Inf"):
        tf.debugging.check_numerics(tf.constant([np.inf]), "inf")
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = tf.debugging.check_numerics(v * v, "square")
    assert float(tape.gradient(y, v)) == 6.0


def test_nan_and_inf_are_silent_without_checks():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarnings would raise here
        x = tf.constant([0.0, 100.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.math.log(x) + tf.exp(x * 10.0)
        g = tape.gradient(y, x).numpy()
    assert np.isinf(g[0]) and np.isinf(y.numpy()).all()


def test_no_runtime_warnings_are_printed_by_default():
    import os
    import subprocess
    import sys
    code = ("import minitf as tf\n"
            "x = tf.constant(100.)\n"
            "with tf.GradientTape() as t:\n"
            "    t.watch(x)\n"
            "    y = tf.math.log(1 + tf.exp(x))\n"
            "print(t.gradient(y, x))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONWARNINGS", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=root, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "tf.Tensor(nan, shape=(), dtype=float32)\n"
    assert "RuntimeWarning" not in out.stderr


def test_tf_errors_hierarchy_and_codes():
    errors = tf.errors
    for name in ("InvalidArgumentError", "NotFoundError", "ResourceExhaustedError",
                 "UnimplementedError", "FailedPreconditionError", "OutOfRangeError",
                 "InternalError", "CancelledError", "UnknownError", "AbortedError"):
        assert issubclass(getattr(errors, name), errors.OpError)
    assert issubclass(errors.InvalidArgumentError, ValueError)  # minitf raised ValueError before
    assert issubclass(errors.UnimplementedError, NotImplementedError)
    assert errors.InvalidArgumentError is InvalidArgumentError
    e = errors.NotFoundError("no such file", op="read")
    assert (e.message, e.op, e.error_code) == ("no such file", "read", errors.NOT_FOUND)
    assert errors.InvalidArgumentError("x").error_code == errors.INVALID_ARGUMENT == 3


def test_errors_take_tensorflows_constructor_arguments():
    # TF's signature is (node_def, op, message): user code raises them that way
    # (tensorflow/python/framework/errors_impl.py).
    e = tf.errors.InvalidArgumentError(None, None, "bad thing")
    assert (str(e), e.message, e.op, e.node_def) == ("bad thing", "bad thing", None, None)
    assert e.error_code == tf.errors.INVALID_ARGUMENT
    e = tf.errors.OpError(None, "op", "failed", tf.errors.ABORTED)
    assert (e.message, e.op, e.error_code) == ("failed", "op", tf.errors.ABORTED)
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        raise tf.errors.OutOfRangeError(None, None, "End of sequence")
    import copy     # rebuilt from __reduce__, as when an exception crosses processes
    again = copy.deepcopy(tf.errors.NotFoundError(None, "read", "gone"))
    assert (type(again), again.message, again.op) == (tf.errors.NotFoundError, "gone", "read")


@pytest.mark.parametrize("bad", [
    lambda: tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0]),
    lambda: tf.matmul(tf.ones((2, 3)), tf.ones((2, 3))),
    lambda: tf.reshape(tf.ones((2, 3)), [4]),
    lambda: tf.stack([tf.ones(2), tf.ones(3)]),
    lambda: tf.gather(tf.ones((3, 2)), [5]),
    lambda: tf.concat([tf.ones((2, 3)), tf.ones((2, 4))], axis=0),
    lambda: tf.reduce_sum(tf.ones((2, 3)), axis=2),
], ids=["broadcast", "matmul", "reshape", "stack", "gather", "concat", "axis"])
def test_shape_errors_in_ops_are_invalid_argument_errors(bad):
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        bad()
    assert isinstance(e.value, ValueError)
    assert str(e.value)  # our message, naming the op and the shapes, stays inside


def test_an_op_that_cannot_allocate_raises_resource_exhausted():
    with pytest.raises(tf.errors.ResourceExhaustedError, match=r"tile: out of memory .*\(1,\)"):
        tf.tile(tf.ones((1,)), [10 ** 13])
    assert issubclass(tf.errors.ResourceExhaustedError, MemoryError)


def test_numeric_checks_run_on_every_replay_of_a_function():
    # TF checks on every call of a tf.function (tf.debugging.enable_check_numerics docs).
    @tf.function
    def log2(x):
        return tf.math.log(x) * 2

    tf.debugging.enable_check_numerics()
    try:
        np.testing.assert_allclose(log2(tf.constant([1.0, 2.0])).numpy(), [0, 2 * np.log(2)],
                                   rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"op 'log' produced NaN.*test_errors\.py"), \
                np.errstate(invalid="ignore"):     # numpy's own warning is not the point
            log2(tf.constant([-1.0, 2.0]))          # a replay of the first call's plan
    finally:
        tf.debugging.disable_check_numerics()
    assert log2.experimental_get_tracing_count() == 1


def test_check_numerics_checks_every_call_of_a_function():
    # TF raises on every call (tf.debugging.check_numerics docs); the result is often unused.
    @tf.function
    def logged(x):
        tf.debugging.check_numerics(tf.math.log(x), "log of x")
        return x * 2

    np.testing.assert_array_equal(logged(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="log of x : Tensor had NaN"), \
            np.errstate(invalid="ignore"):
        logged(tf.constant([-1.0, 2.0]))
    assert logged.experimental_get_tracing_count() == 1


def test_dtype_errors_are_what_both_tf_modes_raise():
    # TF raises InvalidArgumentError eagerly and TypeError in a graph for mixed operands, and
    # ValueError for a conversion to another dtype; minitf's errors are each of those.
    with pytest.raises(tf.errors.InvalidArgumentError, match="add: operands have different"):
        tf.constant([1, 2]) + tf.constant([1.0, 2.0])
    with pytest.raises(TypeError):
        tf.matmul(tf.ones((2, 2)), tf.ones((2, 2), tf.float64))
    with pytest.raises(ValueError, match="tensor has dtype float32, requested int32"):
        tf.convert_to_tensor(tf.Variable([1.0]), dtype=tf.int32)
    with pytest.raises(TypeError, match="tensor has dtype int32, requested float32"):
        tf.Variable([1.0]).assign(tf.constant([1], tf.int32))


def test_numpy_of_a_traced_tensor_is_also_an_attribute_error():
    @tf.function
    def f(x):
        return x.numpy() * 2

    with pytest.raises(AttributeError, match="cannot trace Tensor.numpy()"):
        f(tf.constant([1.0]))
