"""More of ``tf.debugging``: the static assertions ``assert_integer``, ``assert_rank_in``,
``assert_same_float_dtype`` and ``assert_proper_iterable``, ``is_numeric_tensor``, and the
traceback-filtering and device-placement-logging switches.

minitf neither filters tracebacks nor logs device placement (every op runs on its one
backend), so those switches only record the value that the matching getter returns.
"""
from . import dtypes
from .debugging import _prefix, _shape, _tensor
from .tensor import Tensor

_SWITCHES = {"traceback_filtering": True, "log_device_placement": False}


def assert_integer(x, message=None, name=None):
    """TypeError unless ``x`` has an integer dtype; returns None."""
    dtype = _tensor(x).dtype
    if not dtype.is_integer:
        raise TypeError(f"{_prefix(message)}assert_integer: expected \"x\" to be of an integer "
                        f"type, found a tensor of dtype {dtype.name}")


def assert_rank_in(x, ranks, message=None, name=None):
    """ValueError unless the rank of ``x`` is one of ``ranks``; returns None."""
    shape = _shape(x, "assert_rank_in")
    ranks = tuple(int(r) for r in ranks)
    if len(shape) not in ranks:
        raise ValueError(f"{_prefix(message)}assert_rank_in: tensor must have rank in {ranks}. "
                         f"Received rank {len(shape)}, shape {shape}")


def assert_proper_iterable(values):
    """TypeError unless ``values`` is an iterable other than a tensor, a numpy array or a
    string (whose iteration would go over elements or characters, not items)."""
    import numpy
    from .sparse_tensor import SparseTensor
    if isinstance(values, (Tensor, SparseTensor, numpy.ndarray, str, bytes)):
        raise TypeError(f"assert_proper_iterable: expected argument \"values\" to be a "
                        f"\"proper\" iterable (not a tensor, array or string), found "
                        f"{type(values).__name__}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"assert_proper_iterable: expected argument \"values\" to be iterable, "
                        f"found {type(values).__name__}")


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating-point dtype of ``tensors`` (and ``dtype`` when given); float32 if
    there is neither. ValueError when they differ or the dtype is not floating point."""
    expected = None if dtype is None else dtypes.as_dtype(dtype)
    first = None
    for t in tensors or ():
        if not hasattr(t, "dtype"):
            raise TypeError(f"assert_same_float_dtype: tensors must be tensors, got "
                            f"{type(t).__name__} {t!r:.40}")
        actual = dtypes.as_dtype(t.dtype)
        if expected is None:
            expected, first = actual, t
        elif actual != expected:
            also = f" as {first!r:.80}" if first is not None else ""
            raise ValueError(f"assert_same_float_dtype: {t!r:.80}, type={actual.name}, must be "
                             f"of the same type ({expected.name}){also}")
    if expected is None:
        return dtypes.float32
    if not expected.is_floating:
        raise ValueError(f"assert_same_float_dtype: expected a floating point type, got "
                         f"{expected.name}")
    return expected


def is_numeric_tensor(tensor):
    """Whether ``tensor`` is a Tensor of a numeric dtype (integer, floating point or complex;
    not bool or string)."""
    if not isinstance(tensor, Tensor):
        return False
    d = tensor.dtype
    return bool(d.is_integer or d.is_floating or d.is_complex)


def enable_traceback_filtering():
    """Recorded only (minitf does not filter its frames out of tracebacks)."""
    _SWITCHES["traceback_filtering"] = True


def disable_traceback_filtering():
    """Recorded only (minitf does not filter its frames out of tracebacks)."""
    _SWITCHES["traceback_filtering"] = False


def is_traceback_filtering_enabled():
    """The value last set by ``enable_/disable_traceback_filtering`` (True at start)."""
    return _SWITCHES["traceback_filtering"]


def set_log_device_placement(enabled):
    """Recorded only: minitf places every op on its one backend and logs nothing."""
    _SWITCHES["log_device_placement"] = bool(enabled)


def get_log_device_placement():
    """The value last given to ``set_log_device_placement`` (False at start)."""
    return _SWITCHES["log_device_placement"]


def install(tf):
    """Set this module's public names on ``tf.debugging``."""
    for name in __all__:
        setattr(tf.debugging, name, globals()[name])


__all__ = ["assert_integer", "assert_rank_in", "assert_proper_iterable",
           "assert_same_float_dtype", "is_numeric_tensor", "enable_traceback_filtering",
           "disable_traceback_filtering", "is_traceback_filtering_enabled",
           "set_log_device_placement", "get_log_device_placement"]
