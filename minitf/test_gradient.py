"""``tf.test.compute_gradient``: a function's Jacobians from the tape and by central differences.

>>> import minitf as tf
>>> theoretical, numerical = tf.test.compute_gradient(tf.square, [3.0])
>>> theoretical[0], numerical[0]      # 2-D: (elements of y, elements of x)
(array([[6.]], dtype=float32), array([[6.]], dtype=float32))
"""
import numpy

from . import backend as B
from . import dtypes
from .ops.convert import convert_to_tensor
from .tape import GradientTape, UnconnectedGradients
from .tensor import Tensor

_DIFFERENTIABLE = ("float16", "bfloat16", "float32", "float64")
DEFAULT_DELTA = 1.0 / 1024


def _check_dtype(dtype, what):
    if dtype.name not in _DIFFERENTIABLE:
        raise TypeError(f"compute_gradient: cannot compute gradient for unsupported type "
                        f"{dtype.name} of {what}; expected one of {', '.join(_DIFFERENTIABLE)}")


def _output(f, xs):
    y = f(*xs)
    if not isinstance(y, Tensor):
        y = convert_to_tensor(y)
    return y


def _theoretical_jacobian(f, xs, param, y):
    x = xs[param]
    with GradientTape() as tape:
        tape.watch(x)
        out = _output(f, xs)
    jac = tape.jacobian(out, x, unconnected_gradients=UnconnectedGradients.ZERO)
    value = numpy.asarray(B.to_numpy(jac._value))
    return value.reshape(y.shape.num_elements(), x.shape.num_elements()).astype(
        x.dtype.as_numpy_dtype)


def _numeric_jacobian(f, xs, param, y, delta):
    host = [numpy.array(B.to_numpy(x._value)) for x in xs]
    x_flat = host[param].reshape(-1)     # a view: perturbing it perturbs host[param]
    y_np = y.dtype.as_numpy_dtype
    scale = numpy.asarray(2 * delta, dtype=y_np)[()]
    jacobian = numpy.zeros((y.shape.num_elements(), x_flat.size), dtype=x_flat.dtype)

    def run():
        return numpy.asarray(B.to_numpy(_output(f, [Tensor(B.from_numpy(h)) for h in host])
                                        ._value))

    for col in range(x_flat.size):
        original = x_flat[col]
        x_flat[col] += delta
        y_pos = run()
        x_flat[col] = original
        x_flat[col] -= delta
        y_neg = run()
        x_flat[col] = original
        jacobian[:, col] = ((y_pos - y_neg) / scale).reshape(-1)
    return jacobian


def compute_gradient(f, x, delta=None):
    """The theoretical (tape) and numeric (central differences) Jacobians of ``y = f(*x)``.

    ``x`` is a list or tuple of values convertible to Tensors (all of float dtype). Returns
    ``(theoretical, numerical)``, two tuples with one 2-D numpy array per argument, of shape
    ``(y.size, x_i.size)`` and ``x_i``'s dtype. ``delta`` is the perturbation (default 1/1024).
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError(f"compute_gradient: `x` must be a list or tuple of values convertible "
                         f"to a Tensor (arguments to `f`), not a {type(x)}")
    delta = DEFAULT_DELTA if delta is None else delta
    xs = [convert_to_tensor(v) for v in x]
    y = _output(f, xs)
    for i, v in enumerate(xs):
        _check_dtype(dtypes.as_dtype(v.dtype), f"argument {i}")
    _check_dtype(dtypes.as_dtype(y.dtype), "y")
    theoretical = tuple(_theoretical_jacobian(f, xs, i, y) for i in range(len(xs)))
    numerical = tuple(_numeric_jacobian(f, xs, i, y, delta) for i in range(len(xs)))
    return theoretical, numerical
