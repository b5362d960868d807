"""Cases of TensorFlow's ``tensorflow/python/eager/backprop_test.py`` (BackpropTest, JacobianTest,
BatchJacobianTest), written for minitf with the public API: TF's internal helpers
(``backprop.gradients_function``, ``implicit_grad``, ``make_vjp``, ``val_and_grad_function``) are
replaced by the GradientTape calls they stand for, and ``ResourceVariable`` by ``Variable``. Expected values are the ones the TF test states, or float64
numpy / central differences.

Left out (they need features outside minitf): graph mode and ``tf.compat.v1`` sessions
(testGradientInsideLoop, testUnknownShapes, testZerosCacheDoesntLeakAcrossGraphs,
testGradientTapeWithCond/WhileLoop under v1, testNameScope), string tensors
(testTapeGradientStringTarget and friends), GPU device placement (testGPU, testTensorCopy*),
attribute-type internals (testGetAttrType, testMakeAttr*), IndexedSlices and SparseTensor
(testWatchComposite, AggregateIndexedSlicesGradientsTest; gather gradients are dense in minitf),
``tape.record_operation`` (testInvalidRecordOperationMessage), ``while_loop`` with a memory checker
(testRecomputeGradWithNestedFunctionAndWhileLoop), 3-D pooling (testMaxPooling3DGradient) and the
memory-checker decorators.
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


def test_aggregate_gradients_of_gathers():
    var_np = np.random.RandomState(0).rand(4, 2).astype(np.float32)

    def fn(x):
        g1 = tf.nn.embedding_lookup(x, tf.constant(np.array([0, 1])))
        g2 = tf.nn.embedding_lookup(x, tf.constant(np.array([2, 3])))
        g3 = tf.nn.embedding_lookup(x, tf.constant(np.array([1, 3])))
        g4 = tf.reduce_sum(x * tf.constant(2.0))
        return g1 * g2 * g3 * g4

    (grad,) = _grads(fn, tf.constant(var_np))
    x = var_np.astype(np.float64)
    expected = np.zeros_like(x)
    eps = 1e-6
    for idx in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        f = lambda v: np.sum(v[[0, 1]] * v[[2, 3]] * v[[1, 3]] * np.sum(2 * v))  # noqa: E731
        expected[idx] = (f(hi) - f(lo)) / (2 * eps)
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_implicit_grad_with_variable():
    x = tf.Variable(tf.constant(1.0), name="x")
    with tf.GradientTape() as tape:
        c = tf.add(x.value(), tf.constant(2.0))
        y = tf.add(c, tf.constant(3.0))
    (g,) = tape.gradient(y, tape.watched_variables())
    assert float(g) == 1.0
    assert tape.watched_variables()[0] is x


@pytest.mark.parametrize("decorator", [tf.function, lambda f: f], ids=["function", "eager"])
def test_no_op_behavior_consistent(decorator):
    @decorator
    def f(x):
        x1 = tf.identity(x)
        x2 = tf.add(x, 0)
        x3 = tf.subtract(x, 0)
        x4 = tf.multiply(x, 1)
        with tf.GradientTape() as t:
            t.watch(x)
            t.watch(x1)
            t.watch(x2)
            t.watch(x3)
            t.watch(x4)
            loss = x * 2. + x1 * 3. + x2 * 3. + x3 * 3. + x4 * 3.
        return t.gradient(loss, [x, x1, x2, x3, x4])

    np.testing.assert_allclose([float(g) for g in f(tf.constant(10.))], [2., 3., 3., 3., 3.])


def test_where_gradient():
    f = lambda x: tf.where(x < 10, x, x * x)  # noqa: E731
    assert float(_grads(f, 5.)[0]) == 1.0
    assert float(_grads(f, 50.)[0]) == 100.0


def test_two_targets():
    with tf.GradientTape() as t:
        x = tf.constant(3.0)
        y = tf.constant(2.0)
        t.watch([x, y])
        xx = 2 * x
        yy = 3 * y
    dx, dy = t.gradient([xx, yy], [x, y])
    assert (float(dx), float(dy)) == (2.0, 3.0)


def test_custom_gradient_empty_error():
    @tf.custom_gradient
    def identity(x):
        def grad(_):
            return []  # the wrong number of gradients
        return x, grad

    x = tf.Variable(1.0)
    with tf.GradientTape() as t:
        y = identity(x)
    with pytest.raises(ValueError):
        t.gradient(y, [x])


def test_output_grad_used_in_computation():
    with tf.GradientTape() as t:
        x = tf.constant(3.0)
        y = tf.constant(2.0)
        t.watch([x, y])
        loss = x * y
    (dx,) = t.gradient([loss, x], [x], output_gradients=[1.0, 2.0])
    assert float(dx) == 4.0


def test_dy():
    assert float(_grads(lambda x: x, 1., dy=2.)[0]) == 2.0


def test_gradient_integer():
    assert _grads(lambda x: x + x, tf.constant(1))[0] is None


def test_errors_in_custom_gradient_propagate():
    @tf.custom_gradient
    def f(x):
        def grad(_):
            raise RuntimeError("x")
        return x, grad

    with pytest.raises(RuntimeError):
        _grads(f, tf.constant(1.0))


def test_gradients_function_in_custom_gradient():
    @tf.custom_gradient
    def f(x):
        (y,) = _grads(lambda x: x * x, x)

        def grad(dy):
            return [2 * dy]
        return y, grad

    assert float(f(tf.constant(1.0))) == 2.0


def test_implicit_grad_over_gather_then_sgd():
    init = tf.random.uniform([100, 16])
    embedding = tf.Variable(init)
    ids = tf.ones((8,), tf.int64)
    with tf.GradientTape() as tape:
        y = tf.constant(1.0) - tf.gather(embedding, ids)
    (grad,) = tape.gradient(y, [embedding])
    expected_grad = np.zeros((100, 16), np.float32)
    expected_grad[1] = -8.0
    np.testing.assert_allclose(grad.numpy(), expected_grad)
    tf.keras.optimizers.SGD(0.1).apply_gradients([(grad, embedding)])
    np.testing.assert_allclose(embedding.numpy(), init.numpy() - 0.1 * expected_grad, rtol=1e-6)


def test_implicit_grad_ordering():
    v0 = tf.Variable(1.0)
    v1 = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        x = v1 * v1
        y = v0 * v0
        z = x + y
    ordered = tape.watched_variables()
    assert ordered[0] is v0 and ordered[1] is v1
    assert [float(g) for g in tape.gradient(z, ordered)] == [2.0, 4.0]


def test_tape_no_op_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x
    assert t.gradient(y, x).numpy() == 1.0


def test_tape_identity_gradient_is_identity():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.identity(x)
    assert t.gradient(y, x).numpy() == 1.0


def test_function_gradient_through_gather():
    @tf.function
    def f(x):
        return x + 1

    with tf.GradientTape() as t:
        x = tf.constant([1.0])
        t.watch(x)
        y = f(x)
        y = tf.gather(y, [0])
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), [1.0])


def test_gather_gradient_traced_inside_function():
    @tf.function
    def grad_of_gather(params, ids):
        with tf.GradientTape() as t:
            t.watch(params)
            y = tf.reduce_sum(tf.gather(params, ids) * tf.constant([[1.0], [2.0], [3.0]]))
        return t.gradient(y, params)

    params = tf.constant(np.arange(8.0, dtype=np.float32).reshape(4, 2))
    for ids in ([0, 2, 0], [3, 3, 1]):
        expected = np.zeros((4, 2), np.float32)
        for w, i in zip((1.0, 2.0, 3.0), ids):
            expected[i] += w
        np.testing.assert_allclose(grad_of_gather(params, tf.constant(ids)).numpy(), expected)


def test_tape_gradient_multi_target_one_is_source():
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    assert t.gradient([x, y], x).numpy() == 5.0


def test_tape_no_op_gradient_with_multi_target_all_source():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x
    assert t.gradient([y, y], x).numpy() == 2.0


def test_tape_no_op_gradient_with_multi_target_multi_source():
    x = tf.constant(3.0)
    y = tf.constant(5.0)
    with tf.GradientTape() as t:
        t.watch(x)
        t.watch(y)
        z = y * y
    assert [float(g) for g in t.gradient([x, y, z], [x, y])] == [1.0, 11.0]


def test_tape_no_op_on_variable_is_identity():
    v0 = tf.Variable(1.0)
    with tf.GradientTape() as t:
        y = v0.read_value()
    assert t.gradient(y, v0).numpy() == 1.0


def test_tape_no_op_gradient_2_by_2():
    a = tf.constant(2.0, shape=[2, 2])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(a)
    np.testing.assert_array_equal(tape.gradient(a, [a])[0].numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(tape.gradient([a, a], [a])[0].numpy(), np.full((2, 2), 2.0))


def test_tape_stop_recording():
    with tf.GradientTape() as t:
        x = tf.Variable(1.0)
        with t.stop_recording():
            y = x * x
    assert t.gradient(y, x) is None


def test_tape_stop_start_recording():
    with tf.GradientTape(persistent=True) as t:
        x = tf.Variable(1.0)
        x2 = x * 2
        with t.stop_recording():
            y = x2 * x2
        z = x2 * x2
    assert t.gradient(y, x2) is None
    assert t.gradient(z, x2).numpy() == 4.0


def test_tape_reset():
    with tf.GradientTape() as t:
        v = tf.Variable(1.0)
        loss = v * v
        t.reset()
        loss += v * v
    assert float(t.gradient(loss, v)) == 2.0


def test_python_max():
    x = [tf.Variable(2.), tf.Variable(3.), tf.Variable(5.)]
    with tf.GradientTape() as t:
        f = max(x)
    grad = t.gradient(f, x)
    assert float(f) == 5.0
    assert grad[0] is None and grad[1] is None and float(grad[2]) == 1.0


def test_python_builtins_over_tensors():
    a, b = tf.Variable(2.0), tf.Variable(-3.0)
    with tf.GradientTape(persistent=True) as t:
        lo = min(a, b)
        total = sum([a, b, a])
        magnitude = abs(b)
    assert float(lo) == -3.0 and float(total) == 1.0 and float(magnitude) == 3.0
    assert float(t.gradient(lo, b)) == 1.0
    assert [float(g) for g in t.gradient(total, [a, b])] == [2.0, 1.0]
    assert float(t.gradient(magnitude, b)) == -1.0
    assert bool(a > b) and not bool(a < b)


def test_automatic_watched_variables():
    with tf.GradientTape() as t:
        assert len(t.watched_variables()) == 0
        v = tf.Variable(1.0)
        loss = v * v
        assert t.watched_variables() == (v,)
        t.reset()
        assert len(t.watched_variables()) == 0
        loss += v * v
        assert t.watched_variables() == (v,)


def test_explicit_watched_variables():
    with tf.GradientTape() as t:
        v = tf.Variable(1.0)
        t.watch(v)
        assert t.watched_variables() == (v,)
        t.reset()
        assert len(t.watched_variables()) == 0
        t.watch(v)
        assert t.watched_variables() == (v,)


def test_gradient_none_of_softmax_cross_entropy_labels():
    def loss(x, labels):
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=x, labels=labels),
                              tf.constant([0]))

    logits = tf.constant([[0.0, 0.0]])
    labels = tf.constant([[1.0, 0.0]])
    (g,) = _grads(loss, logits, labels, params=[0])
    np.testing.assert_allclose(g.numpy(), [[-0.5, 0.5]])


def test_gradient_within_tape_block():
    v1 = tf.Variable(1.)
    with tf.GradientTape() as t:
        loss = 2 * v1
        grad = t.gradient(loss, v1)
    assert float(grad) == 2.0
    with tf.GradientTape(persistent=True) as t:
        loss = 2 * v1
        grad = t.gradient(loss, v1)
    assert float(grad) == 2.0


def test_nested_self_contexts():
    with tf.GradientTape() as t:
        with pytest.raises(ValueError):
            with t:
                pass


def test_second_grad_of_softmax_cross_entropy():
    def first(x):
        labels = tf.constant([[0.0]])
        x = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x)
        return tf.reduce_sum(x, tf.constant([0]))

    def second(x):
        return tf.reduce_sum(_grads(first, x)[0], tf.constant([0]))

    (grad,) = _grads(second, tf.constant([[0.1]]))
    np.testing.assert_array_equal(grad.numpy(), [[0.0]])


def test_watching_is_tape_local():
    x1 = tf.Variable(2.0, trainable=False)
    x2 = tf.Variable(2.0, trainable=False)
    with tf.GradientTape() as tape1:
        with tf.GradientTape() as tape2:
            tape1.watch(x1)
            tape2.watch([x1, x2])
            y = x1 ** 3
            z = x2 ** 2
            dy, dz = tape2.gradient([y, z], [x1, x2])
        d2y, d2z = tape1.gradient([dy, dz], [x1, x2])
    assert float(d2y) == 12.0
    assert d2z is None


def test_make_vjp_persistent_and_not():
    for persistent in (False, True):
        x = tf.constant(3.0)
        with tf.GradientTape(persistent=persistent) as tape:
            tape.watch(x)
            result = x * x
        assert float(result) == 9.0
        assert float(tape.gradient(result, x, output_gradients=tf.constant(2.0))) == 12.0
        if persistent:
            assert float(tape.gradient(result, x, output_gradients=tf.constant(2.0))) == 12.0


def test_grad_grad():
    def grad(x):
        return _grads(lambda v: v * v, x)[0]
    assert float(_grads(grad, tf.constant(3.0))[0]) == 2.0


def test_grad_grad_exp():
    def grad(x):
        return _grads(tf.exp, x)[0]
    assert float(_grads(grad, tf.constant(0.0))[0]) == 1.0


def test_stop_gradient_and_argmax_have_no_gradient():
    assert _grads(lambda x: tf.stop_gradient(tf.argmax(x)), [0.0])[0] is None
    assert _grads(lambda x: tf.stop_gradient(x), [0.0])[0] is None


def test_cpu_add_chain():
    fn = lambda x: tf.add(tf.add(x, tf.constant(2.0)), tf.constant(3.0))  # noqa: E731
    assert float(_grads(fn, tf.constant(1.0))[0]) == 1.0


def test_empty_params():
    x, y = tf.constant(1.0), tf.constant(2.0)
    dx, dy = _grads(lambda a, b: a * b, x, y)
    assert (float(dx), float(dy)) == (2.0, 1.0)


def test_unconnected_none():
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        v.read_value()
        y = tf.constant(1.0)
    assert tape.gradient(y, v) is None


def test_gradient_tape_re_enter_context():
    g = tf.GradientTape()
    with g:
        x = tf.constant(3.0)
        g.watch(x)
        y = 2 * x
    with g:
        z = 2 * y
    assert [float(v) for v in g.gradient(target=z, sources=[x])] == [4.0]


def test_gradient_tape_repeated_source():
    with tf.GradientTape(persistent=False) as g:
        x = tf.constant(3.0)
        g.watch(x)
        y = 2 * x
    assert [float(v) for v in g.gradient(target=y, sources=[x, x])] == [2.0, 2.0]


def test_persistent_gradient_tape_repeated_source():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant(3.0)
        y = tf.constant(5.0)
        g.watch(x)
        g.watch(y)
        z = x * x + x * y
    assert [float(v) for v in g.gradient(target=z, sources=[x, x])] == [11.0, 11.0]
    assert [float(v) for v in g.gradient(target=z, sources=[y, x])] == [3.0, 11.0]


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


# --- JacobianTest --------------------------------------------------------------------------------

@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("in_function", [False, True])
def test_jacobian(use_pfor, in_function):
    def compute():
        with tf.GradientTape(persistent=not use_pfor) as g:
            x = tf.constant([1., 2.])
            y = tf.constant([3., 4.])
            g.watch(x)
            g.watch(y)
            z = x * x * y
        jacobian = g.jacobian(z, [x, y], experimental_use_pfor=use_pfor)
        return jacobian, [tf.linalg.diag(2 * x * y), tf.linalg.diag(x * x)]

    (jx, jy), answer = (tf.function(compute) if in_function else compute)()
    np.testing.assert_array_equal(jx.numpy(), answer[0].numpy())
    np.testing.assert_array_equal(jy.numpy(), answer[1].numpy())
    np.testing.assert_array_equal(jx.numpy(), np.diag([6., 16.]))
    np.testing.assert_array_equal(jy.numpy(), np.diag([1., 4.]))


def test_jacobian_needs_a_persistent_tape_twice():
    with tf.GradientTape() as g:
        x = tf.constant([1.0, 2.0])
        g.watch(x)
        y = x * x
    g.jacobian(y, x, experimental_use_pfor=False)
    with pytest.raises(RuntimeError, match="persistent"):
        g.jacobian(y, x, experimental_use_pfor=False)


def test_jacobian_parallel_iterations():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant([[1., 2], [3, 4]])
        g.watch(x)
        y = tf.matmul(x, x)
    np.testing.assert_allclose(g.jacobian(y, x, parallel_iterations=2).numpy(),
                               g.jacobian(y, x, parallel_iterations=3).numpy())


def test_nested_jacobian():
    x = tf.ones((10, 2))
    with tf.GradientTape(persistent=False) as g:
        g.watch(x)
        with tf.GradientTape(persistent=False) as gg:
            gg.watch(x)
            y = tf.reduce_sum(tf.square(x))
        dy_x = gg.jacobian(y, x)
    dy_xx = g.batch_jacobian(dy_x, x)
    np.testing.assert_allclose(dy_xx.numpy(), [[[2., 0], [0, 2.]]] * 10)


def test_jacobian_of_gather():
    with tf.GradientTape(persistent=True) as g:
        inp = tf.random.uniform([3, 2])
        g.watch(inp)
        output = tf.nn.embedding_lookup(inp, [0, 2])
    expected = np.zeros((2, 2, 3, 2), np.float32)
    for r, src in enumerate([0, 2]):
        for c in range(2):
            expected[r, c, src, c] = 1.0
    np.testing.assert_array_equal(g.jacobian(output, inp, experimental_use_pfor=True).numpy(),
                                  expected)
    np.testing.assert_array_equal(g.jacobian(output, inp, experimental_use_pfor=False).numpy(),
                                  expected)


@pytest.mark.parametrize("use_pfor", [True, False])
def test_jacobian_repeatedly_on_a_persistent_tape(use_pfor):
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant([[1., 2.], [3., 4.]])
        g.watch(x)
        y = tf.sin(x) * x
    expected = np.zeros((2, 2, 2, 2))
    xv = x.numpy().astype(np.float64)
    for i in np.ndindex(2, 2):
        expected[i + i] = np.cos(xv[i]) * xv[i] + np.sin(xv[i])
    for _ in range(3):
        np.testing.assert_allclose(g.jacobian(y, x, experimental_use_pfor=use_pfor).numpy(),
                                   expected, rtol=1e-6)
        np.testing.assert_allclose(
            g.batch_jacobian(y, x, experimental_use_pfor=use_pfor).numpy(),
            np.stack([expected[0, :, 0, :], expected[1, :, 1, :]]), rtol=1e-6)


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("shape", [(0, 3), (2, 0)])
def test_zero_size_gradients_and_jacobians(shape, use_pfor):
    x = tf.zeros(shape)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        flat = tf.reshape(x, [-1]) * 2.0
        y = x ** 2
    assert flat.shape == (0,)
    g = tape.gradient(flat, x)
    assert g.shape == shape
    assert tape.jacobian(flat, x, experimental_use_pfor=use_pfor).shape == (0,) + shape
    assert tape.jacobian(y, x, experimental_use_pfor=use_pfor).shape == shape + shape
    assert tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor).shape == (
        shape[0], shape[1], shape[1])


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("use_function", [True, False])
def test_jacobian_degenerate_shape(use_function, use_pfor):
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x ** 2
        return tape.jacobian(y, x, experimental_use_pfor=use_pfor)

    if use_function:
        f = tf.function(f)
    np.testing.assert_array_equal(tf.shape(f(tf.zeros([0]))).numpy(), [0, 0])


# --- BatchJacobianTest ---------------------------------------------------------------------------

@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("in_function", [False, True])
def test_batch_jacobian(use_pfor, in_function):
    def compute():
        with tf.GradientTape(persistent=not use_pfor) as g:
            x = tf.constant([[1., 2.], [3., 4.]])
            y = tf.constant([[3., 4.], [5., 6.]])
            g.watch(x)
            z = x * x * y
        return g.batch_jacobian(z, x, experimental_use_pfor=use_pfor)

    result = (tf.function(compute) if in_function else compute)()
    np.testing.assert_array_equal(result.numpy(),
                                  np.stack([np.diag([6., 16.]), np.diag([30., 48.])]))


def test_batch_jacobian_needs_a_persistent_tape_twice():
    with tf.GradientTape() as g:
        x = tf.constant([[1.0, 2.0]])
        g.watch(x)
        y = x * x
    g.batch_jacobian(y, x, experimental_use_pfor=False)
    with pytest.raises(RuntimeError, match="persistent"):
        g.batch_jacobian(y, x, experimental_use_pfor=False)


def test_batch_jacobian_bad_shape():
    x = tf.random.uniform([2, 3])
    with tf.GradientTape() as g:
        y = tf.concat([x, x], axis=0)
    with pytest.raises(ValueError, match="Need first dimension"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_bad_input_rank():
    x = tf.random.uniform([2])
    with tf.GradientTape() as g:
        y = tf.random.uniform([2, 2])
    with pytest.raises(ValueError, match="must have rank at least 2"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_bad_output_rank():
    x = tf.random.uniform([2, 2])
    with tf.GradientTape() as g:
        y = tf.random.uniform([2])
    with pytest.raises(ValueError, match="must have rank at least 2"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_parallel_iterations():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant([[1., 2], [3, 4]])
        g.watch(x)
        w = tf.constant([[1., 2, 3, 4], [5, 6, 7, 8]])
        y = tf.matmul(x, w)
    a = g.batch_jacobian(y, x, parallel_iterations=2).numpy()
    np.testing.assert_allclose(a, g.batch_jacobian(y, x, parallel_iterations=3).numpy())
    np.testing.assert_allclose(a, np.stack([w.numpy().T] * 2))


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("use_function", [True, False])
def test_batch_jacobian_degenerate_shape(use_function, use_pfor):
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x ** 2
        return tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor)

    if use_function:
        f = tf.function(f)
    np.testing.assert_array_equal(tf.shape(f(tf.zeros([1, 0]))).numpy(), [1, 0, 0])


def test_batch_jacobian_of_repeat_then_slice_by_a_tensor_bound():
    x = tf.ones([2, 4, 2])
    length = tf.constant([2, 3, 4, 4], dtype=tf.int64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.repeat(x, [2], axis=1)
        y = y[:, :tf.reduce_max(length), :]
    jb = tape.batch_jacobian(y, x).numpy()
    assert jb.shape == (2, 4, 2, 4, 2)
    expected = np.zeros((4, 2, 4, 2))
    for out_row in range(4):  # output row r of the repeat is input row r // 2
        for c in range(2):
            expected[out_row, c, out_row // 2, c] = 1.0
    np.testing.assert_array_equal(jb, np.stack([expected, expected]))
