"""metrics=["accuracy"/"acc"] with a loss whose kind is unknown: the variant comes from the
shapes (Keras 3's get_metric), and "acc" is logged as "acc"."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras


def _model(units, activation):
    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(units, activation=activation)])


def _data(n=64, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 5)).astype("float32")


def _mse(y, p):
    return tf.reduce_mean((tf.cast(y, p.dtype) - p) ** 2, axis=-1)


class _CustomLoss(keras.losses.Loss):
    def call(self, y_true, y_pred):
        return tf.reduce_mean(y_pred, axis=-1)


@pytest.mark.parametrize("ident", ["accuracy", "acc"])
def test_lambda_loss_sigmoid_output_is_binary_accuracy(ident):
    x = _data()
    y = (np.random.default_rng(1).random((64, 1)) > 0.5).astype("float32")
    m = _model(1, "sigmoid")
    m.compile("sgd", loss=lambda a, b: _mse(a, b), metrics=[ident])
    result = m.evaluate(x, y, verbose=0, return_dict=True)
    p = m.predict(x, verbose=0)
    expected = np.mean((p > 0.5).astype("float32") == y)
    assert 0.0 < expected < 1.0
    assert result[ident] == pytest.approx(expected, abs=1e-6)


def test_custom_loss_sparse_labels_vs_softmax():
    x = _data()
    y = np.random.default_rng(2).integers(0, 3, size=(64,))
    m = _model(3, "softmax")
    m.compile("sgd", loss=_CustomLoss(), metrics=["accuracy"])
    result = m.evaluate(x, y, verbose=0, return_dict=True)
    expected = np.mean(m.predict(x, verbose=0).argmax(-1) == y)
    assert 0.0 < expected < 1.0
    assert result["accuracy"] == pytest.approx(expected, abs=1e-6)


def test_function_loss_sparse_labels_column_vs_softmax():
    x = _data()
    y = np.random.default_rng(3).integers(0, 3, size=(64, 1))
    m = _model(3, "softmax")
    m.compile("sgd", loss=_mse_sparse, metrics=["accuracy"])
    result = m.evaluate(x, y, verbose=0, return_dict=True)
    expected = np.mean(m.predict(x, verbose=0).argmax(-1) == y[:, 0])
    assert result["accuracy"] == pytest.approx(expected, abs=1e-6)


def _mse_sparse(y, p):
    return tf.reduce_mean(p, axis=-1)


def test_function_loss_one_hot_vs_softmax():
    x = _data()
    labels = np.random.default_rng(4).integers(0, 4, size=(64,))
    y = np.eye(4, dtype="float32")[labels]
    m = _model(4, "softmax")
    m.compile("sgd", loss=_mse, metrics=["accuracy"])
    result = m.evaluate(x, y, verbose=0, return_dict=True)
    expected = np.mean(m.predict(x, verbose=0).argmax(-1) == labels)
    assert 0.0 < expected < 1.0
    assert result["accuracy"] == pytest.approx(expected, abs=1e-6)


def test_known_loss_name_keeps_its_accuracy():
    x = _data()
    y = np.random.default_rng(5).integers(0, 3, size=(64,))
    m = _model(3, "softmax")
    m.compile("sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    result = m.evaluate(x, y, verbose=0, return_dict=True)
    assert result["accuracy"] == pytest.approx(
        np.mean(m.predict(x, verbose=0).argmax(-1) == y), abs=1e-6)


def test_acc_is_logged_as_acc():
    x = _data()
    y = (np.random.default_rng(6).random((64, 1)) > 0.5).astype("float32")
    m = _model(1, "sigmoid")
    m.compile("sgd", loss="binary_crossentropy", metrics=["acc"])
    seen = []
    cb = keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(dict(logs)))
    h = m.fit(x, y, epochs=2, batch_size=16, verbose=0, validation_data=(x, y), callbacks=[cb])
    assert set(h.history) == {"loss", "acc", "val_loss", "val_acc"}
    assert "acc" in seen[-1] and "accuracy" not in seen[-1]
    m2 = _model(1, "sigmoid")
    m2.compile("sgd", loss=_mse, metrics=["accuracy"])
    h2 = m2.fit(x, y, epochs=1, verbose=0, validation_data=(x, y))
    assert set(h2.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    final = m2.evaluate(x, y, verbose=0, return_dict=True)["accuracy"]
    assert final == pytest.approx(np.mean((m2.predict(x, verbose=0) > 0.5) == y), abs=1e-6)
