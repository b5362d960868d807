"""GradientTape: records ops on watched tensors and runs them backwards.

Each tape owns its records: ``(op, input ids, saved inputs, saved output, attrs, input shapes,
output id)``. Tensors never point back at the tape, so a non-persistent tape frees everything it
saved when ``gradient()`` returns, and a persistent one when it is deleted. See docs/design.md.
"""
import enum
import logging
import math

import numpy

from . import backend as B
from . import eager_fusion
from ._state import PauseRecording, state
from .nest import flatten, pack_sequence_as
from .ops import registry
from .ops.registry import RAW, TENSOR, OpView
from .column_cotangent import ColumnCotangent
from .row_cotangent import RowCotangent
from .slice_cotangent import SliceCotangent
from .sparse_cotangent import SparseCotangent
from .tensor import Tensor

logger = logging.getLogger("minitf")

OP, IN_IDS, SAVED, OUT, ATTRS, SHAPES, OUT_ID = range(7)
_NEEDS1 = (True,)
_TILED_MAX_POOL = registry.OPS["tiled_max_pool"]

_PERSISTENT_IN_CONTEXT = ("Calling GradientTape.gradient on a persistent tape inside its context "
                          "is significantly less efficient than calling it outside the context "
                          "(it causes the gradient ops to be recorded on the tape, leading to "
                          "increased CPU and memory usage). Only call GradientTape.gradient "
                          "inside the context if you actually want to trace the gradient in "
                          "order to compute higher order derivatives.")
_warned_in_context = False


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""
    NONE = "none"
    ZERO = "zero"


def _unconnected(value):
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}; expected 'none' "
                         f"or 'zero' (or a minitf.UnconnectedGradients)") from None


class GradientTape:
    """Record operations for automatic differentiation (TF's ``tf.GradientTape``).

    >>> x = minitf.Variable(3.0)
    >>> with minitf.GradientTape() as tape:
    ...     y = x ** 2
    >>> float(tape.gradient(y, x))
    6.0

    An op is recorded when one of its inputs is tracked: a watched tensor, the output of a
    recorded op, or a trainable float Variable read while ``watch_accessed_variables`` is on.
    Integer and bool results are never recorded: they carry no gradient.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._entries = []
        self._tracked = set()
        self._watched_vars = {}
        self._used = False
        self._in_context = False

    # --- context -----------------------------------------------------------------------------
    def __enter__(self):
        if self._in_context:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an "
                             "already-active tape.")
        self._in_context = True
        self._push()
        return self

    def __exit__(self, *exc):
        self._in_context = False
        self._pop()

    def _push(self):
        self._order = state.next_order()
        state.tapes.append(self)
        state.holding_tapes.add(self)
        state.refresh()

    def _pop(self):
        if self in state.tapes:
            state.tapes.remove(self)
            state.refresh()

    @property
    def _recording(self):
        return any(t is self for t in state.tapes)

    def stop_recording(self):
        """Context in which this tape records nothing (other tapes still record)."""
        return _StopRecording(self)

    def reset(self):
        """Forget everything recorded and watched so far (the tape stays active)."""
        self._entries = []
        self._tracked = set()
        self._watched_vars = {}
        self._used = False

    # --- watching ----------------------------------------------------------------------------
    def watch(self, tensor):
        """Track a tensor, variable or nest of them, so gradients flow back to it."""
        for t in flatten(tensor):
            if not isinstance(t, Tensor):  # TF: a ValueError, numpy arrays included
                raise ValueError(f"GradientTape.watch: passed in object {t!r:.60} of type "
                                 f"{type(t).__name__!r}, expected a Tensor or Variable (convert "
                                 f"it with minitf.constant first)")
            if t._value.dtype.kind not in "fc":
                logger.warning("The dtype of the watched tensor must be floating (e.g. "
                               "tf.float32), got %r", t.dtype)
                continue
            if t._is_variable:
                self._watched_vars[t._id] = t
            self._tracked.add(t._id)

    def watched_variables(self):
        """The variables this tape watches, in creation order."""
        return tuple(v for _, v in sorted(self._watched_vars.items()))

    def _record(self, op, inputs, attrs, y):
        """Called by the registry for every float output of a differentiable op (hot path)."""
        tracked = self._tracked
        hit = False
        for t in inputs:
            if t._id in tracked:
                hit = True
            elif (t._is_variable and self._watch_accessed and t._trainable
                  and t._value.dtype.kind in "fc"):
                self._watched_vars[t._id] = t
                tracked.add(t._id)
                hit = True
        if not hit:
            return
        tracked.add(y._id)
        n = len(inputs)
        if n == 1:
            x = inputs[0]
            ids, shapes = (x._id,), (x._value.shape,)
        elif n == 2:
            a, b = inputs
            ids, shapes = (a._id, b._id), (a._value.shape, b._value.shape)
        else:
            ids = tuple([t._id for t in inputs])
            shapes = tuple([t._value.shape for t in inputs])
        if op.user_grad is not None:  # an override sees every input and the output
            saved, out = tuple(inputs), y
        else:
            keep = op.save_inputs
            if not keep:
                saved = None
            elif len(keep) == n:
                saved = tuple(inputs)
            else:
                saved = tuple([t if i in keep else None for i, t in enumerate(inputs)])
            out = y if op.save_out else None
        self._entries.append((op, ids, saved, out, attrs, shapes, y._id))

    # --- gradients ---------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of target)/d(sources), in the structure of ``sources``.

        ``output_gradients`` weights the target; ``unconnected_gradients`` says what an unconnected
        source gets (``None`` or zeros). A non-persistent tape can compute one gradient.
        """
        self._check_usable("gradient")
        unconnected = _unconnected(unconnected_gradients)
        targets = list(flatten(target))
        for t in targets:
            if not isinstance(t, Tensor):
                raise TypeError(f"GradientTape.gradient: target must be a Tensor or Variable "
                                f"(or a nest of them), got {type(t).__name__} {t!r:.60}")
            if t._value.dtype.kind != "f":
                logger.warning("The dtype of the target tensor must be floating (e.g. "
                               "tf.float32) when calling GradientTape.gradient, got %r", t.dtype)
        flat_sources = self._check_sources(sources, "gradient")
        if output_gradients is not None:
            single = isinstance(target, Tensor) and not (
                isinstance(output_gradients, (list, tuple)) and len(output_gradients) == 1
                and isinstance(output_gradients[0], Tensor))
            weights = [output_gradients] if single else list(flatten(output_gradients))
            if len(weights) != len(targets):
                raise ValueError(f"GradientTape.gradient: {len(targets)} targets but "
                                 f"{len(weights)} output_gradients")
        else:
            weights = [None] * len(targets)
        self._enter_backward()

        with _Backward(self) as run:
            seeds = []
            for t, w in zip(targets, weights):
                if t._value.dtype.kind != "f":
                    continue
                if w is None:
                    seeds.append((t._id, run.wrap(B.xp.ones_like(t._value))))
                    continue
                w = _output_gradient(w, t)
                seeds.append((t._id, w if run.tensor_mode else w._value))
            grads = run.backward(seeds, flat_sources)
            result = [self._finish(grads.get(s._id), s, unconnected) for s in flat_sources]
        self._after_use()
        return pack_sequence_as(sources, result)

    def _enter_backward(self):
        """TF: a non-persistent tape stops recording when asked for gradients inside its context;
        a persistent one keeps recording, so its own gradient computation is differentiable."""
        global _warned_in_context
        if not self._recording:
            return
        if not self._persistent:
            self._pop()
        elif not _warned_in_context:
            _warned_in_context = True
            logger.warning(_PERSISTENT_IN_CONTEXT)

    @staticmethod
    def _finish(g, source, unconnected):
        if source._value.dtype.kind not in "fc":
            return None
        if g is None:
            if unconnected is UnconnectedGradients.ZERO:
                return Tensor(B.xp.zeros_like(source._value))
            return None
        return g if isinstance(g, Tensor) else Tensor(g)

    def _check_usable(self, what):
        if self._used and not self._persistent:
            raise RuntimeError(f"GradientTape.gradient can only be called once on non-persistent "
                               f"tapes: this tape already computed one set of gradients (or "
                               f"jacobians); create it with persistent=True to call {what}() "
                               f"more than once")

    def _check_sources(self, sources, what):
        flat = list(flatten(sources))
        for s in flat:
            if not isinstance(s, Tensor):
                raise TypeError(f"GradientTape.{what}: sources must be Tensors or Variables (or a "
                                f"nest of them), got {type(s).__name__} {s!r:.60}")
        for s in flat:
            if s._value.dtype.kind not in "fc":
                logger.warning("The dtype of the source tensor must be floating (e.g. "
                               "tf.float32) when calling GradientTape.%s, got %r", what, s.dtype)
        return flat

    def _after_use(self):
        self._used = True
        if not self._persistent:  # release everything saved for the backward pass
            self._entries = []
            self._tracked = set()

    # --- jacobians ---------------------------------------------------------------------------
    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The Jacobian of ``target`` w.r.t. each source: shape ``target.shape + source.shape``.

        Computed in one vectorised backward pass over a batch of one-hot cotangents (in chunks of
        ``parallel_iterations`` when given, to bound memory); ``experimental_use_pfor=False`` runs
        the reference loop (one backward pass per target element).
        """
        self._check_usable("jacobian")
        unconnected = _unconnected(unconnected_gradients)
        target = _as_tensor_arg(target, "jacobian")
        flat_sources = self._check_sources(sources, "jacobian")
        xp = B.xp
        tshape = tuple(target._value.shape)
        n = int(target._value.size)
        dtype = target._value.dtype
        self._enter_backward()
        with _Backward(self) as run:
            if target._value.dtype.kind != "f":
                per_source = [None] * len(flat_sources)
            elif n == 0:  # an empty target: every Jacobian is empty
                per_source = [run.wrap(xp.zeros((0,) + tuple(s._value.shape), s._value.dtype))
                              for s in flat_sources]
            elif experimental_use_pfor:
                chunk = n if not parallel_iterations else max(1, int(parallel_iterations))
                parts, sizes = [], []
                for start in range(0, n, chunk):
                    stop = min(n, start + chunk)
                    if tshape and not run.tensor_mode:
                        seed = RowCotangent.one_hot(start, stop, tshape, dtype)
                    else:
                        seed = run.wrap(_one_hot_rows(xp, start, stop, n, dtype).reshape(
                            (stop - start,) + tshape))
                    grads = run.backward([(target._id, seed)], flat_sources, nb=1)
                    parts.append([_dense(grads.get(s._id)) for s in flat_sources])
                    sizes.append(stop - start)
                per_source = [_join(run, [p[j] for p in parts], sizes, s)
                              for j, s in enumerate(flat_sources)]
            else:
                rows = [[] for _ in flat_sources]
                for k in range(n):
                    seed = xp.zeros(n, dtype=dtype)
                    seed[k] = 1
                    grads = run.backward([(target._id, run.wrap(seed.reshape(tshape)))],
                                         flat_sources)
                    for j, s in enumerate(flat_sources):
                        rows[j].append(grads.get(s._id))
                per_source = [_join(run, [r if r is None else run.expand(r) for r in rs],
                                    [1] * n, s) for rs, s in zip(rows, flat_sources)]
            result = []
            for g, s in zip(per_source, flat_sources):
                full = tshape + tuple(s._value.shape)
                if g is None or s._value.dtype.kind != "f":
                    result.append(Tensor(xp.zeros(full, s._value.dtype))
                                  if unconnected is UnconnectedGradients.ZERO
                                  and s._value.dtype.kind == "f" else None)
                else:
                    result.append(run.tensor(run.F.reshape(g, full)))
        self._after_use()
        return pack_sequence_as(sources, result)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians: shape ``(batch,) + target.shape[1:] + source.shape[1:]``.

        Assumes example ``i`` of the target depends only on example ``i`` of the source; one
        backward pass over ``prod(target.shape[1:])`` cotangents.
        """
        self._check_usable("batch_jacobian")
        unconnected = _unconnected(unconnected_gradients)
        target = _as_tensor_arg(target, "batch_jacobian")
        (source,) = self._check_sources([source], "batch_jacobian")
        tshape, sshape = tuple(target._value.shape), tuple(source._value.shape)
        for what, shape in (("target", tshape), ("source", sshape)):
            if len(shape) < 2:
                raise ValueError(f"batch_jacobian: the {what} must have rank at least 2 (a batch "
                                 f"dimension and at least one more), got shape {shape}")
        if tshape[0] != sshape[0]:
            raise ValueError(f"batch_jacobian: Need first dimension of target shape {tshape} and "
                             f"source shape {sshape} to match")
        xp = B.xp
        batch = tshape[0]
        per = math.prod(tshape[1:])
        dtype = target._value.dtype
        self._enter_backward()
        with _Backward(self) as run:
            F = run.F
            g = None
            if target._value.dtype.kind != "f" or source._value.dtype.kind != "f":
                pass
            elif per == 0 or batch == 0 or source._value.size == 0:  # empty Jacobians
                g = run.wrap(xp.zeros(tshape + sshape[1:], source._value.dtype))
            elif experimental_use_pfor:
                if run.tensor_mode:
                    eye = xp.eye(per, dtype=dtype).reshape((per, 1) + tshape[1:])
                    seed = run.wrap(xp.broadcast_to(eye, (per,) + tshape).copy())
                else:
                    seed = ColumnCotangent.identity(tshape, dtype)
                grads = run.backward([(target._id, seed)], [source], nb=1)
                g = grads.get(source._id)
                if g.__class__ is ColumnCotangent:  # written in the result's layout
                    g = g.per_example(sshape[1:]).reshape(tshape + sshape[1:])
                elif g is not None:  # (per, batch, *in) -> (batch, *out, *in)
                    g = F.reshape(g, (per, batch, source._value.size // batch))
                    g = F.transpose(g, (1, 0, 2))
                    g = F.reshape(g, tshape + sshape[1:])
            else:
                rows = []
                for k in range(per):
                    seed = xp.zeros((batch, per), dtype=dtype)
                    seed[:, k] = 1
                    grads = run.backward([(target._id, run.wrap(seed.reshape(tshape)))], [source])
                    r = grads.get(source._id)
                    rows.append(r if r is None else run.expand(r))
                g = _join(run, rows, [1] * per, source)
                if g is not None:
                    g = F.transpose(F.reshape(g, (per, batch, source._value.size // batch)),
                                    (1, 0, 2))
                    g = F.reshape(g, tshape + sshape[1:])
            if g is None:
                result = (Tensor(xp.zeros(tshape + sshape[1:], source._value.dtype))
                          if unconnected is UnconnectedGradients.ZERO
                          and source._value.dtype.kind == "f" else None)
            else:
                result = run.tensor(g)
        self._after_use()
        return result

    def __del__(self):
        if state is not None and self in getattr(state, "tapes", ()):
            self._pop()


def keep_read_values(variable):
    """Before ``variable`` is written in place: the records of live tapes that saved it as an
    input get a snapshot of its current value instead, so their gradients use the value the op
    read, as TF's do. Variables keep their buffers (a traced step binds them once), which is why
    the snapshot is taken here and not at every read. The snapshot is an ``identity`` op, so a
    trace replays it before the write. Covered: variables the tape watches (trainable ones read
    inside it, or watched explicitly)."""
    from .ops.math_ops import identity
    snapshot = None
    for tape in list(state.holding_tapes):
        if not tape._entries or variable._id not in tape._watched_vars:
            continue
        entries = tape._entries
        for k, entry in enumerate(entries):
            saved = entry[2]
            if saved is not None and any(t is variable for t in saved):
                if snapshot is None:
                    with PauseRecording():
                        snapshot = identity(variable)
                saved = tuple(snapshot if t is variable else t for t in saved)
                entries[k] = entry[:2] + (saved,) + entry[3:]


def _output_gradient(w, target):
    """An ``output_gradients`` entry as a Tensor of the target's shape and dtype."""
    if not isinstance(w, Tensor):
        from .ops.convert import convert_to_tensor
        w = convert_to_tensor(w, dtype=target.dtype)
    if w._value.dtype != target._value.dtype:
        raise TypeError(f"GradientTape.gradient: output_gradients has dtype {w.dtype.name} but "
                        f"the target has dtype {target.dtype.name}")
    if tuple(w._value.shape) != tuple(target._value.shape):
        raise ValueError(f"GradientTape.gradient: output_gradients shape "
                         f"{tuple(w._value.shape)} does not match target shape "
                         f"{tuple(target._value.shape)}")
    return w


def _dense(g):
    return g.dense() if isinstance(g, SparseCotangent) else g


def _one_hot_rows(xp, start, stop, n, dtype):
    """Rows ``start:stop`` of the n x n identity."""
    rows = xp.zeros((stop - start, n), dtype=dtype)
    idx = xp.arange(stop - start)
    rows[idx, start + idx] = 1
    return rows


def _join(run, parts, sizes, source):
    """Concatenate per-chunk jacobian blocks (``sizes[i]`` rows each) along the leading axis;
    None if no chunk reached the source."""
    if all(p is None for p in parts):
        return None
    if len(parts) == 1:
        return parts[0]
    filled = [p if p is not None else  # a chunk that did not reach the source: zeros
              run.wrap(B.xp.zeros((k,) + tuple(source._value.shape), source._value.dtype))
              for p, k in zip(parts, sizes)]
    return run.concat(filled)


def _as_tensor_arg(target, what):
    if not isinstance(target, Tensor):
        raise TypeError(f"GradientTape.{what}: target must be a Tensor, got "
                        f"{type(target).__name__} {target!r:.60}")
    return target


class _StopRecording:
    def __init__(self, tape):
        self._tape = tape

    def __enter__(self):
        self._was = self._tape._recording
        if self._was:
            self._tape._pop()

    def __exit__(self, *exc):
        if self._was and self._tape._in_context and not self._tape._recording:
            self._tape._push()


class _Backward:
    """One backward computation over a tape's records.

    Rules run on bare arrays (``RAW``) unless something must record them (a tape, a forward
    accumulator, a function trace), in which case they run as minitf ops (``TENSOR``).
    """

    def __init__(self, tape):
        self.tape = tape

    def __enter__(self):
        self.tensor_mode = state.needs_tensor_rules()
        self.F = TENSOR if self.tensor_mode else RAW
        self._errstate = numpy.errstate(all="ignore")  # inf/NaN gradients are silent, as in TF
        self._errstate.__enter__()
        return self

    def __exit__(self, *exc):
        self._errstate.__exit__(*exc)

    def wrap(self, array):
        return Tensor(array) if self.tensor_mode else array

    def tensor(self, g):
        return g if isinstance(g, Tensor) else Tensor(g)

    def expand(self, g):
        """Add a leading axis of size 1."""
        return self.F.reshape(g, (1,) + tuple(g.shape))

    def concat(self, values):
        if self.tensor_mode:
            from .ops.array_ops import concat
            return concat(values, 0)
        shape = (sum(v.shape[0] for v in values),) + tuple(values[0].shape[1:])
        return B.xp.concatenate(values, axis=0, out=B.empty_result(shape, values[0].dtype))

    def backward(self, seeds, sources, nb=0):
        """Gradients of the seeded targets, keyed by tensor id, for ids reachable from sources.

        ``nb`` is the number of leading batch dimensions of the seeds (vectorised jacobians).
        """
        tape, F = self.tape, self.F
        tracked = tape._tracked
        keep = {s._id for s in sources}
        reach = {i for i in keep if i in tracked}
        grads = {}
        for tid, g in seeds:  # a target that is itself a source: its seed, watched or not (TF)
            if tid in keep and tid not in reach:
                prev = grads.get(tid)
                grads[tid] = g if prev is None else prev + g
        if not reach:
            return grads
        relevant = []
        for e in tape._entries:  # forward sweep: the records that depend on a source
            for i in e[IN_IDS]:
                if i in reach:
                    reach.add(e[OUT_ID])
                    relevant.append(e)
                    break
        for tid, g in seeds:
            if tid in reach:
                prev = grads.get(tid)
                grads[tid] = g if prev is None else prev + g
        tensor_mode = self.tensor_mode
        check = state.check_numerics and not tensor_mode  # TENSOR rules are checked as ops
        # Rules may run nested backward passes (a custom gradient taking a gradient): the
        # namespace's context is restored afterwards and set again before every rule.
        context = F.nb, F.needs, F.shapes
        raw = not tensor_mode
        fuse_pools = raw and not nb and not check and eager_fusion.ENABLED
        pool_relu = None
        try:
            for op, in_ids, saved, out, attrs, shapes, out_id in reversed(relevant):
                if out_id in keep:
                    g = grads.get(out_id)
                else:  # dropped once used: intermediate gradients die as early as possible
                    g = grads.pop(out_id, None)
                if g is None:
                    continue
                in_grads = None
                if op is _TILED_MAX_POOL and fuse_pools:
                    if pool_relu is None:
                        pool_relu = eager_fusion.PoolRelu(relevant)
                    fused = pool_relu.grads(op, in_ids, attrs, g, grads, keep, reach)
                    if fused is not None:   # the relu's record gets its gradients here
                        producer, in_grads = fused
                        in_ids, shapes = producer[IN_IDS], producer[SHAPES]
                n = len(in_ids)
                if n == 1:
                    needs = _NEEDS1  # a relevant record's only input is always reached
                elif n == 2:
                    needs = (in_ids[0] in reach, in_ids[1] in reach)
                else:
                    needs = tuple([i in reach for i in in_ids])
                if in_grads is None and isinstance(g, SparseCotangent):
                    # None back: the op needs the dense batch
                    in_grads = g.backprop(op, saved and _values(saved),
                                          None if out is None else out._value, attrs, needs,
                                          shapes)
                    if in_grads is None:
                        g = g.dense()
                if in_grads is None:
                    if op.user_grad is not None or op.vjp is None:
                        in_grads = _run_custom(_user_rule, op, saved, out, attrs, g, tensor_mode,
                                               F, nb, needs, shapes)
                    elif nb and getattr(op, "batch_unaware", False):
                        if op.per_example and not any(
                                needs[k] for k in range(n) if k not in op.per_example):
                            in_grads = _run_folded(op, saved, out, attrs, g, tensor_mode, F, nb,
                                                   needs, shapes)
                        else:
                            in_grads = _run_custom(_op_rule, op, saved, out, attrs, g,
                                                   tensor_mode, F, nb, needs, shapes)
                    else:
                        if raw:  # rules on bare arrays
                            if saved is not None:
                                saved = (saved[0]._value,) if n == 1 else _values(saved)
                            if out is not None:
                                out = out._value
                        F.nb, F.needs, F.shapes = nb, needs, shapes
                        in_grads = op.vjp(F, g, saved or (), out, **attrs)
                if check:
                    _check_gradients(op, in_grads, shapes)
                elif tensor_mode and not op.smooth and op.user_grad is None \
                        and op.type != "CustomGradient":
                    in_grads = _keep_connected(in_grads, saved, out)
                for k in range(n):
                    gi = in_grads[k]
                    if gi is None or not needs[k]:
                        continue
                    shape = shapes[k]
                    if (gi.shape[nb:] if nb else gi.shape) != shape:
                        if isinstance(gi, SparseCotangent):
                            gi = gi.dense()
                        F.nb = nb
                        gi = F.unbroadcast(gi, tuple(shape))  # keeps the nb leading batch dims
                    iid = in_ids[k]
                    prev = grads.get(iid)
                    if prev is None:
                        grads[iid] = gi
                    elif gi.__class__ is SliceCotangent and isinstance(prev, Tensor):
                        grads[iid] = gi + prev    # a Tensor cannot take pieces; they take it
                    else:
                        grads[iid] = prev + gi
        finally:
            F.nb, F.needs, F.shapes = context
        for tid, g in grads.items():   # what is left: the sources' gradients, made whole
            if g.__class__ is SliceCotangent:
                grads[tid] = g.dense()
        return grads


def _link_vjp(F, g, x, y):
    lead = tuple(g.shape[:F.nb])
    return (g,) + tuple(F.broadcast_to(F.zeros_like(d), lead + tuple(F.shapes[k + 1]))
                        if lead else F.zeros_like(d) for k, d in enumerate(x[1:]))


def _link_jvp(F, t, x, y):
    return t[0] if t[0] is not None else F.zeros_like(y)


# Passes its first input through; depends on the others with a zero derivative.
_ZERO_LINK = registry.Op("zero_link", arity=2, vjp=_link_vjp, jvp=_link_jvp, save=(0, 1),
                         type="ZeroLink")


def _keep_connected(in_grads, saved, out):
    """Keep gradients connected to the forward tensors their op used.

    TF's gradient ops take the forward tensors as inputs (``ReluGrad(g, y)``), so a tape watching
    those tensors sees the gradient depend on them, with a zero derivative where the rule is
    locally constant. The rules of minitf's piecewise-linear ops (``smooth=False``: relu,
    leaky_relu, abs, maximum, max pooling, ...) use the forward tensors only through boolean
    masks and lose that link: a second derivative would be None instead of zeros (a WGAN-GP
    penalty's gradient for a bias before a leaky_relu). So each listener that follows a forward
    tensor gets the gradient through a ``zero_link`` record.
    """
    deps = [t for t in (saved or ()) if t is not None]
    if out is not None:
        deps.append(out)
    if not deps or not (state.tapes or state.accumulators):
        return in_grads
    tapes = [t for t in state.tapes if getattr(t, "_tracked", None) is not None]  # not watchers
    result = list(in_grads)
    for k, gi in enumerate(result):
        if gi.__class__ is not Tensor:
            continue
        links = []  # (tape, forward tensors it follows) for each tape that follows gi or them
        for tape in tapes:
            linked = [d for d in deps if d._id in tape._tracked]
            if linked or gi._id in tape._tracked:
                links.append((tape, linked))
        new = gi
        if any(linked for _, linked in links):
            # One new tensor; each tape records it from gi (which that tape may know) and the
            # forward tensors it follows, so chains of nested tapes stay connected.
            new = registry.alias_of(gi)
            for tape, linked in links:
                tape._entries.append((_ZERO_LINK, (gi._id,) + tuple(d._id for d in linked),
                                      (gi,) + tuple(linked), None, {},
                                      (gi._value.shape,) + tuple(d._value.shape for d in linked),
                                      new._id))
                tape._tracked.add(new._id)
        for acc in state.accumulators:
            tangents = acc._tangents
            tangent = tangents.get(gi._id)
            if tangent is None and any(d._id in tangents for d in deps):
                tangent = registry.TENSOR.zeros_like(gi)
            if tangent is not None:
                tangents[new._id] = tangent
        result[k] = new
    return result


def _values(saved):
    """The arrays of a record's saved tensors (None where not saved)."""
    return tuple([None if t is None else t._value for t in saved])


def _check_gradients(op, in_grads, shapes):
    """``enable_check_numerics`` during a first-order backward pass (rules on bare arrays)."""
    for k, gi in enumerate(in_grads):
        if gi.__class__ is SliceCotangent:
            gi = gi.dense()
        elif isinstance(gi, SparseCotangent):
            gi = gi.vals
        if gi is None or getattr(gi, "dtype", None) is None or gi.dtype.kind != "f":
            continue
        if not bool(B.xp.isfinite(gi).all()):
            kind = "NaN" if bool(B.xp.isnan(gi).any()) else "Inf"
            raise registry.InvalidArgumentError(
                f"check_numerics: the gradient of op {op.name!r} produced {kind} for input {k} "
                f"(input shapes {', '.join(str(tuple(s)) for s in shapes)}) at "
                f"{registry.caller_line()}")


def _op_rule(op, saved, out, attrs, g, tensor_mode, F, needs, shapes):
    if not tensor_mode:
        saved = saved and _values(saved)
        out = None if out is None else out._value
    F.nb, F.needs, F.shapes = 0, needs, shapes
    return op.vjp(F, g, saved or (), out, **attrs)


def _user_rule(op, saved, out, attrs, g, tensor_mode, F, needs, shapes):
    """Run a ``RegisterGradient`` override (always on Tensors)."""
    if op.user_grad is None:
        raise LookupError(f"No gradient defined for operation {op.name!r} (op type: {op.type})")
    view = OpView(op, saved, out, attrs)
    result = op.user_grad(view, g if tensor_mode else Tensor(g))
    if not isinstance(result, (list, tuple)):
        result = (result,)
    if len(result) != len(shapes):
        raise ValueError(f"the gradient function registered for {op.type!r} returned "
                         f"{len(result)} gradients for {len(shapes)} inputs")
    if tensor_mode:
        return [None if r is None else registry.TENSOR.identity(r) if not isinstance(r, Tensor)
                else r for r in result]
    return [None if r is None else (r._value if isinstance(r, Tensor) else B.xp.asarray(r))
            for r in result]


def _run_folded(op, saved, out, attrs, g, tensor_mode, F, nb, needs, shapes):
    """A batch-unaware rule on a stack of cotangents, run once: the ``nb`` stack axes folded into
    the batch axis, which the rule's per-example inputs (``op.per_example``) allow."""
    stack = tuple(g.shape[:nb])
    folded = math.prod(stack) * g.shape[nb]
    g = F.reshape(g, (folded,) + tuple(g.shape[nb + 1:]))
    fold_shapes = tuple((folded,) + tuple(s[1:]) if needs[k] else s for k, s in enumerate(shapes))
    grads = _op_rule(op, saved, out, attrs, g, tensor_mode, F, needs, fold_shapes)
    F.nb = nb
    return [None if gk is None or not needs[k] else F.reshape(gk, stack + tuple(shapes[k]))
            for k, gk in enumerate(grads)]


def _run_custom(rule, op, saved, out, attrs, g, tensor_mode, F, nb, needs, shapes):
    """User-written gradients (overrides, ``custom_gradient``) see one cotangent at a time: during
    a vectorised jacobian they run once per row of the batch and the results are stacked."""
    if not nb:
        F.nb = 0
        return rule(op, saved, out, attrs, g, tensor_mode, F, needs, shapes)
    rows = []
    for b in range(g.shape[0]):
        gb = g[b]
        rows.append(_run_custom(rule, op, saved, out, attrs, gb, tensor_mode, F, nb - 1, needs,
                                shapes) if nb > 1 else
                    rule(op, saved, out, attrs, gb, tensor_mode, F, needs, shapes))
    stacked = []
    for k in range(len(rows[0])):
        col = [r[k] for r in rows]
        if all(c is None for c in col) or not needs[k]:
            stacked.append(None)
            continue
        shape = tuple(next(c for c in col if c is not None).shape)
        col = [c if c is not None else (TENSOR.zeros_like(next(x for x in col if x is not None))
                                        if tensor_mode else B.xp.zeros(shape, g.dtype))
               for c in col]
        if tensor_mode:
            stacked.append(TENSOR.stack(col))
        else:
            stacked.append(B.xp.stack(col))
    F.nb = nb
    return stacked
