"""More of ``tf.nn``, composed from registered ops (so they differentiate, trace and run on every
backend): the rank-generic transposed convolution and pooling, ``with_space_to_batch``, the
depthwise convolution's gradients as functions, batch norm with global statistics, CTC label
helpers, sparse embedding lookups and isotonic regression.

Integer bookkeeping (sparse indices, label runs, isotonic segments) is computed on the host with
numpy; only its results enter the ops, so the gradients reach the float inputs as in TF.
"""
from collections import namedtuple

import numpy

from .. import backend as B
from ..tensor import Tensor, host_value
from . import array_ops, conv3d_ops, conv_ops, math_ops, nn_ops, reduce_ops
from . import conv_transpose as transposed, depthwise_conv_ops, segment_ops, space_batch_ops
from .convert import convert_to_tensor, operand_pair
from .registry import InvalidArgumentError


def _t(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def _host_ints(value, what):
    """A list of Python ints from a list, numpy array or (host-read) Tensor."""
    if isinstance(value, Tensor):
        value = host_value(value, what)
    try:
        return [int(v) for v in numpy.asarray(value).reshape(-1)]
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{what} must be integers, got {value!r}") from None


def _spatial_ints(value, n, what, default=1):
    """``None`` (all ``default``), an int, or ``n`` ints (or ``n + 2`` with 1 for N and C)."""
    if value is None:
        return [default] * n
    values = _host_ints(value, what)
    if len(values) == 1:
        return values * n
    if len(values) == n + 2:
        values = values[1:-1]
    if len(values) != n:
        raise InvalidArgumentError(f"{what} must be an int or a list of {n} ints, got {value!r}")
    return values


def _mode(padding, what):
    mode = padding.upper() if isinstance(padding, str) else None
    if mode not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"{what}: padding must be 'SAME' or 'VALID', got {padding!r}")
    return mode


# --- transposed convolutions ---------------------------------------------------------------------

def _conv2d_transpose(x, w, output_shape, strides, padding, data_format, dilations, what):
    """2-D transposed convolution with dilations and either data format."""
    data_format = data_format or "NHWC"
    x = conv_ops._to_nhwc(x, data_format, what)
    out = _host_ints(output_shape, f"{what}: output_shape")
    if len(out) != 4:
        raise InvalidArgumentError(f"{what}: output_shape must have 4 entries, got {out}")
    if data_format == "NCHW":
        out = [out[0], out[2], out[3], out[1]]
    if w.ndim != 4 or w._value.shape[3] != x._value.shape[3] or w._value.shape[2] != out[3] \
            or out[0] != x._value.shape[0]:
        raise InvalidArgumentError(
            f"{what}: input (N, H, W, C_in) {tuple(x.shape)}, filters (KH, KW, C_out, C_in) "
            f"{tuple(w.shape)} and output_shape {out} do not fit together")
    mode = _mode(padding, what)
    stride = conv_ops._pair(strides, f"{what}: strides", data_format)
    rate = conv_ops._pair(1 if dilations is None else dilations, f"{what}: dilations",
                          data_format)
    for o, i, k, s, d in zip(out[1:3], x._value.shape[1:3], w._value.shape[:2], stride, rate):
        transposed.check_size(o, i, k, s, d, mode, what)
    y = transposed.conv2d_nhwc(x, w, out[1:3], stride, rate, mode)
    return conv_ops._from_nhwc(y, data_format)


def conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                   data_format=None, dilations=None, name=None):
    """The transposed convolution (gradient of ``convolution`` in its input) of rank 1, 2 or
    3, chosen by the length of ``output_shape`` (3, 4 or 5)."""
    n = len(_host_ints(output_shape, "conv_transpose: output_shape")) - 2
    x, w = operand_pair("conv_transpose", input, filters)
    if n == 1:
        return conv3d_ops.conv1d_transpose(x, w, output_shape, strides, padding,
                                           data_format or "NWC", dilations)
    if n == 2:
        return _conv2d_transpose(x, w, output_shape, strides, padding, data_format, dilations,
                                 "conv_transpose")
    if n == 3:
        return conv3d_ops.conv3d_transpose(x, w, output_shape, strides, padding,
                                           data_format or "NDHWC", dilations)
    raise InvalidArgumentError(f"conv_transpose: output_shape must have 3, 4 or 5 entries "
                               f"(1-D, 2-D or 3-D), got {n + 2}")


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transposed ``atrous_conv2d``: ``value`` (N, H, W, C_in), ``filters`` (KH, KW,
    C_out, C_in), taps ``rate`` pixels apart, stride 1."""
    rate = int(rate)
    if rate < 1:
        raise InvalidArgumentError(f"atrous_conv2d_transpose: rate must be at least 1, got "
                                   f"{rate}")
    x, w = operand_pair("atrous_conv2d_transpose", value, filters)
    return _conv2d_transpose(x, w, output_shape, 1, padding, "NHWC", rate,
                             "atrous_conv2d_transpose")


# --- pooling over N dimensions, dilation by space_to_batch -----------------------------------

def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,  # noqa: A002
                        spatial_dims=None, data_format=None):
    """``op(converted_input, num_spatial_dims, padding)`` run on ``input`` rearranged by
    ``space_to_batch_nd`` so that a dilation becomes a plain stride-1 operation (TF's recipe:
    with ``"SAME"`` the input is padded for ``filter_shape`` and ``op`` runs ``"VALID"``)."""
    x = _t(input)
    rate = numpy.asarray(_host_ints(dilation_rate, "with_space_to_batch: dilation_rate"))
    m = rate.size
    if m < 1 or (rate < 1).any():
        raise InvalidArgumentError(f"with_space_to_batch: dilation_rate must be positive ints, "
                                   f"got {rate.tolist()}")
    channels_first = bool(data_format) and data_format.startswith("NC")
    start = 2 if channels_first else 1
    dims = list(range(start, start + m)) if spatial_dims is None else \
        _host_ints(spatial_dims, "with_space_to_batch: spatial_dims")
    if len(dims) != m or dims != sorted(set(dims)) or dims[0] < 1:
        raise InvalidArgumentError(f"with_space_to_batch: spatial_dims must be {m} increasing "
                                   f"positive ints, got {dims}")
    rank = dims[-1] + (0 if channels_first else 1)
    if x.ndim < rank:
        raise InvalidArgumentError(f"with_space_to_batch: input must have rank at least {rank}, "
                                   f"got shape {tuple(x.shape)}")
    mode = _mode(padding, "with_space_to_batch")
    if (rate == 1).all():
        return op(x, m, mode)
    if mode == "SAME":
        if filter_shape is None:
            raise InvalidArgumentError("with_space_to_batch: filter_shape must be given for "
                                       "SAME padding")
        extra = (numpy.asarray(_host_ints(filter_shape, "with_space_to_batch: filter_shape")
                               [:m]) - 1) * rate
        base = numpy.stack([extra // 2, extra - extra // 2], axis=1)
    else:
        base = numpy.zeros((m, 2), numpy.int64)
    sizes = numpy.asarray([x._value.shape[d] for d in dims])
    more = (rate - (sizes + base.sum(axis=1)) % rate) % rate
    # Block dimensions 1 .. dims[-1]: the spatial ones get the rates, the rest 1.
    block, pads, crops = [1] * dims[-1], [[0, 0]] * dims[-1], [[0, 0]] * dims[-1]
    for i, d in enumerate(dims):
        block[d - 1] = int(rate[i])
        pads[d - 1] = [int(base[i, 0]), int(base[i, 1] + more[i])]
        crops[d - 1] = [0, int(more[i])]
    converted = space_batch_ops.space_to_batch_nd(x, block, pads)
    result = op(converted, m, "VALID")
    return space_batch_ops.batch_to_space(result, block, crops)


def _pool_channels_last(x, kind, window, strides, padding):
    n = len(window)
    if n == 1:
        fn = conv_ops.max_pool if kind == "MAX" else conv_ops.avg_pool
        return fn(x, window[0], strides[0], padding)
    if n == 2:
        fn = conv_ops.max_pool2d if kind == "MAX" else conv_ops.avg_pool2d
        return fn(x, tuple(window), tuple(strides), padding)
    fn = conv3d_ops.max_pool3d if kind == "MAX" else conv3d_ops.avg_pool3d
    return fn(x, tuple(window), tuple(strides), padding)


def pool(input, window_shape, pooling_type, strides=None, padding="VALID",  # noqa: A002
         data_format=None, dilations=None, name=None):
    """Max or average pooling over 1, 2 or 3 spatial dimensions (``len(window_shape)``), with
    optional dilations (then the strides must be 1 and the padding "VALID"), as TF's
    ``tf.nn.pool``."""
    x = _t(input)
    window = _host_ints(window_shape, "pool: window_shape")
    n = len(window)
    if n not in (1, 2, 3) or x.ndim != n + 2:
        raise InvalidArgumentError(f"pool: window_shape {window} needs an input of rank "
                                   f"{n + 2} (1 to 3 spatial dimensions), got shape "
                                   f"{tuple(x.shape)}")
    kind = pooling_type
    if kind not in ("MAX", "AVG"):
        raise InvalidArgumentError(f"pool: pooling_type must be 'MAX' or 'AVG', got "
                                   f"{pooling_type!r}")
    stride = _spatial_ints(strides, n, "pool: strides")
    rate = _spatial_ints(dilations, n, "pool: dilations")
    mode = _mode(padding, "pool")
    if mode == "SAME" and any(d > 1 for d in rate):
        raise InvalidArgumentError(f"pool: 'SAME' padding is not supported with dilations "
                                   f"{rate} > 1")
    if any(s > w for s, w in zip(stride, window)):
        raise InvalidArgumentError(f"pool: strides {stride} larger than window_shape {window} "
                                   f"are not supported")
    if any(d > 1 for d in rate) and any(s > 1 for s in stride):
        raise InvalidArgumentError(f"pool: strides {stride} > 1 cannot be combined with "
                                   f"dilations {rate} > 1")
    channels_first = bool(data_format) and data_format.startswith("NC")
    if channels_first:
        x = array_ops.transpose(x, (0,) + tuple(range(2, n + 2)) + (1,))
    y = with_space_to_batch(
        x, rate, mode, lambda inp, _, pad: _pool_channels_last(inp, kind, window, stride, pad),
        filter_shape=window)
    if channels_first:
        y = array_ops.transpose(y, (0, n + 1) + tuple(range(1, n + 1)))
    return y


# --- depthwise convolution gradients -------------------------------------------------------------

def _depthwise_vjp(wrt, x, w, out_backprop, strides, padding, data_format, dilations, what):
    from ..tape import GradientTape
    g = _t(out_backprop)
    source = x if wrt == 0 else w
    with GradientTape() as tape:
        tape.watch(source)
        y = depthwise_conv_ops.depthwise_conv2d(x, w, strides, padding, data_format, dilations)
    if tuple(y.shape) != tuple(g.shape):
        raise InvalidArgumentError(f"{what}: out_backprop has shape {tuple(g.shape)}, the "
                                   f"convolution's output has shape {tuple(y.shape)}")
    return tape.gradient(y, source, output_gradients=math_ops.cast(g, y.dtype))


def depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides,  # noqa: A002
                                    padding, data_format="NHWC", dilations=None, name=None):
    """The gradient of ``depthwise_conv2d`` with respect to its input (of shape
    ``input_sizes``), for the output gradient ``out_backprop``."""
    sizes = _host_ints(input_sizes, "depthwise_conv2d_backprop_input: input_sizes")
    w = _t(filter)
    if len(sizes) != 4:
        raise InvalidArgumentError(f"depthwise_conv2d_backprop_input: input_sizes must have 4 "
                                   f"entries, got {sizes}")
    x = array_ops.zeros(sizes, dtype=w.dtype)
    return _depthwise_vjp(0, x, w, out_backprop, strides, padding, data_format, dilations,
                          "depthwise_conv2d_backprop_input")


def depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides,  # noqa: A002
                                     padding, data_format="NHWC", dilations=None, name=None):
    """The gradient of ``depthwise_conv2d`` with respect to its filter (of shape
    ``filter_sizes``), for the output gradient ``out_backprop``."""
    sizes = _host_ints(filter_sizes, "depthwise_conv2d_backprop_filter: filter_sizes")
    x = _t(input)
    if len(sizes) != 4:
        raise InvalidArgumentError(f"depthwise_conv2d_backprop_filter: filter_sizes must have "
                                   f"4 entries, got {sizes}")
    w = array_ops.zeros(sizes, dtype=x.dtype)
    return _depthwise_vjp(1, x, w, out_backprop, strides, padding, data_format, dilations,
                          "depthwise_conv2d_backprop_filter")


def batch_norm_with_global_normalization(input, mean, variance, beta, gamma,  # noqa: A002
                                         variance_epsilon, scale_after_normalization,
                                         name=None):
    """``batch_normalization`` with ``gamma`` used only when ``scale_after_normalization``."""
    return nn_ops.batch_normalization(input, mean, variance, beta,
                                      gamma if scale_after_normalization else None,
                                      variance_epsilon)


# --- CTC label helpers ---------------------------------------------------------------------------

def _host_labels(labels, what):
    x = _t(labels)
    if x.ndim != 2 or x.dtype.is_floating:
        raise InvalidArgumentError(f"{what}: labels must be an integer matrix (batch, "
                                   f"max_length), got {x.dtype.name} of shape {tuple(x.shape)}")
    return x, numpy.asarray(host_value(x, f"{what}: labels"))


def collapse_repeated(labels, seq_length, name=None):
    """Merge runs of one label: ``(collapsed labels padded with 0 to the longest, new
    lengths)``."""
    x, values = _host_labels(labels, "collapse_repeated")
    lengths_t = _t(seq_length)
    lengths = numpy.asarray(host_value(lengths_t, "collapse_repeated: seq_length")).reshape(-1)
    if lengths.shape[0] != values.shape[0]:
        raise InvalidArgumentError(f"collapse_repeated: seq_length has {lengths.shape[0]} "
                                   f"entries for {values.shape[0]} label rows")
    keep = numpy.arange(values.shape[1])[None, :] < lengths[:, None]
    keep[:, 1:] &= values[:, 1:] != values[:, :-1]
    new_lengths = keep.sum(axis=1)
    out = numpy.zeros((values.shape[0], int(new_lengths.max(initial=0))), values.dtype)
    for row in range(values.shape[0]):
        out[row, :new_lengths[row]] = values[row][keep[row]]
    return (Tensor(B.from_numpy(out)),
            Tensor(B.from_numpy(new_lengths.astype(lengths.dtype))))


def ctc_unique_labels(labels, name=None):
    """Per row: ``(unique labels in first-seen order, padded with 0 (int64), the index of each
    label in them (int32))``, for ``ctc_loss(unique=...)``."""
    _, values = _host_labels(labels, "ctc_unique_labels")
    uniques = numpy.zeros(values.shape, numpy.int64)
    index = numpy.zeros(values.shape, numpy.int32)
    for row, seq in enumerate(values):
        seen = {}
        for i, label in enumerate(seq.tolist()):
            index[row, i] = seen.setdefault(label, len(seen))
        uniques[row, :len(seen)] = list(seen)
    return [Tensor(B.from_numpy(uniques)), Tensor(B.from_numpy(index))]


# --- sparse embedding lookups --------------------------------------------------------------------

def _check_sparse(value, what, arg):
    from ..sparse_tensor import SparseTensor
    if not isinstance(value, SparseTensor):
        raise TypeError(f"{what}: {arg} must be a SparseTensor, got {type(value).__name__}")


def _clip_rows(emb, max_norm):
    """Each embedding scaled to an L2 norm of at most ``max_norm`` (TF's ``clip_by_norm``)."""
    axes = tuple(range(1, emb.ndim))
    sq = reduce_ops.reduce_sum(emb * emb, axis=axes, keepdims=True)
    positive = math_ops.greater(sq, 0)
    norm = math_ops.where(positive, math_ops.sqrt(math_ops.where(positive, sq, 1.0)), sq)
    limit = math_ops.cast(max_norm, emb.dtype)
    return emb * limit / math_ops.maximum(norm, limit)


def _combine(params, rows, ids, weights, num_rows, combiner, max_norm):
    """Per row id in ``rows`` (host ints), the ``combiner`` of ``params[ids]`` weighted by
    ``weights`` (None: 1)."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("embedding lookups: sharded params (several tensors) are "
                                      "not supported")
        params = params[0]
    emb = array_ops.gather(_t(params), ids)
    if max_norm is not None:
        emb = _clip_rows(emb, max_norm)
    count = rows.shape[0]
    if weights is None:
        weights = array_ops.ones((count,), dtype=emb.dtype)
    weights = math_ops.cast(weights, emb.dtype)
    segments = Tensor(B.from_numpy(rows.astype(numpy.int64)))
    tail = (1,) * (emb.ndim - 1)
    total = segment_ops.unsorted_segment_sum(emb * array_ops.reshape(weights, (count,) + tail),
                                             segments, num_rows)
    if combiner == "sum":
        return total
    denom = segment_ops.unsorted_segment_sum(weights if combiner == "mean" else weights * weights,
                                             segments, num_rows)
    if combiner == "sqrtn":
        denom = math_ops.sqrt(denom)
    return math_ops.divide_no_nan(total, array_ops.reshape(denom, (num_rows,) + tail))


def _combiner(combiner, what):
    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise InvalidArgumentError(f"{what}: combiner must be 'mean', 'sqrtn' or 'sum', got "
                                   f"{combiner!r}")
    return combiner


def _sparse_parts(sp_ids, sp_weights, what):
    _check_sparse(sp_ids, what, "sp_ids")
    indices = numpy.asarray(host_value(sp_ids.indices, f"{what}: indices")).reshape(
        -1, len(sp_ids._dims))
    weights = None
    if sp_weights is not None:
        _check_sparse(sp_weights, what, "sp_weights")
        weights = sp_weights.values
        if tuple(weights.shape) != tuple(sp_ids.values.shape):
            raise InvalidArgumentError(f"{what}: sp_weights has {weights.shape[0]} values for "
                                       f"{sp_ids.values.shape[0]} ids")
    return indices, weights


def embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=None, max_norm=None,
                            name=None, allow_fast_lookup=False):
    """For each row of the SparseTensor ``sp_ids``, the ``combiner`` ("mean" by default,
    "sqrtn" or "sum") of the embeddings ``params[id]`` weighted by ``sp_weights`` (a
    SparseTensor like ``sp_ids``, or None for weight 1). Rows after the last one holding an id
    are left out, as TF's segment sums do; empty rows before it are zeros."""
    what = "embedding_lookup_sparse"
    combiner = _combiner(combiner, what)
    indices, weights = _sparse_parts(sp_ids, sp_weights, what)
    rows = indices[:, 0]
    num_rows = int(rows.max()) + 1 if rows.size else 0
    return _combine(params, rows, sp_ids.values, weights, num_rows, combiner, max_norm)


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, max_norm=None, name=None,
                                 allow_fast_lookup=False):
    """``embedding_lookup_sparse`` over every row of ``sparse_ids`` (any rank >= 2: the last
    dimension holds the ids of one row), ignoring negative ids (and weights <= 0 unless
    ``combiner`` is "sum"). Empty rows give ``params[default_id]``, or zeros without one."""
    what = "safe_embedding_lookup_sparse"
    if embedding_weights is None:
        raise InvalidArgumentError(f"{what}: embedding_weights must be given, got None")
    combiner = _combiner(combiner, what)
    indices, weights = _sparse_parts(sparse_ids, sparse_weights, what)
    dims = sparse_ids._dims
    if len(dims) < 2:
        raise InvalidArgumentError(f"{what}: sparse_ids must have rank >= 2, got dense shape "
                                   f"{list(dims)}")
    batch_shape = dims[:-1]
    num_rows = int(numpy.prod(batch_shape))
    rows = numpy.ravel_multi_index(indices[:, :-1].T, batch_shape) if indices.size else \
        numpy.zeros(0, numpy.int64)
    ids = numpy.asarray(host_value(sparse_ids.values, f"{what}: ids")).reshape(-1).astype(
        numpy.int64)
    keep = ids >= 0
    if weights is not None and combiner != "sum":
        keep &= numpy.asarray(host_value(weights, f"{what}: weights")).reshape(-1) > 0
    kept = numpy.flatnonzero(keep)
    empty = numpy.ones(num_rows, bool)
    empty[rows[kept]] = False
    filled = numpy.flatnonzero(empty)
    all_rows = numpy.concatenate([rows[kept], filled])
    all_ids = numpy.concatenate([ids[kept], numpy.full(filled.size, default_id or 0)])
    if weights is not None:
        weights = array_ops.concat(
            [array_ops.gather(weights, Tensor(B.from_numpy(kept))),
             array_ops.ones((filled.size,), dtype=weights.dtype)], axis=0)
    result = _combine(embedding_weights, all_rows, Tensor(B.from_numpy(all_ids)), weights,
                      num_rows, combiner, max_norm)
    if default_id is None and filled.size:
        present = (~empty).reshape((num_rows,) + (1,) * (result.ndim - 1))
        result = math_ops.where(Tensor(B.from_numpy(present)), result,
                                array_ops.zeros_like(result))
    return array_ops.reshape(result, tuple(batch_shape) + tuple(result.shape[1:]))


# --- isotonic regression -------------------------------------------------------------------------

IsotonicRegression = namedtuple("IsotonicRegression", ["output", "segments"])


def _decreasing_segments(rows):
    """Pool adjacent violators per row of a 2-D array: the block index of each element of the
    best non-increasing fit (blocks merge while the earlier mean is <= the later, as TF)."""
    segments = numpy.zeros(rows.shape, numpy.int32)
    for r, row in enumerate(rows):
        sums, counts = [], []
        for v in row.tolist():
            sums.append(v)
            counts.append(1)
            while len(sums) > 1 and sums[-2] * counts[-1] <= sums[-1] * counts[-2]:
                last_sum, last_count = sums.pop(), counts.pop()
                sums[-1] += last_sum
                counts[-1] += last_count
        segments[r] = numpy.repeat(numpy.arange(len(counts)), counts)
    return segments


def isotonic_regression(inputs, decreasing=True, axis=-1):
    """The best (least squares) non-increasing (``decreasing``) or non-decreasing fit along
    ``axis``: ``(output, segments)``, ``segments`` numbering the constant blocks of each fit
    from 0. Its gradient averages the output gradient over each block, as TF's."""
    x = _t(inputs)
    if x.dtype.is_floating:
        dtype = x.dtype
    else:
        dtype = "float32" if x.dtype.name in ("int8", "int16", "uint8") else "float64"
    x = math_ops.cast(x, dtype)
    if x.ndim == 0:
        raise InvalidArgumentError("isotonic_regression: inputs must have rank >= 1, got a "
                                   "scalar")
    axis = int(axis)
    if not -x.ndim <= axis < x.ndim:
        raise InvalidArgumentError(f"isotonic_regression: axis {axis} is out of range for rank "
                                   f"{x.ndim}")
    axis %= x.ndim
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    moved = array_ops.transpose(x, perm)
    shape = tuple(moved.shape)
    width = shape[-1]
    host = numpy.asarray(host_value(moved, "isotonic_regression: inputs"),
                         numpy.float64).reshape(-1, width)
    segments = _decreasing_segments(host if decreasing else -host)
    count = host.shape[0]
    ids = (segments + numpy.arange(count)[:, None] * width).reshape(-1).astype(numpy.int64)
    ids_t = Tensor(B.from_numpy(ids))
    means = segment_ops.unsorted_segment_mean(array_ops.reshape(moved, (-1,)), ids_t,
                                              count * width)
    out = array_ops.reshape(array_ops.gather(means, ids_t), shape)
    inverse = tuple(int(i) for i in numpy.argsort(perm))
    seg = Tensor(B.from_numpy(segments.reshape(shape)))
    return IsotonicRegression(array_ops.transpose(out, inverse),
                              array_ops.transpose(seg, inverse))


def install(tf):
    """Set this module's functions on ``tf.nn``."""
    for name in __all__:
        setattr(tf.nn, name, globals()[name])


__all__ = ["conv_transpose", "atrous_conv2d_transpose", "pool", "with_space_to_batch",
           "depthwise_conv2d_backprop_input", "depthwise_conv2d_backprop_filter",
           "batch_norm_with_global_normalization", "collapse_repeated", "ctc_unique_labels",
           "embedding_lookup_sparse", "safe_embedding_lookup_sparse", "isotonic_regression"]
