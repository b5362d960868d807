"""``tf.image`` bounding-box functions: non-max suppression (hard, Soft-NMS, padded, on overlaps,
combined per class), ``crop_and_resize``, ``draw_bounding_boxes`` and the sampling of
distorted crops (``sample_distorted_bounding_box`` and its stateless twin).

Boxes are ``[y1, x1, y2, x2]`` as in TF (either corner order for NMS). The selections run on
the host like TF's CPU kernels, with TF's tie and threshold rules: candidates need a score
above ``score_threshold``, a box is suppressed by an earlier pick whose IoU is above
``iou_threshold``, equal scores keep the lower index first. ``crop_and_resize`` is built from
registered ops, so it is differentiable with respect to the image and the boxes.
"""
import heapq

import numpy

from . import backend as B
from . import dtypes, errors
from ._state import state
from .ops import array_ops, math_ops
from .ops.convert import convert_to_tensor
from .tensor import Tensor

__all__ = ["non_max_suppression", "non_max_suppression_with_scores",
           "non_max_suppression_padded", "non_max_suppression_overlaps",
           "combined_non_max_suppression", "crop_and_resize", "draw_bounding_boxes",
           "sample_distorted_bounding_box", "stateless_sample_distorted_bounding_box"]


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _on_host(where):
    """These functions run in Python on the host: a ``minitf.function`` calling one runs
    eagerly (its results depend on values a replay would not recompute)."""
    if state.tracer is not None:
        state.tracer.run_eagerly(f"it calls tf.image.{where}, which runs in Python")


def _host(value, dtype=None):
    """A Tensor, array or list as a host numpy array."""
    if isinstance(value, Tensor):
        value = B.to_numpy(value._value)
    return numpy.asarray(value, dtype)


def _number(value, what):
    array = _host(value)
    if array.size != 1:
        raise _invalid(f"{what} must be a scalar, got shape {tuple(array.shape)}")
    return array.reshape(()).item()


def _device(array):
    array = numpy.asarray(array)
    return Tensor(B.from_numpy(array if array.flags.c_contiguous else array.copy()))


def _boxes_and_scores(boxes, scores, where):
    b = _host(boxes)
    s = _host(scores)
    if b.ndim != 2 or b.shape[1] != 4:
        raise _invalid(f"{where}: boxes must have shape (num_boxes, 4), got {b.shape}")
    if s.shape != (b.shape[0],):
        raise _invalid(f"{where}: scores must have shape ({b.shape[0]},) (one per box), got "
                       f"{s.shape}")
    float_type = b.dtype if b.dtype in (numpy.float16, numpy.float64) else numpy.float32
    return b.astype(float_type), s.astype(float_type)


def _max_output(value, where):
    n = int(_number(value, f"{where}: max_output_size"))
    if n < 0:
        raise _invalid(f"{where}: max_output_size must be >= 0, got {n}")
    return n


def _iou_with(boxes):
    """A function ``(i, js) -> IoU of box i with the boxes js`` (TF's formula: corners in any
    order, 0 where a box has no area)."""
    lo = numpy.minimum(boxes[:, :2], boxes[:, 2:])
    hi = numpy.maximum(boxes[:, :2], boxes[:, 2:])
    area = numpy.prod(hi - lo, axis=1)

    def iou(i, js):
        inter = numpy.prod(numpy.maximum(numpy.minimum(hi[i], hi[js]) -
                                         numpy.maximum(lo[i], lo[js]), 0), axis=1)
        union = area[i] + area[js] - inter
        with numpy.errstate(divide="ignore", invalid="ignore"):
            out = inter / union
        return numpy.where((area[i] <= 0) | (area[js] <= 0), 0, out)
    return iou


def _greedy(similarity, scores, max_output, threshold, score_threshold, sigma=0.0):
    """TF's NonMaxSuppressionV5 loop: ``(indices, scores)`` of the picks, in pick order."""
    if sigma > 0:
        return _soft(similarity, scores, max_output, threshold, score_threshold, sigma)
    candidates = numpy.flatnonzero(scores > score_threshold)
    candidates = candidates[numpy.argsort(-scores[candidates], kind="stable")]
    selected = []
    for i in candidates:
        if len(selected) >= max_output:
            break
        if selected and numpy.max(similarity(i, numpy.array(selected))) > threshold:
            continue
        selected.append(i)
    selected = numpy.array(selected, numpy.int64)
    return selected, scores[selected]


def _soft(similarity, scores, max_output, threshold, score_threshold, sigma):
    """Soft-NMS (Bodla et al.): each earlier pick scales a candidate's score by
    ``exp(-iou^2 / (2 sigma))``; a lowered candidate goes back into the queue."""
    scale = -0.5 / sigma
    queue = [(-float(scores[i]), int(i), 0) for i in numpy.flatnonzero(scores > score_threshold)]
    heapq.heapify(queue)
    selected, picked_scores = [], []
    while queue and len(selected) < max_output:
        negative, i, begin = heapq.heappop(queue)
        score = original = -negative
        if begin < len(selected):
            sims = similarity(i, numpy.array(selected[begin:]))
            for sim in sims[::-1]:
                score *= float(numpy.exp(scale * sim * sim))
                if score <= score_threshold:
                    break
        if score == original:
            selected.append(i)
            picked_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(queue, (-score, i, len(selected)))
    return numpy.array(selected, numpy.int64), numpy.array(picked_scores, scores.dtype)


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """Indices (int32) of at most ``max_output_size`` boxes picked greedily by descending
    score, dropping boxes whose IoU with an earlier pick is above ``iou_threshold``."""
    where = "non_max_suppression"
    _on_host(where)
    b, s = _boxes_and_scores(boxes, scores, where)
    picked, _ = _greedy(_iou_with(b), s, _max_output(max_output_size, where),
                        float(_number(iou_threshold, f"{where}: iou_threshold")),
                        float(_number(score_threshold, f"{where}: score_threshold")))
    return _device(picked.astype(numpy.int32))


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5,
                                    score_threshold=float("-inf"), soft_nms_sigma=0.0,
                                    name=None):
    """``(selected_indices, selected_scores)``; ``soft_nms_sigma > 0`` runs Soft-NMS, which
    lowers the scores of overlapping boxes instead of dropping them (the returned scores are
    the lowered ones)."""
    where = "non_max_suppression_with_scores"
    _on_host(where)
    b, s = _boxes_and_scores(boxes, scores, where)
    sigma = float(_number(soft_nms_sigma, f"{where}: soft_nms_sigma"))
    if sigma < 0:
        raise _invalid(f"{where}: soft_nms_sigma must be >= 0, got {sigma}")
    picked, picked_scores = _greedy(
        _iou_with(b), s, _max_output(max_output_size, where),
        float(_number(iou_threshold, f"{where}: iou_threshold")),
        float(_number(score_threshold, f"{where}: score_threshold")), sigma)
    return _device(picked.astype(numpy.int32)), _device(picked_scores.astype(numpy.float32))


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=float("-inf"), name=None):
    """``non_max_suppression`` with a given ``(n, n)`` overlap matrix instead of IoUs."""
    where = "non_max_suppression_overlaps"
    _on_host(where)
    o = _host(overlaps).astype(numpy.float32)
    s = _host(scores).astype(numpy.float32)
    if o.ndim != 2 or o.shape[0] != o.shape[1] or s.shape != (o.shape[0],):
        raise _invalid(f"{where}: overlaps must be (n, n) and scores (n,), got {o.shape} and "
                       f"{s.shape}")
    picked, _ = _greedy(lambda i, js: o[i, js], s, _max_output(max_output_size, where),
                        float(_number(overlap_threshold, f"{where}: overlap_threshold")),
                        float(_number(score_threshold, f"{where}: score_threshold")))
    return _device(picked.astype(numpy.int32))


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None, sorted_input=False, canonicalized_coordinates=False,
                               tile_size=512):
    """``(selected_indices, valid_outputs)``: with ``pad_to_max_output_size`` the indices are
    zero-padded to ``max_output_size``. Boxes ``(..., n, 4)`` with scores ``(..., n)`` are
    batches (which need ``pad_to_max_output_size``)."""
    where = "non_max_suppression_padded"
    _on_host(where)
    b, s = _host(boxes), _host(scores)
    if b.ndim < 2 or b.shape[-1] != 4 or s.shape != b.shape[:-1]:
        raise _invalid(f"{where}: boxes must be (..., num_boxes, 4) and scores (..., "
                       f"num_boxes), got {b.shape} and {s.shape}")
    batch_shape = b.shape[:-2]
    if batch_shape and not pad_to_max_output_size:
        raise _invalid(f"{where}: pad_to_max_output_size must be True for batched boxes of "
                       f"shape {b.shape}")
    limit = _max_output(max_output_size, where)
    threshold = float(_number(iou_threshold, f"{where}: iou_threshold"))
    floor = float(_number(score_threshold, f"{where}: score_threshold"))
    flat_b, flat_s = b.reshape(-1, b.shape[-2], 4), s.reshape(-1, s.shape[-1])
    indices = numpy.zeros((len(flat_b), limit), numpy.int32)
    valid = numpy.zeros(len(flat_b), numpy.int32)
    for k in range(len(flat_b)):
        kb, ks = _boxes_and_scores(flat_b[k], flat_s[k], where)
        picked, _ = _greedy(_iou_with(kb), ks, limit, threshold, floor)
        indices[k, :len(picked)] = picked
        valid[k] = len(picked)
    if not pad_to_max_output_size:
        return _device(indices[0, :valid[0]]), _device(valid[0])
    return (_device(indices.reshape(batch_shape + (limit,))),
            _device(valid.reshape(batch_shape)))


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size,
                                 iou_threshold=0.5, score_threshold=float("-inf"),
                                 pad_per_class=False, clip_boxes=True, name=None):
    """NMS per batch item and class, then the best ``max_total_size`` picks of all classes.

    ``boxes`` ``(batch, num_boxes, q, 4)`` (q is 1 or num_classes), ``scores``
    ``(batch, num_boxes, num_classes)``. Returns ``(nmsed_boxes, nmsed_scores,
    nmsed_classes, valid_detections)``, zero-padded to ``max_total_size`` (or with
    ``pad_per_class`` to ``min(max_output_size_per_class * num_classes, max_total_size)``)."""
    where = "combined_non_max_suppression"
    _on_host(where)
    b, s = _host(boxes).astype(numpy.float32), _host(scores).astype(numpy.float32)
    if b.ndim != 4 or b.shape[-1] != 4 or s.ndim != 3 or s.shape[:2] != b.shape[:2] or \
            b.shape[2] not in (1, s.shape[2]):
        raise _invalid(f"{where}: boxes must be (batch, num_boxes, q, 4) with q 1 or "
                       f"num_classes and scores (batch, num_boxes, num_classes), got "
                       f"{b.shape} and {s.shape}")
    per_class = _max_output(max_output_size_per_class, where)
    total = int(_number(max_total_size, f"{where}: max_total_size"))
    if total <= 0:
        raise _invalid(f"{where}: max_total_size must be > 0, got {total}")
    threshold = float(_number(iou_threshold, f"{where}: iou_threshold"))
    floor = float(_number(score_threshold, f"{where}: score_threshold"))
    batch, classes = s.shape[0], s.shape[2]
    size = min(per_class * classes, total) if pad_per_class else total
    out_boxes = numpy.zeros((batch, size, 4), numpy.float32)
    out_scores = numpy.zeros((batch, size), numpy.float32)
    out_classes = numpy.zeros((batch, size), numpy.float32)
    valid = numpy.zeros(batch, numpy.int32)
    for n in range(batch):
        found = []      # (score, class, box index)
        for c in range(classes):
            class_boxes = b[n, :, c if b.shape[2] > 1 else 0]
            picked, picked_scores = _greedy(_iou_with(class_boxes), s[n, :, c], per_class,
                                            threshold, floor)
            found += [(float(sc), c, int(i)) for i, sc in zip(picked, picked_scores)]
        found.sort(key=lambda f: -f[0])     # stable: ties keep class, then pick order
        found = found[:size]
        valid[n] = len(found)
        for k, (score, c, i) in enumerate(found):
            out_boxes[n, k] = b[n, i, c if b.shape[2] > 1 else 0]
            out_scores[n, k], out_classes[n, k] = score, c
    if clip_boxes:
        out_boxes = numpy.clip(out_boxes, 0.0, 1.0)
    return _device(out_boxes), _device(out_scores), _device(out_classes), _device(valid)


# --- crops ---------------------------------------------------------------------------------

def _const(value, dtype=numpy.float32):
    return Tensor(B.xp.asarray(value, dtype=dtype))


def _sample_points(start, end, size, crop):
    """TF's sample positions along one axis: ``(num_boxes, crop)`` float32 coordinates."""
    if crop > 1:
        step = (end - start) * float(size - 1) / float(crop - 1)
        return start * float(size - 1) + _const(numpy.arange(crop)[None]) * step
    return 0.5 * (start + end) * float(size - 1) + _const(numpy.zeros((1, 1)))


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear",
                    extrapolation_value=0.0, name=None):
    """Crops of ``image`` (``(batch, height, width, depth)``) at the normalised ``boxes``
    (``(num_boxes, 4)``, ``[y1, x1, y2, x2]``; ``y2 < y1`` flips) of the images
    ``box_indices``, each resampled to ``crop_size = (crop_height, crop_width)``; samples
    outside the image are ``extrapolation_value``. float32 ``(num_boxes, crop_height,
    crop_width, depth)``, differentiable with respect to ``image`` and (bilinear) ``boxes``."""
    where = "crop_and_resize"
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    if x.ndim != 4:
        raise _invalid(f"{where}: image must be 4-D (batch, height, width, depth), got shape "
                       f"{tuple(x.shape)}")
    box = boxes if isinstance(boxes, Tensor) else convert_to_tensor(boxes, dtype=dtypes.float32)
    box = box if box.dtype == dtypes.float32 else math_ops.cast(box, dtypes.float32)
    if box.ndim != 2 or box.shape[1] != 4:
        raise _invalid(f"{where}: boxes must have shape (num_boxes, 4), got {tuple(box.shape)}")
    batch, height, width, depth = (int(d) for d in x.shape)
    which_t = box_indices if isinstance(box_indices, Tensor) else convert_to_tensor(
        numpy.asarray(box_indices, numpy.int32))
    which = _host(which_t).astype(numpy.int64).reshape(-1)
    if which.shape != (box.shape[0],):
        raise _invalid(f"{where}: box_indices must have shape ({box.shape[0]},) (one per box), "
                       f"got {which.shape}")
    if which.size and (which.min() < 0 or which.max() >= batch):
        raise _invalid(f"{where}: box_indices has values outside [0, {batch}): "
                       f"{which.tolist()}")
    crop_h, crop_w = (int(v) for v in _host(crop_size).reshape(-1))
    if crop_h <= 0 or crop_w <= 0:
        raise _invalid(f"{where}: crop_size must be two positive integers, got "
                       f"{[crop_h, crop_w]}")
    if method not in ("bilinear", "nearest"):
        raise _invalid(f"{where}: method must be 'bilinear' or 'nearest', got {method!r}")
    flat = array_ops.reshape(x if x.dtype == dtypes.float32 else math_ops.cast(x, dtypes.float32),
                             (batch * height * width, depth))
    in_y = _sample_points(box[:, 0:1], box[:, 2:3], height, crop_h)    # (n, crop_h)
    in_x = _sample_points(box[:, 1:2], box[:, 3:4], width, crop_w)     # (n, crop_w)
    inside = math_ops.logical_and(
        array_ops.expand_dims(math_ops.logical_and(in_y >= 0.0, in_y <= height - 1.0), 2),
        array_ops.expand_dims(math_ops.logical_and(in_x >= 0.0, in_x <= width - 1.0), 1))
    base = array_ops.reshape(math_ops.cast(which_t, dtypes.int32) * (height * width),
                             (-1, 1, 1))

    def index(rows, cols):
        """Flat pixel indices ``(n, crop_h, crop_w)`` of clamped row and column positions."""
        r = math_ops.cast(math_ops.minimum(math_ops.maximum(rows, 0.0), height - 1.0),
                          dtypes.int32)
        c = math_ops.cast(math_ops.minimum(math_ops.maximum(cols, 0.0), width - 1.0),
                          dtypes.int32)
        return base + array_ops.expand_dims(r * width, 2) + array_ops.expand_dims(c, 1)

    if method == "nearest":      # std::round; positions are >= 0 wherever they are used
        out = array_ops.gather(flat, index(math_ops.floor(in_y + 0.5),
                                           math_ops.floor(in_x + 0.5)), axis=0)
    else:
        top, left = math_ops.floor(in_y), math_ops.floor(in_x)
        bottom, right = math_ops.ceil(in_y), math_ops.ceil(in_x)
        corners = array_ops.gather(flat, array_ops.stack(
            [index(top, left), index(top, right), index(bottom, left), index(bottom, right)]),
            axis=0)                   # (4, n, crop_h, crop_w, depth), one gather
        x_lerp = array_ops.reshape(in_x - left, (-1, 1, crop_w, 1))
        y_lerp = array_ops.reshape(in_y - top, (-1, crop_h, 1, 1))
        upper = corners[0] + (corners[1] - corners[0]) * x_lerp
        lower = corners[2] + (corners[3] - corners[2]) * x_lerp
        out = upper + (lower - upper) * y_lerp
    fill = _const(float(_number(extrapolation_value, f"{where}: extrapolation_value")))
    return math_ops.where(array_ops.expand_dims(inside, 3), out, fill)


# --- drawing -------------------------------------------------------------------------------

# TF's colours when none are given: yellow, blue, red, lime, purple, olive, maroon, navy, aqua,
# fuchsia (RGBA in [0, 1]).
_DEFAULT_COLORS = numpy.array(
    [[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
     [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]], numpy.float32)


def draw_bounding_boxes(images, boxes, colors=None, name=None):
    """Draw the outlines of ``boxes`` (``(batch, num_boxes, 4)``, normalised ``[y1, x1, y2,
    x2]``) on ``images`` (``(batch, height, width, depth)``, depth 1, 3 or 4), one pixel
    wide, box ``k`` in ``colors[k % len(colors)]`` (RGBA rows; TF's palette when empty). Boxes
    partly outside the image are drawn where they are inside; empty ones are skipped."""
    where = "draw_bounding_boxes"
    _on_host(where)
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.ndim != 4 or x.shape[3] not in (1, 3, 4):
        raise _invalid(f"{where}: images must be (batch, height, width, depth) with depth 1, "
                       f"3 or 4, got shape {tuple(x.shape)}")
    canvas = B.to_numpy(x._value).copy()
    batch, height, width, depth = canvas.shape
    b = _host(boxes).astype(numpy.float32)
    if b.ndim != 3 or b.shape[0] != batch or b.shape[2] != 4:
        raise _invalid(f"{where}: boxes must have shape ({batch}, num_boxes, 4), got {b.shape}")
    table = numpy.zeros((0, 4), numpy.float32) if colors is None else \
        _host(colors).astype(numpy.float32).reshape(-1, _host(colors).shape[-1])
    if len(table) == 0:
        table = _DEFAULT_COLORS.copy()
        if depth == 1:
            table[:, 0] = 1
    elif table.shape[1] < depth:
        raise _invalid(f"{where}: colors must have at least {depth} columns (one per image "
                       f"channel), got shape {table.shape}")
    for n in range(batch):
        for k, (y1, x1, y2, x2) in enumerate(b[n]):
            # TF truncates toward zero after scaling in float32
            top, bottom = int(y1 * numpy.float32(height - 1)), int(y2 * numpy.float32(height - 1))
            left, right = int(x1 * numpy.float32(width - 1)), int(x2 * numpy.float32(width - 1))
            if top > bottom or left > right or top >= height or bottom < 0 or \
                    left >= width or right < 0:
                continue
            color = table[k % len(table), :depth].astype(canvas.dtype)
            rows = slice(max(top, 0), min(bottom, height - 1) + 1)
            cols = slice(max(left, 0), min(right, width - 1) + 1)
            if top >= 0:
                canvas[n, top, cols] = color
            if bottom < height:
                canvas[n, bottom, cols] = color
            if left >= 0:
                canvas[n, rows, left] = color
            if right < width:
                canvas[n, rows, right] = color
    return _device(canvas)


# --- distorted crops -----------------------------------------------------------------------

def _lrint(value):
    """C's ``lrintf``: round half to even, of a float32 value."""
    return int(numpy.rint(numpy.float32(value)))


def _random_crop(rng, width, height, min_area_frac, max_area_frac, aspect):
    """TF's GenerateRandomCrop: ``(x, y, w, h)`` of a crop of the given aspect ratio whose area
    is in the given range of the image's, or None."""
    f32 = numpy.float32
    if max_area_frac <= 0 or aspect <= 0 or min_area_frac > max_area_frac:
        return None
    min_area = f32(min_area_frac) * f32(width) * f32(height)
    max_area = f32(max_area_frac) * f32(width) * f32(height)
    h = _lrint(numpy.sqrt(min_area / f32(aspect)))
    max_h = _lrint(numpy.sqrt(max_area / f32(aspect)))
    if _lrint(max_h * f32(aspect)) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)
        if _lrint(max_h * f32(aspect)) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += int(rng.integers(0, max_h - h + 1))
    w = _lrint(h * f32(aspect))
    area = f32(w * h)
    if area < min_area:
        h += 1
        w = _lrint(h * f32(aspect))
        area = f32(w * h)
    if area > max_area:
        h -= 1
        w = _lrint(h * f32(aspect))
        area = f32(w * h)
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = int(rng.integers(0, height - h)) if h < height else 0
    x = int(rng.integers(0, width - w)) if w < width else 0
    return x, y, w, h


def _covers(crop, boxes, min_covered):
    """TF's SatisfiesOverlapConstraints: at least 10 pixels, and one box covered enough."""
    x, y, w, h = crop
    if w * h < 10:
        return False
    for bx0, by0, bx1, by1 in boxes:
        area = (bx1 - bx0) * (by1 - by0)
        if area == 0:
            continue
        iw = max(0, min(x + w, bx1) - max(x, bx0))
        ih = max(0, min(y + h, by1) - max(y, by0))
        if numpy.float32(iw * ih) / numpy.float32(area) >= min_covered:
            return True
    return False


def _sample_crop(rng, image_size, bounding_boxes, min_object_covered, aspect_ratio_range,
                 area_range, max_attempts, use_image_if_no_bounding_boxes, where):
    size = _host(image_size if isinstance(image_size, Tensor)
                 else convert_to_tensor(image_size))    # a list is int32, as in TF
    if size.ndim != 1 or size.shape[0] != 3:
        raise _invalid(f"{where}: image_size must be (height, width, channels), got "
                       f"{size.tolist()}")
    height, width = int(size[0]), int(size[1])
    if height <= 0 or width <= 0:
        raise _invalid(f"{where}: image height and width must be positive, got {height}x"
                       f"{width}")
    b = _host(bounding_boxes).astype(numpy.float32).reshape(-1, 4)
    if b.size and (b.min() < 0 or b.max() > 1):
        raise _invalid(f"{where}: all bounding box coordinates must be in [0.0, 1.0], got "
                       f"values from {b.min()} to {b.max()}")
    aspect = [float(v) for v in (aspect_ratio_range or (0.75, 1.33))]
    area = [float(v) for v in (area_range or (0.05, 1.0))]
    attempts = 100 if max_attempts is None else int(max_attempts)
    if len(aspect) != 2 or not 0 < aspect[0] <= aspect[1]:
        raise _invalid(f"{where}: aspect_ratio_range must be two positive values, low <= high, "
                       f"got {aspect}")
    if len(area) != 2 or not 0 < area[0] <= area[1] <= 1:
        raise _invalid(f"{where}: area_range must be two values in (0, 1], low <= high, got "
                       f"{area}")
    if attempts <= 0:
        raise _invalid(f"{where}: max_attempts must be positive, got {attempts}")
    covered = float(_number(min_object_covered, f"{where}: min_object_covered"))
    if covered < 0:
        raise _invalid(f"{where}: min_object_covered must be >= 0, got {covered}")
    rects = [(int(x0 * numpy.float32(width)), int(y0 * numpy.float32(height)),
              int(x1 * numpy.float32(width)), int(y1 * numpy.float32(height)))
             for y0, x0, y1, x1 in b]
    if not rects:
        if not use_image_if_no_bounding_boxes:
            raise _invalid(f"{where}: no bounding boxes were given; pass "
                           f"use_image_if_no_bounding_boxes=True to sample as if the whole "
                           f"image were one")
        rects = [(0, 0, width, height)]
    crop = None
    for _ in range(attempts):
        ratio = rng.random(dtype=numpy.float32) * (aspect[1] - aspect[0]) + aspect[0]
        candidate = _random_crop(rng, width, height, area[0], area[1], ratio)
        if candidate is not None and _covers(candidate, rects, covered):
            crop = candidate
            break
    x, y, w, h = crop or (0, 0, width, height)
    begin = numpy.array([y, x, 0], size.dtype)
    extent = numpy.array([h, w, -1], size.dtype)
    box = numpy.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]],
                      numpy.float32)
    return _device(begin), _device(extent), _device(box)


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=0, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """A random crop for data augmentation: ``(begin, size, bboxes)`` for ``tf.slice`` (e.g.
    ``[y, x, 0]`` and ``[h, w, -1]``) and the crop as a normalised box ``(1, 1, 4)``.

    The crop's aspect ratio is drawn from ``aspect_ratio_range`` (default ``(0.75, 1.33)``),
    its area is within ``area_range`` (default ``(0.05, 1.0)``) of the image's, and it covers
    at least ``min_object_covered`` of one of ``bounding_boxes`` (``(batch, n, 4)``); after
    ``max_attempts`` (100) failed draws the whole image is returned. The draws follow
    ``tf.random.set_seed`` and ``seed``; they are not TF's bit stream."""
    from .ops import random_ops
    _on_host("sample_distorted_bounding_box")
    key = random_ops.uniform((2,), 0, 2 ** 31 - 1, dtype="int32", seed=seed or None)
    rng = numpy.random.default_rng(_host(key).astype(numpy.int64).tolist())
    return _sample_crop(rng, image_size, bounding_boxes, min_object_covered, aspect_ratio_range,
                        area_range, max_attempts, use_image_if_no_bounding_boxes,
                        "sample_distorted_bounding_box")


def stateless_sample_distorted_bounding_box(image_size, bounding_boxes, seed,
                                            min_object_covered=0.1, aspect_ratio_range=None,
                                            area_range=None, max_attempts=None,
                                            use_image_if_no_bounding_boxes=None, name=None):
    """``sample_distorted_bounding_box`` determined by ``seed`` (two integers): the same seed
    gives the same crop."""
    where = "stateless_sample_distorted_bounding_box"
    _on_host(where)
    key = _host(seed).astype(numpy.int64).reshape(-1)
    if key.shape != (2,):
        raise _invalid(f"{where}: seed must hold two integers, got shape {key.shape}")
    rng = numpy.random.default_rng([int(k) % 2 ** 63 for k in key])
    return _sample_crop(rng, image_size, bounding_boxes, min_object_covered, aspect_ratio_range,
                        area_range, max_attempts, use_image_if_no_bounding_boxes, where)


def install(tf):
    """Set these functions on ``tf.image``."""
    for name in __all__:
        setattr(tf.image, name, globals()[name])
