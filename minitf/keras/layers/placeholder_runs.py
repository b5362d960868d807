"""A layer's output specs for KerasTensor inputs, found by running it on placeholder zeros
(``Layer.compute_output_spec`` for layers without their own output-shape rule)."""
from ..._state import PauseRecording
from ...nest import flatten, map_structure
from ...tensor import Tensor, TensorShape
from .symbolic import KerasTensor, _is_spec, _map_leaves
from .tracking import _CTX


def placeholder_output_specs(layer, inputs, args, kwargs):
    """The output specs of a run on placeholders. Where an input has an unknown dimension
    past the batch one (a sequence length), the layer runs on two sizes of it (16 and
    32) and output dimensions that follow it stay unknown, as Keras's symbolic call
    finds them. A layer that cannot take those sizes (a position embedding of 8
    positions), and every other layer, runs once with unknown dimensions as 1."""
    leaves = [t for t in flatten([inputs, list(args)]) if isinstance(t, KerasTensor)]
    batch_unknown = any(t.shape and t.shape[0] is None for t in leaves)
    if not any(None in tuple(t.shape)[1:] for t in leaves):
        return _run_on_placeholders(layer, inputs, args, kwargs, 1, batch_unknown)
    try:
        first = _run_on_placeholders(layer, inputs, args, kwargs, 16, batch_unknown)
        second = _run_on_placeholders(layer, inputs, args, kwargs, 32, batch_unknown)
    except Exception:  # noqa: BLE001 - a real error is raised again by the run below
        return _run_on_placeholders(layer, inputs, args, kwargs, 1, batch_unknown)

    others = []
    _map_leaves(others.append, second, _is_spec)
    others = iter(others)

    def merge(spec):
        other = next(others, spec)
        if len(other[0]) != len(spec[0]):
            return spec
        return (TensorShape(x if x == y else None for x, y in zip(spec[0], other[0])),
                spec[1])

    return _map_leaves(merge, first, _is_spec)


def _run_on_placeholders(layer, inputs, args, kwargs, unknown, batch_unknown):
    """One run of ``layer`` on zeros (unknown dimensions past the batch one as ``unknown``),
    without recording gradients or updating statistics; the specs of its outputs."""
    from . import masking   # (masking imports Layer)

    def zeros(t):
        return masking.placeholder(t, unknown) if isinstance(t, KerasTensor) else t

    real = map_structure(zeros, inputs)
    real_args = map_structure(zeros, list(args))
    kw = dict(kwargs)
    kw["training"] = False  # never update statistics with placeholder data
    outer, _CTX.placeholder_run = _CTX.placeholder_run, True
    try:
        with PauseRecording():
            out = layer(real, *real_args, **kw)
    finally:
        _CTX.placeholder_run = outer
    masking.note_placeholder_outputs(inputs, out)

    def spec(t):
        shape = tuple(t.shape)
        if batch_unknown and shape:
            shape = (None,) + shape[1:]
        return (TensorShape(shape), t.dtype)

    return _map_leaves(spec, out, lambda t: isinstance(t, Tensor))
