"""``tf.debugging``: numeric checks (find the first op that produces NaN or Inf) and TF's
assertions.

Value assertions (``assert_less``, ``assert_near``, ``Assert``, ...) are host checks: they run
now, and inside a ``minitf.function`` trace they are recorded, so every replay checks that
call's values (no retrace when values change). Shape, rank and dtype assertions are static, as
in TF: shapes are fixed within a trace, so they run once, while tracing. In eager mode every
assertion returns None, as in TF 2.
"""
import contextlib
import logging

import numpy

from ._state import state
from .host import host_call
from .ops.registry import InvalidArgumentError, apply, caller_line, defop
from . import backend as B
from .ops.convert import convert_to_tensor, operand_pair
from .tensor import Tensor, host_value, note_shape_read


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Check every op's output from now on; the first NaN/Inf raises InvalidArgumentError naming
    the op, its input shapes and the line of user code that ran it."""
    state.check_numerics = True
    state.refresh()


def disable_check_numerics():
    """Stop checking op outputs (the default)."""
    state.check_numerics = False
    state.refresh()


def _problem(array):
    """``"NaN"``, ``"Inf"`` or None for a float array."""
    if array.dtype.kind != "f" or bool(B.xp.isfinite(array).all()):
        return None
    return "NaN" if bool(B.xp.isnan(array).any()) else "Inf"


def _pass_through(tensor, message):
    return tensor


_check = defop("check_numerics", _pass_through, vjp=lambda F, g, x, y, message: (g,),
               jvp="linear", type="CheckNumerics",
               samples=lambda: [((numpy.ones((2, 3)),), {"message": "sample"})])


def check_numerics(tensor, message, name=None):
    """``tensor`` unchanged (gradients pass through), or InvalidArgumentError naming ``message``
    when it holds NaN or Inf."""
    t = convert_to_tensor(tensor)

    def check(array):               # a host kernel: every replay of a function checks too
        kind = _problem(array)
        if kind is not None:
            raise InvalidArgumentError(f"check_numerics: {message} : Tensor had {kind} values "
                                       f"(shape {tuple(array.shape)}) at {caller_line()}")
    check.reads_only = True
    host_call(check, (t,))
    return apply(_check.op, (t,), {"message": str(message)})


def assert_all_finite(t, message, name=None):
    """``t`` unchanged, or InvalidArgumentError naming ``message`` when it holds NaN or Inf
    (TF 2's ``tf.debugging.assert_all_finite``: ``check_numerics``)."""
    return check_numerics(t, message, name)


# --- value assertions (host checks) -------------------------------------------------------------
def _tensor(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def _static(value, what):
    """A Python/numpy value, or a tensor's value read at trace time (a guard checks it)."""
    return host_value(value, what) if isinstance(value, Tensor) else value


def _text(array, summarize):
    from .printing import format_array
    return format_array(numpy.asarray(array), summarize)


def _host_check(check, tensors):
    """Run ``check(*numpy arrays)`` now and on every replay of a function trace."""
    def run(*arrays):
        check(*[B.to_numpy(a) for a in arrays])
    run.reads_only = True   # a trace may run its guards before this call
    host_call(run, tensors)


def _values_check(opname, condition, test, tensors, names, message, summarize):
    """Host check that ``test(*arrays)`` holds everywhere (broadcast); else InvalidArgumentError
    naming ``condition``, where it fails and the first ``summarize`` (3; -1: all) values."""
    try:
        shape = numpy.broadcast_shapes(*[tuple(t.shape) for t in tensors])
    except ValueError:
        raise InvalidArgumentError(f"{opname}: shapes {[tuple(t.shape) for t in tensors]} do "
                                   f"not broadcast") from None

    def check(*arrays):
        ok = numpy.broadcast_to(test(*arrays), shape)
        if ok.all():
            return
        n = 3 if summarize is None else ok.size if summarize < 0 else int(summarize)
        lines = [message and str(message),
                 f"{opname}: Condition {condition} did not hold element-wise."]
        bad = ~ok
        if ok.ndim:
            where = numpy.argwhere(bad)[:n]
            lines.append(f"Indices of first {len(where)} failing values: {where.tolist()}")
            lines += [f"Corresponding {name} values: "
                      f"{_text(numpy.broadcast_to(a, shape)[bad][:n], -1)}"
                      for name, a in zip(names, arrays)]
        for name, a in zip(names, arrays):
            flat = a.reshape(-1)[:n]
            lines.append(f"First {flat.size} elements of {name} (shape {a.shape}): "
                         f"{_text(flat, -1)}")
        raise InvalidArgumentError("\n".join(line for line in lines if line))
    _host_check(check, tensors)


def _binary(opname, symbol, test):
    def assertion(x, y, message=None, summarize=None, name=None):
        x, y = operand_pair(opname, x, y)
        _values_check(opname, f"x {symbol} y", test, (x, y), ("x", "y"), message, summarize)
    assertion.__name__ = assertion.__qualname__ = opname
    assertion.__doc__ = (f"Raise InvalidArgumentError unless ``x {symbol} y`` for every "
                         f"(broadcast) pair of elements; returns None. Inside a "
                         f"``minitf.function`` every call checks its own values.")
    return assertion


def _unary(opname, symbol, test):
    def assertion(x, message=None, summarize=None, name=None):
        _values_check(opname, f"x {symbol} 0", test, (_tensor(x),), ("x",), message, summarize)
    assertion.__name__ = assertion.__qualname__ = opname
    assertion.__doc__ = (f"Raise InvalidArgumentError unless every element of ``x`` is "
                         f"``{symbol} 0``; returns None (checked on every function call).")
    return assertion


assert_equal = _binary("assert_equal", "==", numpy.equal)
assert_none_equal = _binary("assert_none_equal", "!=", numpy.not_equal)
assert_less = _binary("assert_less", "<", numpy.less)
assert_less_equal = _binary("assert_less_equal", "<=", numpy.less_equal)
assert_greater = _binary("assert_greater", ">", numpy.greater)
assert_greater_equal = _binary("assert_greater_equal", ">=", numpy.greater_equal)
assert_positive = _unary("assert_positive", ">", lambda a: a > 0)
assert_negative = _unary("assert_negative", "<", lambda a: a < 0)
assert_non_negative = _unary("assert_non_negative", ">=", lambda a: a >= 0)
assert_non_positive = _unary("assert_non_positive", "<=", lambda a: a <= 0)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Raise InvalidArgumentError unless ``|x - y| < atol + rtol * |y|`` for every (broadcast)
    pair of elements (strictly, as in TF). ``rtol`` and ``atol`` default to ``10 * eps`` of
    ``x``'s float dtype (about 1.2e-6 for float32, 2.2e-15 for float64)."""
    x, y = operand_pair("assert_near", x, y)
    floating = x.dtype.is_floating   # ints compare in float64, with float64's eps
    dtype = x._value.dtype if floating else numpy.dtype(numpy.float64)
    eps = float(x.dtype._info("eps").eps if floating else numpy.finfo(dtype).eps)
    rtol, atol = (numpy.asarray(_static(10 * eps if t is None else t, "assert_near"), dtype)
                  for t in (rtol, atol))

    def near(a, b):
        a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
        return numpy.abs(a - b) < atol + rtol * numpy.abs(b)
    _values_check("assert_near", f"|x - y| < atol + rtol * |y| (rtol = {_text(rtol, 3)}, "
                  f"atol = {_text(atol, 3)})", near, (x, y), ("x", "y"), message, summarize)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """Raise InvalidArgumentError, listing ``data`` (tensors show their first ``summarize``
    entries, default 3), unless every element of ``condition`` is true; returns None.
    Inside a ``minitf.function`` every call checks its own condition."""
    cond = _tensor(condition)
    data = list(data) if isinstance(data, (list, tuple)) else [data]
    tensors = [d for d in data if isinstance(d, Tensor)]
    n = 3 if summarize is None else int(summarize)

    def check(ok, *arrays):
        if bool(numpy.all(ok)):
            return
        values = iter(arrays)
        shown = [_text(next(values), n) if isinstance(d, Tensor) else str(d) for d in data]
        raise InvalidArgumentError("Assert: condition is false. Summarized data: "
                                   + "\n".join(shown))
    _host_check(check, [cond] + tensors)


# --- static assertions (shapes, ranks, dtypes) ---------------------------------------------------
def _shape(x, what):
    x = _tensor(x)
    note_shape_read(x, what)
    return tuple(x.shape)


def _prefix(message):
    return f"{message}: " if message else ""


def assert_rank(x, rank, message=None, name=None):
    """ValueError unless ``x`` has rank ``rank`` (shapes are static, so TF raises at once)."""
    shape, rank = _shape(x, "assert_rank"), int(_static(rank, "assert_rank"))
    if len(shape) != rank:
        raise ValueError(f"{_prefix(message)}assert_rank: tensor must have rank {rank}. "
                         f"Received rank {len(shape)}, shape {shape}")


def assert_rank_at_least(x, rank, message=None, name=None):
    """ValueError unless ``x`` has rank ``rank`` or higher."""
    shape, rank = _shape(x, "assert_rank_at_least"), int(_static(rank, "assert_rank_at_least"))
    if len(shape) < rank:
        raise ValueError(f"{_prefix(message)}assert_rank_at_least: tensor must have rank at "
                         f"least {rank}. Received rank {len(shape)}, shape {shape}")


def assert_scalar(tensor, message=None, name=None):
    """ValueError unless ``tensor`` is a scalar (rank 0)."""
    shape = _shape(tensor, "assert_scalar")
    if shape:
        raise ValueError(f"{_prefix(message)}assert_scalar: expected scalar shape, saw shape "
                         f"{shape}")


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError unless ``tensor``'s dtype is ``tf_type``."""
    from .dtypes import as_dtype
    actual, expected = _tensor(tensor).dtype, as_dtype(tf_type)
    if actual != expected:
        raise TypeError(f"{_prefix(message)}assert_type: tensor must be of type "
                        f"{expected.name}; got {actual.name}")


def _is_size(d):
    return isinstance(d, (int, numpy.integer)) and not isinstance(d, bool)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """ValueError unless the tensors' shapes match their specs, as in TF: ``shapes`` is a list
    of ``(tensor, spec)`` pairs (or a dict). In a spec an int is an exact size, None or ``'.'``
    any size, any other entry a symbol that must have the same size wherever it appears; a
    leading ``...`` or ``'*'`` lets the spec match the innermost dimensions only. A scalar and
    an empty spec both count as one dimension of size 1."""
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes = {}   # symbol -> (size, where it was set)
    prefix = _prefix(message)
    for index, (x, spec) in enumerate(pairs):
        shape, spec = _shape(x, "assert_shapes") or (1,), list(spec)
        label = f"shapes[{index}]"
        inner = bool(spec) and (spec[0] is Ellipsis or spec[0] == "*")
        spec = spec[1:] if inner else spec or [1]
        if (len(shape) < len(spec)) if inner else (len(shape) != len(spec)):
            at_least = "at least " if inner else ""
            raise ValueError(f"{prefix}assert_shapes: tensor {label} must have rank {at_least}"
                             f"{len(spec)}. Received rank {len(shape)}, shape {shape}")
        offset = len(shape) - len(spec)
        for i, d in enumerate(spec):
            dim, size = offset + i, shape[offset + i]
            if d is None or (isinstance(d, str) and d == "."):
                continue
            if _is_size(d):
                if size != int(d):
                    raise ValueError(f"{prefix}assert_shapes: tensor {label} dimension {dim} "
                                     f"must have size {int(d)}. Received size {size}, shape "
                                     f"{shape}")
                continue
            expected, where = sizes.setdefault(d, (size, f"tensor {label} dimension {dim}"))
            if size != expected:
                raise ValueError(f"{prefix}assert_shapes: dimension {d!r} of size {expected} is "
                                 f"specified by {where}. Tensor {label} dimension {dim} must "
                                 f"have size {expected}. Received size {size}, shape {shape}")


# --- graph-mode switches that eager numpy code does not need -------------------------------------
@contextlib.contextmanager
def control_dependencies(control_inputs):
    """TF's ``tf.control_dependencies``: a no-op context, as in TF 2 eager code. Inside a
    ``minitf.function`` ops and checks run in program order already, so the assertions given
    (None in eager mode) have run before the block's ops."""
    yield


def set_log_device_placement(enabled):
    """Accepted for compatibility; minitf places every op on its one backend and logs nothing."""


def get_logger():
    """The logger minitf writes its messages to (``logging.getLogger("minitf")``); TF's
    ``tf.get_logger().setLevel("ERROR")`` silences them."""
    return logging.getLogger("minitf")


def set_verbosity(level, alsologtostdout=False):
    """``tf.autograph.set_verbosity``: a no-op (minitf traces Python as it runs; nothing is
    converted, so there is nothing to log)."""


def do_not_convert(func=None):
    """``tf.autograph.experimental.do_not_convert``: ``func`` unchanged (minitf converts no
    code); usable as ``@do_not_convert`` or ``@do_not_convert()``."""
    return func if func is not None else (lambda f: f)


__all__ = ["check_numerics", "enable_check_numerics", "disable_check_numerics",
           "InvalidArgumentError", "assert_all_finite", "assert_equal", "assert_none_equal",
           "assert_less", "assert_less_equal", "assert_greater", "assert_greater_equal",
           "assert_positive", "assert_negative", "assert_non_negative", "assert_non_positive",
           "assert_near", "Assert", "assert_rank", "assert_rank_at_least", "assert_scalar",
           "assert_type", "assert_shapes", "set_log_device_placement"]
