"""``keras.datasets.fashion_mnist.load_data`` (the basic classification tutorial's first call)
and ``keras.losses.KLDivergence`` against an independent numpy computation."""
import numpy as np

import minitf as tf
from minitf import keras


def test_fashion_mnist_load_data_as_keras_returns_it():
    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    assert x_train.shape == (60000, 28, 28) and x_test.shape == (10000, 28, 28)
    assert x_train.dtype == np.uint8 and y_train.dtype == np.uint8
    assert y_train.shape == (60000,) and y_test.shape == (10000,)
    assert sorted(np.unique(y_train)) == list(range(10))
    assert int(y_train[0]) == 9                  # the first training image is an ankle boot


def test_kl_divergence_matches_numpy():
    y_true = np.array([[0.2, 0.8], [0.5, 0.5]], np.float32)
    y_pred = np.array([[0.4, 0.6], [0.9, 0.1]], np.float32)
    expected = np.sum(y_true * np.log(y_true / y_pred), axis=-1)
    np.testing.assert_allclose(keras.losses.kl_divergence(y_true, y_pred).numpy(), expected,
                               rtol=1e-6)
    np.testing.assert_allclose(float(keras.losses.KLDivergence()(y_true, y_pred)),
                               expected.mean(), rtol=1e-6)
    assert keras.losses.get("kld") is keras.losses.kl_divergence
    assert keras.backend.epsilon() == 1e-7


def test_short_names_of_the_loss_functions_in_metrics_and_losses():
    # tf.keras (TF 2.21) exposes these aliases of the loss functions in both modules.
    y_true = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    y_pred = np.array([[1.5, 1.0], [2.0, 6.0]], np.float32)
    expected = {
        "mse": np.mean((y_true - y_pred) ** 2, axis=-1),
        "mae": np.mean(np.abs(y_true - y_pred), axis=-1),
        "mape": 100 * np.mean(np.abs((y_true - y_pred) / y_true), axis=-1),
        "msle": np.mean((np.log1p(y_pred) - np.log1p(y_true)) ** 2, axis=-1),
        "logcosh": np.mean(np.log(np.cosh(y_pred - y_true)), axis=-1),
    }
    for module in (keras.metrics, keras.losses):
        for name, want in expected.items():
            for alias in (name, name.upper()) if name != "logcosh" else (name,):
                got = getattr(module, alias)(y_true, y_pred).numpy()
                np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"{module.__name__}.{alias}")
        p, q = np.array([[0.2, 0.8]], np.float32), np.array([[0.4, 0.6]], np.float32)
        for alias in ("kld", "KLD", "kullback_leibler_divergence"):
            np.testing.assert_allclose(getattr(module, alias)(p, q).numpy(),
                                       np.sum(p * np.log(p / q), axis=-1), rtol=1e-6)
