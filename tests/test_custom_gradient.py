"""custom_gradient, stop_gradient and RegisterGradient."""
import numpy as np
import pytest

import minitf as tf
from minitf.ops.registry import clear_gradient_override


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


def grad_of(fn, x, **kwargs):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x, **kwargs) if kwargs else fn(x)
    return tape.gradient(y, x)


def test_custom_gradient_replaces_the_gradient():
    x = tf.constant([0.0, 100.0])
    np.testing.assert_allclose(grad_of(log1pexp, x).numpy(), [0.5, 1.0])
    plain = grad_of(lambda v: tf.math.log(1 + tf.exp(v)), x).numpy()
    assert np.isnan(plain[1])  # what the custom gradient avoids
    # without a tape the function simply runs
    np.testing.assert_allclose(log1pexp(tf.constant(0.0)).numpy(), np.log(2.0), rtol=1e-6)


def test_custom_gradient_applies_to_keyword_arguments():
    @tf.custom_gradient
    def scaled(x, scale=2.0, *, shift):
        def grad(dy):
            return dy * 100.0, dy * 1000.0   # gradients for x and shift, in parameter order
        return x * scale + shift, grad

    x, shift = tf.constant(1.0), tf.constant(3.0)
    for call in (lambda: scaled(x, shift=shift), lambda: scaled(x=x, shift=shift),
                 lambda: scaled(shift=shift, x=x, scale=5.0)):
        with tf.GradientTape() as tape:
            tape.watch([x, shift])
            y = call()
        gx, gs = tape.gradient(y, [x, shift])
        assert (float(gx), float(gs)) == (100.0, 1000.0)


def test_gradients_for_python_arguments_may_be_given_tf_style():
    @tf.custom_gradient
    def mul(x, k):
        def grad(dy):
            return dy * k * 10.0, None   # one entry per argument, as TF asks
        return x * k, grad

    @tf.custom_gradient
    def mul_tensor_only(x, k):
        def grad(dy):
            return dy * k * 10.0         # or one per tensor argument
        return x * k, grad

    x = tf.constant(2.0)
    assert float(grad_of(lambda v: mul(v, 3.0), x)) == 30.0
    assert float(grad_of(lambda v: mul_tensor_only(v, 3.0), x)) == 30.0


def test_wrong_number_of_gradients_is_an_error():
    @tf.custom_gradient
    def f(x, y):
        def grad(dy):
            return dy
        return x * y, grad

    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = f(a, b)
    with pytest.raises(ValueError, match="returned 1 input gradients for 2 tensor arguments"):
        tape.gradient(y, [a, b])


def test_variables_form():
    w = tf.Variable(3.0)
    frozen = tf.Variable(10.0, trainable=False)

    @tf.custom_gradient
    def linear(x):
        y = w * x * frozen

        def grad(dy, variables=None):
            assert len(variables) == 1 and variables[0] is w
            return dy * 7.0, [dy * 11.0]
        return y, grad

    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = linear(x)
    gx, gw = tape.gradient(y, [x, w])
    assert (float(gx), float(gw)) == (7.0, 11.0)
    assert float(y) == 60.0


def test_variables_form_errors():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def no_variables_kw(x):
        def grad(dy):
            return dy
        return w * x, grad

    with tf.GradientTape():
        with pytest.raises(TypeError, match="must accept keyword argument 'variables'"):
            no_variables_kw(tf.constant(1.0))

    @tf.custom_gradient
    def wrong_count(x):
        def grad(dy, variables=None):
            return dy, []
        return w * x, grad

    with tf.GradientTape() as tape:
        y = wrong_count(tf.constant(1.0))
    with pytest.raises(ValueError, match="gradient for each of the 1 variables"):
        tape.gradient(y, w)


def test_grad_fn_with_variables_keyword_but_no_variables_read():
    @tf.custom_gradient
    def double(x):
        def grad(dy, variables=None):
            assert variables is None
            return dy * 2.0
        return x * 2.0, grad

    assert float(grad_of(double, tf.constant(1.0))) == 2.0


def test_variable_passed_as_argument_is_an_input_not_a_captured_variable():
    v = tf.Variable([1.0, 2.0])

    @tf.custom_gradient
    def square(x):
        def grad(dy):
            return dy * 2.0 * x
        return x * x, grad

    with tf.GradientTape() as tape:
        y = tf.reduce_sum(square(v))
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 4.0])


def test_multiple_outputs():
    @tf.custom_gradient
    def split(x):
        def grad(dy1, dy2):
            return dy1 * 2.0 + dy2 * 3.0
        return (x * 2.0, x * 3.0), grad

    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b = split(x)
        total = a + b
    assert float(tape.gradient(a, x)) == 2.0
    assert float(tape.gradient(b, x)) == 3.0
    assert float(tape.gradient(total, x)) == 5.0


def test_identity_output_and_second_order_through_closures():
    @tf.custom_gradient
    def ident(x):
        def grad(dy):
            return dy * 5.0
        return x, grad

    @tf.custom_gradient
    def my_exp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * e   # uses a forward tensor: differentiable again, as in TF
        return e, grad

    x = tf.constant(0.5)
    assert float(grad_of(ident, x)) == 5.0
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = my_exp(x)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(float(outer.gradient(g, x)), np.exp(0.5), rtol=1e-6)


def test_stop_gradient():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        s = tf.stop_gradient(x * x)
        y = tf.reduce_sum(s * x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 4.0])
    assert tape.gradient(s, x) is None
    np.testing.assert_array_equal(s.numpy(), [1.0, 4.0])


def test_register_gradient_replaces_and_restores_a_rule():
    x = tf.constant([0.0, 1.0])

    @tf.RegisterGradient("Sin")
    def _sin_grad(op, grad):
        assert op.type == "Sin" and op.inputs[0].shape == (2,)
        return grad * 100.0 + op.outputs[0] * 0.0

    try:
        np.testing.assert_array_equal(grad_of(tf.sin, x).numpy(), [100.0, 100.0])
    finally:
        clear_gradient_override("Sin")
    np.testing.assert_allclose(grad_of(tf.sin, x).numpy(), np.cos([0.0, 1.0]), rtol=1e-6)


def test_register_gradient_by_tf_type_name_for_a_binary_op():
    @tf.RegisterGradient("Mul")
    def _mul_grad(op, grad):
        a, b = op.inputs
        return grad * b * 2.0, None

    a, b = tf.constant(3.0), tf.constant(4.0)
    try:
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            y = a * b
        ga, gb = tape.gradient(y, [a, b])
    finally:
        clear_gradient_override("Mul")
    assert float(ga) == 8.0 and gb is None


def test_register_gradient_unknown_op():
    with pytest.raises(LookupError, match="NoSuchOp"):
        tf.RegisterGradient("NoSuchOp")


def test_forward_mode_sees_the_real_computation_of_a_custom_gradient_function():
    x = tf.constant(0.3)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = log1pexp(x)
    np.testing.assert_allclose(float(acc.jvp(y)), 1 / (1 + np.exp(-0.3)), rtol=1e-6)


def test_custom_gradient_inside_a_traced_function_is_not_baked_in():
    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3 * x * x
        return x * x * x, grad

    @tf.function
    def value_and_grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = cube(x)
        return y, tape.gradient(y, x)

    for value in (2.0, -1.0, 0.5):
        y, g = value_and_grad(tf.constant(value))
        assert float(y) == value ** 3
        assert float(g) == 3 * value ** 2


def test_custom_gradient_outputs_and_gradients_may_be_python_numbers():
    @tf.custom_gradient
    def f(x):
        return 1.5, lambda dy: 2.0 * dy.numpy()  # a numpy value

    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert y.dtype == tf.float32 and float(y) == 1.5
    g = tape.gradient(y, x)
    assert g.dtype == tf.float32 and float(g) == 2.0
    assert f(x).dtype == tf.float32  # converted without a tape too


def test_recompute_grad_matches_plain_gradients_and_saves_nothing():
    w = tf.Variable([[0.5, -1.0], [2.0, 0.25]], dtype=tf.float64)

    def block(x):
        return tf.reduce_sum(tf.tanh(tf.matmul(x, w)) ** 2)

    checkpointed = tf.recompute_grad(block)
    x = tf.constant([[0.3, -0.2], [1.0, 0.5]], dtype=tf.float64)
    results = []
    for fn in (block, checkpointed):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        results.append([y] + tape.gradient(y, [x, w]))
    for plain, recomputed in zip(*results):
        np.testing.assert_allclose(recomputed.numpy(), plain.numpy(), rtol=1e-12)
    with tf.GradientTape(persistent=True) as tape:  # one record, the recomputing rule
        tape.watch(x)
        checkpointed(x)
    assert [e[0].type for e in tape._entries] == ["CustomGradient"]
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
        y = checkpointed(x)
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc_plain:
        y_plain = block(x)
    np.testing.assert_allclose(float(acc.jvp(y)), float(acc_plain.jvp(y_plain)), rtol=1e-12)
