"""Port of the keras.io code example "Timeseries classification from scratch"
(https://keras.io/examples/timeseries/timeseries_classification_from_scratch/, keras-team/keras-io
examples/timeseries/timeseries_classification_from_scratch.py).

Kept: the data handling (reshape to (samples, steps, 1), `num_classes = len(np.unique(y_train))`,
a random permutation of the training set, labels -1 mapped to 0), `make_model` (three
Conv1D(64, 3, padding="same") / BatchNormalization / ReLU blocks, GlobalAveragePooling1D,
Dense(num_classes, softmax)), the callbacks ModelCheckpoint("best_model.keras",
save_best_only=True, monitor="val_loss"), ReduceLROnPlateau(monitor="val_loss", factor=0.5,
patience=20, min_lr=0.0001) and EarlyStopping(monitor="val_loss", patience=50, verbose=1),
compile with adam / sparse_categorical_crossentropy / sparse_categorical_accuracy, fit with
batch_size=32 and validation_split=0.2, `keras.models.load_model("best_model.keras")` and
evaluate, and the history keys the example plots.

Changed: FordA (a download) is replaced by 800 + 100 synthetic univariate series of 32 steps
with labels -1 / 1 as in FordA: a slow or a fast sine wave with random phase and amplitude plus
noise; 20 epochs instead of 500 (so neither ReduceLROnPlateau nor EarlyStopping triggers); the
plots are left out. The file is written in a temporary directory. With so few steps the
BatchNormalization moving statistics (momentum 0.99) lag behind: in TF 2.21 / Keras 3.15 (2
seeds) the training loss falls 0.35-0.38 -> 0.01, val_loss first rises and then falls to 0.13-0.32
by epoch 20, and the test accuracy is 0.86-0.99.
"""
import numpy as np
import pytest

import minitf as tf
from minitf import keras


def make_model(input_shape, num_classes):
    input_layer = keras.layers.Input(input_shape)

    conv1 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(input_layer)
    conv1 = keras.layers.BatchNormalization()(conv1)
    conv1 = keras.layers.ReLU()(conv1)

    conv2 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv1)
    conv2 = keras.layers.BatchNormalization()(conv2)
    conv2 = keras.layers.ReLU()(conv2)

    conv3 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv2)
    conv3 = keras.layers.BatchNormalization()(conv3)
    conv3 = keras.layers.ReLU()(conv3)

    gap = keras.layers.GlobalAveragePooling1D()(conv3)

    output_layer = keras.layers.Dense(num_classes, activation="softmax")(gap)

    return keras.models.Model(inputs=input_layer, outputs=output_layer)


def _series(rng, n, steps=32):
    y = rng.choice([-1, 1], n)
    t = np.arange(steps)
    freq = np.where(y == 1, 0.35, 0.08)
    phase = rng.uniform(0, 2 * np.pi, n)
    amp = rng.uniform(0.5, 1.5, n)
    x = amp[:, None] * np.sin(freq[:, None] * t[None] + phase[:, None])
    return x + 0.3 * rng.standard_normal((n, steps)), y


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x_train, y_train = _series(rng, 800)
    x_test, y_test = _series(rng, 100)
    x_train = x_train.reshape((x_train.shape[0], x_train.shape[1], 1))
    x_test = x_test.reshape((x_test.shape[0], x_test.shape[1], 1))
    num_classes = len(np.unique(y_train))
    idx = np.random.RandomState(0).permutation(len(x_train))
    x_train = x_train[idx]
    y_train = y_train[idx]
    y_train[y_train == -1] = 0
    y_test[y_test == -1] = 0
    return (x_train, y_train), (x_test, y_test), num_classes


def test_model_parameter_counts(data):
    (x_train, _), _, num_classes = data
    assert num_classes == 2
    model = make_model(input_shape=x_train.shape[1:], num_classes=num_classes)
    conv = lambda c_in: 3 * c_in * 64 + 64
    assert model.count_params() == conv(1) + 2 * conv(64) + 3 * 4 * 64 + (64 * 2 + 2) == 25858
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "Total params: 25,858" in text
    assert "Trainable params: 25,474" in text
    assert "Non-trainable params: 384" in text
    assert tuple(model.output.shape) == (None, 2)


def test_train_checkpoint_reload_and_evaluate(data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (x_train, y_train), (x_test, y_test), num_classes = data
    tf.random.set_seed(0)
    model = make_model(input_shape=x_train.shape[1:], num_classes=num_classes)

    epochs = 20
    batch_size = 32
    callbacks = [
        keras.callbacks.ModelCheckpoint("best_model.keras", save_best_only=True,
                                        monitor="val_loss"),
        keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=20,
                                          min_lr=0.0001),
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=50, verbose=1),
    ]
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["sparse_categorical_accuracy"])
    history = model.fit(x_train, y_train, batch_size=batch_size, epochs=epochs,
                        callbacks=callbacks, validation_split=0.2, verbose=0)
    assert (tmp_path / "best_model.keras").is_file()

    metric = "sparse_categorical_accuracy"
    # Keras 3's ReduceLROnPlateau logs the learning rate every epoch.
    assert set(history.history) == {"loss", metric, "val_loss", "val_" + metric,
                                    "learning_rate"}
    assert len(history.history["loss"]) == epochs
    np.testing.assert_allclose(history.history["learning_rate"], [0.001] * epochs, rtol=1e-6)
    assert history.history["loss"][-1] < 0.3 * history.history["loss"][0]
    assert history.history[metric][-1] > 0.95
    assert min(history.history["val_loss"]) < history.history["val_loss"][0]

    model = keras.models.load_model("best_model.keras")
    # The checkpoint holds the epoch with the lowest val_loss; the validation rows are the
    # last 160 (Keras splits at floor(800 * 0.8) = 640). BatchNormalization runs on its moving
    # statistics in evaluate, as it did for val_loss.
    val_loss, _ = model.evaluate(x_train[640:], y_train[640:], verbose=0)
    np.testing.assert_allclose(val_loss, min(history.history["val_loss"]), rtol=1e-4)
    test_loss, test_acc = model.evaluate(x_test, y_test)
    assert test_acc > 0.7  # TF: 0.86-0.99
    assert test_loss < 0.6
