"""Depthwise and depthwise-separable convolution layers (channels-last): ``DepthwiseConv2D``,
``SeparableConv2D``, ``DepthwiseConv1D`` and ``SeparableConv1D``, on the ops of
``minitf/ops/depthwise_conv_ops.py``.
"""
from ...ops import array_ops, conv_ops
from ...ops.depthwise_conv_ops import depthwise_conv2d, separable_conv2d
from .. import activations, constraints, initializers, regularizers
from .base import Layer
from .core import bias_and_activation


# --- layers --------------------------------------------------------------------------------------

def _tuple(value, rank, what):
    if isinstance(value, int):
        value = (value,) * rank
    value = tuple(int(v) for v in value)
    if len(value) != rank or min(value) <= 0:
        raise ValueError(f"{what} must be a positive int or {rank} positive ints, got {value}")
    return value


def _out_size(size, k, stride, padding, dilation):
    if size is None:
        return None
    if padding == "same":
        return -(-size // stride)
    return max(0, (size - (k - 1) * dilation - 1) // stride + 1)


class _DepthwiseBase(Layer):
    """The arguments and shapes shared by the depthwise and separable layers of 1 and 2
    dimensions (``rank``); ``call`` works on 2-D windows (1-D inputs get a height of 1)."""
    _cast_integers = True
    rank = 2

    def _setup(self, kernel_size, strides, padding, data_format, dilation_rate,
               depth_multiplier, activation, use_bias, bias_initializer, bias_regularizer,
               bias_constraint):
        name = type(self).__name__
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{name}: only data_format='channels_last' is supported")
        if int(depth_multiplier) != depth_multiplier or depth_multiplier <= 0:
            raise ValueError(f"{name}: depth_multiplier must be a positive integer, got "
                             f"{depth_multiplier!r}")
        self.depth_multiplier = int(depth_multiplier)
        self.kernel_size = _tuple(kernel_size, self.rank, f"{name} kernel_size")
        self.strides = _tuple(strides, self.rank, f"{name} strides")
        self.dilation_rate = _tuple(dilation_rate, self.rank, f"{name} dilation_rate")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"{name}: padding must be 'valid' or 'same', got {padding!r}")
        self.activation = activations.get(activation)
        self._linear = self.activation is activations.linear
        self.use_bias = bool(use_bias)
        self.bias_initializer = initializers.get(bias_initializer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.bias_constraint = constraints.get(bias_constraint)

    def _channels(self, input_shape):
        if len(input_shape) != self.rank + 2 or input_shape[-1] is None:
            dims = "height, width" if self.rank == 2 else "steps"
            raise ValueError(f"{type(self).__name__} {self.name!r} expects inputs (batch, "
                             f"{dims}, channels) with known channels, got {tuple(input_shape)}")
        return int(input_shape[-1])

    def _add_bias(self, units):
        self.bias = self.add_weight(name="bias", shape=(units,),
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def _as_2d(self, value):
        return value if self.rank == 2 else (1,) + value

    def _depthwise(self, inputs, kernel):
        x = inputs if self.rank == 2 else array_ops.expand_dims(inputs, 1)
        if self.rank == 1:
            kernel = array_ops.expand_dims(kernel, 0)
        y = depthwise_conv2d(x, kernel, strides=self._as_2d(self.strides),
                             padding=self.padding.upper(),
                             dilations=self._as_2d(self.dilation_rate))
        return y

    def _spatial_output(self, input_shape):
        return tuple(_out_size(size, k, s, self.padding, d) for size, k, s, d in zip(
            input_shape[1:-1], self.kernel_size, self.strides, self.dilation_rate))

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer)}


class DepthwiseConv2D(_DepthwiseBase):
    """Depthwise 2-D convolution over NHWC inputs: each input channel is convolved with its
    own ``depth_multiplier`` filters, giving ``in_channels * depth_multiplier`` outputs.
    ``kernel`` has shape ``(kh, kw, in_channels, depth_multiplier)``, ``bias``
    ``(in_channels * depth_multiplier,)``.

        DepthwiseConv2D(3, padding="same", depth_multiplier=2)(x)
        # x (8, 28, 28, 3) -> (8, 28, 28, 6)
    """

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self._setup(kernel_size, strides, padding, data_format, dilation_rate,
                    depth_multiplier, activation, use_bias, bias_initializer, bias_regularizer,
                    bias_constraint)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)

    def build(self, input_shape):
        channels = self._channels(input_shape)
        self.kernel = self.add_weight(name="kernel",
                                      shape=self.kernel_size + (channels, self.depth_multiplier),
                                      initializer=self.depthwise_initializer,
                                      regularizer=self.depthwise_regularizer,
                                      constraint=self.depthwise_constraint)
        self._add_bias(channels * self.depth_multiplier)

    def call(self, inputs):
        y = self._depthwise(inputs, self.kernel)
        if self.rank == 1:
            y = array_ops.squeeze(y, 1)
        return bias_and_activation(self, y)

    def compute_output_shape(self, input_shape):
        channels = input_shape[-1]
        out = None if channels is None else channels * self.depth_multiplier
        return (input_shape[0],) + self._spatial_output(input_shape) + (out,)

    def get_config(self):
        return {**super().get_config(),
                "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
                "depthwise_regularizer": regularizers.serialize(self.depthwise_regularizer),
                "depthwise_constraint": constraints.serialize(self.depthwise_constraint)}


class SeparableConv2D(_DepthwiseBase):
    """Depthwise-separable 2-D convolution: a depthwise convolution (``depthwise_kernel``
    ``(kh, kw, in_channels, depth_multiplier)``) followed by a 1x1 convolution to ``filters``
    channels (``pointwise_kernel`` ``(1, 1, in_channels * depth_multiplier, filters)``), then
    ``bias`` ``(filters,)`` and the activation."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if int(filters) != filters or filters <= 0:
            raise ValueError(f"{type(self).__name__}: filters must be a positive integer, got "
                             f"{filters!r}")
        self.filters = int(filters)
        self._setup(kernel_size, strides, padding, data_format, dilation_rate,
                    depth_multiplier, activation, use_bias, bias_initializer, bias_regularizer,
                    bias_constraint)
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.depthwise_constraint = constraints.get(depthwise_constraint)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape):
        channels = self._channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(1,) * self.rank + (channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._add_bias(self.filters)

    def call(self, inputs):
        y = self._depthwise(inputs, self.depthwise_kernel)
        pointwise = self.pointwise_kernel
        if self.rank == 1:
            pointwise = array_ops.expand_dims(pointwise, 0)
        y = conv_ops.conv2d(y, pointwise, strides=1, padding="VALID")
        if self.rank == 1:
            y = array_ops.squeeze(y, 1)
        return bias_and_activation(self, y)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + self._spatial_output(input_shape) + (self.filters,)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "depthwise_initializer": initializers.serialize(self.depthwise_initializer),
                "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
                "depthwise_regularizer": regularizers.serialize(self.depthwise_regularizer),
                "pointwise_regularizer": regularizers.serialize(self.pointwise_regularizer),
                "depthwise_constraint": constraints.serialize(self.depthwise_constraint),
                "pointwise_constraint": constraints.serialize(self.pointwise_constraint)}


class DepthwiseConv1D(DepthwiseConv2D):
    """Depthwise 1-D convolution over ``(batch, steps, channels)``; ``kernel`` has shape
    ``(kernel_size, in_channels, depth_multiplier)``."""
    rank = 1

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, **kwargs):
        super().__init__(kernel_size, strides=strides, padding=padding,
                         depth_multiplier=depth_multiplier, data_format=data_format,
                         dilation_rate=dilation_rate, **kwargs)


class SeparableConv1D(SeparableConv2D):
    """Depthwise-separable 1-D convolution over ``(batch, steps, channels)``:
    ``depthwise_kernel`` ``(kernel_size, in_channels, depth_multiplier)``, ``pointwise_kernel``
    ``(1, in_channels * depth_multiplier, filters)``."""
    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate,
                         depth_multiplier=depth_multiplier, **kwargs)


SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D

__all__ = ["DepthwiseConv2D", "SeparableConv2D",
           "DepthwiseConv1D", "SeparableConv1D", "SeparableConvolution1D",
           "SeparableConvolution2D"]
