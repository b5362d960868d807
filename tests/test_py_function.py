"""tf.py_function / tf.numpy_function: values against plain Python, output structure,
gradients through py_function against closed forms, errors, Dataset.map, and minitf.function
over several calls with new values."""
import warnings

import numpy as np
import pytest

import minitf as tf


def test_py_function_values_and_output_structure():
    seen = []

    def f(a, b):
        seen.append((type(a), type(b)))
        return a * 2.0, b + 1

    x, n = tf.constant([1.0, 2.5]), tf.constant(4)
    out = tf.py_function(f, [x, n], [tf.float32, tf.int32])
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_allclose(out[0].numpy(), [2.0, 5.0])
    assert out[1].dtype == tf.int32 and int(out[1]) == 5
    assert seen == [(tf.Tensor, tf.Tensor)]   # py_function's func gets tensors
    single = tf.py_function(lambda a: a - 1.0, [x], tf.float32)
    assert isinstance(single, tf.Tensor)
    np.testing.assert_allclose(single.numpy(), [0.0, 1.5])
    # Python numbers and numpy results are converted to the declared dtype
    as_float64 = tf.py_function(lambda a: float(a.numpy().sum()), [x], tf.float64)
    assert as_float64.dtype == tf.float64 and float(as_float64) == 3.5
    assert tf.py_function(lambda a: None, [x], None) is None
    assert tf.py_function(lambda a: None, [x], []) == []
    spec_out = tf.py_function(lambda a: a, [x], tf.TensorSpec([2], tf.float32))
    np.testing.assert_allclose(spec_out.numpy(), [1.0, 2.5])


def test_numpy_function_gets_read_only_arrays_and_checks_dtypes():
    got = []

    def f(a):
        got.append(a)
        return np.sinh(a)

    x = np.array([0.0, 0.5, -1.0], dtype=np.float32)
    y = tf.numpy_function(f, [tf.constant(x)], tf.float32)
    np.testing.assert_allclose(y.numpy(), np.sinh(x), rtol=1e-6)
    assert isinstance(got[0], np.ndarray) and not got[0].flags.writeable
    with pytest.raises(ValueError):
        got[0][0] = 1.0
    # the TF docs' example: np.sinh(1.0) = 1.1752012
    assert tf.numpy_function(np.sinh, [tf.constant(1.0)], tf.float32).numpy() == \
        pytest.approx(1.1752012)
    pair = tf.numpy_function(lambda a, b: (a + b, (a * b).astype(np.int64)),
                             [tf.constant([1, 2]), tf.constant([3, 4])],
                             [tf.int32, tf.int64], stateful=False)
    assert pair[0].numpy().tolist() == [4, 6] and pair[1].numpy().tolist() == [3, 8]
    # numpy makes a Python float float64: TF rejects it for float32 (no silent cast)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"numpy_function.*float64.*float32"):
        tf.numpy_function(lambda a: 1.0, [tf.constant(1.0)], tf.float32)


def test_decorator_form():
    @tf.numpy_function(Tout=tf.float32)
    def sinh(a):
        return np.sinh(a)

    @tf.py_function(Tout=tf.float32)
    def cube(a):
        return a ** 3

    assert sinh(tf.constant(1.0)).numpy() == pytest.approx(np.sinh(1.0), rel=1e-6)
    assert float(cube(tf.constant(2.0))) == 8.0


def _log_huber(x, m):
    # the TF docs' example of Python control flow inside py_function
    if tf.abs(x) <= m:
        return x ** 2
    return m ** 2 * (1 - 2 * tf.math.log(m) + tf.math.log(x ** 2))


def test_gradients_flow_through_py_function():
    m = tf.constant(2.0)
    for value, expected_y, expected_dy in [
            (1.0, 1.0, 2.0),                                        # TF docs: y=1, dy/dx=2
            (3.0, 4.0 * (1 - 2 * np.log(2.0) + np.log(9.0)), 4.0 * 2 / 3.0)]:  # m^2 * 2/x
        x = tf.constant(value)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.py_function(_log_huber, [x, m], tf.float32)
        assert float(y) == pytest.approx(expected_y, rel=1e-6)
        assert float(tape.gradient(y, x)) == pytest.approx(expected_dy, rel=1e-6)
    # two outputs, a variable input: d/dv sum(v^2) + 3 * sum(v) = 2v + 3
    v = tf.Variable([1.0, -2.0])
    with tf.GradientTape() as tape:
        sq, lin = tf.py_function(lambda a: (a * a, 3.0 * a), [v], [tf.float32, tf.float32])
        loss = tf.reduce_sum(sq) + tf.reduce_sum(lin)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), [5.0, -1.0])


def test_numpy_function_has_no_gradient():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.numpy_function(lambda a: a * a, [x], tf.float32)
    assert float(y) == 4.0 and tape.gradient(y, x) is None


def test_errors_of_func_become_tf_errors():
    def bad_value(a):
        raise ValueError("negative input")

    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="py_function: .*bad_value raised ValueError: negative input") as e:
        tf.py_function(bad_value, [tf.constant(1.0)], tf.float32)
    assert isinstance(e.value.__cause__, ValueError)
    with pytest.raises(tf.errors.UnknownError, match="RuntimeError: boom"):
        tf.numpy_function(lambda a: (_ for _ in ()).throw(RuntimeError("boom")),
                          [tf.constant(1.0)], tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="returned 1 value.*declares 2"):
        tf.py_function(lambda a: a, [tf.constant(1.0)], [tf.float32, tf.float32])
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32 tensor.*declares float32"):
        tf.py_function(lambda a: a, [tf.constant(1)], tf.float32)
    with pytest.raises(TypeError, match="Tout"):
        tf.py_function(lambda a: a, [tf.constant(1.0)], "not a dtype")
    with pytest.raises(TypeError, match="callable"):
        tf.py_function(3, [tf.constant(1.0)], tf.float32)


def test_py_function_in_dataset_map():
    def label(x):   # Python string formatting on the value: needs eager values
        return len(str(int(x.numpy()))), x * 10

    ds = tf.data.Dataset.range(8, 13).map(
        lambda x: tf.py_function(label, [x], [tf.int32, tf.int64]))
    got = list(ds.as_numpy_iterator())
    assert got == [(len(str(v)), v * 10) for v in range(8, 13)]
    batched = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.float32)).map(
        lambda x: tf.numpy_function(lambda a: np.float32(a ** 2), [x], tf.float32)).batch(4)
    assert [b.tolist() for b in batched.as_numpy_iterator()] == [[0, 1, 4, 9], [16, 25]]


def test_outputs_used_in_a_function_run_eagerly_with_each_calls_values():
    calls = []

    def scaled(a):
        calls.append(float(a.numpy()))
        return a * float(len(calls))      # Python state: differs on every call

    @tf.function
    def f(x):
        return tf.py_function(scaled, [x], tf.float32) + 1.0

    with pytest.warns(tf.EagerFallbackWarning, match="py_function"):
        first = f(tf.constant(2.0))
    assert float(first) == 3.0
    assert float(f(tf.constant(5.0))) == 11.0    # 5 * 2 + 1
    assert float(f(tf.constant(-1.0))) == -2.0   # -1 * 3 + 1
    assert calls == [2.0, 5.0, -1.0]

    @tf.function
    def g(x):
        return tf.numpy_function(lambda a: np.cos(a), [x], tf.float32) * 2.0

    with pytest.warns(tf.EagerFallbackWarning):
        g(tf.constant(0.0))
    for v in [0.5, 1.5]:
        assert float(g(tf.constant(v))) == pytest.approx(2 * np.cos(v), rel=1e-6)


def test_gradient_through_py_function_inside_a_function():
    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.py_function(lambda a: tf.sin(a) * a, [x], tf.float32)
        return tape.gradient(y, x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tf.EagerFallbackWarning)
        for v in [0.3, 1.2, -2.0]:   # d/dx x sin x = sin x + x cos x
            assert float(grad(tf.constant(v))) == pytest.approx(np.sin(v) + v * np.cos(v),
                                                                rel=1e-5)


def test_callback_without_outputs_stays_traced_and_runs_on_every_replay():
    seen, kept = [], []

    @tf.function
    def step(x):
        y = x * 3.0
        tf.py_function(lambda a: seen.append(a.numpy().tolist()), [y], [])
        tf.py_function(kept.append, [y + 1.0], [])   # keeps the tensor itself
        tf.numpy_function(lambda a: seen.append(("np", float(a.sum()))), [x], None)
        return y

    with warnings.catch_warnings():
        warnings.simplefilter("error", tf.EagerFallbackWarning)   # no fallback here
        for v in ([1.0, 2.0], [0.0, -1.0], [4.0, 4.0]):
            np.testing.assert_allclose(step(tf.constant(v)).numpy(), np.array(v) * 3)
    assert step.experimental_get_tracing_count() == 1
    assert seen == [[3.0, 6.0], ("np", 3.0), [0.0, -3.0], ("np", -1.0), [12.0, 12.0],
                    ("np", 8.0)]
    # what the callback kept is not overwritten by later replays
    assert [t.numpy().tolist() for t in kept] == [[4.0, 7.0], [1.0, -2.0], [13.0, 13.0]]
