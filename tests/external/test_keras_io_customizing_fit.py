"""Port of the keras.io guide "Customizing what happens in fit() with TensorFlow"
(https://keras.io/guides/custom_train_step_in_tensorflow/, keras-team/keras-io
guides/custom_train_step_in_tensorflow.py): the guide's train_step/test_step overrides, with
only the imports changed: each model is built as the guide does, ``CustomModel(inputs,
outputs)`` on a subclass of ``keras.Model`` that overrides ``train_step``/``test_step``. Each
run is checked against an independent float64 numpy computation of the same step."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras


def _data(n=64, d=32, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, d)).astype("float32"), rng.random((n, 1)).astype("float32")


def _functional(model_class):
    """The guide's ``inputs = keras.Input(shape=(32,)); outputs = keras.layers.Dense(1)(inputs);
    model = CustomModel(inputs, outputs)``."""
    inputs = keras.Input(shape=(32,))
    outputs = keras.layers.Dense(1)(inputs)
    return model_class(inputs, outputs)


class CustomModel(keras.Model):
    """"A first simple example": compute_loss and the metrics loop."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply(gradients, trainable_vars)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def _sgd_step(w, b, x, y, lr, sw=None):
    """Loss, MAE (before the step) and the SGD-updated weights of mean-squared error."""
    w, b, x, y = (a.astype(np.float64) for a in (w, b, x, y))
    err = x @ w + b - y
    sw = np.ones(len(x)) if sw is None else sw.reshape(-1).astype(np.float64)
    loss = float(np.sum(sw * err[:, 0] ** 2) / len(x))
    g = 2.0 * err * sw[:, None] / len(x)
    return loss, float(np.mean(np.abs(err))), w - lr * x.T @ g, b - lr * g.sum(axis=0)


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_first_simple_example_step_matches_numpy(run_eagerly):
    x, y = _data()
    tf.random.set_seed(0)
    model = _functional(CustomModel)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"],
                  run_eagerly=run_eagerly)
    w0, b0 = model.get_weights()
    h = model.fit(x, y, batch_size=len(x), epochs=1, verbose=0)
    loss, mae, w1, b1 = _sgd_step(w0, b0, x, y, 0.1)
    assert h.history["loss"][0] == pytest.approx(loss, rel=1e-5)
    assert h.history["mae"][0] == pytest.approx(mae, rel=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], w1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.get_weights()[1], b1, rtol=1e-5, atol=1e-6)


def test_first_simple_example_trains_with_adam_as_in_the_guide():
    x, y = _data(1000)
    tf.random.set_seed(1)
    model = _functional(CustomModel)
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    h = model.fit(x, y, epochs=3, verbose=0)
    assert list(h.history) == ["loss", "mae"]
    assert h.history["loss"][2] < h.history["loss"][0]


class LowerLevel(keras.Model):
    """"Going lower-level": own trackers, listed in ``metrics`` so fit resets them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
        self.loss_fn = keras.losses.MeanSquaredError()

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.loss_fn(y, y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply(gradients, trainable_vars)
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


def test_going_lower_level_resets_the_listed_metrics_each_epoch():
    x, y = _data(32)
    tf.random.set_seed(2)
    model = _functional(LowerLevel)
    model.compile(optimizer=keras.optimizers.SGD(0.05))  # no loss, no metrics
    w, b = model.get_weights()
    expected = []
    for _ in range(3):  # 2 batches of 16 per epoch
        losses, maes = [], []
        for i in (0, 16):
            loss, mae, w, b = _sgd_step(w, b, x[i:i + 16], y[i:i + 16], 0.05)
            losses.append(loss)
            maes.append(mae)
        expected.append((np.mean(losses), np.mean(maes)))
    h = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    assert h.history["loss"] == pytest.approx([e[0] for e in expected], rel=1e-5)
    assert h.history["mae"] == pytest.approx([e[1] for e in expected], rel=1e-5)


class WithSampleWeight(keras.Model):
    """"Supporting sample_weight & class_weight"."""

    def train_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        if len(data) == 3:
            assert sample_weight is data[2]
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply(gradients, trainable_vars)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)
        return {m.name: m.result() for m in self.metrics}


def test_sample_weight_reaches_the_custom_step():
    x, y = _data(40)
    sw = np.random.default_rng(3).random((40, 1)).astype("float32")
    tf.random.set_seed(3)
    model = _functional(WithSampleWeight)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    w0, b0 = model.get_weights()
    h = model.fit(x, y, sample_weight=sw, batch_size=40, epochs=1, verbose=0)
    loss, _, w1, b1 = _sgd_step(w0, b0, x, y, 0.1, sw)
    assert h.history["loss"][0] == pytest.approx(loss, rel=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], w1, rtol=1e-5, atol=1e-6)
    # class_weight becomes the sample_weight the step receives
    labels = (y[:, 0] > 0.5).astype("float32")[:, None]
    model.fit(x, labels, class_weight={0: 0.0, 1: 2.0}, batch_size=40, epochs=1, verbose=0)


class CustomTestStep(keras.Model):
    """"Providing your own evaluation step"."""

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        loss = self.compute_loss(y=y, y_pred=y_pred)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_custom_test_step_drives_evaluate():
    x, y = _data(1000)
    tf.random.set_seed(4)
    model = _functional(CustomTestStep)
    model.compile(loss="mse", metrics=["mae"])
    loss, mae = model.evaluate(x, y, verbose=0)
    w, b = model.get_weights()
    err = x.astype(np.float64) @ w + b - y
    # the step feeds each batch's loss to the "loss" Mean unweighted: the mean of the 32 batch
    # losses (31 batches of 32 and one of 8), as in Keras
    batch_losses = [np.mean(err[i:i + 32] ** 2) for i in range(0, 1000, 32)]
    assert loss == pytest.approx(float(np.mean(batch_losses)), rel=1e-5)
    assert mae == pytest.approx(float(np.mean(np.abs(err))), rel=1e-5)


class GAN(keras.Model):
    """The guide's GAN ("Wrapping up"), on 2-D points with dense networks."""

    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
        self.g_loss_tracker = keras.metrics.Mean(name="g_loss")

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]
        batch_size = tf.shape(real_images)[0]
        random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim))
        generated_images = self.generator(random_latent_vectors)
        combined_images = tf.concat([generated_images, real_images], axis=0)
        labels = tf.concat([tf.ones((batch_size, 1)), tf.zeros((batch_size, 1))], axis=0)
        labels += 0.05 * tf.random.uniform(tf.shape(labels))
        with tf.GradientTape() as tape:
            predictions = self.discriminator(combined_images)
            d_loss = self.loss_fn(labels, predictions)
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply(grads, self.discriminator.trainable_weights)
        random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim))
        misleading_labels = tf.zeros((batch_size, 1))
        with tf.GradientTape() as tape:
            predictions = self.discriminator(self.generator(random_latent_vectors))
            g_loss = self.loss_fn(misleading_labels, predictions)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply(grads, self.generator.trainable_weights)
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}


def test_gan_trains_each_network_with_its_own_optimizer():
    tf.random.set_seed(5)
    latent_dim = 4
    discriminator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(8, "relu"),
                                      keras.layers.Dense(1)], name="discriminator")
    generator = keras.Sequential([keras.Input((latent_dim,)), keras.layers.Dense(8, "relu"),
                                  keras.layers.Dense(2)], name="generator")
    real = np.random.default_rng(5).normal(3.0, 0.5, (64, 2)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices(real).shuffle(buffer_size=64).batch(16)
    gan = GAN(discriminator=discriminator, generator=generator, latent_dim=latent_dim)
    gan.compile(d_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
                g_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
                loss_fn=keras.losses.BinaryCrossentropy(from_logits=True))
    g_before, d_before = generator.get_weights(), discriminator.get_weights()
    h = gan.fit(dataset, epochs=2, verbose=0)
    assert list(h.history) == ["d_loss", "g_loss"] and len(h.history["d_loss"]) == 2
    assert all(np.isfinite(h.history["d_loss"])) and all(np.isfinite(h.history["g_loss"]))
    for before, net in ((g_before, generator), (d_before, discriminator)):
        assert all(not np.array_equal(a, b) for a, b in zip(net.get_weights(), before))
    assert int(gan.d_optimizer.iterations.numpy()) == int(
        gan.g_optimizer.iterations.numpy()) == 8
