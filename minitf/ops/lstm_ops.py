"""A whole LSTM sequence as one op, forward and backward (what ``keras.layers.LSTM`` runs).

Keras' LSTM step with its default activations (``tanh``, ``sigmoid``) as per-step registered
ops costs about a dozen ops forward and as many backward for every time step; here the loop
over the steps runs inside two kernels:

* ``lstm_sequence(x_proj, bias, h0, c0, recurrent_kernel)``: ``x_proj`` (steps, batch, 4u)
  is ``x @ kernel`` for every step (gates ``i, f, c, o``), added to ``bias`` (4u) in the
  loop's first pass rather than in a pass of its own. The output is
  (steps, batch, 6, u): for each step ``h, c`` and the gate activations ``i, f, c~, o`` (the
  backward pass reads them instead of recomputing). The forward runs the same float
  operations in the same order as the per-step ops, so ``h`` and ``c`` are the same bits.
* ``lstm_sequence_grad(c0, recurrent_kernel, y, g)``: the backward loop for the output ``y``
  and its cotangent ``g``, (steps + 1, batch, 4u): per step the gradient of the gates'
  pre-activations ``z`` (the gradient of ``x_proj``, a contiguous block for what follows),
  then a last row with the gradients of ``h0`` and ``c0`` (and zeros). The recurrent kernel's
  gradient is one product over all the steps afterwards.

Both are time-major, as cuDNN's and PyTorch's kernels: a step's values are one contiguous
block (batch-major, a step's rows lie 64 KB apart in a 32-step sequence of 128 units, and the
per-step passes ran 1.3x slower on them).

Higher derivatives of ``lstm_sequence_grad`` and the forward-mode rules differentiate the
per-step formulas written with registered ops (``_forward_steps`` / ``_backward_steps``): the
fast kernels are for first-order gradients and ``minitf.function`` replays.
"""
import numpy

from .. import backend as B
from .. import native_lstm
from .linalg_ops import matrix_product
from .math_ops import _sigmoid, _sigmoid_numpy
from .registry import defop

_SLOTS = 6   # of the forward's output: h, c, i, f, c~, o


def _lstm_forward(x_proj, bias, h0, c0, recurrent_kernel):
    steps, batch, width = x_proj.shape
    out = B.xp.empty((steps, batch, _SLOTS, width // 4), dtype=x_proj.dtype)
    if native_lstm.forward(x_proj, bias, h0, c0, recurrent_kernel, out, matrix_product):
        return out
    return _numpy_forward(x_proj, bias, h0, c0, recurrent_kernel, out)


def _lstm_grad_forward(c0, recurrent_kernel, y, g):
    """The backward loop (see the module docstring); ``g`` is the cotangent of ``y``."""
    steps, batch, _, u = y.shape
    out = B.xp.empty((steps + 1, batch, 4 * u), dtype=y.dtype)
    initial = native_lstm.backward(c0, recurrent_kernel, y, g, out, matrix_product)
    if initial is None:
        return _numpy_backward(c0, recurrent_kernel, y, g, out)
    last_row(out, *initial)
    return out


def last_row(out, dh0, dc0):
    """The last row of ``lstm_sequence_grad``'s result: the gradients of h0 and c0, then
    zeros."""
    u = dh0.shape[-1]
    out[-1, :, :u] = dh0
    out[-1, :, u:2 * u] = dc0
    out[-1, :, 2 * u:] = 0


def _numpy_forward(x_proj, bias, h0, c0, recurrent_kernel, out=None, xp=None,
                   product=matrix_product):
    """The per-step ops' float operations, in their order (``LSTMCell._project`` adds the
    bias, ``LSTMCell._step`` the recurrent product). ``xp`` and
    ``product``: another array module and matrix product (the start-up check's numpy)."""
    sigmoid = _sigmoid if xp is None else (lambda v: _sigmoid_numpy(v, xp))
    xp = xp or B.xp
    steps, batch, width = x_proj.shape
    u = width // 4
    if out is None:
        out = xp.empty((steps, batch, _SLOTS, u), dtype=x_proj.dtype)
    h, c = h0, c0
    for t in range(steps):
        z = xp.add(xp.add(x_proj[t], bias), product(h, recurrent_kernel))
        slots = out[t]
        i, f, cc, o = (slots[:, 2], slots[:, 3], slots[:, 4], slots[:, 5])
        i[...] = sigmoid(z[:, :u])
        f[...] = sigmoid(z[:, u:2 * u])
        xp.tanh(z[:, 2 * u:3 * u], out=cc)
        o[...] = sigmoid(z[:, 3 * u:])
        c = xp.add(xp.multiply(f, c), xp.multiply(i, cc), out=slots[:, 1])
        h = xp.multiply(o, xp.tanh(c))
        slots[:, 0] = h
    return out


def _numpy_backward(c0, recurrent_kernel, y, g, out=None, xp=None, product=matrix_product):
    """``lstm_sequence_grad`` in numpy passes (the compiled pass's operations, in its
    order); ``xp`` and ``product`` as for ``_numpy_forward``."""
    xp = xp or B.xp
    steps, batch, _, u = y.shape
    if out is None:
        out = xp.empty((steps + 1, batch, 4 * u), dtype=y.dtype)
    kernel_t = recurrent_kernel.T
    dh = dc = xp.zeros((batch, u), dtype=y.dtype) if steps == 0 else None
    for t in range(steps - 1, -1, -1):
        gt, slots, dz = g[t], y[t], out[t]
        i, f, cc, o = slots[:, 2], slots[:, 3], slots[:, 4], slots[:, 5]
        c_prev = c0 if t == 0 else y[t - 1, :, 1]
        dh = gt[:, 0] if dh is None else dh + gt[:, 0]
        tanh_c = xp.tanh(slots[:, 1])
        dc_own = dh * o * (1.0 - tanh_c * tanh_c)
        dc = gt[:, 1] + dc_own if dc is None else dc + gt[:, 1] + dc_own
        xp.multiply((dc * cc + gt[:, 2]) * i, 1.0 - i, out=dz[:, :u])
        xp.multiply((dc * c_prev + gt[:, 3]) * f, 1.0 - f, out=dz[:, u:2 * u])
        xp.multiply(dc * i + gt[:, 4], 1.0 - cc * cc, out=dz[:, 2 * u:3 * u])
        xp.multiply((dh * tanh_c + gt[:, 5]) * o, 1.0 - o, out=dz[:, 3 * u:])
        dh = product(dz, kernel_t)
        dc = dc * f
    last_row(out, dh, dc)
    return out


# --- the same computations as registered ops (higher derivatives, forward mode) ----------------

def _forward_steps(F, x_proj, bias, h0, c0, recurrent_kernel):
    """``lstm_sequence`` from per-step ops."""
    steps = x_proj.shape[0]
    u = recurrent_kernel.shape[0]
    h, c, rows = h0, c0, []
    for t in range(steps):
        z = (F.getitem(x_proj, key=(t,)) + bias) + F.matmul(h, recurrent_kernel)
        i, f, cc, o = (F.getitem(z, key=(slice(None), slice(k * u, (k + 1) * u)))
                       for k in range(4))
        i, f, cc, o = F.sigmoid(i), F.sigmoid(f), F.tanh(cc), F.sigmoid(o)
        c = f * c + i * cc
        h = o * F.tanh(c)
        rows.append(F.stack([h, c, i, f, cc, o]))       # (6, batch, u)
    return F.transpose(F.stack(rows), (0, 2, 1, 3))     # (steps, batch, 6, u)


def _backward_steps(F, c0, recurrent_kernel, y, g):
    """``lstm_sequence_grad`` from per-step ops."""
    steps = y.shape[0]
    dh = dc = None
    rows = []   # dz of each step, last step first
    kernel_t = F.transpose(recurrent_kernel, (1, 0))
    for t in range(steps - 1, -1, -1):
        h_, c, i, f, cc, o = (F.getitem(y, key=(t, slice(None), k)) for k in range(_SLOTS))
        gh, gc, gi, gf, gcc, go = (F.getitem(g, key=(t, slice(None), k)) for k in range(_SLOTS))
        c_prev = c0 if t == 0 else F.getitem(y, key=(t - 1, slice(None), 1))
        dh = gh if dh is None else dh + gh
        tanh_c = F.tanh(c)
        dc = (gc if dc is None else dc + gc) + dh * o * (1.0 - tanh_c * tanh_c)
        dz = _concat(F, [(dc * cc + gi) * i * (1.0 - i), (dc * c_prev + gf) * f * (1.0 - f),
                         (dc * i + gcc) * (1.0 - cc * cc), (dh * tanh_c + go) * o * (1.0 - o)],
                     1)
        dh = F.matmul(dz, kernel_t)
        dc = dc * f
        rows.append(dz)
    last = _concat(F, [dh, dc, F.zeros_like(dh), F.zeros_like(dc)], 1)
    return F.stack(rows[::-1] + [last])


def _concat(F, values, axis):
    from .array_ops import concat
    from .registry import RAW
    return B.xp.concatenate(values, axis=axis) if F is RAW else concat(values, axis)


def _as_tensors(values):
    from ..tensor import Tensor
    return [v if isinstance(v, Tensor) else Tensor(v) for v in values]


def _vjp_of_steps(steps_fn, inputs, g):
    """Input gradients of ``steps_fn(TENSOR, *inputs)`` for the cotangent ``g``: the per-step
    ops run on a tape of their own (and on any tape outside, for higher orders)."""
    from ..tape import GradientTape
    from ..tensor import Tensor
    from .registry import RAW, TENSOR
    raw = not isinstance(g, Tensor)
    context = RAW.nb, RAW.needs, RAW.shapes, TENSOR.nb, TENSOR.needs, TENSOR.shapes
    needs = TENSOR.needs if not raw else RAW.needs
    inputs, (g,) = _as_tensors(inputs), _as_tensors([g])
    try:
        with GradientTape() as tape:
            tape.watch(inputs)
            y = steps_fn(TENSOR, *inputs)
        grads = tape.gradient(y, inputs, output_gradients=g, unconnected_gradients="zero")
    finally:
        RAW.nb, RAW.needs, RAW.shapes, TENSOR.nb, TENSOR.needs, TENSOR.shapes = context
    return tuple((grad._value if raw else grad) if need else None
                 for grad, need in zip(grads, needs))


def _jvp_of_steps(steps_fn, inputs, tangents):
    """The output tangent of ``steps_fn(TENSOR, *inputs)``, by a forward accumulator."""
    from ..forward import ForwardAccumulator
    from .registry import TENSOR
    watched = [(x, t) for x, t in zip(inputs, tangents) if t is not None]
    context = TENSOR.nb, TENSOR.needs, TENSOR.shapes
    try:
        with ForwardAccumulator([x for x, _ in watched], [t for _, t in watched]) as acc:
            y = steps_fn(TENSOR, *inputs)
        return acc.jvp(y, unconnected_gradients="zero")
    finally:
        TENSOR.nb, TENSOR.needs, TENSOR.shapes = context


def _lstm_vjp(F, g, x, y):
    _, _, h0, c0, kernel = x
    steps, batch, _, u = (int(d) for d in y.shape)
    grads = F.lstm_sequence_grad(c0, kernel, y, g)
    dz = F.getitem(grads, key=(slice(0, steps),))
    dh0 = F.getitem(grads, key=(steps, slice(None), slice(0, u))) if F.needs[2] else None
    dc0 = F.getitem(grads, key=(steps, slice(None), slice(u, 2 * u))) if F.needs[3] else None
    d_kernel = None
    if F.needs[4] and steps == 0:
        d_kernel = F.zeros_like(kernel)
    elif F.needs[4]:   # sum over the steps of h_prev^T dz: one product
        h_prev = F.getitem(y, key=(slice(0, steps - 1), slice(None), 0))
        h_prev = _concat(F, [F.reshape(h0, (1, batch, u)), h_prev], 0)
        d_kernel = F.matmul(F.transpose(F.reshape(h_prev, (steps * batch, u)), (1, 0)),
                            F.reshape(dz, (steps * batch, 4 * u)))
    # the bias's gradient is dz summed over the steps and the batch (the tape's unbroadcast)
    return (dz if F.needs[0] else None), (dz if F.needs[1] else None), dh0, dc0, d_kernel


def _lstm_jvp(F, t, x, y):
    return _jvp_of_steps(_forward_steps, x, t)


def _lstm_grad_vjp(F, g, x, y):
    return _vjp_of_steps(_backward_steps, x, g)


def _lstm_grad_jvp(F, t, x, y):
    return _jvp_of_steps(_backward_steps, x, t)


def _samples():
    rng = numpy.random.default_rng(11)
    batch, steps, u = 2, 3, 2
    return [((rng.standard_normal((steps, batch, 4 * u)), rng.standard_normal(4 * u),
              rng.standard_normal((batch, u)),
              rng.standard_normal((batch, u)), rng.standard_normal((u, 4 * u)) * 0.5), {})]


def _grad_samples():
    # Any y is an input of the backward pass; gate values in (0, 1) as the forward makes them.
    rng = numpy.random.default_rng(12)
    steps, batch, u = 3, 2, 2
    y = rng.uniform(0.05, 0.95, (steps, batch, _SLOTS, u))
    return [((rng.standard_normal((batch, u)), rng.standard_normal((u, 4 * u)) * 0.5, y,
              rng.standard_normal(y.shape)), {})]


_lstm_grad = defop("lstm_sequence_grad", _lstm_grad_forward, arity=4, vjp=_lstm_grad_vjp,
                   jvp=_lstm_grad_jvp, save=(0, 1, 2, 3), batch_unaware=True,
                   samples=_grad_samples, type="LstmSequenceGrad")
_lstm = defop("lstm_sequence", _lstm_forward, arity=5, vjp=_lstm_vjp, jvp=_lstm_jvp,
              save=(2, 3, 4, "out"), batch_unaware=True, samples=_samples,
              type="LstmSequence")


def lstm_sequence(x_proj, bias, h0, c0, recurrent_kernel):
    """(steps, batch, 6, units): per step ``h, c, i, f, c~, o`` of Keras' LSTM (tanh, sigmoid)
    for the inputs times the kernel, ``x_proj`` (steps, batch, 4 units), the bias (4 units)
    and the initial states."""
    return _lstm(x_proj, bias, h0, c0, recurrent_kernel)
