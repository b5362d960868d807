"""Projective (affine) image transforms: TF's ``ImageProjectiveTransformV3`` and Keras 3's
``keras.ops.image.affine_transform``.

A transform is 8 numbers ``[a0, a1, a2, b0, b1, b2, c0, c1]`` mapping each *output* pixel
``(x, y)`` to the *input* point ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)`` with
``k = c0 x + c1 y + 1``, which is then sampled with nearest or bilinear interpolation. Points
outside the image are handled by ``fill_mode`` exactly as TF's kernel does:

* ``"constant"``: every pixel read outside the image is ``fill_value`` (bilinear samples near
  the border blend with it);
* ``"reflect"``: ``d c b a | a b c d | d c b a`` (the edge pixel is repeated);
* ``"wrap"``: ``a b c d | a b c d | a b c d``;
* ``"nearest"``: ``a a a a | a b c d | d d d d``.

The sampling is built from registered ops (coordinate arithmetic, then one ``gather`` of the
four bilinear corners with computed indices), so it is differentiable with respect to the
images and replays inside ``minitf.function`` with new transform values each call.
"""
from types import SimpleNamespace

import numpy

from . import backend as B
from . import dtypes
from .errors import InvalidArgumentError
from .ops import array_ops, math_ops
from .ops.convert import convert_to_tensor
from .tensor import Tensor

__all__ = ["affine_transform", "image_projective_transform_v3", "raw_ops"]

_FILL_MODES = ("constant", "reflect", "wrap", "nearest")
_INTERPOLATIONS = ("nearest", "bilinear")


def _const(value, dtype):
    return Tensor(B.xp.asarray(value, dtype=dtype))


def _floor(x):
    return math_ops.floor(x)


def _map_reflect(coord, size):
    """TF's FILL_REFLECT coordinate map: ``d c b a | a b c d | d c b a``."""
    if size <= 1:
        return coord * 0.0
    period = 2.0 * size
    # below 0: shift into (-period, 0], then mirror
    below = coord + period * _floor(-coord / period)
    below = math_ops.where(math_ops.less(below, -float(size)), below + period, -below - 1.0)
    # above size - 1: shift into [0, period), then mirror the upper half
    above = coord - period * _floor(coord / period)
    above = math_ops.where(math_ops.greater_equal(above, float(size)), period - above - 1.0,
                           above)
    inside = math_ops.where(math_ops.greater(coord, size - 1.0), above, coord)
    return math_ops.where(math_ops.less(coord, 0.0), below, inside)


def _map_wrap(coord, size):
    """TF's FILL_WRAP coordinate map: ``a b c d | a b c d | a b c d``."""
    if size <= 1:
        return coord * 0.0
    span = size - 1.0
    below = coord + float(size) * (_floor(-coord / span) + 1.0)
    above = coord - float(size) * _floor(coord / span)
    inside = math_ops.where(math_ops.greater(coord, span), above, coord)
    return math_ops.where(math_ops.less(coord, 0.0), below, inside)


def _map_coordinate(coord, size, fill_mode):
    """Bring out-of-image coordinates back in as ``fill_mode`` says (TF clamps the result to
    ``[0, size - 1]`` for every mode except ``"constant"``)."""
    if fill_mode == "constant":
        return coord
    if fill_mode == "reflect":
        coord = _map_reflect(coord, size)
    elif fill_mode == "wrap":
        coord = _map_wrap(coord, size)
    return math_ops.minimum(math_ops.maximum(coord, 0.0), size - 1.0)


def _round_half_away(x):
    """``std::round``: halves away from zero (TF's nearest-neighbour sampling)."""
    return math_ops.sign(x) * _floor(math_ops.abs(x) + 0.5)


def _as_transforms(transforms, batch, what):
    t = transforms if isinstance(transforms, Tensor) else convert_to_tensor(transforms)
    if t.dtype != dtypes.float32:
        t = math_ops.cast(t, dtypes.float32)
    if t.ndim == 1:
        t = array_ops.reshape(t, (1, -1))
    if t.ndim != 2 or t.shape[1] != 8 or t.shape[0] not in (1, batch):
        raise InvalidArgumentError(
            f"{what}: transforms must have shape (8,), (1, 8) or (batch, 8) = ({batch}, 8), "
            f"got {tuple(t.shape)}")
    return t


def _transform(images, transforms, output_shape, interpolation, fill_mode, fill_value, what):
    """The sampling shared by the public functions; ``images`` is a 4-D Tensor."""
    if interpolation not in _INTERPOLATIONS:
        raise InvalidArgumentError(f"{what}: interpolation must be one of {_INTERPOLATIONS}, "
                                   f"got {interpolation!r}")
    if fill_mode not in _FILL_MODES:
        raise InvalidArgumentError(f"{what}: fill_mode must be one of {_FILL_MODES}, got "
                                   f"{fill_mode!r}")
    batch, height, width, channels = (int(d) for d in images.shape)
    out_h, out_w = (int(d) for d in output_shape)
    if out_h <= 0 or out_w <= 0:
        raise InvalidArgumentError(f"{what}: output_shape must be two positive integers, got "
                                   f"{tuple(output_shape)}")
    t = _as_transforms(transforms, batch, what)
    source_dtype = images.dtype
    compute = dtypes.float64 if source_dtype == dtypes.float64 else dtypes.float32
    x = images if source_dtype == compute else math_ops.cast(images, compute)
    fill = fill_value if isinstance(fill_value, Tensor) else convert_to_tensor(fill_value)
    fill = math_ops.cast(fill, source_dtype)  # TF casts fill_value to the image dtype first
    fill = math_ops.cast(fill, compute)

    ys, xs = numpy.meshgrid(numpy.arange(out_h, dtype=numpy.float32),
                            numpy.arange(out_w, dtype=numpy.float32), indexing="ij")
    out_x, out_y = _const(xs[None], numpy.float32), _const(ys[None], numpy.float32)

    def coef(i):
        return array_ops.reshape(t[:, i], (-1, 1, 1))

    projection = coef(6) * out_x + coef(7) * out_y + 1.0
    degenerate = math_ops.equal(projection, 0.0)
    safe = math_ops.where(degenerate, _const(1.0, numpy.float32), projection)
    in_x = (coef(0) * out_x + coef(1) * out_y + coef(2)) / safe
    in_y = (coef(3) * out_x + coef(4) * out_y + coef(5)) / safe
    in_x = _map_coordinate(in_x, width, fill_mode)
    in_y = _map_coordinate(in_y, height, fill_mode)
    # (1, H', W') projections broadcast against (N, H', W') batch offsets
    n_offset = _const((numpy.arange(batch) * (height * width)).reshape(-1, 1, 1), numpy.int32)
    flat = array_ops.reshape(x, (batch * height * width, channels))

    def corners_index(cy, cx):
        inside = math_ops.logical_and(
            math_ops.logical_and(math_ops.greater_equal(cy, 0.0), math_ops.less(cy, height)),
            math_ops.logical_and(math_ops.greater_equal(cx, 0.0), math_ops.less(cx, width)))
        row = math_ops.cast(math_ops.minimum(math_ops.maximum(cy, 0.0), height - 1.0),
                            dtypes.int32)
        col = math_ops.cast(math_ops.minimum(math_ops.maximum(cx, 0.0), width - 1.0),
                            dtypes.int32)
        return n_offset + row * width + col, inside

    def read(index, inside):
        values = array_ops.gather(flat, index, axis=0)
        mask = array_ops.expand_dims(inside, -1)
        return math_ops.where(mask, values, fill)

    if interpolation == "nearest":
        index, inside = corners_index(_round_half_away(in_y), _round_half_away(in_x))
        out = read(index, inside)
    else:
        y0, x0 = _floor(in_y), _floor(in_x)
        y1, x1 = y0 + 1.0, x0 + 1.0
        pairs = [corners_index(cy, cx) for cy, cx in ((y0, x0), (y0, x1), (y1, x0), (y1, x1))]
        index = array_ops.stack([p[0] for p in pairs], axis=0)
        inside = array_ops.stack([p[1] for p in pairs], axis=0)
        corners = read(index, inside)       # (4, N, H', W', C), one gather for all corners

        def weight(w):
            w = array_ops.expand_dims(w, -1)
            return w if compute == dtypes.float32 else math_ops.cast(w, compute)

        wx1, wx0 = weight(x1 - in_x), weight(in_x - x0)
        top = wx1 * corners[0] + wx0 * corners[1]
        bottom = wx1 * corners[2] + wx0 * corners[3]
        out = weight(y1 - in_y) * top + weight(in_y - y0) * bottom
    out = math_ops.where(array_ops.expand_dims(degenerate, -1), fill, out)
    return out if source_dtype == compute else math_ops.cast(out, source_dtype)


def _image4(images, what):
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.ndim not in (3, 4):
        raise InvalidArgumentError(f"{what}: images must have rank 3 (height, width, channels) "
                                   f"or 4 (batch, height, width, channels), got shape "
                                   f"{tuple(x.shape)}")
    return x


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant",
                     fill_value=0, data_format=None):
    """Apply projective transforms (Keras 3's ``keras.ops.image.affine_transform``).

    ``images``: ``(N, H, W, C)`` or one ``(H, W, C)`` image (``"channels_first"``:
    ``(N, C, H, W)`` / ``(C, H, W)``); ``transform``: ``(8,)`` or ``(N, 8)``, see the module
    docstring. The output has the images' shape and dtype."""
    what = "affine_transform"
    x = _image4(images, what)
    channels_first = data_format == "channels_first"
    if data_format not in (None, "channels_last", "channels_first"):
        raise ValueError(f"{what}: data_format must be 'channels_last' or 'channels_first', "
                         f"got {data_format!r}")
    single = x.ndim == 3
    if single:
        x = array_ops.expand_dims(x, 0)
    if channels_first:
        x = array_ops.transpose(x, [0, 2, 3, 1])
    out = _transform(x, transform, x.shape[1:3], str(interpolation).lower(),
                     str(fill_mode).lower(), fill_value, what)
    if channels_first:
        out = array_ops.transpose(out, [0, 3, 1, 2])
    return out[0] if single else out


def image_projective_transform_v3(images, transforms, output_shape, fill_value,
                                  interpolation, fill_mode="CONSTANT", name=None):
    """``tf.raw_ops.ImageProjectiveTransformV3``: ``images`` ``(N, H, W, C)``, ``transforms``
    ``(1, 8)`` or ``(N, 8)``, ``output_shape`` ``(new_height, new_width)``, ``interpolation``
    ``"NEAREST"``/``"BILINEAR"``, ``fill_mode`` ``"CONSTANT"``/``"REFLECT"``/``"WRAP"``/
    ``"NEAREST"``."""
    what = "ImageProjectiveTransformV3"
    x = _image4(images, what)
    if x.ndim != 4:
        raise InvalidArgumentError(f"{what}: images must be 4-D (batch, height, width, "
                                   f"channels), got shape {tuple(x.shape)}")
    if isinstance(output_shape, Tensor):
        output_shape = B.to_numpy(output_shape._value).tolist()
    output_shape = [int(s) for s in output_shape]
    if len(output_shape) != 2:
        raise InvalidArgumentError(f"{what}: output_shape must hold 2 values (height, width), "
                                   f"got {output_shape}")
    return _transform(x, transforms, output_shape, str(interpolation).lower(),
                      str(fill_mode).lower(), fill_value, what)


def _raw_projective_transform(*, images, transforms, output_shape, fill_value, interpolation,
                              fill_mode="CONSTANT", name=None):
    return image_projective_transform_v3(images, transforms, output_shape, fill_value,
                                         interpolation, fill_mode)


#: ``tf.raw_ops`` entries defined here (raw ops take keyword arguments only, as in TF).
raw_ops = SimpleNamespace(ImageProjectiveTransformV3=_raw_projective_transform)
