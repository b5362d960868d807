"""Bitwise ops on integer tensors (``tf.bitwise``) and the dtype dispatch of Tensor's ``&``,
``|``, ``^`` and ``~``: logical on bool tensors, bitwise on integer tensors (as TF)."""
import numpy

from .. import backend as B
from ..tensor import Tensor
from .convert import convert_to_tensor
from .math_ops import binary, logical_and, logical_not, logical_or, logical_xor, unary


def _require_int(op, *arrays):
    for a in arrays:
        if a.dtype.kind not in "iu":
            raise TypeError(f"{op} expects integer tensors (int8 ... int64, uint8 ... uint64), "
                            f"got dtype {a.dtype}")


def _bitwise_and(x, y):
    """Element-wise x & y."""
    _require_int("bitwise_and", x, y)
    return B.xp.bitwise_and(x, y)


def _bitwise_or(x, y):
    """Element-wise x | y."""
    _require_int("bitwise_or", x, y)
    return B.xp.bitwise_or(x, y)


def _bitwise_xor(x, y):
    """Element-wise x ^ y."""
    _require_int("bitwise_xor", x, y)
    return B.xp.bitwise_xor(x, y)


def _invert(x):
    """Element-wise ~x (all bits flipped)."""
    _require_int("invert", x)
    return B.xp.invert(x)


def _shift_amount(x, y):
    # TF leaves shifts outside [0, bits) implementation defined; its CPU kernel clamps them to
    # [0, bits - 1], which we follow (numpy's result would depend on the platform).
    bits = x.dtype.itemsize * 8
    return B.xp.clip(y, 0, bits - 1).astype(x.dtype, copy=False)


def _left_shift(x, y):
    """Element-wise x << y."""
    _require_int("left_shift", x, y)
    return B.xp.left_shift(x, _shift_amount(x, y))


def _right_shift(x, y):
    """Element-wise x >> y (arithmetic for signed dtypes)."""
    _require_int("right_shift", x, y)
    return B.xp.right_shift(x, _shift_amount(x, y))


bitwise_and = binary("bitwise_and", _bitwise_and, None, type="BitwiseAnd")
bitwise_or = binary("bitwise_or", _bitwise_or, None, type="BitwiseOr")
bitwise_xor = binary("bitwise_xor", _bitwise_xor, None, type="BitwiseXor")
invert = unary("invert", _invert, None, type="Invert")
left_shift = binary("left_shift", _left_shift, None, type="LeftShift")
right_shift = binary("right_shift", _right_shift, None, type="RightShift")


def _int_samples(arity):
    """Integer templates for the property tests of every op (no gradient to check)."""
    values = numpy.arange(-3, 9, dtype=numpy.int64).reshape(3, 4)
    return lambda: [((values,) * arity, {})]


for _public in (bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift):
    _public.op.samples = _int_samples(2)
invert.op.samples = _int_samples(1)


def _is_bool(x, y=None):
    """Does the operator act logically? Decided by the Tensor operand's dtype, as in TF."""
    t = x if isinstance(x, Tensor) else y
    if not isinstance(t, Tensor):
        t = convert_to_tensor(x)
    return t._value.dtype.kind == "b"


def and_(x, y):
    """``x & y``: logical_and for bool tensors, bitwise_and otherwise."""
    return logical_and(x, y) if _is_bool(x, y) else bitwise_and(x, y)


def or_(x, y):
    """``x | y``: logical_or for bool tensors, bitwise_or otherwise."""
    return logical_or(x, y) if _is_bool(x, y) else bitwise_or(x, y)


def xor_(x, y):
    """``x ^ y``: logical_xor for bool tensors, bitwise_xor otherwise."""
    return logical_xor(x, y) if _is_bool(x, y) else bitwise_xor(x, y)


def invert_(x):
    """``~x``: logical_not for bool tensors, invert otherwise."""
    return logical_not(x) if _is_bool(x) else invert(x)
