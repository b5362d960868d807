"""Column-sparse batches of cotangents, for vectorised batch jacobians.

``batch_jacobian`` seeds its backward pass with one cotangent per element of an example's
target: seed ``k`` is one at position ``k`` of every example and zero elsewhere. Seen as
``(examples, positions)``, seed ``k`` is zero except on one column, ``cols[k]``. Element-wise
ops keep that structure backwards (an element's gradient needs only the same element of the
inputs), and a matrix product turns it into a cheap outer product:

* an element-wise op's gradient on column ``c`` needs only column ``c`` of its inputs;
* through ``a @ b``, a cotangent that is ``v`` on column ``c`` gives ``a`` the gradient
  ``v[:, None] * b[:, c]``, a broadcast multiply instead of a product with ``b^T``.

So ``ColumnCotangent`` stores only ``vals[k]`` (one value per example) and ``cols``. A rule that
does not know it sees the dense batch instead (``dense()``), so an unknown op costs what the
dense path costs. An input that an element-wise op broadcasts (a bias) and that needs a
gradient sends the op to the dense path too.

The counterpart of ``minitf.row_cotangent`` (``jacobian``'s seeds); only first-order passes on
bare arrays use it.
"""
import math

from . import backend as B
from .ops.registry import RAW
from .sparse_cotangent import SparseCotangent


class ColumnCotangent(SparseCotangent):
    """The dense batch ``(N, n0, *rest)`` whose element ``k`` is ``vals[k]`` (shape ``(n0,)``)
    at flat position ``cols[k]`` of ``rest`` in every row, zero elsewhere. ``cols`` is shared
    along a backward pass."""
    __slots__ = ("cols", "vals", "shape", "dtype", "_positions", "ones")
    rule = "col_vjp"

    def __init__(self, cols, vals, shape, positions=None, ones=False):
        self.cols = cols
        self.vals = vals
        self.shape = (vals.shape[0],) + tuple(shape)
        self.dtype = vals.dtype
        self._positions = positions   # ``cols`` unravelled over ``shape[1:]``, once per pass
        self.ones = ones              # every value is 1 (the seeds, until an op scales them)

    @classmethod
    def identity(cls, shape, dtype):
        """Every example's seeds for a target of ``shape`` (ndim >= 2): ``prod(shape[1:])``
        cotangents, seed ``k`` one at position ``k`` of each example."""
        xp = B.xp
        per = math.prod(int(s) for s in shape[1:])
        return cls(xp.arange(per), xp.ones((per, shape[0]), dtype=dtype), shape, ones=True)

    def like(self, vals):
        """The same columns with other values (the gradient of a full-shaped input)."""
        return ColumnCotangent(self.cols, vals, self.shape[1:], self._positions,
                               self.ones and vals is self.vals)

    def at_columns(self, value):
        """An input ``value`` of an element-wise op (broadcastable to ``shape[1:]``) at the
        columns, broadcastable to ``(N, n0)``: ``(N, n0)`` for a full-shaped input, ``(N, 1)``
        or ``(1, n0)`` for one broadcast along the examples or the positions, a scalar for one
        constant over both (as the dense rule sees it)."""
        full = self.shape[1:]
        if value.shape == full and len(full) == 2:
            return value[:, self.cols].T
        if self._positions is None:
            self._positions = B.xp.unravel_index(self.cols, full[1:])
        lead = len(full) - value.ndim
        index = []
        for i, size in enumerate(value.shape):
            if size == 1:
                index.append(0)
            elif lead + i == 0:
                index.append(B.xp.arange(full[0])[None, :])
            else:
                index.append(self._positions[lead + i - 1][:, None])
        return value[tuple(index)]

    def columns_shape(self, shape):
        """The shape of ``at_columns`` of an input of ``shape``."""
        full = self.shape[1:]
        lead = len(full) - len(shape)
        examples = positions = False
        for i, size in enumerate(shape):
            if size != 1:
                if lead + i == 0:
                    examples = True
                else:
                    positions = True
        if not (examples or positions):
            return ()
        return (self.shape[0] if positions else 1, full[0] if examples else 1)

    def dense(self):
        xp = B.xp
        n, n0 = self.shape[0], self.shape[1]
        out = xp.zeros((n, n0, math.prod(self.shape[2:])), dtype=self.dtype)
        out.transpose(0, 2, 1)[xp.arange(n), self.cols] = self.vals
        return out.reshape(self.shape)

    def per_example(self, rest):
        """The dense Jacobians ``(n0, N) + rest`` of a source of shape ``(n0,) + rest``: what
        ``batch_jacobian`` returns, written directly in its layout."""
        xp = B.xp
        n, n0 = self.shape[0], self.shape[1]
        out = B.empty_result((n0, n, math.prod(rest)), self.dtype)
        out.fill(0)
        out[:, xp.arange(n), self.cols] = self.vals.T
        return out.reshape((n0, n) + tuple(rest))

    @property
    def pattern(self):
        return self.cols

    def _elementwise(self, op, saved, out, attrs, needs, shapes):
        full = self.shape[1:]
        for need, shape in zip(needs, shapes):
            if need and tuple(shape) != full:
                return None   # a broadcast input's gradient is not column-sparse
        n, n0 = self.vals.shape
        if saved:
            saved = tuple(None if v is None else self.at_columns(v) for v in saved)
        if out is not None:
            out = self.at_columns(out)
        F = RAW
        context = F.nb, F.needs, F.shapes
        try:
            F.nb, F.needs = 0, needs
            F.shapes = tuple(self.columns_shape(shape) for shape in shapes)
            grads = op.vjp(F, self.vals, saved or (), out, **attrs)
            result = []
            for k, gk in enumerate(grads):
                if gk is None or not needs[k]:
                    result.append(None)
                else:
                    if gk.shape != (n, n0):
                        gk = B.xp.broadcast_to(gk, (n, n0))
                    result.append(self.like(gk))
            return result
        finally:
            F.nb, F.needs, F.shapes = context
