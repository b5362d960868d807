"""Port of keras.io's guide "Making new layers and models via subclassing"
(https://keras.io/guides/making_new_layers_and_models_via_subclassing/), with smaller data.

Behaviours and numbers taken from the guide: weights created in ``__init__`` or lazily in
``build``, non-trainable weights updated in ``call``, nested layers' weights, ``add_loss``
cleared at every outer call, ``kernel_regularizer`` losses, ``get_config``/``from_config``, the
``training`` argument (with ``keras.random.dropout``), the ``add_loss`` terms that ``fit`` adds
to the compiled loss (or uses alone when ``compile`` has none), and the end-to-end VAE trained
with a custom loop and with ``fit``.
"""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers, ops


class Linear(keras.layers.Layer):
    def __init__(self, units=32, input_dim=32):
        super().__init__()
        self.w = self.add_weight(shape=(input_dim, units), initializer="random_normal",
                                 trainable=True)
        self.b = self.add_weight(shape=(units,), initializer="zeros", trainable=True)

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b


class LazyLinear(keras.layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                 initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal",
                                 trainable=True)

    def call(self, inputs):
        return ops.matmul(inputs, self.w) + self.b

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


def test_linear_layer_weights_in_init():
    x = np.ones((2, 2), np.float32)
    layer = Linear(4, 2)
    y = layer(x)
    w, b = layer.w.numpy(), layer.b.numpy()
    np.testing.assert_allclose(y.numpy(), x @ w + b, rtol=1e-6)
    assert [v.shape for v in layer.weights] == [(2, 4), (4,)]


class ComputeSum(keras.layers.Layer):
    def __init__(self, input_dim):
        super().__init__()
        self.total = self.add_weight(initializer="zeros", shape=(input_dim,), trainable=False)

    def call(self, inputs):
        self.total.assign_add(ops.sum(inputs, axis=0))
        return self.total


def test_non_trainable_weight_accumulates():
    x = np.ones((2, 2), np.float32)
    my_sum = ComputeSum(2)
    np.testing.assert_array_equal(my_sum(x).numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(my_sum(x).numpy(), [4.0, 4.0])
    assert len(my_sum.weights) == 1
    assert len(my_sum.non_trainable_weights) == 1
    assert len(my_sum.trainable_weights) == 0


class MLPBlock(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.linear_1 = LazyLinear(32)
        self.linear_2 = LazyLinear(32)
        self.linear_3 = LazyLinear(1)

    def call(self, inputs):
        x = keras.activations.relu(self.linear_1(inputs))
        x = keras.activations.relu(self.linear_2(x))
        return self.linear_3(x)


def test_nested_layers_track_weights():
    mlp = MLPBlock()
    y = mlp(ops.ones(shape=(3, 64)))
    assert tuple(y.shape) == (3, 1)
    assert len(mlp.weights) == 6
    assert len(mlp.trainable_weights) == 6


class ActivityRegularizationLayer(keras.layers.Layer):
    def __init__(self, rate=1e-2):
        super().__init__()
        self.rate = rate

    def call(self, inputs):
        self.add_loss(self.rate * ops.mean(inputs))
        return inputs


class OuterLayer(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.activity_reg = ActivityRegularizationLayer(1e-2)

    def call(self, inputs):
        return self.activity_reg(inputs)


def test_add_loss_is_reset_at_each_outer_call():
    layer = OuterLayer()
    assert len(layer.losses) == 0
    layer(ops.zeros((1, 1)))
    assert len(layer.losses) == 1
    layer(3.0 * ops.ones((2, 2)))
    assert len(layer.losses) == 1  # not accumulated across calls
    np.testing.assert_allclose(float(layer.losses[0]), 1e-2 * 3.0, rtol=1e-6)


class OuterLayerWithKernelRegularizer(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(32, kernel_regularizer=keras.regularizers.l2(1e-3))

    def call(self, inputs):
        return self.dense(inputs)


def test_kernel_regularizer_loss_value():
    layer = OuterLayerWithKernelRegularizer()
    layer(ops.zeros((1, 1)))
    assert len(layer.losses) == 1
    kernel = layer.dense.kernel.numpy().astype(np.float64)
    np.testing.assert_allclose(float(layer.losses[0]), 1e-3 * np.sum(kernel ** 2), rtol=1e-5)


def test_training_loop_adds_model_losses_to_the_gradient():
    tf.random.set_seed(0)
    inputs = keras.Input(shape=(3,))
    hidden = ActivityRegularizationLayer(0.5)(inputs)
    outputs = keras.layers.Dense(1, kernel_regularizer=keras.regularizers.L2(0.1),
                                 kernel_initializer="ones")(hidden)
    model = keras.Model(inputs, outputs)
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    with tf.GradientTape() as tape:
        logits = model(x)
        loss = ops.mean(ops.square(logits)) + sum(model.losses)
    # loss = (sum(x))^2 + 0.5 * mean(x) + 0.1 * sum(kernel^2) with kernel = 1, bias = 0
    np.testing.assert_allclose(float(loss), 36.0 + 0.5 * 2.0 + 0.1 * 3, rtol=1e-6)
    assert len(model.losses) == 2
    grad_kernel = tape.gradient(loss, model.layers[-1].kernel).numpy()
    np.testing.assert_allclose(grad_kernel[:, 0], 2 * 6.0 * x[0] + 0.2, rtol=1e-6)


def test_get_config_from_config_round_trip():
    layer = LazyLinear(64, name="my_linear")
    config = layer.get_config()
    assert config["units"] == 64 and config["name"] == "my_linear"
    new_layer = LazyLinear.from_config(config)
    assert new_layer.units == 64 and new_layer.name == "my_linear"


def test_default_get_config_records_plain_constructor_arguments():
    class Scale(keras.layers.Layer):
        def __init__(self, factor, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

    config = Scale(2.5, name="scale").get_config()
    assert config["factor"] == 2.5 and config["name"] == "scale"
    assert Scale.from_config(config).factor == 2.5

    class Holder(keras.layers.Layer):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

    with pytest.raises(NotImplementedError, match="get_config"):
        Holder(len).get_config()


class CustomDropout(keras.layers.Layer):
    def __init__(self, rate, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, inputs, training=None):
        if training:
            return keras.random.dropout(inputs, rate=self.rate)
        return inputs


def test_training_argument():
    layer = CustomDropout(0.5)
    x = np.ones((100, 10), np.float32)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    y = layer(x, training=True).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 0.3 < (y == 0).mean() < 0.7


def test_fit_adds_the_layer_losses_to_the_compiled_loss():
    """The guide's ``Input(3) -> ActivityRegularizationLayer()`` model: no weights at all; the
    loss fit reports is mse + 1e-2 * mean(inputs), then the add_loss term alone."""
    inputs = keras.Input(shape=(3,))
    outputs = ActivityRegularizationLayer()(inputs)
    model = keras.Model(inputs, outputs)
    rng = np.random.default_rng(5)
    x, y = rng.random((2, 3)).astype("float32"), rng.random((2, 3)).astype("float32")
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(x, y, verbose=0).history
    expected = np.mean((x.astype(np.float64) - y) ** 2) + 1e-2 * np.mean(x)
    assert history["loss"][0] == pytest.approx(expected, rel=1e-5)
    model.compile(optimizer="adam")
    history = model.fit(x, y, verbose=0).history
    assert history["loss"][0] == pytest.approx(1e-2 * np.mean(x), rel=1e-5)


# --- the end-to-end VAE of the guide -------------------------------------------------------------

class Sampling(layers.Layer):
    """z = z_mean + exp(0.5 * z_log_var) * epsilon."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch = ops.shape(z_mean)[0]
        dim = ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


class Encoder(layers.Layer):
    def __init__(self, latent_dim=32, intermediate_dim=64, name="encoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_mean = layers.Dense(latent_dim)
        self.dense_log_var = layers.Dense(latent_dim)
        self.sampling = Sampling()

    def call(self, inputs):
        x = self.dense_proj(inputs)
        z_mean = self.dense_mean(x)
        z_log_var = self.dense_log_var(x)
        z = self.sampling((z_mean, z_log_var))
        return z_mean, z_log_var, z


class Decoder(layers.Layer):
    def __init__(self, original_dim, intermediate_dim=64, name="decoder", **kwargs):
        super().__init__(name=name, **kwargs)
        self.dense_proj = layers.Dense(intermediate_dim, activation="relu")
        self.dense_output = layers.Dense(original_dim, activation="sigmoid")

    def call(self, inputs):
        return self.dense_output(self.dense_proj(inputs))


class VariationalAutoEncoder(keras.Model):
    def __init__(self, original_dim, intermediate_dim=64, latent_dim=32, name="autoencoder",
                 **kwargs):
        super().__init__(name=name, **kwargs)
        self.original_dim = original_dim
        self.encoder = Encoder(latent_dim=latent_dim, intermediate_dim=intermediate_dim)
        self.decoder = Decoder(original_dim, intermediate_dim=intermediate_dim)

    def call(self, inputs):
        z_mean, z_log_var, z = self.encoder(inputs)
        reconstructed = self.decoder(z)
        kl_loss = -0.5 * ops.mean(z_log_var - ops.square(z_mean) - ops.exp(z_log_var) + 1)
        self.add_loss(kl_loss)
        return reconstructed


def test_vae_custom_training_loop_reduces_loss():
    tf.random.set_seed(3)
    rng = np.random.default_rng(0)
    original_dim = 64
    # Smooth synthetic "images" in [0, 1]: a few prototypes plus noise.
    prototypes = rng.uniform(0, 1, (4, original_dim))
    noise = rng.normal(0, 0.05, (256, original_dim))
    x_train = np.clip(prototypes[rng.integers(0, 4, 256)] + noise, 0, 1).astype("float32")
    vae = VariationalAutoEncoder(original_dim, 32, 8)
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    mse_loss_fn = keras.losses.MeanSquaredError()
    loss_metric = keras.metrics.Mean()

    first_epoch = None
    for epoch in range(4):
        loss_metric.reset_state()
        for start in range(0, 256, 64):
            x_batch = x_train[start:start + 64]
            with tf.GradientTape() as tape:
                reconstructed = vae(x_batch)
                loss = mse_loss_fn(x_batch, reconstructed)
                assert len(vae.losses) == 1  # the KL term of this call only
                loss += sum(vae.losses)
            grads = tape.gradient(loss, vae.trainable_weights)
            optimizer.apply_gradients(zip(grads, vae.trainable_weights))
            loss_metric(loss)
        if first_epoch is None:
            first_epoch = float(loss_metric.result())
    assert float(loss_metric.result()) < 0.8 * first_epoch

    # The KL term against numpy for one batch.
    z_mean, z_log_var, _ = vae.encoder(x_train[:16])
    zm, zl = z_mean.numpy().astype(np.float64), z_log_var.numpy().astype(np.float64)
    vae(x_train[:16])
    kl = -0.5 * np.mean(zl - zm ** 2 - np.exp(zl) + 1)
    np.testing.assert_allclose(float(vae.losses[0]), kl, rtol=1e-4)


def test_vae_trains_with_fit():
    """The guide's last step: ``vae.compile(optimizer, loss=keras.losses.MeanSquaredError())``
    and ``vae.fit(x_train, x_train, epochs=2, batch_size=64)``: the KL term from ``add_loss``
    enters the loss fit minimises."""
    tf.random.set_seed(4)
    rng = np.random.default_rng(1)
    prototypes = rng.uniform(0, 1, (4, 64))
    x_train = np.clip(prototypes[rng.integers(0, 4, 256)] + rng.normal(0, 0.05, (256, 64)),
                      0, 1).astype("float32")
    vae = VariationalAutoEncoder(64, 32, 8)
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    vae.compile(optimizer, loss=keras.losses.MeanSquaredError())
    history = vae.fit(x_train, x_train, epochs=4, batch_size=64, verbose=0).history
    assert history["loss"][-1] < 0.8 * history["loss"][0]
    assert int(vae.optimizer.iterations) == 16
    assert len(vae.losses) == 1  # the KL term of the last call
