"""Port of the keras.io example "Variational AutoEncoder"
(https://keras.io/examples/generative/vae/) on a slice of Fashion-MNIST.

From the example: the encoder (two strided Conv2D, Flatten, Dense(16), ``z_mean``/``z_log_var``
heads and a ``Sampling`` layer) has 69,076 parameters and the decoder (Dense, Reshape, three
Conv2DTranspose) 65,089; the VAE subclass tracks ``total_loss``, ``reconstruction_loss`` and
``kl_loss`` with ``metrics.Mean`` trackers listed in its ``metrics`` property and overrides
``train_step``, and ``vae.fit(mnist_digits, epochs=30, batch_size=128)`` trains it (here a slice
of Fashion-MNIST, batches of 32, two epochs); the losses of the first step are checked against
numpy.
"""
import numpy as np

import minitf as tf
from minitf import keras
from minitf.keras import layers, ops


class Sampling(layers.Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = ops.shape(z_mean)[0]
        dim = ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


def build_encoder(latent_dim=2):
    encoder_inputs = keras.Input(shape=(28, 28, 1))
    x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
    x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Flatten()(x)
    x = layers.Dense(16, activation="relu")(x)
    z_mean = layers.Dense(latent_dim, name="z_mean")(x)
    z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
    z = Sampling()([z_mean, z_log_var])
    return keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")


def build_decoder(latent_dim=2):
    latent_inputs = keras.Input(shape=(latent_dim,))
    x = layers.Dense(7 * 7 * 64, activation="relu")(latent_inputs)
    x = layers.Reshape((7, 7, 64))(x)
    x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(x)
    decoder_outputs = layers.Conv2DTranspose(1, 3, activation="sigmoid", padding="same")(x)
    return keras.Model(latent_inputs, decoder_outputs, name="decoder")


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [self.total_loss_tracker, self.reconstruction_loss_tracker, self.kl_loss_tracker]

    def train_step(self, data):
        with tf.GradientTape() as tape:
            z_mean, z_log_var, z = self.encoder(data)
            reconstruction = self.decoder(z)
            reconstruction_loss = ops.mean(ops.sum(
                keras.losses.binary_crossentropy(data, reconstruction), axis=(1, 2)))
            kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
            kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
            total_loss = reconstruction_loss + kl_loss
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.kl_loss_tracker.update_state(kl_loss)
        self._last = (z_mean, z_log_var, reconstruction)
        return {"loss": self.total_loss_tracker.result(),
                "reconstruction_loss": self.reconstruction_loss_tracker.result(),
                "kl_loss": self.kl_loss_tracker.result()}


def test_model_sizes():
    encoder, decoder = build_encoder(), build_decoder()
    assert encoder.count_params() == 69076
    assert decoder.count_params() == 65089
    assert [tuple(t.shape) for t in encoder.outputs] == [(None, 2)] * 3
    assert tuple(decoder.output.shape) == (None, 28, 28, 1)


def test_vae_fit_drives_the_train_step(fashion_mnist_small):
    (x_train, _), _ = fashion_mnist_small
    data = np.expand_dims(x_train[:160], -1).astype("float32") / 255
    tf.random.set_seed(0)
    vae = VAE(build_encoder(), build_decoder())
    vae.compile(optimizer=keras.optimizers.Adam())

    batch = data[:32]
    first = vae.fit(batch, epochs=1, batch_size=32, verbose=0).history
    z_mean, z_log_var, reconstruction = (t.numpy().astype(np.float64) for t in vae._last)
    p = np.clip(reconstruction, 1e-7, 1 - 1e-7)
    bce = -(batch * np.log(p) + (1 - batch) * np.log(1 - p))  # (32, 28, 28, 1)
    reconstruction_loss = bce.mean(axis=-1).sum(axis=(1, 2)).mean()
    kl = (-0.5 * (1 + z_log_var - z_mean ** 2 - np.exp(z_log_var))).sum(axis=1).mean()
    assert list(first) == ["loss", "reconstruction_loss", "kl_loss"]
    np.testing.assert_allclose(first["reconstruction_loss"][0], reconstruction_loss, rtol=1e-4)
    np.testing.assert_allclose(first["kl_loss"][0], kl, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(first["loss"][0], reconstruction_loss + kl, rtol=1e-4)

    history = vae.fit(data, epochs=2, batch_size=32, verbose=0).history
    assert len(history["loss"]) == 2
    assert history["loss"][1] < first["loss"][0]
    assert int(vae.optimizer.iterations) == 1 + 2 * 5
