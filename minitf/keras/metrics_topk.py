"""Keras 3's top-k accuracies: how often the true class is among the ``k`` highest
predictions (``keras.metrics.TopKCategoricalAccuracy``, ``SparseTopKCategoricalAccuracy``).

As ``tf.math.in_top_k``, classes tied with the k-th highest prediction count as in the top k,
and a label outside ``[0, num_classes)`` is never in it. The matches are computed on the host
arrays inside the metric's update kernel, so a traced training step replays them.

    m = SparseTopKCategoricalAccuracy(k=1)
    m.update_state([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
    float(m.result())  # 0.5
"""
from .. import backend as B
from ..ops.registry import InvalidArgumentError
from ..tensor import Tensor
from .metrics import MeanMetricWrapper, _t


def _in_top_k(op, targets, predictions, k):
    """Whether each integer target is among the ``k`` largest of its row of predictions."""
    xp = B.xp
    if predictions.ndim < 2:
        raise InvalidArgumentError(f"{op}: y_pred must have a class axis (rank >= 2), got "
                                   f"shape {tuple(predictions.shape)}")
    num_classes = predictions.shape[-1]
    predictions = predictions.reshape(-1, num_classes)
    targets = targets.reshape(-1)
    if targets.shape[0] != predictions.shape[0]:
        raise InvalidArgumentError(f"{op}: y_true has {targets.shape[0]} labels but y_pred has "
                                   f"{predictions.shape[0]} rows of {num_classes} classes")
    if k < 1:
        raise InvalidArgumentError(f"{op}: k must be >= 1, got {k}")
    kth = num_classes - min(int(k), num_classes)
    kth_largest = xp.partition(predictions, kth, axis=-1)[:, kth]
    valid = (targets >= 0) & (targets < num_classes)
    index = xp.where(valid, targets, 0).astype("int64")[:, None]
    target_values = xp.take_along_axis(predictions, index, axis=-1)[:, 0]
    return valid & (target_values >= kth_largest)


def _top_k_categorical_array(y_true, y_pred, k=5):
    labels = y_true.argmax(axis=-1)
    matches = _in_top_k("top_k_categorical_accuracy", labels, y_pred, k)
    return matches.astype("float32").reshape(labels.shape)


def _sparse_top_k_array(y_true, y_pred, k=5, from_sorted_ids=False):
    op = "sparse_top_k_categorical_accuracy"
    shape = y_true.shape
    if from_sorted_ids:
        ids = y_pred.reshape(-1, y_pred.shape[-1])[:, :int(k)]
        labels = y_true.reshape(-1)
        if labels.shape[0] != ids.shape[0]:
            raise InvalidArgumentError(f"{op}: y_true has {labels.shape[0]} labels but y_pred "
                                       f"has {ids.shape[0]} rows of sorted ids")
        matches = (ids == labels[:, None].astype(ids.dtype)).any(axis=1)
    else:
        labels = y_true if y_true.dtype.kind in "iu" else y_true.astype("int64")
        matches = _in_top_k(op, labels, y_pred, k)
    return matches.astype("float32").reshape(shape)


_top_k_categorical_array._array_fn = _top_k_categorical_array
_sparse_top_k_array._array_fn = _sparse_top_k_array


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where ``argmax(y_true)`` is among the ``k`` largest predictions, else 0.0."""
    return Tensor(_top_k_categorical_array(_t(y_true)._value, _t(y_pred)._value, k=k))


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """1.0 where the integer label is among the ``k`` largest predictions (or, with
    ``from_sorted_ids``, among the first ``k`` of the class ids in ``y_pred``), else 0.0."""
    return Tensor(_sparse_top_k_array(_t(y_true)._value, _t(y_pred)._value, k=k,
                                      from_sorted_ids=from_sorted_ids))


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label is among the ``k`` (5) largest predictions."""

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(_top_k_categorical_array, name=name, dtype=dtype, k=int(k))
        self.k = int(k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the ``k`` (5) largest predictions."""

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None,
                 from_sorted_ids=False):
        super().__init__(_sparse_top_k_array, name=name, dtype=dtype, k=int(k),
                         from_sorted_ids=bool(from_sorted_ids))
        self.k = int(k)
        self.from_sorted_ids = bool(from_sorted_ids)
