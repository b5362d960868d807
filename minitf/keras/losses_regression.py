"""Keras 3's regression losses: mean absolute percentage error, mean squared logarithmic
error, log-cosh, Poisson and cosine similarity, as functions (one value per sample) and as
``Loss`` classes.

    loss = MeanAbsolutePercentageError()([[2., 1.], [2., 3.]], [[1., 1.], [1., 0.]])  # 50.0
"""
import math

from ..ops.math_ops import (abs as _abs, log, maximum, rsqrt, softplus, square)
from ..ops.reduce_ops import reduce_mean, reduce_sum
from .losses import EPSILON, LossFunctionWrapper, _pred_and_true, squeeze_or_expand_to_same_rank


def mean_absolute_percentage_error(y_true, y_pred):
    """``100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7), axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    diff = _abs((y_true - y_pred) / maximum(_abs(y_true), EPSILON))
    return 100.0 * reduce_mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """``mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1)) ** 2, axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    first_log = log(maximum(y_pred, EPSILON) + 1.0)
    second_log = log(maximum(y_true, EPSILON) + 1.0)
    return reduce_mean(square(first_log - second_log), axis=-1)


def log_cosh(y_true, y_pred):
    """``mean(log(cosh(y_pred - y_true)), axis=-1)``, computed as
    ``x + softplus(-2x) - log(2)`` so large errors do not overflow."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    error = y_pred - y_true
    return reduce_mean(error + softplus(error * -2.0) - math.log(2.0), axis=-1)


def poisson(y_true, y_pred):
    """``mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    return reduce_mean(y_pred - y_true * log(y_pred + EPSILON), axis=-1)


def l2_normalize_keras(x, axis=-1):
    """``x / max(||x||, 1e-7)`` along ``axis`` (Keras 3's ``normalize``); the maximum is taken
    on the squared norm so a zero vector has a zero gradient instead of NaN."""
    squared = reduce_sum(square(x), axis=axis, keepdims=True)
    return x * rsqrt(maximum(squared, EPSILON * EPSILON))


def cosine_similarity(y_true, y_pred, axis=-1):
    """The negated cosine similarity ``-sum(l2_norm(y_true) * l2_norm(y_pred), axis)``: -1 for
    vectors pointing the same way, 0 for orthogonal or zero vectors."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return -reduce_sum(l2_normalize_keras(y_true, axis) * l2_normalize_keras(y_pred, axis),
                       axis=axis)


mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
logcosh = log_cosh


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """``100 * mean(|(y_true - y_pred) / y_true|)`` with the divisor floored at 1e-7."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_percentage_error",
                 dtype=None):
        super().__init__(mean_absolute_percentage_error, reduction=reduction, name=name,
                         dtype=dtype)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """``mean((log(y_true + 1) - log(y_pred + 1)) ** 2)``, values below 1e-7 raised to 1e-7."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_logarithmic_error",
                 dtype=None):
        super().__init__(mean_squared_logarithmic_error, reduction=reduction, name=name,
                         dtype=dtype)


class LogCosh(LossFunctionWrapper):
    """``mean(log(cosh(y_pred - y_true)))``: quadratic for small errors, linear for large."""

    def __init__(self, reduction="sum_over_batch_size", name="log_cosh", dtype=None):
        super().__init__(log_cosh, reduction=reduction, name=name, dtype=dtype)


class Poisson(LossFunctionWrapper):
    """``mean(y_pred - y_true * log(y_pred + 1e-7))``."""

    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None):
        super().__init__(poisson, reduction=reduction, name=name, dtype=dtype)


class CosineSimilarity(LossFunctionWrapper):
    """``-sum(l2_norm(y_true) * l2_norm(y_pred), axis)``: minimising it aligns the vectors."""

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity",
                 dtype=None):
        super().__init__(cosine_similarity, reduction=reduction, name=name, dtype=dtype,
                         axis=axis)
