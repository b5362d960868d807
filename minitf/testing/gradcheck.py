"""Gradient checks for minitf ops and functions (autograd's ``check_grads``, for a tape).

``check_grads(fn, args)`` runs ``fn`` on Tensors made from ``args`` and checks its derivatives:

* ``"rev"``: the VJP from ``GradientTape`` against central differences along one random
  direction: ``<u, J v>`` by finite differences vs ``<J^T u, v>`` by the tape;
* ``"fwd"``: the JVP from ``ForwardAccumulator`` against the VJP: ``<u, J t>`` both ways;
* ``jacobian``: the vectorised ``tape.jacobian`` (rules run with ``F.nb = 1``) against the
  reference loop (``experimental_use_pfor=False``), and ``tape.batch_jacobian`` likewise
  where an output and an input share a leading dimension;
* ``namespaces``: gradient and jacobian with rules on bare arrays (``RAW``) against the same
  with a second, unrelated tape active, which makes the rules run as minitf ops (``TENSOR``);
* ``order=2``: all of the above again for ``x -> grad(<u, fn(x)>)`` computed under an outer
  tape or accumulator (higher-order derivatives through the ``TENSOR`` rules).

Float inputs are differentiated; integer and bool inputs (labels, masks) are passed as they are.
Random projections keep the cost independent of the size of the Jacobian (except the jacobian
check, which is quadratic: keep samples small).

>>> import numpy as np, minitf as tf
>>> check_grads(lambda x: tf.sin(x) * x, [np.linspace(-1, 1, 5)])
"""
import numpy

from .. import backend as B
from .. import dtypes
from ..forward import ForwardAccumulator
from ..nest import flatten
from ..ops.convert import convert_to_tensor
from ..ops.registry import apply
from ..tape import GradientTape, UnconnectedGradients
from ..tensor import Tensor

# eps: finite-difference step; numeric: relative tolerance of the finite-difference comparison;
# exact: relative tolerance between two analytic results (JVP vs VJP, pfor vs loop, RAW vs TENSOR).
_TOLERANCES = {
    "float64": {"eps": 1e-6, "numeric": 1e-6, "exact": 1e-9},
    "float32": {"eps": 1e-3, "numeric": 2e-2, "exact": 1e-4},
    "bfloat16": {"eps": 1e-1, "numeric": 2e-1, "exact": 5e-2},
    "float16": {"eps": 1e-1, "numeric": 1e-1, "exact": 1e-2},
}


class GradCheckError(AssertionError):
    """A derivative disagrees with its reference; the message names the function and the check."""


def tolerances(dtype):
    """The default ``{"eps", "numeric", "exact"}`` tolerances for a float dtype."""
    return dict(_TOLERANCES[dtypes.as_dtype(dtype).name])


def check_op(op, inputs, attrs=None, **kwargs):
    """Check a registered ``Op`` on sample ``inputs`` (arrays) with ``attrs``.

    Uses the op's ``grad_tol`` (if set) as the finite-difference tolerance, checks second order
    only when ``op.smooth`` and forward mode only when ``op.jvp`` is set.
    """
    attrs = _backend_attrs(dict(attrs or {}))
    kwargs.setdefault("order", 2 if op.smooth else 1)
    kwargs.setdefault("modes", ("rev", "fwd") if op.jvp is not None else ("rev",))
    if op.grad_tol is not None:
        kwargs.setdefault("rtol", op.grad_tol)
    kwargs.setdefault("name", f"op {op.name!r} with {attrs}")

    def fn(*tensors):
        return apply(op, tensors, attrs)

    check_grads(fn, inputs, **kwargs)


def check_grads(fn, args, *, order=2, modes=("rev", "fwd"), jacobian=True, namespaces=True,
                rtol=None, eps=None, seed=0, name=None):
    """Check the derivatives of ``fn(*tensors)`` at ``args``; raises ``GradCheckError``.

    ``fn`` returns a Tensor or a nest of them (non-float outputs are ignored). ``rtol`` and
    ``eps`` override the finite-difference tolerance and step of the least precise dtype.
    """
    name = name or getattr(fn, "__name__", "function")
    args = [a if isinstance(a, Tensor) else _tensor(a) for a in args]
    diff = [i for i, a in enumerate(args) if dtypes.is_float(a._value.dtype)]
    if not diff:
        raise ValueError(f"check_grads({name}): no float input to differentiate")
    rng = numpy.random.default_rng(seed)
    outs = _float_outputs(fn, args)
    if not outs:
        raise ValueError(f"check_grads({name}): fn has no float output")
    tol = _tolerance_for([args[i] for i in diff] + outs)
    if rtol is not None:
        tol["numeric"] = float(rtol)
    if eps is not None:
        tol["eps"] = float(eps)
    ctx = _Context(fn, args, diff, outs, tol, rng, name)
    if "rev" in modes:
        ctx.check_vjp_numeric()
    if "fwd" in modes:
        ctx.check_jvp()
    if jacobian:
        ctx.check_jacobian()
    if namespaces:
        ctx.check_namespaces()
    if order >= 2:
        ctx.check_second_order(modes, jacobian)


class _Context:
    def __init__(self, fn, args, diff, outs, tol, rng, name):
        self.fn, self.args, self.diff, self.tol, self.name = fn, args, diff, tol, name
        self.rng = rng
        self.u = [_random_like(rng, o) for o in outs]             # output cotangents
        self.v = [_random_like(rng, args[i]) for i in diff]       # input directions

    def fail(self, check, detail):
        raise GradCheckError(f"{self.name}: {check}: {detail}")

    def with_inputs(self, new):
        args = list(self.args)
        for i, t in zip(self.diff, new):
            args[i] = t
        return args

    # --- reverse mode against finite differences ---------------------------------------------
    def vjp(self, extra_tape=False):
        """Input gradients for cotangents ``u`` (zeros where unconnected), as Tensors."""
        sources = [self.args[i] for i in self.diff]
        dummy = _dummy_tape() if extra_tape else None
        try:
            with GradientTape() as tape:
                tape.watch(sources)
                outs = _float_outputs(self.fn, self.args)
            grads = tape.gradient(outs, sources, output_gradients=self.u,
                                  unconnected_gradients=UnconnectedGradients.ZERO)
        finally:
            if dummy is not None:
                dummy.__exit__(None, None, None)
        for g, s in zip(grads, sources):
            if tuple(g.shape) != tuple(s.shape) or g.dtype != s.dtype:
                self.fail("gradient shape/dtype",
                          f"gradient {tuple(g.shape)} {g.dtype.name} for input "
                          f"{tuple(s.shape)} {s.dtype.name}" + (" (TENSOR rules)" if extra_tape
                                                                else ""))
        return grads

    def check_vjp_numeric(self):
        eps = self.tol["eps"]
        plus, minus, steps = [], [], []
        for i, v in zip(self.diff, self.v):
            x = self.args[i]._value
            xp_, xm_ = (x + eps * v._value).astype(x.dtype), (x - eps * v._value).astype(x.dtype)
            plus.append(Tensor(xp_))
            minus.append(Tensor(xm_))
            steps.append((_host(xp_) - _host(xm_)) / (2 * eps))  # the step actually taken
        fp = _float_outputs(self.fn, self.with_inputs(plus))
        fm = _float_outputs(self.fn, self.with_inputs(minus))
        numeric = [(_host(a) - _host(b)) / (2 * eps) for a, b in zip(fp, fm)]
        lhs = sum(float((_host(u) * n).sum()) for u, n in zip(self.u, numeric))
        lscale = sum(float(numpy.abs(_host(u) * n).sum()) for u, n in zip(self.u, numeric))
        grads = self.vjp()
        rhs = sum(float((_host(g) * s).sum()) for g, s in zip(grads, steps))
        rscale = sum(float(numpy.abs(_host(g) * s).sum()) for g, s in zip(grads, steps))
        if not _close(lhs, rhs, self.tol["numeric"], max(lscale, rscale)):
            self.fail("VJP vs finite differences",
                      f"<u, J v> = {lhs!r} by central differences (eps={eps}) but "
                      f"<J^T u, v> = {rhs!r} from the tape (rtol {self.tol['numeric']})")

    # --- forward mode against reverse mode ---------------------------------------------------
    def check_jvp(self):
        primals = [self.args[i] for i in self.diff]
        with ForwardAccumulator(primals, self.v) as acc:
            outs = _float_outputs(self.fn, self.args)
            tangents = [acc.jvp(o) for o in outs]
        for t, o in zip(tangents, outs):
            if t is not None and (tuple(t.shape) != tuple(o.shape) or t.dtype != o.dtype):
                self.fail("JVP shape/dtype", f"tangent {tuple(t.shape)} {t.dtype.name} for output "
                                             f"{tuple(o.shape)} {o.dtype.name}")
        lhs = sum(float((_host(u) * _host(t)).sum()) for u, t in zip(self.u, tangents)
                  if t is not None)
        lscale = sum(float(numpy.abs(_host(u) * _host(t)).sum())
                     for u, t in zip(self.u, tangents) if t is not None)
        grads = self.vjp()
        rhs = sum(float((_host(g) * _host(v)).sum()) for g, v in zip(grads, self.v))
        rscale = sum(float(numpy.abs(_host(g) * _host(v)).sum()) for g, v in zip(grads, self.v))
        if not _close(lhs, rhs, self.tol["exact"], max(lscale, rscale)):
            self.fail("JVP vs VJP", f"<u, J t> = {lhs!r} from ForwardAccumulator but "
                                    f"<J^T u, t> = {rhs!r} from GradientTape")

    # --- vectorised jacobian against the loop ------------------------------------------------
    def jacobians(self, pfor, extra_tape=False):
        sources = [self.args[i] for i in self.diff]
        dummy = _dummy_tape() if extra_tape else None
        try:
            with GradientTape(persistent=True) as tape:
                tape.watch(sources)
                outs = _float_outputs(self.fn, self.args)
            result = [tape.jacobian(o, sources, experimental_use_pfor=pfor,
                                    unconnected_gradients=UnconnectedGradients.ZERO)
                      for o in outs]
        finally:
            if dummy is not None:
                dummy.__exit__(None, None, None)
        for o, row in zip(outs, result):
            for s, j in zip(sources, row):
                want = tuple(o.shape) + tuple(s.shape)
                if tuple(j.shape) != want:
                    self.fail("jacobian shape", f"{tuple(j.shape)} instead of {want} (pfor={pfor}"
                                                f"{', TENSOR rules' if extra_tape else ''})")
        return result

    def compare(self, check, a, b, scale=1e-30):
        a, b = _host(a), _host(b)
        scale = max(float(numpy.abs(a).max(initial=0.0)), float(numpy.abs(b).max(initial=0.0)),
                    scale)
        err = float(numpy.abs(a - b).max(initial=0.0))
        if not err <= self.tol["exact"] * scale:
            self.fail(check, f"max abs difference {err!r} (scale {scale!r}, rtol "
                             f"{self.tol['exact']})")

    def batch_jacobians(self, pfor):
        """``tape.batch_jacobian`` of every output of rank >= 2 w.r.t. every input of rank >= 2
        with the same leading dimension, keyed by (output, input) indexes."""
        sources = [self.args[i] for i in self.diff]
        with GradientTape(persistent=True) as tape:
            tape.watch(sources)
            outs = _float_outputs(self.fn, self.args)
        result = {}
        for k, o in enumerate(outs):
            for j, s in enumerate(sources):
                if o.shape.rank >= 2 and s.shape.rank >= 2 and o.shape[0] == s.shape[0]:
                    result[k, j] = tape.batch_jacobian(
                        o, s, experimental_use_pfor=pfor,
                        unconnected_gradients=UnconnectedGradients.ZERO)
        return result

    def check_jacobian(self):
        vectorised, loop = self.jacobians(True), self.jacobians(False)
        for k, (rv, rl) in enumerate(zip(vectorised, loop)):
            for j, (a, b) in enumerate(zip(rv, rl)):
                self.compare(f"jacobian (pfor) vs loop, output {k}, input {self.diff[j]}", a, b)
        full = vectorised
        vectorised, loop = self.batch_jacobians(True), self.batch_jacobians(False)
        for (k, j), a in vectorised.items():
            # Per-example blocks can be all rounding noise (a batch norm's): scale them by the
            # whole Jacobian's largest entry.
            self.compare(f"batch_jacobian (pfor) vs loop, output {k}, input {self.diff[j]}", a,
                         loop[k, j], scale=float(numpy.abs(_host(full[k][j])).max(initial=0.0)))

    # --- RAW rules against TENSOR rules ------------------------------------------------------
    def check_namespaces(self):
        raw, tensor = self.vjp(), self.vjp(extra_tape=True)
        for j, (a, b) in enumerate(zip(raw, tensor)):
            self.compare(f"gradient RAW vs TENSOR rules, input {self.diff[j]}", a, b)
        raw, tensor = self.jacobians(True), self.jacobians(True, extra_tape=True)
        for k, (rr, rt) in enumerate(zip(raw, tensor)):
            for j, (a, b) in enumerate(zip(rr, rt)):
                self.compare(f"jacobian RAW vs TENSOR rules, output {k}, input {self.diff[j]}",
                             a, b)

    # --- second order ------------------------------------------------------------------------
    def check_second_order(self, modes, jacobian):
        fn, diff, u = self.fn, self.diff, self.u

        def gradient_of_fn(*xs):
            sources = [xs[i] for i in diff]
            with GradientTape() as tape:
                tape.watch(sources)
                outs = _float_outputs(fn, xs)
            return tape.gradient(outs, sources, output_gradients=u,
                                 unconnected_gradients=UnconnectedGradients.ZERO)

        check_grads(gradient_of_fn, self.args, order=1, modes=modes, jacobian=jacobian,
                    namespaces=False, rtol=self.tol["numeric"] * 10, eps=self.tol["eps"],
                    seed=int(self.rng.integers(2 ** 31)), name=f"{self.name} (second order)")


# --- helpers -------------------------------------------------------------------------------------

def check_variable_grads(loss, variables, *, eps=1e-6, rtol=1e-6, atol=1e-8):
    """The tape gradient of the scalar ``loss()`` with respect to each of ``variables`` against
    central differences of ``loss`` in each element (variables in float64 for a tight check);
    every variable keeps its value. Raises ``AssertionError`` naming the variable."""
    variables = list(variables)
    with GradientTape() as tape:
        value = loss()
    grads = tape.gradient(value, variables)
    for var, grad in zip(variables, grads):
        base = B.to_numpy(var._value).copy()
        numeric = numpy.zeros_like(base)
        for idx in numpy.ndindex(base.shape):
            for sign in (1, -1):
                bumped = base.copy()
                bumped[idx] += sign * eps
                var.assign(B.from_numpy(bumped))
                numeric[idx] += sign * float(B.to_numpy(loss()._value)) / (2 * eps)
        var.assign(B.from_numpy(base))
        numpy.testing.assert_allclose(B.to_numpy(grad._value), numeric, rtol=rtol, atol=atol,
                                      err_msg=f"gradient of {getattr(var, 'path', var.name)}")


def _tensor(a):
    if B.is_array(a) or isinstance(a, numpy.generic):
        return Tensor(B.xp.asarray(a))
    return convert_to_tensor(a)


def _host(a):
    """A float64 host copy of a Tensor or array."""
    if isinstance(a, Tensor):
        a = a._value
    return numpy.asarray(B.to_numpy(a), dtype=numpy.float64)


def _float_outputs(fn, args):
    return [o for o in flatten(fn(*args))
            if isinstance(o, Tensor) and dtypes.is_float(o._value.dtype)]


def _random_like(rng, t):
    value = rng.standard_normal(tuple(t._value.shape))
    return Tensor(B.xp.asarray(value).astype(t._value.dtype))


def _tolerance_for(tensors):
    """Tolerances of the least precise float dtype among ``tensors``."""
    least = min((t._value.dtype for t in tensors), key=lambda d: d.itemsize)
    return dict(_TOLERANCES[dtypes._dtype_of_np(least).name])


def _close(a, b, rtol, scale):
    return abs(a - b) <= rtol * max(scale, abs(a), abs(b)) + 1e-300


def _dummy_tape():
    """An active tape watching an unrelated tensor: other tapes' rules then run as minitf ops."""
    tape = GradientTape()
    tape.__enter__()
    tape.watch(Tensor(B.xp.zeros((), dtype=numpy.float64)))
    return tape


def _backend_attrs(attrs):
    """Move index arrays in attributes (getitem keys) onto the active backend."""
    if B.xp is numpy:
        return attrs

    def move(v):
        if isinstance(v, numpy.ndarray):
            return B.xp.asarray(v)
        if isinstance(v, tuple):
            return tuple(move(x) for x in v)
        return v

    return {k: move(v) for k, v in attrs.items()}
