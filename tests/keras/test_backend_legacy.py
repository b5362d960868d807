"""tf.keras 2's legacy ``keras.backend`` functions (``K.batch_dot``, ``K.rnn``, ``K.conv1d``,
``K.pool2d``, the focal losses, variable updates...). Expected values were produced by running
TF 2.21's ``tensorflow.python.keras.backend`` (tf.keras 2's backend) on the same inputs; the
focal losses follow ``tf_keras/backend.py`` (keras-team/tf-keras), evaluated with TF ops."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B

K = tf.keras.backend


def S(*shape, off=0, dtype="float32"):
    """Deterministic test input: sin(off), sin(off + 1), ... reshaped."""
    n = int(np.prod(shape))
    return tf.constant(np.sin(np.arange(off, off + n)).reshape(shape).astype(dtype))


def close(actual, expected, atol=2e-5):
    np.testing.assert_allclose(np.asarray(K.eval(actual)), np.asarray(expected, "float64"),
                               atol=atol)


# --- batch_dot ---------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape, y_shape, axes, expected_shape", [
    ((2, 3), (2, 3), None, (2, 1)), ((32, 20, 1), (32, 30, 20), (1, 2), (32, 1, 30)),
    ((2, 3, 4), (2, 4, 2), None, (2, 3, 2)), ((2, 3), (2, 3, 2), (1, 1), (2, 2)),
    ((2, 3, 4), (2, 4), None, (2, 3)), ((2, 2, 3, 2), (2, 2, 3), (3, 1), (2, 2, 3, 3)),
    ((2, 3, 2), (2, 2, 2, 3), (2, 1), (2, 3, 2, 3)), ((2, 3, 4), (2, 3, 4), 1, (2, 4, 4)),
])
def test_batch_dot_shapes(x_shape, y_shape, axes, expected_shape):
    # (32, 20, 1) x (32, 30, 20) -> (32, 1, 30) is the example of tf.keras 2's docstring.
    assert K.int_shape(K.batch_dot(S(*x_shape), S(*y_shape, off=1), axes=axes)) == \
        expected_shape


def test_batch_dot_values():
    close(K.batch_dot(S(2, 3), S(2, 3, off=5)), [[0.362276], [0.349401]])
    close(K.batch_dot(S(2, 3, 4), S(2, 4, 2, off=3)),
          [[[-0.151353, 0.587729], [0.89992, 0.206832], [-1.025101, -0.858117]],
           [[0.732103, -0.069426], [-0.748496, -0.69423], [0.246397, 0.976985]]])
    close(K.batch_dot(S(2, 3), S(2, 3, 2, off=1), axes=(1, 1)),
          [[-0.753199, -0.890899], [0.739737, 1.065868]])
    close(K.batch_dot(S(2, 3, 4), S(2, 4, off=2)),
          [[-0.704734, -1.24202, 2.328411], [1.674032, -1.232409, -0.06292]])
    close(K.batch_dot(S(2, 3, 4), S(2, 4, 3, off=1), axes=(-1, -2)),
          [[[-0.116203, -0.048405, 0.063897], [-0.452098, -0.702045, -0.306535],
            [0.707225, 0.966179, 0.336832]],
           [[-0.203704, -0.581397, -0.424556], [0.04194, -0.173353, -0.229266],
            [0.148877, 0.80802, 0.724273]]])
    four = K.batch_dot(S(2, 2, 3, 2), S(2, 2, 3, off=4), axes=(3, 1))
    close(four[0, 1], [[0.643094, 0.917933, 0.348829], [-0.477992, -0.540987, -0.1066],
                       [-0.245264, -0.467674, -0.260107]])
    close(K.batch_dot(S(2, 3, 2), S(2, 2, 2, 3, off=4), axes=(2, 1))[1, 2],
          [[0.165477, 1.369233, 1.314122], [0.050814, -1.259212, -1.411525]])
    close(K.batch_dot(S(2, 3, 4), S(2, 3, 4, off=1), axes=1)[1, 0],
          [0.81516, -0.323402, -1.16463, -0.935102])


def test_batch_dot_in_a_traced_function():
    fn = tf.function(lambda x, y: K.batch_dot(x, y, axes=(2, 1)))
    close(fn(S(2, 3, 2), S(2, 2, 2, 3, off=4))[1, 2],
          [[0.165477, 1.369233, 1.314122], [0.050814, -1.259212, -1.411525]])


@pytest.mark.parametrize("x, y, axes, match", [
    ((2, 3), (3, 3), None, r"different batch sizes.*\(2, 3\) and \(3, 3\)"),
    ((2,), (2, 3), None, r"rank < 2.*\(2,\) and \(2, 3\)"),
    ((2, 3), (2, 4), (1, 1), r"x.shape\[1\] != y.shape\[1\] \(3 != 4\)"),
    ((2, 3), (2, 3), (0, 1), "Cannot perform batch_dot over axis 0"),
    ((2, 3), (2, 3), ((1,), 1), "Multiple target dimensions are not supported"),
])
def test_batch_dot_errors(x, y, axes, match):
    with pytest.raises(ValueError, match=match):
        K.batch_dot(S(*x), S(*y), axes=axes)


def _central_difference(fn, value, eps=1e-6):
    value = np.asarray(value, "float64")
    grad = np.zeros_like(value)
    for index in np.ndindex(*value.shape):
        plus, minus = value.copy(), value.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (float(fn(tf.constant(plus))) - float(fn(tf.constant(minus)))) / (2 * eps)
    return grad


def _tape_gradient(fn, value):
    x = tf.constant(np.asarray(value, "float64"))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x).numpy()


@pytest.mark.parametrize("x_shape, y_shape, axes", [
    ((2, 3), (2, 3, 2), (1, 1)), ((2, 2, 3, 2), (2, 2, 3), (3, 1)), ((2, 3, 2), (2, 2), None)])
def test_batch_dot_gradients_match_central_differences(x_shape, y_shape, axes):
    x0 = np.sin(np.arange(np.prod(x_shape))).reshape(x_shape)
    y0 = np.cos(np.arange(np.prod(y_shape))).reshape(y_shape)
    out_shape = K.int_shape(K.batch_dot(tf.constant(x0), tf.constant(y0), axes=axes))
    weights = tf.constant(np.linspace(-1.0, 1.0, int(np.prod(out_shape))).reshape(out_shape))
    wrt_x = lambda x: tf.reduce_sum(K.batch_dot(x, tf.constant(y0), axes=axes) * weights)  # noqa
    wrt_y = lambda y: tf.reduce_sum(K.batch_dot(tf.constant(x0), y, axes=axes) * weights)  # noqa
    np.testing.assert_allclose(_tape_gradient(wrt_x, x0), _central_difference(wrt_x, x0),
                               atol=1e-7)
    np.testing.assert_allclose(_tape_gradient(wrt_y, y0), _central_difference(wrt_y, y0),
                               atol=1e-7)


# --- rnn ---------------------------------------------------------------------------------------
W, U, BIAS = S(3, 2, off=1) * 0.5, S(2, 2, off=11) * 0.5, tf.constant([0.1, -0.2])
MASK = tf.constant([[True, True, False, True], [True, False, False, False]])


def _step(x, states):
    h, acc, bias = states  # two states, then the constant
    h2 = tf.tanh(tf.matmul(x, W) + tf.matmul(h, U) + bias)
    return h2 * 2.0, [h2, acc + tf.reduce_sum(x, -1, keepdims=True)]


def _run(unroll=False, **kwargs):
    return K.rnn(_step, S(2, 4, 3, off=3), [tf.zeros((2, 2)), tf.ones((2, 1))],
                 constants=[BIAS], unroll=unroll, **kwargs)


@pytest.mark.parametrize("unroll", [False, True])
def test_rnn_without_mask(unroll):
    last, outputs, states = _run(unroll)
    close(outputs, [[[1.02445, 0.55414], [-1.13451, -1.22642], [1.402, 0.35886],
                     [-1.4167, -1.37218]],
                    [[1.34384, 0.65301], [-1.44272, -1.2634], [1.59015, 0.3612],
                     [-1.5361, -1.31911]]])
    close(last, [[-1.4167, -1.37218], [-1.5361, -1.31911]])
    assert len(states) == 2
    close(states[0], [[-0.70835, -0.68609], [-0.76805, -0.65956]])
    close(states[1], [[0.53463], [0.41903]])


def test_rnn_with_mask_carries_output_and_states():
    last, outputs, states = _run(mask=MASK)
    close(outputs, [[[1.02445, 0.55414], [-1.13451, -1.22642], [-1.13451, -1.22642],
                     [-0.78756, -1.42563]],
                    [[1.34384, 0.65301], [1.34384, 0.65301], [1.34384, 0.65301],
                     [1.34384, 0.65301]]])
    close(last, [[-0.78756, -1.42563], [1.34384, 0.65301]])
    close(states[0], [[-0.39378, -0.71281], [0.67192, 0.3265]])
    close(states[1], [[1.66652], [0.40099]])


def test_rnn_zero_output_for_mask():
    last, outputs, states = _run(mask=MASK, zero_output_for_mask=True)
    close(outputs, [[[1.02445, 0.55414], [-1.13451, -1.22642], [0, 0], [-0.78756, -1.42563]],
                    [[1.34384, 0.65301], [0, 0], [0, 0], [0, 0]]])
    close(last, [[-0.78756, -1.42563], [0, 0]])
    close(states[0], [[-0.39378, -0.71281], [0.67192, 0.3265]])


def test_rnn_go_backwards():
    _, outputs, states = _run(go_backwards=True)
    close(outputs, [[[-1.03228, -1.25991], [1.37182, 0.31611], [-1.27661, -1.3497],
                     [1.26205, 0.24181]],
                    [[-1.15134, -1.16755], [1.54161, 0.33143], [-1.51787, -1.38257],
                     [1.56243, 0.39499]]])
    close(states[0], [[0.63102, 0.1209], [0.78121, 0.1975]])
    _, outputs, states = _run(go_backwards=True, mask=MASK)
    close(outputs, [[[-1.03228, -1.25991], [-1.03228, -1.25991], [-0.61872, -1.42022],
                     [1.03254, 0.03156]],
                    [[0, 0], [0, 0], [0, 0], [1.34384, 0.65301]]])
    close(states[0], [[0.51627, 0.01578], [0.67192, 0.3265]])
    _, outputs, _ = _run(go_backwards=True, mask=MASK, zero_output_for_mask=True)
    close(outputs[0, 1], [0, 0])
    close(outputs[0, 2], [-0.61872, -1.42022])


def test_rnn_time_major_and_nested_inputs():
    x = S(2, 4, 3, off=3)
    last, outputs, _ = K.rnn(_step, tf.transpose(x, (1, 0, 2)),
                             [tf.zeros((2, 2)), tf.ones((2, 1))], constants=[BIAS],
                             time_major=True)
    assert outputs.shape == (4, 2, 2)
    close(outputs[:, 1], [[1.34384, 0.65301], [-1.44272, -1.2634], [1.59015, 0.3612],
                          [-1.5361, -1.31911]])
    close(last, [[-1.4167, -1.37218], [-1.5361, -1.31911]])

    def pair_step(inputs, states):
        a, b = inputs["a"], inputs["b"]
        total = states[0] + a * b
        return {"sum": total, "diff": a - b}, [total]
    inputs = {"a": tf.constant([[[1.0], [2.0], [3.0]]]), "b": tf.constant([[[2.0], [0.5], [1.0]]])}
    last, outputs, states = K.rnn(pair_step, inputs, [tf.zeros((1, 1))])
    close(outputs["sum"], [[[2.0], [3.0], [6.0]]])
    close(outputs["diff"], [[[-1.0], [1.5], [2.0]]])
    close(last["sum"], [[6.0]])
    close(states[0], [[6.0]])


def test_rnn_gradients_match_central_differences():
    x0 = np.sin(np.arange(2 * 3 * 2)).reshape(2, 3, 2)
    kernel = tf.constant(np.cos(np.arange(4)).reshape(2, 2) * 0.7)
    mask = tf.constant([[True, False, True], [True, True, True]])
    weights = tf.constant(np.linspace(-1.0, 1.0, 12).reshape(2, 3, 2))

    def step(x, states):
        h = tf.tanh(x + tf.matmul(states[0], kernel))
        return h, [h]

    def loss(x):
        last, outputs, states = K.rnn(step, x, [tf.zeros((2, 2), tf.float64)], mask=mask)
        return tf.reduce_sum(outputs * weights) + tf.reduce_sum(states[0] * last)
    np.testing.assert_allclose(_tape_gradient(loss, x0), _central_difference(loss, x0),
                               atol=1e-7)


def test_rnn_errors():
    with pytest.raises(ValueError, match=r"rank >= 3.*\(2, 4\)"):
        K.rnn(_step, S(2, 4), [tf.zeros((2, 2))])


# --- focal losses ------------------------------------------------------------------------------
def test_binary_focal_crossentropy():
    y_true = tf.constant([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y_pred = tf.constant([[0.6, 0.4], [0.2, 0.9], [1.0, 0.7]])
    close(K.binary_focal_crossentropy(y_true, y_pred),
          [[0.32986, 0.32986], [1.03004, 1.86509], [0.0, 0.0321]])
    close(K.binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=True, alpha=0.4,
                                      gamma=1.5),
          [[0.25551, 0.17034], [0.46065, 1.17959], [0.0, 0.02344]])
    logits = tf.constant([[0.3, -1.2], [2.0, 0.1], [-0.5, 3.0]])
    close(K.binary_focal_crossentropy(y_true, logits, from_logits=True),
          [[0.28192, 0.86426], [0.0018, 0.20516], [0.37741, 0.00011]])


def test_categorical_focal_crossentropy():
    y_true = tf.constant([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    y_pred = tf.constant([[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]])
    close(K.categorical_focal_crossentropy(y_true, y_pred), [3e-05, 0.46627])
    close(K.categorical_focal_crossentropy(y_true, y_pred, alpha=[0.2, 0.3, 0.5], gamma=1.0),
          [0.00077, 1.03616])
    close(K.categorical_focal_crossentropy(
        y_true, tf.constant([[1.0, 2.0, 0.5], [0.3, -0.2, 1.1]]), from_logits=True),
        [0.01602, 0.02388])
    close(K.categorical_focal_crossentropy(tf.transpose(y_true), tf.transpose(y_pred), axis=0),
          [3e-05, 0.46627])
    with pytest.raises(ValueError, match=r"same shape, got \(2, 3\) and \(2, 2\)"):
        K.categorical_focal_crossentropy(y_true, y_pred[:, :2])


# --- batch_normalization -----------------------------------------------------------------------
MEAN, VAR = tf.constant([0.1, -0.2, 0.3]), tf.constant([0.5, 1.5, 2.0])
BETA, GAMMA = tf.constant([0.0, 0.1, -0.1]), tf.constant([1.0, 2.0, 0.5])


def test_batch_normalization():
    x = S(2, 2, 2, 3)
    close(K.batch_normalization(x, MEAN, VAR, BETA, GAMMA)[0, 0],
          [[-0.14128, 1.800148, 0.115365], [0.058094, -0.808952, -0.544986]])
    close(K.batch_normalization(x, MEAN, VAR, None, None, axis=3, epsilon=0.1)[1, 1],
          [[-1.09862, 0.276602, 0.422972], [0.951018, 0.151116, -0.790967]])
    close(K.batch_normalization(S(2, 3, 2, 2), MEAN, VAR, BETA, GAMMA, axis=1)[1],
          [[[-0.899351, 0.452332], [1.258251, 0.777448]],
           [[-0.043498, -1.142942], [-0.799459, 0.671157]],
           [[0.116655, 0.089689], [-0.209168, -0.505149]]])
    close(K.batch_normalization(S(2, 3), MEAN, VAR, BETA, GAMMA),
          [[-0.14128, 1.800148, 0.115365], [0.058094, -0.808952, -0.544986]])


# --- convolutions and pooling ------------------------------------------------------------------
def _first(x):
    """Channels-last ``x`` as channels-first."""
    x = tf.convert_to_tensor(x)
    return tf.transpose(x, [0, len(x.shape) - 1] + list(range(1, len(x.shape) - 1)))


def test_conv1d():
    x, kernel = S(1, 5, 2), S(3, 2, 2, off=7)
    close(K.conv1d(x, kernel), [[[-0.07344, 0.13214], [0.19612, -0.13393], [-0.08978, -0.02067]]])
    close(K.conv1d(x, kernel, strides=2, padding="same"),
          [[[0.80919, 0.4658], [0.19612, -0.13393], [-0.72901, -0.75647]]])
    close(K.conv1d(x, kernel, padding="causal", dilation_rate=2),
          [[[-0.80899, -0.63193], [0.45563, -0.36777], [0.78333, 1.77159],
            [-1.66332, -0.76105], [0.94783, -1.59595]]])
    close(K.conv1d(_first(x), kernel, data_format="channels_first"),
          [[[-0.07344, 0.19612, -0.08978], [0.13214, -0.13393, -0.02067]]])


def test_conv2d_transpose():
    x, kernel = S(1, 2, 2, 2), S(2, 2, 3, 2, off=3)
    y = K.conv2d_transpose(x, kernel, (1, 4, 4, 3), strides=(2, 2))
    close(y[0, 1], [[-0.24226, -0.63193, 0.76822], [-0.00745, -0.76202, 0.64167],
                    [0.55068, -0.98018, 0.26512], [0.75952, -0.89726, -0.01273]])
    close(K.conv2d_transpose(x, kernel, (None, 2, 2, 3), padding="same"),
          [[[[-0.63683, -0.23512, 0.83252], [-0.43626, -1.36289, 1.57058]],
            [[0.37665, 0.36172, -0.67771], [0.21637, -0.3865, 0.10531]]]])
    y = K.conv2d_transpose(_first(x), kernel, (1, 3, 4, 4), strides=(2, 2),
                           data_format="channels_first")
    close(y[0, 2], [[0.83252, 0.83357, 0.73701, 0.52185], [0.76822, 0.64167, 0.26512, -0.01273],
                    [-1.44593, -1.2679, 0.46642, 0.53341], [-0.98887, -0.63107, 0.55791, 0.53797]])
    y = K.conv2d_transpose(x, kernel, (1, 4, 4, 3), dilation_rate=(2, 2))
    close(y[0, 0], [[-0.63683, -0.23512, 0.83252], [0.02152, -0.91138, 0.73701],
                    [-0.45778, -0.45151, 0.83357], [0.29797, -0.98501, 0.52185]])
    with pytest.raises(ValueError, match=r"equal to each other.*\(1, 2\)"):
        K.conv2d_transpose(x, kernel, (1, 4, 4, 3), dilation_rate=(1, 2))


def test_conv3d():
    x, kernel = S(1, 3, 3, 3, 2), S(2, 2, 2, 2, 1, off=4)
    close(K.conv3d(x, kernel)[..., 0],
          [[[[-0.0513, -0.9367], [0.24514, -1.03494]], [[0.75738, -0.98283], [0.93237, -0.83663]]]])
    close(K.conv3d(x, kernel, strides=(2, 2, 2), padding="same")[..., 0],
          [[[[-0.0513, 0.75116], [1.71048, 0.67599]], [[-0.19201, 0.53132], [2.00964, -1.12634]]]])
    close(K.conv3d(x, kernel, dilation_rate=(1, 2, 2)).numpy().ravel(), [-0.34687, 0.22071])
    close(K.conv3d(_first(x), kernel, data_format="channels_first")[:, 0],
          [[[[-0.0513, -0.9367], [0.24514, -1.03494]], [[0.75738, -0.98283], [0.93237, -0.83663]]]])


def test_depthwise_and_separable_conv2d():
    x, depthwise, pointwise = S(1, 3, 3, 2), S(2, 2, 2, 2, off=9), S(1, 1, 4, 3, off=2)
    close(K.depthwise_conv2d(x, depthwise),
          [[[[1.47844, 1.10184, -0.99997, -0.26555], [-1.34957, -1.98255, 0.14328, 1.48217]],
            [[1.6452, 1.52626, -0.8763, -0.67647], [-1.01409, -1.81853, -0.15138, 1.53107]]]])
    close(K.depthwise_conv2d(S(1, 4, 4, 2), S(2, 2, 2, 1, off=9), strides=(2, 2)),
          [[[[-0.84736, 0.16265], [0.38625, 0.39815]], [[0.74772, 0.03615], [-0.14359, -0.54218]]]])
    y = K.depthwise_conv2d(_first(x), depthwise, padding="same", data_format="channels_first")
    close(y[0, 3], [[-0.26555, 1.48217, -0.3984], [-0.67647, 1.53107, -0.34114],
                    [-0.41267, -0.07214, 0.51586]])
    close(K.separable_conv2d(x, depthwise, pointwise),
          [[[[-0.43602, -0.36885, 0.03743], [-0.66644, -0.37274, 0.26366]],
            [[-0.15811, -0.19246, -0.04986], [-0.8591, -0.5189, 0.29837]]]])
    y = K.separable_conv2d(x, depthwise, pointwise, padding="same", dilation_rate=(2, 2))
    close(y[0, 1], [[0.42155, 0.07046, -0.34541], [-1.37007, -0.73128, 0.57985],
                    [0.10136, -0.03134, -0.13522]])


def test_pool2d_and_pool3d():
    x = S(1, 4, 4, 2)
    close(K.pool2d(x, (2, 2), strides=(2, 2)),
          [[[[0.98936, 0.84147], [0.99061, 0.65699]], [[0.76256, 0.95638], [0.91295, 0.83666]]]])
    close(K.pool2d(x, (3, 3), strides=(2, 2), padding="same", pool_mode="avg"),
          [[[[-0.00719, -0.01321], [0.05365, 0.12649]], [[0.00032, 0.03092], [0.04674, -0.26931]]]])
    close(K.pool2d(_first(x), (2, 2), data_format="channels_first", pool_mode="avg")[0, 1],
          [[0.09868, -0.34941, 0.19213], [-0.34985, 0.10168, 0.26522],
           [0.00313, 0.31982, -0.26931]])
    v = S(1, 3, 3, 3, 1)
    max3 = [[[[0.84147], [0.99061]], [[0.65699], [0.99061]]],
            [[[0.83666], [0.99061]], [[0.83666], [0.99061]]]]
    close(K.pool3d(v, (2, 2, 2)), [max3])
    close(K.pool3d(v, (2, 2, 2), strides=(2, 2, 2), padding="same", pool_mode="avg"),
          [[[[[-0.00282], [-0.01475]], [[0.18499], [0.01398]]],
            [[[0.05667], [0.03336]], [[-0.51897], [0.76256]]]]])
    close(K.pool3d(_first(v), (2, 2, 2), data_format="channels_first")[0, 0],
          np.asarray(max3)[..., 0])


@pytest.mark.parametrize("call, error, match", [
    (lambda: K.pool2d(S(1, 2, 2, 1), (2, 2), pool_mode="min"), ValueError,
     r"pool2d: Invalid pooling mode: 'min'; expected 'max' or 'avg'"),
    (lambda: K.pool2d(S(1, 2, 2, 1), (2, 2, 2)), ValueError,
     r"pool2d: `pool_size` must be a tuple of 2 integers, got \(2, 2, 2\)"),
    (lambda: K.conv1d(S(1, 3, 1), S(1, 1, 1), padding="full"), ValueError,
     r"conv1d: Invalid padding: 'full'"),
    (lambda: K.conv3d(S(1, 2, 2, 2, 1), S(1, 1, 1, 1, 1), data_format="NDHWC"), ValueError,
     r"conv3d: Unknown data_format: 'NDHWC'"),
    (lambda: K.resize_images(S(1, 2, 2, 1), 2, 2, "nchw"), ValueError,
     r"resize_images: Invalid `data_format` argument: 'nchw'"),
    (lambda: K.resize_images(S(1, 2, 2, 1), 2, 2, "channels_last", interpolation="bicubic"),
     ValueError, r"interpolation should be one of \"nearest\" or \"bilinear\", got 'bicubic'"),
    (lambda: K.resize_volumes(S(1, 1, 1, 1, 1), 1, 1, 1, "x"), ValueError,
     r"resize_volumes: Invalid data_format: 'x'"),
    (lambda: K.spatial_2d_padding(S(1, 2, 2, 1), (1, 1)), ValueError,
     r"spatial_2d_padding: padding must be 2 \(before, after\) pairs, got \(1, 1\)"),
])
def test_conv_family_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- padding and resizing ----------------------------------------------------------------------
def test_padding():
    close(K.temporal_padding(S(1, 2, 1), (1, 2))[0, :, 0], [0, 0, 0.841471, 0, 0])
    y = K.spatial_2d_padding(S(1, 1, 2, 1, off=1), ((1, 0), (0, 1)))
    assert y.shape == (1, 2, 3, 1)
    close(y[0, :, :, 0], [[0, 0, 0], [0.841471, 0.909297, 0]])
    assert K.spatial_2d_padding(S(1, 1, 2, 1), ((1, 0), (0, 1)),
                                data_format="channels_first").shape == (1, 1, 3, 2)
    assert K.spatial_3d_padding(S(1, 1, 1, 2, 1)).shape == (1, 3, 3, 4, 1)
    y = K.spatial_3d_padding(S(1, 1, 1, 2, 1, off=1), ((0, 1), (1, 0), (2, 0)),
                             data_format="channels_first")
    assert y.shape == (1, 1, 2, 3, 3)
    close(y[0, 0, 0], [[0, 0, 0], [0, 0, 0.841471], [0, 0, 0.909297]])


def test_resize_images_and_volumes():
    x = S(1, 2, 2, 1)
    close(K.resize_images(x, 2, 3, "channels_last")[0, :, :, 0],
          [[0, 0, 0, 0.841471, 0.841471, 0.841471]] * 2 +
          [[0.909297, 0.909297, 0.909297, 0.14112, 0.14112, 0.14112]] * 2)
    close(K.resize_images(x, 2, 2, "channels_last", interpolation="bilinear")[0, :, :, 0],
          [[0, 0.210368, 0.631103, 0.841471], [0.227324, 0.337089, 0.556618, 0.666383],
           [0.681973, 0.590532, 0.407649, 0.316208], [0.909297, 0.717253, 0.333164, 0.14112]])
    close(K.resize_images(S(1, 1, 2, 2), 1, 2, "channels_first", interpolation="bilinear"),
          [[[[0, 0.210368, 0.631103, 0.841471], [0.909297, 0.717253, 0.333164, 0.14112]]]])
    y = K.resize_volumes(S(1, 1, 2, 1, 1, off=1), 2, 1, 3, "channels_last")
    assert y.shape == (1, 2, 2, 3, 1)
    close(y[0, 1, :, :, 0], [[0.841471] * 3, [0.909297] * 3])
    assert K.resize_volumes(S(1, 1, 1, 2, 1), 2, 1, 3, "channels_first").shape == (1, 1, 2, 2, 3)


def test_dilated_conv2d_transpose_gradient_matches_central_differences():
    x = tf.constant(np.sin(np.arange(8)).reshape(1, 2, 2, 2))
    k0 = np.cos(np.arange(12)).reshape(2, 2, 3, 1).repeat(2, axis=3) * 0.5
    weights = tf.constant(np.linspace(-1.0, 1.0, 48).reshape(1, 4, 4, 3))

    def loss(kernel):
        y = K.conv2d_transpose(x, kernel, (1, 4, 4, 3), dilation_rate=(2, 2))
        return tf.reduce_sum(y * weights)
    np.testing.assert_allclose(_tape_gradient(loss, k0), _central_difference(loss, k0),
                               atol=1e-7)


# --- values, variables and updates -------------------------------------------------------------
def test_variable_updates():
    x = tf.Variable(0.0)
    K.moving_average_update(x, 2.0, 0.9)  # tf.keras 2's docstring example: 0.2
    close(x, 0.2, atol=1e-6)
    v = tf.Variable([1.0, 2.0])
    close(K.update(v, [3.0, 4.0]), [3.0, 4.0])
    K.update_add(v, [1.0, 1.0])
    close(v, [4.0, 5.0])
    K.update_sub(v, [0.5, 0.5])
    close(v, [3.5, 4.5])
    with pytest.raises(TypeError, match="update_add: expected a tf.Variable to update, got "):
        K.update_add(tf.constant([1.0]), 1.0)


def test_batch_get_and_set_value():
    v, w = tf.Variable([1.0, 2.0]), tf.Variable([1, 2], dtype=tf.int32)
    values = K.batch_get_value([v, tf.constant([1, 2])])
    assert isinstance(values[0], np.ndarray)
    np.testing.assert_array_equal(values[1], [1, 2])
    K.batch_set_value([(v, [7.0, 8.0]), (w, np.array([1.7, 2.2]))])
    np.testing.assert_array_equal(v.numpy(), [7.0, 8.0])
    np.testing.assert_array_equal(w.numpy(), [1, 2])  # converted to int32 as tf.keras 2 does

    @tf.function
    def read_inside():
        return K.batch_get_value([v])
    with pytest.raises(RuntimeError, match="batch_get_value: Cannot get value inside"):
        read_inside()


def test_cast_to_floatx_and_sparse_helpers():
    cast = K.cast_to_floatx(np.array([1.0, 2.0]))  # tf.keras 2's docstring example
    assert isinstance(cast, np.ndarray) and cast.dtype == np.float32
    assert K.cast_to_floatx(tf.constant([1, 2])).dtype == tf.float32
    on_device = K.cast_to_floatx(B.xp.asarray([1, 2]))  # a backend array stays one
    assert on_device.dtype == np.float32
    np.testing.assert_array_equal(B.to_numpy(on_device), [1.0, 2.0])
    sparse = tf.SparseTensor([[0, 1], [1, 2]], [3.0, 4.0], [2, 3])
    assert K.is_sparse(sparse) and not K.is_sparse(tf.constant(1.0))
    np.testing.assert_array_equal(K.to_dense(sparse).numpy(), [[0, 3, 0], [0, 0, 4]])
    np.testing.assert_array_equal(K.eval(sparse), [[0, 3, 0], [0, 0, 4]])
    assert K.cast_to_floatx(tf.SparseTensor([[0, 0]], tf.constant([1], tf.int32), [1, 1])) \
        .values.dtype == tf.float32


def test_random_variables():
    uniform = K.random_uniform_variable((200,), -1.0, 2.0, seed=3)
    assert isinstance(uniform, tf.Variable) and uniform.dtype == tf.float32
    assert -1.0 <= uniform.numpy().min() and uniform.numpy().max() < 2.0
    normal = K.random_normal_variable((2000,), 1.0, 0.5, dtype="float64", seed=4)
    assert normal.dtype == tf.float64
    assert abs(normal.numpy().mean() - 1.0) < 0.05 and abs(normal.numpy().std() - 0.5) < 0.05
    np.testing.assert_array_equal(K.random_bernoulli((3, 4), p=0.0).numpy(), np.zeros((3, 4)))
    np.testing.assert_array_equal(K.random_bernoulli((3, 4), p=1.0).numpy(), np.ones((3, 4)))
    draws = K.random_bernoulli((4000,), p=0.3, seed=5).numpy()
    assert set(np.unique(draws)) <= {0.0, 1.0} and abs(draws.mean() - 0.3) < 0.04


def test_dropout():
    y = K.dropout(tf.ones((100, 40)), 0.25, seed=1).numpy()
    np.testing.assert_allclose(y[y != 0], 1 / 0.75, rtol=1e-6)
    assert abs((y == 0).mean() - 0.25) < 0.03
    y = K.dropout(tf.ones((50, 30)), 0.5, noise_shape=(50, 1)).numpy()
    assert np.all(y == y[:, :1])  # one keep/drop flag per row


def test_functional_helpers():
    add = lambda acc, x: acc * 2 + x  # noqa: E731
    elems = tf.constant([1.0, 2.0, 3.0])
    assert float(K.foldl(add, elems)) == 11.0
    assert float(K.foldl(add, elems, initializer=tf.constant(10.0))) == 91.0
    assert float(K.foldr(add, elems)) == 17.0
    assert float(K.foldr(add, elems, initializer=tf.constant(10.0))) == 97.0
    np.testing.assert_array_equal(
        K.map_fn(lambda r: tf.reduce_sum(r) * 2.0, tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy(),
        [6.0, 14.0])
    predictions = tf.constant([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4], [0.9, 0.05, 0.05]])
    targets = tf.constant([2, 0, 1])
    np.testing.assert_array_equal(K.in_top_k(predictions, targets, 1).numpy(), [False] * 3)
    np.testing.assert_array_equal(K.in_top_k(predictions, targets, 2).numpy(), [True] * 3)
    np.testing.assert_array_equal(K.in_top_k(tf.constant([[0.5, 0.5, 0.1]]), tf.constant([1]),
                                             1).numpy(), [True])  # ties count
    close(K.reverse(S(2, 3), 1), [[0.909297, 0.841471, 0.0], [-0.958924, -0.756802, 0.14112]])
    close(K.reverse(S(2, 3), [0, 1]), [[-0.958924, -0.756802, 0.14112],
                                       [0.909297, 0.841471, 0.0]])
    with K.name_scope("block"):
        pass


def test_gradients_raises_like_eager_tf_keras():
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager execution "
                                           "is enabled.*Use tf.GradientTape instead"):
        K.gradients(tf.constant(1.0), [tf.Variable(1.0)])
