"""TensorFlow-style dtype objects (``minitf.float32`` ...) over numpy dtypes."""
import numpy

try:  # bfloat16 exists only where ml_dtypes is installed; it is optional.
    import ml_dtypes as _ml_dtypes
    _np_bfloat16 = _ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = _np_bfloat16 = None

_NO_BFLOAT16 = "bfloat16 needs the ml_dtypes package: pip install ml_dtypes"


class DType:
    """A dtype with TF's names: ``.name``, ``.is_floating``, ``.as_numpy_dtype``.

    Compares equal to the matching numpy dtype and to its name, so ``t.dtype == "float32"`` and
    ``t.dtype == np.float32`` both hold.
    """
    __slots__ = ("name", "np", "is_floating", "is_integer", "is_bool", "size")

    def __init__(self, np_dtype):
        self.np = numpy.dtype(np_dtype)
        self.name = ("bfloat16" if _np_bfloat16 is not None and self.np == _np_bfloat16
                     else "string" if self.np.kind == "O" else self.np.name)
        self.is_floating = self.name in ("float16", "bfloat16", "float32", "float64")
        self.is_integer = self.np.kind in "iu"
        self.is_bool = self.np.kind == "b"
        self.size = self.np.itemsize

    @property
    def as_numpy_dtype(self):
        return self.np.type

    @property
    def base_dtype(self):
        return self

    @property
    def min(self):
        """The lowest finite value (``numpy.finfo``/``iinfo``); TypeError for bool, as in TF."""
        return self._info("minimum").min

    @property
    def max(self):
        """The highest finite value (``numpy.finfo``/``iinfo``); TypeError for bool, as in TF."""
        return self._info("maximum").max

    def _info(self, what):
        if self.is_bool or self.name == "string" or self.is_complex:
            raise TypeError(f"Cannot find {what} value of {self} with type {self}.")
        if self.is_integer:
            return numpy.iinfo(self.np)
        return _ml_dtypes.finfo(self.np) if self.name == "bfloat16" else numpy.finfo(self.np)

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.np == other.np
        try:
            return self.np == as_dtype(other).np
        except (TypeError, ValueError):
            return False

    def __hash__(self):
        return hash(self.np)

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):   # print(tf.float32) shows <dtype: 'float32'>, as TF
        return f"<dtype: '{self.name}'>"

    @property
    def is_unsigned(self):
        return self.np.kind == "u"

    @property
    def is_complex(self):
        return self.np.kind == "c"

    @property
    def real_dtype(self):
        """The dtype of the real and imaginary parts (complex64 -> float32); else itself."""
        return real_dtype(self)


_BY_NP = {}


def _is_bfloat16(np_dtype):
    # numpy.dtype(x) == None holds for float64, so compare only when bfloat16 exists.
    return _np_bfloat16 is not None and np_dtype == _np_bfloat16


def _dtype_of_np(np_dtype):
    """Cached DType for a numpy dtype (the hot path: one dict lookup)."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        d = _BY_NP[np_dtype] = DType(np_dtype)
        return d


float16 = _dtype_of_np(numpy.dtype("float16"))
float32 = _dtype_of_np(numpy.dtype("float32"))
float64 = _dtype_of_np(numpy.dtype("float64"))
int8 = _dtype_of_np(numpy.dtype("int8"))
int16 = _dtype_of_np(numpy.dtype("int16"))
int32 = _dtype_of_np(numpy.dtype("int32"))
int64 = _dtype_of_np(numpy.dtype("int64"))
uint8 = _dtype_of_np(numpy.dtype("uint8"))
uint16 = _dtype_of_np(numpy.dtype("uint16"))
uint32 = _dtype_of_np(numpy.dtype("uint32"))
uint64 = _dtype_of_np(numpy.dtype("uint64"))
bool = _dtype_of_np(numpy.dtype("bool"))  # noqa: A001 - TF's name
bfloat16 = _dtype_of_np(numpy.dtype(_np_bfloat16)) if _np_bfloat16 is not None else None
string = _dtype_of_np(numpy.dtype(object))   # byte strings, held as numpy object arrays
complex64 = _dtype_of_np(numpy.dtype("complex64"))
complex128 = _dtype_of_np(numpy.dtype("complex128"))
half = float16
double = float64

_BY_NAME = {d.name: d for d in (float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
                                uint32, uint64, bool, string, complex64, complex128)}
if bfloat16 is not None:
    _BY_NAME["bfloat16"] = bfloat16
_BY_NAME.update(half=float16, float=float32, double=float64)
_BY_NAME.update(cfloat=complex64, cdouble=complex128)


def as_dtype(value):
    """Turn a DType, numpy dtype/type or name into a DType; a clear TypeError otherwise."""
    if isinstance(value, DType):
        return value
    if value is None:  # numpy.dtype(None) would be float64
        hint = f"; tf.bfloat16 is None here because {_NO_BFLOAT16}" if bfloat16 is None else ""
        raise TypeError(f"dtype is None: a dtype is required, or the one given is unavailable"
                        f"{hint}")
    if isinstance(value, str):
        try:
            return _BY_NAME[value]
        except KeyError:
            hint = f" ({_NO_BFLOAT16})" if value == "bfloat16" else ""
            raise TypeError(f"unknown dtype {value!r}{hint}; expected one of "
                            f"{sorted(_BY_NAME)}") from None
    try:
        np_dtype = numpy.dtype(value)
    except TypeError:
        raise TypeError(f"cannot interpret {value!r} as a dtype; expected one of "
                        f"{sorted(_BY_NAME)}") from None
    if np_dtype.kind in "OUS":   # numpy's object, str and bytes dtypes: TF's string
        return string
    if np_dtype.kind not in "biufc" and not _is_bfloat16(np_dtype):
        raise TypeError(f"unsupported dtype {np_dtype}; expected one of {sorted(_BY_NAME)}")
    return _dtype_of_np(np_dtype)


def is_float(np_dtype):
    """True for floating numpy dtypes (the only ones that carry gradients)."""
    return np_dtype.kind == "f" or _is_bfloat16(np_dtype)


def is_complex(np_dtype):
    """True for complex numpy dtypes (complex64, complex128)."""
    return numpy.dtype(np_dtype).kind == "c"


def real_dtype(dtype):
    """The real dtype of a complex dtype (complex64 -> float32); other dtypes unchanged."""
    dtype = as_dtype(dtype)
    if dtype.is_complex:
        return _dtype_of_np(numpy.dtype(f"float{dtype.size * 4}"))
    return dtype


def saturate_cast(value, dtype, name=None):
    """Cast ``value`` to ``dtype``, first clipping it into ``dtype``'s range, so out-of-range
    values saturate instead of wrapping (``saturate_cast(300.0, uint8)`` is 255)."""
    from .ops.convert import convert_to_tensor
    from .ops.math_ops import cast, maximum, minimum
    x, dtype = convert_to_tensor(value), as_dtype(dtype)
    src = x.dtype
    if not (src.is_bool or dtype.is_bool):
        if src.min < dtype.min:
            x = maximum(x, numpy.asarray(dtype.min).astype(src.np))
        if src.max > dtype.max:
            hi = numpy.asarray(dtype.max).astype(src.np)
            if dtype.is_integer and src.is_floating and int(hi) > dtype.max:  # rounded up
                hi = numpy.nextafter(hi, src.np.type(0))
            x = minimum(x, hi)
    return cast(x, dtype)
