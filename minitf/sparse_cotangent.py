"""What the sparse batches of one-hot cotangents of vectorised jacobians share.

``jacobian`` seeds its backward pass with row-sparse cotangents (``minitf.row_cotangent``),
``batch_jacobian`` with column-sparse ones (``minitf.column_cotangent``). Each stores only its
nonzero values ``vals`` and a pattern (which rows or columns hold them) shared along one
backward pass, runs an op's own rule for it where the op has one (``row_vjp`` / ``col_vjp``)
or its element-wise rule on ``vals``, and otherwise hands the op the dense batch
(``dense()``).
"""


class SparseCotangent:
    """Base of ``RowCotangent`` and ``ColumnCotangent``. Subclasses set ``rule`` (the name of
    the op attribute holding a rule for them) and define ``pattern``, ``like``, ``dense`` and
    ``_elementwise``."""
    __slots__ = ()
    __array_ufunc__ = None  # ``dense_array + sparse`` must reach ``__radd__``
    rule = None

    def backprop(self, op, saved, out, attrs, needs, shapes):
        """The input gradients of one record for this batch (arrays, sparse batches or None),
        or None when the op needs the dense batch."""
        own = getattr(op, self.rule, None)
        if own is not None:
            return own(self, saved or (), out, needs, **attrs)
        if op.elementwise and op.user_grad is None and op.vjp is not None:
            return self._elementwise(op, saved, out, attrs, needs, shapes)
        return None

    def __add__(self, other):
        if other.__class__ is self.__class__:
            if other.pattern is self.pattern:
                return self.like(self.vals + other.vals)
            other = other.dense()
        return self.dense() + other

    __radd__ = __add__
