"""``tf.image`` colour spaces, hue and saturation, Sobel edges, SSIM and ``resize_with_pad``.

Everything is composed from registered minitf ops, so gradients flow through every function
(TF itself has gradients for ``rgb_to_hsv`` and the YIQ/YUV products, but none for
``hsv_to_rgb``, ``adjust_hue`` or ``adjust_saturation``). The HSV formulas are those of TF's
kernels, including their handling of grey pixels and of hues outside ``[0, 1]``.
"""
import math as _math

import numpy

from . import backend as B
from . import dtypes
from .image_ops import convert_image_dtype, pad_to_bounding_box, resize
from .ops import array_ops, linalg_ops, math_ops, random_ops, reduce_ops
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .tensor import Tensor

__all__ = ["rgb_to_hsv", "hsv_to_rgb", "rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb",
           "adjust_hue", "adjust_saturation", "random_hue", "random_saturation", "sobel_edges",
           "ssim", "ssim_multiscale", "resize_with_pad"]

# TF's matrices (image_ops_impl.py): ``pixel @ kernel`` converts one pixel.
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]
_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _tensor(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def _three_channels(images, what, need_float=True):
    x = _tensor(images)
    if x.ndim < 1 or x.shape[-1] != 3:
        raise InvalidArgumentError(f"tf.image.{what}: images must have 3 channels in the last "
                                   f"dimension, got shape {tuple(x.shape)}", op=what)
    if need_float and not x.dtype.is_floating:
        raise TypeError(f"tf.image.{what}: images must be a floating-point tensor (float16, "
                        f"float32 or float64), got {x.dtype.name}")
    return x


def _hsv_input(images, what):
    """TF's HSV ops cast integer images to float32 without rescaling."""
    x = _three_channels(images, what, need_float=False)
    return x if x.dtype.is_floating else math_ops.cast(x, dtypes.float32)


def _channels(x):
    return x[..., 0], x[..., 1], x[..., 2]


def _scalar_like(value, x):
    return math_ops.cast(_tensor(value), x.dtype)


# --- colour spaces -------------------------------------------------------------------------

def rgb_to_hsv(images, name=None):
    """RGB in [0, 1] to hue, saturation, value in [0, 1] (grey pixels get hue and saturation
    0, black pixels saturation 0)."""
    x = _hsv_input(images, "rgb_to_hsv")
    r, g, b = _channels(x)
    value = reduce_ops.reduce_max(x, axis=-1)
    spread = value - reduce_ops.reduce_min(x, axis=-1)
    # Safe denominators keep the unused branch of each ``where`` finite, so gradients too.
    positive_value = math_ops.greater(value, 0.0)
    saturation = math_ops.where(positive_value,
                                spread / math_ops.where(positive_value, value, 1.0), 0.0)
    has_hue = math_ops.greater(spread, 0.0)
    norm = 1.0 / (6.0 * math_ops.where(has_hue, spread, 1.0))
    hue = math_ops.where(math_ops.equal(r, value), norm * (g - b),
                         math_ops.where(math_ops.equal(g, value), norm * (b - r) + 2.0 / 6.0,
                                        norm * (r - g) + 4.0 / 6.0))
    hue = math_ops.where(has_hue, hue, 0.0)
    hue = math_ops.where(math_ops.less(hue, 0.0), hue + 1.0, hue)
    return array_ops.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images, name=None):
    """Hue, saturation, value to RGB (TF's formula: hues outside [0, 1] act like the nearest
    end of the range)."""
    x = _hsv_input(images, "hsv_to_rgb")
    hue, saturation, value = _channels(x)
    sixths = hue * 6.0

    def ramp(part):
        return math_ops.clip_by_value(part, 0.0, 1.0)
    red = ramp(math_ops.abs(sixths - 3.0) - 1.0)
    green = ramp(2.0 - math_ops.abs(sixths - 2.0))
    blue = ramp(2.0 - math_ops.abs(sixths - 4.0))
    grey = 1.0 - saturation
    return array_ops.stack([(grey + saturation * c) * value for c in (red, green, blue)],
                           axis=-1)


def _mix(images, kernel, what):
    x = _three_channels(images, what)
    matrix = Tensor(B.xp.asarray(numpy.asarray(kernel, dtype=numpy.float64), dtype=x.dtype.np))
    return linalg_ops.tensordot(x, matrix, axes=[[x.ndim - 1], [0]])


def rgb_to_yiq(images):
    """RGB to YIQ (luma and two chroma components), TF's matrix."""
    return _mix(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images):
    """YIQ to RGB, TF's matrix."""
    return _mix(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images):
    """RGB to YUV, TF's matrix."""
    return _mix(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images):
    """YUV to RGB, TF's matrix."""
    return _mix(images, _YUV_TO_RGB, "yuv_to_rgb")


# --- hue and saturation --------------------------------------------------------------------

def _float_image(image, what):
    """The RGB image as floats (integer images: float32 in [0, 1], as in TF)."""
    x = _three_channels(image, what, need_float=False)
    return x, (x if x.dtype.is_floating else convert_image_dtype(x, dtypes.float32))


def _back(out, x):
    return out if x.dtype.is_floating else convert_image_dtype(out, x.dtype)


def _from_hue_range(sixths, low, high):
    """RGB from a hue in sixths of the circle ([0, 6)) and the smallest and largest channel.

    As in TF's hue and saturation kernels, the extreme channels are copied and only the
    middle one is interpolated, so grey levels survive a round trip exactly."""
    sixths = math_ops.where(math_ops.greater_equal(sixths, 6.0), 0.0, sixths)
    sector = math_ops.floor(sixths)
    ratio = sixths - sector
    odd = math_ops.equal(math_ops.floormod(sector, 2.0), 1.0)
    middle = low + math_ops.where(odd, 1.0 - ratio, ratio) * (high - low)

    def channel(high_sectors, low_sectors):
        def among(sectors):
            hits = [math_ops.equal(sector, float(k)) for k in sectors]
            return math_ops.logical_or(hits[0], hits[1])
        return math_ops.where(among(high_sectors), high,
                              math_ops.where(among(low_sectors), low, middle))
    return array_ops.stack([channel((0, 5), (2, 3)), channel((1, 2), (4, 5)),
                            channel((3, 4), (0, 1))], axis=-1)


def _is_number(value):
    return isinstance(value, (int, float, numpy.number))


def adjust_hue(image, delta, name=None):
    """Rotate the hue of an RGB image by ``delta`` (a fraction of the colour circle, in
    [-1, 1])."""
    if _is_number(delta) and not -1.0 <= float(delta) <= 1.0:
        raise ValueError(f"tf.image.adjust_hue: delta must be in the interval [-1, 1], got "
                         f"{delta}")
    x, flt = _float_image(image, "adjust_hue")
    hue = rgb_to_hsv(flt)[..., 0]
    sixths = math_ops.floormod((hue + _scalar_like(delta, hue)) * 6.0, 6.0)
    out = _from_hue_range(sixths, reduce_ops.reduce_min(flt, axis=-1),
                          reduce_ops.reduce_max(flt, axis=-1))
    return _back(out, x)


def adjust_saturation(image, saturation_factor, name=None):
    """Multiply the saturation of an RGB image by ``saturation_factor`` (clipped to [0, 1])."""
    x, flt = _float_image(image, "adjust_saturation")
    hue, saturation, value = _channels(rgb_to_hsv(flt))
    factor = _scalar_like(saturation_factor, saturation)
    saturation = math_ops.clip_by_value(saturation * factor, 0.0, 1.0)
    out = _from_hue_range(hue * 6.0, value - saturation * value, value)
    return _back(out, x)


def check_hue_delta(max_delta, what):
    """TF's argument checks of ``random_hue`` and ``stateless_random_hue``."""
    if max_delta > 0.5:
        raise ValueError(f"tf.image.{what}: max_delta must be <= 0.5, got {max_delta}")
    if max_delta < 0:
        raise ValueError(f"tf.image.{what}: max_delta must be non-negative, got {max_delta}")


def check_factor_range(lower, upper, what):
    """TF's argument checks of the random contrast and saturation functions."""
    if upper <= lower:
        raise ValueError(f"tf.image.{what}: upper must be > lower, got lower={lower}, "
                         f"upper={upper}")
    if lower < 0:
        raise ValueError(f"tf.image.{what}: lower must be non-negative, got {lower}")


def random_hue(image, max_delta, seed=None):
    """``adjust_hue`` by a delta drawn uniformly from ``[-max_delta, max_delta)``
    (``max_delta`` in [0, 0.5])."""
    check_hue_delta(max_delta, "random_hue")
    delta = random_ops.uniform((), -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed=None):
    """``adjust_saturation`` by a factor drawn uniformly from ``[lower, upper)``."""
    check_factor_range(lower, upper, "random_saturation")
    factor = random_ops.uniform((), lower, upper, seed=seed)
    return adjust_saturation(image, factor)


# --- edges ---------------------------------------------------------------------------------

def sobel_edges(image):
    """Sobel gradients of a ``(batch, height, width, depth)`` batch, as ``(batch, height,
    width, depth, 2)``: ``[..., 0]`` along height (dy), ``[..., 1]`` along width (dx), with
    reflected borders."""
    x = _tensor(image)
    if x.ndim != 4:
        raise InvalidArgumentError(f"tf.image.sobel_edges: image must be a 4-D batch (batch, "
                                   f"height, width, depth), got shape {tuple(x.shape)}",
                                   op="sobel_edges")
    h, w = x.shape[1], x.shape[2]
    padded = array_ops.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")

    def window(i, j):
        return padded[:, i:i + h, j:j + w, :]
    dy = (window(2, 0) + 2.0 * window(2, 1) + window(2, 2)
          - window(0, 0) - 2.0 * window(0, 1) - window(0, 2))
    dx = (window(0, 2) + 2.0 * window(1, 2) + window(2, 2)
          - window(0, 0) - 2.0 * window(1, 0) - window(2, 0))
    return array_ops.stack([dy, dx], axis=-1)


# --- structural similarity -----------------------------------------------------------------

def _ssim_inputs(img1, img2, max_val, what):
    """Both images and ``max_val`` as floats (integer images: float32 in [0, 1])."""
    a, b = _tensor(img1), _tensor(img2)
    if a.ndim < 3 or b.ndim < 3 or tuple(a.shape[-3:]) != tuple(b.shape[-3:]):
        raise InvalidArgumentError(f"tf.image.{what}: images must have rank >= 3 and the same "
                                   f"last three dimensions (height, width, channels), got "
                                   f"shapes {tuple(a.shape)} and {tuple(b.shape)}", op=what)
    if a.dtype != b.dtype:
        raise TypeError(f"tf.image.{what}: both images must have the same dtype, got "
                        f"{a.dtype.name} and {b.dtype.name}")
    target = a.dtype if a.dtype.is_floating else dtypes.float32
    peak = convert_image_dtype(math_ops.cast(_tensor(max_val), a.dtype), target)
    return convert_image_dtype(a, target), convert_image_dtype(b, target), peak


def _gaussian_blur(x, weights):
    """VALID filtering of the height and width axes with the separable Gaussian ``weights``
    (equal to TF's 2-D kernel, the outer product of the 1-D one)."""
    size = len(weights)
    for axis in (-3, -2):
        out = x.shape[axis] - size + 1
        total = None
        for i, weight in enumerate(weights):
            part = x[..., i:i + out, :, :] if axis == -3 else x[..., i:i + out, :]
            term = part * float(weight)
            total = term if total is None else total + term
        x = total
    return x


def _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2, what, index_map=False):
    """Mean SSIM and contrast-structure terms per channel (TF's ``_ssim_per_channel``); with
    ``index_map`` the SSIM of every filter position instead of the mean."""
    for img in (x, y):
        if min(img.shape[-3], img.shape[-2]) < filter_size:
            raise InvalidArgumentError(f"tf.image.{what}: height and width must be at least "
                                       f"filter_size={filter_size}, got shape "
                                       f"{tuple(img.shape)}", op=what)
    coords = numpy.arange(filter_size, dtype=numpy.float64) - (filter_size - 1) / 2.0
    weights = numpy.exp(-0.5 * coords ** 2 / float(filter_sigma) ** 2)
    weights /= weights.sum()

    def reducer(t):
        return _gaussian_blur(t, weights)
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean_x, mean_y = reducer(x), reducer(y)
    num0 = mean_x * mean_y * 2.0
    den0 = math_ops.square(mean_x) + math_ops.square(mean_y)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(math_ops.square(x) + math_ops.square(y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if index_map:
        return luminance * cs, cs
    axes = [-3, -2]
    return (reduce_ops.reduce_mean(luminance * cs, axis=axes),
            reduce_ops.reduce_mean(cs, axis=axes))


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False):
    """Structural similarity of two images or batches (mean over pixels and channels), with
    a ``filter_size`` Gaussian window of ``filter_sigma`` and no padding;
    ``return_index_map=True`` gives the value at every window position instead."""
    x, y, peak = _ssim_inputs(img1, img2, max_val, "ssim")
    per_channel, _ = _ssim_per_channel(x, y, peak, int(filter_size), filter_sigma, k1, k2,
                                       "ssim", index_map=return_index_map)
    return reduce_ops.reduce_mean(per_channel, axis=-1)


def _halve(x):
    """2x2 average pooling of ``(..., height, width, channels)`` after symmetric padding of
    odd sizes at the bottom/right (TF's MS-SSIM downsampling)."""
    h, w = x.shape[-3], x.shape[-2]
    lead = tuple(x.shape[:-3])
    flat = array_ops.reshape(x, (-1,) + tuple(x.shape[-3:]))
    if h % 2 or w % 2:
        flat = array_ops.pad(flat, [[0, 0], [0, h % 2], [0, w % 2], [0, 0]], mode="SYMMETRIC")
    pooled = (flat[:, 0::2, 0::2, :] + flat[:, 1::2, 0::2, :] + flat[:, 0::2, 1::2, :]
              + flat[:, 1::2, 1::2, :]) * 0.25
    return array_ops.reshape(pooled, lead + tuple(pooled.shape[1:]))


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """Multi-scale SSIM: contrast-structure terms of ``len(power_factors)`` scales (each half
    the previous) and the SSIM of the last, combined with ``power_factors`` as exponents."""
    x, y, peak = _ssim_inputs(img1, img2, max_val, "ssim_multiscale")
    terms = []
    for scale in range(len(power_factors)):
        if scale > 0:
            x, y = _halve(x), _halve(y)
        per_channel, cs = _ssim_per_channel(x, y, peak, int(filter_size), filter_sigma, k1, k2,
                                            "ssim_multiscale")
        terms.append(math_ops.relu(cs))
    terms[-1] = math_ops.relu(per_channel)
    stacked = array_ops.stack(terms, axis=-1)
    exponents = Tensor(B.xp.asarray(numpy.asarray(power_factors, dtype=numpy.float64),
                                    dtype=stacked.dtype.np))
    combined = reduce_ops.reduce_prod(math_ops.pow(stacked, exponents), axis=-1)
    return reduce_ops.reduce_mean(combined, axis=-1)


# --- resizing --------------------------------------------------------------------------------

def resize_with_pad(image, target_height, target_width, method="bilinear", antialias=False):
    """Resize keeping the aspect ratio so the image fits ``target_height x target_width``,
    then zero-pad evenly to that size (TF's rounding)."""
    x = _tensor(image)
    if x.ndim not in (3, 4):
        raise ValueError(f"tf.image.resize_with_pad: expected an image of rank 3 or 4, got "
                         f"shape {tuple(x.shape)}")
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError(f"tf.image.resize_with_pad: target_height and target_width must be "
                         f"> 0, got {th} and {tw}")
    h, w = x.shape[-3], x.shape[-2]
    ratio = max(w / tw, h / th)
    new_h, new_w = h / ratio, w / ratio
    resized = resize(x, [int(_math.floor(new_h)), int(_math.floor(new_w))], method=method,
                     antialias=antialias)
    top = max(0, int(_math.floor((th - new_h) / 2)))
    left = max(0, int(_math.floor((tw - new_w) / 2)))
    return pad_to_bounding_box(resized, top, left, th, tw)


def install(tf):
    """Put these functions in ``tf.image`` (idempotent)."""
    for name in __all__:
        setattr(tf.image, name, globals()[name])
