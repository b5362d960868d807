"""Convolution and pooling layers (channels-last): Conv1D, Conv2D, Conv2DTranspose, max and
average pooling in 1-D and 2-D, and their global variants."""
from ...ops import array_ops, conv_ops, conv_transpose, reduce_ops
from .. import activations
from . import _config
from .base import Layer
from .core import bias_and_activation, set_weight_options


def _pair(value, what):
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or 2 ints, got {value}")
    return value


def _padding(padding, what):
    padding = str(padding).lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"{what}: padding must be 'valid' or 'same', got {padding!r}")
    return padding


def _channels_last(data_format, what):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{what}: only data_format='channels_last' is supported")


def _out_size(size, k, stride, padding, dilation=1):
    if size is None:
        return None
    if padding == "same":
        return -(-size // stride)
    span = (k - 1) * dilation + 1
    return max(0, (size - span) // stride + 1)


def _transpose_out_size(size, k, stride, padding, output_padding=None, dilation=1):
    """Keras 3's ``deconv_output_length``: the output length of a transposed convolution."""
    if size is None:
        return None
    span = (k - 1) * dilation + 1
    if output_padding is None:
        return size * stride + max(span - stride, 0) if padding == "valid" else size * stride
    pad = span // 2 if padding == "same" else 0
    return (size - 1) * stride + span - 2 * pad + output_padding


def _add_kernel_and_bias(layer, kernel_shape):
    """``layer.kernel`` of ``kernel_shape`` and ``layer.bias`` (``(filters,)``, None without
    ``use_bias``), with the options ``set_weight_options`` stored."""
    layer.kernel = layer.add_weight(name="kernel", shape=kernel_shape,
                                    initializer=layer.kernel_initializer,
                                    regularizer=layer.kernel_regularizer,
                                    constraint=layer.kernel_constraint)
    layer.bias = layer.add_weight(name="bias", shape=(layer.filters,),
                                  initializer=layer.bias_initializer,
                                  regularizer=layer.bias_regularizer,
                                  constraint=layer.bias_constraint) if layer.use_bias else None


class Conv2D(Layer):
    """2-D convolution over NHWC inputs; ``kernel`` has shape ``(kh, kw, in_channels, filters)``.

        conv = Conv2D(32, 3, padding="same", activation="relu")
        conv(minitf.zeros([8, 28, 28, 1])).shape     # (8, 28, 28, 32)
    """
    _cast_integers = True

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Conv2D")
        if groups != 1:
            raise ValueError(f"Conv2D: only groups=1 is supported, got {groups}")
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "Conv2D kernel_size")
        self.strides = _pair(strides, "Conv2D strides")
        self.padding = _padding(padding, "Conv2D")
        self.dilation_rate = _pair(dilation_rate, "Conv2D dilation_rate")
        set_weight_options(self, activation, use_bias, kernel_initializer, bias_initializer,
                           kernel_regularizer, bias_regularizer, kernel_constraint,
                           bias_constraint)

    def build(self, input_shape):
        if len(input_shape) != 4 or input_shape[-1] is None:
            raise ValueError(f"Conv2D {self.name!r} expects inputs (batch, height, width, "
                             f"channels) with known channels, got {tuple(input_shape)}")
        _add_kernel_and_bias(self, self.kernel_size + (input_shape[-1], self.filters))

    def call(self, inputs):
        y = conv_ops.conv2d(inputs, self.kernel, strides=self.strides,
                            padding=self.padding.upper(),
                            dilations=None if self.dilation_rate == (1, 1) else self.dilation_rate)
        return bias_and_activation(self, y)

    def compute_output_shape(self, input_shape):
        n, h, w, _ = input_shape
        (kh, kw), (sh, sw), (dh, dw) = self.kernel_size, self.strides, self.dilation_rate
        return (n, _out_size(h, kh, sh, self.padding, dh), _out_size(w, kw, sw, self.padding, dw),
                self.filters)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "groups": 1,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                **_config.weights(self, "kernel", "bias")}


class _Pooling2D(Layer):
    """Windows of ``pool_size`` over the spatial axes (channels last); 3-D pooling subclasses
    it with its own ``_sizes`` reader."""
    _passthrough_dtype = True
    _op = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        what = type(self).__name__
        _channels_last(data_format, what)
        self.pool_size = self._sizes(pool_size, f"{what} pool_size")
        self.strides = self.pool_size if strides is None else self._sizes(
            strides, f"{what} strides")
        self.padding = _padding(padding, what)

    @staticmethod
    def _sizes(value, what):
        return _pair(value, what)

    def call(self, inputs):
        return type(self)._op(inputs, ksize=self.pool_size, strides=self.strides,
                              padding=self.padding.upper())

    def compute_output_shape(self, input_shape):
        n, *sizes, c = input_shape
        return (n,) + tuple(_out_size(size, k, s, self.padding) for size, k, s in zip(
            sizes, self.pool_size, self.strides)) + (c,)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last"}


class MaxPooling2D(_Pooling2D):
    """Max over ``pool_size`` windows (stride defaults to the pool size)."""
    _op = staticmethod(conv_ops.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """Mean over ``pool_size`` windows (with 'same' padding, over the real pixels only)."""
    _op = staticmethod(conv_ops.avg_pool2d)


class _GlobalPooling(Layer):
    """A reduction over the ``_spatial`` axes: those after the batch axis (channels last), or
    after the channel axis (``data_format="channels_first"``: no kernel, only other axes)."""
    _passthrough_dtype = True
    _reduce = None
    _spatial = 2

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        data_format = "channels_last" if data_format is None else str(data_format).lower()
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"{type(self).__name__}: data_format must be 'channels_last' or "
                             f"'channels_first', got {data_format!r}")
        self.data_format = data_format
        self.keepdims = bool(keepdims)

    def _axes(self):
        first = 2 if self.data_format == "channels_first" else 1
        axes = tuple(range(first, first + self._spatial))
        return axes[0] if len(axes) == 1 else axes

    def call(self, inputs):
        return type(self)._reduce(inputs, axis=self._axes(), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        if self.data_format == "channels_first":
            n, c = input_shape[0], input_shape[1]
            return (n, c) + (1,) * self._spatial if self.keepdims else (n, c)
        n, c = input_shape[0], input_shape[-1]
        return (n,) + (1,) * self._spatial + (c,) if self.keepdims else (n, c)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPooling):
    """Mean over height and width: ``(N, H, W, C) -> (N, C)``."""
    _reduce = staticmethod(reduce_ops.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling):
    """Max over height and width: ``(N, H, W, C) -> (N, C)``."""
    _reduce = staticmethod(reduce_ops.reduce_max)


MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D


def _single(value, what):
    if isinstance(value, int):
        return value
    value = tuple(int(v) for v in value)
    if len(value) != 1:
        raise ValueError(f"{what} must be an int or 1 int, got {value}")
    return value[0]


class Conv2DTranspose(Conv2D):
    """Transposed 2-D convolution (the gradient of ``Conv2D`` with respect to its input):
    ``kernel`` has shape ``(kh, kw, filters, in_channels)``. Output sizes follow Keras'
    ``deconv_output_length``: with ``strides=s`` and the dilated kernel size ``k``, ``size * s``
    ('same') or ``size * s + max(k - s, 0)`` ('valid'); with ``output_padding=p``,
    ``(size - 1) * s + k - 2 * pad + p`` (``pad = k // 2`` for 'same', 0 for 'valid').

    Computed by ``minitf/ops/conv_transpose.py``: a stride-1 convolution of the input with
    zeros inserted between its pixels, against the spatially flipped (dilated) kernel, over the
    window TF's ``conv2d_transpose`` keeps for that output size.
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, dilation_rate=dilation_rate, **kwargs)
        if output_padding is not None:
            output_padding = _pair(output_padding, "Conv2DTranspose output_padding")
            if any(not 0 <= p < max(s, d) for p, s, d in zip(output_padding, self.strides,
                                                               self.dilation_rate)):
                raise ValueError(f"Conv2DTranspose: output_padding {output_padding} must be "
                                 f"smaller than the strides {self.strides} (or dilation)")
        self.output_padding = output_padding

    def build(self, input_shape):
        if len(input_shape) != 4 or input_shape[-1] is None:
            raise ValueError(f"Conv2DTranspose {self.name!r} expects inputs (batch, height, "
                             f"width, channels) with known channels, got {tuple(input_shape)}")
        _add_kernel_and_bias(self, self.kernel_size + (self.filters, input_shape[-1]))

    def _out_size(self, size, axis):
        return _transpose_out_size(
            size, self.kernel_size[axis], self.strides[axis], self.padding,
            None if self.output_padding is None else self.output_padding[axis],
            self.dilation_rate[axis])

    def call(self, inputs):
        _, h, w, _ = inputs.shape
        y = conv_transpose.conv2d_nhwc(inputs, self.kernel, (self._out_size(h, 0),
                                                             self._out_size(w, 1)),
                                       self.strides, self.dilation_rate, self.padding.upper())
        return bias_and_activation(self, y)

    def compute_output_shape(self, input_shape):
        n, h, w, _ = input_shape
        return (n, None if h is None else self._out_size(h, 0),
                None if w is None else self._out_size(w, 1), self.filters)

    def get_config(self):
        return {**super().get_config(), "output_padding": self.output_padding}


class Conv1D(Layer):
    """1-D convolution over ``(batch, steps, channels)``; ``kernel`` has shape
    ``(kernel_size, in_channels, filters)``. ``padding`` may also be ``"causal"`` (zeros on the
    left only, so output step t sees inputs up to t)."""
    _cast_integers = True

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Conv1D")
        if groups != 1:
            raise ValueError(f"Conv1D: only groups=1 is supported, got {groups}")
        self.filters = int(filters)
        self.kernel_size = _single(kernel_size, "Conv1D kernel_size")
        self.strides = _single(strides, "Conv1D strides")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same", "causal"):
            raise ValueError(f"Conv1D: padding must be 'valid', 'same' or 'causal', got "
                             f"{padding!r}")
        self.dilation_rate = _single(dilation_rate, "Conv1D dilation_rate")
        set_weight_options(self, activation, use_bias, kernel_initializer, bias_initializer,
                           kernel_regularizer, bias_regularizer, kernel_constraint,
                           bias_constraint)

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(f"Conv1D {self.name!r} expects inputs (batch, steps, channels) "
                             f"with known channels, got {tuple(input_shape)}")
        _add_kernel_and_bias(self, (self.kernel_size, input_shape[-1], self.filters))

    def call(self, inputs):
        x = array_ops.expand_dims(inputs, 1)
        if self.padding == "causal":
            left = (self.kernel_size - 1) * self.dilation_rate
            padding = [[0, 0], [0, 0], [left, 0], [0, 0]]
        else:
            padding = self.padding.upper()
        y = conv_ops.conv2d(x, array_ops.expand_dims(self.kernel, 0), strides=(1, self.strides),
                            padding=padding, dilations=None if self.dilation_rate == 1
                            else (1, self.dilation_rate))
        y = array_ops.squeeze(y, 1)
        return bias_and_activation(self, y)

    def compute_output_shape(self, input_shape):
        n, steps, _ = input_shape
        if self.padding == "causal":
            out = None if steps is None else -(-steps // self.strides)
        else:
            out = _out_size(steps, self.kernel_size, self.strides, self.padding,
                            self.dilation_rate)
        return (n, out, self.filters)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": (self.kernel_size,), "strides": (self.strides,),
                "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": (self.dilation_rate,), "groups": 1,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                **_config.weights(self, "kernel", "bias")}


class _Pooling1D(Layer):
    _passthrough_dtype = True
    _op = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, type(self).__name__)
        self.pool_size = _single(pool_size, f"{type(self).__name__} pool_size")
        self.strides = self.pool_size if strides is None else _single(
            strides, f"{type(self).__name__} strides")
        self.padding = _padding(padding, type(self).__name__)

    def call(self, inputs):
        y = type(self)._op(array_ops.expand_dims(inputs, 1), ksize=(1, self.pool_size),
                           strides=(1, self.strides), padding=self.padding.upper())
        return array_ops.squeeze(y, 1)

    def compute_output_shape(self, input_shape):
        n, steps, c = input_shape
        return (n, _out_size(steps, self.pool_size, self.strides, self.padding), c)

    def get_config(self):
        return {**super().get_config(), "pool_size": (self.pool_size,),
                "strides": (self.strides,), "padding": self.padding,
                "data_format": "channels_last"}


class MaxPooling1D(_Pooling1D):
    """Max over ``pool_size`` steps (stride defaults to the pool size)."""
    _op = staticmethod(conv_ops.max_pool2d)


class AveragePooling1D(_Pooling1D):
    """Mean over ``pool_size`` steps (with 'same' padding, over the real steps only)."""
    _op = staticmethod(conv_ops.avg_pool2d)


class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over the steps: ``(N, steps, C) -> (N, C)``; with a ``(N, steps)`` mask (e.g. from
    ``Embedding(mask_zero=True)``) over the unmasked steps only."""
    _reduce = staticmethod(reduce_ops.reduce_mean)
    _spatial = 1
    supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        from .masking import masked_mean
        if self.data_format == "channels_first":   # (N, C, steps): average the last axis
            out = masked_mean(array_ops.transpose(inputs, (0, 2, 1)), mask, axis=1,
                              keepdims=self.keepdims)
            return array_ops.transpose(out, (0, 2, 1)) if self.keepdims else out
        return masked_mean(inputs, mask, axis=1, keepdims=self.keepdims)

    def compute_mask(self, inputs, mask=None):
        return None


class GlobalMaxPooling1D(_GlobalPooling):
    """Max over the steps: ``(N, steps, C) -> (N, C)``."""
    _reduce = staticmethod(reduce_ops.reduce_max)
    _spatial = 1


MaxPool1D, AvgPool1D = MaxPooling1D, AveragePooling1D
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
Convolution1D, Convolution2D = Conv1D, Conv2D
