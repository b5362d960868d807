"""Transposed convolutions as stride-1 convolutions: the input with ``s - 1`` zeros between
neighbouring elements, padded (or cropped) to the window TF's ``conv*_transpose`` keeps for the
requested output size, against the flipped kernel. Shared by ``tf.nn.conv1d/2d/3d_transpose``
and the Keras transposed-convolution layers."""
from . import array_ops
from .registry import InvalidArgumentError


def window(out_size, in_size, k, s, d, mode):
    """(before, after) amounts to pad (negative: crop) the zero-interleaved input of
    ``in_size`` so that a stride-1 convolution with the dilated kernel gives ``out_size``. The
    rows skipped at the start are TF's SAME split of the forward convolution."""
    span = (k - 1) * d + 1
    skipped = max((in_size - 1) * s + span - out_size, 0) // 2 if mode == "SAME" else 0
    before = span - 1 - skipped
    return before, out_size + span - 1 - ((in_size - 1) * s + 1) - before


def check_size(out_size, in_size, k, s, d, mode, what):
    """The forward convolution must map ``out_size`` back to ``in_size`` (TF's check)."""
    span = (k - 1) * d + 1
    expected = -(-out_size // s) if mode == "SAME" else (out_size - span) // s + 1
    if expected != in_size:
        raise InvalidArgumentError(
            f"{what}: an output size of {out_size} with kernel {k}, stride {s}, dilation {d} "
            f"and {mode} padding comes from inputs of size {expected}, not {in_size}")


def interleave_zeros(x, strides):
    """Put ``s - 1`` zeros between neighbouring elements along each spatial axis of ``x``
    (batch, *spatial, channels)."""
    if all(s == 1 for s in strides):
        return x
    n, *sizes, c = x._value.shape
    spread = [(0, 0)]
    expanded = [n]
    for size, s in zip(sizes, strides):
        expanded += [size, 1]
        spread += [(0, 0), (0, s - 1)]
    y = array_ops.pad(array_ops.reshape(x, tuple(expanded) + (c,)), spread + [(0, 0)])
    y = array_ops.reshape(y, (n,) + tuple(size * s for size, s in zip(sizes, strides)) + (c,))
    return y[(slice(None),) + tuple(slice(0, (size - 1) * s + 1)
                                    for size, s in zip(sizes, strides))]


def pad_or_crop(x, pairs):
    """Pad ``x``'s axes 1..len(pairs) by (before, after); negative amounts crop."""
    if any(min(p) < 0 for p in pairs):
        key = [slice(None)] + [slice(max(-a, 0), (x._value.shape[i + 1] - max(-b, 0)))
                               for i, (a, b) in enumerate(pairs)]
        x = x[tuple(key)]
    positive = [(max(a, 0), max(b, 0)) for a, b in pairs]
    if any(p != (0, 0) for p in positive):
        x = array_ops.pad(x, [(0, 0)] + positive + [(0, 0)])
    return x


def prepare(x, out_sizes, kernel_sizes, strides, dilations, mode):
    """``x`` (batch, *spatial, channels) interleaved and padded for the stride-1 convolution
    that makes ``out_sizes``."""
    pairs = [window(o, i, k, s, d, mode) for o, i, k, s, d in
             zip(out_sizes, x._value.shape[1:-1], kernel_sizes, strides, dilations)]
    return pad_or_crop(interleave_zeros(x, strides), pairs)


def conv2d_nhwc(x, w, out_hw, strides, dilations, mode):
    """``x`` (N, H, W, C_in), ``w`` (KH, KW, C_out, C_in) -> (N, *out_hw, C_out)."""
    from . import conv_ops
    x = prepare(x, out_hw, w._value.shape[:2], strides, dilations, mode)
    kernel = array_ops.transpose(w[::-1, ::-1], (0, 1, 3, 2))
    return conv_ops.conv2d(x, kernel, strides=1, padding="VALID",
                           dilations=None if tuple(dilations) == (1, 1) else tuple(dilations))
