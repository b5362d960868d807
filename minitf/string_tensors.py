"""String tensors (``minitf.string``): TF's byte strings, held on the host.

A string tensor's value is a numpy array of dtype ``object`` whose elements are ``bytes``, on
every backend (TF keeps string tensors on the CPU too). Python ``str`` values are encoded as
UTF-8 when they are converted, so ``minitf.constant("é").numpy()`` is ``b'\\xc3\\xa9'``, as in
TF. The ``tf.strings`` functions and the string preprocessing layers read and write these
arrays with the helpers below.
"""
import numpy

from .tensor import Tensor, _next_id

OBJECT = numpy.dtype(object)


def is_string_array(array):
    """True for a string tensor's value (a numpy object array)."""
    return isinstance(array, numpy.ndarray) and array.dtype == OBJECT


def is_string_value(value):
    """True for Python or numpy values that convert to a string tensor: ``str``/``bytes``,
    numpy ``U``/``S`` arrays and scalars, object arrays of them, and (nested) lists of them."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        kind = value.dtype.kind
        return kind in "US" or (kind == "O" and _all_strings(value))
    if isinstance(value, (list, tuple)):
        first = _first_leaf(value)
        return isinstance(first, (str, bytes, numpy.str_, numpy.bytes_))
    return False


def _first_leaf(value):
    while isinstance(value, (list, tuple)):
        if not value:
            return None
        value = value[0]
    return value


def _all_strings(array):
    return all(isinstance(v, (str, bytes)) for v in array.reshape(-1))


def _encode(v, where):
    if isinstance(v, bytes):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8")
    raise TypeError(f"{where}: expected str or bytes elements for a string tensor, got "
                    f"{type(v).__name__} {v!r:.60}")


def bytes_array(value, where="convert_to_tensor"):
    """``value`` (str, bytes, nested lists of them, numpy ``U``/``S``/object arrays, or a string
    Tensor) as a numpy object array of ``bytes``. Anything else: TypeError naming ``where``."""
    if isinstance(value, Tensor):
        if not is_string_array(value._value):
            raise TypeError(f"{where}: expected a string tensor, got dtype {value.dtype.name}")
        return value._value
    if isinstance(value, (str, bytes)):
        out = numpy.empty((), OBJECT)
        out[()] = _encode(value, where)
        return out
    try:
        # Lists as objects, so that a number among strings is refused rather than formatted.
        array = value if isinstance(value, numpy.ndarray) else (
            numpy.asarray(value, OBJECT) if isinstance(value, (list, tuple))
            else numpy.asarray(value))
    except ValueError as exc:   # ragged nested lists
        raise TypeError(f"{where}: cannot convert {value!r:.80} to a string tensor: "
                        f"{exc}") from None
    if array.dtype.kind not in "USO":
        raise TypeError(f"{where}: expected strings, got values of dtype {array.dtype}")
    if array.dtype.kind == "O" and array.ndim and not isinstance(value, numpy.ndarray) \
            and any(isinstance(v, (list, tuple)) for v in array.reshape(-1)):
        raise TypeError(f"{where}: cannot convert {value!r:.80} to a string tensor: nested "
                        f"lists of different lengths (ragged)")
    out = numpy.empty(array.shape, OBJECT)
    flat = out.reshape(-1)
    for i, v in enumerate(array.reshape(-1)):
        flat[i] = _encode(v.item() if isinstance(v, numpy.generic) else v, where)
    return out


def scalar_bytes(value, where):
    """The ``bytes`` of the scalar string ``value`` that an op reads (str, bytes, a 0-d
    string array or tensor): TypeError for a non-string, InvalidArgumentError for another
    shape, both naming ``where`` ("decode_wav: contents")."""
    array = bytes_array(value, where)
    if array.ndim != 0:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError(None, None, f"{where} must be a scalar string, but had "
                                               f"shape {tuple(array.shape)}")
    return array[()]


def scalar_text_argument(value, where, arg, accepted="a string"):
    """The ``bytes`` of a Python argument that must be one string (a delimiter, a record to
    write): TypeError naming ``where``, ``arg`` and ``accepted`` otherwise."""
    try:
        array = bytes_array(value, where)
    except TypeError:
        array = None
    if array is None or array.ndim != 0:
        raise TypeError(f"{where}: `{arg}` must be {accepted}, got {type(value).__name__} "
                        f"{value!r:.60}")
    return array[()]


def string_tensor(array):
    """A string Tensor around a numpy object array of ``bytes`` (not copied)."""
    t = Tensor.__new__(Tensor)
    t._value = array
    t._id = _next_id()
    return t


def map_bytes(fn, array, out_dtype=OBJECT):
    """``fn`` applied to every element of a numpy object array, in an array of its shape."""
    out = numpy.empty(array.shape, out_dtype)
    flat, src = out.reshape(-1), array.reshape(-1)
    for i, v in enumerate(src):
        flat[i] = fn(v)
    return out


def row(array, i):
    """``array[i]`` as an array: for a string tensor's value numpy returns the bare ``bytes``
    of a 1-D array's element, which is wrapped back into a 0-d object array."""
    out = array[i]
    return numpy.array(out, OBJECT) if type(out) is bytes else out


def stack(arrays):
    """Stack backend arrays, or (on the host, whatever the backend) string arrays."""
    from . import backend as B
    return numpy.stack(arrays) if is_string_array(arrays[0]) else B.xp.stack(arrays)


def _host(array):
    """A numeric backend array copied to the host (string arrays are there already)."""
    from . import backend as B
    return array if isinstance(array, numpy.ndarray) else B.to_numpy(array)


def _to_device(array):
    from . import backend as B
    return B.from_numpy(numpy.asarray(array))


def _host_key(key):
    return tuple(_host(k) if hasattr(k, "shape") and not isinstance(k, numpy.ndarray) else k
                 for k in key)


# The structural ops string tensors support on backends whose arrays live on a device: the
# numpy kernel of each, run on the host (as TF runs string ops on the CPU).
_HOST_KERNELS = {
    "reshape": lambda x, shape: numpy.reshape(x, shape),
    "concat": lambda *xs, axis: numpy.concatenate(xs, axis=axis),
    "gather": lambda x, indices, axis: numpy.take(x, _host(indices), axis=axis),
    "getitem": lambda x, key: row(x, _host_key(key)),
    "broadcast_to": lambda x, shape: numpy.broadcast_to(x, shape),
    "tile": lambda x, multiples: numpy.tile(x, multiples),
    "transpose": lambda x, perm: numpy.transpose(x, perm),
    "where": lambda c, a, b: numpy.where(_host(c), a, b),
    "identity": lambda x: x,
    "add": lambda a, b: numpy.add(a, b),
    "equal": lambda a, b: _to_device(numpy.equal(a, b)),
    "not_equal": lambda a, b: _to_device(numpy.not_equal(a, b)),
}


def needs_host_kernel(arrays):
    """True where a traced function's replay runs an op through ``host_forward``: it has
    string inputs."""
    return any(is_string_array(a) for a in arrays)


def host_forward(op):
    """``op``'s kernel for string inputs in a traced function's replay: the host kernel where
    there is one (else the op's own, which numpy runs on object arrays), with a bare ``bytes``
    result wrapped back into a 0-d array as ``registry.apply`` does."""
    kernel = _HOST_KERNELS.get(op.name)

    def forward(*arrays, **attrs):
        out = kernel(*arrays, **attrs) if kernel is not None else op.forward(*arrays, **attrs)
        return numpy.array(out, OBJECT) if type(out) is bytes else out
    forward.__name__ = op.name
    return forward


def host_kernel(op, arrays, attrs):
    """The result of ``op`` on string inputs where the backend's kernel refused them (a device
    backend), or None when no input is a string array. Ops without a host kernel raise a
    TypeError that names them."""
    if not any(is_string_array(a) for a in arrays):
        return None
    fn = _HOST_KERNELS.get(op.name)
    if fn is None:
        raise TypeError(f"not defined for string tensors (they support the tf.strings "
                        f"functions and the ops {', '.join(sorted(_HOST_KERNELS))})")
    return fn(*arrays, **attrs)
