"""Port of TensorFlow's guide "NumPy API on TensorFlow" (https://www.tensorflow.org/guide/tf_numpy).

Printed values and dtypes are TF 2.21's output for the same cells. Changed from the guide:
- The timing cells (``timeit`` of eager/``tf.function``/vectorized gradients and the sigmoid
  benchmark with its matplotlib plot) compare results instead of timing them: the compiled,
  vectorized and ``map_fn`` versions must agree with the eager computation.
- ``plt.hist`` is left out (no plotting); its input is checked as a NumPy array instead.
- ``"... %s" % ones.reshape(-1).shape`` is a separate xfail test: minitf's ``TensorShape`` is
  a tuple, so ``%`` takes it as the argument tuple (TF prints ``(15,)``).
The guide turns NumPy behavior on for the whole process; here it is on for this module only.
"""
import numpy as np
import pytest

import minitf as tf
import minitf.experimental.numpy as tnp
from minitf import experimental_numpy as _tnp_module

_MISSING = object()


@pytest.fixture(scope="module", autouse=True)
def numpy_behavior():
    """NumPy behavior on for this module, then tf.Tensor gets its own attributes back."""
    names = list(_tnp_module.NUMPY_METHODS) + list(_tnp_module._PROMOTING_OPERATORS)
    saved = {name: vars(tf.Tensor).get(name, _MISSING) for name in names}
    tnp.experimental_enable_numpy_behavior()
    try:
        yield
    finally:
        tnp.experimental_enable_numpy_behavior(prefer_float32=False)
        for name, attr in saved.items():
            if attr is _MISSING:
                delattr(tf.Tensor, name)
            else:
                setattr(tf.Tensor, name, attr)


def test_nd_array_attributes():
    tnp.experimental_enable_numpy_behavior()
    ones = tnp.ones([5, 3], dtype=tnp.float32)
    # TF 2.21 on a CPU: "... on device = /job:localhost/replica:0/task:0/device:CPU:0"
    assert ("Created ND array with shape = %s, rank = %s, dtype = %s on device = %s\n" % (
        ones.shape, ones.ndim, ones.dtype, ones.device)) == (
        "Created ND array with shape = (5, 3), rank = 2, dtype = <dtype: 'float32'> on "
        "device = %s\n" % ones.device)
    assert ones.device.startswith("/job:localhost/replica:0/task:0/device:")
    assert tuple(ones.shape) == (5, 3) and ones.ndim == 2 and ones.dtype == tf.float32
    assert isinstance(ones, tf.Tensor)
    assert "ndarray.T has shape %s" % str(ones.T.shape) == "ndarray.T has shape (3, 5)"
    assert tuple(ones.reshape(-1).shape) == (15,)


@pytest.mark.xfail(strict=True, reason="minitf's TensorShape is a tuple: '%s' % shape unpacks it")
def test_percent_format_of_a_shape():
    ones = tnp.ones([5, 3], dtype=tnp.float32)
    assert ("narray.reshape(-1) has shape %s" % ones.reshape(-1).shape
            == "narray.reshape(-1) has shape (15,)")


def test_type_promotion():
    lines = []
    values = [tnp.asarray(1, dtype=d) for d in
              (tnp.int32, tnp.int64, tnp.float32, tnp.float64)]
    for i, v1 in enumerate(values):
        for v2 in values[i + 1:]:
            lines.append("%s + %s => %s" % (v1.dtype.name, v2.dtype.name, (v1 + v2).dtype.name))
    assert lines == ["int32 + int64 => int64", "int32 + float32 => float64",
                     "int32 + float64 => float64", "int64 + float32 => float64",
                     "int64 + float64 => float64", "float32 + float64 => float64"]
    assert tnp.asarray(1).dtype.name == "int64"
    assert tnp.asarray(1.).dtype.name == "float64"

    tnp.experimental_enable_numpy_behavior(prefer_float32=True)
    try:
        assert tnp.asarray(1.).dtype.name == "float32"
        assert tnp.add(1., 2.).dtype.name == "float32"
    finally:
        tnp.experimental_enable_numpy_behavior(prefer_float32=False)
    assert tnp.asarray(1.).dtype.name == "float64"
    assert tnp.add(1., 2.).dtype.name == "float64"


def test_broadcasting_and_indexing():
    x = tnp.ones([2, 3])
    y = tnp.ones([3])
    z = tnp.ones([1, 2, 1])
    assert ("Broadcasting shapes %s, %s and %s gives shape %s" % (
        x.shape, y.shape, z.shape, (x + y + z).shape)) == \
        "Broadcasting shapes (2, 3), (3,) and (1, 2, 1) gives shape (1, 2, 3)"

    x = tnp.arange(24).reshape(2, 3, 4)
    basic = x[1, tnp.newaxis, 1:3, ...]
    assert basic.dtype == tf.int64
    np.testing.assert_array_equal(basic.numpy(), [[[16, 17, 18, 19], [20, 21, 22, 23]]])
    boolean = x[:, (True, False, True)]
    np.testing.assert_array_equal(boolean.numpy(), [[[0, 1, 2, 3], [8, 9, 10, 11]],
                                                    [[12, 13, 14, 15], [20, 21, 22, 23]]])
    advanced = x[1, (0, 0, 1), tnp.asarray([0, 1, 1])]
    np.testing.assert_array_equal(advanced.numpy(), [12, 13, 17])

    with pytest.raises(TypeError):
        tnp.arange(6)[1] = -1


class Model(object):
    """Model with a dense and a linear layer."""

    def __init__(self):
        self.weights = None

    def predict(self, inputs):
        if self.weights is None:
            size = inputs.shape[1]
            # Note that type `tnp.float32` is used for performance.
            stddev = tnp.sqrt(size).astype(tnp.float32)
            w1 = tnp.random.randn(size, 64).astype(tnp.float32) / stddev
            bias = tnp.random.randn(64).astype(tnp.float32)
            w2 = tnp.random.randn(64, 2).astype(tnp.float32) / 8
            self.weights = (w1, bias, w2)
        else:
            w1, bias, w2 = self.weights
        y = tnp.matmul(inputs, w1) + bias
        y = tnp.maximum(y, 0)  # Relu
        return tnp.matmul(y, w2)  # Linear projection


def create_batch(batch_size=32):
    """Creates a batch of input and labels."""
    return (tnp.random.randn(batch_size, 32).astype(tnp.float32),
            tnp.random.randn(batch_size, 2).astype(tnp.float32))


def compute_gradients(model, inputs, labels):
    """Computes gradients of squared loss between model prediction and labels."""
    with tf.GradientTape() as tape:
        assert model.weights is not None
        tape.watch(model.weights)
        prediction = model.predict(inputs)
        loss = tnp.sum(tnp.square(prediction - labels))
    return tape.gradient(loss, model.weights)


@pytest.fixture(scope="module")
def model():
    model = Model()
    prediction = model.predict(tnp.ones([2, 32], dtype=tnp.float32))
    assert tuple(prediction.shape) == (2, 2) and prediction.dtype == tf.float32
    w1, bias, w2 = (w.numpy() for w in model.weights)
    expected = np.maximum(np.ones([2, 32], np.float32) @ w1 + bias, 0) @ w2
    np.testing.assert_allclose(prediction.numpy(), expected, rtol=1e-5, atol=1e-5)
    return model


def test_example_model_predicts(model):
    assert [tuple(w.shape) for w in model.weights] == [(32, 64), (64,), (64, 2)]
    assert all(w.dtype == tf.float32 for w in model.weights)


def test_numpy_interoperability():
    np_sum = np.sum(tnp.ones([2, 3]))
    assert float(np_sum) == 6.0 and np_sum.__class__ is np.float64
    tnp_sum = tnp.sum(np.ones([2, 3]))
    assert float(tnp_sum) == 6.0 and isinstance(tnp_sum, tf.Tensor)

    labels = 15 + 2 * tnp.random.randn(1, 1000)
    assert labels.dtype == tf.float64 and np.asarray(labels).shape == (1, 1000)
    assert 14 < float(np.mean(labels)) < 16

    # Operator precedence: the ND array wins (TF: tf.Tensor [2. 2.] float64).
    x = np.ones([2]) + tnp.ones([2])
    assert isinstance(x, tf.Tensor) and x.dtype == tf.float64
    np.testing.assert_array_equal(x.numpy(), [2.0, 2.0])


def test_tf_interoperability():
    tf_sum = tf.reduce_sum(tnp.ones([2, 3], tnp.float32))
    assert "Output = %s" % tf_sum == "Output = tf.Tensor(6.0, shape=(), dtype=float32)"
    tnp_sum = tnp.sum(tf.ones([2, 3]))
    assert "Output = %s" % tnp_sum == "Output = tf.Tensor(6.0, shape=(), dtype=float32)"

    x = tf.constant([1, 2])
    tnp_x = tnp.asarray(x)
    assert tnp_x is x and tf.convert_to_tensor(tnp_x) is tnp_x   # TF 2.21: True, True
    assert tnp.copy(x) is not x
    assert str(tnp_x) == "tf.Tensor([1 2], shape=(2,), dtype=int32)"


def test_gradients_and_jacobians(model):
    inputs, labels = create_batch()
    gradients = compute_gradients(model, inputs, labels)
    assert [tuple(w.shape) for w in model.weights] == [tuple(g.shape) for g in gradients]
    assert isinstance(gradients[0], tnp.ndarray)
    # d/d bias of sum((relu(x w1 + b) w2 - y)^2), by hand
    w1, bias, w2 = (w.numpy() for w in model.weights)
    hidden = inputs.numpy() @ w1 + bias
    residual = np.maximum(hidden, 0) @ w2 - labels.numpy()
    grad_bias = ((2 * residual @ w2.T) * (hidden > 0)).sum(axis=0)
    np.testing.assert_allclose(gradients[1].numpy(), grad_bias, rtol=1e-4, atol=1e-4)

    def prediction_batch_jacobian(inputs):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            prediction = model.predict(inputs)
        return prediction, tape.batch_jacobian(prediction, inputs)

    inp_batch = tnp.ones([16, 32], tnp.float32)
    output, batch_jacobian = prediction_batch_jacobian(inp_batch)
    assert tuple(output.shape) == (16, 2) and tuple(inp_batch.shape) == (16, 32)
    assert tuple(batch_jacobian.shape) == (16, 2, 32)      # TF: (16, 2, 32)
    hidden = np.ones(32, np.float32) @ w1 + bias
    np.testing.assert_allclose(batch_jacobian.numpy()[0], ((w1 * (hidden > 0)) @ w2).T,
                               rtol=1e-4, atol=1e-5)


def test_tf_function_vectorized_map_and_map_fn_agree(model):
    inputs, labels = create_batch(64)
    compiled_compute_gradients = tf.function(compute_gradients)
    for compiled, eager in zip(compiled_compute_gradients(model, inputs, labels),
                               compute_gradients(model, inputs, labels)):
        np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=1e-5, atol=1e-5)

    def single_example_gradient(arg):
        inp, label = arg
        return compute_gradients(model, tnp.expand_dims(inp, 0), tnp.expand_dims(label, 0))

    @tf.function
    def vectorized_per_example_gradients(inputs, labels):
        return tf.vectorized_map(single_example_gradient, (inputs, labels))

    @tf.function
    def unvectorized_per_example_gradients(inputs, labels):
        return tf.map_fn(single_example_gradient, (inputs, labels),
                         fn_output_signature=(tf.float32, tf.float32, tf.float32))

    batch_size = 32
    inputs, labels = create_batch(batch_size)
    vectorized = vectorized_per_example_gradients(inputs, labels)
    unvectorized = unvectorized_per_example_gradients(inputs, labels)
    assert [tuple(p.shape) for p in vectorized] == [(32, 32, 64), (32, 64), (32, 64, 2)]
    whole_batch = compute_gradients(model, inputs, labels)
    for v, u, g in zip(vectorized, unvectorized, whole_batch):
        np.testing.assert_allclose(v.numpy(), u.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(tnp.sum(v, 0).numpy(), g.numpy(), rtol=1e-4, atol=1e-3)


def test_device_placement(model):
    assert "CPU" in [d.device_type for d in tf.config.list_logical_devices()]
    try:
        device = tf.config.list_logical_devices(device_type="GPU")[0]
    except IndexError:
        device = "/device:CPU:0"
    with tf.device(device):
        prediction = model.predict(create_batch(5)[0])
    result = tnp.copy(prediction)
    assert result.device == prediction.device
    np.testing.assert_array_equal(result.numpy(), prediction.numpy())


def test_sigmoid_numpy_and_tf_numpy_agree():
    def np_sigmoid(y):
        return 1. / (1. + np.exp(-y))

    def tnp_sigmoid(y):
        return 1. / (1. + tnp.exp(-y))

    @tf.function
    def compiled_tnp_sigmoid(y):
        return tnp_sigmoid(y)

    sizes = (2 ** 0, 2 ** 5, 2 ** 10)
    np_inputs = [np.random.default_rng(0).standard_normal(size).astype(np.float32)
                 for size in sizes]
    with tf.device("/device:CPU:0"):
        tnp_inputs = [tnp.asarray(a) for a in np_inputs]
        for a, expected in zip(tnp_inputs, np_inputs):
            for result in (tnp_sigmoid(a), compiled_tnp_sigmoid(a)):
                assert result.dtype == tf.float32            # TF: float32 (weak Python 1.)
                np.testing.assert_allclose(result.numpy(), np_sigmoid(expected), rtol=1e-6)


class ProjectionLayer(tf.keras.layers.Layer):
    """Linear projection layer using TF NumPy."""

    def __init__(self, units):
        super(ProjectionLayer, self).__init__()
        self._units = units

    def build(self, input_shape):
        stddev = tnp.sqrt(self._units).astype(tnp.float32)
        initial_value = tnp.random.randn(input_shape[1], self._units).astype(
            tnp.float32) / stddev
        # Note that TF NumPy can interoperate with tf.Variable.
        self.w = tf.Variable(initial_value, trainable=True)

    def call(self, inputs):
        return tnp.matmul(inputs, self.w)


def test_keras_layer_with_tf_numpy():
    layer = ProjectionLayer(2)
    tnp_inputs = tnp.random.randn(2, 4).astype(tnp.float32)
    out = layer(tnp_inputs)
    assert tuple(out.shape) == (2, 2) and out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy(), tnp_inputs.numpy() @ layer.w.numpy(), rtol=1e-5)
    tf_inputs = tf.random.uniform([2, 4])
    out = layer(tf_inputs)
    np.testing.assert_allclose(out.numpy(), tf_inputs.numpy() @ layer.w.numpy(), rtol=1e-5)
