"""Cases of TensorFlow's ``tensorflow/python/eager/backprop_test.py`` (BackpropTest, JacobianTest,
BatchJacobianTest; op gradients here, GradientTape behaviour in ``test_tf_backprop_test_tape.py``,
the jacobian cases in ``test_tf_backprop_test_jacobian.py``), written for minitf with the public API: TF's internal helpers
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
