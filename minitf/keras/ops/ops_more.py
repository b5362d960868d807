"""More of ``keras.ops``: ``slogdet``, ``vectorize`` and einops-style ``rearrange``, built
from minitf ops so gradients flow through them.

    sign, logabsdet = keras.ops.slogdet(x)                    # det = sign * exp(logabsdet)
    matvec = keras.ops.vectorize(keras.ops.matmul, signature="(m,n),(n)->(m)")
    keras.ops.rearrange(images, "b (h h1) (w w1) c -> b h w (c h1 w1)", h1=2, w1=2)
"""
import functools as _functools
import math as _math
import re as _re

import numpy as _np

from ...ops import array_ops as _a, math_ops as _m
from ...ops.convert import convert_to_tensor as _convert
from ...ops.decomposition_ops import slogdet as _tf_slogdet
from ...ops.math_ops import cast as _cast

__all__ = ["slogdet", "vectorize", "rearrange"]


def slogdet(x):
    """``(sign, logabsdet)`` of each innermost square matrix of ``x``: ``det = sign *
    exp(logabsdet)`` without overflow. Integer input is computed in float32. Only
    ``logabsdet`` has a gradient."""
    x = _convert(x)
    if not x.dtype.is_floating:
        x = _cast(x, "float32")
    sign, log_abs = _tf_slogdet(x)
    return sign, log_abs


# --- vectorize -----------------------------------------------------------------------------------

_DIMENSIONS = r"(?:\w+(?:,\w+)*)?"
_ARGUMENTS = rf"\({_DIMENSIONS}\)(?:,\({_DIMENSIONS}\))*"


def _parse_signature(signature):
    """``([core dims of each input], [core dims of each output])`` of a gufunc signature
    such as ``"(m,n),(n)->(m)"``."""
    compact = _re.sub(r"\s+", "", str(signature))
    if not _re.fullmatch(rf"{_ARGUMENTS}->{_ARGUMENTS}", compact):
        raise ValueError(f"vectorize: signature={signature!r} is not a generalized ufunc "
                         f"signature such as '(m,n),(n)->(m)'")

    def groups(side):
        return [tuple(_re.findall(r"\w+", g)) for g in _re.findall(r"\(([^)]*)\)", side)]
    inputs, outputs = compact.split("->")
    return groups(inputs), groups(outputs)


def _note_core_sizes(sizes, shape, core, what):
    """Record the sizes of ``core``'s named dimensions (the last ones of ``shape``); a
    ValueError where one differs from its size elsewhere."""
    if len(shape) < len(core):
        raise ValueError(f"vectorize: {what} has shape {tuple(shape)}, with fewer dimensions "
                         f"than its core dimensions {core}")
    for name, size in zip(core, tuple(shape)[len(shape) - len(core):]):
        if sizes.setdefault(name, size) != size:
            raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: "
                             f"{size} in {what}, {sizes[name]} elsewhere")


def vectorize(pyfunc, *, excluded=None, signature=None):
    """``pyfunc`` applied to every element (``signature``: every core sub-array) of its
    broadcast arguments, results stacked back into that broadcast shape (numpy's
    ``vectorize``; Keras's). ``excluded`` names positional indices or keyword names passed to
    ``pyfunc`` unchanged; ``None`` arguments are too. ``pyfunc`` runs once per element, as
    Python, on minitf tensors, so gradients flow through it."""
    if not callable(pyfunc):
        raise ValueError(f"vectorize: pyfunc must be callable, got {pyfunc!r}")
    excluded = frozenset(excluded or ())
    if signature is not None:
        input_core, output_core = _parse_signature(signature)
    else:
        input_core = output_core = None

    @_functools.wraps(pyfunc)
    def vectorized(*args, **kwargs):
        from ..layers.symbolic import KerasTensor
        if any(isinstance(v, KerasTensor) for v in list(args) + list(kwargs.values())):
            from ..layers.op_layers import apply_symbolic   # a layer of a functional model
            return apply_symbolic(vectorized, args, kwargs)
        names = [i for i, v in enumerate(args) if i not in excluded and v is not None] + \
            [k for k, v in kwargs.items() if k not in excluded and v is not None]
        values = [_convert(args[n] if isinstance(n, int) else kwargs[n]) for n in names]
        cores = input_core if input_core is not None else [()] * len(values)
        if len(cores) != len(values):
            raise TypeError(f"vectorize: signature={signature!r} takes {len(cores)} "
                            f"vectorized argument(s), got {len(values)}")

        sizes, loop_shapes = {}, []
        for name, value, core in zip(names, values, cores):
            _note_core_sizes(sizes, value.shape, core, f"argument {name!r}")
            loop_shapes.append(tuple(value.shape)[:len(value.shape) - len(core)])
        try:
            loop_shape = _np.broadcast_shapes(*loop_shapes)
        except ValueError:
            raise ValueError(f"vectorize: the arguments' loop shapes {loop_shapes} do not "
                             f"broadcast together") from None
        count = _math.prod(loop_shape)
        if count == 0:
            raise ValueError(f"vectorize: nothing to call pyfunc on: the arguments broadcast "
                             f"to the empty loop shape {loop_shape}")
        columns = []
        for value, core in zip(values, cores):
            full = loop_shape + tuple(value.shape)[len(value.shape) - len(core):]
            if tuple(value.shape) != full:
                value = _a.broadcast_to(value, full)
            columns.append(_a.unstack(_a.reshape(value, (count,) + full[len(loop_shape):])))

        def call(i):
            call_args, call_kwargs = list(args), dict(kwargs)
            for name, column in zip(names, columns):
                if isinstance(name, int):
                    call_args[name] = column[i]
                else:
                    call_kwargs[name] = column[i]
            return pyfunc(*call_args, **call_kwargs)

        results = [call(i) for i in range(count)]
        return _stack_results(results, loop_shape, output_core, dict(sizes), signature)

    return vectorized


def _stack_results(results, loop_shape, output_core, sizes, signature):
    several = isinstance(results[0], tuple)
    if output_core is not None and len(output_core) > 1 and not several:
        raise TypeError(f"vectorize: signature={signature!r} has {len(output_core)} outputs, "
                        f"so pyfunc must return a tuple; got {type(results[0]).__name__}")
    per_call = [[_convert(v) for v in (r if several else (r,))] for r in results]
    cores = output_core if output_core is not None else [()] * len(per_call[0])
    if len(per_call[0]) != len(cores):
        raise TypeError(f"vectorize: pyfunc returned {len(per_call[0])} outputs, signature="
                        f"{signature!r} expects {len(cores)}")
    outputs = []
    for k, core in enumerate(cores):
        for outs in per_call:
            shape = tuple(outs[k].shape)
            if len(shape) != len(core):
                raise ValueError(f"vectorize: output {k} of pyfunc has shape {shape}, but its "
                                 f"core dimensions are {core}"
                                 + ("" if signature else " (without a signature pyfunc must "
                                    "return scalars)"))
            _note_core_sizes(sizes, shape, core, f"output {k}")
        stacked = _a.stack([outs[k] for outs in per_call])
        outputs.append(_a.reshape(stacked, loop_shape + tuple(stacked.shape[1:])))
    return tuple(outputs) if several else outputs[0]


# --- rearrange -----------------------------------------------------------------------------------

def _parse_side(side, pattern):
    """The axes of one side of a rearrange pattern: one list of names per dimension (a
    parenthesized group has several)."""
    axes = []
    for token in _re.findall(r"\([^()]*\)|[^\s()]+|[()]", side):
        if token.startswith("(") and token.endswith(")") and len(token) > 1:
            names = token[1:-1].split()
        else:
            names = [token]
        for name in names:
            if name == "...":
                raise ValueError(f"rearrange: pattern {pattern!r} uses an ellipsis ('...'), "
                                 f"which is not supported; name every axis")
            if not _re.fullmatch(r"[A-Za-z_]\w*", name):
                raise ValueError(f"rearrange: pattern {pattern!r} has the axis {name!r}; axes "
                                 f"are identifiers, alone or grouped in parentheses")
        if not names:
            raise ValueError(f"rearrange: pattern {pattern!r} has an empty group '()', which "
                             f"is not supported")
        axes.append(names)
    return axes


def rearrange(tensor, pattern, **axes_lengths):
    """The axes of ``tensor`` reordered, merged and split as the einops ``pattern`` says
    (``"b h w c -> b (h w) c"``, ``"b (h h1) w -> b h (h1 w)"`` with ``h1=2``): a reshape
    that splits grouped input axes (``axes_lengths`` gives all but one size per group), a
    transpose, and a reshape that merges grouped output axes."""
    tensor = _convert(tensor)
    parts = _re.split(r"\s*->\s*", str(pattern).strip())
    if len(parts) != 2:
        raise ValueError(f"rearrange: pattern must have the form 'inputs -> outputs', got "
                         f"{pattern!r}")
    inputs, outputs = (_parse_side(p, pattern) for p in parts)
    shape = tuple(tensor.shape)
    if len(inputs) != len(shape):
        raise ValueError(f"rearrange: pattern {pattern!r} names {len(inputs)} input axes, but "
                         f"the tensor has rank {len(shape)} (shape {shape})")
    in_names = [n for group in inputs for n in group]
    out_names = [n for group in outputs for n in group]
    for side, names in (("input", in_names), ("output", out_names)):
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"rearrange: pattern {pattern!r} repeats the {side} axes "
                             f"{repeated}")
    if set(in_names) != set(out_names):
        raise ValueError(f"rearrange: the axes of pattern {pattern!r} must be the same on both "
                         f"sides; only on one: {sorted(set(in_names) ^ set(out_names))}")
    unknown = sorted(set(axes_lengths) - set(in_names))
    if unknown:
        raise ValueError(f"rearrange: axes_lengths names {unknown}, which are not input axes "
                         f"of pattern {pattern!r}")

    sizes = {}
    for group, dim in zip(inputs, shape):
        known = [n for n in group if n in axes_lengths]
        missing = [n for n in group if n not in axes_lengths]
        if len(missing) > 1:
            raise ValueError(f"rearrange: the sizes of {missing} in pattern {pattern!r} are "
                             f"not known; give all but one of them as keyword arguments")
        product = _math.prod(int(axes_lengths[n]) for n in known)
        if missing:
            if product <= 0 or dim % product:
                raise ValueError(f"rearrange: dimension of size {dim} cannot be split into "
                                 f"{group} with {dict((n, axes_lengths[n]) for n in known)}")
            sizes[missing[0]] = dim // product
        elif product != dim:
            raise ValueError(f"rearrange: dimension of size {dim} does not match "
                             f"{group} = {dict((n, axes_lengths[n]) for n in group)}")
        sizes.update((n, int(axes_lengths[n])) for n in known)

    split = tuple(sizes[n] for n in in_names)
    if split != shape:
        tensor = _a.reshape(tensor, split)
    perm = [in_names.index(n) for n in out_names]
    if perm != sorted(perm):
        tensor = _a.transpose(tensor, perm)
    merged = tuple(_math.prod(sizes[n] for n in group) for group in outputs)
    if merged != tuple(tensor.shape):
        tensor = _a.reshape(tensor, merged)
    return tensor


def _t(x):
    return _convert(x) if not hasattr(x, "_value") else x


def view_as_complex(x):
    """A real tensor ``(..., 2)`` of (real, imaginary) pairs as a complex tensor ``(...)``."""
    from ...ops import complex_ops
    x = _t(x)
    if x.ndim == 0 or int(x.shape[-1]) != 2 or not x.dtype.is_floating:
        raise ValueError(f"view_as_complex: expected a float tensor whose last dimension is 2 "
                         f"(real, imaginary), got {x.dtype.name} {tuple(x.shape)}")
    return complex_ops.complex(x[..., 0], x[..., 1])


def view_as_real(x):
    """A complex tensor ``(...)`` as a real tensor ``(..., 2)`` of (real, imaginary) pairs."""
    from ...ops import complex_ops
    x = _t(x)
    if not x.dtype.is_complex:
        raise ValueError(f"view_as_real: expected a complex tensor, got {x.dtype.name}")
    return _a.stack([complex_ops.real(x), complex_ops.imag(x)], axis=-1)


def polar(abs_, angle):
    """The complex tensor ``abs_ * (cos(angle) + 1j * sin(angle))``."""
    from ...ops import complex_ops
    abs_, angle = _t(abs_), _t(angle)
    return complex_ops.complex(abs_ * _m.cos(angle), abs_ * _m.sin(angle))


def install(ops):
    """Set ``slogdet``, ``vectorize`` (also on ``ops.numpy``) and ``rearrange`` on the
    ``keras.ops`` module; ``slogdet`` and ``rearrange`` then take KerasTensors too."""
    dispatch = ops._dispatching
    for name, fn in (("slogdet", slogdet), ("vectorize", vectorize), ("rearrange", rearrange)):
        wrapped = dispatch(name, fn) if name != "vectorize" else fn
        setattr(ops, name, wrapped)
        if name != "rearrange":
            setattr(ops.numpy, name, wrapped)
    ops.view_as_complex, ops.view_as_real = view_as_complex, view_as_real
    ops.math.view_as_complex, ops.math.view_as_real = view_as_complex, view_as_real
    ops.polar = ops.nn.polar = polar

