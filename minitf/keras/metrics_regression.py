"""Keras 3's regression and hinge metrics: the running mean of a per-sample error over the
samples seen (``keras.metrics.MeanAbsolutePercentageError``, ``CosineSimilarity``...).

    m = CosineSimilarity(axis=1)
    m.update_state([[0., 1.], [1., 1.]], [[1., 0.], [1., 1.]])
    float(m.result())  # 0.5
"""
from ..ops.reduce_ops import reduce_sum
from .losses import _pred_and_true, squeeze_or_expand_to_same_rank
from .losses_hinge import categorical_hinge, hinge, squared_hinge
from .losses_regression import (l2_normalize_keras, log_cosh, mean_absolute_percentage_error,
                                mean_squared_logarithmic_error)
from .metrics import MeanMetricWrapper


def cosine_similarity(y_true, y_pred, axis=-1):
    """``sum(l2_norm(y_true) * l2_norm(y_pred), axis)``: 1 for vectors pointing the same way
    (the metric's sign; the loss of the same name is its negation)."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return reduce_sum(l2_normalize_keras(y_true, axis) * l2_normalize_keras(y_pred, axis),
                      axis=axis)


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """The mean of ``100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7), axis=-1)``."""

    def __init__(self, name="mean_absolute_percentage_error", dtype=None):
        super().__init__(mean_absolute_percentage_error, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """The mean of ``mean((log(y_true + 1) - log(y_pred + 1)) ** 2, axis=-1)``."""

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(mean_squared_logarithmic_error, name=name, dtype=dtype)


class CosineSimilarity(MeanMetricWrapper):
    """The mean cosine similarity between labels and predictions along ``axis``."""

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(cosine_similarity, name=name, dtype=dtype, axis=axis)


class LogCoshError(MeanMetricWrapper):
    """The mean of ``mean(log(cosh(y_pred - y_true)), axis=-1)``."""

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(log_cosh, name=name, dtype=dtype)


class Hinge(MeanMetricWrapper):
    """The mean hinge loss (0/1 labels are mapped to -1/1)."""

    def __init__(self, name="hinge", dtype=None):
        super().__init__(hinge, name=name, dtype=dtype)


class SquaredHinge(MeanMetricWrapper):
    """The mean squared hinge loss (0/1 labels are mapped to -1/1)."""

    def __init__(self, name="squared_hinge", dtype=None):
        super().__init__(squared_hinge, name=name, dtype=dtype)


class CategoricalHinge(MeanMetricWrapper):
    """The mean categorical hinge loss for one-hot labels."""

    def __init__(self, name="categorical_hinge", dtype=None):
        super().__init__(categorical_hinge, name=name, dtype=dtype)
