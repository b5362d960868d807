"""``keras.ops``: Keras 3's backend-neutral op names, mapped onto minitf's ops.

Only the functions public Keras code commonly calls are here; each is the minitf op of the same
meaning (``keras.ops.sum(x, axis)`` is ``minitf.reduce_sum(x, axis)``), so gradients and tracing
work as for any op.

    from minitf import keras
    kl = -0.5 * keras.ops.mean(1 + log_var - keras.ops.square(mean) - keras.ops.exp(log_var))
"""
from types import SimpleNamespace
from ..ops import array_ops as _a, linalg_ops as _l, math_ops as _m, nn_ops as _n
from ..ops import reduce_ops as _r
from ..ops.convert import convert_to_tensor  # noqa: F401
from ..ops.einsum_ops import einsum  # noqa: F401
from ..ops.math_ops import (abs, add, cast, ceil, cos, divide, equal, exp,  # noqa: F401,A004
                            expm1, floor, greater, greater_equal, less, less_equal, log, log1p,
                            logical_and, logical_not, logical_or, maximum, minimum, multiply,
                            negative, not_equal, reciprocal, round, rsqrt, sigmoid, sign, sin,
                            sqrt, square, subtract, tan, tanh, where)
from ..ops.array_ops import (expand_dims, reshape, squeeze, stack, tile, transpose,  # noqa: F401
                             zeros, ones, eye, one_hot)
from ..ops.linalg_ops import matmul  # noqa: F401
from ..ops.nn_ops import relu, softmax, log_softmax, elu, gelu, silu  # noqa: F401
from ..ops.reduce_ops import argmax, argmin  # noqa: F401


def sum(x, axis=None, keepdims=False):  # noqa: A001
    return _r.reduce_sum(x, axis=axis, keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    return _r.reduce_mean(x, axis=axis, keepdims=keepdims)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    if initial is not None:
        raise ValueError("keras.ops.max: initial= is not supported")
    return _r.reduce_max(x, axis=axis, keepdims=keepdims)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    if initial is not None:
        raise ValueError("keras.ops.min: initial= is not supported")
    return _r.reduce_min(x, axis=axis, keepdims=keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    return _r.reduce_prod(x, axis=axis, keepdims=keepdims)


def logsumexp(x, axis=None, keepdims=False):
    return _r.reduce_logsumexp(x, axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    m = _r.reduce_mean(x, axis=axis, keepdims=True)
    return _r.reduce_mean(_m.square(x - m), axis=axis, keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    return _m.sqrt(var(x, axis=axis, keepdims=keepdims))


def power(x1, x2):
    return _m.pow(x1, x2)


def concatenate(xs, axis=0):
    return _a.concat(list(xs), axis=axis)


def clip(x, x_min, x_max):
    return _m.clip_by_value(x, x_min, x_max)


def convert_to_numpy(x):
    """A numpy copy of ``x`` (a tensor, Variable, array or nested Python numbers)."""
    return convert_to_tensor(x).numpy()


def shape(x):
    """The static shape as a tuple of ints (Keras 3 returns a tuple)."""
    return tuple(convert_to_tensor(x).shape)


def zeros_like(x, dtype=None):
    return _m.zeros_like_public(x, dtype=dtype)


def ones_like(x, dtype=None):
    return _m.ones_like_public(x, dtype=dtype)


def dot(x1, x2):
    return _l.matmul(x1, x2)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """``numpy.linalg.norm``'s rules (Keras's): with no ``axis`` a 2-D input takes the matrix
    norm ``ord`` names; ``ord=None`` is the 2-norm of the flattened input."""
    if ord is None:
        ord = "euclidean"   # noqa: A001
    elif axis is None and len(convert_to_tensor(x).shape) == 2:
        axis = (-2, -1)
    return _l.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def stop_gradient(x):
    return _m.stop_gradient(x)


def softplus(x):
    return _m.softplus(x)


def leaky_relu(x, negative_slope=0.2):
    return _n.leaky_relu(x, alpha=negative_slope)


def arange(start, stop=None, step=1, dtype=None):
    return _a.range(start, stop, step, dtype=dtype)


def flatten(x):
    return _a.reshape(x, (-1,))


def mod(x1, x2):
    """Remainder with the sign of the divisor (numpy's ``mod``)."""
    return _m.floormod(x1, x2)


def floor_divide(x1, x2):
    return _m.floordiv(x1, x2)


def take(x, indices, axis=None):
    """Entries of ``x`` at ``indices`` along ``axis`` (the flattened ``x`` when None)."""
    if axis is None:
        return _a.gather(_a.reshape(x, [-1]), indices)
    return _a.gather(x, indices, axis=axis)


def cumsum(x, axis=None, dtype=None):
    x = convert_to_tensor(x) if dtype is None else cast(x, dtype)
    if axis is None:
        return _a.cumsum(_a.reshape(x, [-1]), axis=0)
    return _a.cumsum(x, axis=axis)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _r.reduce_any(cast(x, "bool"), axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _r.reduce_all(cast(x, "bool"), axis=axis, keepdims=keepdims)


def full(shape, fill_value, dtype=None):
    value = convert_to_tensor(fill_value, dtype=dtype) if dtype is not None else fill_value
    return _a.fill(list(shape), value)


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    if not endpoint:
        raise ValueError("keras.ops.linspace: endpoint=False is not supported")
    out = _a.linspace(start, stop, num)
    return cast(out, dtype) if dtype is not None else out


def split(x, indices_or_sections, axis=0):
    """numpy's ``split``: an int cuts ``x`` into that many equal parts, a list of indices cuts
    it at those positions."""
    if isinstance(indices_or_sections, int):
        return _a.split(x, indices_or_sections, axis=axis)
    size = int(convert_to_tensor(x).shape[axis])
    bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    return _a.split(x, [b - a for a, b in zip(bounds[:-1], bounds[1:])], axis=axis)


def pad(x, pad_width, mode="constant", constant_values=None):
    return _a.pad(x, pad_width, mode=mode.upper(),
                  constant_values=0 if constant_values is None else constant_values)


def repeat(x, repeats, axis=None):
    return _a.repeat(x, repeats, axis=axis)


def erf(x):
    return _m.erf(x)


def isnan(x):
    return _m.is_nan(x)


def _image_resize(images, size, interpolation="bilinear", antialias=False,
                  crop_to_aspect_ratio=False, data_format=None):
    """``keras.ops.image.resize`` (channels last): ``tf.image.resize`` with Keras' argument
    names."""
    from ..image_ops import resize
    if crop_to_aspect_ratio:
        raise NotImplementedError("keras.ops.image.resize: crop_to_aspect_ratio=True is not "
                                  "supported; use keras.layers.Resizing(crop_to_aspect_ratio=True)")
    if data_format not in (None, "channels_last"):
        raise ValueError(f"keras.ops.image.resize: only channels_last, got {data_format!r}")
    return resize(images, size, method=interpolation, antialias=antialias)


def _affine_transform(*args, **kwargs):
    from ..image_transform import affine_transform
    return affine_transform(*args, **kwargs)


_affine_transform.__doc__ = "``keras.ops.image.affine_transform`` (see ``minitf.image_transform``)."
image = SimpleNamespace(resize=_image_resize, affine_transform=_affine_transform)


# --- KerasTensors ------------------------------------------------------------------------------
# As in Keras 3, every function here also takes the KerasTensors of a functional model and then
# returns KerasTensors: the call becomes a layer of the model (``layers.op_layers``). Registered
# ops (``add``, ``exp``...) do this on their own; the other functions get the check below.

def _symbolic_aware(fn):
    import functools
    from .layers.symbolic import KerasTensor

    def has_symbolic(values):
        for v in values:
            if type(v) is KerasTensor or (type(v) in (list, tuple) and has_symbolic(v)):
                return True
        return False

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if has_symbolic(args) or (kwargs and has_symbolic(kwargs.values())):
            from .layers.op_layers import apply_symbolic
            return apply_symbolic(wrapper, args, kwargs)
        return fn(*args, **kwargs)
    return wrapper


def _shape_aware(fn):
    import functools
    from .layers.symbolic import KerasTensor

    @functools.wraps(fn)
    def wrapper(x):
        return tuple(x.shape) if type(x) is KerasTensor else fn(x)
    return wrapper


def _install_symbolic_dispatch():
    import types
    for name, value in list(globals().items()):
        if (name.startswith("_") or not isinstance(value, types.FunctionType)
                or hasattr(value, "op") or name in ("convert_to_tensor", "convert_to_numpy")):
            continue
        globals()[name] = _shape_aware(value) if name == "shape" else _symbolic_aware(value)


_install_symbolic_dispatch()
