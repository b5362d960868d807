"""The convolution, pooling, padding and resizing functions of tf.keras 2's ``keras.backend``
(``K.conv1d``, ``K.pool2d``, ``K.spatial_2d_padding``, ``K.resize_images``...), with its
``data_format`` handling: ``"channels_first"`` inputs are transposed to channels-last, computed,
and transposed back (what tf.keras 2 does on a CPU), so results never depend on the device.

    y = K.conv1d(x, kernel, padding="causal", dilation_rate=2)
    y = K.pool2d(x, (2, 2), strides=(2, 2), pool_mode="avg", data_format="channels_first")
"""
import minitf as tf

__all__ = [
    "conv1d", "conv2d_transpose", "conv3d", "depthwise_conv2d", "pool2d", "pool3d",
    "resize_images", "resize_volumes", "separable_conv2d", "spatial_2d_padding",
    "spatial_3d_padding", "temporal_padding",
]

_FORMATS = ("channels_first", "channels_last")


def _data_format(data_format, where):
    if data_format is None:
        from .keras_backend import image_data_format
        data_format = image_data_format()
    if data_format not in _FORMATS:
        raise ValueError(f"keras.backend.{where}: Unknown data_format: {data_format!r}; "
                         f"expected 'channels_first' or 'channels_last'")
    return data_format


def _padding(padding, where, allowed=("same", "valid")):
    if padding not in allowed:
        raise ValueError(f"keras.backend.{where}: Invalid padding: {padding!r}; expected one of "
                         f"{allowed}")
    return padding.upper()


def _tuple(value, n, what, where):
    value = (value,) * n if isinstance(value, int) else tuple(value)
    if len(value) != n:
        raise ValueError(f"keras.backend.{where}: `{what}` must be a tuple of {n} integers, got "
                         f"{value}")
    return value


def _to_last(x, data_format):
    """Channels-first ``x`` transposed to channels-last (and the permutation back)."""
    x = tf.convert_to_tensor(x)
    if data_format != "channels_first":
        return x, None
    rank = len(x.shape)
    to_last = [0] + list(range(2, rank)) + [1]
    back = [0, rank - 1] + list(range(1, rank - 1))
    return tf.transpose(x, to_last), back


def _restore(y, back):
    return y if back is None else tf.transpose(y, back)


# --- convolutions ------------------------------------------------------------------------------
def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1D convolution; ``padding="causal"`` left-pads ``dilation_rate * (width - 1)`` steps."""
    data_format = _data_format(data_format, "conv1d")
    kernel = tf.convert_to_tensor(kernel)
    x, back = _to_last(x, data_format)
    strides = _tuple(strides, 1, "strides", "conv1d")[0]
    dilation_rate = _tuple(dilation_rate, 1, "dilation_rate", "conv1d")[0]
    if padding == "causal":
        x = temporal_padding(x, (dilation_rate * (int(kernel.shape[0]) - 1), 0))
        padding = "valid"
    padding = _padding(padding, "conv1d", ("same", "valid", "causal"))
    y = tf.nn.convolution(x, kernel, strides=[strides], padding=padding,
                          dilations=[dilation_rate])
    return _restore(y, back)


def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None,
           dilation_rate=(1, 1, 1)):
    """3D convolution of ``(batch, depth, height, width, channels)`` volumes."""
    data_format = _data_format(data_format, "conv3d")
    padding = _padding(padding, "conv3d")
    x, back = _to_last(x, data_format)
    y = tf.nn.conv3d(x, kernel, [1, *_tuple(strides, 3, "strides", "conv3d"), 1], padding,
                     dilations=[1, *_tuple(dilation_rate, 3, "dilation_rate", "conv3d"), 1])
    return _restore(y, back)


def _dilate_kernel(kernel, rate):
    """``kernel`` with ``rate - 1`` zeros between its taps along the two spatial axes."""
    for axis in (0, 1):
        size = int(kernel.shape[axis])
        zeros = tf.zeros_like(kernel)
        spread = tf.stack([kernel] + [zeros] * (rate - 1), axis=axis + 1)
        shape = list(kernel.shape)
        shape[axis] = size * rate
        spread = tf.reshape(spread, shape)
        kernel = spread[:(size - 1) * rate + 1] if axis == 0 else \
            spread[:, :(size - 1) * rate + 1]
    return kernel


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """Transposed 2D convolution; ``kernel`` is ``(height, width, out_channels, in_channels)``
    and ``output_shape`` is in ``data_format`` order (a ``None`` batch takes ``x``'s). With a
    ``dilation_rate`` other than 1 the strides are ignored (tf.keras 2's atrous path)."""
    data_format = _data_format(data_format, "conv2d_transpose")
    padding = _padding(padding, "conv2d_transpose")
    strides = _tuple(strides, 2, "strides", "conv2d_transpose")
    dilation_rate = _tuple(dilation_rate, 2, "dilation_rate", "conv2d_transpose")
    x, back = _to_last(x, data_format)
    kernel = tf.convert_to_tensor(kernel)
    output_shape = list(output_shape)
    if data_format == "channels_first":
        output_shape = [output_shape[0], output_shape[2], output_shape[3], output_shape[1]]
    if output_shape[0] is None:
        output_shape[0] = int(x.shape[0])
    if dilation_rate != (1, 1):
        if dilation_rate[0] != dilation_rate[1]:
            raise ValueError(f"keras.backend.conv2d_transpose: Expected the 2 dimensions of the "
                             f"`dilation_rate` argument to be equal to each other. Received: "
                             f"dilation_rate={dilation_rate}")
        kernel = _dilate_kernel(kernel, dilation_rate[0])
        strides = (1, 1)
    y = tf.nn.conv2d_transpose(x, kernel, output_shape, [1, *strides, 1], padding=padding)
    return _restore(y, back)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """Depthwise 2D convolution; ``depthwise_kernel`` is ``(h, w, in_channels, multiplier)``."""
    data_format = _data_format(data_format, "depthwise_conv2d")
    padding = _padding(padding, "depthwise_conv2d")
    strides = _tuple(strides, 2, "strides", "depthwise_conv2d")
    x, back = _to_last(x, data_format)
    y = tf.nn.depthwise_conv2d(x, depthwise_kernel, [1, *strides, 1], padding,
                               dilations=_tuple(dilation_rate, 2, "dilation_rate",
                                                "depthwise_conv2d"))
    return _restore(y, back)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1)):
    """A depthwise 2D convolution followed by a 1x1 (``pointwise_kernel``) convolution."""
    data_format = _data_format(data_format, "separable_conv2d")
    padding = _padding(padding, "separable_conv2d")
    strides = _tuple(strides, 2, "strides", "separable_conv2d")
    x, back = _to_last(x, data_format)
    y = tf.nn.separable_conv2d(x, depthwise_kernel, pointwise_kernel, [1, *strides, 1], padding,
                               dilations=_tuple(dilation_rate, 2, "dilation_rate",
                                                "separable_conv2d"))
    return _restore(y, back)


# --- pooling -----------------------------------------------------------------------------------
def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank, where):
    data_format = _data_format(data_format, where)
    pool_size = _tuple(pool_size, rank, "pool_size", where)
    strides = _tuple(strides, rank, "strides", where)
    padding = _padding(padding, where)
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"keras.backend.{where}: Invalid pooling mode: {pool_mode!r}; expected "
                         f"'max' or 'avg'")
    x, back = _to_last(x, data_format)
    ops = {(2, "max"): tf.nn.max_pool2d, (2, "avg"): tf.nn.avg_pool2d,
           (3, "max"): tf.nn.max_pool3d, (3, "avg"): tf.nn.avg_pool3d}
    y = ops[rank, pool_mode](x, [1, *pool_size, 1], [1, *strides, 1], padding)
    return _restore(y, back)


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    """2D max (``pool_mode="max"``) or average (``"avg"``) pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2, "pool2d")


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None,
           pool_mode="max"):
    """3D max (``pool_mode="max"``) or average (``"avg"``) pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3, "pool3d")


# --- padding -----------------------------------------------------------------------------------
def _pairs(padding, n, where):
    pairs = [tuple(p) for p in padding] if len(padding) == n and all(
        isinstance(p, (tuple, list)) for p in padding) else None
    if pairs is None or any(len(p) != 2 for p in pairs):
        raise ValueError(f"keras.backend.{where}: padding must be {n} (before, after) pairs, "
                         f"got {padding}")
    return [list(p) for p in pairs]


def temporal_padding(x, padding=(1, 1)):
    """Zero-pad the middle (time) axis of a 3D tensor by ``(before, after)`` steps."""
    if len(padding) != 2:
        raise ValueError(f"keras.backend.temporal_padding: padding must be a (before, after) "
                         f"pair, got {padding}")
    return tf.pad(x, [[0, 0], [int(padding[0]), int(padding[1])], [0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Zero-pad the two spatial axes of a 4D tensor by ``((top, bottom), (left, right))``."""
    data_format = _data_format(data_format, "spatial_2d_padding")
    pairs = _pairs(padding, 2, "spatial_2d_padding")
    pattern = [[0, 0], [0, 0]] + pairs if data_format == "channels_first" else \
        [[0, 0]] + pairs + [[0, 0]]
    return tf.pad(x, pattern)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """Zero-pad the three spatial axes of a 5D tensor by three ``(before, after)`` pairs."""
    data_format = _data_format(data_format, "spatial_3d_padding")
    pairs = _pairs(padding, 3, "spatial_3d_padding")
    pattern = [[0, 0], [0, 0]] + pairs if data_format == "channels_first" else \
        [[0, 0]] + pairs + [[0, 0]]
    return tf.pad(x, pattern)


# --- resizing ----------------------------------------------------------------------------------
def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Upsample the rows and columns of a 4D tensor by integer factors (``"nearest"`` or
    ``"bilinear"``, TF 2's half-pixel sampling)."""
    if data_format not in _FORMATS:
        raise ValueError(f"keras.backend.resize_images: Invalid `data_format` argument: "
                         f"{data_format!r}; expected 'channels_first' or 'channels_last'")
    methods = {"nearest": "nearest", "bilinear": "bilinear"}
    if interpolation not in methods:
        raise ValueError(f"keras.backend.resize_images: interpolation should be one of "
                         f"\"nearest\" or \"bilinear\", got {interpolation!r}")
    x, back = _to_last(x, data_format)
    size = (int(x.shape[1]) * int(height_factor), int(x.shape[2]) * int(width_factor))
    return _restore(tf.image.resize(x, size, method=methods[interpolation]), back)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Repeat the depth, height and width entries of a 5D tensor by integer factors."""
    if data_format not in _FORMATS:
        raise ValueError(f"keras.backend.resize_volumes: Invalid data_format: {data_format!r}; "
                         f"expected 'channels_first' or 'channels_last'")
    first = 2 if data_format == "channels_first" else 1
    for offset, factor in enumerate((depth_factor, height_factor, width_factor)):
        x = tf.repeat(x, int(factor), axis=first + offset)
    return x
