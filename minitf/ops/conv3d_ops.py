"""3-D convolution and pooling (NDHWC) and the 1-D and 3-D transposed convolutions, built from
the 2-D ops of ``conv_ops`` (so they differentiate, trace and run on every backend).

``conv3d`` folds the output depth into the batch: for each kernel depth offset, the input's
depth slices that offset reads (a strided slice) go through one 2-D convolution with that
offset's filters, and the offsets' results are summed (``KD`` 2-D convolutions in all). Pools
reduce height and width with the 2-D pools, then the depth with strided slices. Transposed
convolutions are the stride-1 convolution of the zero-interleaved input with the flipped
kernel, which is the gradient of the forward convolution with respect to its input.
"""
import numpy

from .. import backend as B
from ..tensor import Tensor
from . import array_ops, conv_ops, conv_transpose
from .convert import convert_to_tensor, operand_pair
from .math_ops import add_n
from .registry import InvalidArgumentError


def _t(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


# --- argument parsing (TF's forms) ---------------------------------------------------------------

def _triple(value, what, data_format="NDHWC"):
    """An int, or a list of 1, 3 or 5 ints (5: one per dimension of ``data_format``, 1 for the
    batch and channels)."""
    if isinstance(value, (int, numpy.integer)):
        return (int(value),) * 3
    value = [int(v) for v in value]
    if len(value) == 1:
        return (value[0],) * 3
    if len(value) == 3:
        return tuple(value)
    if len(value) == 5:
        spatial = (1, 2, 3) if data_format == "NDHWC" else (2, 3, 4)
        if any(v != 1 for i, v in enumerate(value) if i not in spatial):
            raise InvalidArgumentError(f"{what} {value}: the batch and channel entries must be 1")
        return tuple(value[i] for i in spatial)
    raise InvalidArgumentError(f"{what} must be an int or a list of 1, 3 or 5 ints, got {value}")


def _mode(padding, what):
    mode = str(padding).upper() if isinstance(padding, str) else None
    if mode not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"{what}: padding must be 'SAME' or 'VALID', got {padding!r}")
    return mode


def _pads(mode, size, k, s, d=1):
    """(before, after) padding of one axis: TF's SAME split puts the odd one at the end."""
    if mode == "VALID":
        return (0, 0)
    total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
    return (total // 2, total - total // 2)


def _out_size(size, k, s, d, pads):
    return (size + pads[0] + pads[1] - (k - 1) * d - 1) // s + 1


def _to_ndhwc(x, data_format, what):
    if data_format not in ("NDHWC", "NCDHW"):
        raise InvalidArgumentError(f"{what}: data_format must be 'NDHWC' or 'NCDHW', got "
                                   f"{data_format!r}")
    if x.ndim != 5:
        raise InvalidArgumentError(f"{what}: input must be 5-D ({data_format}), got shape "
                                   f"{tuple(x.shape)}")
    return x if data_format == "NDHWC" else array_ops.transpose(x, (0, 2, 3, 4, 1))


def _from_ndhwc(y, data_format):
    return y if data_format == "NDHWC" else array_ops.transpose(y, (0, 4, 1, 2, 3))


def _depth_slice(x, start, stride, count):
    """``x[:, start::stride]`` limited to ``count`` depth slices."""
    return x[:, start:start + stride * (count - 1) + 1:stride]


# --- convolution ---------------------------------------------------------------------------------

def _conv3d_valid(x, w, strides, dilations):
    """Valid cross-correlation of (N, D, H, W, C) with (KD, KH, KW, C, O), already padded."""
    n, d, h, wd, c = x._value.shape
    kd, kh, kw, _, o = w._value.shape
    (sd, sh, sw), (dd, dh, dw) = strides, dilations
    od = (d - (kd - 1) * dd - 1) // sd + 1
    oh, ow = (h - (kh - 1) * dh - 1) // sh + 1, (wd - (kw - 1) * dw - 1) // sw + 1
    if min(od, oh, ow) <= 0:
        raise InvalidArgumentError(
            f"conv3d: a {kd}x{kh}x{kw} filter (dilations {dd}x{dh}x{dw}) does not fit in the "
            f"{d}x{h}x{wd} (padded) input")
    terms = []
    for a in range(kd):
        part = array_ops.reshape(_depth_slice(x, a * dd, sd, od), (n * od, h, wd, c))
        terms.append(conv_ops.conv2d(part, w[a], strides=(sh, sw), padding="VALID",
                                     dilations=(dh, dw)))
    y = terms[0] if kd == 1 else add_n(terms)
    return array_ops.reshape(y, (n, od, oh, ow, o))


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None,  # noqa: A002
           name=None):
    """3-D convolution (cross-correlation, as TF): ``input`` (N, D, H, W, C), ``filters``
    (KD, KH, KW, C, O) -> (N, OD, OH, OW, O).

    ``strides``/``dilations``: an int or 1, 3 or 5 ints; ``padding``: ``"SAME"`` or
    ``"VALID"``.
    """
    x, w = operand_pair("conv3d", input, filters)
    x = _to_ndhwc(x, data_format, "conv3d")
    if w.ndim != 5 or w._value.shape[3] != x._value.shape[4]:
        raise InvalidArgumentError(
            f"conv3d: filters must be (KD, KH, KW, C, O) with C = {x._value.shape[4]} input "
            f"channels, got shape {tuple(w.shape)} for input {tuple(x.shape)}")
    stride = _triple(strides, "conv3d: strides", data_format)
    dilation = _triple(1 if dilations is None else dilations, "conv3d: dilations", data_format)
    if min(stride) < 1 or min(dilation) < 1:
        raise InvalidArgumentError(f"conv3d: strides {stride} and dilations {dilation} must be "
                                   f">= 1")
    if max(stride) > 1 and max(dilation) > 1:
        raise InvalidArgumentError(f"conv3d: strides {stride} and dilations {dilation} cannot "
                                   f"both be greater than 1 (TF's rule)")
    mode = _mode(padding, "conv3d")
    pads = [_pads(mode, n, k, s, d) for n, k, s, d in
            zip(x._value.shape[1:4], w._value.shape[:3], stride, dilation)]
    if any(p != (0, 0) for p in pads):
        x = array_ops.pad(x, [(0, 0)] + pads + [(0, 0)])
    return _from_ndhwc(_conv3d_valid(x, w, stride, dilation), data_format)


# --- transposed convolutions ---------------------------------------------------------------------

def _output_shape(output_shape, rank, what):
    values = output_shape.numpy() if isinstance(output_shape, Tensor) else output_shape
    out = [int(v) for v in values]
    if len(out) != rank:
        raise InvalidArgumentError(f"{what}: output_shape must have {rank} entries, got {out}")
    return out


def _conv_transpose_ndhwc(x, w, out_sizes, strides, dilations, mode, what):
    """``x`` (N, D, H, W, C_in), ``w`` (KD, KH, KW, C_out, C_in) -> (N, *out_sizes, C_out)."""
    kernel_sizes = w._value.shape[:3]
    for o, i, k, s, d in zip(out_sizes, x._value.shape[1:4], kernel_sizes, strides, dilations):
        conv_transpose.check_size(o, i, k, s, d, mode, what)
    x = conv_transpose.prepare(x, out_sizes, kernel_sizes, strides, dilations, mode)
    kernel = array_ops.transpose(w[::-1, ::-1, ::-1], (0, 1, 2, 4, 3))
    return _conv3d_valid(x, kernel, (1, 1, 1), dilations)


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NDHWC", dilations=None, name=None):
    """The gradient of ``conv3d`` with respect to its input: ``input`` (N, D, H, W, C_in),
    ``filters`` (KD, KH, KW, C_out, C_in), ``output_shape`` (N, OD, OH, OW, C_out)."""
    x, w = operand_pair("conv3d_transpose", input, filters)
    x = _to_ndhwc(x, data_format, "conv3d_transpose")
    out = _output_shape(output_shape, 5, "conv3d_transpose")
    if data_format == "NCDHW":
        out = [out[0], out[2], out[3], out[4], out[1]]
    if w.ndim != 5 or w._value.shape[4] != x._value.shape[4] or w._value.shape[3] != out[4] \
            or out[0] != x._value.shape[0]:
        raise InvalidArgumentError(
            f"conv3d_transpose: input (N, D, H, W, C_in) {tuple(x.shape)}, filters "
            f"(KD, KH, KW, C_out, C_in) {tuple(w.shape)} and output_shape {out} do not fit "
            f"together")
    stride = _triple(strides, "conv3d_transpose: strides", data_format)
    dilation = _triple(1 if dilations is None else dilations, "conv3d_transpose: dilations",
                       data_format)
    mode = _mode(padding, "conv3d_transpose")
    y = _conv_transpose_ndhwc(x, w, out[1:4], stride, dilation, mode, "conv3d_transpose")
    return _from_ndhwc(y, data_format)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None):
    """The gradient of ``conv1d`` with respect to its input: ``input`` (N, W, C_in),
    ``filters`` (K, C_out, C_in), ``output_shape`` (N, OW, C_out)."""
    if data_format not in ("NWC", "NCW"):
        raise InvalidArgumentError(f"conv1d_transpose: data_format must be 'NWC' or 'NCW', got "
                                   f"{data_format!r}")
    x, w = operand_pair("conv1d_transpose", input, filters)
    if x.ndim != 3 or w.ndim != 3:
        raise InvalidArgumentError(
            f"conv1d_transpose: input must be 3-D ({data_format}) and filters (K, C_out, C_in), "
            f"got shapes {tuple(x.shape)} and {tuple(w.shape)}")
    out = _output_shape(output_shape, 3, "conv1d_transpose")
    if data_format == "NCW":
        x = array_ops.transpose(x, (0, 2, 1))
        out = [out[0], out[2], out[1]]
    n, width, c_in = x._value.shape
    if w._value.shape[2] != c_in or w._value.shape[1] != out[2] or out[0] != n:
        raise InvalidArgumentError(
            f"conv1d_transpose: input (N, W, C_in) {(n, width, c_in)}, filters "
            f"(K, C_out, C_in) {tuple(w.shape)} and output_shape {out} do not fit together")
    stride = conv_ops._single(strides, "conv1d_transpose: strides")
    dilation = 1 if dilations is None else conv_ops._single(dilations,
                                                             "conv1d_transpose: dilations")
    mode = _mode(padding, "conv1d_transpose")
    x5 = array_ops.reshape(x, (n, 1, 1, width, c_in))
    w5 = array_ops.reshape(w, (1, 1) + tuple(w._value.shape))
    y = _conv_transpose_ndhwc(x5, w5, (1, 1, out[1]), (1, 1, stride), (1, 1, dilation), mode,
                              "conv1d_transpose")
    y = array_ops.reshape(y, (n, out[1], out[2]))
    return y if data_format == "NWC" else array_ops.transpose(y, (0, 2, 1))


# --- pooling -------------------------------------------------------------------------------------

def _pool_args(input, ksize, strides, padding, data_format, what):
    x = _to_ndhwc(_t(input), data_format, what)
    k = _triple(ksize, f"{what}: ksize", data_format)
    s = _triple(strides, f"{what}: strides", data_format)
    if min(k) < 1 or min(s) < 1:
        raise InvalidArgumentError(f"{what}: ksize {k} and strides {s} must be >= 1")
    mode = _mode(padding, what)
    sizes = x._value.shape[1:4]
    pads = [_pads(mode, n, kk, ss) for n, kk, ss in zip(sizes, k, s)]
    if any(_out_size(n, kk, ss, 1, p) <= 0 for n, kk, ss, p in zip(sizes, k, s, pads)):
        raise InvalidArgumentError(f"{what}: a {k[0]}x{k[1]}x{k[2]} window does not fit in the "
                                   f"input of shape {tuple(x.shape)} with {mode} padding")
    return x, k, s, mode, pads[0]


def _pool_hw(x, pool2d, k, s, mode):
    """The 2-D pool of every depth slice: (N, D, H, W, C) -> (N, D, OH, OW, C)."""
    n, d, h, w, c = x._value.shape
    y = pool2d(array_ops.reshape(x, (n * d, h, w, c)), ksize=k[1:], strides=s[1:],
               padding=mode)
    return array_ops.reshape(y, (n, d) + tuple(y._value.shape[1:]))


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """Max over ``ksize`` windows of ``input`` (N, D, H, W, C); padding never wins a window.

    On ties the gradient goes to the first maximum of the window in (depth, height, width)
    order.
    """
    x, k, s, mode, depth_pads = _pool_args(input, ksize, strides, padding, data_format,
                                           "max_pool3d")
    y = _pool_hw(x, conv_ops.max_pool2d, k, s, mode)
    if k[0] > 1 or s[0] > 1:
        if depth_pads != (0, 0):
            y = array_ops.pad(y, [(0, 0), depth_pads, (0, 0), (0, 0), (0, 0)],
                              constant_values=conv_ops._lowest(numpy.dtype(y._value.dtype)))
        od = (y._value.shape[1] - k[0]) // s[0] + 1
        slices = [_depth_slice(y, a, s[0], od) for a in range(k[0])]
        if k[0] == 1:
            y = slices[0]
        else:
            # (N, OD, OH, OW, KD, 1, C): a window of KD x 1 for window_max's first-max rule.
            stacked = array_ops.expand_dims(array_ops.stack(slices, axis=-2), -2)
            y = conv_ops.window_max(stacked)
    return _from_ndhwc(y, data_format)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """Mean over ``ksize`` windows of ``input`` (N, D, H, W, C).

    With SAME padding each window is divided by its number of real (non-padded) elements, as
    TF.
    """
    x, k, s, mode, depth_pads = _pool_args(input, ksize, strides, padding, data_format,
                                           "avg_pool3d")
    # Every depth slice has the same count of real pixels per (h, w) window, so the mean over
    # a 3-D window is the depth mean of the per-slice 2-D means.
    y = _pool_hw(x, conv_ops.avg_pool2d, k, s, mode)
    if k[0] > 1 or s[0] > 1:
        depth = y._value.shape[1]
        if depth_pads != (0, 0):
            y = array_ops.pad(y, [(0, 0), depth_pads, (0, 0), (0, 0), (0, 0)])
        od = (y._value.shape[1] - k[0]) // s[0] + 1
        slices = [_depth_slice(y, a, s[0], od) for a in range(k[0])]
        total = slices[0] if k[0] == 1 else add_n(slices)
        real = numpy.pad(numpy.ones(depth), depth_pads)
        counts = sum(real[a:a + s[0] * (od - 1) + 1:s[0]] for a in range(k[0]))
        scale = B.xp.asarray((1.0 / counts).reshape(od, 1, 1, 1), dtype=y._value.dtype)
        y = total * Tensor(scale)
    return _from_ndhwc(y, data_format)


__all__ = ["conv3d", "conv3d_transpose", "conv1d_transpose", "max_pool3d", "avg_pool3d"]
