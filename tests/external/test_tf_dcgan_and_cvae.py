"""Ports of two tensorflow.org tutorials on a few Fashion-MNIST images:

- "Deep Convolutional Generative Adversarial Network"
  (https://www.tensorflow.org/tutorials/generative/dcgan): the generator (Dense 7*7*256,
  BatchNormalization, LeakyReLU, Reshape, three Conv2DTranspose with ``use_bias=False``, the
  tutorial's ``assert model.output_shape == ...`` after each stage) and the discriminator
  (two strided Conv2D + LeakyReLU + Dropout(0.3), Flatten, Dense(1)); the
  ``BinaryCrossentropy(from_logits=True)`` losses; the ``@tf.function`` ``train_step`` with two
  tapes and two Adam(1e-4) optimizers; ``tf.train.Checkpoint`` with both optimizers and models,
  ``save`` and ``restore(tf.train.latest_checkpoint(...))``; a fixed ``seed`` of
  ``tf.random.normal`` noise for the generated images.
- "Convolutional Variational Autoencoder"
  (https://www.tensorflow.org/tutorials/generative/cvae): the ``CVAE`` model with Sequential
  encoder/decoder starting with ``InputLayer``, ``encode`` with ``tf.split``,
  ``reparameterize``, ``decode``, the ``@tf.function`` ``sample``; ``log_normal_pdf``;
  ``compute_loss`` with ``tf.nn.sigmoid_cross_entropy_with_logits``; the ``@tf.function``
  ``train_step(model, x, optimizer)``; the test-set ELBO with ``tf.keras.metrics.Mean``.

Changes: 32 (DCGAN) and 256 (CVAE) training images from the repository's Fashion-MNIST slice
instead of 60,000 (MNIST in the DCGAN tutorial), batches of 16 and 32, a few steps instead of
50 / 10 epochs, checkpoints in a temporary folder; the image plots and GIFs are left out. The
CVAE trains with Adam(1e-3) instead of 1e-4 so that a few steps show progress.

Checked values: parameter counts (TF's), the generator's and discriminator's inference outputs
against float64 numpy computed from their weights (transposed and strided convolutions
with 'same' and 'valid' padding), the GAN losses and the CVAE's ``log_normal_pdf`` and loss
against numpy formulas, that training moves the losses the expected way, and that a restored
checkpoint gives back the saved weights, optimizer state and generated images.
"""
import os

import numpy as np
import pytest

import minitf as tf
from minitf.keras import layers


# --- numpy references (float64, NHWC) -------------------------------------------------------

def _f64(x):
    return np.asarray(x, np.float64)


def _np_conv2d(x, kernel, stride, padding):
    """x (N, H, W, C), kernel (kh, kw, C, F); TF's 'same' / 'valid' padding."""
    n, h, w, _ = x.shape
    kh, kw, _, f = kernel.shape
    if padding == "same":
        oh, ow = -(-h // stride), -(-w // stride)
        ph = max((oh - 1) * stride + kh - h, 0)
        pw = max((ow - 1) * stride + kw - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            out += patch @ kernel[i, j]
    return out


def _np_conv2d_transpose_same(x, kernel, stride):
    """x (N, H, W, C), kernel (kh, kw, F, C) as Keras stores it; output (N, H*s, W*s, F)."""
    n, h, w, _ = x.shape
    kh, kw, f, _ = kernel.shape
    full = np.zeros((n, (h - 1) * stride + kh, (w - 1) * stride + kw, f))
    for i in range(kh):
        for j in range(kw):
            full[:, i:i + stride * (h - 1) + 1:stride, j:j + stride * (w - 1) + 1:stride] += \
                x @ kernel[i, j].T
    top = max(kh - stride, 0) // 2
    left = max(kw - stride, 0) // 2
    return full[:, top:top + h * stride, left:left + w * stride]


def _np_bn_inference(x, gamma, beta, moving_mean, moving_var, eps=1e-3):
    return (x - moving_mean) / np.sqrt(moving_var + eps) * gamma + beta


def _np_leaky_relu(x, negative_slope=0.3):
    return np.where(x > 0, x, negative_slope * x)


def _np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_bce_from_logits(labels, logits):
    return np.mean(np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits))))


# --- DCGAN ----------------------------------------------------------------------------------

def make_generator_model():
    model = tf.keras.Sequential()
    model.add(layers.Dense(7 * 7 * 256, use_bias=False, input_shape=(100,)))
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Reshape((7, 7, 256)))
    assert model.output_shape == (None, 7, 7, 256)  # Note: None is the batch size

    model.add(layers.Conv2DTranspose(128, (5, 5), strides=(1, 1), padding='same',
                                     use_bias=False))
    assert model.output_shape == (None, 7, 7, 128)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(64, (5, 5), strides=(2, 2), padding='same',
                                     use_bias=False))
    assert model.output_shape == (None, 14, 14, 64)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding='same', use_bias=False,
                                     activation='tanh'))
    assert model.output_shape == (None, 28, 28, 1)

    return model


def make_discriminator_model():
    model = tf.keras.Sequential()
    model.add(layers.Conv2D(64, (5, 5), strides=(2, 2), padding='same',
                            input_shape=[28, 28, 1]))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.3))

    model.add(layers.Conv2D(128, (5, 5), strides=(2, 2), padding='same'))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.3))

    model.add(layers.Flatten())
    model.add(layers.Dense(1))

    return model


# This method returns a helper function to compute cross entropy loss
cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def discriminator_loss(real_output, fake_output):
    real_loss = cross_entropy(tf.ones_like(real_output), real_output)
    fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
    total_loss = real_loss + fake_loss
    return total_loss


def generator_loss(fake_output):
    return cross_entropy(tf.ones_like(fake_output), fake_output)


def _np_generator(generator, noise):
    w = [_f64(v) for v in generator.get_weights()]
    # Dense kernel; then (gamma, beta, mean, var) per BN; conv-transpose kernels in between.
    dense_k, bn1, ct1, bn2, ct2, bn3, ct3 = w[0], w[1:5], w[5], w[6:10], w[10], w[11:15], w[15]
    x = _np_leaky_relu(_np_bn_inference(_f64(noise) @ dense_k, *bn1)).reshape(-1, 7, 7, 256)
    x = _np_leaky_relu(_np_bn_inference(_np_conv2d_transpose_same(x, ct1, 1), *bn2))
    x = _np_leaky_relu(_np_bn_inference(_np_conv2d_transpose_same(x, ct2, 2), *bn3))
    return np.tanh(_np_conv2d_transpose_same(x, ct3, 2))


def _np_discriminator(discriminator, images):
    k1, b1, k2, b2, dk, db = [_f64(v) for v in discriminator.get_weights()]
    x = _np_leaky_relu(_np_conv2d(_f64(images), k1, 2, "same") + b1)
    x = _np_leaky_relu(_np_conv2d(x, k2, 2, "same") + b2)
    return x.reshape(len(x), -1) @ dk + db


def test_generator_and_discriminator_match_numpy():
    tf.random.set_seed(0)
    generator = make_generator_model()
    assert generator.count_params() == 2330944
    assert len(generator.trainable_variables) == 10
    assert len(generator.non_trainable_variables) == 6

    noise = tf.random.normal([1, 100])
    generated_image = generator(noise, training=False)
    assert tuple(generated_image.shape) == (1, 28, 28, 1)
    np.testing.assert_allclose(generated_image.numpy(), _np_generator(generator, noise.numpy()),
                               rtol=1e-4, atol=1e-5)

    discriminator = make_discriminator_model()
    assert discriminator.count_params() == 212865
    decision = discriminator(generated_image)
    assert tuple(decision.shape) == (1, 1)
    np.testing.assert_allclose(decision.numpy(),
                               _np_discriminator(discriminator, generated_image.numpy()),
                               rtol=1e-4, atol=1e-5)

    # Non-zero moving statistics in the BatchNormalization layers.
    rng = np.random.default_rng(0)
    for layer in generator.layers:
        if isinstance(layer, layers.BatchNormalization):
            c = layer.moving_mean.shape[0]
            layer.moving_mean.assign(rng.normal(0, 0.5, c).astype("float32"))
            layer.moving_variance.assign(rng.uniform(0.5, 2.0, c).astype("float32"))
            layer.gamma.assign(rng.uniform(0.5, 1.5, c).astype("float32"))
            layer.beta.assign(rng.normal(0, 0.1, c).astype("float32"))
    noise = tf.random.normal([3, 100])
    np.testing.assert_allclose(generator(noise, training=False).numpy(),
                               _np_generator(generator, noise.numpy()), rtol=1e-4, atol=1e-5)


def test_gan_losses_match_numpy():
    real_output = tf.constant([[2.0], [-1.0], [0.5], [3.0]])
    fake_output = tf.constant([[-2.0], [0.25], [1.5], [-0.5]])
    r, f = real_output.numpy().astype(np.float64), fake_output.numpy().astype(np.float64)
    expected_d = _np_bce_from_logits(np.ones_like(r), r) + _np_bce_from_logits(np.zeros_like(f), f)
    np.testing.assert_allclose(discriminator_loss(real_output, fake_output).numpy(), expected_d,
                               rtol=1e-5)
    np.testing.assert_allclose(generator_loss(fake_output).numpy(),
                               _np_bce_from_logits(np.ones_like(f), f), rtol=1e-5)


def _gan_images(fashion_mnist_small, n=32):
    (train_images, _), _ = fashion_mnist_small
    train_images = train_images[:n]
    train_images = train_images.reshape(train_images.shape[0], 28, 28, 1).astype('float32')
    return (train_images - 127.5) / 127.5  # Normalize the images to [-1, 1]


def test_dcgan_train_step_and_checkpoint(fashion_mnist_small, tmp_path):
    train_images = _gan_images(fashion_mnist_small)
    assert train_images.min() == -1.0 and train_images.max() <= 1.0
    BUFFER_SIZE = 32
    BATCH_SIZE = 16
    train_dataset = tf.data.Dataset.from_tensor_slices(train_images).shuffle(
        BUFFER_SIZE).batch(BATCH_SIZE)

    tf.random.set_seed(1)
    generator = make_generator_model()
    discriminator = make_discriminator_model()
    generator_optimizer = tf.keras.optimizers.Adam(1e-4)
    discriminator_optimizer = tf.keras.optimizers.Adam(1e-4)

    checkpoint_dir = str(tmp_path / 'training_checkpoints')
    checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
    checkpoint = tf.train.Checkpoint(generator_optimizer=generator_optimizer,
                                     discriminator_optimizer=discriminator_optimizer,
                                     generator=generator,
                                     discriminator=discriminator)

    noise_dim = 100
    num_examples_to_generate = 16
    # You will reuse this seed overtime (so it's easier)
    # to visualize progress in the animated GIF)
    seed = tf.random.normal([num_examples_to_generate, noise_dim])
    assert tuple(seed.shape) == (16, 100)

    # Notice the use of `tf.function`
    # This annotation causes the function to be "compiled".
    @tf.function
    def train_step(images):
        noise = tf.random.normal([BATCH_SIZE, noise_dim])

        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            generated_images = generator(noise, training=True)

            real_output = discriminator(images, training=True)
            fake_output = discriminator(generated_images, training=True)

            gen_loss = generator_loss(fake_output)
            disc_loss = discriminator_loss(real_output, fake_output)

        gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
        gradients_of_discriminator = disc_tape.gradient(disc_loss,
                                                        discriminator.trainable_variables)

        generator_optimizer.apply_gradients(zip(gradients_of_generator,
                                                generator.trainable_variables))
        discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator,
                                                    discriminator.trainable_variables))
        return gen_loss, disc_loss

    def evaluate_losses():
        fake = generator(seed, training=False)
        real_output = discriminator(train_images[:16], training=False)
        fake_output = discriminator(fake, training=False)
        return (float(generator_loss(fake_output).numpy()),
                float(discriminator_loss(real_output, fake_output).numpy()))

    _, disc0 = evaluate_losses()
    # An untrained discriminator cannot tell: close to 2 * ln 2.
    assert abs(disc0 - 2 * np.log(2)) < 0.2
    moving_mean0 = generator.layers[1].moving_mean.numpy().copy()

    def train(dataset, epochs):
        for epoch in range(epochs):
            for image_batch in dataset:
                gen_loss, disc_loss = train_step(image_batch)
                assert np.isfinite(gen_loss.numpy()) and np.isfinite(disc_loss.numpy())

    train(train_dataset, 1)
    tracing_count = train_step.experimental_get_tracing_count()
    train(train_dataset, 2)
    assert generator_optimizer.iterations.numpy() == 6
    assert discriminator_optimizer.iterations.numpy() == 6
    # Same batch shape every step: no new trace after the first epoch.
    assert train_step.experimental_get_tracing_count() == tracing_count
    # training=True updated the generator's BatchNormalization statistics.
    assert not np.allclose(generator.layers[1].moving_mean.numpy(), moving_mean0)

    _, disc1 = evaluate_losses()
    # The discriminator learns to separate real images from the generator's noise first.
    assert disc1 < disc0 - 0.1, (disc0, disc1)

    save_path = checkpoint.save(file_prefix=checkpoint_prefix)
    assert tf.train.latest_checkpoint(checkpoint_dir) == save_path
    saved_g = [w.copy() for w in generator.get_weights()]
    saved_d = [w.copy() for w in discriminator.get_weights()]
    predictions = generator(seed, training=False)
    assert tuple(predictions.shape) == (16, 28, 28, 1)
    assert np.all(np.abs(predictions.numpy()) <= 1.0)

    train(train_dataset, 1)
    assert generator_optimizer.iterations.numpy() == 8
    assert not np.allclose(generator.get_weights()[0], saved_g[0])

    status = checkpoint.restore(tf.train.latest_checkpoint(checkpoint_dir))
    status.assert_consumed()
    for a, b in zip(generator.get_weights(), saved_g):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(discriminator.get_weights(), saved_d):
        np.testing.assert_array_equal(a, b)
    assert generator_optimizer.iterations.numpy() == 6
    assert discriminator_optimizer.iterations.numpy() == 6
    np.testing.assert_array_equal(generator(seed, training=False).numpy(), predictions.numpy())


def test_random_normal_seeds_are_reproducible():
    tf.random.set_seed(42)
    a = tf.random.normal([16, 100])
    b = tf.random.normal([16, 100])
    tf.random.set_seed(42)
    a2 = tf.random.normal([16, 100])
    b2 = tf.random.normal([16, 100])
    np.testing.assert_array_equal(a.numpy(), a2.numpy())
    np.testing.assert_array_equal(b.numpy(), b2.numpy())
    assert not np.array_equal(a.numpy(), b.numpy())
    big = tf.random.normal([100000], seed=3).numpy()
    assert abs(big.mean()) < 0.02 and abs(big.std() - 1.0) < 0.02


# --- CVAE -----------------------------------------------------------------------------------

class CVAE(tf.keras.Model):
    """Convolutional variational autoencoder."""

    def __init__(self, latent_dim):
        super(CVAE, self).__init__()
        self.latent_dim = latent_dim
        self.encoder = tf.keras.Sequential(
            [
                tf.keras.layers.InputLayer(input_shape=(28, 28, 1)),
                tf.keras.layers.Conv2D(
                    filters=32, kernel_size=3, strides=(2, 2), activation='relu'),
                tf.keras.layers.Conv2D(
                    filters=64, kernel_size=3, strides=(2, 2), activation='relu'),
                tf.keras.layers.Flatten(),
                # No activation
                tf.keras.layers.Dense(latent_dim + latent_dim),
            ]
        )

        self.decoder = tf.keras.Sequential(
            [
                tf.keras.layers.InputLayer(input_shape=(latent_dim,)),
                tf.keras.layers.Dense(units=7 * 7 * 32, activation=tf.nn.relu),
                tf.keras.layers.Reshape(target_shape=(7, 7, 32)),
                tf.keras.layers.Conv2DTranspose(
                    filters=64, kernel_size=3, strides=2, padding='same',
                    activation='relu'),
                tf.keras.layers.Conv2DTranspose(
                    filters=32, kernel_size=3, strides=2, padding='same',
                    activation='relu'),
                # No activation
                tf.keras.layers.Conv2DTranspose(
                    filters=1, kernel_size=3, strides=1, padding='same'),
            ]
        )

    @tf.function
    def sample(self, eps=None):
        if eps is None:
            eps = tf.random.normal(shape=(100, self.latent_dim))
        return self.decode(eps, apply_sigmoid=True)

    def encode(self, x):
        mean, logvar = tf.split(self.encoder(x), num_or_size_splits=2, axis=1)
        return mean, logvar

    def reparameterize(self, mean, logvar):
        eps = tf.random.normal(shape=mean.shape)
        return eps * tf.exp(logvar * .5) + mean

    def decode(self, z, apply_sigmoid=False):
        logits = self.decoder(z)
        if apply_sigmoid:
            probs = tf.sigmoid(logits)
            return probs
        return logits


def log_normal_pdf(sample, mean, logvar, raxis=1):
    log2pi = tf.math.log(2. * np.pi)
    return tf.reduce_sum(
        -.5 * ((sample - mean) ** 2. * tf.exp(-logvar) + logvar + log2pi),
        axis=raxis)


def compute_loss(model, x):
    mean, logvar = model.encode(x)
    z = model.reparameterize(mean, logvar)
    x_logit = model.decode(z)
    cross_ent = tf.nn.sigmoid_cross_entropy_with_logits(logits=x_logit, labels=x)
    logpx_z = -tf.reduce_sum(cross_ent, axis=[1, 2, 3])
    logpz = log_normal_pdf(z, 0., 0.)
    logqz_x = log_normal_pdf(z, mean, logvar)
    return -tf.reduce_mean(logpx_z + logpz - logqz_x)


@tf.function
def train_step(model, x, optimizer):
    """Executes one training step and returns the loss.

    This function computes the loss and gradients, and uses the latter to
    update the model's parameters.
    """
    with tf.GradientTape() as tape:
        loss = compute_loss(model, x)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))


def preprocess_images(images):
    images = images.reshape((images.shape[0], 28, 28, 1)) / 255.
    return np.where(images > .5, 1.0, 0.0).astype('float32')


def test_cvae_architecture():
    tf.random.set_seed(0)
    latent_dim = 2
    model = CVAE(latent_dim)
    assert model.encoder.output_shape == (None, 4)
    assert model.decoder.output_shape == (None, 28, 28, 1)
    assert model.encoder.count_params() == 28036
    assert model.decoder.count_params() == 41953
    assert len(model.trainable_variables) == 14

    x = preprocess_images(np.random.default_rng(0).integers(0, 256, (3, 28, 28)))
    mean, logvar = model.encode(x)
    assert tuple(mean.shape) == (3, 2) and tuple(logvar.shape) == (3, 2)
    # The encoder in numpy: two 'valid' strided convolutions (28 -> 13 -> 6), Flatten, Dense.
    k1, b1, k2, b2, dk, db = [_f64(w) for w in model.encoder.get_weights()]
    h = np.maximum(_np_conv2d(_f64(x), k1, 2, "valid") + b1, 0)
    assert h.shape == (3, 13, 13, 32)
    h = np.maximum(_np_conv2d(h, k2, 2, "valid") + b2, 0)
    out = h.reshape(3, -1) @ dk + db
    np.testing.assert_allclose(mean.numpy(), out[:, :2], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(logvar.numpy(), out[:, 2:], rtol=1e-4, atol=1e-5)

    # The decoder in numpy.
    z = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    dk, db, c1, cb1, c2, cb2, c3, cb3 = [_f64(w) for w in model.decoder.get_weights()]
    h = np.maximum(_f64(z) @ dk + db, 0).reshape(2, 7, 7, 32)
    h = np.maximum(_np_conv2d_transpose_same(h, c1, 2) + cb1, 0)
    h = np.maximum(_np_conv2d_transpose_same(h, c2, 2) + cb2, 0)
    logits = _np_conv2d_transpose_same(h, c3, 1) + cb3
    np.testing.assert_allclose(model.decode(z).numpy(), logits, rtol=1e-4, atol=1e-5)
    probs = model.sample(tf.constant(z))
    np.testing.assert_allclose(probs.numpy(), _np_sigmoid(logits), rtol=1e-4, atol=1e-6)

    # sample() with no argument draws 100 latent vectors.
    assert tuple(model.sample().shape) == (100, 28, 28, 1)


def test_log_normal_pdf_and_reparameterize():
    sample = np.array([[0.3, -1.2], [2.0, 0.1]], np.float32)
    mean = np.array([[0.0, -1.0], [1.5, 0.5]], np.float32)
    logvar = np.array([[0.2, -0.7], [1.0, 0.0]], np.float32)
    s, m, lv = _f64(sample), _f64(mean), _f64(logvar)
    expected = np.sum(-0.5 * ((s - m) ** 2 * np.exp(-lv) + lv + np.log(2 * np.pi)), axis=1)
    np.testing.assert_allclose(log_normal_pdf(sample, mean, logvar).numpy(), expected, rtol=1e-5)
    # Python-float mean and log-variance (the standard normal prior).
    expected = np.sum(-0.5 * (s ** 2 + np.log(2 * np.pi)), axis=1)
    np.testing.assert_allclose(log_normal_pdf(sample, 0., 0.).numpy(), expected, rtol=1e-5)

    model = CVAE(2)
    tf.random.set_seed(3)
    z = model.reparameterize(tf.fill([20000, 2], 1.0), tf.fill([20000, 2], float(np.log(4.0))))
    z = z.numpy()
    np.testing.assert_allclose(z.mean(axis=0), [1.0, 1.0], atol=0.05)
    np.testing.assert_allclose(z.std(axis=0), [2.0, 2.0], atol=0.05)


def test_compute_loss_matches_numpy(fashion_mnist_small):
    (train_images, _), _ = fashion_mnist_small
    x = preprocess_images(train_images[:8])
    tf.random.set_seed(0)
    model = CVAE(2)
    mean, logvar = model.encode(x)
    tf.random.set_seed(7)
    eps = tf.random.normal(shape=mean.shape)
    tf.random.set_seed(7)
    loss = compute_loss(model, x)

    m, lv, e = _f64(mean.numpy()), _f64(logvar.numpy()), _f64(eps.numpy())
    z = e * np.exp(lv * 0.5) + m
    logits = _f64(model.decode(z.astype(np.float32)).numpy())
    xx = _f64(x)
    cross_ent = np.maximum(logits, 0) - logits * xx + np.log1p(np.exp(-np.abs(logits)))
    logpx_z = -cross_ent.sum(axis=(1, 2, 3))
    log2pi = np.log(2 * np.pi)
    logpz = np.sum(-0.5 * (z ** 2 + log2pi), axis=1)
    logqz_x = np.sum(-0.5 * ((z - m) ** 2 * np.exp(-lv) + lv + log2pi), axis=1)
    expected = -np.mean(logpx_z + logpz - logqz_x)
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-4)
    # An untrained decoder gives logits near 0: about 784 * ln 2 nats per image.
    assert 400 < float(loss.numpy()) < 700


def test_cvae_training_lowers_the_loss(fashion_mnist_small):
    (train_images, _), (test_images, _) = fashion_mnist_small
    train_images = preprocess_images(train_images[:256])
    test_images = preprocess_images(test_images[:64])
    train_size = 256
    batch_size = 32
    test_size = 64
    train_dataset = (tf.data.Dataset.from_tensor_slices(train_images)
                     .shuffle(train_size).batch(batch_size))
    test_dataset = (tf.data.Dataset.from_tensor_slices(test_images)
                    .shuffle(test_size).batch(batch_size))

    tf.random.set_seed(0)
    optimizer = tf.keras.optimizers.Adam(1e-3)
    epochs = 4
    latent_dim = 2
    num_examples_to_generate = 16

    # keeping the random vector constant for generation (prediction) so
    # it will be easier to see the improvement.
    random_vector_for_generation = tf.random.normal(
        shape=[num_examples_to_generate, latent_dim])
    model = CVAE(latent_dim)

    def test_elbo():
        loss = tf.keras.metrics.Mean()
        for test_x in test_dataset:
            loss(compute_loss(model, test_x))
        return -loss.result()

    elbo0 = float(test_elbo().numpy())
    for epoch in range(1, epochs + 1):
        for train_x in train_dataset:
            train_step(model, train_x, optimizer)
    elbo1 = float(test_elbo().numpy())
    assert optimizer.iterations.numpy() == epochs * train_size // batch_size
    # The ELBO rises (the loss falls) by a good margin in 32 steps.
    assert elbo1 > elbo0 + 50, (elbo0, elbo1)

    predictions = model.sample(random_vector_for_generation)
    assert tuple(predictions.shape) == (16, 28, 28, 1)
    p = predictions.numpy()
    assert p.min() >= 0.0 and p.max() <= 1.0
