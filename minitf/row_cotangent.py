"""Row-sparse batches of cotangents, for vectorised jacobians.

``jacobian`` seeds its backward pass with one one-hot cotangent per target element. Seen along
the target's first axis, seed ``b`` is zero except on one row, ``rows[b]``. Element-wise ops
and matrix products keep that structure backwards:

* an element-wise op's gradient on row ``r`` needs only row ``r`` of its inputs;
* ``a @ b`` sends row ``r`` of ``g`` to row ``r`` of ``a``'s gradient (``g_r @ b^T``), and
  ``b``'s gradient is the outer product ``a_r^T g_r``: a rank-1 product instead of a full one.

So ``RowCotangent`` stores only ``vals[b]`` (the nonzero row) and ``rows``. A rule that does
not know it sees the dense batch instead (``dense()``). An input that an element-wise op
broadcasts along the row axis (a bias) gets a dense gradient. Summing one nonzero row over the
row axis is that row itself, so this gradient is no bigger than ``vals``.

Only first-order passes on bare arrays use it. When the backward pass is recorded (a Hessian),
the seeds stay dense.
"""
import math

from . import backend as B
from .ops.registry import RAW
from .sparse_cotangent import SparseCotangent


class RowCotangent(SparseCotangent):
    """The dense batch ``(N, n0, *rest)`` whose element ``b`` is ``vals[b]`` on row
    ``rows[b]`` and zero elsewhere. ``rows`` is shared along a backward pass."""
    __slots__ = ("rows", "vals", "shape", "dtype")
    rule = "row_vjp"

    def __init__(self, rows, vals, n0):
        self.rows = rows
        self.vals = vals
        self.shape = (vals.shape[0], n0) + tuple(vals.shape[1:])
        self.dtype = vals.dtype

    @classmethod
    def one_hot(cls, start, stop, shape, dtype):
        """Seeds ``start:stop`` of the identity over a target of ``shape`` (ndim >= 1)."""
        xp = B.xp
        per_row = math.prod(int(s) for s in shape[1:])
        flat = xp.arange(start, stop)
        vals = xp.zeros((stop - start, per_row), dtype=dtype)
        vals[xp.arange(stop - start), flat % per_row] = 1
        return cls(flat // per_row, vals.reshape((stop - start,) + tuple(shape[1:])), shape[0])

    def like(self, vals):
        """The same rows with other values (the gradient of a row-preserving input)."""
        return RowCotangent(self.rows, vals, self.shape[1])

    def dense(self):
        xp = B.xp
        out = xp.zeros(self.shape, dtype=self.dtype)
        out[xp.arange(self.shape[0]), self.rows] = self.vals
        return out

    @property
    def pattern(self):
        return self.rows

    def _elementwise(self, op, saved, out, attrs, needs, shapes):
        rows, n0 = self.rows, self.shape[1]
        ndim = len(self.shape) - 1   # rank of the op's output
        rest = tuple(self.vals.shape[1:])
        n = self.vals.shape[0]

        def on_rows(value, shape):
            if value is None:
                return None
            if len(shape) == ndim:
                return value[rows] if shape[0] == n0 else value[0]
            return value              # fewer axes: aligned with the trailing ones, no row axis

        rowed = [len(s) == ndim and s[0] == n0 for s in shapes]
        if saved:
            saved = tuple(on_rows(v, s) for v, s in zip(saved, shapes))
        if out is not None:
            out = out[rows]
        F = RAW
        context = F.nb, F.needs, F.shapes
        try:
            F.nb, F.needs = 0, needs
            F.shapes = tuple((n,) + tuple(s[1:]) if r else tuple(s[1:]) if len(s) == ndim
                             else tuple(s) for s, r in zip(shapes, rowed))
            grads = op.vjp(F, self.vals, saved or (), out, **attrs)
            result = []
            for k, gk in enumerate(grads):
                if gk is None or not needs[k]:
                    result.append(None)
                    continue
                if tuple(gk.shape) != (n,) + rest:
                    gk = B.xp.broadcast_to(gk, (n,) + rest)
                if rowed[k]:
                    result.append(self.like(F.unbroadcast(gk, (n,) + tuple(shapes[k][1:]))))
                else:  # broadcast along the rows: the sum over rows is the one nonzero row
                    result.append(gk.reshape((n, 1) + rest))
            return result
        finally:
            F.nb, F.needs, F.shapes = context
