"""Cases of TensorFlow's ``tensorflow/python/eager/forwardprop_test.py`` (ForwardpropTest,
ControlFlowTests, HessianTests), written for minitf. The test's helpers (``_jvp``, ``_jacfwd``,
``_grad``, ``_hvp``, ``_test_gradients``) are re-implemented here with the public API; the
numeric Jacobians are float64 central differences. ``map_fn``/``vectorized_map`` in the Hessian
helper become a Python loop over one-hot tangents.

Left out (they need features outside minitf): TF's internal hooks (``_jvp_dispatch``,
``TFE_Py_RegisterJVPFunction``, ``forwardprop_util.pack_tangents``/``push_forwardprop_state``,
``acc._watch``, ``tape_lib.record_operation*``, ``should_record_backprop``, the global
``tape_lib.stop_recording``), ``MirroredStrategy``, the function trace-cache
limit, and the weakref/pyobject leak checks.
"""
import numpy as np
import pytest

import minitf as tf

X11_35_DERIVATIVES = [1.1 ** 3.5, 3.5 * 1.1 ** 2.5, 3.5 * 2.5 * 1.1 ** 1.5,
                      3.5 * 2.5 * 1.5 * 1.1 ** 0.5]


def _jvp(f, primals, tangents):
    with tf.autodiff.ForwardAccumulator(primals, tangents) as acc:
        out = f(*primals)
    return out, acc.jvp(out, unconnected_gradients="zero")


def _jacfwd(f, primal):
    """Forward-mode Jacobian of f at one primal: shape (out size, in size)."""
    n = int(tf.size(primal))
    columns = []
    for k in range(n):
        tangent = tf.reshape(tf.one_hot(k, n, dtype=primal.dtype), tf.shape(primal))
        columns.append(tf.reshape(_jvp(f, [primal], [tangent])[1], [-1]))
    return tf.stack(columns, axis=1)


def _jacback(f, primal):
    with tf.GradientTape() as tape:
        tape.watch(primal)
        out = f(primal)
    jac = tape.jacobian(out, primal, unconnected_gradients="zero")
    return tf.reshape(jac, [int(tf.size(out)), int(tf.size(primal))])


def _jacnum(f, primal, delta=1e-5):
    x = primal.numpy().astype(np.float64)
    columns = []
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = delta
        hi = f(tf.constant(x + step.reshape(x.shape))).numpy()
        lo = f(tf.constant(x - step.reshape(x.shape))).numpy()
        columns.append(((hi - lo) / (2 * delta)).reshape(-1))
    return np.stack(columns, axis=1)


def _grad(f):
    def _f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = f(x)
        return tape.gradient(out, x, unconnected_gradients="zero")
    return _f


def _hvp(f, primals, tangents):
    """Forward-over-back Hessian-vector product."""
    with tf.autodiff.ForwardAccumulator(primals, tangents) as acc:
        with tf.GradientTape() as tape:
            tape.watch(primals)
            f_out = f(*primals)
            assert f_out.shape == ()
        return acc.jvp(tape.gradient(f_out, primals))


def _vectorize_parameters(f, params, use_pfor, dtype):
    """Call f with a one-hot tangent for every parameter entry and stack the results."""
    parameter_sizes = [tf.size(param) for param in params]
    total_size = tf.math.add_n(parameter_sizes)

    def _wrapper(index):
        full_onehot = tf.one_hot(index, total_size)
        split_onehot = tf.split(full_onehot, parameter_sizes)
        tangents = [tf.reshape(v, tf.shape(param)) for param, v in zip(params, split_onehot)]
        return f(tangents)

    if use_pfor:
        return tf.vectorized_map(_wrapper, tf.range(total_size))
    return tf.map_fn(_wrapper, tf.range(total_size), dtype)


def _forward_over_back_hessian(f, params, use_pfor, dtype=None):
    """Rows of the Hessian of scalar f(*params), one Hessian-vector product per parameter."""
    return _vectorize_parameters(lambda tangents: _hvp(f, params, tangents), params,
                                 use_pfor=use_pfor, dtype=dtype)


def _test_gradients(f, primal, order, rtol=1e-6, atol=1e-8):
    """Forward and backward Jacobians of f's [0, order) derivatives against central
    differences (float64)."""
    if order > 1:
        _test_gradients(_grad(f), primal, order - 1, rtol, atol)
    num = _jacnum(f, primal)
    back = _jacback(f, primal).numpy()
    fwd = _jacfwd(f, primal).numpy()
    np.testing.assert_allclose(back, num, rtol=rtol * 1e3, atol=atol * 1e3)
    np.testing.assert_allclose(fwd, num, rtol=rtol * 1e3, atol=atol * 1e3)
    np.testing.assert_allclose(fwd, back, rtol=rtol, atol=atol)


def f64(value):
    return tf.constant(np.asarray(value, np.float64))


def test_jvp_of_add_and_mul():
    a, b = tf.constant(1.), tf.constant(3.)
    with tf.autodiff.ForwardAccumulator([a, b], [tf.constant(1.), tf.constant(5.)]) as acc:
        y = a + b
    assert float(acc.jvp(y)) == 6.0
    a, b = tf.constant([4.]), tf.constant([5.])
    with tf.autodiff.ForwardAccumulator([a, b], [tf.constant([2.]), tf.constant([3.])]) as acc:
        y = a * b
    np.testing.assert_allclose(acc.jvp(y).numpy(), [2. * 5. + 3. * 4.])


def test_add_of_growing_sizes():
    for n in range(4):
        x = tf.zeros([n])
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            y = x + x
        np.testing.assert_array_equal(acc.jvp(y).numpy(), np.full(n, 2.0))


def test_multiple_watches():
    x = tf.constant(-2.)
    with pytest.raises(ValueError, match="multiple times"):
        with tf.autodiff.ForwardAccumulator([x, x], [1., 2.]):
            pass
    with tf.autodiff.ForwardAccumulator([x], [3.]) as acc:
        assert float(acc.jvp(x)) == 3.0
        y = tf.constant(3.) * x
    assert float(acc.jvp(y)) == 9.0


def test_reenter():
    x = tf.constant(-2.)
    with tf.autodiff.ForwardAccumulator(x, 1.5) as acc:
        assert float(acc.jvp(x)) == 1.5
        y = 4. * x
        assert float(acc.jvp(y)) == 6.0
        with pytest.raises(ValueError, match="already recording"):
            with acc:
                pass
    z = 4. * x
    assert acc.jvp(z) is None
    with acc:
        yy = y * y
    assert float(acc.jvp(yy)) == 6. * -8. * 2.


def test_jvp_manual():
    primal, tangent = _jvp(tf.sin, (tf.constant(0.1),), (tf.constant(0.2),))
    np.testing.assert_allclose(float(primal), np.sin(0.1), rtol=1e-6)
    np.testing.assert_allclose(float(tangent), np.cos(0.1) * 0.2, rtol=1e-6)


def test_numeric_higher_order():
    def f(x):
        pointwise = tf.sin(x) * tf.tan(x)
        return tf.reduce_prod(pointwise + tf.reduce_sum(pointwise), axis=1)

    _test_gradients(f, f64([[2.0, 3.0], [1.0, 4.0]]), order=3)


def test_custom_gradient_numpy_forward():
    @tf.custom_gradient
    def f(x):
        def grad(dy):
            return dy * tf.cos(x)
        return np.sin(x.numpy()), grad

    _test_gradients(f, f64([1., 2.]), order=3)


def test_custom_gradient_recompute_grad():
    @tf.recompute_grad
    def f(x):
        return tf.reduce_prod(tf.tanh(x) ** 2)

    _test_gradients(f, f64([1.]), order=3)


def test_exception_in_custom_gradient_not_swallowed():
    @tf.custom_gradient
    def f(unused_x):
        def grad(unused_dy):
            raise ValueError("test_error_string")
        return 1., grad

    c, d = tf.constant(1.), tf.constant(2.)
    with tf.autodiff.ForwardAccumulator(c, d):
        with pytest.raises(ValueError, match="test_error_string"):
            f(c)


@pytest.mark.parametrize("value, op_fn", [(-0.5, tf.nn.elu), ([0.5], tf.nn.elu),
                                          (0.5, tf.nn.swish), ([-0.5], tf.nn.swish)],
                         ids=["EluM5", "EluP5", "SwishP5", "SwishM5"])
def test_elementwise_nn_ops(value, op_fn):
    _test_gradients(op_fn, f64(value), order=3)


def _deterministic(layer, input_value):
    layer.build(input_value.shape)
    for v in layer.trainable_variables:
        n = int(np.prod(v.shape))
        v.assign(np.arange(-1., 1., 2. / n, dtype=np.float64)[:n].reshape(v.shape)
                 .astype(v.dtype.as_numpy_dtype))
    return layer


@pytest.mark.parametrize("value, make", [
    ([[0.1]], lambda: tf.keras.layers.Dense(5, dtype="float64")),
    (np.arange(-1., 1., 2. / 32).reshape([1, 2, 4, 4]),
     lambda: tf.keras.layers.Conv2D(2, 2, dtype="float64")),
    ([[0.1], [0.2], [-0.3]], lambda: tf.keras.layers.BatchNormalization(dtype="float64"))],
    ids=["Dense", "Conv2D", "BatchNorm"])
def test_keras_layers(value, make):
    input_value = f64(value)
    layer = _deterministic(make(), input_value)
    _test_gradients(layer, input_value, order=2)


def _hvp_model():
    layers = [tf.keras.layers.Dense(18), tf.keras.layers.Conv2D(2, 2),
              tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)]

    def model(x):
        x = tf.nn.relu(layers[0](x))
        x = layers[2](x)
        x = tf.nn.relu(layers[1](tf.reshape(x, [-1, 2, 3, 3])))
        return layers[3](x)

    model(tf.zeros([2, 2]))
    variables = [v for layer in layers for v in layer.trainable_variables]
    return model, variables


@pytest.mark.parametrize("decorator", [tf.function, lambda f: f], ids=["function", "eager"])
def test_variables_hvp(decorator):
    tf.random.set_seed(3)
    model, variables = _hvp_model()

    def _loss():
        input_value = tf.constant([[-0.5, 1.], [0.5, -1.]])
        target = tf.constant([[-1.], [2.]])
        return tf.reduce_sum((model(input_value) - target) ** 2.)

    @decorator
    def _compute_hvps():
        with tf.GradientTape() as tape:
            loss = _loss()
        vector = tape.gradient(loss, variables)
        forward_over_back = _hvp(lambda *unused: _loss(), variables, vector)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(variables)
            loss = _loss()
            first_grads = tape.gradient(loss, variables)
        back_over_back = tape.gradient(first_grads, variables, output_gradients=vector)
        return forward_over_back, back_over_back

    fob, bob = _compute_hvps()
    for a, b in zip(fob, bob):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("order", range(4))
def test_higher_order_pure_forward(order):
    def _forwardgrad(f):
        def _compute(primal):
            with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.)) as acc:
                out = f(primal)
            return acc.jvp(out)
        return _compute

    f = lambda x: x ** 3.5  # noqa: E731
    for _ in range(order):
        f = _forwardgrad(f)
    np.testing.assert_allclose(float(f(tf.constant(1.1))), X11_35_DERIVATIVES[order], rtol=1e-5)


@pytest.mark.parametrize("decorator", [
    tf.function, lambda f: f], ids=["function", "eager"])
def test_grad_pure_forward(decorator):
    @decorator
    def f(x):
        return x ** 3.5

    primal = tf.constant(1.1)
    with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.)) as outer_acc:
        with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.)) as acc:
            primal_out = f(primal)
    inner_jvp = acc.jvp(primal_out)
    outer_jvp = outer_acc.jvp(inner_jvp)
    np.testing.assert_allclose(float(primal_out), X11_35_DERIVATIVES[0], rtol=1e-6)
    np.testing.assert_allclose(float(inner_jvp), X11_35_DERIVATIVES[1], rtol=1e-6)
    np.testing.assert_allclose(float(outer_jvp), X11_35_DERIVATIVES[2], rtol=1e-6)
    assert acc.jvp(outer_acc.jvp(primal_out)) is None


def test_jvp_packing_values():
    two = tf.constant(2.)
    primal_in = tf.constant(1.)
    inner_jvp = tf.constant(3.)
    with tf.autodiff.ForwardAccumulator([primal_in, inner_jvp],
                                        [tf.constant(2.), tf.constant(4.)]) as outer_acc:
        with tf.autodiff.ForwardAccumulator(primal_in, inner_jvp) as inner_acc:
            primal_out = primal_in * two
            assert float(inner_acc.jvp(primal_out)) == 6.0
            assert float(outer_acc.jvp(primal_out)) == 4.0
            assert float(outer_acc.jvp(inner_acc.jvp(primal_out))) == 8.0


def test_function_grad_in_function_pure_forward():
    @tf.function
    def take_gradients():
        @tf.function
        def f(x):
            return x ** 3.5

        primal = tf.constant(1.1)
        with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.)) as outer_acc:
            with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.)) as acc:
                primal_out = f(primal)
        inner_jvp = acc.jvp(primal_out)
        outer_jvp = outer_acc.jvp(inner_jvp)
        assert acc.jvp(outer_acc.jvp(primal_out)) is None
        return primal_out, inner_jvp, outer_jvp

    for value, expected in zip(take_gradients(), X11_35_DERIVATIVES):
        np.testing.assert_allclose(float(value), expected, rtol=1e-6)


def test_reusing_jvp_after_the_accumulator_exits():
    m1 = tf.random.uniform((16, 40))
    m2 = tf.identity(m1)
    tangent1 = tf.random.uniform((16, 40))
    tangent2 = tf.random.uniform((16, 40))
    with tf.autodiff.ForwardAccumulator(primals=[m1, m2], tangents=[tangent1, tangent2]) as acc:
        result1 = tf.matmul(m1, m1, transpose_b=True)
        result2 = tf.matmul(m2, m2, transpose_b=True)

    def expected(mat, tangent):
        mat, tangent = mat.numpy().astype(np.float64), tangent.numpy().astype(np.float64)
        return tangent @ mat.T + mat @ tangent.T

    np.testing.assert_allclose(result1.numpy(), result2.numpy())
    jvp1 = acc.jvp(result1)
    np.testing.assert_allclose(jvp1.numpy(), expected(m1, tangent1), rtol=1e-5)
    np.testing.assert_allclose(acc.jvp(result2).numpy(), expected(m2, tangent2), rtol=1e-5)
    later = tf.reduce_sum(jvp1 * 2.0)  # a forward gradient is an ordinary tensor afterwards
    np.testing.assert_allclose(float(later), 2 * expected(m1, tangent1).sum(), rtol=1e-5)


def _fun(x):
    return tf.reduce_prod(tf.tanh(x) ** 2)


def test_hvp_correctness():
    primals = f64([1., 2., 3.])
    tangents = f64([3., 4., 5.])
    (forward_back_eager,) = _hvp(_fun, (primals,), (tangents,))
    (forward_back_function,) = tf.function(_hvp)(_fun, (primals,), (tangents,))
    with tf.GradientTape(persistent=True) as g:
        g.watch(primals)
        with tf.GradientTape() as gg:
            gg.watch(primals)
            out = _fun(primals)
        grad = tf.unstack(gg.gradient(out, primals))
    hessian = tf.stack([g.gradient(grad[i], primals) for i in range(3)], axis=0)
    back_back = tf.tensordot(hessian, tangents, axes=1)
    np.testing.assert_allclose(forward_back_eager.numpy(), back_back.numpy(), rtol=1e-10)
    np.testing.assert_allclose(forward_back_function.numpy(), back_back.numpy(), rtol=1e-10)
    numeric = _jacnum(_grad(_fun), primals) @ tangents.numpy()
    np.testing.assert_allclose(back_back.numpy(), numeric, rtol=1e-6)


def test_tape_inside_stop_recording_under_accumulator():
    c = tf.constant(1.)
    with tf.autodiff.ForwardAccumulator(c, tf.constant(2.)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(c)
            with tape.stop_recording():
                d = c * 2.
            assert float(acc.jvp(d)) == 4.0
        assert tape.gradient(d, c) is None


def test_op_with_no_trainable_outputs():
    v = tf.Variable(1.)
    with tf.autodiff.ForwardAccumulator(v, 11.):
        v.assign_sub(0.5)
        assert float(v) == 0.5


def test_variable_read_in_function():
    v = tf.Variable(1.)
    with tf.autodiff.ForwardAccumulator(v, 11.) as acc:
        @tf.function
        def f():
            return v.read_value(), 2. * v.read_value()
        result = f()
        assert [float(r) for r in result] == [1.0, 2.0]
        assert [float(t) for t in acc.jvp(result)] == [11.0, 22.0]


@pytest.mark.parametrize("forward_prop_first", [True, False])
def test_forward_over_backward_nesting_decides(forward_prop_first):
    c = tf.constant(1.)
    if forward_prop_first:
        forward_accumulator = tf.autodiff.ForwardAccumulator(c, .1)
        gradient_tape = tf.GradientTape()
    else:
        gradient_tape = tf.GradientTape()
        forward_accumulator = tf.autodiff.ForwardAccumulator(c, .1)
    with gradient_tape:
        pass
    with forward_accumulator as acc:
        with gradient_tape as tape:
            tape.watch(c)
            d = tf.cos(c)
            e = tf.cos(acc.jvp(d))
            tf.cos(e)
        # The tape is inside the accumulator: it does not see the tangent computation.
        assert tape.gradient(acc.jvp(d), c) is None


@pytest.mark.parametrize("forward_prop_first", [True, False])
def test_backward_over_forward(forward_prop_first):
    c = tf.constant(1.)
    if forward_prop_first:
        forward_accumulator = tf.autodiff.ForwardAccumulator(c, .1)
        gradient_tape = tf.GradientTape()
    else:
        gradient_tape = tf.GradientTape()
        forward_accumulator = tf.autodiff.ForwardAccumulator(c, .1)
    with gradient_tape as tape:
        with forward_accumulator as acc:
            tape.watch(c)
            d = tf.cos(c)
        np.testing.assert_allclose(float(tape.gradient(acc.jvp(d), c)), -.1 * np.cos(1.),
                                   rtol=1e-6)


def test_variable_watched():
    v = tf.Variable([1., 2., 3.])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([.1, -.2, .3])) as acc:
        np.testing.assert_allclose(acc.jvp(v).numpy(), [.1, -.2, .3])
        x = v * 2.
        np.testing.assert_allclose(acc.jvp(x).numpy(), [.2, -.4, .6])
        x2 = v + .1
        np.testing.assert_allclose(acc.jvp(x2).numpy(), [.1, -.2, .3])


def test_unconnected_gradients():
    x = tf.constant(-1.)
    with tf.autodiff.ForwardAccumulator(x, 0.1) as acc:
        np.testing.assert_allclose(float(acc.jvp(x, unconnected_gradients="zero")), 0.1)
        np.testing.assert_allclose(float(acc.jvp(x, unconnected_gradients="none")), 0.1)
        y = tf.constant(-2.)
        assert float(acc.jvp(y, unconnected_gradients="zero")) == 0.0
        assert acc.jvp(y, unconnected_gradients="none") is None


def test_variable_watched_in_function():
    class Model:
        def __init__(self):
            self.v = tf.Variable([1., 2., 3.])

        @tf.function
        def compute_jvps(self):
            with tf.autodiff.ForwardAccumulator(self.v, tf.constant([.1, -.2, .3])) as acc:
                x = self.v * 2.
                x2 = self.v + .1
            return acc.jvp((self.v, x, x2))

    v_jvp, x_jvp, x2_jvp = Model().compute_jvps()
    np.testing.assert_allclose(v_jvp.numpy(), [.1, -.2, .3])
    np.testing.assert_allclose(x_jvp.numpy(), [.2, -.4, .6])
    np.testing.assert_allclose(x2_jvp.numpy(), [.1, -.2, .3])


def test_argument_unused():
    v = tf.constant(1.)
    with tf.autodiff.ForwardAccumulator(v, 11.) as acc:
        @tf.function
        def _f(x):
            del x
            return tf.constant(1.)
        result = _f(v)
        assert float(result) == 1.0
        assert acc.jvp(result) is None


def test_custom_gradient_jvp_comes_from_its_vjp():
    @tf.custom_gradient
    def scaled(x):
        def grad(dy):
            return 3.0 * dy  # deliberately not the true derivative (2)
        return 2.0 * x, grad

    x = tf.constant([1.0, -2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.5])) as acc:
        y = scaled(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3.0, 1.5])


# --- ControlFlowTests: Python control flow on values known when the code runs --------------------

def test_jvp_through_python_loop_and_cond():
    y = tf.constant(1.)
    with tf.autodiff.ForwardAccumulator(y, 1.) as acc:
        ret = 0.
        for i in range(5):
            ret += y * tf.cast(i, tf.float32)
        k = tf.constant(5)
        cond = 3. * y if k > 1 else tf.constant(0.)
    assert float(acc.jvp(ret)) == 10.0
    assert float(acc.jvp(cond)) == 3.0


# --- HessianTests --------------------------------------------------------------------------------

def test_hessian_1d():
    m = 4
    rng = np.random.RandomState([1, 2, 3])
    mat_value = rng.randn(m, m).astype("float32")
    x_value = rng.randn(m).astype("float32")
    hess_value = mat_value + mat_value.T
    mat = tf.Variable(mat_value)

    def _f(x):
        return tf.reduce_sum(x[:, None] * mat * x[None, :])

    (hessian_eager,) = _forward_over_back_hessian(_f, [tf.constant(x_value)], use_pfor=False,
                                                  dtype=[tf.float32])
    np.testing.assert_allclose(hessian_eager.numpy(), hess_value, rtol=1e-5, atol=1e-6)
    for use_pfor in (False, True):
        (hessian_function,) = tf.function(_forward_over_back_hessian)(
            _f, [tf.constant(x_value)], use_pfor=use_pfor, dtype=[tf.float32])
        np.testing.assert_allclose(hessian_function.numpy(), hess_value, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_pfor", [True, False], ids=["PFor", "MapFn"])
def test_hessian_of_variables(use_pfor):
    model = tf.keras.layers.Dense(1)
    model.build([None, 2])

    def _loss(*unused_args):
        input_value = tf.constant([[-0.5, 1.], [0.5, -1.]])
        target = tf.constant([[-1.], [2.]])
        return tf.reduce_sum((model(input_value) - target) ** 2.)

    kernel_hess, bias_hess = _forward_over_back_hessian(
        _loss, [model.kernel, model.bias], use_pfor=use_pfor, dtype=[tf.float32, tf.float32])
    assert kernel_hess.shape == (3, 2, 1)
    assert bias_hess.shape == (3, 1)
    full = tf.concat([tf.reshape(kernel_hess, [3, 2]), bias_hess], axis=1).numpy()
    np.testing.assert_allclose(full, full.T, rtol=1e-6)
    # loss = sum((x w + b - t)^2): the Hessian is 2 [x 1]^T [x 1], whatever the weights.
    design = np.array([[-0.5, 1., 1.], [0.5, -1., 1.]])
    np.testing.assert_allclose(full, 2 * design.T @ design, rtol=1e-6)
