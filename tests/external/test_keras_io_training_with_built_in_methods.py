"""Port of the keras.io guide "Training & evaluation with the built-in methods"
(https://keras.io/guides/training_with_built_in_methods/, keras-team/keras-io
guides/training_with_built_in_methods.py): the guide's functional MNIST model and its fit /
evaluate / predict workflow, custom losses (a function and a Loss subclass), a custom Metric,
add_loss layers (an activity regularizer, a LogisticEndpoint compiled without a loss),
validation_split, tf.data and PyDataset inputs, class and sample weights, EarlyStopping, a
learning-rate schedule and TensorBoard; on a slice of Fashion-MNIST (shipped with the
repository) in place of MNIST, with `ops.*` written as `tf.*`. Numbers are checked against
numpy (with a zero learning rate where the check needs fixed weights) or against an equivalent
call (class_weight against the same sample_weight)."""

import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers
from tests.tb_events import read_scalars

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def mnist_like():
    (x_train, y_train), (x_test, y_test) = datasets.load("fashion_mnist")
    x_train = x_train[:1536].reshape(-1, 784).astype("float32") / 255
    x_test = x_test[:256].reshape(-1, 784).astype("float32") / 255
    y_train = y_train[:1536].astype("float32")
    y_test = y_test[:256].astype("float32")
    # Reserve the last 512 samples for validation
    return (x_train[:-512], y_train[:-512]), (x_train[-512:], y_train[-512:]), (x_test, y_test)


def get_uncompiled_model(softmax=True):
    inputs = keras.Input(shape=(784,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax" if softmax else None,
                           name="predictions")(x)
    return keras.Model(inputs=inputs, outputs=outputs)


def get_compiled_model():
    model = get_uncompiled_model()
    model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy",
                  metrics=["sparse_categorical_accuracy"])
    return model


def _forward(model, x):
    """The guide's model in float64 numpy (relu, relu, then the last layer's outputs)."""
    w = [v.astype(np.float64) for v in model.get_weights()]
    h = np.maximum(x @ w[0] + w[1], 0)
    h = np.maximum(h @ w[2] + w[3], 0)
    return h @ w[4] + w[5]


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_api_overview_end_to_end(mnist_like):
    (x_train, y_train), (x_val, y_val), (x_test, y_test) = mnist_like
    tf.random.set_seed(0)
    model = get_uncompiled_model()
    model.compile(optimizer=keras.optimizers.RMSprop(),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy()])
    history = model.fit(x_train, y_train, batch_size=64, epochs=2,
                        validation_data=(x_val, y_val), verbose=0)
    assert sorted(history.history) == ["loss", "sparse_categorical_accuracy", "val_loss",
                                       "val_sparse_categorical_accuracy"]
    assert history.history["val_sparse_categorical_accuracy"][-1] > 0.6
    results = model.evaluate(x_test, y_test, batch_size=128, verbose=0)
    probs = _softmax(_forward(model, x_test))
    labels = y_test.astype(int)
    assert results[0] == pytest.approx(
        float(-np.mean(np.log(probs[np.arange(len(labels)), labels]))), rel=1e-4)
    assert results[1] == pytest.approx(float(np.mean(probs.argmax(1) == labels)))
    predictions = model.predict(x_test[:3], verbose=0)
    assert predictions.shape == (3, 10)
    np.testing.assert_allclose(predictions, probs[:3], rtol=1e-4, atol=1e-6)


def custom_mean_squared_error(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


class CustomMSE(keras.losses.Loss):
    def __init__(self, regularization_factor=0.1, name="custom_mse"):
        super().__init__(name=name)
        self.regularization_factor = regularization_factor

    def call(self, y_true, y_pred):
        mse = tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)
        reg = tf.reduce_mean(tf.square(0.5 - y_pred), axis=-1)
        return mse + reg * self.regularization_factor


@pytest.mark.parametrize("loss", [custom_mean_squared_error, CustomMSE()])
def test_custom_losses(mnist_like, loss):
    (x_train, y_train), _, _ = mnist_like
    x, y_one_hot = x_train[:256], tf.one_hot(y_train[:256].astype("int32"), depth=10)
    tf.random.set_seed(1)
    model = get_uncompiled_model()
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.0), loss=loss)
    h = model.fit(x, y_one_hot, batch_size=256, epochs=1, verbose=0)
    p = _softmax(_forward(model, x))
    t = y_one_hot.numpy()
    expected = np.mean(np.mean((t - p) ** 2, axis=-1))
    if isinstance(loss, CustomMSE):
        expected += 0.1 * np.mean(np.mean((0.5 - p) ** 2, axis=-1))
    assert h.history["loss"][0] == pytest.approx(expected, rel=1e-5)


class CategoricalTruePositives(keras.metrics.Metric):
    def __init__(self, name="categorical_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = tf.reshape(tf.argmax(y_pred, axis=1), (-1, 1))
        values = tf.equal(tf.cast(tf.reshape(y_true, (-1, 1)), "int32"),
                          tf.cast(y_pred, "int32"))
        values = tf.cast(values, "float32")
        if sample_weight is not None:
            values = tf.multiply(values, tf.cast(sample_weight, "float32"))
        self.true_positives.assign_add(tf.reduce_sum(values))

    def result(self):
        return self.true_positives

    def reset_state(self):
        self.true_positives.assign(0.0)


def test_custom_metric_counts_and_resets_each_epoch(mnist_like):
    (x_train, y_train), _, _ = mnist_like
    tf.random.set_seed(2)
    model = get_uncompiled_model()
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[CategoricalTruePositives()])
    h = model.fit(x_train, y_train, batch_size=64, epochs=3, verbose=0)
    correct = float(np.sum(_forward(model, x_train).argmax(1) == y_train.astype(int)))
    assert h.history["categorical_true_positives"] == [correct] * 3


class ActivityRegularizationLayer(layers.Layer):
    def call(self, inputs):
        self.add_loss(tf.reduce_sum(inputs) * 0.1)
        return inputs


class LogisticEndpoint(keras.layers.Layer):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)

    def call(self, targets, logits, sample_weights=None):
        loss = self.loss_fn(targets, logits, sample_weights)
        self.add_loss(loss)
        return tf.nn.softmax(logits)


def test_losses_added_by_layers(mnist_like):
    (x_train, y_train), _, _ = mnist_like
    x, y = x_train[:128], y_train[:128]
    tf.random.set_seed(3)
    inputs = keras.Input(shape=(784,), name="digits")
    h = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    h = ActivityRegularizationLayer()(h)
    h = layers.Dense(64, activation="relu", name="dense_2")(h)
    outputs = layers.Dense(10, name="predictions")(h)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    hist = model.fit(x, y, batch_size=128, epochs=1, verbose=0)
    w = [v.astype(np.float64) for v in model.get_weights()]
    a1 = np.maximum(x @ w[0] + w[1], 0)
    logits = np.maximum(a1 @ w[2] + w[3], 0) @ w[4] + w[5]
    ce = -np.mean(np.log(_softmax(logits)[np.arange(128), y.astype(int)]))
    assert hist.history["loss"][0] == pytest.approx(ce + 0.1 * a1.sum(), rel=1e-5)

    # LogisticEndpoint: two inputs, compiled without a loss, fit on a dict without targets
    inputs = keras.Input(shape=(3,), name="inputs")
    targets = keras.Input(shape=(10,), name="targets")
    logits = keras.layers.Dense(10)(inputs)
    predictions = LogisticEndpoint(name="predictions")(targets, logits)
    model = keras.Model(inputs=[inputs, targets], outputs=predictions)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.0))  # No loss argument!
    rng = np.random.default_rng(0)
    data = {"inputs": rng.random((3, 3)), "targets": rng.random((3, 10))}
    hist = model.fit(data, verbose=0)
    kernel, bias = (v.astype(np.float64) for v in model.get_weights())
    z = data["inputs"].astype(np.float32).astype(np.float64) @ kernel + bias
    t = data["targets"].astype(np.float32).astype(np.float64)
    bce = np.mean(np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z))))
    assert hist.history["loss"][0] == pytest.approx(bce, rel=1e-5)


def test_validation_split_datasets_and_pydataset(mnist_like):
    (x_train, y_train), (x_val, y_val), _ = mnist_like
    tf.random.set_seed(4)
    model = get_compiled_model()
    h = model.fit(x_train, y_train, batch_size=64, validation_split=0.2, epochs=1, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 13  # floor(1024 * 0.8) = 819 samples
    assert h.history["val_loss"][0] == pytest.approx(
        model.evaluate(x_train[819:], y_train[819:], verbose=0)[0], rel=1e-6)

    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    train_dataset = train_dataset.shuffle(buffer_size=1024).batch(64)
    val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(64)
    model = get_compiled_model()
    h = model.fit(train_dataset, epochs=3, steps_per_epoch=10, validation_data=val_dataset,
                  validation_steps=2, verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 30 and len(h.history["val_loss"]) == 3
    probs = _softmax(_forward(model, x_val[:128]))
    labels = y_val[:128].astype(int)
    assert h.history["val_loss"][-1] == pytest.approx(  # two batches of 64, equal weight
        float(-np.mean(np.log(probs[np.arange(128), labels]))), rel=1e-4)

    class ExamplePyDataset(keras.utils.PyDataset):
        def __init__(self, x, y, batch_size, **kwargs):
            super().__init__(**kwargs)
            self.x, self.y, self.batch_size = x, y, batch_size
            self.epochs_done = 0

        def __len__(self):
            return int(np.ceil(len(self.x) / float(self.batch_size)))

        def __getitem__(self, idx):
            lo, hi = idx * self.batch_size, min(len(self.x), (idx + 1) * self.batch_size)
            return self.x[lo:hi], self.y[lo:hi]

        def on_epoch_end(self):
            self.epochs_done += 1

    train_py_dataset = ExamplePyDataset(x_train, y_train, batch_size=100)
    model = get_compiled_model()
    model.fit(train_py_dataset, epochs=2, verbose=0,
              validation_data=ExamplePyDataset(x_val, y_val, batch_size=100))
    assert int(model.optimizer.iterations.numpy()) == 22  # ceil(1024 / 100) per epoch
    assert train_py_dataset.epochs_done == 2


def test_class_weight_equals_the_sample_weight_it_stands_for(mnist_like):
    (x_train, y_train), _, _ = mnist_like
    class_weight = {i: 1.0 for i in range(10)}
    class_weight[5] = 2.0
    sample_weight = np.ones(shape=(len(y_train),))
    sample_weight[y_train == 5] = 2.0
    runs = []
    for kwargs in (dict(class_weight=class_weight), dict(sample_weight=sample_weight)):
        tf.random.set_seed(5)
        model = get_compiled_model()
        h = model.fit(x_train, y_train, batch_size=64, epochs=1, shuffle=False, verbose=0,
                      **kwargs)
        runs.append((h.history["loss"], model.get_weights()))
    tf.random.set_seed(5)
    model = get_compiled_model()
    ds = tf.data.Dataset.from_tensor_slices((x_train, y_train, sample_weight)).batch(64)
    h = model.fit(ds, epochs=1, verbose=0)
    runs.append((h.history["loss"], model.get_weights()))
    for loss, weights in runs[1:]:
        assert loss == pytest.approx(runs[0][0], rel=1e-6)
        for a, b in zip(weights, runs[0][1]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_callbacks_schedules_and_tensorboard(mnist_like, tmp_path):
    (x_train, y_train), _, _ = mnist_like
    tf.random.set_seed(6)
    model = get_compiled_model()
    callbacks = [keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=1e-2, patience=2,
                                               verbose=0),
                 keras.callbacks.TensorBoard(log_dir=str(tmp_path / "logs"), histogram_freq=0,
                                             embeddings_freq=0, update_freq="epoch")]
    h = model.fit(x_train, y_train, epochs=20, batch_size=64, callbacks=callbacks,
                  validation_split=0.2, verbose=0)
    # replay Keras' rule on the logged values: stop once 2 epochs fail to beat the best by 0.01
    val, best, wait, stop = h.history["val_loss"], np.inf, 0, None
    for epoch, v in enumerate(val):
        wait += 1
        if v < best - 1e-2:
            best, wait = v, 0
        elif wait >= 2 and epoch > 0:
            stop = epoch
            break
    assert stop == len(val) - 1 or (stop is None and len(val) == 20)
    logged = read_scalars(str(tmp_path / "logs" / "validation"))["epoch_loss"]
    assert [v for _, v in logged] == pytest.approx(val, rel=1e-6)

    lr_schedule = keras.optimizers.schedules.ExponentialDecay(
        initial_learning_rate=0.1, decay_steps=100000, decay_rate=0.96, staircase=True)
    optimizer = keras.optimizers.RMSprop(learning_rate=lr_schedule)
    assert float(optimizer.learning_rate) == pytest.approx(0.1)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")
    model.fit(x_train[:64], y_train[:64], batch_size=64, epochs=1, verbose=0)
    assert int(optimizer.iterations.numpy()) == 1
