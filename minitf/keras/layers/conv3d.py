"""3-D convolution, pooling and reshaping layers (channels-last: ``(batch, depth, height, width,
channels)``) and the transposed 1-D and 3-D convolutions: Conv3D, Conv3DTranspose,
Conv1DTranspose, Max/AveragePooling3D, their global forms, UpSampling3D, ZeroPadding3D and
Cropping3D."""
from ...ops import array_ops, conv3d_ops, reduce_ops
from .. import activations, regularizers
from . import _config
from .base import Layer
from .conv import (_GlobalPooling, _Pooling2D, _channels_last, _out_size, _padding,
                   _transpose_out_size)
from .core import bias_and_activation, set_weight_options

_LAYOUT = "(batch, depth, height, width, channels)"


def _ints(value, n, what, minimum=1):
    """Keras' ``int | tuple of n ints``."""
    if isinstance(value, int):
        value = (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n or min(value) < minimum:
        raise ValueError(f"{what} must be an int or {n} ints >= {minimum}, got {value!r}")
    return value


def _check_rank(layer, shape, rank, layout):
    if len(shape) != rank:
        raise ValueError(f"{type(layer).__name__} {layer.name!r} expects inputs {layout}, got "
                         f"shape {tuple(shape)}")


class _Conv(Layer):
    """Shared arguments, weights and config of the convolutions here (``rank`` spatial axes)."""
    _cast_integers = True
    rank = 3

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        what = type(self).__name__
        _channels_last(data_format, what)
        if groups != 1:
            raise ValueError(f"{what}: only groups=1 is supported, got {groups}")
        if int(filters) < 1:
            raise ValueError(f"{what}: filters must be a positive integer, got {filters!r}")
        self.filters = int(filters)
        self.kernel_size = _ints(kernel_size, self.rank, f"{what} kernel_size")
        self.strides = _ints(strides, self.rank, f"{what} strides")
        self.padding = _padding(padding, what)
        self.dilation_rate = _ints(dilation_rate, self.rank, f"{what} dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"{what}: strides {self.strides} and dilation_rate "
                             f"{self.dilation_rate} cannot both be greater than 1")
        set_weight_options(self, activation, use_bias, kernel_initializer, bias_initializer,
                           kernel_regularizer, bias_regularizer, kernel_constraint,
                           bias_constraint)

    def _kernel_shape(self, channels):
        return self.kernel_size + (channels, self.filters)

    def build(self, input_shape):
        if len(input_shape) != self.rank + 2 or input_shape[-1] is None:
            layout = _LAYOUT if self.rank == 3 else "(batch, steps, channels)"
            raise ValueError(f"{type(self).__name__} {self.name!r} expects inputs {layout} with "
                             f"known channels, got {tuple(input_shape)}")
        self.kernel = self.add_weight(name="kernel",
                                      shape=self._kernel_shape(input_shape[-1]),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.filters,),
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                **_config.weights(self, "kernel", "bias"),
                "activity_regularizer": regularizers.serialize(self.activity_regularizer)}


class Conv3D(_Conv):
    """3-D convolution over ``(batch, depth, height, width, channels)``; ``kernel`` has shape
    ``(kd, kh, kw, in_channels, filters)``.

        conv = Conv3D(8, 3, padding="same", activation="relu")
        conv(minitf.zeros([2, 8, 16, 16, 4])).shape     # (2, 8, 16, 16, 8)
    """

    def call(self, inputs):
        y = conv3d_ops.conv3d(inputs, self.kernel, strides=self.strides,
                              padding=self.padding.upper(), dilations=self.dilation_rate)
        return bias_and_activation(self, y)

    def compute_output_shape(self, input_shape):
        n, *sizes, _ = input_shape
        return (n,) + tuple(_out_size(size, k, s, self.padding, d) for size, k, s, d in zip(
            sizes, self.kernel_size, self.strides, self.dilation_rate)) + (self.filters,)

    def get_config(self):
        return {**super().get_config(), "groups": 1}


class _ConvTranspose(_Conv):
    """The gradient of the forward convolution with respect to its input; ``kernel`` has shape
    ``(*kernel_size, filters, in_channels)``. Output sizes follow Keras 3: ``size * stride``
    ('same') or ``size * stride + max(k - stride, 0)`` ('valid'), or with ``output_padding``
    ``(size - 1) * stride + k - 2 * pad + output_padding`` (``pad = k // 2`` for 'same')."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)
        what = type(self).__name__
        if output_padding is None:
            self.output_padding = None
        else:
            self.output_padding = _ints(output_padding, self.rank, f"{what} output_padding",
                                        minimum=0)
            if any(p >= s for p, s in zip(self.output_padding, self.strides)):
                raise ValueError(f"{what}: output_padding {self.output_padding} must be smaller "
                                 f"than strides {self.strides}")

    def _kernel_shape(self, channels):
        return self.kernel_size + (self.filters, channels)

    def _out_sizes(self, sizes):
        pads = self.output_padding or (None,) * self.rank
        return tuple(_transpose_out_size(size, k, s, self.padding, p, d) for size, k, s, p, d in
                     zip(sizes, self.kernel_size, self.strides, pads, self.dilation_rate))

    def compute_output_shape(self, input_shape):
        n, *sizes, _ = input_shape
        return (n,) + self._out_sizes(sizes) + (self.filters,)

    def get_config(self):
        return {**super().get_config(), "output_padding": self.output_padding}


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution: ``kernel`` (kd, kh, kw, filters, in_channels)."""

    def call(self, inputs):
        n, *sizes, _ = inputs.shape
        out = (n,) + self._out_sizes(sizes) + (self.filters,)
        y = conv3d_ops.conv3d_transpose(inputs, self.kernel, out, strides=self.strides,
                                        padding=self.padding.upper(),
                                        dilations=self.dilation_rate)
        return bias_and_activation(self, y)


class Conv1DTranspose(_ConvTranspose):
    """Transposed 1-D convolution over ``(batch, steps, channels)``: ``kernel``
    (k, filters, in_channels)."""
    rank = 1

    def call(self, inputs):
        n, steps, _ = inputs.shape
        out = (n,) + self._out_sizes((steps,)) + (self.filters,)
        y = conv3d_ops.conv1d_transpose(inputs, self.kernel, out, strides=self.strides[0],
                                        padding=self.padding.upper(),
                                        dilations=self.dilation_rate[0])
        return bias_and_activation(self, y)


# --- pooling -------------------------------------------------------------------------------------

class _Pooling3D(_Pooling2D):
    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)

    @staticmethod
    def _sizes(value, what):
        return _ints(value, 3, what)

    def call(self, inputs):
        _check_rank(self, inputs.shape, 5, _LAYOUT)
        return super().call(inputs)

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 5, _LAYOUT)
        return super().compute_output_shape(input_shape)


class MaxPooling3D(_Pooling3D):
    """Max over ``pool_size`` windows (stride defaults to the pool size)."""
    _op = staticmethod(conv3d_ops.max_pool3d)


class AveragePooling3D(_Pooling3D):
    """Mean over ``pool_size`` windows (with 'same' padding, over the real elements only)."""
    _op = staticmethod(conv3d_ops.avg_pool3d)


class _GlobalPooling3D(_GlobalPooling):
    _spatial = 3

    def call(self, inputs):
        _check_rank(self, inputs.shape, 5, _LAYOUT)
        return super().call(inputs)

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 5, _LAYOUT)
        return super().compute_output_shape(input_shape)


class GlobalAveragePooling3D(_GlobalPooling3D):
    """Mean over depth, height and width: ``(N, D, H, W, C) -> (N, C)``."""
    _reduce = staticmethod(reduce_ops.reduce_mean)


class GlobalMaxPooling3D(_GlobalPooling3D):
    """Max over depth, height and width: ``(N, D, H, W, C) -> (N, C)``."""
    _reduce = staticmethod(reduce_ops.reduce_max)


# --- reshaping -----------------------------------------------------------------------------------

def _three_pairs(value, what):
    """Keras' ``int | (d, h, w) | ((d1, d2), (h1, h2), (w1, w2))``."""
    if isinstance(value, int):
        value = (value,) * 3
    value = tuple(value)
    if len(value) != 3:
        raise ValueError(f"{what} must be an int, 3 ints or 3 pairs of ints, got {value!r}")
    out = []
    for v in value:
        pair = (int(v), int(v)) if isinstance(v, int) else tuple(int(i) for i in v)
        if len(pair) != 2 or min(pair) < 0:
            raise ValueError(f"{what} must be an int, 3 ints or 3 pairs of ints >= 0, got "
                             f"{value!r}")
        out.append(pair)
    return tuple(out)


class ZeroPadding3D(Layer):
    """Pad depth, height and width with zeros: ``padding`` is an int, ``(d, h, w)`` or
    ``((front, back), (top, bottom), (left, right))``."""
    _passthrough_dtype = True

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "ZeroPadding3D")
        self.padding = _three_pairs(padding, "ZeroPadding3D padding")

    def call(self, inputs):
        _check_rank(self, inputs.shape, 5, _LAYOUT)
        return array_ops.pad(inputs, [(0, 0)] + list(self.padding) + [(0, 0)])

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 5, _LAYOUT)
        n, *sizes, c = input_shape
        return (n,) + tuple(None if size is None else size + a + b
                            for size, (a, b) in zip(sizes, self.padding)) + (c,)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding, "data_format": "channels_last"}


class Cropping3D(Layer):
    """Remove elements at the borders of depth, height and width: ``cropping`` as in
    ``ZeroPadding3D``."""
    _passthrough_dtype = True

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Cropping3D")
        self.cropping = _three_pairs(cropping, "Cropping3D cropping")

    def _check_fits(self, sizes):
        if any(size is not None and a + b >= size for size, (a, b) in zip(sizes, self.cropping)):
            raise ValueError(f"Cropping3D {self.name!r}: cropping {self.cropping} leaves nothing "
                             f"of a {'x'.join(str(s) for s in sizes)} input")

    def call(self, inputs):
        _check_rank(self, inputs.shape, 5, _LAYOUT)
        sizes = tuple(inputs.shape[1:4])
        self._check_fits(sizes)
        key = tuple(slice(a, size - b) for size, (a, b) in zip(sizes, self.cropping))
        return inputs[(slice(None),) + key]

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 5, _LAYOUT)
        n, *sizes, c = input_shape
        self._check_fits(sizes)
        return (n,) + tuple(None if size is None else size - a - b
                            for size, (a, b) in zip(sizes, self.cropping)) + (c,)

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping,
                "data_format": "channels_last"}


class UpSampling3D(Layer):
    """Repeat each element ``size[0]`` times along depth, ``size[1]`` along height and
    ``size[2]`` along width (nearest)."""
    _passthrough_dtype = True

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "UpSampling3D")
        self.size = _ints(size, 3, "UpSampling3D size")

    def call(self, inputs):
        _check_rank(self, inputs.shape, 5, _LAYOUT)
        n, d, h, w, c = inputs.shape
        sd, sh, sw = self.size
        x = array_ops.reshape(inputs, (n, d, 1, h, 1, w, 1, c))
        x = array_ops.broadcast_to(x, (n, d, sd, h, sh, w, sw, c))
        return array_ops.reshape(x, (n, d * sd, h * sh, w * sw, c))

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 5, _LAYOUT)
        n, *sizes, c = input_shape
        return (n,) + tuple(None if size is None else size * s
                            for size, s in zip(sizes, self.size)) + (c,)

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": "channels_last"}


MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D
GlobalAvgPool3D, GlobalMaxPool3D = GlobalAveragePooling3D, GlobalMaxPooling3D
Convolution3D, Convolution3DTranspose = Conv3D, Conv3DTranspose
Convolution1DTranspose = Conv1DTranspose

__all__ = ["Conv3D", "Conv3DTranspose", "Conv1DTranspose", "MaxPooling3D", "AveragePooling3D",
           "GlobalMaxPooling3D", "GlobalAveragePooling3D", "UpSampling3D", "ZeroPadding3D",
           "Cropping3D", "MaxPool3D", "AvgPool3D", "GlobalAvgPool3D", "GlobalMaxPool3D",
           "Convolution3D", "Convolution3DTranspose", "Convolution1DTranspose"]
