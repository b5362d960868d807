"""``tf.py_function`` and ``tf.numpy_function``: run Python code on a call's tensor values.

``py_function(func, inp, Tout)`` calls ``func`` on tensors; the ops it runs are recorded by any
active ``GradientTape``, so gradients flow through it (TF's "once-differentiable" op).
``numpy_function`` calls ``func`` on numpy arrays (read-only views) and is not differentiable.
Both run in ``Dataset.map`` functions (TF's main use) and in ``minitf.function``:

* Without outputs (``Tout`` None or ``[]``, a logging or checking callback) the call is a host
  kernel: every replay of the traced function calls ``func`` again with that call's values.
* With outputs, a replayed plan could not feed ``func``'s results into later ops, so the
  traced function runs eagerly (one ``EagerFallbackWarning``); ``func`` runs on every call.

Exceptions raised by ``func`` become TF's errors, as TF's op does: ``ValueError``/``TypeError``
an ``InvalidArgumentError``, ``StopIteration`` an ``OutOfRangeError``, ``NotImplementedError``
an ``UnimplementedError``, ``MemoryError`` a ``ResourceExhaustedError``, others an
``UnknownError``; the original is the ``__cause__``.
"""
import numpy as np

from . import backend as B
from . import dtypes, errors
from ._state import NoTrace, state
from .host import host_call
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError, OpError
from .tensor import Tensor, Variable
from .tensor_spec import TensorSpec

__all__ = ["py_function", "numpy_function"]


def py_function(func=None, inp=None, Tout=None, name=None):
    """``func(*inp)`` run on tensors, its results as tensors of the dtypes ``Tout`` (a dtype:
    one tensor; a list of dtypes: a list; None: nothing). Differentiable: gradients flow
    through the ops ``func`` runs. As a decorator, ``@tf.py_function(Tout=...)`` makes
    ``f(*args)`` mean ``py_function(f, args, Tout)``."""
    if func is None or inp is None:
        return _decorator(py_function, func, Tout, name)
    return _call(func, inp, Tout, "py_function")


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """``func(*arrays)`` run on numpy arrays (read-only) of ``inp``'s values; it must return
    numpy arrays (or numbers) of exactly the dtypes ``Tout``. Not differentiable.
    ``stateful`` is accepted: every call runs ``func``. Decorator form as ``py_function``."""
    if func is None or inp is None:
        return _decorator(numpy_function, func, Tout, name)
    return _call(func, inp, Tout, "numpy_function")


def _decorator(wrapper, func, Tout, name):
    def decorate(f):
        def call(*args):
            return wrapper(f, list(args), Tout, name=name)
        call.__name__ = getattr(f, "__name__", "func")
        call.__doc__ = getattr(f, "__doc__", None)
        call.__wrapped__ = f
        return call
    return decorate if func is None else decorate(func)


def _call(func, inp, Tout, kind):
    if not callable(func):
        raise TypeError(f"{kind}: `func` must be callable, got {type(func).__name__}")
    inputs = [_as_input(v, kind) for v in (inp if isinstance(inp, (list, tuple)) else [inp])]
    single, out_dtypes = _output_dtypes(Tout, kind)
    tracer = state.tracer
    if tracer is not None and not out_dtypes:
        host_call(_host_kernel(func, kind), inputs)
        return None if Tout is None else []
    if tracer is not None:
        tracer.run_eagerly(f"it uses the results of tf.{kind} ({_name(func)}), whose Python "
                           f"function must run on every call")
    with NoTrace():
        result = _run(func, inputs, kind)
    if not out_dtypes:    # no outputs declared: what func returns is ignored, as in TF
        return None if Tout is None else []
    outputs = _convert_outputs(result, out_dtypes, single, kind, func)
    return outputs[0] if single else outputs


def _as_input(value, kind):
    if isinstance(value, Variable):
        return value.read_value()   # a recorded read: gradients reach the variable
    try:
        return convert_to_tensor(value)
    except TypeError as exc:
        raise TypeError(f"{kind}: every element of `inp` must be a tensor or convertible to "
                        f"one, got {type(value).__name__} ({exc})") from None


def _output_dtypes(Tout, kind):
    """(single, dtypes): whether one tensor is returned, and the output dtypes."""
    if Tout is None:
        return False, []
    single = not isinstance(Tout, (list, tuple))
    try:
        return single, [dtypes.as_dtype(t.dtype if isinstance(t, TensorSpec) else t)
                        for t in ([Tout] if single else Tout)]
    except (TypeError, ValueError, KeyError) as exc:
        raise TypeError(f"{kind}: `Tout` must be a dtype, a TensorSpec or a list of them, got "
                        f"{Tout!r:.80} ({exc})") from None


def _run(func, inputs, kind):
    """``func`` on the inputs (tensors, or numpy arrays for numpy_function), with its Python
    exceptions turned into TF's errors."""
    args = inputs if kind == "py_function" else [_readonly_array(t._value) for t in inputs]
    try:
        return func(*args)
    except OpError:
        raise
    except Exception as exc:  # noqa: BLE001 - every error of user code is reported as TF does
        error = _ERRORS.get(type(exc)) or next(
            (cls for base, cls in _ERRORS.items() if isinstance(exc, base)), errors.UnknownError)
        raise error(f"{kind}: {_name(func)} raised {type(exc).__name__}: {exc}") from exc


_ERRORS = {ValueError: InvalidArgumentError, TypeError: InvalidArgumentError,
           StopIteration: errors.OutOfRangeError, NotImplementedError: errors.UnimplementedError,
           MemoryError: errors.ResourceExhaustedError}


def _readonly_array(array):
    view = np.asarray(B.to_numpy(array)).view()
    view.flags.writeable = False
    return view


def _convert_outputs(result, out_dtypes, single, kind, func):
    values = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(values) != len(out_dtypes):
        raise InvalidArgumentError(f"{kind}: {_name(func)} returned {len(values)} value(s), but "
                                   f"`Tout` declares {len(out_dtypes)}")
    convert = _tensor_output if kind == "py_function" else _array_output
    return [convert(v, dtype, i, kind, func) for i, (v, dtype) in enumerate(zip(values,
                                                                                out_dtypes))]


def _tensor_output(value, dtype, index, kind, func):
    if isinstance(value, Tensor):
        if value.dtype != dtype:
            raise InvalidArgumentError(f"{kind}: output {index} of {_name(func)} is a "
                                       f"{value.dtype.name} tensor, but `Tout` declares "
                                       f"{dtype.name}")
        return value.read_value() if isinstance(value, Variable) else value
    try:
        return convert_to_tensor(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"{kind}: output {index} of {_name(func)} cannot be "
                                   f"converted to {dtype.name}: {exc}") from None


def _array_output(value, dtype, index, kind, func):
    # TF's numpy_function takes the array as numpy makes it: a Python float is float64.
    array = np.asarray(B.to_numpy(value._value) if isinstance(value, Tensor) else value)
    if array.dtype != dtype.np:
        raise InvalidArgumentError(f"{kind}: output {index} of {_name(func)} is an array "
                                   f"of dtype {array.dtype}, but `Tout` declares {dtype.name} "
                                   f"(return arrays of exactly that dtype)")
    return Tensor(B.xp.asarray(array))


def _host_kernel(func, kind):
    """``func`` as a host kernel: called now and on every replay with that call's arrays."""
    def run(*arrays):
        with NoTrace():   # copies: a replay reuses its buffers, func may keep its inputs
            _run(func, [Tensor(a.copy()) for a in arrays], kind)
    run.reads_only = True
    return run


def _name(func):
    return getattr(func, "__qualname__", None) or type(func).__name__
