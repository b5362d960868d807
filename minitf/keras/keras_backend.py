"""``keras.backend``: the few functions TF 2-era Keras code still calls on it.

    lr = float(keras.backend.get_value(model.optimizer.learning_rate))
    keras.backend.set_value(model.optimizer.learning_rate, lr * 0.5)
"""
from .layers.base import clear_session  # noqa: F401


def floatx():
    """The default float type of new weights: ``"float32"``."""
    return "float32"


def epsilon():
    """The fuzz factor Keras adds to denominators: ``1e-7``."""
    return 1e-7


def get_value(x):
    """The value of a Variable or tensor as a numpy array (a host copy); Python numbers and
    numpy values come back as they are."""
    numpy = getattr(x, "numpy", None)
    return numpy() if callable(numpy) else x


def set_value(x, value):
    """Assign ``value`` to the Variable ``x`` (an optimizer's ``learning_rate``...)."""
    if not hasattr(x, "assign"):
        raise TypeError(f"keras.backend.set_value: expected a Variable, got "
                        f"{type(x).__name__} (assign a plain attribute directly instead)")
    x.assign(value)
