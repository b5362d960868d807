"""A ``Dataset.map``'s ``element_spec``.

TF traces the function on placeholders shaped like the input spec (None dims unknown). Here
the function runs on the first input element and once more on a probe: that element with
every None dim of the input spec resized (to 2, or 3 when it is 2). An output dim that differs
between the two runs depends on an unknown input dim and is None; so is one that differs on
the second element (a shape that depends on values, like ``tf.range(n)``); ``set_shape`` calls on the
returned tensors (during the first run) then fix dims, as TF's static shapes. If the probe
fails, a leading output dim equal to a None leading input dim is None. The global random
generator is restored afterwards, so reading element_spec draws nothing.
"""
import numpy as np

from .. import backend as B
from ..nest import flatten, pack_sequence_as
from ..tensor import Tensor
from ..tensor_spec import TensorSpec
from .dataset import _apply, _dims, _merge_specs, _spec


def _probe_leaf(t, spec):
    if not isinstance(t, Tensor) or not isinstance(spec, TensorSpec):
        return t, False
    dims = (None,) * t.ndim if spec._dims is None else _dims(spec)
    if len(dims) != t.ndim or None not in dims:
        return t, False
    value = t._value
    xp = np if isinstance(value, np.ndarray) else B.xp
    for axis, d in enumerate(dims):
        if d is None:
            n = value.shape[axis]
            m = 3 if n == 2 else 2
            if n == 0:
                value = xp.zeros(value.shape[:axis] + (m,) + value.shape[axis + 1:], value.dtype)
            else:
                value = xp.take(value, xp.minimum(xp.arange(m), n - 1), axis=axis)
    return Tensor(value), True


def _run(fn, element, strict):
    """``fn`` on ``element`` and the ``set_shape`` calls it made (checked only if strict)."""
    from ..tensor import set_shape_hook
    calls = []

    def hook(tensor, shape):
        calls.append((tensor, shape))
        return not strict       # the probe's sizes are not real: no check
    saved, set_shape_hook.hook = getattr(set_shape_hook, "hook", None), hook
    try:
        return _apply(fn, element), calls
    finally:
        set_shape_hook.hook = saved


def _leading_rule(specs, in_specs, leaves):
    """Fallback: a leading dim the size of an input's None leading dim is None."""
    sizes = {int(t._value.shape[0]) for t, s in zip(leaves, in_specs)
             if isinstance(t, Tensor) and isinstance(s, TensorSpec) and t.ndim
             and (s._dims is None or s._dims[0] is None)}
    return [TensorSpec((None,) + _dims(s)[1:], s.dtype)
            if isinstance(s, TensorSpec) and s._dims and s._dims[0] in sizes else s
            for s in specs]


def _refine(spec, shapes):
    """``spec`` with the dims that ``set_shape`` calls stated."""
    for shape in shapes:
        dims = _dims(spec)
        if shape.rank is None:
            continue
        if dims is None or len(dims) != shape.rank:
            dims = (None,) * shape.rank
        spec = TensorSpec(tuple(d if d is not None else x for d, x in zip(shape, dims)),
                          spec.dtype)
    return spec


def map_spec(fn, source):
    """The element_spec of ``source.map(fn)`` (see the module docstring)."""
    from ..ops import random_ops
    in_specs = list(flatten(source._element_spec()))
    keeps_state = random_ops._state["rng"] is not None and B.get_backend() != "cupy"
    saved = random_ops.get_state() if keeps_state else None
    try:
        elements = iter(source._iterate())
        first = next(elements, None)
        if first is None:
            raise ValueError("element_spec: the dataset is empty, its element structure "
                             "cannot be inspected")
        out, calls = _run(fn, first, strict=True)
        outs = list(flatten(out))
        specs = [_spec(t) for t in outs]
        second = next(elements, None)
        if second is not None:      # a dim that differs between elements depends on values
            try:
                specs2 = [_spec(t) for t in flatten(_run(fn, second, strict=False)[0])]
                if len(specs2) == len(specs):
                    specs = [_merge_specs(a, b) for a, b in zip(specs, specs2)]
            except Exception:  # noqa: BLE001 - iterating reports it
                pass
        leaves = list(flatten(first))
        probed = [_probe_leaf(t, s) for t, s in zip(leaves, in_specs)] \
            if len(in_specs) == len(leaves) else []
        if any(changed for _, changed in probed):
            try:
                out2, _ = _run(fn, pack_sequence_as(first, [t for t, _ in probed]), False)
                specs2 = [_spec(t) for t in flatten(out2)]
                if len(specs2) != len(specs):
                    raise ValueError("the structure changed")
                specs = [_merge_specs(a, b) for a, b in zip(specs, specs2)]
            except Exception:  # noqa: BLE001 - the function may need the real sizes
                specs = _leading_rule(specs, in_specs, leaves)
    finally:
        if saved is not None:
            random_ops.set_state(saved)
    # an input component returned unchanged keeps its input's spec, as a trace would give
    passed = {id(leaf): spec for leaf, spec in zip(flatten(first), in_specs)}
    specs = [passed.get(id(t), s) for t, s in zip(outs, specs)]
    stated = {}
    for tensor, shape in calls:
        stated.setdefault(id(tensor), []).append(shape)
    specs = [_refine(s, stated.get(id(t), ())) if isinstance(s, TensorSpec) else s
             for t, s in zip(outs, specs)]
    return pack_sequence_as(out, specs)
