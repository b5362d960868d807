"""Port of tensorflow.org's tutorial "Custom layers"
(https://www.tensorflow.org/tutorials/customization/custom_layers).

From the tutorial: ``Dense(10, input_shape=(None, 5))`` has a (5, 10) kernel and a (10,) bias
after being called on ``tf.zeros([10, 5])``; ``MyDenseLayer`` creates its kernel with
``add_weight("kernel", shape=[int(input_shape[-1]), num_outputs])`` in ``build``; the
``ResnetIdentityBlock(1, [1, 2, 3])`` model (three Conv2D + BatchNormalization pairs and a
residual add) has 6 layers and 41 parameters; the equivalent ``Sequential`` model runs on
``tf.zeros([1, 2, 3, 3])``.
"""
import numpy as np

import minitf as tf


def test_dense_layer_variables():
    layer = tf.keras.layers.Dense(10, input_shape=(None, 5))
    out = layer(tf.zeros([10, 5]))
    assert tuple(out.shape) == (10, 10)
    assert [tuple(v.shape) for v in layer.variables] == [(5, 10), (10,)]
    assert tuple(layer.kernel.shape) == (5, 10) and tuple(layer.bias.shape) == (10,)
    assert layer.trainable_variables == layer.variables


class MyDenseLayer(tf.keras.layers.Layer):
    def __init__(self, num_outputs):
        super().__init__()
        self.num_outputs = num_outputs

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", shape=[int(input_shape[-1]), self.num_outputs])

    def call(self, inputs):
        return tf.matmul(inputs, self.kernel)


def test_my_dense_layer():
    layer = MyDenseLayer(10)
    x = tf.ones([10, 5])
    out = layer(x)
    assert [v.name for v in layer.trainable_variables] == ["kernel:0"] or \
        [v.path.split("/")[-1] for v in layer.trainable_variables] == ["kernel"]
    np.testing.assert_allclose(out.numpy(), np.ones((10, 5)) @ layer.kernel.numpy(), rtol=1e-6)


class ResnetIdentityBlock(tf.keras.Model):
    def __init__(self, kernel_size, filters):
        super().__init__(name="")
        filters1, filters2, filters3 = filters
        self.conv2a = tf.keras.layers.Conv2D(filters1, (1, 1))
        self.bn2a = tf.keras.layers.BatchNormalization()
        self.conv2b = tf.keras.layers.Conv2D(filters2, kernel_size, padding="same")
        self.bn2b = tf.keras.layers.BatchNormalization()
        self.conv2c = tf.keras.layers.Conv2D(filters3, (1, 1))
        self.bn2c = tf.keras.layers.BatchNormalization()

    def call(self, input_tensor, training=False):
        x = self.conv2a(input_tensor)
        x = self.bn2a(x, training=training)
        x = tf.nn.relu(x)
        x = self.conv2b(x)
        x = self.bn2b(x, training=training)
        x = tf.nn.relu(x)
        x = self.conv2c(x)
        x = self.bn2c(x, training=training)
        x += input_tensor
        return tf.nn.relu(x)


def test_resnet_identity_block():
    block = ResnetIdentityBlock(1, [1, 2, 3])
    out = block(tf.zeros([1, 2, 3, 3]))
    assert tuple(out.shape) == (1, 2, 3, 3)
    assert len(block.layers) == 6
    assert len(block.variables) == 18
    # 1x1 convolutions: 4 + 4 + 9 weights; BatchNormalization 4 per channel (1 + 2 + 3)
    assert block.count_params() == 41
    assert sum(int(np.prod(v.shape)) for v in block.non_trainable_variables) == 12
    x = np.random.default_rng(0).normal(size=(2, 2, 3, 3)).astype("float32")
    # At initialisation, inference-mode BatchNormalization multiplies by 1 / sqrt(1 + 1e-3).
    s = 1 / np.sqrt(1 + 1e-3)
    h = x
    for conv, last in ((block.conv2a, False), (block.conv2b, False), (block.conv2c, True)):
        h = (h @ conv.kernel.numpy()[0, 0] + conv.bias.numpy()) * s
        h = h if last else np.maximum(h, 0)
    np.testing.assert_allclose(block(x).numpy(), np.maximum(h + x, 0), rtol=1e-5, atol=1e-6)


def test_sequential_equivalent():
    my_seq = tf.keras.Sequential([
        tf.keras.layers.Conv2D(1, (1, 1), input_shape=(None, None, 3)),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.Conv2D(2, 1, padding="same"),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.Conv2D(3, (1, 1)),
        tf.keras.layers.BatchNormalization(),
    ])
    out = my_seq(tf.zeros([1, 2, 3, 3]))
    assert tuple(out.shape) == (1, 2, 3, 3)
    assert my_seq.count_params() == 41
