"""Port of tensorflow.org's tutorial "Intro to Autoencoders"
(https://www.tensorflow.org/tutorials/generative/autoencoder) on a slice of Fashion-MNIST.

From the tutorial: the basic ``Autoencoder(Model)`` with an encoder ``Sequential([Flatten(),
Dense(latent_dim, relu)])`` and a decoder ``Sequential([Dense(784, sigmoid),
Reshape((28, 28))])`` trained with MSE; the denoising convolutional autoencoder whose encoder
maps (28, 28, 1) to (14, 14, 16) and (7, 7, 8) with strided Conv2D and whose decoder goes back
with Conv2DTranspose (14, 14, 8), (28, 28, 16) and a sigmoid Conv2D to (28, 28, 1); encoder
1,320 and decoder 1,897 parameters; noisy inputs clipped to [0, 1].
"""
import numpy as np

import minitf as tf
from minitf.keras import layers, losses
from minitf.keras.models import Model


class Autoencoder(Model):
    def __init__(self, latent_dim, shape):
        super().__init__()
        self.latent_dim = latent_dim
        self.shape = shape
        self.encoder = tf.keras.Sequential([
            layers.Flatten(),
            layers.Dense(latent_dim, activation="relu"),
        ])
        self.decoder = tf.keras.Sequential([
            layers.Dense(int(np.prod(shape)), activation="sigmoid"),
            layers.Reshape(shape),
        ])

    def call(self, x):
        return self.decoder(self.encoder(x))


class Denoise(Model):
    def __init__(self):
        super().__init__()
        self.encoder = tf.keras.Sequential([
            layers.Input(shape=(28, 28, 1)),
            layers.Conv2D(16, (3, 3), activation="relu", padding="same", strides=2),
            layers.Conv2D(8, (3, 3), activation="relu", padding="same", strides=2)])
        self.decoder = tf.keras.Sequential([
            layers.Conv2DTranspose(8, kernel_size=3, strides=2, activation="relu",
                                   padding="same"),
            layers.Conv2DTranspose(16, kernel_size=3, strides=2, activation="relu",
                                   padding="same"),
            layers.Conv2D(1, kernel_size=(3, 3), activation="sigmoid", padding="same")])

    def call(self, x):
        return self.decoder(self.encoder(x))


def _train(model, x, y, epochs, batch=50):
    optimizer = tf.keras.optimizers.Adam()
    mse = losses.MeanSquaredError()
    history = []
    for _ in range(epochs):
        total = 0.0
        for start in range(0, len(x), batch):
            with tf.GradientTape() as tape:
                loss = mse(y[start:start + batch], model(x[start:start + batch]))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss)
        history.append(total / (len(x) // batch))
    return history


def test_basic_autoencoder(fashion_mnist_small):
    (x_train, _), (x_test, _) = fashion_mnist_small
    x_train = x_train[:500].astype("float32") / 255.0
    x_test = x_test[:100].astype("float32") / 255.0
    tf.random.set_seed(0)
    autoencoder = Autoencoder(16, x_test.shape[1:])
    history = _train(autoencoder, x_train, x_train, epochs=3)
    assert history[-1] < history[0]
    encoded = autoencoder.encoder(x_test).numpy()
    decoded = autoencoder.decoder(encoded).numpy()
    assert encoded.shape == (100, 16) and decoded.shape == (100, 28, 28)
    assert encoded.min() >= 0 and 0 <= decoded.min() and decoded.max() <= 1
    # the reconstruction error equals numpy's mean squared error
    mse = float(losses.MeanSquaredError()(x_test, autoencoder(x_test)))
    np.testing.assert_allclose(mse, np.mean((x_test - decoded) ** 2), rtol=1e-4)


def test_denoising_autoencoder(fashion_mnist_small):
    (x_train, _), _ = fashion_mnist_small
    x_train = x_train[:200].astype("float32")[..., tf.newaxis] / 255.0
    noise_factor = 0.2
    tf.random.set_seed(1)
    x_train_noisy = x_train + noise_factor * tf.random.normal(shape=x_train.shape)
    x_train_noisy = tf.clip_by_value(x_train_noisy, clip_value_min=0., clip_value_max=1.)
    assert float(tf.reduce_min(x_train_noisy)) >= 0 and float(tf.reduce_max(x_train_noisy)) <= 1

    autoencoder = Denoise()
    autoencoder(x_train[:1])
    shapes = [tuple(layer.output_shape) for layer in autoencoder.encoder.layers]
    assert shapes == [(None, 14, 14, 16), (None, 7, 7, 8)]
    assert autoencoder.encoder.count_params() == 1320
    decoded = autoencoder.decoder(autoencoder.encoder(x_train[:2]))
    assert [tuple(layer.output_shape) for layer in autoencoder.decoder.layers] == [
        (None, 14, 14, 8), (None, 28, 28, 16), (None, 28, 28, 1)]
    assert tuple(decoded.shape) == (2, 28, 28, 1)
    assert autoencoder.decoder.count_params() == 1897
    history = _train(autoencoder, x_train_noisy.numpy(), x_train, epochs=2, batch=40)
    assert history[-1] < history[0]
