"""Keras 3's confusion counts (``TruePositives``, ``FalsePositives``, ``TrueNegatives``,
``FalseNegatives``) and ``MeanIoU``, accumulated by host kernels like the other metrics.

    m = TruePositives()
    m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    float(m.result())  # 2.0
"""
from .. import backend as B
from ..host import host_call
from ..ops.linalg_ops import diag_part
from ..ops.math_ops import cast, divide_no_nan, greater
from ..ops.reduce_ops import reduce_sum
from ..ops.registry import InvalidArgumentError
from .metrics import Metric, _Confusion, _t


class _ConfusionCount(_Confusion):
    """One weighted count at each threshold (predictions ``> threshold`` are positive)."""
    _count = None
    _default_name = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name or self._default_name, dtype=dtype)
        self._thresholds_arg = thresholds
        if thresholds is None:
            thresholds = [0.5]
        elif isinstance(thresholds, (int, float)):
            thresholds = [thresholds]
        self._init_thresholds(thresholds)

    def result(self):
        counts = getattr(self, self._count)
        # As Keras: a scalar for one threshold, one count per threshold otherwise.
        return counts[0] if len(self.thresholds) == 1 else counts + 0.0

    def get_config(self):
        return {**super().get_config(), "thresholds": self._thresholds_arg}


class TruePositives(_ConfusionCount):
    """The weighted number of positive labels predicted positive."""
    _count, _default_name = "true_positives", "true_positives"


class FalsePositives(_ConfusionCount):
    """The weighted number of negative labels predicted positive."""
    _count, _default_name = "false_positives", "false_positives"


class TrueNegatives(_ConfusionCount):
    """The weighted number of negative labels predicted negative."""
    _count, _default_name = "true_negatives", "true_negatives"


class FalseNegatives(_ConfusionCount):
    """The weighted number of positive labels predicted negative."""
    _count, _default_name = "false_negatives", "false_negatives"


class MeanIoU(Metric):
    """The mean over classes of ``tp / (tp + fp + fn)`` from a running confusion matrix; classes
    never seen in labels or predictions are left out of the mean.

    Labels and predictions are class ids (``sparse_y_true``/``sparse_y_pred``; otherwise the
    argmax along ``axis`` is taken); entries labelled ``ignore_class`` are not counted.
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(name=name or "mean_io_u", dtype=dtype)
        self.num_classes = int(num_classes)
        if self.num_classes < 1:
            raise ValueError(f"MeanIoU: num_classes must be >= 1, got {num_classes!r}")
        self.ignore_class = ignore_class
        self.sparse_y_true = bool(sparse_y_true)
        self.sparse_y_pred = bool(sparse_y_pred)
        self.axis = int(axis)
        self.total_cm = self.add_variable((self.num_classes, self.num_classes),
                                          name="total_confusion_matrix")

    def update_state(self, y_true, y_pred, sample_weight=None):
        tensors = [_t(y_true), _t(y_pred)] + ([] if sample_weight is None else [_t(sample_weight)])
        host_call(self._host_update, tensors)

    def _host_update(self, y_true, y_pred, sample_weight=None):
        xp = B.xp
        dtype = self._dtype.np
        n = self.num_classes
        if not self.sparse_y_true:
            y_true = y_true.argmax(axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = y_pred.argmax(axis=self.axis)
        labels = y_true.reshape(-1).astype("int64")
        predictions = y_pred.reshape(-1).astype("int64")
        if labels.shape != predictions.shape:
            raise InvalidArgumentError(f"MeanIoU: y_true has {labels.size} values and y_pred "
                                       f"{predictions.size}; they must match")
        if sample_weight is None:
            weights = xp.ones(labels.shape, dtype=dtype)
        else:
            weights = xp.broadcast_to(sample_weight.astype(dtype).reshape(-1), labels.shape)
        if self.ignore_class is not None:
            keep = labels != int(self.ignore_class)
            labels, predictions, weights = labels[keep], predictions[keep], weights[keep]
        outside = ((labels < 0) | (labels >= n) | (predictions < 0) | (predictions >= n)).any()
        if bool(B.scalar(outside)):
            ids = xp.concatenate([labels, predictions])
            low, high = int(B.scalar(ids.min())), int(B.scalar(ids.max()))
            raise InvalidArgumentError(f"MeanIoU: labels and predictions must be class ids in "
                                       f"[0, {n}), got values in [{low}, {high}]")
        counts = xp.bincount(labels * n + predictions, weights=weights, minlength=n * n)
        cm = self.total_cm._value
        xp.add(cm, counts.reshape(n, n).astype(dtype), out=cm)

    def result(self):
        cm = self.total_cm
        true_positives = diag_part(cm)
        denominator = reduce_sum(cm, axis=0) + reduce_sum(cm, axis=1) - true_positives
        valid = reduce_sum(cast(greater(denominator, 1e-9), self._dtype))
        iou = divide_no_nan(true_positives, denominator)
        return divide_no_nan(reduce_sum(iou), valid)

    def get_config(self):
        return {**super().get_config(), "num_classes": self.num_classes,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}
