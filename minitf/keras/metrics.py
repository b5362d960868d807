"""Keras metrics: ``Mean``, ``Accuracy``, ``SparseCategoricalAccuracy``, ``CategoricalAccuracy``.

State lives in non-trainable float32 Variables (``total``, ``count``) updated in place by one
host kernel per ``update_state`` (``minitf.host.host_call``), so a traced ``minitf.function``
replays the update; ``result()`` is built from ops on those variables.

    acc = SparseCategoricalAccuracy()
    acc.update_state([1, 0], [[0.2, 0.8], [0.3, 0.7]])
    float(acc.result())  # 0.5
"""
import re

from .. import backend as B
from .. import dtypes
from ..host import host_call
from ..ops.array_ops import zeros
from ..ops.convert import convert_to_tensor
from .._state import PauseRecording
from ..ops.math_ops import cast, divide_no_nan
from ..tensor import Tensor, Variable
from .keras_mask import get_mask
from .losses import align_weights


def _t(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# --- array helpers (run inside host kernels) ---------------------------------------------------

def _same_rank(x1, x2):
    """Keras' squeeze_or_expand_to_same_rank on arrays."""
    r1, r2 = x1.ndim, x2.ndim
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1:
            x2 = x2[..., None]
        else:
            x1 = x1[..., 0]
    elif r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1:
            x1 = x1[..., None]
        else:
            x2 = x2[..., 0]
    return x1, x2


def _accuracy_array(y_true, y_pred):
    y_true, y_pred = _same_rank(y_true, y_pred)
    return (y_true == y_pred).astype("float32")


def _sparse_categorical_accuracy_array(y_true, y_pred):
    shape = y_true.shape
    reshape = y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1
    if reshape:
        y_true = y_true[..., 0]
    matches = (y_true == y_pred.argmax(axis=-1)).astype("float32")
    return matches.reshape(shape) if reshape else matches


def _categorical_accuracy_array(y_true, y_pred):
    return (y_true.argmax(axis=-1) == y_pred.argmax(axis=-1)).astype("float32")


def _functional(array_fn, doc):
    def fn(y_true, y_pred):
        return Tensor(array_fn(_t(y_true)._value, _t(y_pred)._value))
    fn.__doc__ = doc
    fn._array_fn = array_fn  # what MeanMetricWrapper runs in its host kernel
    array_fn._array_fn = array_fn
    return fn


accuracy = _functional(_accuracy_array, "1.0 where ``y_true == y_pred`` element-wise, else 0.0.")
sparse_categorical_accuracy = _functional(
    _sparse_categorical_accuracy_array, "1.0 where the integer label equals argmax(y_pred).")
categorical_accuracy = _functional(
    _categorical_accuracy_array, "1.0 where argmax(y_true) equals argmax(y_pred).")
accuracy.__name__ = "accuracy"
sparse_categorical_accuracy.__name__ = "sparse_categorical_accuracy"
categorical_accuracy.__name__ = "categorical_accuracy"


# --- metric objects ----------------------------------------------------------------------------

class Metric:
    """Base class: state variables from ``add_variable``, ``update_state``, ``result``,
    ``reset_state``; calling the metric updates it and returns the result."""

    def __init__(self, name=None, dtype=None):
        self.name = name or _snake(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype or "float32")
        self._variables = []

    def __setattr__(self, name, value):
        # A Variable created elsewhere and assigned as an attribute is state too (reset, save).
        if isinstance(value, Variable) and "_variables" in self.__dict__ and not any(
                v is value for v in self._variables):
            self._variables.append(value)
        object.__setattr__(self, name, value)

    @property
    def dtype(self):
        return self._dtype.name

    @property
    def variables(self):
        return list(self._variables)

    def add_variable(self, shape=(), initializer="zeros", dtype=None, name=None):
        """A non-trainable state variable (``reset_state`` sets it back to zeros)."""
        if "_variables" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before creating "
                               f"state variables")
        if isinstance(shape, str):  # TF's add_weight(name, shape, ...) order
            shape, name = (), shape
        dtype = dtypes.as_dtype(dtype or self._dtype)
        if initializer in ("zeros", None):
            value = zeros(tuple(shape), dtype=dtype)
        else:
            from . import initializers
            value = initializers.get(initializer)(tuple(shape), dtype=dtype)
        v = Variable(value, trainable=False, name=f"{self.name}/{name or 'variable'}",
                     dtype=dtype)
        self._variables.append(v)
        return v

    def add_weight(self, name=None, shape=(), initializer="zeros", dtype=None, **kwargs):
        """``add_variable`` under its TF/Keras name; ``aggregation``/``synchronization`` are
        accepted and ignored (one device)."""
        kwargs.pop("aggregation", None)
        kwargs.pop("synchronization", None)
        if kwargs:
            raise TypeError(f"Metric.add_weight: unexpected keyword argument(s) {sorted(kwargs)}")
        if name is not None and not isinstance(name, str):
            name, shape = None, name
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, name=name)

    def reset_state(self):
        """Set every state variable to zeros."""
        for v in self._variables:
            v.assign(zeros(v.shape, dtype=v.dtype))

    def reset_states(self):
        """The TF 2 name of ``reset_state``."""
        self.reset_state()

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


class Mean(Metric):
    """The (weighted) mean of the values seen: ``total / count``.

    As Keras: values of rank > 1 are averaged over their trailing axes per sample; with
    ``sample_weight``, ``total += sum(values * w)`` and ``count += sum(w)``.
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")
        self.count = self.add_variable(name="count")

    def update_state(self, values, sample_weight=None):
        tensors = [_t(values)] + ([] if sample_weight is None else [_t(sample_weight)])
        host_call(self._host_values, tensors)

    def _host_values(self, values, sample_weight=None):
        self._accumulate(values, sample_weight)

    def _accumulate(self, values, sample_weight):
        xp = B.xp
        dtype = self._dtype.np
        values = values.astype(dtype, copy=False)
        if sample_weight is not None:
            sample_weight = sample_weight.astype(dtype, copy=False)
            values, sample_weight = _same_rank(values, sample_weight)
            weight_ndim = sample_weight.ndim
            if values.ndim > weight_ndim:
                values = values.mean(axis=tuple(range(weight_ndim, values.ndim)))
            sample_weight = xp.broadcast_to(sample_weight, values.shape)
            values = values * sample_weight
            if weight_ndim > 1:
                sample_weight = sample_weight.mean(axis=tuple(range(1, weight_ndim)))
        if values.ndim > 1:
            values = values.mean(axis=tuple(range(1, values.ndim)))
        total = self.total._value
        count = self.count._value
        xp.add(total, values.sum(dtype=dtype), out=total)
        if sample_weight is not None:
            xp.add(count, sample_weight.sum(dtype=dtype), out=count)
        else:
            xp.add(count, values.shape[0] if values.ndim >= 1 else 1, out=count, casting="unsafe")

    def result(self):
        return divide_no_nan(self.total, self.count)


def _masked_weights(sample_weight, mask):
    """``sample_weight`` (or ones) times the 0/1 ``mask``, brought to the same rank first."""
    mask = cast(_t(mask), dtypes.float32)
    if sample_weight is None:
        return mask
    sample_weight, mask = align_weights(cast(_t(sample_weight), dtypes.float32), mask)
    return sample_weight * mask


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)`` per sample, for any function of tensors
    (a loss function such as ``keras.losses.mean_squared_error``, or your own)."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), dtype=dtype)
        self._fn = fn
        self._array_fn = getattr(fn, "_array_fn", None)
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = get_mask(y_pred)
        if mask is not None:   # Keras 3: padded steps of y_pred weigh nothing
            sample_weight = _masked_weights(sample_weight, mask)
        if self._array_fn is not None:
            tensors = [_t(y_true), _t(y_pred)] + (
                [] if sample_weight is None else [_t(sample_weight)])
            host_call(self._host_update, tensors)
            return
        y_true, y_pred = _t(y_true), _t(y_pred)
        if y_pred.dtype.is_floating and y_true.dtype != y_pred.dtype:
            y_true = cast(y_true, y_pred.dtype)
        with PauseRecording():
            values = self._fn(y_true, y_pred, **self._fn_kwargs)
        Mean.update_state(self, values, sample_weight)

    def _host_update(self, y_true, y_pred, sample_weight=None):
        self._accumulate(self._array_fn(y_true, y_pred, **self._fn_kwargs), sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


class Accuracy(MeanMetricWrapper):
    """How often ``y_pred`` equals ``y_true``."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(_accuracy_array, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label equals ``argmax(y_pred)``."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(_sparse_categorical_accuracy_array, name=name, dtype=dtype)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often ``argmax(y_true)`` equals ``argmax(y_pred)``."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(_categorical_accuracy_array, name=name, dtype=dtype)


def _binary_accuracy_array(y_true, y_pred, threshold=0.5):
    y_true, y_pred = _same_rank(y_true, y_pred)
    return (y_true == (y_pred > threshold).astype(y_true.dtype)).astype("float32").mean(axis=-1)


def _mean_squared_error_array(y_true, y_pred):
    y_true, y_pred = _same_rank(y_true, y_pred)
    diff = y_pred.astype("float32") - y_true.astype("float32")
    return (diff * diff).mean(axis=-1)


def _mean_absolute_error_array(y_true, y_pred):
    y_true, y_pred = _same_rank(y_true, y_pred)
    return B.xp.abs(y_pred.astype("float32") - y_true.astype("float32")).mean(axis=-1)


for _fn in (_binary_accuracy_array, _mean_squared_error_array, _mean_absolute_error_array):
    _fn._array_fn = _fn


class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` equals the 0/1 label."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(_binary_accuracy_array, name=name, dtype=dtype,
                         threshold=float(threshold))


class MeanSquaredError(MeanMetricWrapper):
    """The mean of ``mean((y_pred - y_true) ** 2, axis=-1)`` over samples."""

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(_mean_squared_error_array, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The mean of ``mean(|y_pred - y_true|, axis=-1)`` over samples."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(_mean_absolute_error_array, name=name, dtype=dtype)


class RootMeanSquaredError(MeanSquaredError):
    """``sqrt`` of the mean squared error over everything seen."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def result(self):
        from ..ops.math_ops import sqrt
        return sqrt(super().result())


class Sum(Metric):
    """The (weighted) sum of the values seen."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")

    def update_state(self, values, sample_weight=None):
        tensors = [_t(values)] + ([] if sample_weight is None else [_t(sample_weight)])
        host_call(self._host_update, tensors)

    def _host_update(self, values, sample_weight=None):
        dtype = self._dtype.np
        values = values.astype(dtype, copy=False)
        if sample_weight is not None:
            values, sample_weight = _same_rank(values, sample_weight.astype(dtype, copy=False))
            values = values * sample_weight
        total = self.total._value
        B.xp.add(total, values.sum(dtype=dtype), out=total)

    def result(self):
        return self.total + 0.0


class _Confusion(Metric):
    """Counts of true/false positives/negatives at fixed thresholds (predictions
    ``> threshold`` are positive), accumulated on the host."""

    def _init_thresholds(self, thresholds):
        self.thresholds = [float(t) for t in thresholds]
        n = len(self.thresholds)
        self.true_positives = self.add_variable((n,), name="true_positives")
        self.false_positives = self.add_variable((n,), name="false_positives")
        self.true_negatives = self.add_variable((n,), name="true_negatives")
        self.false_negatives = self.add_variable((n,), name="false_negatives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        tensors = [_t(y_true), _t(y_pred)] + ([] if sample_weight is None else [_t(sample_weight)])
        host_call(self._host_update, tensors)

    def _host_update(self, y_true, y_pred, sample_weight=None):
        xp = B.xp
        dtype = self._dtype.np
        y_pred = self._transform(y_pred.astype(dtype, copy=False))
        shape = y_pred.shape
        y_pred = y_pred.reshape(-1)
        y_true = y_true.astype(dtype, copy=False).reshape(-1)
        if y_true.shape != y_pred.shape:
            raise ValueError(f"{type(self).__name__}: y_true and y_pred must have the same "
                             f"number of values, got {y_true.size} and {y_pred.size}")
        if sample_weight is None:
            w = xp.ones_like(y_pred)
        else:
            w = sample_weight.astype(dtype, copy=False)
            w = w.reshape(w.shape + (1,) * (len(shape) - w.ndim))
            w = xp.broadcast_to(w, shape).reshape(-1)
        thresholds = xp.asarray(self.thresholds, dtype=dtype)
        above = (y_pred[None, :] > thresholds[:, None]).astype(dtype)
        pos = (y_true > 0.5).astype(dtype) * w
        neg = (y_true <= 0.5).astype(dtype) * w
        for var, counts in ((self.true_positives, above @ pos),
                            (self.false_positives, above @ neg),
                            (self.false_negatives, (1 - above) @ pos),
                            (self.true_negatives, (1 - above) @ neg)):
            xp.add(var._value, counts, out=var._value)

    def _transform(self, y_pred):
        return y_pred


class Precision(_Confusion):
    """``tp / (tp + fp)`` with predictions ``> thresholds`` (0.5) counted positive."""

    def __init__(self, thresholds=None, name="precision", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._init_thresholds([0.5] if thresholds is None else
                              [thresholds] if isinstance(thresholds, (int, float)) else thresholds)
        self._scalar = thresholds is None or isinstance(thresholds, (int, float))

    def result(self):
        r = divide_no_nan(self.true_positives, self.true_positives + self.false_positives)
        return r[0] if self._scalar else r


class Recall(Precision):
    """``tp / (tp + fn)`` with predictions ``> thresholds`` (0.5) counted positive."""

    def __init__(self, thresholds=None, name="recall", dtype=None):
        super().__init__(thresholds=thresholds, name=name, dtype=dtype)

    def result(self):
        r = divide_no_nan(self.true_positives, self.true_positives + self.false_negatives)
        return r[0] if self._scalar else r


class AUC(_Confusion):
    """Area under the ROC (or, ``curve='PR'``, precision-recall) curve from ``num_thresholds``
    evenly spaced thresholds (Keras' ``summation_method``: 'interpolation' = trapezoids for ROC
    and Davis & Goadrich's interpolation for PR, 'minoring', 'majoring')."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name="auc", dtype=None, thresholds=None, from_logits=False):
        super().__init__(name=name, dtype=dtype)
        if str(curve).upper() not in ("ROC", "PR"):
            raise ValueError(f"AUC: curve must be 'ROC' or 'PR', got {curve!r}")
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f"AUC: summation_method must be 'interpolation', 'minoring' or "
                             f"'majoring', got {summation_method!r}")
        if thresholds is None:
            if num_thresholds < 2:
                raise ValueError(f"AUC: num_thresholds must be > 1, got {num_thresholds}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        else:
            inner = sorted(float(t) for t in thresholds)
        self.curve, self.summation_method = str(curve).upper(), summation_method
        self.num_thresholds = len(inner) + 2
        self.from_logits = bool(from_logits)
        self._init_thresholds([-1e-7] + inner + [1.0 + 1e-7])

    def _transform(self, y_pred):
        return 1 / (1 + B.xp.exp(-y_pred)) if self.from_logits else y_pred

    def result(self):
        from ..ops.math_ops import maximum, minimum
        from ..ops.reduce_ops import reduce_sum
        tp, fp = self.true_positives, self.false_positives
        recall = divide_no_nan(tp, tp + self.false_negatives)
        if self.curve == "PR":
            if self.summation_method == "interpolation":
                return self._interpolated_pr_auc()
            x, y = recall, divide_no_nan(tp, tp + fp)
        else:
            x, y = divide_no_nan(fp, fp + self.true_negatives), recall
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) * 0.5
        elif self.summation_method == "minoring":
            heights = minimum(y[:-1], y[1:])
        else:
            heights = maximum(y[:-1], y[1:])
        return reduce_sum((x[:-1] - x[1:]) * heights)

    def _interpolated_pr_auc(self):
        """Keras' PR interpolation (Davis & Goadrich 2006): between two thresholds, true and
        predicted positives vary linearly, and precision is integrated in closed form."""
        from ..ops.math_ops import log, logical_and, maximum, where
        from ..ops.reduce_ops import reduce_sum
        tp = self.true_positives
        positives = tp + self.false_positives
        dtp = tp[:-1] - tp[1:]
        slope = divide_no_nan(dtp, maximum(positives[:-1] - positives[1:], 0.0))
        intercept = tp[1:] - slope * positives[1:]
        both = logical_and(positives[:-1] > 0, positives[1:] > 0)
        ratio = where(both, divide_no_nan(positives[:-1], maximum(positives[1:], 0.0)),
                      positives[1:] * 0 + 1)
        increments = divide_no_nan(slope * (dtp + intercept * log(ratio)),
                                   maximum(tp[1:] + self.false_negatives[1:], 0.0))
        return reduce_sum(increments)

    def get_config(self):
        return {**super().get_config(), "num_thresholds": self.num_thresholds,
                "curve": self.curve, "summation_method": self.summation_method,
                "from_logits": self.from_logits}


_CLASSES = {c.__name__: c for c in (Mean, Accuracy, SparseCategoricalAccuracy,
                                    CategoricalAccuracy, BinaryAccuracy, MeanSquaredError,
                                    MeanAbsoluteError, RootMeanSquaredError, Sum, Precision,
                                    Recall, AUC)}
_NAMES = {"mean": Mean, "accuracy": Accuracy, "acc": Accuracy,
          "sparse_categorical_accuracy": SparseCategoricalAccuracy,
          "categorical_accuracy": CategoricalAccuracy, "binary_accuracy": BinaryAccuracy,
          "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
          "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
          "auc": AUC, "precision": Precision, "recall": Recall}

# The further metrics live in their own modules (they build on the classes above).
from .metrics_confusion import (FalseNegatives, FalsePositives,  # noqa: E402
                                PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity,
                                SpecificityAtSensitivity, TrueNegatives, TruePositives)
from .metrics_fscore import F1Score, FBetaScore  # noqa: E402
from .metrics_iou import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU  # noqa: E402
from .metrics_probabilistic import (BinaryCrossentropy, CategoricalCrossentropy,  # noqa: E402
                                    KLDivergence, Poisson, SparseCategoricalCrossentropy)
from .metrics_reduction import MeanTensor  # noqa: E402
from .metrics_regression import (CategoricalHinge, CosineSimilarity, Hinge,  # noqa: E402
                                 LogCoshError, MeanAbsolutePercentageError, MeanRelativeError,
                                 MeanSquaredLogarithmicError, R2Score, SquaredHinge,
                                 cosine_similarity)
from .metrics_topk import (SparseTopKCategoricalAccuracy, TopKCategoricalAccuracy,  # noqa: E402
                           sparse_top_k_categorical_accuracy, top_k_categorical_accuracy)
from .metrics_correlation import (ConcordanceCorrelation, PearsonCorrelation,  # noqa: E402
                                  binary_accuracy, concordance_correlation, pearson_correlation)
from .losses import (binary_crossentropy, binary_focal_crossentropy,  # noqa: E402
                     categorical_crossentropy, categorical_focal_crossentropy,
                     categorical_hinge, hinge, huber, kl_divergence, log_cosh,
                     mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
                     mean_squared_logarithmic_error, poisson,
                     sparse_categorical_crossentropy, squared_hinge)

# tf.keras.metrics' short names of the loss functions (the functions themselves, as in tf.keras).
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


def _keras_snake_case(name):
    """Keras' ``to_snake_case``: ``TopKCategoricalAccuracy`` -> ``top_k_categorical_accuracy``,
    ``MeanIoU`` -> ``mean_io_u``."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


_MORE = (TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, BinaryCrossentropy,
         CategoricalCrossentropy, SparseCategoricalCrossentropy, KLDivergence, Poisson,
         MeanAbsolutePercentageError, MeanSquaredLogarithmicError, CosineSimilarity,
         LogCoshError, Hinge, SquaredHinge, CategoricalHinge, TruePositives, FalsePositives,
         TrueNegatives, FalseNegatives, MeanIoU, IoU, BinaryIoU, OneHotIoU, OneHotMeanIoU,
         F1Score, FBetaScore, R2Score, PrecisionAtRecall, RecallAtPrecision,
         SensitivityAtSpecificity, SpecificityAtSensitivity, MeanRelativeError, MeanTensor,
         PearsonCorrelation, ConcordanceCorrelation)
_CLASSES.update({c.__name__: c for c in _MORE})
_NAMES.update({_keras_snake_case(c.__name__): c for c in _MORE})
_NAMES.update({"bce": BinaryCrossentropy, "BCE": BinaryCrossentropy,
               "mape": MeanAbsolutePercentageError, "MAPE": MeanAbsolutePercentageError,
               "msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError,
               "MSE": MeanSquaredError, "MAE": MeanAbsoluteError})


def serialize(metric):
    return {"class_name": type(metric).__name__, "config": metric.get_config()}


def deserialize(config, custom_objects=None):
    classes = dict(_CLASSES, **(custom_objects or {}))
    cls = classes.get(config["class_name"])
    if cls is None:
        raise ValueError(f"unknown metric {config['class_name']!r}; known: {sorted(_CLASSES)}")
    return cls.from_config(dict(config.get("config", {})))


def get(identifier):
    """A metric instance from a name (``"accuracy"``, ``"sparse_categorical_accuracy"``,
    ``"SparseCategoricalAccuracy"``...), a config dict, a class or an instance. Whether
    ``"accuracy"`` means the sparse variant is the model's decision."""
    if identifier is None:
        return None
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _NAMES.get(identifier) or _CLASSES.get(identifier)
        if cls is None:
            raise ValueError(f"unknown metric {identifier!r}; known: "
                             f"{sorted(set(_NAMES) | set(_CLASSES))}")
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"could not interpret metric identifier {identifier!r}")


__all__ = ["Metric", "Mean", "MeanMetricWrapper", "Accuracy", "SparseCategoricalAccuracy",
           "CategoricalAccuracy", "BinaryAccuracy", "MeanSquaredError", "MeanAbsoluteError",
           "RootMeanSquaredError", "Sum", "Precision", "Recall", "AUC", "accuracy",
           "sparse_categorical_accuracy",
           "categorical_accuracy", "get", "serialize", "deserialize",
           "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "KLDivergence", "Poisson",
           "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "CosineSimilarity",
           "LogCoshError", "Hinge", "SquaredHinge", "CategoricalHinge", "TruePositives",
           "FalsePositives", "TrueNegatives", "FalseNegatives", "MeanIoU", "IoU", "BinaryIoU",
           "OneHotIoU", "OneHotMeanIoU", "F1Score", "FBetaScore", "R2Score", "PrecisionAtRecall",
           "RecallAtPrecision", "SensitivityAtSpecificity", "SpecificityAtSensitivity",
           "MeanRelativeError", "MeanTensor",
           "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy",
           "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
           "kl_divergence", "poisson", "mean_absolute_percentage_error",
           "mean_squared_logarithmic_error", "cosine_similarity", "log_cosh", "hinge",
           "squared_hinge", "categorical_hinge", "PearsonCorrelation", "ConcordanceCorrelation",
           "pearson_correlation", "concordance_correlation", "binary_accuracy",
           "binary_focal_crossentropy", "categorical_focal_crossentropy", "huber",
           "mean_absolute_error", "mean_squared_error", "mse", "MSE", "mae", "MAE", "mape", "MAPE",
           "msle", "MSLE", "kld", "KLD", "kullback_leibler_divergence", "logcosh"]
