"""Keras layers: ``minitf.keras.layers.Dense`` and friends, and the ``Layer`` base class."""
from .base import (Input, InputLayer, KerasTensor, Layer, TrackedDict, TrackedList,  # noqa: F401
                   clear_session)
from .conv import (AveragePooling2D, AvgPool2D, Conv2D, GlobalAveragePooling2D,  # noqa: F401
                   GlobalAvgPool2D, GlobalMaxPool2D, GlobalMaxPooling2D, MaxPool2D, MaxPooling2D)
from .core import Activation, Dense, Dropout, Flatten, Reshape  # noqa: F401
from .embedding import Embedding  # noqa: F401
from .normalization import BatchNormalization, LayerNormalization  # noqa: F401
from .normalization import SyncBatchNormalization  # noqa: F401
