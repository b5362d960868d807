"""Keras losses, built from differentiable minitf ops.

Loss objects are called as ``loss(y_true, y_pred, sample_weight=None)``. They convert both
arguments to the loss dtype (float32 unless given), so float16 predictions under mixed precision
are cast up and the loss is computed in float32, then apply ``sample_weight`` and the reduction:
``"sum_over_batch_size"`` (default: the weighted sum divided by the number of loss elements),
``"sum"``, ``"mean_with_sample_weight"`` (divided by the sum of the weights) or ``"none"``.
The functional forms (``sparse_categorical_crossentropy(y_true, y_pred)``...) return one loss
per sample, unreduced, as in Keras.

Cross-entropies with ``from_logits=True`` use the fused, stable ops of ``minitf.nn``; on
probabilities they clip with epsilon 1e-7 as Keras does (``-log(clip(p, 1e-7, 1 - 1e-7))``).

    loss_fn = SparseCategoricalCrossentropy(from_logits=True)
    loss = loss_fn([1, 0], [[0.1, 2.0], [1.5, -1.0]])
"""
import re

from .. import dtypes
from ..ops.array_ops import expand_dims, reshape, squeeze, transpose
from ..ops.convert import convert_to_tensor
from ..ops.math_ops import (abs as _abs, cast, clip_by_value, divide_no_nan, log, logical_and,
                            not_equal, square, where)
from ..ops.nn_ops import (sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits,
                          sparse_softmax_cross_entropy_with_logits)
from ..ops.reduce_ops import reduce_mean, reduce_sum
from ..tensor import Tensor
from .keras_mask import get_mask

EPSILON = 1e-7
_REDUCTIONS = ("sum", "sum_over_batch_size", "mean", "mean_with_sample_weight", "none")


class Reduction:
    """TF's reduction names (``tf.keras.losses.Reduction.NONE``...)."""
    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)


def _t(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _as(x, dtype):
    x = _t(x)
    return x if x._value.dtype == dtype.np else cast(x, dtype)


def _pred_and_true(y_true, y_pred):
    """Keras' functional preamble: y_pred as a tensor, y_true cast to its dtype."""
    y_pred = _t(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = cast(y_pred, "float32")
    return _as(y_true, y_pred.dtype), y_pred


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Squeeze or expand the last dimension when the ranks differ by exactly one (Keras)."""
    r1, r2 = x1.ndim, x2.ndim
    if r1 == r2:
        return x1, x2
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = expand_dims(x2, -1)
        else:
            x1 = squeeze(x1, -1)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = expand_dims(x1, -1)
        else:
            x2 = squeeze(x2, -1)
    return x1, x2


def align_weights(x1, x2):
    """Keras' ``squeeze_or_expand_to_same_rank``, then a lower-rank one that matches the other's
    leading dimensions gets trailing ones: per-sample weights ``(batch,)`` apply to a sequence's
    ``(batch, steps)`` losses as in tf.keras 2 (Keras 3 raises a broadcast error there)."""
    x1, x2 = squeeze_or_expand_to_same_rank(x1, x2)
    r1, r2 = x1.ndim, x2.ndim
    if r1 < r2 and tuple(x1.shape) == tuple(x2.shape[:r1]):
        x1 = reshape(x1, tuple(x1.shape) + (1,) * (r2 - r1))
    elif r2 < r1 and tuple(x2.shape) == tuple(x1.shape[:r2]):
        x2 = reshape(x2, tuple(x2.shape) + (1,) * (r1 - r2))
    return x1, x2


def _standardize_reduction(reduction):
    if reduction is None or reduction == "auto":
        return "sum_over_batch_size" if reduction == "auto" else "none"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"invalid reduction {reduction!r}; expected one of "
                         f"{_REDUCTIONS + ('auto', None)}")
    return reduction


def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    """Sum, or sum divided by the element count (or by the weights' sum), as Keras 3."""
    if reduction == "none" or values.ndim == 0 or tuple(values.shape) == (0,):
        return values
    if reduction in ("sum_over_batch_size", "mean", "mean_with_sample_weight"):
        if reduction == "mean_with_sample_weight" and sample_weight is not None:
            loss = reduce_sum(values)
            return divide_no_nan(loss, reduce_sum(cast(sample_weight, loss.dtype)))
        if values._value.size:  # sum / element count: one op instead of three on the hot path
            return reduce_mean(values)
        return reduce_sum(values)  # no elements: 0, where Keras' divide_no_nan also gives 0
    return reduce_sum(values)


def _both_masks(first, second):
    """The elements both masks keep (either alone when the other is None)."""
    if first is None or second is None:
        return second if first is None else first
    return logical_and(cast(first, dtypes.bool), cast(second, dtypes.bool))


def reduce_weighted_values(values, sample_weight=None, mask=None,
                           reduction="sum_over_batch_size", dtype=None):
    """Weight ``values`` by ``sample_weight`` (and ``mask``), then reduce, as Keras 3."""
    reduction = _standardize_reduction(reduction)
    dtype = dtypes.as_dtype(dtype or "float32")
    values = _as(values, dtype)
    if sample_weight is not None:
        sample_weight = _as(sample_weight, dtype)
    if mask is not None:
        mask = cast(mask, dtype)
        if reduction in ("mean", "sum_over_batch_size"):
            # Average over the unmasked elements only.
            total = convert_to_tensor(float(mask._value.size), dtype=dtype)
            mask = mask * divide_no_nan(total, reduce_sum(mask))   # 0 when nothing is valid
        if sample_weight is None:
            sample_weight = mask
        else:
            mask, sample_weight = align_weights(mask, sample_weight)
            sample_weight = sample_weight * mask
    if sample_weight is not None:
        values, sample_weight = align_weights(values, sample_weight)
        values = values * sample_weight
    return reduce_values(values, sample_weight, reduction)


# --- functional forms (one loss per sample) --------------------------------------------------

def mean_squared_error(y_true, y_pred):
    """``mean((y_true - y_pred) ** 2, axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return reduce_mean(square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """``mean(|y_true - y_pred|, axis=-1)``."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return reduce_mean(_abs(y_true - y_pred), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """Quadratic for |error| <= delta, linear beyond: mean over the last axis."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    delta = float(delta)
    error = y_pred - y_true
    abs_error = _abs(error)
    quadratic = 0.5 * square(error)
    linear = delta * abs_error - 0.5 * delta * delta
    return reduce_mean(where(abs_error <= delta, quadratic, linear), axis=-1)


def _last_axis(y_true, y_pred, axis):
    axis = int(axis) % y_pred.ndim
    if axis == y_pred.ndim - 1:
        return y_true, y_pred
    perm = [i for i in range(y_pred.ndim) if i != axis] + [axis]
    return (transpose(y_true, perm) if y_true.ndim == y_pred.ndim else y_true,
            transpose(y_pred, perm))


def _check_same_shape(what, y_true, y_pred, hint=""):
    """Keras 3's check before a cross-entropy: labels and predictions of one shape (the loss
    objects first align ``(N,)`` with ``(N, 1)``; the functions do not, so broadcasting never
    silently pairs every label with every prediction)."""
    true_shape, pred_shape = tuple(y_true.shape), tuple(y_pred.shape)
    received = f"Received: target.shape={true_shape}, output.shape={pred_shape}"
    if len(true_shape) != len(pred_shape):
        raise ValueError(f"{what}: Arguments `target` and `output` must have the same rank "
                         f"(ndim). {received}{hint}")
    if any(a is not None and b is not None and a != b for a, b in zip(true_shape, pred_shape)):
        raise ValueError(f"{what}: Arguments `target` and `output` must have the same shape. "
                         f"{received}{hint}")


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Cross-entropy between one-hot (or soft) labels and predictions along ``axis``."""
    if isinstance(axis, bool):
        raise ValueError(f"axis must be an integer, got {axis!r}")
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    _check_same_shape("categorical_crossentropy", y_true, y_pred,
                      " (integer class ids go with sparse_categorical_crossentropy)"
                      if y_true.ndim == y_pred.ndim - 1 or (y_true.ndim == y_pred.ndim
                                                           and y_true.shape[-1] == 1) else "")
    if label_smoothing:
        n = float(y_true.shape[axis])
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / n
    y_true, y_pred = _last_axis(y_true, y_pred, axis)
    if from_logits:
        return softmax_cross_entropy_with_logits(y_true, y_pred)
    probs = y_pred / reduce_sum(y_pred, axis=-1, keepdims=True)
    probs = clip_by_value(probs, EPSILON, 1.0 - EPSILON)
    return -reduce_sum(y_true * log(probs), axis=-1)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    """Cross-entropy between integer class ids and predictions along ``axis``.

    On probabilities (``from_logits=False``, e.g. a softmax output) the log of the clipped
    probabilities is used as logits, as Keras does. Labels of shape ``[..., 1]`` are squeezed.
    Entries whose label is ``ignore_class`` get a loss of 0.
    """
    y_pred = _t(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = cast(y_pred, "float32")
    y_true = _t(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, -1)
    _, y_pred = _last_axis(y_true, y_pred, axis)
    valid = None
    if ignore_class is not None:
        valid = not_equal(y_true, cast(convert_to_tensor(ignore_class), y_true.dtype))
        y_true = where(valid, y_true, cast(convert_to_tensor(0), y_true.dtype))
    labels = y_true if y_true.dtype.is_integer else cast(y_true, "int64")
    logits = y_pred
    if not from_logits:
        logits = log(clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    result = sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    if valid is not None:
        result = where(valid, result, cast(convert_to_tensor(0.0), result.dtype))
    return result


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Element-wise logistic loss averaged over ``axis``; stable for large logits."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    _check_same_shape("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        elementwise = sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        p = clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
        elementwise = -(y_true * log(p) + (1.0 - y_true) * log(1.0 - p))
    return reduce_mean(elementwise, axis=axis)


def kl_divergence(y_true, y_pred):
    """Kullback-Leibler divergence ``sum(y_true * log(y_true / y_pred))`` over the last axis,
    both clipped to ``[1e-7, 1]`` as in Keras."""
    y_true, y_pred = _pred_and_true(y_true, y_pred)
    y_true = clip_by_value(y_true, EPSILON, 1.0)
    y_pred = clip_by_value(y_pred, EPSILON, 1.0)
    return reduce_sum(y_true * log(y_true / y_pred), axis=-1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
kld = KLD = kullback_leibler_divergence = kl_divergence   # tf.keras's aliases


# --- loss objects ----------------------------------------------------------------------------

def _snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Loss:
    """Base class: subclasses implement ``call(y_true, y_pred)`` returning per-sample losses."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake(type(self).__name__)
        self.reduction = _standardize_reduction(reduction)
        self._dtype = dtypes.as_dtype(dtype or "float32")

    @property
    def dtype(self):
        return self._dtype.name

    def __call__(self, y_true, y_pred, sample_weight=None):
        in_mask = get_mask(y_pred)
        y_pred = _as(y_pred, self._dtype)
        y_true = _as(y_true, self._dtype)
        losses = self.call(y_true, y_pred)
        return reduce_weighted_values(losses, sample_weight=sample_weight,
                                      mask=_both_masks(in_mask, get_mask(losses)),
                                      reduction=self.reduction, dtype=self._dtype)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A Loss from a per-sample function ``fn(y_true, y_pred, **kwargs)``."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(self._fn_kwargs)
        return config


class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error", dtype=None):
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class KLDivergence(LossFunctionWrapper):
    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, reduction=reduction, name=name, dtype=dtype)


class Huber(LossFunctionWrapper):
    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss",
                 dtype=None):
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=delta)


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits = from_logits


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Integer labels against logits or probabilities; ``ignore_class`` entries are masked out
    of the loss and of the ``sum_over_batch_size`` count (Keras 3)."""

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, from_logits=from_logits, ignore_class=ignore_class)
        self.from_logits = from_logits
        self.ignore_class = ignore_class

    def call(self, y_true, y_pred):
        # Labels keep their rank ([N] or [N, 1]); the function squeezes them.
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def __call__(self, y_true, y_pred, sample_weight=None):
        in_mask = get_mask(y_pred)
        if self.ignore_class is None:
            y_true = _t(y_true)
            if not y_true.dtype.is_integer:
                return super().__call__(y_true, y_pred, sample_weight)
            # Integer class ids are used as they are: Keras' round trip through the loss dtype
            # changes no id below 2**24 and costs two casts a step.
            losses = self.call(y_true, _as(y_pred, self._dtype))
            return reduce_weighted_values(losses, sample_weight=sample_weight, mask=in_mask,
                                          reduction=self.reduction, dtype=self._dtype)
        y_pred = _as(y_pred, self._dtype)
        y_true = _as(y_true, self._dtype)
        losses = self.call(y_true, y_pred)
        labels = y_true
        if labels.ndim == y_pred.ndim and labels.shape[-1] == 1:
            labels = squeeze(labels, -1)
        mask = _both_masks(in_mask, not_equal(labels, float(self.ignore_class)))
        return reduce_weighted_values(losses, sample_weight=sample_weight, mask=mask,
                                      reduction=self.reduction, dtype=self._dtype)


_FUNCTIONS = {
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error,
    "MSE": mean_squared_error, "mean_absolute_error": mean_absolute_error,
    "mae": mean_absolute_error, "MAE": mean_absolute_error, "huber": huber,
    "kl_divergence": kl_divergence, "kld": kl_divergence, "KLD": kl_divergence,
    "kullback_leibler_divergence": kl_divergence,
    "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
}
_CLASSES = {c.__name__: c for c in (MeanSquaredError, MeanAbsoluteError, Huber, KLDivergence,
                                    BinaryCrossentropy, CategoricalCrossentropy,
                                    SparseCategoricalCrossentropy)}

# The further losses live in their own modules (they import the helpers above).
from .losses_focal import (BinaryFocalCrossentropy, CategoricalFocalCrossentropy,  # noqa: E402
                           binary_focal_crossentropy, categorical_focal_crossentropy)
from .losses_hinge import (CategoricalHinge, Hinge, SquaredHinge, categorical_hinge,  # noqa: E402
                           hinge, squared_hinge)
from .losses_regression import (MAPE, MSLE, CosineSimilarity, LogCosh,  # noqa: E402
                                MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Poisson,
                                cosine_similarity, log_cosh, logcosh, mape,
                                mean_absolute_percentage_error, mean_squared_logarithmic_error,
                                msle, poisson)

_FUNCTIONS.update({
    "mean_absolute_percentage_error": mean_absolute_percentage_error,
    "mape": mean_absolute_percentage_error, "MAPE": mean_absolute_percentage_error,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error,
    "msle": mean_squared_logarithmic_error, "MSLE": mean_squared_logarithmic_error,
    "log_cosh": log_cosh, "logcosh": log_cosh, "poisson": poisson,
    "cosine_similarity": cosine_similarity, "hinge": hinge, "squared_hinge": squared_hinge,
    "categorical_hinge": categorical_hinge,
    "binary_focal_crossentropy": binary_focal_crossentropy,
    "categorical_focal_crossentropy": categorical_focal_crossentropy,
})
_CLASSES.update({c.__name__: c for c in (
    MeanAbsolutePercentageError, MeanSquaredLogarithmicError, LogCosh, Poisson, CosineSimilarity,
    Hinge, SquaredHinge, CategoricalHinge, BinaryFocalCrossentropy,
    CategoricalFocalCrossentropy)})

from .losses_more import (CategoricalGeneralizedCrossEntropy, Circle, Dice,  # noqa: E402
                          Tversky, categorical_generalized_cross_entropy, circle, dice, tversky)
from .losses_more import CLASSES as _MORE_CLASSES, FUNCTIONS as _MORE_FUNCTIONS  # noqa: E402

_FUNCTIONS.update(_MORE_FUNCTIONS)
_CLASSES.update({c.__name__: c for c in _MORE_CLASSES})
from .losses_ctc import CTC, ctc  # noqa: E402
_FUNCTIONS["ctc"] = ctc
_CLASSES["CTC"] = CTC


def serialize(loss):
    if isinstance(loss, Loss):
        return {"class_name": type(loss).__name__, "config": loss.get_config()}
    return getattr(loss, "__name__", str(loss))


def deserialize(config, custom_objects=None):
    if isinstance(config, str):
        return get(config)
    classes = dict(_CLASSES, **(custom_objects or {}))
    cls = classes.get(config["class_name"])
    if cls is None:
        raise ValueError(f"unknown loss {config['class_name']!r}; known: {sorted(_CLASSES)}")
    return cls.from_config(dict(config.get("config", {})))


def get(identifier):
    """A loss from a name (``"mse"`` → the function, ``"MeanSquaredError"`` → an instance), a
    config dict, a callable or None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier in _FUNCTIONS:
            return _FUNCTIONS[identifier]
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        raise ValueError(f"unknown loss {identifier!r}; known: "
                         f"{sorted(set(_FUNCTIONS) | set(_CLASSES))}")
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"could not interpret loss identifier {identifier!r}")


__all__ = ["Loss", "LossFunctionWrapper", "Reduction", "MeanSquaredError", "MeanAbsoluteError",
           "Huber", "KLDivergence", "kl_divergence", "kld", "KLD", "kullback_leibler_divergence",
           "BinaryCrossentropy", "CategoricalCrossentropy",
           "SparseCategoricalCrossentropy", "mean_squared_error", "mean_absolute_error", "huber",
           "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
           "mse", "mae", "get", "serialize", "deserialize", "reduce_weighted_values",
           "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "LogCosh", "Poisson",
           "CosineSimilarity", "Hinge", "SquaredHinge", "CategoricalHinge",
           "BinaryFocalCrossentropy", "CategoricalFocalCrossentropy",
           "mean_absolute_percentage_error", "mean_squared_logarithmic_error", "log_cosh",
           "logcosh", "poisson", "cosine_similarity", "hinge", "squared_hinge",
           "categorical_hinge", "binary_focal_crossentropy", "categorical_focal_crossentropy",
           "mape", "MAPE", "msle", "MSLE", "Dice", "Tversky", "Circle",
           "CategoricalGeneralizedCrossEntropy", "dice", "tversky", "circle",
           "categorical_generalized_cross_entropy", "CTC", "ctc"]
