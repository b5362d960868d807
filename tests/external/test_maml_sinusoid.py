"""Port of the TF 2 MAML sinusoid-regression notebook (Mari Linhares, "MAML in TensorFlow 2",
github.com/mari-linhares/tensorflow-maml, after Finn et al. 2017), smaller.

What it exercises, as the notebook does: a subclassed ``keras.Model`` (Dense 40-40-1), a copy
of the model whose layers' ``kernel``/``bias`` attributes are replaced by *tensors* computed
from the original weights (``w - lr_inner * grad``), and the outer gradient flowing through
that inner step (second order: the inner gradient is taken inside the outer tape). The
second-order gradient is checked against central differences of the whole meta-loss in float64,
and meta-training reduces the post-adaptation loss on new tasks.
"""
import numpy as np

import minitf as tf
from minitf import keras


class SinusoidGenerator:
    """Amplitude in [0.1, 5], phase in [0, pi], x in [-5, 5], as in the notebook."""

    def __init__(self, rng, k=10):
        self.k = k
        self.amplitude = rng.uniform(0.1, 5.0)
        self.phase = rng.uniform(0, np.pi)
        self.x = rng.uniform(-5, 5, (k, 1))

    def batch(self, dtype="float32"):
        return self.x.astype(dtype), (self.amplitude * np.sin(self.x - self.phase)).astype(dtype)


class SineModel(keras.Model):
    def __init__(self, dtype=None):
        super().__init__(dtype=dtype)
        self.hidden1 = keras.layers.Dense(40, dtype=dtype)
        self.hidden2 = keras.layers.Dense(40, dtype=dtype)
        self.out = keras.layers.Dense(1, dtype=dtype)

    def forward(self, x):
        x = keras.activations.relu(self.hidden1(x))
        x = keras.activations.relu(self.hidden2(x))
        return self.out(x)

    def call(self, x):
        return self.forward(x)


def loss_function(pred_y, y):
    return tf.reduce_mean(keras.losses.mean_squared_error(y, pred_y))


def compute_loss(model, x, y):
    logits = model.forward(x)
    return loss_function(y, logits), logits


def copy_model(model, x, dtype=None):
    copied_model = SineModel(dtype=dtype)
    copied_model.forward(tf.convert_to_tensor(x))  # builds the variables
    copied_model.set_weights(model.get_weights())
    return copied_model


def adapted_copy(model, x, y, lr_inner, dtype=None):
    """One inner SGD step, expressed as tensors so the outer tape sees through it."""
    with tf.GradientTape() as test_tape:
        train_loss, _ = compute_loss(model, x, y)
    gradients = test_tape.gradient(train_loss, model.trainable_variables)
    model_copy = copy_model(model, x, dtype=dtype)
    k = 0
    for j in range(len(model_copy.layers)):
        layer_copy, layer = model_copy.layers[j], model.layers[j]
        layer_copy.kernel = tf.subtract(layer.kernel, tf.multiply(lr_inner, gradients[k]))
        layer_copy.bias = tf.subtract(layer.bias, tf.multiply(lr_inner, gradients[k + 1]))
        k += 2
    return model_copy


def meta_loss(model, x, y, lr_inner, dtype=None):
    model_copy = adapted_copy(model, x, y, lr_inner, dtype=dtype)
    test_loss, _ = compute_loss(model_copy, x, y)
    return test_loss


def test_second_order_gradient_against_finite_differences():
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    model = SineModel(dtype="float64")
    x, y = SinusoidGenerator(rng).batch("float64")
    model.forward(tf.convert_to_tensor(x))
    with tf.GradientTape() as train_tape:
        loss = meta_loss(model, x, y, 0.01, dtype="float64")
    grads = train_tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads)

    # First-order MAML would drop the curvature term; the full gradient must match numerics.
    var = model.out.kernel
    base = var.numpy()
    eps = 1e-6
    for index in [(0, 0), (5, 0), (17, 0)]:
        bumped = []
        for sign in (1, -1):
            value = base.copy()
            value[index] += sign * eps
            var.assign(value)
            bumped.append(float(meta_loss(model, x, y, 0.01, dtype="float64")))
        var.assign(base)
        numeric = (bumped[0] - bumped[1]) / (2 * eps)
        np.testing.assert_allclose(grads[4].numpy()[index], numeric, rtol=1e-5, atol=1e-9)


def test_maml_training_improves_adaptation():
    tf.random.set_seed(1)
    rng = np.random.default_rng(1)
    model = SineModel()
    model.forward(tf.zeros([1, 1]))
    optimizer = keras.optimizers.Adam(learning_rate=0.005)
    test_tasks = [SinusoidGenerator(np.random.default_rng(100 + i)) for i in range(8)]

    def evaluate():
        return np.mean([float(meta_loss(model, *task.batch(), 0.01)) for task in test_tasks])

    before = evaluate()
    for _ in range(300):
        x, y = SinusoidGenerator(rng).batch()
        with tf.GradientTape() as train_tape:
            test_loss = meta_loss(model, x, y, 0.01)
        gradients = train_tape.gradient(test_loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    after = evaluate()
    assert after < 0.8 * before
