"""Gradients of slices, kept as their pieces until something needs the whole array.

A slice's gradient is zeros of the sliced tensor's shape with the slice's gradient written
in. A tensor read in many slices (an RNN's projected inputs, unstacked into time steps; the
four gates split out of one product) then received one zero-filled array per slice, and the
backward pass added them one by one: for T steps of a (batch, T, 4 units) projection, T
zero-fills and T - 1 additions of the whole array, where the pieces cover it once.
``SliceCotangent`` keeps ``(key, value)`` pieces; adding two keeps both; the first rule that
reads the gradient (or the end of the pass) gets ``dense()``: one zero-fill and one in-place
add per piece (on Tensors, in a recorded or traced pass: one ``slice_pieces`` op, which a
replay runs the same way). ``array_ops._getitem_vjp`` makes them where no jacobian batch
dimension leads; every op's rule sees a dense gradient.
"""
import numpy

from . import backend as B
from .sparse_cotangent import SparseCotangent
from .tensor import Tensor

ENABLED = True      # False: every slice's gradient is zero-filled on its own (tests compare)


def is_basic(key):
    """Whether ``key`` (a tuple) indexes with slices, integers, None and Ellipsis only (a view:
    no element twice, so ``target[key] += value`` adds each value once)."""
    return all(k is None or k is Ellipsis or isinstance(k, slice)
               or (isinstance(k, (int, numpy.integer)) and not isinstance(k, bool))
               for k in key)


def add_at(target, key, value):
    """``target[key] += value`` where ``key`` may repeat elements (fancy indices: each adds)."""
    if is_basic(key):
        target[key] += value
    else:
        B.scatter_add(target, key, value)
    return target


def assemble(shape, dtype, pieces):
    """Zeros of ``shape`` with each ``(key, value)`` of ``pieces`` added in turn."""
    out = B.xp.zeros(shape, dtype=dtype)
    for key, value in pieces:
        add_at(out, key, value)
    return out


class SliceCotangent(SparseCotangent):
    """The dense array of ``shape`` that is zero but for ``value`` added at ``key``, for each
    ``(key, value)`` of ``parts``."""
    __slots__ = ("shape", "dtype", "parts")

    def __init__(self, shape, dtype, parts):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.parts = parts

    def backprop(self, op, saved, out, attrs, needs, shapes):
        return None     # every rule takes the dense array

    def dense(self):
        if isinstance(self.parts[0][1], Tensor):   # a recorded or traced pass: as one op
            from .ops.array_ops import slice_pieces
            return slice_pieces([v for _, v in self.parts], self.shape,
                                [k for k, _ in self.parts])
        return assemble(self.shape, self.dtype, self.parts)

    def __add__(self, other):
        if (other.__class__ is SliceCotangent and other.shape == self.shape
                and other.dtype == self.dtype):
            return SliceCotangent(self.shape, self.dtype, self.parts + other.parts)
        if isinstance(other, SparseCotangent):
            other = other.dense()
        out = self.dense()
        if (B.is_array(out) and B.is_array(other) and other.shape == self.shape
                and other.dtype == self.dtype):
            out += other        # into the array made here: no one else holds it
            return out
        return out + other

    __radd__ = __add__
