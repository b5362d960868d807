"""Depthwise and depthwise-separable 2-D convolutions (``tf.nn.depthwise_conv2d``,
``tf.nn.separable_conv2d``).

A depthwise convolution filters each input channel on its own with ``M`` filters; output
channel ``c * M + m`` is input channel ``c`` convolved with filter ``m`` (TF's and Keras'
order). It is computed from the sliding windows of the input (``extract_patches``,
``(N, OH, OW, KH, KW, C)``) contracted with the kernel by one einsum, so its gradients (of any
order) are those of these two differentiable ops.
"""
from . import array_ops, conv_ops
from .conv_ops import _from_nhwc, _pad_hw, _pair, _paddings, _to_nhwc
from .convert import operand_pair
from .einsum_ops import einsum
from .registry import InvalidArgumentError


def depthwise_conv2d(input, filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """Depthwise 2-D convolution: ``input`` (N, H, W, C), ``filter`` (KH, KW, C, M) ->
    (N, OH, OW, C * M), channel ``c * M + m`` being channel ``c`` filtered by ``filter[..., c,
    m]`` (cross-correlation, as TF). ``strides``/``dilations``: an int or 1, 2 or 4 ints;
    ``padding``: ``"SAME"``, ``"VALID"`` or explicit pairs."""
    data_format = data_format or "NHWC"
    x, w = operand_pair("depthwise_conv2d", input, filter)
    x = _to_nhwc(x, data_format, "depthwise_conv2d")
    channels = x._value.shape[3]
    if w.ndim != 4 or w._value.shape[2] != channels:
        raise InvalidArgumentError(
            f"depthwise_conv2d: filter must be (KH, KW, C, M) with C = {channels} input "
            f"channels, got shape {tuple(w.shape)} for input {tuple(x.shape)}")
    kh, kw, _, mult = w._value.shape
    stride = _pair(strides, "depthwise_conv2d: strides", data_format)
    dilation = _pair(1 if dilations is None else dilations, "depthwise_conv2d: dilations",
                     data_format)
    pads = _paddings(padding, x._value.shape[1:3], (kh, kw), stride, dilation, data_format)
    try:
        patches = conv_ops.extract_patches(_pad_hw(x, pads), ksize=(kh, kw), strides=stride,
                                           dilations=dilation)
    except ValueError as exc:
        raise InvalidArgumentError(
            f"depthwise_conv2d: input shape {tuple(x.shape)}, filter {tuple(w.shape)}, "
            f"padding {padding!r}: {exc}") from None
    if mult == 1:
        out = einsum("nhwijc,ijc->nhwc", patches, array_ops.reshape(w, (kh, kw, channels)))
    else:
        out = einsum("nhwijc,ijcm->nhwcm", patches, w)
        n, oh, ow = out._value.shape[:3]
        out = array_ops.reshape(out, (n, oh, ow, channels * mult))
    return _from_nhwc(out, data_format)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     data_format=None, dilations=None, name=None):
    """A depthwise convolution (``depthwise_filter`` (KH, KW, C, M)) followed by a 1x1
    convolution mixing the ``C * M`` channels (``pointwise_filter`` (1, 1, C * M, O))."""
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations)
    return conv_ops.conv2d(y, pointwise_filter, strides=1, padding="VALID",
                           data_format=data_format or "NHWC")


__all__ = ["depthwise_conv2d", "separable_conv2d"]
