"""Port of the keras.io example "WGAN-GP overriding Model.train_step"
(https://keras.io/examples/generative/wgan_gp/), smaller.

From the example: the discriminator (ZeroPadding2D, four strided 5x5 Conv2D blocks with
LeakyReLU(0.2) and Dropout, Flatten, Dense(1)) has 4,305,409 parameters; the generator (Dense,
BatchNormalization, LeakyReLU, Reshape, three UpSampling2D + Conv2D blocks, Cropping2D)
910,660 and produces 28x28x1 images. The WGAN subclass overrides ``compile`` and ``train_step``
and trains through ``wgan.fit(train_images, batch_size=..., epochs=..., callbacks=[cbk])`` with
a ``GANMonitor`` callback that draws images from the generator at the end of each epoch; here
with narrower layers, a few images and two epochs. The gradient penalty (a gradient inside the tape) is checked against central
differences of the penalty in float64.
"""
import numpy as np
from PIL import Image

import minitf as tf
from minitf import keras
from minitf.keras import layers

IMG_SHAPE = (28, 28, 1)
NOISE_DIM = 128


def conv_block(x, filters, activation, kernel_size=(3, 3), strides=(1, 1), padding="same",
               use_bias=True, use_bn=False, use_dropout=False, drop_value=0.5):
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding,
                      use_bias=use_bias)(x)
    if use_bn:
        x = layers.BatchNormalization()(x)
    x = activation(x)
    if use_dropout:
        x = layers.Dropout(drop_value)(x)
    return x


def get_discriminator_model(width=64, img_shape=IMG_SHAPE, kernel=(5, 5), dropout=True):
    img_input = layers.Input(shape=img_shape)
    x = layers.ZeroPadding2D((2, 2))(img_input)
    x = conv_block(x, width, kernel_size=kernel, strides=(2, 2), use_bn=False, use_bias=True,
                   activation=layers.LeakyReLU(0.2), use_dropout=False, drop_value=0.3)
    x = conv_block(x, 2 * width, kernel_size=kernel, strides=(2, 2), use_bn=False,
                   activation=layers.LeakyReLU(0.2), use_bias=True, use_dropout=dropout,
                   drop_value=0.3)
    x = conv_block(x, 4 * width, kernel_size=kernel, strides=(2, 2), use_bn=False,
                   activation=layers.LeakyReLU(0.2), use_bias=True, use_dropout=dropout,
                   drop_value=0.3)
    x = conv_block(x, 8 * width, kernel_size=kernel, strides=(2, 2), use_bn=False,
                   activation=layers.LeakyReLU(0.2), use_bias=True, use_dropout=False,
                   drop_value=0.3)
    x = layers.Flatten()(x)
    x = layers.Dropout(0.2 if dropout else 0.0)(x)
    x = layers.Dense(1)(x)
    return keras.models.Model(img_input, x, name="discriminator")


def upsample_block(x, filters, activation, kernel_size=(3, 3), strides=(1, 1), up_size=(2, 2),
                   padding="same", use_bn=False, use_bias=True, use_dropout=False,
                   drop_value=0.3):
    x = layers.UpSampling2D(up_size)(x)
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding,
                      use_bias=use_bias)(x)
    if use_bn:
        x = layers.BatchNormalization()(x)
    if activation:
        x = activation(x)
    if use_dropout:
        x = layers.Dropout(drop_value)(x)
    return x


def get_generator_model(width=256, noise_dim=NOISE_DIM):
    noise = layers.Input(shape=(noise_dim,))
    x = layers.Dense(4 * 4 * width, use_bias=False)(noise)
    x = layers.BatchNormalization()(x)
    x = layers.LeakyReLU(0.2)(x)
    x = layers.Reshape((4, 4, width))(x)
    x = upsample_block(x, width // 2, layers.LeakyReLU(0.2), strides=(1, 1), use_bias=False,
                       use_bn=True, padding="same", use_dropout=False)
    x = upsample_block(x, width // 4, layers.LeakyReLU(0.2), strides=(1, 1), use_bias=False,
                       use_bn=True, padding="same", use_dropout=False)
    x = upsample_block(x, 1, layers.Activation("tanh"), strides=(1, 1), use_bias=False,
                       use_bn=True)
    x = layers.Cropping2D((2, 2))(x)
    return keras.models.Model(noise, x, name="generator")


class WGAN(keras.Model):
    def __init__(self, discriminator, generator, latent_dim, discriminator_extra_steps=3,
                 gp_weight=10.0):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_steps = discriminator_extra_steps
        self.gp_weight = gp_weight

    def compile(self, d_optimizer, g_optimizer, d_loss_fn, g_loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.d_loss_fn = d_loss_fn
        self.g_loss_fn = g_loss_fn

    def gradient_penalty(self, batch_size, real_images, fake_images, alpha=None):
        if alpha is None:
            alpha = tf.random.uniform([batch_size, 1, 1, 1], 0.0, 1.0)
        diff = fake_images - real_images
        interpolated = real_images + alpha * diff
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            pred = self.discriminator(interpolated, training=True)
        grads = gp_tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
        return tf.reduce_mean((norm - 1.0) ** 2)

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]
        batch_size = tf.shape(real_images)[0]
        for _ in range(self.d_steps):
            random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim))
            with tf.GradientTape() as tape:
                fake_images = self.generator(random_latent_vectors, training=True)
                fake_logits = self.discriminator(fake_images, training=True)
                real_logits = self.discriminator(real_images, training=True)
                d_cost = self.d_loss_fn(real_img=real_logits, fake_img=fake_logits)
                gp = self.gradient_penalty(batch_size, real_images, fake_images)
                d_loss = d_cost + gp * self.gp_weight
            d_gradient = tape.gradient(d_loss, self.discriminator.trainable_variables)
            self.d_optimizer.apply_gradients(
                zip(d_gradient, self.discriminator.trainable_variables))
        random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim))
        with tf.GradientTape() as tape:
            generated_images = self.generator(random_latent_vectors, training=True)
            gen_img_logits = self.discriminator(generated_images, training=True)
            g_loss = self.g_loss_fn(gen_img_logits)
        gen_gradient = tape.gradient(g_loss, self.generator.trainable_variables)
        self.g_optimizer.apply_gradients(zip(gen_gradient, self.generator.trainable_variables))
        return {"d_loss": d_loss, "g_loss": g_loss}


def discriminator_loss(real_img, fake_img):
    return tf.reduce_mean(fake_img) - tf.reduce_mean(real_img)


def generator_loss(fake_img):
    return -tf.reduce_mean(fake_img)


def test_full_size_models_match_the_example():
    d_model = get_discriminator_model()
    g_model = get_generator_model()
    assert d_model.count_params() == 4305409
    assert g_model.count_params() == 910660
    # BatchNormalization moving statistics: 2 * (4096 + 128 + 64 + 1)
    assert sum(int(np.prod(v.shape)) for v in g_model.non_trainable_weights) == 8578
    assert tuple(g_model.output.shape) == (None, 28, 28, 1)
    assert tuple(d_model.output.shape) == (None, 1)


class GANMonitor(keras.callbacks.Callback):
    """The example's monitor: PNG files of generated images at each epoch's end (here in
    ``directory``), keeping the arrays too for the test."""

    def __init__(self, num_img=2, latent_dim=8, directory="."):
        super().__init__()
        self.num_img = num_img
        self.latent_dim = latent_dim
        self.directory = directory
        self.images = []

    def on_epoch_end(self, epoch, logs=None):
        random_latent_vectors = tf.random.normal(shape=(self.num_img, self.latent_dim))
        generated_images = self.model.generator(random_latent_vectors)
        generated_images = (generated_images * 127.5) + 127.5
        for i in range(self.num_img):
            img = generated_images[i].numpy()
            img = keras.utils.array_to_img(img)
            img.save(f"{self.directory}/generated_img_{i}_{epoch}.png")
        self.images.append((epoch, generated_images.numpy(), dict(logs)))


def test_fit_runs_the_train_step_and_the_monitor(tmp_path):
    tf.random.set_seed(0)
    d_model = get_discriminator_model(width=4)
    g_model = get_generator_model(width=16, noise_dim=8)
    wgan = WGAN(discriminator=d_model, generator=g_model, latent_dim=8,
                discriminator_extra_steps=2)
    wgan.compile(d_optimizer=keras.optimizers.Adam(learning_rate=0.0002, beta_1=0.5, beta_2=0.9),
                 g_optimizer=keras.optimizers.Adam(learning_rate=0.0002, beta_1=0.5, beta_2=0.9),
                 g_loss_fn=generator_loss, d_loss_fn=discriminator_loss)
    rng = np.random.default_rng(0)
    real = (rng.uniform(0, 255, (6, 28, 28, 1)).astype("float32") - 127.5) / 127.5
    before = [v.numpy() for v in d_model.trainable_variables + g_model.trainable_variables]
    cbk = GANMonitor(num_img=2, latent_dim=8, directory=str(tmp_path))
    history = wgan.fit(real, batch_size=6, epochs=2, callbacks=[cbk], verbose=0).history
    assert sorted(history) == ["d_loss", "g_loss"] and len(history["d_loss"]) == 2
    assert all(np.isfinite(history["d_loss"])) and all(np.isfinite(history["g_loss"]))
    assert [epoch for epoch, _, _ in cbk.images] == [0, 1]
    for epoch, images, logs in cbk.images:
        assert images.shape == (2, 28, 28, 1)
        # tanh output rescaled to pixel values
        assert images.min() >= 0.0 and images.max() <= 255.0
        assert logs["d_loss"] == history["d_loss"][epoch]
        # the PNG holds the image rescaled to the full 0..255 range (array_to_img(scale=True))
        png = keras.utils.img_to_array(Image.open(tmp_path / f"generated_img_0_{epoch}.png"),
                                       dtype="float64")[..., 0]
        lo, hi = images[0].min(), images[0].max()
        np.testing.assert_allclose(png, np.round((images[0][..., 0] - lo) / (hi - lo) * 255),
                                   atol=1)
    after = [v.numpy() for v in d_model.trainable_variables + g_model.trainable_variables]
    changed = [not np.array_equal(a, b) for a, b in zip(before, after)]
    # The critic's output bias cancels in mean(fake) - mean(real) and does not enter the
    # penalty (a gradient with respect to the input): its gradient is exactly zero.
    bias_index = [id(v) for v in d_model.trainable_variables].index(id(d_model.layers[-1].bias))
    assert changed.pop(bias_index) is False
    assert all(changed)
    assert int(wgan.d_optimizer.iterations) == 4 and int(wgan.g_optimizer.iterations) == 2


def test_gradient_penalty_gradient_against_finite_differences():
    tf.random.set_seed(1)
    keras.mixed_precision.set_global_policy("float64")
    try:
        # without dropout, so that the penalty is a deterministic function of the weights
        disc = get_discriminator_model(width=2, img_shape=(4, 4, 1), kernel=(3, 3),
                                       dropout=False)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    wgan = WGAN(discriminator=disc, generator=None, latent_dim=4)
    rng = np.random.default_rng(2)
    real = tf.constant(rng.normal(size=(3, 4, 4, 1)))
    fake = tf.constant(rng.normal(size=(3, 4, 4, 1)))
    alpha = tf.constant(rng.uniform(size=(3, 1, 1, 1)))

    def penalty():
        return wgan.gradient_penalty(3, real, fake, alpha=alpha)

    with tf.GradientTape() as tape:
        gp = penalty()
    var = disc.layers[2].kernel  # first convolution
    grad = tape.gradient(gp, var).numpy()
    base = var.numpy()
    eps = 1e-6
    for index in [(0, 0, 0, 0), (1, 2, 0, 1), (2, 1, 0, 0)]:
        values = []
        for sign in (1, -1):
            bumped = base.copy()
            bumped[index] += sign * eps
            var.assign(bumped)
            values.append(float(penalty()))
        var.assign(base)
        np.testing.assert_allclose(grad[index], (values[0] - values[1]) / (2 * eps),
                                   rtol=1e-5, atol=1e-8)
