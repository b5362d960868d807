"""``tf.cond``, ``tf.case``, ``tf.switch_case``, ``tf.while_loop``: results, gradients through
the branch taken (as TF's eager semantics give), and the same answers inside
``minitf.function`` for inputs that take other branches."""
import numpy as np
import pytest

import minitf as tf


def _abs_via_cond(x):
    return tf.cond(x > 0, lambda: x * x, lambda: -3.0 * x)


def test_cond_value_and_gradient_of_the_branch_taken():
    for value, expected, grad in [(2.0, 4.0, 4.0), (-1.5, 4.5, -3.0)]:
        x = tf.Variable(value)
        with tf.GradientTape() as tape:
            y = _abs_via_cond(x)
        assert float(y) == expected
        assert float(tape.gradient(y, x)) == grad


def test_cond_inside_function_follows_each_calls_values():
    traced = tf.function(_abs_via_cond)
    for value in (2.0, -1.5, 3.0, -2.0):
        expected = value * value if value > 0 else -3.0 * value
        assert float(traced(tf.constant(value))) == pytest.approx(expected)


def test_case_and_switch_case():
    x = tf.constant(3)
    out = tf.case([(x < 2, lambda: 10), (x < 5, lambda: 20)], default=lambda: 30)
    assert out == 20
    assert tf.case([(x > 10, lambda: 1)], default=lambda: 2) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
        tf.case([(x > 0, lambda: 1), (x > 1, lambda: 2)], exclusive=True)
    fns = [lambda: "a", lambda: "b", lambda: "c"]
    assert tf.switch_case(tf.constant(1), fns) == "b"
    assert tf.switch_case(7, fns) == "c"                     # out of range: the last branch
    assert tf.switch_case(7, fns, default=lambda: "d") == "d"


def test_while_loop_structure_gradient_and_maximum_iterations():
    i, s = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0),
                         (tf.constant(0), tf.constant(1.0)))
    assert int(i) == 4 and float(s) == 16.0
    x = tf.Variable(1.5)
    with tf.GradientTape() as tape:
        _, y = tf.while_loop(lambda k, y: k < 3, lambda k, y: [k + 1, y * x],
                             [tf.constant(0), tf.constant(1.0)])
    assert float(y) == pytest.approx(1.5 ** 3)
    assert float(tape.gradient(y, x)) == pytest.approx(3 * 1.5 ** 2)   # d(x^3)/dx
    n = tf.while_loop(lambda n: n < 100, lambda n: n + 1, tf.constant(0), maximum_iterations=7)
    assert int(n) == 7
    with pytest.raises(ValueError, match="loop variables"):
        tf.while_loop(lambda a, b: a < 1, lambda a, b: a + 1, [tf.constant(0), tf.constant(0)])


def test_while_loop_inside_function_runs_the_calls_trip_count():
    @tf.function
    def power(base, n):
        _, y = tf.while_loop(lambda k, y: k < n, lambda k, y: (k + 1, y * base),
                             (tf.constant(0), tf.constant(1.0)))
        return y

    for n in (2, 5, 3):
        assert float(power(tf.constant(2.0), tf.constant(n))) == 2.0 ** n
    np.testing.assert_allclose(float(power(tf.constant(1.5), tf.constant(2))), 2.25)
