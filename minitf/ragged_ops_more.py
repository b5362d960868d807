"""TF's ops on RaggedTensors: element-wise math and string ops (with ragged broadcasting),
reductions, ``concat``, ``stack``, ``tile``, ``reverse``, ``map_fn`` and
``nn.embedding_lookup``.

TF dispatches its ops when an argument is a RaggedTensor. Here the registered ops do so through
the registry's hook for arguments that do not convert to a Tensor (``RaggedTensor._keras_op``
calls ``dispatch``), at no cost to dense calls; ``install(tf)`` wraps the few public functions
that do not reach that hook (string functions, compositions, ``reverse``, ``map_fn``, ...). The
work on the values is done with the recorded dense ops (on ``flat_values``, ``gather``, segment
reductions), so gradients reach the flat values; the row partitions are host structure.
"""
import functools
import inspect

import numpy

from . import backend as B
from . import dtypes
from .ops import array_ops, math_ops, reduce_ops, segment_ops
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .ragged_tensor import RaggedTensor, host_work, shown, take_values
from .tensor import Tensor

__all__ = ["dispatch", "elementwise", "operator", "reduce", "concat", "tile", "reverse",
           "map_fn"]

_I64 = numpy.int64

#: Functions that do not reach the registry's dispatch hook, wrapped by ``install``: the
#: element-wise string functions (one operand, the first argument).
STRING_UNARY = ["length", "lower", "upper", "substr", "to_hash_bucket", "to_hash_bucket_fast",
                "to_hash_bucket_strong", "to_number", "strip", "regex_replace",
                "regex_full_match", "as_string"]
#: Element-wise compositions of ops (which would meet a RaggedTensor in a non-element-wise step),
#: by namespace: one operand ...
COMPOSITE_UNARY = {"math": ["reciprocal_no_nan", "softsign"],
                   "nn": ["elu", "selu", "gelu", "leaky_relu", "silu", "swish", "softsign"],
                   "": ["zeros_like", "ones_like"]}
#: ... and two.
COMPOSITE_BINARY = {"math": ["divide_no_nan", "multiply_no_nan"]}
REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
              "reduce_any", "reduce_all"]


# --- structure helpers ----------------------------------------------------------------------
def _levels(rt):
    """The RaggedTensors of each ragged dimension of ``rt``, outermost first."""
    out = []
    while isinstance(rt, RaggedTensor):
        out.append(rt)
        rt = rt._values
    return out


def _same_partition(a, b):
    la, lb = _levels(a), _levels(b)
    return len(la) == len(lb) and all(numpy.array_equal(x._splits, y._splits)
                                      for x, y in zip(la, lb))


def _ranges(starts, lengths):
    """Concatenated ``range(start, start + length)`` for each pair (host int arrays)."""
    starts, lengths = numpy.asarray(starts, _I64), numpy.asarray(lengths, _I64)
    total = int(lengths.sum())
    offsets = numpy.repeat(numpy.cumsum(lengths) - lengths, lengths)
    return numpy.repeat(starts, lengths) + numpy.arange(total, dtype=_I64) - offsets


def _index(host):
    return Tensor(B.from_numpy(numpy.ascontiguousarray(host, _I64)))


def _flat_coordinates(rt):
    """For each flat value of ``rt``: its index along each of the ``ragged_rank + 1`` outer
    dimensions (host int arrays, outermost first)."""
    idx = numpy.arange(int(rt.flat_values.shape[0]), dtype=_I64)
    coords = []
    for level in reversed(_levels(rt)):
        rowid = level._host_rowids()[idx]
        coords.insert(0, idx - level._splits[rowid])
        idx = rowid
    return [idx] + coords


def _replace_depth(rt, depth, new):
    """``rt`` with the RaggedTensor (or values) at nesting ``depth`` replaced by ``new``."""
    if depth == 0:
        return new
    return rt.with_values(_replace_depth(rt._values, depth - 1, new))


def _at_depth(rt, depth):
    for _ in range(depth):
        rt = rt._values
    return rt


# --- element-wise ops with ragged broadcasting ------------------------------------------------
def _dense_operand(base, y, where):
    """A dense operand ``y`` as a value to combine with ``base.flat_values`` (TF's ragged
    broadcasting: ``y``'s dimensions align with ``base``'s trailing ones)."""
    inner_rank = base.flat_values.ndim - 1
    if not isinstance(y, Tensor):
        if numpy.ndim(y) <= inner_rank:
            return y     # a Python value: the dense op takes it with the values' dtype
        y = convert_to_tensor(y, dtype_hint=base.dtype)
    elif y._is_variable:
        y = y.read_value()
    if y.ndim <= inner_rank:
        return y
    rank, ragged_rank = len(base.shape), base.ragged_rank
    if y.ndim > rank:
        raise ValueError(f"{where}: a dense operand of rank {y.ndim} does not broadcast to a "
                         f"RaggedTensor of rank {rank}")
    shape = [1] * (rank - y.ndim) + [int(d) for d in y.shape]
    outer, inner = shape[:ragged_rank + 1], shape[ragged_rank + 1:]
    if all(d == 1 for d in outer):
        return array_ops.reshape(y, [1] + inner)
    levels = _levels(base)
    if outer[0] not in (1, base._nrows):
        raise InvalidArgumentError(f"{where}: a dense operand of shape {shape} has "
                                   f"{outer[0]} rows where the RaggedTensor has {base._nrows}")
    for k in range(1, ragged_rank + 1):
        lengths = numpy.diff(levels[k - 1]._splits)
        if outer[k] != 1 and numpy.any(lengths != outer[k]):
            raise InvalidArgumentError(
                f"{where}: a dense operand of shape {shape} has size {outer[k]} in ragged "
                f"dimension {k}, whose row lengths are {shown(lengths)}")
    coords = [c if d != 1 else numpy.zeros_like(c)
              for c, d in zip(_flat_coordinates(base), outer)]
    index = numpy.ravel_multi_index(coords, outer) if coords[0].size else coords[0]
    rows = array_ops.reshape(y, [int(numpy.prod(outer))] + inner)
    return array_ops.gather(rows, _index(index))


def _flat_operands(operands, where):
    """(the first RaggedTensor, each operand as a value to combine with its flat values)."""
    ragged = [o for o in operands if isinstance(o, RaggedTensor)]
    base = ragged[0]
    for other in ragged[1:]:
        if not _same_partition(base, other):
            raise InvalidArgumentError(
                f"{where}: RaggedTensor operands must have the same row partitions, got "
                f"nested row lengths {[shown(numpy.diff(x._splits)) for x in _levels(base)]} "
                f"and {[shown(numpy.diff(x._splits)) for x in _levels(other)]}")
    return base, [o.flat_values if isinstance(o, RaggedTensor)
                  else _dense_operand(base, o, where) for o in operands]


def elementwise(fn, operands, *args, where=None, **kwargs):
    """``fn(*operands, *args, **kwargs)`` over the flat values of the RaggedTensor operands,
    with dense operands broadcast to their ragged structure; a RaggedTensor."""
    host_work(where or getattr(fn, "__name__", "ragged op"))
    base, flats = _flat_operands(list(operands), where or fn.__name__)
    return base.with_flat_values(fn(*flats, *args, **kwargs))


def operator(op_name, rt, *other, reflected=False):
    """RaggedTensor's Python operator ``op_name`` (``__add__``, ``__neg__``, ...): Tensor's
    operator applied to the flat values."""
    fn = getattr(Tensor, op_name)
    operands = (other[0], rt) if reflected else (rt,) + other
    return elementwise(fn, operands, where=op_name)


def _is_ragged_call(args, kwargs):
    for a in args:
        if a.__class__ is RaggedTensor:
            return True
    for v in kwargs.values():
        if v.__class__ is RaggedTensor:
            return True
    return False


def dispatching(fn, positions):
    """``fn`` that also takes RaggedTensors at the operand ``positions`` (argument indices)."""
    if getattr(fn, "_ragged_dispatch", False):
        return fn
    parameters = inspect.signature(fn).parameters
    if any(p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY) for p in parameters.values()):
        return fn
    names = list(parameters)
    operand_names = [names[p] for p in positions]

    @functools.wraps(fn)
    def ragged_aware(*args, **kwargs):
        if not _is_ragged_call(args, kwargs):
            return fn(*args, **kwargs)
        bound = dict(zip(names, args), **kwargs)
        for name, value in bound.items():
            if isinstance(value, RaggedTensor) and name not in operand_names:
                raise TypeError(f"{fn.__name__}: argument `{name}` may not be a RaggedTensor "
                                f"(only {operand_names} may), got {value!r:.80}")
        operands = [bound.pop(n) for n in operand_names]
        host_work(fn.__name__)
        base, flats = _flat_operands(operands, fn.__name__)
        bound.update(zip(operand_names, flats))
        return base.with_flat_values(fn(**bound))

    ragged_aware._ragged_dispatch = True
    return ragged_aware


def list_dispatching(fn):
    """``fn(inputs, ...)`` (``strings.join``, ``add_n``) that also takes RaggedTensors among
    its list of element-wise ``inputs``."""
    if getattr(fn, "_ragged_dispatch", False):
        return fn

    @functools.wraps(fn)
    def ragged_aware(inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)) or not any(
                isinstance(x, RaggedTensor) for x in inputs):
            return fn(inputs, *args, **kwargs)
        host_work(fn.__name__)
        base, flats = _flat_operands(list(inputs), fn.__name__)
        return base.with_flat_values(fn(flats, *args, **kwargs))

    ragged_aware._ragged_dispatch = True
    return ragged_aware


# --- reductions ---------------------------------------------------------------------------
def _segment_reduce(kind, data, ids, count):
    """Reduce the rows of ``data`` with the same ``ids`` (host) into ``count`` rows."""
    segment_ids = _index(ids)
    if kind in ("reduce_any", "reduce_all"):
        as_int = math_ops.cast(data, dtypes.int32)
        fn = segment_ops.unsorted_segment_max if kind == "reduce_any" \
            else segment_ops.unsorted_segment_min
        out = fn(as_int, segment_ids, count)
        # empty segments hold the lowest / highest int32: False for any, True for all
        return math_ops.greater(out, 0)
    fn = {"reduce_sum": segment_ops.unsorted_segment_sum,
          "reduce_max": segment_ops.unsorted_segment_max,
          "reduce_min": segment_ops.unsorted_segment_min,
          "reduce_prod": segment_ops.unsorted_segment_prod}[kind]
    return fn(data, segment_ids, count)


def _reduce_axis(kind, dense_fn, rt, axis, where):
    """``rt`` reduced along one ``axis`` (non-negative) with ``kind``."""
    ragged_rank = rt.ragged_rank
    if axis > ragged_rank:
        return rt.with_flat_values(dense_fn(rt.flat_values, axis=axis - ragged_rank))
    if axis == ragged_rank:
        level = _levels(rt)[-1]
        out = _segment_reduce(kind, rt.flat_values, level._host_rowids(), level._nrows)
        return _replace_depth(rt, ragged_rank - 1, out)
    if axis == 0 and ragged_rank == 1:
        _, column = _flat_coordinates(rt)
        count = int(column.max()) + 1 if column.size else 0
        return _segment_reduce(kind, rt.flat_values, column, count)
    raise ValueError(f"{where}: reducing axis {axis} of a RaggedTensor with ragged_rank "
                     f"{ragged_rank} is not supported (axis 0 of ragged_rank 1, the innermost "
                     f"ragged axis and the dense inner axes are)")


def reduce(kind, rt, axis=None, keepdims=False):
    """TF's ``kind`` reduction (``"reduce_sum"``, ...) of a RaggedTensor over ``axis``."""
    where = f"minitf.{kind}"
    host_work(where)
    if keepdims:
        raise ValueError(f"{where}: keepdims=True is not supported for RaggedTensors")
    if axis is None:
        return getattr(reduce_ops, kind)(rt.flat_values)
    rank = len(rt.shape)
    axes = axis if isinstance(axis, (list, tuple)) else [axis]
    axes = [int(B.to_numpy(a._value)) if isinstance(a, Tensor) else int(a) for a in axes]
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"{where}: axis {a} is out of range for a RaggedTensor of rank "
                             f"{rank}")
    axes = sorted({a % rank for a in axes}, reverse=True)
    if kind == "reduce_mean":
        total = reduce("reduce_sum", rt, axes)
        ones = rt.with_flat_values(array_ops.ones_like(rt.flat_values))
        count = reduce("reduce_sum", ones, axes)
        return math_ops.truediv(total, count)
    out = rt
    for a in axes:
        if isinstance(out, RaggedTensor):
            out = _reduce_axis(kind, getattr(reduce_ops, kind), out, a, where)
        else:
            out = getattr(reduce_ops, kind)(out, axis=a)
    return out


def _reduction(fn):
    """``fn`` (``reduce_any``, ``reduce_all``: no dispatch hook) also taking a RaggedTensor."""
    if getattr(fn, "_ragged_dispatch", False):
        return fn

    @functools.wraps(fn)
    def ragged_aware(input_tensor, axis=None, keepdims=False, name=None):
        if input_tensor.__class__ is RaggedTensor:
            return reduce(fn.__name__, input_tensor, axis, keepdims)
        return fn(input_tensor, axis, keepdims)

    ragged_aware._ragged_dispatch = True
    return ragged_aware


# --- concat, tile, reverse ----------------------------------------------------------------
def _as_ragged(value, ragged_rank):
    if isinstance(value, RaggedTensor):
        return value
    tensor = value if isinstance(value, Tensor) else convert_to_tensor(value)
    return RaggedTensor.from_tensor(tensor, ragged_rank=ragged_rank)


def _stack_rows(parts, dense_concat):
    """The rows of all ``parts`` (Tensors, or RaggedTensors of one ragged rank) in turn."""
    if not isinstance(parts[0], RaggedTensor):
        return dense_concat(parts, 0)
    offsets = numpy.cumsum([0] + [int(p._splits[-1]) for p in parts[:-1]])
    splits = numpy.concatenate([parts[0]._splits[:1]] + [p._splits[1:] + o for p, o in
                                                         zip(parts, offsets)])
    values = _stack_rows([p._values for p in parts], dense_concat)
    return RaggedTensor._make(values, splits.astype(parts[0]._splits.dtype))


def concat(values, axis, dense_concat=array_ops.concat):
    """``tf.concat`` of RaggedTensors (and dense tensors, made ragged) along ``axis``."""
    where = "minitf.concat"
    host_work(where)
    ragged_rank = max(v.ragged_rank for v in values if isinstance(v, RaggedTensor))
    parts = [_as_ragged(v, ragged_rank) for v in values]
    rank = len(parts[0].shape)
    if any(len(p.shape) != rank or p.ragged_rank != ragged_rank for p in parts):
        raise ValueError(f"{where}: the inputs must have one rank and ragged rank, got shapes "
                         f"{[tuple(p.shape) for p in parts]} and ragged ranks "
                         f"{[p.ragged_rank for p in parts]}")
    if not -rank <= axis < rank:
        raise ValueError(f"{where}: axis {axis} is out of range for rank {rank}")
    return _concat(parts, axis % rank, dense_concat, where)


def _concat(parts, axis, dense_concat, where):
    if not isinstance(parts[0], RaggedTensor):
        return dense_concat(parts, axis)
    if axis == 0:
        return _stack_rows(parts, dense_concat)
    counts = [p._nrows for p in parts]
    if len(set(counts)) != 1:
        raise InvalidArgumentError(f"{where}: to concatenate along axis {axis} the inputs "
                                   f"need the same number of rows, got {counts}")
    if axis > 1:
        if any(not numpy.array_equal(p._splits, parts[0]._splits) for p in parts):
            raise InvalidArgumentError(f"{where}: to concatenate along axis {axis} the inputs "
                                       f"need the same row lengths")
        return parts[0].with_values(_concat([p._values for p in parts], axis - 1,
                                            dense_concat, where))
    joined = _stack_rows([p._values for p in parts], dense_concat)
    offsets = numpy.cumsum([0] + [int(p._splits[-1]) for p in parts[:-1]])
    starts = numpy.stack([p._splits[:-1] + o for p, o in zip(parts, offsets)], axis=1)
    lengths = numpy.stack([numpy.diff(p._splits) for p in parts], axis=1)
    index = _ranges(starts.reshape(-1), lengths.reshape(-1))
    splits = numpy.concatenate([[0], numpy.cumsum(lengths.sum(axis=1))])
    return RaggedTensor._make(take_values(joined, index),
                              splits.astype(parts[0]._splits.dtype))


def tile(rt, multiples):
    """``tf.tile`` of a RaggedTensor with ragged_rank 1: each row repeated ``multiples[1]``
    times within itself, the rows ``multiples[0]`` times."""
    where = "minitf.tile"
    host_work(where)
    reps = numpy.asarray(B.to_numpy(multiples._value) if isinstance(multiples, Tensor)
                         else multiples, _I64).reshape(-1)
    rank = len(rt.shape)
    if reps.size != rank or numpy.any(reps < 0):
        raise ValueError(f"{where}: multiples must hold {rank} non-negative entries (the "
                         f"input's rank), got {shown(reps)}")
    if rt.ragged_rank != 1:
        raise ValueError(f"{where}: only RaggedTensors with ragged_rank 1 are supported, got "
                         f"ragged_rank {rt.ragged_rank}")
    starts, lengths = rt._splits[:-1], numpy.diff(rt._splits)
    starts = numpy.tile(numpy.repeat(starts, reps[1]), reps[0])
    lengths = numpy.tile(numpy.repeat(lengths, reps[1]), reps[0])
    values = take_values(rt._values, _ranges(starts, lengths))
    if numpy.any(reps[2:] != 1):
        values = array_ops.tile(values, [1] + reps[2:].tolist())
    row_lengths = lengths.reshape(-1, reps[1]).sum(axis=1) if reps[1] else \
        numpy.zeros(rt._nrows * reps[0], _I64)
    splits = numpy.concatenate([[0], numpy.cumsum(row_lengths)]).astype(rt._splits.dtype)
    return RaggedTensor._make(values, splits)


def reverse(rt, axis, dense_reverse):
    """``tf.reverse`` of a RaggedTensor along the dimensions ``axis``: ragged dimensions
    reverse the items of each row."""
    where = "minitf.reverse"
    host_work(where)
    rank, ragged_rank = len(rt.shape), rt.ragged_rank
    axes = numpy.asarray(B.to_numpy(axis._value) if isinstance(axis, Tensor) else axis,
                         _I64).reshape(-1)
    for a in axes.tolist():
        if not -rank <= a < rank:
            raise ValueError(f"{where}: axis {a} is out of range for rank {rank}")
        a %= rank
        if a > ragged_rank:
            rt = rt.with_flat_values(dense_reverse(rt.flat_values, [a - ragged_rank]))
        elif a == 0:
            rt = rt._take_rows(numpy.arange(rt._nrows)[::-1])
        else:
            level = _at_depth(rt, a - 1)
            starts, limits = level._splits[:-1], level._splits[1:]
            rowid = level._host_rowids()
            position = numpy.arange(rowid.size, dtype=_I64) - starts[rowid]
            index = limits[rowid] - 1 - position
            rt = _replace_depth(rt, a - 1, level.with_values(take_values(level._values, index)))
    return rt


# --- map_fn and embedding_lookup --------------------------------------------------------------
def map_fn(fn, elems, dense_map_fn, fn_output_signature=None, **kwargs):
    """``tf.map_fn`` over the rows of a RaggedTensor: results of rank >= 1 form the rows of a
    RaggedTensor (TF's default for ragged ``elems``), unless ``fn_output_signature`` is a
    dense ``TensorSpec``; scalar results are stacked into a Tensor."""
    host_work("minitf.map_fn")
    results = [fn(elems[i]) for i in range(elems._nrows)]
    from .tensor_spec import TensorSpec
    dense = isinstance(fn_output_signature, TensorSpec) or (
        results and all(isinstance(r, Tensor) and r.ndim == 0 for r in results))
    if not results:
        return elems
    if dense:
        return array_ops.stack(results)
    if all(isinstance(r, Tensor) for r in results):
        lengths = [int(r.shape[0]) for r in results]
        return RaggedTensor.from_row_lengths(array_ops.concat(results, 0), lengths)
    from .ragged_more import stack
    return stack(results)


def _map_fn(fn_orig):
    if getattr(fn_orig, "_ragged_dispatch", False):
        return fn_orig

    @functools.wraps(fn_orig)
    def ragged_aware(fn, elems, *args, **kwargs):
        if elems.__class__ is RaggedTensor and not args:
            return map_fn(fn, elems, fn_orig, **kwargs)
        return fn_orig(fn, elems, *args, **kwargs)

    ragged_aware._ragged_dispatch = True
    return ragged_aware


def _wrap_first(fn_orig, ragged_fn):
    """``fn_orig(x, ...)`` calling ``ragged_fn(fn_orig, x, ...)`` (its arguments in the order
    of ``fn_orig``'s parameters) for a RaggedTensor ``x``."""
    if getattr(fn_orig, "_ragged_dispatch", False):
        return fn_orig
    signature = inspect.signature(fn_orig)
    first = next(iter(signature.parameters))

    @functools.wraps(fn_orig)
    def ragged_aware(*args, **kwargs):
        x = args[0] if args else kwargs.get(first)
        if x.__class__ is RaggedTensor:
            bound = signature.bind(*args, **kwargs)
            return ragged_fn(fn_orig, *bound.arguments.values())
        return fn_orig(*args, **kwargs)

    ragged_aware._ragged_dispatch = True
    return ragged_aware


def dispatch(fn, args, kwargs):
    """TF's ragged version of the registered op function ``fn`` called with RaggedTensors among
    its tensor ``args`` (and attributes ``kwargs``): the registry's hook for arguments that do
    not convert to a Tensor (``RaggedTensor._keras_op``)."""
    name = fn.__name__
    op = getattr(fn, "op", None)
    if name == "cast" or (op is not None and getattr(op, "elementwise", False)):
        arity = 1 if name == "cast" else op.arity
        return elementwise(fn, args[:arity], *args[arity:], where=name, **kwargs)
    if name in REDUCTIONS and isinstance(args[0], RaggedTensor):
        return reduce(name, args[0], kwargs.get("axis"), kwargs.get("keepdims", False))
    if name == "concat":
        return concat(args[0], args[1])
    if name == "stack":
        from .ragged_more import stack
        return stack(args[0], args[1])
    if name == "tile" and isinstance(args[0], RaggedTensor):
        return tile(args[0], args[1])
    if name == "gather" and isinstance(args[1], RaggedTensor) and not isinstance(
            args[0], RaggedTensor) and kwargs.get("axis") in (None, 0) \
            and kwargs.get("batch_dims", 0) == 0:
        return args[1].with_flat_values(fn(args[0], args[1].flat_values))
    raise TypeError(f"{name}: RaggedTensor arguments are not supported by this op (TF's "
                    f"element-wise ops, reductions, concat, stack, tile, gather of ragged "
                    f"indices, reverse and map_fn take them); got "
                    f"{[type(a).__name__ for a in args]}")


def install(tf):
    """Make the ``tf`` functions that do not reach the registry's dispatch hook take
    RaggedTensors as TF's do: the element-wise string functions and compositions, ``strings.join``,
    ``add_n``, ``reduce_any``, ``reduce_all``, ``reverse``, ``map_fn`` and ``nn.embedding_lookup`` (idempotent; each function is
    wrapped once, the same wrapper serving every namespace that holds it)."""
    wrapped = {}

    def wrap(namespace, name, make):
        target = tf if namespace == "" else getattr(tf, namespace)
        fn = getattr(target, name, None)
        if fn is None or getattr(fn, "_ragged_dispatch", False):
            return
        if id(fn) not in wrapped:
            wrapped[id(fn)] = make(fn)
        setattr(target, name, wrapped[id(fn)])

    for name in STRING_UNARY:
        wrap("strings", name, lambda fn: dispatching(fn, [0]))
    for count, table in ((1, COMPOSITE_UNARY), (2, COMPOSITE_BINARY)):
        for namespace, names in table.items():
            for name in names:
                wrap(namespace, name, lambda fn: dispatching(fn, list(range(count))))
    wrap("strings", "join", list_dispatching)
    for namespace in ("", "math"):
        wrap(namespace, "add_n", list_dispatching)
        wrap(namespace, "reduce_any", _reduction)
        wrap(namespace, "reduce_all", _reduction)
    wrap("", "reverse", lambda fn: _wrap_first(
        fn, lambda fn_orig, x, axis, name=None: reverse(x, axis, fn_orig)))
    wrap("", "map_fn", _map_fn)
    wrap("nn", "embedding_lookup", lambda fn: dispatching(fn, [1]))
    _replace_aliases(getattr(tf, "compat", None), wrapped, depth=3)


def _replace_aliases(namespace, wrapped, depth):
    """Point the other names of the wrapped functions (``tf.compat.v1.nn.relu``, ...) at the
    wrappers, so that aliases stay identical."""
    if namespace is None or depth == 0 or not hasattr(namespace, "__dict__"):
        return
    for name, value in list(vars(namespace).items()):
        if id(value) in wrapped:
            setattr(namespace, name, wrapped[id(value)])
        elif not callable(value) and hasattr(value, "__dict__") and not isinstance(value, type):
            _replace_aliases(value, wrapped, depth - 1)
