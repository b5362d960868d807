"""``keras.datasets.fashion_mnist`` and ``keras.datasets.mnist``: ``load_data()`` gives
``(x_train, y_train), (x_test, y_test)`` as uint8 numpy arrays, as in Keras.

Fashion-MNIST ships with minitf (checked against its SHA-256); MNIST is downloaded once with
checksums and cached (see ``datasets/mnist.py``), and fails with a clear message offline.
"""
from types import SimpleNamespace


def _fashion_mnist_load_data():
    """Fashion-MNIST: 60,000 training and 10,000 test images of 28x28 uint8 pixels."""
    from datasets import fashion_mnist
    return fashion_mnist.load_data()


def _mnist_load_data(path="mnist.npz"):
    """MNIST (``path`` is accepted for Keras compatibility; the cache is minitf's)."""
    from datasets import mnist
    return mnist.load_data()


fashion_mnist = SimpleNamespace(load_data=_fashion_mnist_load_data)
mnist = SimpleNamespace(load_data=_mnist_load_data)
