"""Cases of TensorFlow's ``tensorflow/python/eager/backprop_test.py`` (BackpropTest), second part:
GradientTape behaviour (structures, nesting, persistence, higher orders, errors). The first part
(op gradients) and what was left out are in ``test_tf_backprop_test.py``.
"""
import functools

import numpy as np
import pytest

import minitf as tf


def _grads(f, *args, params=None, dy=None):
    """What TF's ``gradients_function(f, params)(*args, dy=...)`` computes, with a tape."""
    # Each argument is its own tensor, even when the same object is passed twice (as in TF).
    xs = [tf.identity(a if isinstance(a, tf.Tensor) else tf.constant(a)) for a in args]
    params = range(len(xs)) if params is None else params
    with tf.GradientTape(persistent=True) as tape:
        for i in params:
            tape.watch(xs[i])
        out = f(*xs)
    return [tape.gradient(out, xs[i], output_gradients=dy) for i in params]


def test_gradient_tape_structure():
    with tf.GradientTape(persistent=True) as g:
        x1 = tf.constant(3.0)
        x2 = tf.constant(3.1)
        x3 = tf.constant(3.2)
        g.watch(x1)
        g.watch(x2)
        g.watch(x3)
        y = x1 + 2 * x2 + 3 * x3
    as_float = functools.partial(tf.nest.map_structure, float)
    assert float(g.gradient(y, x1)) == 1.0
    assert as_float(g.gradient(y, (x1,))) == (1.0,)
    assert as_float(g.gradient(y, (x1, x2))) == (1.0, 2.0)
    assert as_float(g.gradient(y, [(x1, x2), (x2, x3)])) == [(1.0, 2.0), (2.0, 3.0)]
    assert as_float(g.gradient(y, (x1, x2, [x1, x3]))) == (1.0, 2.0, [1.0, 3.0])
    assert as_float(g.gradient(y, [x1, {"x2": x2, "x3": x3}])) == [1.0, {"x2": 2.0, "x3": 3.0}]


def test_gradient_tape_nested_inner_gradient():
    with tf.GradientTape() as g:
        x = tf.constant(3.0)
        g.watch(x)
        y = x * x
        with tf.GradientTape() as gg:
            gg.watch(y)
            z = 2 * y
        inner_grad = gg.gradient(z, [y])[0]
        assert float(inner_grad) == 2.0
        y += inner_grad
    assert float(g.gradient(y, [x])[0]) == 6.0


def test_gradient_tape_called_on_constant_target():
    with tf.GradientTape() as g:
        x = tf.Variable([3.0])
        y = tf.Variable([2.0])
    assert g.gradient(x, y) is None


def test_gradient_tape_with_python_cond_and_loop():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x if x < x else x * x
    assert float(g.gradient(y, [x])[0]) == 6.0

    i, x = tf.constant(1), tf.constant(2.)
    with tf.GradientTape() as g:
        g.watch([x])
        y = x
        while i < 3:
            i, y = i + 1, y * 2
    assert float(g.gradient(y, [x])[0]) == 4.0


def test_gradient_tape_gradient_called_multiple_times():
    with tf.GradientTape() as g:
        x = tf.constant(3.0)
        g.watch(x)
        y = x * x
        z = y * y
    g.gradient(z, [x])
    with pytest.raises(RuntimeError, match="GradientTape.gradient can only be called once"):
        g.gradient(y, [x])


def test_persistent_tape():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant(3.0)
        g.watch(x)
        y = x * x
        z = y * y
    assert float(g.gradient(z, [x])[0]) == 4 * 3 * 3 * 3
    assert float(g.gradient(y, [x])[0]) == 2 * 3
    del g


def test_higher_order_gradient():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant(3.0)
        g.watch(x)
        y = x ** 3
        dy_dx = g.gradient(y, x)
        d2y_dx2 = g.gradient(dy_dx, x)
    d3y_dx3 = g.gradient(d2y_dx2, x)
    assert [float(v) for v in (y, dy_dx, d2y_dx2, d3y_dx3)] == [27, 27, 18, 6]


def test_persistent_nested_tape():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant(3.0)
        g.watch(x)
        y = x * x
        with tf.GradientTape(persistent=True) as gg:
            gg.watch(y)
            z = 2 * y
        for _ in range(2):
            inner_grad = gg.gradient(z, [y])[0]
            assert float(inner_grad) == 2.0
        y += inner_grad
        del gg
    assert float(g.gradient(y, [x])[0]) == 6.0
    assert float(g.gradient(z, [x])[0]) == 12.0


def test_gradient_tape_variable():
    v = tf.Variable(1.0, name="v")
    with tf.GradientTape() as g:
        y = v * v
    assert float(g.gradient(y, [v])[0]) == 2.0


def test_nested_gradients():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
        z = y * y
    dz_dx, dz_dy = g.gradient(z, [x, y])
    assert (float(dz_dx), float(dz_dy)) == (108.0, 18.0)


def test_unconnected_gradients_default_and_zeros():
    x = tf.constant(1.0)
    y = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch([x, y])
        z = y * 2
    assert g.gradient(z, x) is None

    x = tf.constant(1.0, shape=[2, 2])
    with tf.GradientTape() as g:
        g.watch([x, y])
        z = y * 2
    np.testing.assert_array_equal(g.gradient(z, x, unconnected_gradients="zero").numpy(),
                                  np.zeros((2, 2)))


def test_unconnected_gradients_variables_zeros():
    x = tf.Variable(tf.constant(1., shape=[2, 2]))
    y = tf.Variable(tf.constant(3.))
    with tf.GradientTape() as g:
        g.watch([x, y])
        z = y * 2
    np.testing.assert_array_equal(g.gradient(z, x, unconnected_gradients="zero").numpy(),
                                  np.zeros((2, 2)))


def test_unknown_unconnected_gradients_value_given():
    x = tf.constant(1.0)
    y = tf.constant(1.0)
    with tf.GradientTape() as g:
        g.watch([x, y])
        z = y * 2
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'nonsense'"):
        g.gradient(z, x, unconnected_gradients="nonsense")


def test_unconnected_gradients_nested_function_zeros():
    @tf.function
    def f(x):
        return x * x

    @tf.function
    def h(y):
        return tf.stop_gradient(f(y))

    x = tf.constant(1.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = h(x + 2.)
    assert float(g.gradient(y, x, unconnected_gradients="zero")) == 0.0


def test_value_and_grad_with_python_numbers():
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        val = x * y
    dx, dy = tape.gradient(val, [x, y])
    assert (float(val), float(dx), float(dy)) == (6.0, 3.0, 2.0)


def test_mul_type():
    assert float(_grads(lambda x: x * x, 3.0)[0]) == 6.0


def test_args_gradient_function_and_partial():
    assert float(_grads(lambda *args: args[0] * args[0], 1.0)[0]) == 2.0
    part = functools.partial(lambda x, y: x * y, tf.constant(2.0))
    assert float(_grads(part, tf.constant(1.0))[0]) == 2.0


def test_return_same_thing():
    assert float(_grads(lambda x: (x, 2 * x), 1.0)[0]) == 3.0


def test_exception_safety():
    def f(unused_x):
        raise ValueError()
    with pytest.raises(ValueError):
        _grads(f, 1.0)
    assert float(_grads(lambda x: x * x, 1.0)[0]) == 2.0


def test_multi_value_convert_to_tensor():
    x = tf.Variable(initial_value=tf.constant([1.0]), name="x")
    with tf.GradientTape() as tape:
        a = tf.add(x.value(), 1.0)
        b = tf.stack([a, a], axis=0)
        loss = tf.reduce_mean(b)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [1.0])


def test_output_of_multi_output_function():
    x = tf.constant([0.0, 1.0, 2.0])
    (grad,) = _grads(lambda x: (x + 2, x * x), x)
    np.testing.assert_array_equal(grad.numpy(), [1.0, 3.0, 5.0])


def test_multi_value_preserves_if_not_diffed_against():
    i = tf.constant([[[[1.0]]]])
    k = tf.constant([[[[2.0]]]])
    (grad,) = _grads(lambda image, kernel: tf.nn.conv2d(image, kernel, [1, 1, 1, 1], "SAME"),
                     i, k, params=[0])
    np.testing.assert_array_equal(grad.numpy(), [[[[2.0]]]])


@pytest.mark.parametrize("make", [lambda: tf.constant(1.), lambda: 1., lambda: tf.constant([[1.]]),
                                  lambda: [[1.]], lambda: tf.Variable(1.)],
                         ids=["tensor", "float", "matrix", "list", "variable"])
def test_same_object_for_multiple_arguments(make):
    x = make()
    x = x if isinstance(x, tf.Tensor) else tf.constant(x)
    dx, dy = _grads(tf.multiply, x, x)
    np.testing.assert_array_equal(dx.numpy(), np.ones(x.shape))
    np.testing.assert_array_equal(dy.numpy(), np.ones(x.shape))


def test_custom_gradient_and_cached_variable_value():
    @tf.custom_gradient
    def my_square(x):
        result = tf.square(x)

        def grad(dr):
            return 2 * dr * x + 1
        return result, grad

    x = tf.Variable(3.)
    with tf.GradientTape() as tape:
        y = my_square(x)
    assert tape.watched_variables() == (x,)
    assert float(tape.gradient(y, x)) == 7.0


def test_jacobian_custom_gradient_inside_function():
    class MyCallable:
        def __init__(self):
            self.a = tf.Variable(1.)
            self.b = tf.Variable(2.)
            self.c = tf.Variable(3.)

        def __call__(self, x):
            return self.a * x * x + self.b * x + self.c

    @tf.function
    def call(c, x):
        @tf.custom_gradient
        def _call():
            y = c(x)

            def grad(dy, variables=None):
                with tf.GradientTape(persistent=True) as g:
                    g.watch(variables)
                    y = c(x)
                grad_vars = [2 * tf.reduce_sum(dy * g.jacobian(y, v)) for v in variables]
                del g
                return (), grad_vars
            return y, grad
        return _call()

    c = MyCallable()
    x = tf.constant([1., 2., 3.])
    with tf.GradientTape(persistent=True) as g:
        g.watch([c.a, c.b, c.c])
        y = call(c, x)
    assert g.gradient(y, x) is None
    grads = g.gradient(y, [c.a, c.b, c.c])
    np.testing.assert_allclose([float(v) for v in grads], [2 * 14.0, 2 * 6.0, 2 * 3.0])


def test_custom_gradient_training_loop():
    @tf.custom_gradient
    def my_mul(x, y):
        result = x * y

        def grad(dr):
            return [dr * y, dr * x]
        return result, grad

    x = tf.Variable(2., name="x")
    losses = []
    for _ in range(5):
        with tf.GradientTape() as tape:
            loss = my_mul(2., x.read_value())
        losses.append(float(loss))
        x.assign_sub(0.25 * tape.gradient(loss, x))
    assert losses == [4.0, 3., 2., 1., 0.]


def test_custom_gradient_identity():
    @tf.custom_gradient
    def my_identity(x):
        def grad(dresult):
            return [2 * dresult]
        return x, grad

    assert float(_grads(my_identity, 1.0)[0]) == 2.0


def test_selectively_watch_variables():
    x1 = tf.Variable(1.0)
    x2 = tf.Variable(1.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x2)
        y = x1 ** 2
        z = x2 ** 3
    assert tape.watched_variables() == (x2,)
    dy, dz = tape.gradient([y, z], [x1, x2])
    assert dy is None
    assert float(dz) == 3.0


def test_differentiating_scalar_cache():
    with tf.GradientTape(persistent=False) as g:
        x1 = tf.constant(3.0)
        x2 = tf.constant(3.0)
        g.watch(x1)
        g.watch(x2)
        y = x1 + x2
    assert [float(v) for v in g.gradient(target=y, sources=[x1])] == [1.0]


def test_variables_and_constants_produce_the_same_gradients():
    def get_grads(a, b):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            y = a ** 3
            z = b ** 2
        return [float(v) for v in tape.gradient([y, z], [a, b])]

    assert get_grads(tf.constant(2.0), tf.constant(2.0)) == [12.0, 4.0]
    assert get_grads(tf.Variable(2.0), tf.Variable(2.0)) == [12.0, 4.0]


def test_custom_gradient_in_eager():
    @tf.custom_gradient
    def f(x):
        y = x * x

        def grad(dy):
            return [4 * dy]
        return y, grad

    with tf.GradientTape() as t:
        c = tf.constant(1.0)
        t.watch(c)
        g = f(c)
    assert float(t.gradient(g, c)) == 4.0


def test_override_second_order_with_custom_gradient():
    @tf.custom_gradient
    def f(x):
        def first_order_grad(dz):
            @tf.custom_gradient
            def first_order_custom(unused_x):
                def h(ddz):
                    return -2.1 * ddz
                return -1.1, h
            return dz * first_order_custom(x)
        return x + 10., first_order_grad

    c = tf.constant(1.)
    with tf.GradientTape() as outer:
        outer.watch(c)
        with tf.GradientTape() as inner:
            inner.watch(c)
            d = f(c) ** 4.
        dd = inner.gradient(d, c)
        np.testing.assert_allclose(float(dd), 4. * 11. ** 3. * -1.1, rtol=1e-6)
    np.testing.assert_allclose(float(outer.gradient(dd, c)),
                               3. * 4. * 11. ** 2. * -1.1 * -1.1 + 4. * 11. ** 3. * -2.1,
                               rtol=1e-6)


def test_custom_gradient_second_order_and_transpose():
    @tf.custom_gradient
    def f(x):
        z = 2. * x.numpy()  # a numpy value: converted, its gradient comes from g only

        def g(dz):
            @tf.custom_gradient
            def first_order(unused_x, unused_dz):
                def second_order_and_transpose(unused_ddz):
                    return 2.2, 3.1
                return 2.1, second_order_and_transpose
            return first_order(x, dz)
        return z, g

    with tf.GradientTape(persistent=True) as t:
        with tf.GradientTape() as tt:
            c = tf.constant(1.)
            t.watch(c)
            tt.watch(c)
            output_grad = tf.ones([])
            t.watch(output_grad)
            output = f(c)
            np.testing.assert_allclose(float(output), 2.)
        gc = tt.gradient(output, c, output_gradients=output_grad)
        np.testing.assert_allclose(float(gc), 2.1)
    np.testing.assert_allclose(float(t.gradient(gc, c)), 2.2)
    np.testing.assert_allclose(float(t.gradient(gc, output_grad)), 3.1)


def test_watch_bad_thing():
    g = tf.GradientTape()
    with pytest.raises(ValueError, match="ndarray"):
        g.watch(np.array(1.))
    with pytest.raises(ValueError, match="float"):
        g.watch(1.0)


def test_watched_variables_after_non_persistent_gradient_call():
    with tf.GradientTape(persistent=False) as tape:
        x = tf.Variable(1.0)
        tape.watch(x)
    assert float(tape.gradient(x, x)) == 1.0
    assert tape.watched_variables() == (x,)


def test_watched_variables_only_has_variables_from_last_tape():
    with tf.GradientTape(persistent=False) as tape:
        x = tf.Variable(1.0)
        tape.watch(x)
    with tf.GradientTape(persistent=False) as tape:
        z = tf.Variable(2.0)
        tape.watch(z)
    tape.gradient(z, z)
    assert tape.watched_variables() == (z,)


def test_watched_variables_respect_reset():
    with tf.GradientTape(persistent=False) as tape:
        x = tf.Variable(1.0)
        tape.watch(x)
        assert tape.watched_variables() == (x,)
        tape.reset()
        z = tf.Variable(2.0)
        tape.watch(z)
        assert tape.watched_variables() == (z,)
    tape.gradient(z, z)
    assert tape.watched_variables() == (z,)


def test_zero_gradient_through_a_locally_constant_gradient_is_not_none():
    # The second derivative of leaky_relu is zero but connected (TF's LeakyReluGrad takes x).
    x = tf.Variable([-1.5, 0.5, 2.0])
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.nn.leaky_relu(x, alpha=0.2))
        g = inner.gradient(y, x)
        np.testing.assert_allclose(g.numpy(), [0.2, 1.0, 1.0])
        penalty = tf.reduce_sum(g * g)
    second = outer.gradient(penalty, x)
    np.testing.assert_array_equal(second.numpy(), np.zeros(3))


def test_gradient_penalty_gives_zero_for_a_bias_behind_relu():
    # WGAN-GP: the bias only moves relu's mask, so its penalty gradient is zero, not None.
    w = tf.Variable([[0.5, -1.0], [1.5, 0.25]])
    b = tf.Variable([0.1, -0.2])
    v = tf.Variable([[1.0], [-2.0]])
    x = tf.constant([[0.9, 0.2], [1.2, 0.4]])  # unit 0 active, unit 1 inactive in both rows
    with tf.GradientTape() as d_tape:
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(x)
            pred = tf.matmul(tf.nn.relu(tf.matmul(x, w) + b), v)
        grads = gp_tape.gradient(pred, [x])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=1))
        gp = tf.reduce_mean((norm - 1.0) ** 2)
    dw, db, dv = d_tape.gradient(gp, [w, b, v])
    np.testing.assert_array_equal(db.numpy(), [0.0, 0.0])
    # Each row of grads is v[0] * w[:, 0], so norm = |w[:, 0]| * |v[0]| for both rows.
    n = np.sqrt(0.5 ** 2 + 1.5 ** 2)
    np.testing.assert_allclose(dv.numpy(), [[2 * (n - 1) * n], [0.0]], rtol=1e-5)
    np.testing.assert_allclose(dw.numpy(), [[2 * (n - 1) * 0.5 / n, 0.0],
                                            [2 * (n - 1) * 1.5 / n, 0.0]], rtol=1e-5)


def test_split_concat_gradient_is_stable_across_calls():
    def get_grad():
        t = tf.constant(1, dtype=tf.float32, shape=(10, 4))
        x = tf.constant(2, dtype=tf.float32, shape=(10, 4))
        with tf.GradientTape() as tape:
            tape.watch(x)
            x1, _ = tf.split(x, num_or_size_splits=2, axis=1)
            y1 = x1 ** 2
            y = tf.concat([y1, t], axis=1)
        return tape.gradient(y, x).numpy()

    grad1, grad2 = get_grad(), get_grad()
    np.testing.assert_array_equal(grad1, grad2)
    np.testing.assert_array_equal(grad1, np.concatenate([np.full((10, 2), 4.0),
                                                         np.zeros((10, 2))], axis=1))


def test_value_and_gradient_of_a_cube():
    a = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(a)
        b = a ** 3
    assert (float(b), float(tape.gradient(b, a))) == (8.0, 12.0)


def test_non_empty_params_value_and_grad():
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(y)
        val = x * y
    grads = [tape.gradient(val, y)]
    assert float(val) == 6.0 and len(grads) == 1 and float(grads[0]) == 2.0
