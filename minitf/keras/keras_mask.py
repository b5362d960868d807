"""The Keras masks attached to tensors (Keras' ``tensor._keras_mask``).

minitf Tensors have fixed slots, so masks live in a side table keyed by the tensor and dropped
when the tensor is freed. ``Tensor._keras_mask`` reads and writes this table, so Keras code that
inspects or sets ``x._keras_mask`` works unchanged. Layers propagate masks
(``minitf.keras.layers.masking``); losses and mean metrics weight by the mask of ``y_pred``.
"""
import weakref

from ..ops.convert import convert_to_tensor
from ..tensor import Tensor

__all__ = ["get_mask", "set_mask"]

_MASKS = {}   # id(tensor) -> its mask tensor, while the tensor lives


def any_masks():
    """Whether any live tensor has a mask (the cheap test before looking one up)."""
    return bool(_MASKS)


def get_mask(tensor):
    """The Keras mask attached to ``tensor`` (Keras' ``tensor._keras_mask``), or None."""
    return _MASKS.get(id(tensor)) if _MASKS else None


def set_mask(tensor, mask):
    """Attach ``mask`` (a bool tensor, or None to remove it) to ``tensor``."""
    key = id(tensor)
    if mask is None:
        _MASKS.pop(key, None)
        return
    if not isinstance(tensor, Tensor):
        raise TypeError(f"set_mask: masks attach to minitf Tensors, got "
                        f"{type(tensor).__name__}")
    if key not in _MASKS:
        weakref.finalize(tensor, _MASKS.pop, key, None)
    _MASKS[key] = mask if isinstance(mask, Tensor) else convert_to_tensor(mask)


def _delete_mask(tensor):
    set_mask(tensor, None)


# ``del x._keras_mask`` removes it, as Keras code does to stop a mask (TF's Transformer tutorial)
Tensor._keras_mask = property(get_mask, set_mask, _delete_mask,
                              doc="The Keras mask of this tensor, or None.")
