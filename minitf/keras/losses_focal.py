"""Keras 3's focal cross-entropies (Lin et al., 2017): cross-entropy scaled down for
well-classified examples by ``(1 - p_t) ** gamma``, as functions and ``Loss`` classes.

    loss = BinaryFocalCrossentropy(gamma=2.0, from_logits=True)
    loss([0, 1, 0, 0], [-18.6, 0.51, 2.94, -12.8])  # 0.691
"""
from ..ops.convert import convert_to_tensor
from ..ops.math_ops import clip_by_value, log, pow as _pow, sigmoid
from ..ops.nn_ops import softmax
from ..ops.reduce_ops import reduce_mean, reduce_sum
from .losses import EPSILON, LossFunctionWrapper, _pred_and_true


def _check_axis(axis):
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis!r} of type "
                         f"{type(axis)}")


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    """``sum(alpha * (1 - p) ** gamma * -y_true * log(p), axis)`` with ``p`` the predictions
    normalised to sum to 1 and clipped to ``[1e-7, 1 - 1e-7]`` (softmax first with
    ``from_logits``)."""
    _check_axis(axis)
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    if label_smoothing:
        n = float(y_true.shape[-1])
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / n
    if from_logits:
        y_pred = softmax(y_pred, axis=axis)
    output = y_pred / reduce_sum(y_pred, axis=axis, keepdims=True)
    output = clip_by_value(output, EPSILON, 1.0 - EPSILON)
    cce = -y_true * log(output)
    if isinstance(alpha, (list, tuple)):  # one weight per class
        alpha = convert_to_tensor(alpha, dtype=y_pred.dtype)
    focal = _pow(1.0 - output, float(gamma)) * alpha * cce
    return reduce_sum(focal, axis=axis)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy scaled by ``(1 - p_t) ** gamma`` (``p_t``: the probability given to
    the true class), and by ``alpha`` / ``1 - alpha`` for classes 1 / 0 with
    ``apply_class_balancing``; averaged over ``axis``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = sigmoid(y_pred)
    clipped = clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
    bce = -(y_true * log(clipped) + (1.0 - y_true) * log(1.0 - clipped))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal_bce = _pow(1.0 - p_t, float(gamma)) * bce
    if apply_class_balancing:
        focal_bce = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal_bce
    return reduce_mean(focal_bce, axis=axis)


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    """Focal cross-entropy for one-hot labels (see ``categorical_focal_crossentropy``)."""

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy",
                 dtype=None):
        _check_axis(axis)
        super().__init__(categorical_focal_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, alpha=alpha, gamma=gamma, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits
        self.alpha = alpha
        self.gamma = gamma


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """Focal cross-entropy for 0/1 labels (see ``binary_focal_crossentropy``)."""

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                 label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_focal_crossentropy", dtype=None):
        super().__init__(binary_focal_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         apply_class_balancing=apply_class_balancing, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits
        self.apply_class_balancing = apply_class_balancing
        self.alpha = alpha
        self.gamma = gamma
