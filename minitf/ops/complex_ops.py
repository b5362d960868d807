"""Complex numbers: ``complex``, ``real``, ``imag``, ``conj``, ``angle`` and the complex DFTs.

Complex tensors hold complex64/complex128 backend arrays. Everything here is composed from
registered real ops (``cast`` keeps the real part of a complex value; multiplying by ``1j``
rotates), so gradients follow TF's convention with no rules of their own: for a real loss L
and z = x + iy, ``tape.gradient(L, z)`` is dL/dx + i dL/dy.

The DFTs reuse ``fft_ops``' kernels, which work on (real, imag) pairs along a last axis.
"""
import numpy

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor
from . import fft_ops
from .array_ops import concat, pad, stack, transpose, zeros_like
from .convert import convert_to_tensor
from .math_ops import cast, multiply
from .registry import OPS, RAW, TENSOR
from .trig_ops import atan2

_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def _tensor(x, what):
    if isinstance(x, Tensor):
        return x
    try:
        return convert_to_tensor(x)
    except TypeError as exc:
        raise TypeError(f"{what}: cannot convert {x!r:.80} to a tensor: {exc}") from None


def _is_complex(x):
    return x._value.dtype.kind == "c"


def _complex_dtype_of(real, what):
    name = real.dtype.name
    if name not in _COMPLEX_OF:
        raise TypeError(f"{what}: expected float32 or float64 parts, got {name}")
    return dtypes.as_dtype(_COMPLEX_OF[name])


def complex(real, imag, name=None):  # noqa: A001 - TF's name
    """The complex tensor ``real + 1j * imag`` (float32 parts give complex64, float64 parts
    complex128)."""
    real, imag = _tensor(real, "complex"), _tensor(imag, "complex")
    if real.dtype != imag.dtype:
        raise TypeError(f"complex: real and imag must have the same dtype, got "
                        f"{real.dtype.name} and {imag.dtype.name}")
    dtype = _complex_dtype_of(real, "complex")
    return cast(real, dtype) + multiply(cast(imag, dtype), 1j)


def real(input, name=None):  # noqa: A002 - TF's argument name
    """The real parts of a complex tensor; a real tensor is returned as it is."""
    x = _tensor(input, "real")
    return cast(x, dtypes.real_dtype(x.dtype)) if _is_complex(x) else x


def imag(input, name=None):  # noqa: A002
    """The imaginary parts of a complex tensor; zeros for a real tensor."""
    x = _tensor(input, "imag")
    if not _is_complex(x):
        return zeros_like(x)
    return cast(multiply(x, -1j), dtypes.real_dtype(x.dtype))


def conj(x, name=None):
    """The complex conjugate; a real tensor is returned as it is."""
    x = _tensor(x, "conj")
    if not _is_complex(x):
        return x
    return cast(real(x), x.dtype) - multiply(cast(imag(x), x.dtype), 1j)


def angle(input, name=None):  # noqa: A002
    """The argument ``atan2(imag, real)`` of each element (0 or pi for real tensors)."""
    x = _tensor(input, "angle")
    if not _is_complex(x):
        return atan2(zeros_like(x), x)
    return atan2(imag(x), real(x))


# The tape's complex view of an op conjugates around its rule (see ``registry``).
RAW.conj = lambda x: B.xp.conj(x)
TENSOR.conj = conj

# Ops TF defines for real types only; numpy would order complex numbers lexicographically.
_REAL_ONLY = ("relu", "relu6", "leaky_relu", "elu", "softplus", "gelu", "erf", "maximum",
              "minimum", "less", "less_equal", "greater", "greater_equal", "floor", "ceil",
              "round", "floordiv", "floormod", "atan2", "argmax", "argmin", "reduce_max",
              "reduce_min")


def _refuse_complex(op):
    kernel = op.forward

    def forward(x, *rest, **attrs):
        if x.dtype.kind == "c":
            raise TypeError(f"{op.name}: complex tensors are not supported (got {x.dtype}); "
                            f"expected a real dtype")
        return kernel(x, *rest, **attrs)

    forward.__name__, forward.__doc__ = getattr(kernel, "__name__", op.name), kernel.__doc__
    forward.refuses_complex = True
    op.forward = forward


for _name in _REAL_ONLY:
    if _name in OPS and not getattr(OPS[_name].forward, "refuses_complex", False):
        _refuse_complex(OPS[_name])


# --- DFTs ------------------------------------------------------------------------------------

def to_pairs(z):
    """A complex tensor as a real one with a last axis of (real, imag)."""
    return stack([real(z), imag(z)], axis=-1)


def from_pairs(p):
    """The complex tensor of a real (real, imag) pair tensor."""
    return complex(p[..., 0], p[..., 1])


def _complex_input(x, what):
    x = _tensor(x, what)
    if not _is_complex(x):
        raise TypeError(f"{what}: expected a complex64 or complex128 tensor, got "
                        f"{x.dtype.name}; use tf.cast or tf.complex first")
    return x


def _real_input(x, what):
    x = _tensor(x, what)
    if x.dtype.name not in _COMPLEX_OF:
        raise TypeError(f"{what}: expected a float32 or float64 tensor, got {x.dtype.name}")
    return x


def _rank_check(x, rank, what):
    if len(x.shape) < rank:
        raise ValueError(f"{what}: input must have rank at least {rank}, got shape "
                         f"{tuple(x.shape)}")


def _dft(x, rank, inverse, what):
    x = _complex_input(x, what)
    _rank_check(x, rank, what)
    return from_pairs(fft_ops.fft_pairs(to_pairs(x), inverse=inverse, rank=rank))


def fft(input, name=None):  # noqa: A002
    """The DFT over the innermost axis (``tf.signal.fft``)."""
    return _dft(input, 1, False, "fft")


def ifft(input, name=None):  # noqa: A002
    """The inverse DFT over the innermost axis, divided by its length."""
    return _dft(input, 1, True, "ifft")


def fft2d(input, name=None):  # noqa: A002
    """The DFT over the two innermost axes."""
    return _dft(input, 2, False, "fft2d")


def ifft2d(input, name=None):  # noqa: A002
    """The inverse DFT over the two innermost axes."""
    return _dft(input, 2, True, "ifft2d")


def fft3d(input, name=None):  # noqa: A002
    """The DFT over the three innermost axes."""
    return _dft(input, 3, False, "fft3d")


def ifft3d(input, name=None):  # noqa: A002
    """The inverse DFT over the three innermost axes."""
    return _dft(input, 3, True, "ifft3d")


def _fft_lengths(fft_length, x, rank, what):
    if fft_length is None:
        return [int(d) for d in x.shape[-rank:]]
    if isinstance(fft_length, Tensor):
        fft_length = B.to_numpy(fft_length._value)
    lengths = [int(n) for n in numpy.reshape(numpy.asarray(fft_length), -1)]
    if len(lengths) != rank or any(n < 0 for n in lengths):
        raise ValueError(f"{what}: fft_length must hold {rank} non-negative integer(s), got "
                         f"{fft_length!r}")
    return lengths


def _fit_axis(x, axis, length):
    """``x`` cropped or zero-padded to ``length`` along ``axis`` (negative)."""
    n = int(x.shape[axis])
    if n == length:
        return x
    if n > length:
        index = [slice(None)] * len(x.shape)
        index[axis] = slice(0, length)
        return x[tuple(index)]
    widths = [[0, 0] for _ in x.shape]
    widths[axis][1] = length - n
    return pad(x, widths)


def _outer_dft(z, rank, inverse):
    """The (inverse) DFT of the complex ``z`` over the ``rank`` axes before its last one."""
    if rank == 0:
        return z
    nd = len(z.shape)
    perm = list(range(nd - rank - 1)) + [nd - 1] + list(range(nd - rank - 1, nd - 1))
    moved = transpose(z, perm)   # the last axis goes before the transformed ones
    back = numpy.argsort(perm).tolist()
    done = from_pairs(fft_ops.fft_pairs(to_pairs(moved), inverse=inverse, rank=rank))
    return transpose(done, back)


def _rfft_n(x, fft_length, rank, what):
    x = _real_input(x, what)
    _rank_check(x, rank, what)
    lengths = _fft_lengths(fft_length, x, rank, what)
    for k, n in enumerate(lengths[:-1]):
        x = _fit_axis(x, k - rank, n)
    z = from_pairs(fft_ops.rfft_pairs(x, fft_length=lengths[-1]))
    return _outer_dft(z, rank - 1, False)


def _irfft_n(z, fft_length, rank, what):
    z = _complex_input(z, what)
    _rank_check(z, rank, what)
    if fft_length is None:
        lengths = [int(d) for d in z.shape[-rank:]]
        lengths[-1] = 2 * (lengths[-1] - 1)
    else:
        lengths = _fft_lengths(fft_length, z, rank, what)
    for k, n in enumerate(lengths[:-1]):
        z = _fit_axis(z, k - rank, n)
    z = _outer_dft(z, rank - 1, True)
    return fft_ops.irfft_pairs(to_pairs(z), fft_length=lengths[-1])


def rfft(input_tensor, fft_length=None, name=None):
    """The ``fft_length // 2 + 1`` DFT bins of a real signal's innermost axis (cropped or
    zero-padded to ``fft_length``)."""
    return _rfft_n(input_tensor, fft_length, 1, "rfft")


def irfft(input_tensor, fft_length=None, name=None):
    """The real signal of length ``fft_length`` (default ``2 * (bins - 1)``) whose rfft is the
    input."""
    return _irfft_n(input_tensor, fft_length, 1, "irfft")


def rfft2d(input_tensor, fft_length=None, name=None):
    """``rfft`` over the two innermost axes."""
    return _rfft_n(input_tensor, fft_length, 2, "rfft2d")


def irfft2d(input_tensor, fft_length=None, name=None):
    """The inverse of ``rfft2d``."""
    return _irfft_n(input_tensor, fft_length, 2, "irfft2d")


def rfft3d(input_tensor, fft_length=None, name=None):
    """``rfft`` over the three innermost axes."""
    return _rfft_n(input_tensor, fft_length, 3, "rfft3d")


def irfft3d(input_tensor, fft_length=None, name=None):
    """The inverse of ``rfft3d``."""
    return _irfft_n(input_tensor, fft_length, 3, "irfft3d")


def _nd_axes(x, fft_length, axes, norm, what):
    """The axes (made non-negative, in the given order) and lengths of a ``*fftnd`` call."""
    if norm not in (None, "backward"):
        raise ValueError(f"{what}: only norm=None ('backward') is supported, got {norm!r}")
    nd = len(x.shape)
    lengths = None
    if fft_length is not None:
        if isinstance(fft_length, Tensor):
            fft_length = B.to_numpy(fft_length._value)
        lengths = [int(n) for n in numpy.reshape(numpy.asarray(fft_length), -1)]
        if any(n < 0 for n in lengths):
            raise ValueError(f"{what}: fft_length must be non-negative, got {lengths}")
    if axes is None:
        axes = list(range(nd)) if lengths is None else list(range(nd - len(lengths), nd))
    if isinstance(axes, Tensor):
        axes = B.to_numpy(axes._value).tolist()
    axes = [int(a) for a in numpy.reshape(numpy.asarray(axes), -1)]
    for a in axes:
        if not -nd <= a < nd:
            raise ValueError(f"{what}: axis {a} is out of range for rank {nd}")
    axes = [a % nd for a in axes]
    if len(set(axes)) != len(axes) or not axes:
        raise ValueError(f"{what}: axes must be distinct and non-empty, got {axes}")
    if lengths is not None and len(lengths) != len(axes):
        raise ValueError(f"{what}: fft_length {lengths} and axes {axes} differ in length")
    return axes, lengths


def _to_end(x, axes):
    """``x`` with ``axes`` moved last (in order) and the permutation that undoes it."""
    nd = len(x.shape)
    perm = [a for a in range(nd) if a not in axes] + list(axes)
    return transpose(x, perm), numpy.argsort(perm).tolist()


def _fftnd(x, fft_length, axes, norm, inverse, what):
    x = _complex_input(x, what)
    axes, lengths = _nd_axes(x, fft_length, axes, norm, what)
    moved, back = _to_end(x, axes)
    rank = len(axes)
    for k, n in enumerate(lengths or ()):
        moved = _fit_axis(moved, k - rank, n)
    done = from_pairs(fft_ops.fft_pairs(to_pairs(moved), inverse=inverse, rank=rank))
    return transpose(done, back)


def fftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The DFT over ``axes`` (default all), each cropped or zero-padded to ``fft_length``."""
    return _fftnd(input_tensor, fft_length, axes, norm, False, "fftnd")


def ifftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The inverse DFT over ``axes`` (default all)."""
    return _fftnd(input_tensor, fft_length, axes, norm, True, "ifftnd")


def rfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """``rfft`` over ``axes`` (default all): the last of them keeps ``n // 2 + 1`` bins."""
    x = _real_input(input_tensor, "rfftnd")
    axes, lengths = _nd_axes(x, fft_length, axes, norm, "rfftnd")
    moved, back = _to_end(x, axes)
    return transpose(_rfft_n(moved, lengths, len(axes), "rfftnd"), back)


def irfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The inverse of ``rfftnd`` over ``axes`` (default all)."""
    z = _complex_input(input_tensor, "irfftnd")
    axes, lengths = _nd_axes(z, fft_length, axes, norm, "irfftnd")
    moved, back = _to_end(z, axes)
    return transpose(_irfft_n(moved, lengths, len(axes), "irfftnd"), back)


def _shift(x, axes, inverse, what):
    x = _tensor(x, what)
    nd = len(x.shape)
    if axes is None:
        axes = list(range(nd))
    elif isinstance(axes, int):
        axes = [axes]
    for axis in axes:
        axis = int(axis)
        if not -nd <= axis < nd:
            raise ValueError(f"{what}: axis {axis} is out of range for rank {nd}")
        n = int(x.shape[axis])
        k = (n + 1) // 2 if inverse else n // 2
        k = n - k   # rotate right by n // 2 (fftshift) or left by it (ifftshift)
        if n and k % n:
            index = [slice(None)] * nd
            head, tail = list(index), list(index)
            head[axis], tail[axis] = slice(k, None), slice(0, k)
            x = concat([x[tuple(head)], x[tuple(tail)]], axis)
    return x


def fftshift(x, axes=None, name=None):
    """Move the zero-frequency bin to the middle of each of ``axes`` (default all)."""
    return _shift(x, axes, False, "fftshift")


def ifftshift(x, axes=None, name=None):
    """The inverse of ``fftshift``."""
    return _shift(x, axes, True, "ifftshift")


def install(tf):
    """Set the complex dtypes and functions on ``tf``'s namespaces (idempotent)."""
    tf.complex64, tf.complex128 = dtypes.complex64, dtypes.complex128
    tf.complex = complex
    math = tf.math
    math.real, math.imag, math.conj, math.angle = real, imag, conj, angle
    math.abs = tf.abs
