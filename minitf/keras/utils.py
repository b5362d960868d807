"""``keras.utils``: data helpers used by training code.

    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    keras.utils.to_categorical([0, 2], num_classes=3)   # [[1, 0, 0], [0, 0, 1]]
"""
import numpy as np

from .. import backend as B
from ..ops.random_ops import set_seed as _set_seed
from ..tensor import Tensor
from .layers.base import clear_session  # noqa: F401
from .serialization import (CustomObjectScope, custom_object_scope,  # noqa: F401
                            deserialize_keras_object, get_custom_objects, get_registered_name,
                            get_registered_object, register_keras_serializable,
                            serialize_keras_object)
from .trainer_data import (PyDataset, pack_x_y_sample_weight,  # noqa: F401
                           unpack_x_y_sample_weight)
from .utils_data import (Progbar, pad_sequences, split_dataset,  # noqa: F401
                         timeseries_dataset_from_array)
from .utils_files import (get_file, image_dataset_from_directory, load_img,  # noqa: F401
                          save_img)
from .utils_more import *  # noqa: F401,F403 - get_source_inputs, Config, logging switches
from .utils_text_files import text_dataset_from_directory  # noqa: F401
from .utils_audio_files import audio_dataset_from_directory  # noqa: F401
from .plot_model import model_to_dot, plot_model  # noqa: F401

Sequence = PyDataset


def to_categorical(x, num_classes=None):
    """One-hot rows (a float64 numpy array, as Keras 3 returns) for integer class labels; a
    trailing axis of size 1 is dropped first, as in Keras."""
    if isinstance(x, Tensor):
        x = B.to_numpy(x._value)
    y = np.asarray(x)
    if y.dtype.kind not in "iub":
        if y.size and not np.all(np.equal(np.mod(y, 1), 0)):
            raise ValueError("to_categorical: labels must be integers")
        y = y.astype(np.int64)
    shape = y.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    y = y.reshape(-1)
    if y.size and y.min() < 0:
        raise ValueError(f"to_categorical: labels must be >= 0, got {int(y.min())}")
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    elif y.size and y.max() >= num_classes:
        raise ValueError(f"to_categorical: label {int(y.max())} is out of range for "
                         f"num_classes={num_classes}")
    out = np.zeros((y.shape[0], num_classes))
    out[np.arange(y.shape[0]), y] = 1.0
    return out.reshape(shape + (num_classes,))


def set_random_seed(seed):
    """Seed minitf's generator and Python's and numpy's global ones (Keras'
    ``keras.utils.set_random_seed``)."""
    import random
    random.seed(seed)
    np.random.seed(seed)
    _set_seed(seed)


def normalize(x, axis=-1, order=2):
    """``x`` divided by its L-``order`` norm along ``axis`` (numpy in, numpy out)."""
    x = np.asarray(x)
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    norm[norm == 0] = 1
    return x / norm


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A PIL image from an ``(height, width, channels)`` array (1, 3 or 4 channels); with
    ``scale`` the values are shifted and scaled to 0..255 first, as Keras does."""
    try:
        from PIL import Image
    except ImportError as exc:
        raise ImportError("keras.utils.array_to_img needs Pillow (pip install pillow)") from exc
    if data_format not in (None, "channels_last"):
        raise ValueError(f"array_to_img: only data_format='channels_last' is supported, got "
                         f"{data_format!r}")
    x = B.to_numpy(x._value) if isinstance(x, Tensor) else np.asarray(x)
    x = x.astype(np.float32)
    if x.ndim != 3 or x.shape[-1] not in (1, 3, 4):
        raise ValueError(f"array_to_img: expected an array of shape (height, width, 1|3|4), "
                         f"got {x.shape}")
    if scale:
        x = x - np.min(x)
        peak = np.max(x)
        if peak != 0:
            x = x / peak
        x = x * 255
    pixels = np.clip(np.round(x), 0, 255).astype(np.uint8) if scale else x.astype(np.uint8)
    if pixels.shape[-1] == 1:
        return Image.fromarray(pixels[:, :, 0], "L")
    return Image.fromarray(pixels, "RGB" if pixels.shape[-1] == 3 else "RGBA")


def img_to_array(img, data_format=None, dtype="float32"):
    """The ``(height, width, channels)`` float array of a PIL image."""
    if data_format not in (None, "channels_last"):
        raise ValueError(f"img_to_array: only data_format='channels_last' is supported, got "
                         f"{data_format!r}")
    x = np.asarray(img, dtype=dtype)
    return x[:, :, None] if x.ndim == 2 else x


def _preprocessing_namespace():
    from types import SimpleNamespace
    from . import preprocessing_image as image
    from . import preprocessing_sequence as sequence
    from . import preprocessing_text as text
    return SimpleNamespace(
        sequence=SimpleNamespace(pad_sequences=pad_sequences,
                                 **{name: getattr(sequence, name) for name in sequence.__all__}),
        text=SimpleNamespace(**{name: getattr(text, name) for name in text.__all__}),
        image=SimpleNamespace(array_to_img=array_to_img, img_to_array=img_to_array,
                              load_img=load_img, save_img=save_img,
                              **{name: getattr(image, name) for name in image.__all__}),
        image_dataset_from_directory=image_dataset_from_directory,
        text_dataset_from_directory=text_dataset_from_directory,
        timeseries_dataset_from_array=timeseries_dataset_from_array)
from .feature_space import FeatureSpace  # noqa: E402,F401
