"""``tf.debugging`` assertions: value checks raise InvalidArgumentError naming the condition and
the failing values (and run again on every replay of a ``minitf.function``); shape, rank and
dtype checks are static (ValueError/TypeError, as TF raises in eager code)."""
import numpy as np
import pytest

import minitf as tf

IAE = tf.errors.InvalidArgumentError


@pytest.mark.parametrize("fn, symbol, good, bad", [
    (tf.debugging.assert_equal, "==", [1.0, 2.0], [1.0, 3.0]),
    (tf.debugging.assert_none_equal, "!=", [0.0, 0.0], [0.0, 2.0]),
    (tf.debugging.assert_less, "<", [2.0, 3.0], [2.0, 1.0]),
    (tf.debugging.assert_less_equal, "<=", [1.0, 2.0], [1.0, 1.5]),
    (tf.debugging.assert_greater, ">", [0.0, 1.0], [0.0, 5.0]),
    (tf.debugging.assert_greater_equal, ">=", [0.0, 2.0], [0.0, 2.5]),
])
def test_binary_asserts_pass_or_name_the_condition_and_values(fn, symbol, good, bad):
    x = tf.constant([1.0, 2.0])
    assert fn(x, good) is None
    with pytest.raises(IAE) as info:
        fn(x, bad, message="my check")
    text = str(info.value)
    assert text.startswith("my check\n")
    assert f"{fn.__name__}: Condition x {symbol} y did not hold" in text
    assert "Indices of first 1 failing values: [[1]]" in text
    assert "Corresponding x values: [2]" in text
    assert f"Corresponding y values: [{bad[1]:g}]" in text


def test_binary_asserts_broadcast_and_reject_shapes_that_do_not():
    x = tf.constant([[1, 2, 3], [4, 5, 6]])
    tf.debugging.assert_less(x, 7)                      # scalar y
    tf.debugging.assert_greater(x, [0, 1, 2])           # row y
    with pytest.raises(IAE, match=r"Indices of first 2 failing values: \[\[0, 2\], \[1, 2\]\]"):
        tf.debugging.assert_less(x, [10, 10, 3])
    with pytest.raises(IAE, match=r"shapes \[\(2, 3\), \(2,\)\] do not broadcast"):
        tf.debugging.assert_equal(x, [1, 2])
    tf.debugging.assert_equal(tf.zeros([0, 3]), 1.0)    # empty: trivially true, as in TF


def test_summarize_limits_the_values_shown():
    x = tf.range(10)
    with pytest.raises(IAE) as info:
        tf.debugging.assert_less(x, 0, summarize=2)
    assert "Indices of first 2 failing values: [[0], [1]]" in str(info.value)
    assert "First 2 elements of x (shape (10,)): [0 1]" in str(info.value)
    with pytest.raises(IAE) as info:
        tf.debugging.assert_less(x, 0, summarize=-1)
    assert "First 10 elements of x (shape (10,)): [0 1 2 3 4 5 6 7 8 9]" in str(info.value)


@pytest.mark.parametrize("fn, symbol, good, bad, bad_value", [
    (tf.debugging.assert_positive, ">", [1.0, 2.0], [1.0, 0.0], "0"),
    (tf.debugging.assert_negative, "<", [-1.0, -2.0], [-1.0, 0.0], "0"),
    (tf.debugging.assert_non_negative, ">=", [0.0, 2.0], [0.0, -2.0], "-2"),
    (tf.debugging.assert_non_positive, "<=", [0.0, -2.0], [0.0, 2.0], "2"),
])
def test_sign_asserts(fn, symbol, good, bad, bad_value):
    assert fn(tf.constant(good)) is None
    with pytest.raises(IAE) as info:
        fn(tf.constant(bad))
    assert f"{fn.__name__}: Condition x {symbol} 0 did not hold" in str(info.value)
    assert f"Corresponding x values: [{bad_value}]" in str(info.value)


def test_assert_near_tolerance_boundary_is_strict():
    y = tf.constant([1.0, 2.0])
    tf.debugging.assert_near(tf.constant([1.25, 2.0]), y, rtol=0.0, atol=0.5)
    tf.debugging.assert_near(tf.constant([1.49, 2.0]), y, rtol=0.0, atol=0.5)
    with pytest.raises(IAE, match=r"Condition \|x - y\| < atol \+ rtol \* \|y\|"):
        tf.debugging.assert_near(tf.constant([1.5, 2.0]), y, rtol=0.0, atol=0.5)  # == tol
    # rtol scales with |y|: tolerance at y = 2 is 0.25 * 2 = 0.5
    tf.debugging.assert_near(tf.constant([1.0, 2.4]), y, rtol=0.25, atol=0.0)
    with pytest.raises(IAE, match=r"Corresponding x values: \[2\.6\]"):
        tf.debugging.assert_near(tf.constant([1.0, 2.6]), y, rtol=0.25, atol=0.0)


def test_assert_near_default_tolerance_follows_the_dtype():
    # Default rtol = atol = 10 * eps: about 2.4e-6 around 1.0 in float32, 4.4e-15 in float64.
    one32 = np.float32(1.0)
    tf.debugging.assert_near(tf.constant([one32 + np.float32(1e-6)]), tf.constant([one32]))
    with pytest.raises(IAE):
        tf.debugging.assert_near(tf.constant([one32 + np.float32(5e-6)]), tf.constant([one32]))
    with pytest.raises(IAE, match=r"rtol = 2\.22044604925031\d*e-15"):
        tf.debugging.assert_near(tf.constant([1.0 + 1e-6], tf.float64), [1.0])
    tf.debugging.assert_near(tf.constant([1.0 + 1e-15], tf.float64), [1.0])


def test_assert_reports_its_data():
    x = tf.constant([1.0, -1.0, 3.0, 4.0, 5.0])
    assert tf.debugging.Assert(tf.reduce_all(x > -2.0), [x]) is None
    with pytest.raises(IAE) as info:
        tf.debugging.Assert(tf.reduce_all(x > 0.0), ["x has negatives:", x], summarize=2)
    assert str(info.value) == ("Assert: condition is false. Summarized data: x has negatives:\n"
                               "[1 -1 ... 4 5]")
    with pytest.raises(IAE):
        tf.Assert(False, ["plain Python condition"])


def test_asserts_in_a_function_check_every_call_without_retracing():
    @tf.function
    def step(x, y):
        tf.debugging.assert_non_negative(x, message="x must be >= 0")
        tf.debugging.assert_near(x, y, atol=0.1, rtol=0.0)
        tf.Assert(tf.reduce_sum(x) < 100.0, ["sum too big:", x])
        return x * 2.0

    np.testing.assert_allclose(step(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_allclose(step(tf.constant([3.0, 4.0]), tf.constant([3.05, 4.0])), [6.0, 8.0])
    with pytest.raises(IAE, match=r"x must be >= 0\nassert_non_negative(.|\n)*values: \[-4\]"):
        step(tf.constant([3.0, -4.0]), tf.constant([3.0, -4.0]))
    with pytest.raises(IAE, match="assert_near"):
        step(tf.constant([3.0, 4.0]), tf.constant([3.0, 4.5]))
    with pytest.raises(IAE, match="sum too big:\n\\[50 60\\]"):
        step(tf.constant([50.0, 60.0]), tf.constant([50.0, 60.0]))
    assert step.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(step(tf.constant([5.0, 6.0]), tf.constant([5.0, 6.0])), [10., 12.])


def test_assert_on_a_variable_in_a_function_reads_its_current_value():
    v = tf.Variable(1.0)

    @tf.function
    def check():
        tf.debugging.assert_positive(v)
        return v + 0.0

    assert float(check()) == 1.0
    v.assign(-3.0)
    with pytest.raises(IAE, match=r"First 1 elements of x \(shape \(\)\): \[-3\]$"):
        check()


def test_rank_scalar_and_type_asserts_are_static():
    x = tf.zeros([2, 3])
    assert tf.debugging.assert_rank(x, 2) is None
    with pytest.raises(ValueError, match=r"must have rank 3. Received rank 2, shape \(2, 3\)"):
        tf.debugging.assert_rank(x, 3)
    with pytest.raises(ValueError, match="^bad: assert_rank"):
        tf.assert_rank(x, tf.constant(1), message="bad")
    tf.debugging.assert_rank_at_least(x, 1)
    with pytest.raises(ValueError, match="at least 3"):
        tf.debugging.assert_rank_at_least(x, 3)
    assert tf.debugging.assert_scalar(tf.constant(1.0)) is None
    with pytest.raises(ValueError, match=r"expected scalar shape, saw shape \(2, 3\)"):
        tf.debugging.assert_scalar(x)
    assert tf.debugging.assert_type(x, tf.float32) is None
    tf.debugging.assert_type(tf.constant([1, 2]), "int32")
    with pytest.raises(TypeError, match="must be of type int64; got float32"):
        tf.debugging.assert_type(x, tf.int64)


def test_assert_shapes_symbols_sizes_and_wildcards():
    x, y, param = tf.zeros([10, 3]), tf.ones([10, 7]), tf.Variable([1.0, 2.0, 3.0])
    assert tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N", "D")), (param, ("Q",)),
                                       (1.0, ())]) is None
    tf.debugging.assert_shapes({x: (10, None), y: (".", 7)})
    tf.debugging.assert_shapes([(tf.zeros([4, 5, 10, 3]), (..., "N", "Q")), (x, ("*", "Q"))])
    with pytest.raises(ValueError) as info:                      # symbol N: 10, then 5
        tf.debugging.assert_shapes([(x, ("N", "Q")), (tf.zeros([5, 7]), ("N", "D"))])
    assert str(info.value) == (
        "assert_shapes: dimension 'N' of size 10 is specified by tensor shapes[0] dimension 0. "
        "Tensor shapes[1] dimension 0 must have size 10. Received size 5, shape (5, 7)")
    with pytest.raises(ValueError, match="'Q' of size 3 .* must have size 3. Received size 7"):
        tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N", "Q"))])
    with pytest.raises(ValueError, match="shapes.0. dimension 1 must have size 4. Received size 3"):
        tf.debugging.assert_shapes([(x, (10, 4))])
    with pytest.raises(ValueError, match=r"must have rank 3. Received rank 2"):
        tf.debugging.assert_shapes([(x, ("N", "Q", "R"))])
    with pytest.raises(ValueError, match=r"must have rank at least 3"):
        tf.debugging.assert_shapes([(x, (..., "A", "N", "Q"))])


def test_assert_shapes_inside_a_function_checks_each_traced_shape():
    @tf.function
    def f(a, b):
        tf.debugging.assert_shapes([(a, ("B", "D")), (b, ("B",))])
        return tf.reduce_sum(a, axis=1) + b

    np.testing.assert_allclose(f(tf.ones([2, 3]), tf.zeros([2])), [3.0, 3.0])
    with pytest.raises(ValueError, match="dimension 'B' of size 4"):
        f(tf.ones([4, 3]), tf.zeros([2]))


def test_assert_all_finite_returns_its_input():
    x = tf.constant([1.0, 2.0])
    np.testing.assert_array_equal(tf.debugging.assert_all_finite(x, "ok").numpy(), [1.0, 2.0])
    with pytest.raises(IAE, match="weights : Tensor had NaN"):
        tf.debugging.assert_all_finite(tf.constant([1.0, np.nan]), "weights")


def test_top_level_aliases_and_control_dependencies():
    assert tf.assert_equal is tf.debugging.assert_equal
    assert tf.assert_less is tf.debugging.assert_less
    assert tf.assert_greater is tf.debugging.assert_greater
    assert tf.assert_rank is tf.debugging.assert_rank
    assert tf.Assert is tf.debugging.Assert
    x = tf.constant([1.0, 2.0])
    with tf.control_dependencies([tf.assert_less(x, 3.0), None]):
        y = tf.identity(x)
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])
    with pytest.raises(IAE, match="^mismatch\nassert_equal"):
        tf.assert_equal(x, [1.0, 3.0], message="mismatch")
