"""``Dataset.from_generator``: elements from a Python generator, conformed to
``output_signature`` (TF converts each value to its spec's dtype and checks its shape)."""
import numpy as np

from .. import backend as B, dtypes, string_tensors
from ..nest import flatten
from ..ops.registry import InvalidArgumentError
from ..tensor import Tensor
from ..tensor_spec import TensorSpec
from . import composite
from .dataset import Dataset, _host, _structure

__all__ = ["signature_of"]


def signature_of(types, shapes):
    """``output_types`` / ``output_shapes`` (TF's older arguments) as a nest of TensorSpecs."""
    if isinstance(types, dict):
        return {k: signature_of(t, None if shapes is None else shapes[k])
                for k, t in types.items()}
    if isinstance(types, (tuple, list)):
        return tuple(signature_of(t, None if shapes is None else shapes[i])
                     for i, t in enumerate(types))
    return TensorSpec(None if shapes is None else tuple(shapes), types)


def _conform(spec, value, where):
    """A generator's element in the structure and dtypes of ``output_signature`` (TF converts
    each value to its spec's dtype and checks its shape)."""
    if isinstance(spec, (composite.SparseTensorSpec, composite.RaggedTensorSpec)):
        if not spec.is_compatible_with(value):
            raise TypeError(f"Dataset.from_generator: {where} must match {spec}, got "
                            f"{value!r:.80}")
        return value
    if isinstance(spec, TensorSpec):
        if spec.dtype == dtypes.string:   # strings stay host arrays of bytes on every backend
            array = string_tensors.bytes_array(value, f"Dataset.from_generator: {where}")
        else:
            array = np.asarray(_host(value) if isinstance(value, Tensor) else value,
                               dtype=spec.dtype.np)
        if not spec.is_compatible_with(array):
            raise InvalidArgumentError(
                f"Dataset.from_generator: {where} has shape {array.shape}, but "
                f"output_signature declares {spec.shape} ({spec})")
        if spec.dtype == dtypes.string:
            return string_tensors.string_tensor(array)
        return Tensor(B.xp.asarray(array))
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise TypeError(f"Dataset.from_generator: {where} must be a dict with keys "
                            f"{sorted(spec)}, got {value!r:.80}")
        return {k: _conform(spec[k], value[k], f"{where}[{k!r}]") for k in spec}
    if not isinstance(value, (tuple, list)) or len(value) != len(spec):
        raise TypeError(f"Dataset.from_generator: {where} must be a sequence of {len(spec)} "
                        f"values as output_signature declares, got {value!r:.80}")
    return tuple(_conform(s, v, f"{where}[{i}]") for i, (s, v) in enumerate(zip(spec, value)))


class _Generator(Dataset):
    def __init__(self, generator, args, signature):
        self.generator, self.args, self.signature = generator, args, signature
        self._ragged_rows = signature is not None and any(
            isinstance(s, composite.RaggedTensorSpec) for s in flatten(signature))

    def _iterate(self):
        for element in self.generator(*self.args):
            if self.signature is None:
                yield _structure(element)
            else:
                yield _conform(self.signature, element, "an element")

    def _element_spec(self):
        return self.signature if self.signature is not None else super()._element_spec()
