"""Keras 3's hinge losses (``hinge``, ``squared_hinge``, ``categorical_hinge``), as functions
(one value per sample) and as ``Loss`` classes.

Labels are expected in {-1, 1}; a batch whose labels are all 0 or 1 is mapped to -1/1 first,
as Keras does (the check runs on the whole batch, so it also works in a traced step).
"""
from ..ops.math_ops import equal, logical_or, maximum, square, where
from ..ops.reduce_ops import reduce_all, reduce_max, reduce_mean, reduce_sum
from .losses import LossFunctionWrapper, _pred_and_true


def convert_binary_labels_to_hinge(y_true):
    """``2 * y_true - 1`` when every label is 0 or 1, else ``y_true`` unchanged."""
    is_binary = reduce_all(logical_or(equal(y_true, 0.0), equal(y_true, 1.0)))
    return where(is_binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true, y_pred):
    """``mean(maximum(1 - y_true * y_pred, 0), axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true = convert_binary_labels_to_hinge(y_true)
    return reduce_mean(maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """``mean(maximum(1 - y_true * y_pred, 0) ** 2, axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true = convert_binary_labels_to_hinge(y_true)
    return reduce_mean(square(maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """``maximum(neg - pos + 1, 0)`` with ``pos = sum(y_true * y_pred)`` and
    ``neg = max((1 - y_true) * y_pred)`` over the last axis (one-hot ``y_true``)."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    pos = reduce_sum(y_true * y_pred, axis=-1)
    neg = reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return maximum(neg - pos + 1.0, 0.0)


class Hinge(LossFunctionWrapper):
    """``maximum(1 - y_true * y_pred, 0)`` averaged over the last axis."""

    def __init__(self, reduction="sum_over_batch_size", name="hinge", dtype=None):
        super().__init__(hinge, reduction=reduction, name=name, dtype=dtype)


class SquaredHinge(LossFunctionWrapper):
    """``maximum(1 - y_true * y_pred, 0) ** 2`` averaged over the last axis."""

    def __init__(self, reduction="sum_over_batch_size", name="squared_hinge", dtype=None):
        super().__init__(squared_hinge, reduction=reduction, name=name, dtype=dtype)


class CategoricalHinge(LossFunctionWrapper):
    """``maximum(neg - pos + 1, 0)`` for one-hot labels (see ``categorical_hinge``)."""

    def __init__(self, reduction="sum_over_batch_size", name="categorical_hinge", dtype=None):
        super().__init__(categorical_hinge, reduction=reduction, name=name, dtype=dtype)
