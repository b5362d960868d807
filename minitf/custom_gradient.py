"""``@custom_gradient``: a function that supplies its own gradient rule.

As in TF's eager mode, the decorated function runs normally (active tapes record its ops, so a
``grad_fn`` that uses forward-pass tensors can itself be differentiated), while noting which
trainable variables it reads. Its outputs are then replaced by fresh tensors with the same values,
and each active tape records one entry from the inputs (tensor arguments, then the variables read)
to those outputs, whose rule calls the user's ``grad_fn``. The gradient therefore flows only
through ``grad_fn``. Forward-mode accumulators also follow ``grad_fn``, as TF does: the JVP is
derived from the VJP by differentiating ``grad_fn`` with respect to its (linear) cotangent
argument. Outputs and gradients may be Python numbers or numpy arrays; they are converted.
"""
import functools
import inspect

from . import backend as B
from ._state import state
from .nest import flatten, pack_sequence_as
from .ops.convert import convert_to_tensor
from .ops.registry import Op, alias_of
from .tensor import Tensor


class _CustomOp(Op):
    """A per-call op whose VJP is the user's ``grad_fn``."""
    __slots__ = ("grad_fn", "arg_is_tensor", "variables", "n_outputs", "index", "outputs",
                 "in_dtypes")

    def __init__(self, name, grad_fn, arg_is_tensor, variables, outputs, index, inputs):
        # batch_unaware: grad_fn sees one cotangent at a time, even in a vectorised jacobian.
        super().__init__(name, type="CustomGradient", arity=sum(arg_is_tensor) + len(variables),
                         smooth=False, batch_unaware=True)
        self.grad_fn = grad_fn
        self.arg_is_tensor = arg_is_tensor
        self.variables = variables
        self.n_outputs = len(outputs)
        self.outputs = [(o._value.shape, o._value.dtype) for o in outputs]  # not the tensors
        self.index = index
        self.in_dtypes = [t._value.dtype for t in inputs]
        self.vjp = self._vjp

    def _vjp(self, F, g, x, y):
        tensor_mode = isinstance(g, Tensor)
        gt = g if tensor_mode else Tensor(g)
        if self.n_outputs == 1:
            dys = [gt]
        else:  # one record per output: the other outputs get zero cotangents
            dys = [gt if k == self.index else Tensor(B.xp.zeros(shape, dtype))
                   for k, (shape, dtype) in enumerate(self.outputs)]
        grads = self.input_gradients(dys)
        if tensor_mode:
            return tuple(grads)
        return tuple(None if v is None else v._value for v in grads)

    def input_gradients(self, dys):
        """``grad_fn`` on the output cotangents ``dys``: one Tensor (or None) per input."""
        if self.variables:
            result = self.grad_fn(*dys, variables=list(self.variables))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise ValueError(f"custom_gradient {self.name}: grad_fn(*dy, variables=...) must "
                                 f"return (input_gradients, variable_gradients)")
            in_grads, var_grads = result
            var_grads = list(flatten(var_grads))
            if len(var_grads) != len(self.variables):
                raise ValueError(f"custom_gradient {self.name}: must return a gradient for each "
                                 f"of the {len(self.variables)} variables from grad_fn, got "
                                 f"{len(var_grads)}")
        else:
            in_grads, var_grads = self.grad_fn(*dys), []
        in_grads = list(flatten(in_grads)) if isinstance(in_grads, (list, tuple)) else [in_grads]
        n_all, n_tensors = len(self.arg_is_tensor), sum(self.arg_is_tensor)
        if len(in_grads) == n_all and n_all != n_tensors:  # TF style: one per argument
            in_grads = [gi for gi, is_t in zip(in_grads, self.arg_is_tensor) if is_t]
        elif len(in_grads) != n_tensors:
            raise ValueError(f"custom_gradient {self.name}: grad_fn returned {len(in_grads)} "
                             f"input gradients for {n_tensors} tensor arguments")
        return [None if v is None else v if isinstance(v, Tensor) else
                convert_to_tensor(v, dtype=dtype if dtype.kind == "f" else None)
                for v, dtype in zip(in_grads + var_grads, self.in_dtypes)]


class _VariableWatcher:
    """Sits among the active tapes while a custom-gradient function runs; notes the trainable
    variables its ops read (TF's ``VariableWatcher``)."""

    def __init__(self):
        self.variables = {}

    def _record(self, op, inputs, attrs, y):
        for t in inputs:
            if t._is_variable and t._trainable:
                self.variables[t._id] = t


def _accepts_variables(grad_fn):
    try:
        params = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind == p.VAR_KEYWORD for p in params)


def custom_gradient(f=None):
    """Decorate ``f(*x) -> (y, grad_fn)``; ``grad_fn(*dy)`` returns the gradients w.r.t. ``x``.

    When ``f`` reads trainable variables, ``grad_fn(*dy, variables=...)`` must return
    ``(input_grads, variable_grads)``. Tensor arguments may be passed by position or keyword
    (their gradients are returned in the order of ``f``'s parameters).
    """
    if f is None:
        return custom_gradient
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):
        signature = None

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        if not (state.tapes or state.accumulators):
            result, _ = f(*args, **kwargs)
            return _as_tensors(result)
        if signature is not None:
            bound = signature.bind(*args, **kwargs)
            flat_args = list(flatten(list(bound.arguments.values())))
        else:
            flat_args = list(flatten(list(args) + [kwargs[k] for k in sorted(kwargs)]))
        watcher = _VariableWatcher()
        state.tapes.append(watcher)
        state.refresh()
        try:
            result, grad_fn = f(*args, **kwargs)
        finally:
            state.tapes.remove(watcher)
            state.refresh()
        arg_ids = {id(a) for a in flat_args}
        variables = [v for _, v in sorted(watcher.variables.items()) if id(v) not in arg_ids]
        if variables and not _accepts_variables(grad_fn):
            raise TypeError(f"@custom_gradient grad_fn must accept keyword argument 'variables', "
                            f"since function {f.__name__} uses variables: "
                            f"{[v.name for v in variables]}")
        return _attach(f.__name__, _as_tensors(result, f.__name__), grad_fn, flat_args,
                       variables)

    return wrapper


def _attach(name, result, grad_fn, flat_args, variables):
    """Make ``grad_fn`` the only way gradients flow from ``result`` to the tensor arguments and
    ``variables``: every active tape records one op per output, and every accumulator gets the
    outputs' tangents from ``grad_fn``."""
    arg_is_tensor = tuple(isinstance(a, Tensor) for a in flat_args)
    inputs = tuple(a for a in flat_args if isinstance(a, Tensor)) + tuple(variables)
    # Fresh tensors with the same values: the tapes see them only as outputs of grad_fn's op.
    outputs = [alias_of(y) for y in flatten(result)]
    ops = [_CustomOp(name, grad_fn, arg_is_tensor, variables, outputs, k, inputs)
           for k in range(len(outputs))]
    for acc in list(state.accumulators):
        _push_forward(acc, ops, inputs, outputs)
    for op, y in zip(ops, outputs):
        if y._value.dtype.kind != "f":
            continue
        for tape in state.tapes:
            tape._record(op, inputs, {}, y)
    return pack_sequence_as(result, outputs)


def recompute_grad(f):
    """Run ``f`` without keeping its intermediate results for the backward pass, which runs
    ``f`` again (TF's ``recompute_grad``): memory for compute. Gradients, including those of
    the trainable variables ``f`` reads and higher orders, are the same as without it."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        if not (state.tapes or state.accumulators):
            return f(*args, **kwargs)
        flat_args = list(flatten(list(args)))
        tensors = [a for a in flat_args if isinstance(a, Tensor)]
        watcher = _VariableWatcher()  # the only listener: nothing is saved for the backward pass
        saved = state.tapes, state.accumulators
        state.tapes, state.accumulators = [watcher], []
        state.refresh()
        try:
            result = _as_tensors(f(*args, **kwargs), f.__name__)
        finally:
            state.tapes, state.accumulators = saved
            state.refresh()
        arg_ids = {id(a) for a in tensors}
        variables = [v for _, v in sorted(watcher.variables.items()) if id(v) not in arg_ids]

        def grad_fn(*dys, variables=None):
            from .tape import GradientTape
            sources = tensors + list(variables or ())
            with GradientTape() as tape:
                tape.watch(sources)
                again = list(flatten(f(*args, **kwargs)))
            grads = tape.gradient(again, sources, output_gradients=list(dys))
            n = len(tensors)
            return (grads[:n], grads[n:]) if variables else grads[:n]

        return _attach(f.__name__, result, grad_fn, flat_args, variables)

    return wrapper


def _as_tensors(result, name="custom_gradient"):
    """TF converts a custom-gradient function's outputs (Python numbers, numpy arrays)."""
    def convert(y):
        try:
            return convert_to_tensor(y)
        except TypeError as exc:
            raise TypeError(f"custom_gradient {name}: outputs must be tensors or convertible "
                            f"to tensors, got {type(y).__name__}: {exc}") from None
    return pack_sequence_as(result, [convert(y) for y in flatten(result)])


def _push_forward(acc, ops, inputs, outputs):
    """Tangents of the outputs from ``grad_fn``: the VJP is linear in the cotangent ``u``, and
    d/du <vjp(u), t> = J t, so one backward pass over ``grad_fn`` (watching ``u``) gives the JVP.
    The accumulator does not push its own bookkeeping forward (nested ones do, for higher order).
    """
    from .tape import GradientTape
    tangents = [acc._tangents.get(t._id) for t in inputs]
    if all(t is None for t in tangents) or acc._busy:
        return
    from .forward import _entered_before
    acc._busy = True
    outer = _entered_before(acc._order)
    try:
        float_out = [k for k, y in enumerate(outputs) if y._value.dtype.kind == "f"]
        if not float_out:
            return
        us = [Tensor(B.xp.zeros(outputs[k]._value.shape, outputs[k]._value.dtype))
              for k in float_out]
        with GradientTape(persistent=True) as tape:
            tape.watch(us)
            dys = []
            for k, (shape, dtype) in enumerate(ops[0].outputs):
                dys.append(us[float_out.index(k)] if k in float_out else
                           Tensor(B.xp.zeros(shape, dtype)))
            grads = ops[0].input_gradients(dys)
        targets, weights = [], []
        for g, t in zip(grads, tangents):
            if g is not None and t is not None and g._value.dtype == t._value.dtype:
                targets.append(g)
                weights.append(t)
        if not targets:
            return
        jvps = tape.gradient(targets, us, output_gradients=weights)
    finally:
        acc._busy = False
        outer.restore()
    for k, jvp in zip(float_out, jvps):
        if jvp is not None:
            acc._tangents[outputs[k]._id] = jvp
