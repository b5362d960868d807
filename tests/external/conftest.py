"""Shared data for the ports of public guides: a small slice of Fashion-MNIST."""
import pytest


@pytest.fixture(scope="session")
def fashion_mnist_small():
    """(x_train, y_train), (x_test, y_test): the first 2000 / 500 images, uint8 as loaded."""
    from datasets import fashion_mnist
    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data()
    return (x_train[:2000], y_train[:2000]), (x_test[:500], y_test[:500])
