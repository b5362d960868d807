"""``keras.backend``: its settings (floatx, epsilon, image format), values of variables, and
(from ``backend_functions``) the tensor functions tf.keras 2 code calls on it.

    lr = float(keras.backend.get_value(model.optimizer.learning_rate))
    keras.backend.set_value(model.optimizer.learning_rate, lr * 0.5)
"""
from .layers.base import clear_session  # noqa: F401

_FLOATX = ["float32"]
_EPSILON = [1e-7]
_FLOAT_TYPES = ("bfloat16", "float16", "float32", "float64")


def floatx():
    """The default float type of new weights (``"float32"`` unless ``set_floatx`` changed it)."""
    return _FLOATX[0]


def set_floatx(value):
    """Set the default float type: new layers take it as their dtype policy unless a global
    dtype policy other than the previous floatx was set (as in Keras 3)."""
    from . import mixed_precision
    if value not in _FLOAT_TYPES:
        raise ValueError(f"Unknown `floatx` value: {value!r}. Expected one of {_FLOAT_TYPES}")
    previous = _FLOATX[0]
    _FLOATX[0] = str(value)
    if mixed_precision.global_policy().name == previous:
        mixed_precision.set_global_policy(value)


def epsilon():
    """The fuzz factor Keras adds to denominators (``1e-7`` unless ``set_epsilon`` changed it)."""
    return _EPSILON[0]


def set_epsilon(value):
    """Set the value ``epsilon()`` returns."""
    _EPSILON[0] = float(value)


def image_data_format():
    """The image layout: always ``"channels_last"`` (the only one minitf's layers use)."""
    return "channels_last"


def set_image_data_format(data_format):
    """Accepts only ``"channels_last"``; ``"channels_first"`` is not supported."""
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"The `data_format` argument must be one of {{'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format!r}")
    if data_format != "channels_last":
        raise ValueError("keras.backend.set_image_data_format: only 'channels_last' is "
                         "supported by minitf")


def int_shape(x):
    """The shape of a tensor, variable or array as a tuple of ints (None for unknown
    dimensions)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        raise TypeError(f"keras.backend.int_shape: expected a tensor or array, got "
                        f"{type(x).__name__}")
    as_list = getattr(shape, "as_list", None)
    dims = as_list() if callable(as_list) else list(shape)
    return tuple(None if d is None else int(d) for d in dims)


def mean(x, axis=None, keepdims=False):
    """The mean of ``x`` over ``axis`` (all axes when None)."""
    from ..ops.reduce_ops import reduce_mean
    return reduce_mean(x, axis=axis, keepdims=keepdims)


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


from .backend_functions import *  # noqa: E402,F401,F403 - tf.keras 2's K.sum, K.clip, ...
from .backend_ctc import ctc_batch_cost, ctc_decode, ctc_label_dense_to_sparse  # noqa: E402,F401
from .backend_extras import *  # noqa: E402,F401,F403 - backend(), get_uid, result_type, ...
from .backend_legacy import *  # noqa: E402,F401,F403 - K.batch_dot, K.rnn, K.conv1d, ...
