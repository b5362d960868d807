"""Keras masking: the ``Masking`` layer, the table of tensor masks and their propagation.

A mask marks which time steps of a ``(batch, steps, ...)`` tensor are real (True) and which are
padding (False). Keras keeps it on the tensor as ``_keras_mask``; minitf keeps it in the table of
``minitf.keras.keras_mask`` (``get_mask(t)`` / ``set_mask``, or ``t._keras_mask``).

Propagation follows Keras 3's ``Layer.__call__``:

* a layer whose ``call`` takes ``mask`` and that is called with one tensor argument (or one
  list of tensors) gets the mask(s) of that argument as ``mask=`` unless given explicitly;
* after the call, a layer that ``supports_masking`` (set explicitly, or because it overrides
  ``compute_mask``) attaches ``compute_mask(inputs, previous_mask)`` to its outputs that have
  no mask yet; the default ``compute_mask`` passes the input's mask through (Dense, Dropout...);
* a layer that does not support masking and receives a masked input warns and drops the mask.

``Embedding(mask_zero=True)`` and ``Masking`` create masks, recurrent layers skip masked steps
(the states keep their values, the output repeats the previous one) and pass the mask on only
with ``return_sequences``; ``GlobalAveragePooling1D`` averages the unmasked steps.
"""
import warnings

from ... import dtypes
from ...nest import flatten, map_structure, pack_sequence_as
from ...ops import array_ops, math_ops, reduce_ops
from ...ops.convert import convert_to_tensor
from ...tensor import Tensor
from ..keras_mask import any_masks, get_mask, set_mask
from .base import Layer

__all__ = ["Masking", "get_mask", "set_mask"]


def _structure_masks(value):
    """The masks of the tensors in ``value`` in the same structure, or None when none has one."""
    if isinstance(value, (list, tuple)):
        masks = [get_mask(v) for v in value]
        return masks if any(m is not None for m in masks) else None
    if isinstance(value, dict):
        masks = {k: get_mask(v) for k, v in value.items()}
        return masks if any(m is not None for m in masks.values()) else None
    return get_mask(value)


_TAKES_MASK = {}


def _call_takes_mask(layer):
    cls = type(layer)
    found = _TAKES_MASK.get(cls)
    if found is None:
        import inspect
        try:
            found = "mask" in inspect.signature(cls.call).parameters
        except (TypeError, ValueError):
            found = False
        _TAKES_MASK[cls] = found
    return found


def supports_masking(layer):
    """Keras' rule: set explicitly, else whether the layer overrides ``compute_mask``."""
    explicit = layer.__dict__.get("_supports_masking")
    if explicit is not None:
        return explicit
    return type(layer).compute_mask is not Layer.compute_mask


def fill_mask(layer, raw, inputs, args, kwargs):
    """Before ``layer.call``: pass the input's mask as ``mask=`` when the call takes one (and
    the inputs are its only tensor argument), keep it on inputs converted by ``__call__``, and
    return the mask the outputs inherit (``previous_mask``)."""
    explicit = kwargs.get("mask")
    if not any_masks():
        return explicit
    if inputs is not raw:   # cast or converted: the mask stays with the data
        for old, new in zip(flatten(raw), flatten(inputs)):
            if new is not old and get_mask(old) is not None and isinstance(new, Tensor):
                set_mask(new, get_mask(old))
    if explicit is not None:
        return explicit
    previous = _structure_masks(raw)
    if previous is not None and _call_takes_mask(layer) and not any(
            isinstance(t, Tensor) for t in flatten([args, list(kwargs.values())])):
        kwargs["mask"] = previous
    return previous


def set_output_masks(layer, inputs, outputs, previous_mask):
    """After ``layer.call``: attach ``layer.compute_mask(inputs, previous_mask)`` to the outputs
    (Keras' ``_set_mask_metadata``), or warn that a layer without masking drops the mask."""
    if previous_mask is None and type(layer).compute_mask is Layer.compute_mask:
        return
    if not layer.supports_masking:
        if any(m is not None for m in flatten(previous_mask)):
            warnings.warn(f"Layer '{layer.name}' (of type {type(layer).__name__}) was passed "
                          f"an input with a mask attached to it. However, this layer does not "
                          f"support masking and will therefore destroy the mask information. "
                          f"Downstream layers will not see the mask.", stacklevel=3)
        return
    flat_outputs = [t for t in flatten(outputs)]
    if all(get_mask(t) is not None for t in flat_outputs):
        return
    masks = layer.compute_mask(inputs, previous_mask)
    if masks is None:
        return
    for tensor, mask in zip(flat_outputs, flatten(masks)):
        if mask is not None and isinstance(tensor, Tensor) and get_mask(tensor) is None:
            set_mask(tensor, mask)


# --- masks on KerasTensors (functional models) -------------------------------------------------
# A layer called on KerasTensors runs once on placeholder zeros to find its output shapes. A
# masked KerasTensor's zeros carry an all-True mask, so the layer's call gets a mask (Keras
# passes a symbolic one) and the masks of its outputs become bool KerasTensors.

_CAPTURED = [None]   # the output masks of the latest placeholder run, while one is captured


def _concrete(shape, unknown=1):
    """``shape`` with an unknown batch dimension as 1 and other unknown ones as ``unknown``."""
    return tuple((1 if i == 0 else unknown) if d is None else d for i, d in enumerate(shape))


def placeholder(keras_tensor, unknown=1):
    """Zeros standing in for ``keras_tensor`` (an unknown batch dimension as 1, other unknown
    dimensions as ``unknown``), with an all-True mask when the KerasTensor is masked."""
    # array_ops.zeros: empty strings (host arrays) for a string KerasTensor, as TF's zeros
    zeros = array_ops.zeros(_concrete(keras_tensor.shape, unknown), dtype=keras_tensor.dtype)
    mask = keras_tensor._keras_mask
    if mask is not None:
        set_mask(zeros, array_ops.ones(_concrete(mask.shape, unknown), dtype=dtypes.bool))
    return zeros


def note_placeholder_outputs(inputs, outputs):
    """After a placeholder run: remember its outputs' masks (a list, one per output)."""
    _CAPTURED[0] = _mask_placeholders(inputs, [get_mask(t) if isinstance(t, Tensor) else None
                                               for t in flatten(outputs)])


def _mask_placeholders(inputs, masks):
    """Masks of placeholder outputs as bool KerasTensors; a mask dimension whose input
    dimension is unknown (the batch, a variable length) is unknown too."""
    from .symbolic import KerasTensor
    first = next((t for t in flatten(inputs) if isinstance(t, KerasTensor)), None)
    known = tuple(first.shape) if first is not None else ()
    out = []
    for mask in masks:
        if mask is not None:
            shape = tuple(None if i < len(known) and known[i] is None else d
                          for i, d in enumerate(mask.shape))
            mask = KerasTensor(shape, dtypes.bool)
        out.append(mask)
    return out


def start_capture():
    previous, _CAPTURED[0] = _CAPTURED[0], None
    return previous


def capture_symbolic_masks(masks):
    """Give the symbolic call under way these output masks (KerasTensors or None, one per
    output): for a layer whose output specs come from symbolic calls of other layers."""
    _CAPTURED[0] = list(masks)


def attach_symbolic_masks(layer, inputs, outputs, previous):
    """Set the ``_keras_mask`` of a symbolic call's output KerasTensors: the masks of the
    placeholder run, or else (a layer with its own output shape rule) the input's mask passed
    through by a layer that supports masking with the default ``compute_mask``."""
    captured, _CAPTURED[0] = _CAPTURED[0], previous
    if captured is None:
        captured = _symbolic_compute_mask(layer, inputs)
    for tensor, mask in zip(flatten(outputs), captured):
        if mask is not None and hasattr(tensor, "_keras_mask"):
            tensor._keras_mask = mask


def _symbolic_compute_mask(layer, inputs):
    """``layer.compute_mask`` on placeholders of ``inputs`` (zeros, all-True masks), as mask
    KerasTensors: for layers whose output shapes come from their own rule, not a run."""
    from .symbolic import KerasTensor
    if not layer.supports_masking:
        return []
    structure = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    if (all(getattr(t, "_keras_mask", None) is None for t in structure)
            and type(layer).compute_mask is Layer.compute_mask):
        return []
    real = [placeholder(t) if isinstance(t, KerasTensor) else t for t in structure]
    if not isinstance(inputs, (list, tuple)):
        real = real[0]
    from ..._state import PauseRecording
    with PauseRecording():
        found = layer.compute_mask(real, _structure_masks(real))
    return _mask_placeholders(inputs, flatten(found))


def carry_mask(original, converted, mask=None):
    """``converted`` (a model input conformed to its ``Input``) with ``mask``, or else the
    mask of ``original``, attached."""
    mask = get_mask(original) if mask is None else mask
    if mask is not None and isinstance(converted, Tensor):
        set_mask(converted, mask)
    return converted


# --- helpers for the layers that use a mask ----------------------------------------------------

def bool_mask(mask):
    """``mask`` as a bool Tensor (Keras casts other dtypes: nonzero = keep)."""
    mask = mask if isinstance(mask, Tensor) else convert_to_tensor(mask)
    return mask if mask.dtype == dtypes.bool else math_ops.cast(mask, dtypes.bool)


def rnn_step_masks(layer, mask, batch, steps, go_backwards):
    """A ``(batch, 1)`` bool tensor per time step, in processing order, from a ``(batch,
    steps)`` mask (``go_backwards`` reverses it with the sequence)."""
    mask = bool_mask(mask)
    if tuple(mask.shape) != (batch, steps):
        raise ValueError(f"{type(layer).__name__} {layer.name!r}: mask must have shape (batch, "
                         f"timesteps) = {(batch, steps)}, got {tuple(mask.shape)}")
    columns = array_ops.unstack(array_ops.expand_dims(mask, -1), axis=1)
    return columns[::-1] if go_backwards else columns


def masked_rnn_step(step, step_masks, zero_output_for_mask):
    """Wrap ``step(x_t, states) -> (output, states)`` so that at a masked step the states keep
    their values and the output is the previous (masked) output, zeros before the first one or
    always with ``zero_output_for_mask`` (Keras' TensorFlow-backend rule). The wrapped step must
    be called once per step, in processing order."""
    masks = iter(step_masks)
    previous = [None]

    def where(keep, new, old):
        rank = len(new.shape)
        if rank > 2:   # states or outputs of more than one dimension an example
            keep = array_ops.reshape(keep, (-1,) + (1,) * (rank - 1))
        return math_ops.where(keep, new, old)

    def masked(x_t, states):
        keep = next(masks)
        output, new_states = step(x_t, states)
        new_states = [where(keep, new, old) for new, old in zip(new_states, states)]
        fallback = previous[0]
        if fallback is None or zero_output_for_mask:
            fallback = map_structure(array_ops.zeros_like, output)
        output = pack_sequence_as(output, [where(keep, o, f) for o, f in
                                           zip(flatten(output), flatten(fallback))])
        previous[0] = output
        return output, new_states

    return masked


def masked_mean(inputs, mask, axis, keepdims):
    """The mean over ``axis`` of the steps where ``mask`` ``(batch, steps)`` holds (Keras'
    ``GlobalAveragePooling1D``: a row with no unmasked step divides 0 by 0)."""
    keep = array_ops.expand_dims(bool_mask(mask), -1)
    inputs = math_ops.where(keep, inputs, array_ops.zeros_like(inputs))
    weights = math_ops.cast(keep, inputs.dtype)
    return (reduce_ops.reduce_sum(inputs, axis=axis, keepdims=keepdims) /
            reduce_ops.reduce_sum(weights, axis=axis, keepdims=keepdims))


def masked_moments(inputs, mask, axes, keepdims):
    """Mean and biased variance over ``axes`` of the elements whose position ``mask`` (the
    inputs' shape without the last axis) keeps: Keras 3's masked ``BatchNormalization``
    statistics, with its ``1e-7`` in the divisor."""
    keep = array_ops.broadcast_to(array_ops.expand_dims(bool_mask(mask), -1),
                                  array_ops.shape(inputs))
    zeros = array_ops.zeros_like(inputs)
    count = reduce_ops.reduce_sum(math_ops.cast(keep, inputs.dtype), axis=axes, keepdims=True)
    count = count + 1e-7
    mean = reduce_ops.reduce_sum(math_ops.where(keep, inputs, zeros), axis=axes,
                                 keepdims=True) / count
    spread = math_ops.square(math_ops.where(keep, inputs - mean, zeros))
    variance = reduce_ops.reduce_sum(spread, axis=axes, keepdims=True) / count
    if not keepdims:
        mean, variance = (array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes))
    return mean, variance


def attention_mask_from_inputs(query, value, key, attention_mask, query_mask=None,
                               value_mask=None, key_mask=None):
    """MultiHeadAttention's automatic mask (Keras 3): ``attention_mask`` combined with the
    masks of ``query`` ``(B, T)``, ``value`` and ``key`` ``(B, S)`` as ``(B, T, S)``: the
    ``*_mask`` arguments where given, else the tensors' own masks."""
    query_mask = get_mask(query) if query_mask is None else query_mask
    value_mask = get_mask(value) if value_mask is None else value_mask
    if key_mask is None:
        key_mask = None if key is None or key is value else get_mask(key)
    if query_mask is None and value_mask is None and key_mask is None:
        return attention_mask
    auto = None
    if query_mask is not None:
        auto = array_ops.expand_dims(bool_mask(query_mask), -1)       # (B, T, 1)
    for mask in (value_mask, key_mask):
        if mask is not None:
            mask = array_ops.expand_dims(bool_mask(mask), -2)         # (B, 1, S)
            auto = mask if auto is None else math_ops.logical_and(auto, mask)
    if attention_mask is None:
        return auto
    return math_ops.logical_and(bool_mask(attention_mask), auto)


# --- the Masking layer -------------------------------------------------------------------------

class Masking(Layer):
    """Mask the time steps whose features all equal ``mask_value`` (Keras' ``Masking``).

    The output is the input with masked steps set to 0, and carries a ``(batch, steps)`` mask
    (True where some feature differs from ``mask_value``) that later layers use: recurrent
    layers skip the masked steps.

        x = minitf.constant([[[1., 2.], [0., 0.]]])
        y = Masking(mask_value=0.0)(x)
        get_mask(y)      # [[True, False]]
    """

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def _keep(self, inputs, keepdims):
        value = convert_to_tensor(self.mask_value, dtype=inputs.dtype)
        return reduce_ops.reduce_any(math_ops.not_equal(inputs, value), axis=-1,
                                     keepdims=keepdims)

    def call(self, inputs):
        keep = self._keep(inputs, keepdims=True)
        outputs = math_ops.where(keep, inputs, array_ops.zeros_like(inputs))
        set_mask(outputs, array_ops.squeeze(keep, -1))
        return outputs

    def compute_mask(self, inputs, mask=None):
        return self._keep(inputs, keepdims=False)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
