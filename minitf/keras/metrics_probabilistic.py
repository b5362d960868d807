"""Keras 3's probabilistic metrics: the running mean of a cross-entropy, KL divergence or
Poisson loss over the samples seen (``keras.metrics.BinaryCrossentropy``...).

    m = BinaryCrossentropy()
    m.update_state([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]])
    float(m.result())  # 0.8149
"""
from .losses import (binary_crossentropy, categorical_crossentropy, kl_divergence,
                     sparse_categorical_crossentropy)
from .losses_regression import poisson
from .metrics import MeanMetricWrapper


class BinaryCrossentropy(MeanMetricWrapper):
    """The mean binary cross-entropy between 0/1 labels and predictions."""

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False,
                 label_smoothing=0):
        super().__init__(binary_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class CategoricalCrossentropy(MeanMetricWrapper):
    """The mean cross-entropy between one-hot labels and predictions."""

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False,
                 label_smoothing=0, axis=-1):
        super().__init__(categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The mean cross-entropy between integer labels and predictions."""

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False,
                 axis=-1):
        super().__init__(sparse_categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, axis=axis)


class KLDivergence(MeanMetricWrapper):
    """The mean Kullback-Leibler divergence ``sum(y_true * log(y_true / y_pred))``."""

    def __init__(self, name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, name=name, dtype=dtype)


class Poisson(MeanMetricWrapper):
    """The mean Poisson loss ``y_pred - y_true * log(y_pred)``."""

    def __init__(self, name="poisson", dtype=None):
        super().__init__(poisson, name=name, dtype=dtype)
