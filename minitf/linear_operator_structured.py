"""``tf.linalg.LinearOperator*`` classes built from other operators (composition, Kronecker
product, block diagonal, block lower triangular, low-rank update) and the Householder
reflection."""
import numpy

from .linear_operator import (LinearOperator, adjoint_if, as_tensor, batch_broadcast,
                              broadcast_matrix, require_float)
from .linear_operator_kinds import _forbid, _require_vector_arg
from .ops.array_ops import concat, expand_dims, ones, reshape, transpose, zeros
from .ops.decomposition_ops import cholesky, slogdet
from .ops.linalg_ops import diag, matmul, solve as dense_solve
from .ops.math_ops import abs as _abs, cast, log, reciprocal, sqrt
from .ops.matrix_ops import cholesky_solve
from .ops.reduce_ops import reduce_prod, reduce_sum


def _operator_list(cls_name, operators, message=None):
    operators = list(operators)
    if not operators:
        raise ValueError(message or f"Expected a non-empty list of operators. Found: "
                                    f"{operators}")
    for i, op in enumerate(operators):
        if not isinstance(op, LinearOperator):
            raise TypeError(f"{cls_name}: operators[{i}] must be a LinearOperator, got "
                            f"{type(op).__name__}")
    dtypes = [op.dtype for op in operators]
    if any(d != dtypes[0] for d in dtypes):
        found = "   ".join(f"({type(op).__name__!r}, {op.dtype.name})" for op in operators)
        raise TypeError(f"Expected all operators to have the same dtype.  Found {found}")
    return operators


def _all_imply(hint, values, message):
    """TF's rule: a hint that every operator has is implied for the combination."""
    if all(v is True for v in values):
        if hint is False:
            raise ValueError(message)
        return True
    return hint


def _batch_of(operators):
    return batch_broadcast(*[op.batch_shape for op in operators])


def _concat_rows(parts):
    batch = batch_broadcast(*[p.shape[:-2] for p in parts])
    return concat([broadcast_matrix(p, batch) for p in parts], axis=-2)


def _split_rows(x, sizes):
    starts = numpy.cumsum([0] + list(sizes))
    return [x[..., int(a):int(b), :] for a, b in zip(starts[:-1], starts[1:])]


class LinearOperatorComposition(LinearOperator):
    """The product ``operators[0] @ operators[1] @ ...`` applied factor by factor."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self.operators = _operator_list("LinearOperatorComposition", operators)
        for left, right in zip(self.operators[:-1], self.operators[1:]):
            if left.domain_dimension != right.range_dimension:
                raise ValueError(f"LinearOperatorComposition: Dimensions "
                                 f"{left.domain_dimension} and {right.range_dimension} are not "
                                 f"compatible ({left.name} of shape {tuple(left.shape)} times "
                                 f"{right.name} of shape {tuple(right.shape)})")
        is_non_singular = _all_imply(
            is_non_singular, [op.is_non_singular for op in self.operators],
            "The composition of non-singular operators is always non-singular.")
        super().__init__(self.operators[0].dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square,
                         name or "_o_".join(op.name for op in self.operators),
                         dict(operators=self.operators))

    def _shape(self):
        return (_batch_of(self.operators) + (self.operators[0].range_dimension,
                                             self.operators[-1].domain_dimension))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        order = self.operators if adjoint else self.operators[::-1]
        x = order[0]._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            x = op._matmul(x, adjoint=adjoint)
        return x

    def _all_square(self):
        return all(op.is_square for op in self.operators)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if not self._all_square():
            return super()._solve(rhs, adjoint, adjoint_arg)
        order = self.operators[::-1] if adjoint else self.operators
        rhs = order[0]._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            rhs = op._solve(rhs, adjoint=adjoint)
        return rhs

    def _determinant(self):
        if not self._all_square():
            return super()._determinant()
        return _product([op.determinant() for op in self.operators])

    def _log_abs_determinant(self):
        if not self._all_square():
            return super()._log_abs_determinant()
        return _total([op.log_abs_determinant() for op in self.operators])


def _total(values):
    out = values[0]
    for v in values[1:]:
        out = out + v
    return out


def _product(values):
    out = values[0]
    for v in values[1:]:
        out = out * v
    return out


def _swap_middle(t):
    """Swap axes -3 and -2."""
    nd = t.ndim
    return transpose(t, list(range(nd - 3)) + [nd - 2, nd - 3, nd - 1])


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product ``operators[0] (x) operators[1] (x) ...``, applied and solved
    factor by factor without forming it."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None):
        self.operators = _operator_list("LinearOperatorKronecker", operators)
        is_non_singular = _all_imply(
            is_non_singular, [op.is_non_singular for op in self.operators],
            "The Kronecker product of non-singular operators is always non-singular.")
        is_self_adjoint = _all_imply(
            is_self_adjoint, [op.is_self_adjoint for op in self.operators],
            "The Kronecker product of self-adjoint operators is always self-adjoint.")
        is_positive_definite = _all_imply(
            is_positive_definite,
            [op.is_positive_definite and op.is_self_adjoint for op in self.operators],
            "The Kronecker product of positive-definite self-adjoint operators is always "
            "positive-definite.")
        super().__init__(self.operators[0].dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square,
                         name or "_x_".join(op.name for op in self.operators),
                         dict(operators=self.operators))

    def _shape(self):
        rows = int(numpy.prod([op.range_dimension for op in self.operators]))
        cols = int(numpy.prod([op.domain_dimension for op in self.operators]))
        return _batch_of(self.operators) + (rows, cols)

    def _apply(self, operators, x, in_dims, apply):
        """``(A_1 (x) ... (x) A_k) x`` where ``apply(A_i, y)`` applies one factor: the rest
        acts on x's trailing index (with the first one folded into the columns), then the first
        factor on the leading index."""
        if len(operators) == 1:
            return apply(operators[0], x)
        first_in, rest_in, cols = in_dims[0], int(numpy.prod(in_dims[1:])), int(x.shape[-1])
        batch = tuple(x.shape[:-2])
        y = _swap_middle(reshape(x, batch + (first_in, rest_in, cols)))
        y = self._apply(operators[1:], reshape(y, batch + (rest_in, first_in * cols)),
                        in_dims[1:], apply)
        batch, rest_out = tuple(y.shape[:-2]), int(y.shape[-2])
        y = _swap_middle(reshape(y, batch + (rest_out, first_in, cols)))
        y = apply(operators[0], reshape(y, batch + (first_in, rest_out * cols)))
        return reshape(y, tuple(y.shape[:-2]) + (int(y.shape[-2]) * rest_out, cols))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        dims = [op.range_dimension if adjoint else op.domain_dimension for op in self.operators]
        return self._apply(self.operators, adjoint_if(x, adjoint_arg), dims,
                           lambda op, y: op._matmul(y, adjoint=adjoint))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if not all(op.is_square for op in self.operators):
            return super()._solve(rhs, adjoint, adjoint_arg)
        dims = [op.domain_dimension for op in self.operators]
        return self._apply(self.operators, adjoint_if(rhs, adjoint_arg), dims,
                           lambda op, y: op._solve(y, adjoint=adjoint))

    def _determinant(self):
        n = self.domain_dimension
        return _product([op.determinant() ** float(n // op.domain_dimension)
                         for op in self.operators])

    def _log_abs_determinant(self):
        n = self.domain_dimension
        return _total([op.log_abs_determinant() * float(n // op.domain_dimension)
                       for op in self.operators])

    def _trace(self):
        if not all(op.is_square for op in self.operators):
            return super()._trace()
        return _product([op.trace() for op in self.operators])

    def _diag_part(self):
        if not all(op.is_square for op in self.operators):
            return super()._diag_part()
        batch = _batch_of(self.operators)
        out = None
        for op in self.operators:
            d = op.diag_part()
            if out is None:
                out = d
                continue
            outer = expand_dims(out, -1) * expand_dims(d, -2)
            out = reshape(outer, batch_broadcast(batch, outer.shape[:-2])
                          + (int(outer.shape[-2]) * int(outer.shape[-1]),))
        return out

    def _to_dense(self):
        out = None
        for op in self.operators:
            a = op.to_dense()
            if out is None:
                out = a
                continue
            big = (expand_dims(expand_dims(out, -1), -3)
                   * expand_dims(expand_dims(a, -3), -2))  # [..., m1, m2, n1, n2]
            rows = int(out.shape[-2]) * int(a.shape[-2])
            cols = int(out.shape[-1]) * int(a.shape[-1])
            out = reshape(big, tuple(big.shape[:-4]) + (rows, cols))
        return out


class LinearOperatorBlockDiag(LinearOperator):
    """The block diagonal matrix with the operators as blocks."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, name=None):
        self.operators = _operator_list(
            "LinearOperatorBlockDiag", operators,
            f"Argument `operators` must be a list of >=1 operators. Received: {operators}.")
        is_non_singular = _all_imply(
            is_non_singular, [op.is_non_singular for op in self.operators],
            "The direct sum of non-singular operators is always non-singular.")
        is_self_adjoint = _all_imply(
            is_self_adjoint, [op.is_self_adjoint for op in self.operators],
            "The direct sum of self-adjoint operators is always self-adjoint.")
        is_positive_definite = _all_imply(
            is_positive_definite, [op.is_positive_definite for op in self.operators],
            "The direct sum of positive-definite operators is always positive-definite.")
        if not all(op.is_square for op in self.operators):
            is_square = None
        super().__init__(self.operators[0].dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square,
                         name or "_ds_".join(op.name for op in self.operators),
                         dict(operators=self.operators))

    def _shape(self):
        return _batch_of(self.operators) + (
            sum(op.range_dimension for op in self.operators),
            sum(op.domain_dimension for op in self.operators))

    def _blockwise(self, x, adjoint, adjoint_arg, apply):
        x = adjoint_if(x, adjoint_arg)
        sizes = [op.range_dimension if adjoint else op.domain_dimension
                 for op in self.operators]
        return _concat_rows([apply(op, part)
                             for op, part in zip(self.operators, _split_rows(x, sizes))])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._blockwise(x, adjoint, adjoint_arg,
                               lambda op, part: op._matmul(part, adjoint=adjoint))

    def _square_blocks(self):
        return all(op.is_square for op in self.operators)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if not self._square_blocks():
            return super()._solve(rhs, adjoint, adjoint_arg)
        return self._blockwise(rhs, adjoint, adjoint_arg,
                               lambda op, part: op._solve(part, adjoint=adjoint))

    def _determinant(self):
        if not self._square_blocks():
            return super()._determinant()
        return _product([op.determinant() for op in self.operators])

    def _log_abs_determinant(self):
        if not self._square_blocks():
            return super()._log_abs_determinant()
        return _total([op.log_abs_determinant() for op in self.operators])

    def _trace(self):
        if not self._square_blocks():
            return super()._trace()
        return _total([op.trace() for op in self.operators])

    def _diag_part(self):
        if not self._square_blocks():
            return super()._diag_part()
        parts = [expand_dims(op.diag_part(), -1) for op in self.operators]
        return _concat_rows(parts)[..., 0]

    def _to_dense(self):
        batch = _batch_of(self.operators)
        rows = []
        for i, op in enumerate(self.operators):
            row = [broadcast_matrix(op.to_dense(), batch) if i == j else
                   zeros(batch + (op.range_dimension, other.domain_dimension), self.dtype)
                   for j, other in enumerate(self.operators)]
            rows.append(concat(row, axis=-1))
        return concat(rows, axis=-2)


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower triangular matrix: ``operators[i]`` holds the ``i + 1`` blocks of block
    row ``i``, the last of them (on the diagonal) square."""

    def __init__(self, operators, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorBlockLowerTriangular"):
        rows = [list(row) for row in operators]
        if not rows:
            raise ValueError(f"Argument `operators` must be a list of >=1 operators. "
                             f"Received: {operators}.")
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError(f"Argument `operators[{i}]` must contain `{i + 1}` blocks. "
                                 f"Received: {len(row)} blocks.")
        _operator_list(name, [op for row in rows for op in row])
        for i, row in enumerate(rows):
            if not row[-1].is_square:
                raise ValueError(f"Matrices on the diagonal (the final elements of each "
                                 f"row-partition in the `operators` list) must be square. "
                                 f"Expected argument `operators[{i}][-1].is_square` to be "
                                 f"True. Received: {row[-1].is_square}.")
            for j, op in enumerate(row[:-1]):
                if op.domain_dimension != rows[j][j].domain_dimension:
                    raise ValueError(f"Argument `operators[{i}][{j}].domain_dimension` "
                                     f"({op.domain_dimension}) must be the same as "
                                     f"`operators[{j}][{j}].domain_dimension` "
                                     f"({rows[j][j].domain_dimension}).")
                if op.range_dimension != row[-1].range_dimension:
                    raise ValueError(f"Argument `operators[{i}][{j}].range_dimension` "
                                     f"({op.range_dimension}) must be the same as "
                                     f"`operators[{i}][{i}].range_dimension` "
                                     f"({row[-1].range_dimension}).")
        self.operators = rows
        self._diagonal = [row[-1] for row in rows]
        is_non_singular = _all_imply(
            is_non_singular, [op.is_non_singular for op in self._diagonal],
            "A blockwise lower-triangular operator with non-singular operators on the main "
            "diagonal is always non-singular.")
        super().__init__(rows[0][0].dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, dict(operators=rows))

    def _shape(self):
        n = sum(op.domain_dimension for op in self._diagonal)
        return _batch_of([op for row in self.operators for op in row]) + (n, n)

    def _sizes(self):
        return [op.domain_dimension for op in self._diagonal]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        parts = _split_rows(adjoint_if(x, adjoint_arg), self._sizes())
        k = len(parts)
        if adjoint:   # block column j of A^H: the blocks (i, j), i >= j, transposed
            out = [_total([self.operators[i][j]._matmul(parts[i], adjoint=True)
                           for i in range(j, k)]) for j in range(k)]
        else:
            out = [_total([self.operators[i][j]._matmul(parts[j]) for j in range(i + 1)])
                   for i in range(k)]
        return _concat_rows(out)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        parts = _split_rows(adjoint_if(rhs, adjoint_arg), self._sizes())
        k = len(parts)
        out = [None] * k
        order = range(k - 1, -1, -1) if adjoint else range(k)
        for i in order:   # substitution, forward (A) or backward (A^H)
            known = ([self.operators[j][i]._matmul(out[j], adjoint=True)
                      for j in range(i + 1, k)] if adjoint else
                     [self.operators[i][j]._matmul(out[j]) for j in range(i)])
            residual = parts[i] - _total(known) if known else parts[i]
            out[i] = self._diagonal[i]._solve(residual, adjoint=adjoint)
        return _concat_rows(out)

    def _determinant(self):
        return _product([op.determinant() for op in self._diagonal])

    def _log_abs_determinant(self):
        return _total([op.log_abs_determinant() for op in self._diagonal])

    def _trace(self):
        return _total([op.trace() for op in self._diagonal])

    def _diag_part(self):
        return _concat_rows([expand_dims(op.diag_part(), -1) for op in self._diagonal])[..., 0]

    def _to_dense(self):
        batch = tuple(self.batch_shape)
        sizes = self._sizes()
        rows = []
        for i, row in enumerate(self.operators):
            blocks = [broadcast_matrix(op.to_dense(), batch) for op in row]
            blocks += [zeros(batch + (sizes[i], sizes[j]), self.dtype)
                       for j in range(i + 1, len(sizes))]
            rows.append(concat(blocks, axis=-1))
        return concat(rows, axis=-2)


class LinearOperatorLowRankUpdate(LinearOperator):
    """``base_operator + U D V^H`` (``D = diag(diag_update)``, the identity when None;
    ``V = U`` when ``v`` is None). Solves use the Woodbury identity and determinants the
    matrix determinant lemma, through the ``K x K`` capacitance ``C = D^-1 + V^H L^-1 U``."""

    def __init__(self, base_operator, u, diag_update=None, v=None,
                 is_diag_update_positive=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorLowRankUpdate"):
        self.base_operator = base = base_operator
        self.u = as_tensor(u)
        require_float(name, "u", self.u)
        self.v = self.u if v is None else as_tensor(v)
        self.diag_update = None if diag_update is None else as_tensor(diag_update)
        for what, t in (("u", self.u), ("v", self.v), ("diag_update", self.diag_update)):
            if t is not None and t.dtype != base.dtype:
                raise TypeError(f"{name}: Expected argument `{what}` to have dtype "
                                f"{base.dtype.name}.  Found: {t.dtype.name}")
        for what, t, dim in (("u", self.u, base.range_dimension),
                             ("v", self.v, base.domain_dimension)):
            if t.ndim < 2 or int(t.shape[-2]) != dim:
                raise ValueError(f"{name}: Dimensions {dim} and "
                                 f"{int(t.shape[-2]) if t.ndim >= 2 else None} are not "
                                 f"compatible: `{what}` must have shape [..., {dim}, K], got "
                                 f"{tuple(t.shape)}")
        rank = int(self.u.shape[-1])
        if int(self.v.shape[-1]) != rank or (self.diag_update is not None and (
                self.diag_update.ndim < 1 or int(self.diag_update.shape[-1]) != rank)):
            raise ValueError(f"{name}: `u`, `v` and `diag_update` must share the last "
                             f"dimension K={rank}, got shapes {tuple(self.u.shape)}, "
                             f"{tuple(self.v.shape)}, "
                             f"{None if self.diag_update is None else tuple(self.diag_update.shape)}")
        if diag_update is None:
            is_diag_update_positive = True
        self.is_diag_update_positive = is_diag_update_positive
        symmetric_update = v is None
        if symmetric_update and base.is_self_adjoint and is_self_adjoint is None:
            is_self_adjoint = True
        if (symmetric_update and base.is_self_adjoint and base.is_positive_definite
                and is_diag_update_positive and is_positive_definite is None):
            is_positive_definite = True
        self._use_cholesky = bool(symmetric_update and base._can_use_cholesky()
                                  and is_diag_update_positive)
        super().__init__(base.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name,
                         dict(base_operator=base, u=u, diag_update=diag_update, v=v,
                              is_diag_update_positive=is_diag_update_positive))

    @property
    def diag_operator(self):
        """``D`` as an operator (the identity when no ``diag_update`` was given)."""
        from .linear_operator_kinds import LinearOperatorDiag, LinearOperatorIdentity
        if self.diag_update is None:
            return LinearOperatorIdentity(int(self.u.shape[-1]), dtype=self.dtype)
        return LinearOperatorDiag(self.diag_update,
                                  is_positive_definite=self.is_diag_update_positive)

    def _shape(self):
        batch = batch_broadcast(self.base_operator.batch_shape, self.u.shape[:-2],
                                self.v.shape[:-2],
                                () if self.diag_update is None else self.diag_update.shape[:-1])
        return batch + tuple(self.base_operator._shape()[-2:])

    def _scaled(self, x):
        """``D x`` for x ``[..., K, R]``."""
        return x if self.diag_update is None else expand_dims(self.diag_update, -1) * x

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_if(x, adjoint_arg)
        left, right = (self.v, self.u) if adjoint else (self.u, self.v)
        update = matmul(left, self._scaled(matmul(right, x, adjoint_a=True)))
        return self.base_operator._matmul(x, adjoint=adjoint) + update

    def _capacitance(self, adjoint=False):
        """``C = D^-1 + V^H L^-1 U`` (its adjoint ``D^-1 + U^H L^-H V`` with ``adjoint``)."""
        left, right = (self.v, self.u) if adjoint else (self.u, self.v)
        inner = matmul(right, self.base_operator._solve(left, adjoint=adjoint), adjoint_a=True)
        rank = int(self.u.shape[-1])
        if self.diag_update is None:
            return inner + diag(ones((rank,), self.dtype))
        return inner + diag(reciprocal(self.diag_update))

    def _solve_capacitance(self, c, rhs):
        batch = batch_broadcast(c.shape[:-2], rhs.shape[:-2])
        c, rhs = broadcast_matrix(c, batch), broadcast_matrix(rhs, batch)
        if self._use_cholesky:
            return cholesky_solve(cholesky(c), rhs)
        return dense_solve(c, rhs)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_if(rhs, adjoint_arg)
        left, right = (self.v, self.u) if adjoint else (self.u, self.v)
        base = self.base_operator
        first = base._solve(rhs, adjoint=adjoint)                       # L^-1 b
        inner = self._solve_capacitance(self._capacitance(adjoint),
                                        matmul(right, first, adjoint_a=True))
        return first - base._solve(matmul(left, inner), adjoint=adjoint)

    def _log_abs_det_capacitance(self):
        c = self._capacitance()
        if self._use_cholesky:
            from .ops.linalg_ops import diag_part
            return 2.0 * reduce_sum(log(diag_part(cholesky(c))), axis=-1)
        return slogdet(c)[1]

    def _log_abs_determinant(self):
        out = self.base_operator.log_abs_determinant() + self._log_abs_det_capacitance()
        if self.diag_update is not None:
            out = out + reduce_sum(log(_abs(self.diag_update)), axis=-1)
        return out

    def _determinant(self):
        out = self.base_operator.determinant() * _capacitance_det(self._capacitance())
        if self.diag_update is not None:
            out = out * reduce_prod(self.diag_update, axis=-1)
        return out

    def _diag_part(self):
        weights = self.v if self.diag_update is None else (
            self.v * expand_dims(self.diag_update, -2))
        n = min(self.range_dimension, self.domain_dimension)
        update = reduce_sum(self.u[..., :n, :] * weights[..., :n, :], axis=-1)
        return self.base_operator.diag_part() + update


def _capacitance_det(c):
    from .ops.linalg_ops import det
    return det(c)


class LinearOperatorHouseholder(LinearOperator):
    """The reflection ``I - 2 v v^T / (v^T v)`` about the hyperplane orthogonal to
    ``reflection_axis`` ``v`` (shape ``[..., N]``)."""

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorHouseholder"):
        self._axis = as_tensor(reflection_axis)
        require_float(name, "reflection_axis", self._axis)
        _require_vector_arg(name, "reflection_axis", self._axis)
        _forbid(is_self_adjoint, False, "A Householder operator is always self adjoint.")
        _forbid(is_non_singular, False, "A Householder operator is always non-singular.")
        _forbid(is_positive_definite, True, "A Householder operator is always non-positive "
                                            "definite.")
        _forbid(is_square, False, "A Householder operator is always square.")
        super().__init__(self._axis.dtype, None, True, True, False, True, name,
                         dict(reflection_axis=reflection_axis))

    @property
    def reflection_axis(self):
        return self._axis

    def _shape(self):
        shape = tuple(int(d) for d in self._axis.shape)
        return shape + shape[-1:]

    def _unit(self):
        v = self._axis
        return v / sqrt(reduce_sum(v * v, axis=-1, keepdims=True))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_if(x, adjoint_arg)
        unit = expand_dims(self._unit(), -1)
        return x - 2.0 * unit * reduce_sum(unit * x, axis=-2, keepdims=True)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return -ones(tuple(self.batch_shape), self.dtype)

    def _log_abs_determinant(self):
        return zeros(tuple(self.batch_shape), self.dtype)

    def _trace(self):
        return cast(self.domain_dimension - 2, self.dtype) * ones(tuple(self.batch_shape),
                                                                  self.dtype)

    def _diag_part(self):
        unit = self._unit()
        return 1.0 - 2.0 * unit * unit

    def _to_dense(self):
        unit = self._unit()
        eye = diag(ones(tuple(unit.shape), self.dtype))
        return eye - 2.0 * expand_dims(unit, -1) * expand_dims(unit, -2)

    def _cond(self):
        return ones(tuple(self.batch_shape), self.dtype)

    def _linop_inverse(self):
        return self
