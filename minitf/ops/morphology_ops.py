"""Grayscale morphology: ``tf.nn.dilation2d`` and ``tf.nn.erosion2d``.

The dilation is the maximum over each window of the input plus the structuring function
(``filters``), computed from the padded input's sliding windows (``extract_patches``) and the
window maximum (``window_max``), so the gradients are those ops': on ties the whole gradient
goes to the first maximum of the window in row-major order, as TF's Dilation2D gradients do.
The erosion is TF's composition ``-dilation2d(-value, reverse(filters, [0, 1]))``.
"""
import numpy

from . import conv_ops
from .convert import operand_pair
from .registry import InvalidArgumentError


def _spatial(value, what):
    """``[1, a, b, 1]`` (TF's form) or 2 ints -> (a, b)."""
    if isinstance(value, (int, numpy.integer)):
        return int(value), int(value)
    values = [int(v) for v in value]
    if len(values) == 4 and values[0] == values[3] == 1:
        return values[1], values[2]
    if len(values) == 2:
        return tuple(values)
    raise InvalidArgumentError(f"{what} must be 4 ints [1, h, w, 1] (or 2 ints), got {value!r}")


def dilation2d(input, filters, strides, padding, data_format="NHWC",  # noqa: A002 - TF's name
               dilations=None, name=None):
    """Grayscale dilation of ``input`` (N, H, W, C) by ``filters`` (KH, KW, C):
    ``out[n, y, x, c] = max_{dy, dx} input[n, y*sh + dy*rh, x*sw + dx*rw, c] + filters[dy, dx,
    c]`` over the positions inside the (padded) image. ``strides`` and ``dilations`` are
    ``[1, h, w, 1]``; ``padding`` is ``"SAME"`` or ``"VALID"``."""
    if data_format != "NHWC":
        raise InvalidArgumentError(f"dilation2d: data_format must be 'NHWC', got {data_format!r}")
    x, w = operand_pair("dilation2d", input, filters)
    if x.ndim != 4 or w.ndim != 3 or w._value.shape[2] != x._value.shape[3]:
        raise InvalidArgumentError(
            f"dilation2d: input must be (N, H, W, C) and filters (KH, KW, C) with the same C, "
            f"got shapes {tuple(x.shape)} and {tuple(w.shape)}")
    mode = str(padding).upper() if isinstance(padding, str) else None
    if mode not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"dilation2d: padding must be 'SAME' or 'VALID', got "
                                   f"{padding!r}")
    stride = _spatial(strides, "dilation2d: strides")
    rate = _spatial(1 if dilations is None else dilations, "dilation2d: dilations")
    if min(stride) < 1 or min(rate) < 1:
        raise InvalidArgumentError(f"dilation2d: strides {stride} and dilations {rate} must be "
                                   f">= 1")
    ksize = tuple(w._value.shape[:2])
    pads = conv_ops._paddings(mode, x._value.shape[1:3], ksize, stride, rate)
    # Padding never wins a window: the lowest value stands for TF's skipped positions.
    lowest = conv_ops._lowest(numpy.dtype(x._value.dtype))
    try:
        patches = conv_ops.extract_patches(conv_ops._pad_hw(x, pads, lowest), ksize=ksize,
                                           strides=stride, dilations=rate)
    except ValueError as exc:
        raise InvalidArgumentError(f"dilation2d: input shape {tuple(x.shape)}, filters "
                                   f"{tuple(w.shape)}, padding {padding!r}: {exc}") from None
    return conv_ops.window_max(patches + w)


def erosion2d(value, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """Grayscale erosion: ``-dilation2d(-value, reverse(filters, [0, 1]))`` (TF's
    definition): ``out = min_{dy, dx} value[.., y*sh + dy*rh, x*sw + dx*rw, ..] - filters[dy,
    dx, c]``."""
    x, w = operand_pair("erosion2d", value, filters)
    if w.ndim != 3:
        raise InvalidArgumentError(f"erosion2d: filters must be (KH, KW, C), got shape "
                                   f"{tuple(w.shape)}")
    return -dilation2d(-x, w[::-1, ::-1], strides, padding, data_format, dilations)


def install(tf):
    """Set ``tf.nn.dilation2d`` and ``tf.nn.erosion2d``."""
    tf.nn.dilation2d = dilation2d
    tf.nn.erosion2d = erosion2d


__all__ = ["dilation2d", "erosion2d"]
