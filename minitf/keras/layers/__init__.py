"""Keras layers: ``minitf.keras.layers.Dense`` and friends, and the ``Layer`` base class."""
from .base import (Input, InputLayer, KerasTensor, Layer, TrackedDict, TrackedList,  # noqa: F401
                   clear_session)
from .conv import (AveragePooling2D, AvgPool2D, Conv2D, GlobalAveragePooling2D,  # noqa: F401
                   GlobalAvgPool2D, GlobalMaxPool2D, GlobalMaxPooling2D, MaxPool2D, MaxPooling2D)
from .core import Activation, Dense, Dropout, Flatten, Reshape  # noqa: F401
from .embedding import Embedding  # noqa: F401
from .normalization import BatchNormalization, LayerNormalization  # noqa: F401
from .activation import ELU, LeakyReLU, PReLU, ReLU, Softmax, ThresholdedReLU  # noqa: F401
from .conv import (AveragePooling1D, AvgPool1D, Conv1D, Conv2DTranspose,  # noqa: F401
                   Convolution1D, Convolution2D, GlobalAveragePooling1D, GlobalAvgPool1D,
                   GlobalMaxPool1D, GlobalMaxPooling1D, MaxPool1D, MaxPooling1D)
from .core import Lambda  # noqa: F401
from .merging import (Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply,  # noqa: F401
                      Subtract, add, average, concatenate, dot, maximum, minimum, multiply,
                      subtract)
from .preprocessing import Normalization, Rescaling  # noqa: F401
from .reshaping import Cropping2D, Permute, RepeatVector, UpSampling2D, ZeroPadding2D  # noqa: F401
from .serialization import deserialize, serialize  # noqa: F401
from .core import ActivityRegularization, GaussianNoise, Identity  # noqa: F401
from .reshaping import Cropping1D, UpSampling1D, ZeroPadding1D  # noqa: F401
from types import SimpleNamespace as _NS  # noqa: E402

# TF 2.3-2.5 paths of the preprocessing layers, still found in tutorials.
experimental = _NS(preprocessing=_NS(Rescaling=Rescaling, Normalization=Normalization))
from .normalization import SyncBatchNormalization  # noqa: F401
from .op_layers import TFOpLambda  # noqa: F401,E402 - operations on KerasTensors
from .recurrent import GRU, LSTM, RNN, SimpleRNN  # noqa: F401,E402
from .recurrent_cells import (GRUCell, LSTMCell, SimpleRNNCell,  # noqa: F401,E402
                              StackedRNNCells)
from .wrappers import Bidirectional, TimeDistributed, Wrapper  # noqa: F401,E402
from .attention import AdditiveAttention, Attention, MultiHeadAttention  # noqa: F401,E402
from .conv_depthwise import (DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D,  # noqa: F401,E402
                             SeparableConv2D, SeparableConvolution1D, SeparableConvolution2D)
from .conv3d import (AveragePooling3D, AvgPool3D, Conv1DTranspose, Conv3D,  # noqa: F401,E402
                     Conv3DTranspose, Convolution1DTranspose, Convolution3D,
                     Convolution3DTranspose, Cropping3D, GlobalAveragePooling3D, GlobalAvgPool3D,
                     GlobalMaxPool3D, GlobalMaxPooling3D, MaxPool3D, MaxPooling3D, UpSampling3D,
                     ZeroPadding3D)
from .image_preprocessing import (CenterCrop, RandomBrightness, RandomContrast,  # noqa: F401,E402
                                  RandomCrop, RandomFlip, RandomRotation, RandomTranslation,
                                  RandomZoom, Resizing)
for _name in ("CenterCrop", "RandomBrightness", "RandomContrast", "RandomCrop", "RandomFlip",
              "RandomRotation", "RandomTranslation", "RandomZoom", "Resizing"):
    setattr(experimental.preprocessing, _name, globals()[_name])
del _name
from .regularization import (AlphaDropout, GaussianDropout, SpatialDropout1D,  # noqa: F401,E402
                             SpatialDropout2D, SpatialDropout3D)
from .normalization_more import GroupNormalization, RMSNormalization, UnitNormalization  # noqa: F401,E402,E501
from .einsum_dense import EinsumDense  # noqa: F401,E402
from .categorical import (CategoryEncoding, Discretization, Hashing,  # noqa: F401,E402
                          IntegerLookup)
from .lookup_string import StringLookup  # noqa: F401,E402
from .text_vectorization import TextVectorization  # noqa: F401,E402
experimental.preprocessing.StringLookup = StringLookup
experimental.preprocessing.TextVectorization = TextVectorization
from .masking import Masking  # noqa: F401,E402
from .conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D, ConvLSTMCell  # noqa: F401,E402
from .augment_geometry import (CutMix, MixUp, RandomErasing, RandomGaussianBlur,  # noqa: F401,E402
                               RandomElasticTransform, RandomPerspective, RandomShear)
from .augment_color import (AutoContrast, Equalization, Pipeline,  # noqa: F401,E402
                            RandomColorDegeneration, RandomColorJitter, RandomGrayscale,
                            RandomHue, RandomInvert, RandomPosterization, RandomSaturation,
                            RandomSharpness, Solarization)
from .pooling_adaptive import (AdaptiveAveragePooling1D,  # noqa: F401,E402
                               AdaptiveAveragePooling2D, AdaptiveAveragePooling3D,
                               AdaptiveMaxPooling1D, AdaptiveMaxPooling2D, AdaptiveMaxPooling3D)
from .attention_gqa import GroupQueryAttention  # noqa: F401,E402
from .embedding_reversible import ReversibleEmbedding  # noqa: F401,E402
from .spectral_norm import SpectralNormalization  # noqa: F401,E402
from .input_spec import InputSpec  # noqa: F401,E402
from .hashed_crossing import HashedCrossing  # noqa: F401,E402
Convolution2DTranspose = Conv2DTranspose  # Keras's alias
from .augment_policies import AugMix, RandAugment  # noqa: F401,E402
from .spectrogram import MelSpectrogram, STFTSpectrogram  # noqa: F401,E402
from .augment_clahe import ContrastLimitedAdaptiveHistogramEqualization  # noqa: F401,E402
from .random_size import RandomHeight, RandomWidth  # noqa: F401,E402
experimental.preprocessing.RandomHeight = RandomHeight
experimental.preprocessing.RandomWidth = RandomWidth
