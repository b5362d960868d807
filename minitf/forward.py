"""Forward-mode differentiation: ``autodiff.ForwardAccumulator``.

Every op's JVP runs as recorded minitf ops, so a GradientTape around an accumulator (or the
other way round) gives Hessian-vector products.
"""
from ._state import state
from .nest import flatten, pack_sequence_as
from .ops.convert import convert_to_tensor
from .ops.registry import TENSOR
from .tensor import Tensor


class ForwardAccumulator:
    """Compute Jacobian-vector products of everything run in its context.

    >>> x = minitf.constant(2.0)
    >>> with minitf.autodiff.ForwardAccumulator(x, minitf.constant(1.0)) as acc:
    ...     y = x * x
    >>> float(acc.jvp(y))
    4.0
    """

    def __init__(self, primals, tangents):
        # One primal: the tangent is taken whole (a Python list is its value, not a nest).
        tangents = [tangents] if isinstance(primals, Tensor) else list(flatten(tangents))
        primals = list(flatten(primals))
        if len(primals) != len(tangents):
            raise ValueError(f"ForwardAccumulator: {len(primals)} primals but {len(tangents)} "
                             f"tangents")
        self._tangents = {}
        self._in_context = False
        ids = [p._id for p in primals if isinstance(p, Tensor)]
        if len(set(ids)) != len(ids):
            raise ValueError("ForwardAccumulator: a primal was watched multiple times; pass "
                             "each tensor once with the sum of its tangents")
        for p, t in zip(primals, tangents):
            if not isinstance(p, Tensor):
                raise TypeError(f"ForwardAccumulator: primals must be Tensors or Variables, got "
                                f"{type(p).__name__}")
            t = t if isinstance(t, Tensor) else convert_to_tensor(t, dtype=p.dtype)
            if t._value.dtype != p._value.dtype:
                raise TypeError(f"ForwardAccumulator: tangent dtype {t.dtype.name} does not match "
                                f"primal dtype {p.dtype.name}")
            if tuple(p._value.shape) != tuple(t._value.shape):
                raise ValueError(f"ForwardAccumulator: tangent shape {tuple(t.shape)} does not "
                                 f"match primal shape {tuple(p.shape)}")
            self._tangents[p._id] = t

    def __enter__(self):
        if self._in_context:
            raise ValueError("ForwardAccumulator is already recording: it cannot be entered "
                             "again inside its own context")
        self._in_context = True
        self._order = state.next_order()
        state.accumulators.append(self)
        state.refresh()
        return self

    def __exit__(self, *exc):
        self._in_context = False
        if self in state.accumulators:
            state.accumulators.remove(self)
            state.refresh()

    def jvp(self, primals, unconnected_gradients="none"):
        """The tangent of ``primals`` (a tensor or nest), None (or zeros) where unconnected."""
        from .tape import UnconnectedGradients
        zero = UnconnectedGradients(unconnected_gradients) is UnconnectedGradients.ZERO

        def one(p):
            if not isinstance(p, Tensor):
                raise TypeError(f"ForwardAccumulator.jvp: expected Tensors, got "
                                f"{type(p).__name__}")
            t = self._tangents.get(p._id)
            if t is None and zero:
                from .ops.array_ops import zeros_like
                return zeros_like(p)
            return t
        return pack_sequence_as(primals, [one(p) for p in flatten(primals)])

    _busy = False
    _order = 0

    def _record(self, op, inputs, attrs, y):
        if self._busy:  # the JVP's own ops are not pushed forward by this accumulator again
            return      # (a flag, not removal: the registry is iterating over the list)
        tangents = [self._tangents.get(t._id) for t in inputs]
        if all(t is None for t in tangents):
            return
        self._busy = True
        # Only tapes and accumulators entered before this one (outside it) see the JVP's ops:
        # a tape inside the accumulator does not differentiate the tangents (TF's nesting rule).
        outer = _entered_before(self._order)
        try:
            ty = jvp_of(op, tangents, inputs, y, attrs)
        finally:
            self._busy = False
            outer.restore()
        if ty is not None:
            self._tangents[y._id] = ty


class _entered_before:
    """Make only the listeners entered before ``order`` active; ``restore()`` undoes it."""

    def __init__(self, order):
        self.saved = state.tapes, state.accumulators
        tapes = [t for t in state.tapes if getattr(t, "_order", 0) < order]
        accs = [a for a in state.accumulators if a._order < order]
        if len(tapes) != len(state.tapes) or len(accs) != len(state.accumulators):
            state.tapes, state.accumulators = tapes, accs
            state.refresh()

    def restore(self):
        state.tapes, state.accumulators = self.saved
        state.refresh()


def jvp_of(op, tangents, inputs, y, attrs):
    """The output tangent of one op application; see ``registry`` for the derived kinds."""
    # This can run in the middle of a backward pass that is itself being pushed forward (a
    # tape's TENSOR rule calling an op): give that rule its context back afterwards.
    F = TENSOR
    saved = F.nb, F.needs, F.shapes
    F.nb, F.shapes = 0, tuple(tuple(x._value.shape) for x in inputs)
    try:
        return _jvp_of(op, tangents, inputs, y, attrs)
    finally:
        F.nb, F.needs, F.shapes = saved


def _jvp_of(op, tangents, inputs, y, attrs):
    kind = op.jvp
    F = TENSOR
    tangents = [t if t is None or t._value.dtype == x._value.dtype else None
                for t, x in zip(tangents, inputs)]
    if callable(kind):
        return kind(F, tuple(tangents), tuple(inputs), y, **attrs)
    if kind == "linear":
        args = [t if t is not None else (x if x._value.dtype.kind not in "fc" else F.zeros_like(x))
                for t, x in zip(tangents, inputs)]
        from .ops.registry import apply
        return apply(op, tuple(args), attrs)
    if kind == "bilinear":
        from .ops.registry import apply
        total = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            args = list(inputs)
            args[i] = t
            term = apply(op, tuple(args), attrs)
            total = term if total is None else total + term
        return total
    if kind in ("elementwise", "reduction", "elementwise_last"):
        return _jvp_through_vjp(op, kind, tangents, inputs, y, attrs)
    raise NotImplementedError(f"op {op.name!r} has no forward-mode (JVP) rule")


def _jvp_through_vjp(op, kind, tangents, inputs, y, attrs):
    """Ops whose Jacobian is diagonal (elementwise) or a weighted sum (reductions, cross-entropy):
    the VJP evaluated at ``g`` gives the per-element partial derivatives."""
    F = TENSOR
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        F.needs = tuple(j == i for j in range(len(inputs)))
        if kind == "elementwise":
            seed = F.broadcast_to(t, tuple(y._value.shape)) if tuple(t._value.shape) != tuple(
                y._value.shape) else t
            gi = op.vjp(F, seed, tuple(inputs), y, **attrs)[i]
            term = gi
        else:
            weights = op.vjp(F, F.ones_like(y), tuple(inputs), y, **attrs)[i]
            if tuple(weights._value.shape) != tuple(t._value.shape):
                weights = F.broadcast_to(weights, tuple(t._value.shape))
            prod = t * weights
            if kind == "elementwise_last":
                term = F.reduce_sum(prod, axis=(prod.ndim - 1,))
            else:
                term = F.reduce_sum(prod, axis=attrs["axis"], keepdims=attrs.get("keepdims", False))
        if term is not None:   # None: the output does not depend on this input locally
            total = term if total is None else total + term
    return total
