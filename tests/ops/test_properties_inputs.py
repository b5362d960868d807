"""Property tests of every registered op on hostile inputs: other dtypes, NaN/Inf, zero-size
shapes and broadcasting. Each call gives a result of the right shape or a clear error (a
ValueError/TypeError whose message starts with the op's name); nothing else may escape.

Inputs start from each op's gradient-check samples (or a template below for ops without
samples) and are then varied by hypothesis.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import minitf as tf
from minitf.ops.registry import OPS, apply

_SETTINGS = settings(max_examples=16, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])
_DTYPES = [np.float64, np.float32, np.float16, np.int32, np.int64, np.bool_]
_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30]


def _f(*shape):
    return np.linspace(-1.5, 2.5, int(np.prod(shape))).reshape(shape)


_TEMPLATES = {
    "where_indices": ((_f(2, 3) > 0,), {}),
    "zeros_like_op": ((_f(2, 3),), {}),
    "ones_like_op": ((_f(2, 3),), {}),
    "stop_gradient": ((_f(2, 3),), {}),
    "shuffle": ((_f(4, 2),), {}),
    "one_hot": ((np.array([0, 2, 1, 5]),), {"depth": 3}),
    "argmax": ((_f(2, 3),), {"axis": 1, "output_type": np.int64}),
    "argmin": ((_f(2, 3),), {"axis": 0, "output_type": np.int32}),
    "reduce_any": ((_f(2, 3) > 0,), {"axis": 1}),
    "reduce_all": ((_f(2, 3) > 0,), {"axis": None}),
    "count_nonzero": ((_f(2, 3),), {"axis": 0}),
    "random_normal": ((), {"shape": (2, 3), "mean": 0.0, "stddev": 1.0,
                           "dtype": np.dtype("float32")}),
    "random_uniform": ((), {"shape": (2, 3), "minval": 0.0, "maxval": 1.0,
                            "dtype": np.dtype("float32")}),
    "truncated_normal": ((), {"shape": (2, 3), "mean": 0.0, "stddev": 1.0,
                              "dtype": np.dtype("float32")}),
    "bernoulli_mask": ((), {"shape": (2, 3), "keep": 0.5, "dtype": np.dtype("float32")}),
    # (..., KH, KW, C) windows and their maxima (..., C)
    "first_max_mask": ((_f(2, 2, 2, 3), _f(2, 2, 2, 3).max(axis=(1, 2))), {}),
    # index and bit ops (no gradient)
    "stable_argsort": ((_f(2, 3),), {"axis": 1, "descending": True}),
    "argpartition": ((_f(2, 3),), {"kth": 1, "axis": 1}),
    "bitcast_view": ((_f(2, 4).astype(np.float32),), {"dtype": np.dtype("int32")}),
    # a symmetric tridiagonal matrix: its diagonal and off-diagonal (no gradient, as TF)
    "eigh_tridiagonal": ((_f(3), _f(2)), {"eigvals_only": True, "select": "a", "low": 0,
                                          "high": 0}),
    # CTC: time-major logits [T, B, C], labels, their lengths; the decoder's sequence lengths
    "ctc_greedy_decode": ((_f(4, 2, 3), np.array([4, 2])), {}),
    "ctc_loss_dense_backprop": ((_f(4, 2, 3), np.array([[1, 2], [2, 0]]), np.array([2, 1]),
                                 np.array([4, 3])), {}),
    # collectives of a one-process job (no gradient, so no gradient-check samples)
    "mpi_allgather": ((_f(2, 3),), {}),
    "mpi_broadcast": ((_f(2, 3),), {"root_rank": 0}),
}


def _template(op):
    if op.name in _TEMPLATES:
        return _TEMPLATES[op.name]
    if op.samples is not None:
        inputs, attrs = next(iter(op.samples()))
        return tuple(np.array(x) for x in inputs), dict(attrs)
    assert op.elementwise, f"op {op.name!r}: add a template for this test"
    return tuple(_f(2, 3) for _ in range(op.arity)), {}


def _call(op, arrays, attrs):
    """The op's output array, or None after a clear error; anything else fails the test."""
    try:
        return apply(op, [tf.constant(a) for a in arrays], dict(attrs)).numpy()
    except (ValueError, TypeError) as exc:
        assert str(exc).startswith(f"{op.name}:") or op.name in str(exc), (
            f"op {op.name!r}: an error that does not name the op: {type(exc).__name__}: {exc}")
        return None


@st.composite
def variations(draw, op):
    inputs, attrs = _template(op)
    arrays = [x.copy() for x in inputs]
    floats = [i for i, x in enumerate(arrays) if x.dtype.kind == "f"]
    kind = draw(st.sampled_from(["dtype", "special", "zero", "broadcast"]))
    if kind == "dtype" and floats:
        dtype = draw(st.sampled_from(_DTYPES))
        for i in floats:
            arrays[i] = arrays[i].astype(dtype)
    elif kind == "special" and floats:
        for i in floats:
            x = arrays[i]
            if x.size:
                flat = x.reshape(-1)
                for _ in range(draw(st.integers(1, 3))):
                    flat[draw(st.integers(0, x.size - 1))] = draw(st.sampled_from(_SPECIALS))
    elif kind == "zero" and op.elementwise and arrays and arrays[0].ndim:
        axis = draw(st.integers(0, arrays[0].ndim - 1))
        arrays = [np.take(x, [], axis=axis - arrays[0].ndim) if x.ndim >= arrays[0].ndim - axis
                  else x for x in arrays]
    elif kind == "zero" and arrays and all(x.ndim for x in arrays):
        arrays = [x[:0] for x in arrays]  # an empty batch: no shape to expect, no crash allowed
    elif kind == "broadcast" and op.elementwise and len(arrays) >= 2 and arrays[1].ndim:
        x = arrays[1]
        keep = draw(st.integers(0, x.ndim))
        arrays[1] = x.reshape(-1)[:1].reshape((1,) * keep) if draw(st.booleans()) else \
            x[(slice(0, 1),) * x.ndim].reshape(x.shape[:0] + (1,) * x.ndim)
    else:
        kind = "unchanged"
    return kind, arrays, attrs


# ops whose output shape depends on the input dtype (a bit view of wider items is shorter)
_DTYPE_SHAPED = {"bitcast_view"}


def _expected_shape(op, kind, arrays, attrs, template_shape):
    if kind == "dtype" and op.name in _DTYPE_SHAPED:
        return None
    if op.elementwise:
        try:
            return np.broadcast_shapes(*[x.shape for x in arrays])
        except ValueError:
            return None
    if kind in ("dtype", "special", "unchanged"):
        return template_shape
    return None


OP_NAMES = sorted(OPS)


@pytest.mark.parametrize("name", OP_NAMES)
def test_hostile_inputs_give_a_result_or_a_clear_error(name):
    op = OPS[name]
    inputs, attrs = _template(op)
    reference = _call(op, inputs, attrs)
    assert reference is not None, f"op {name!r} rejects its own template"

    @_SETTINGS
    @given(case=variations(op))
    def check(case):
        kind, arrays, case_attrs = case
        with np.errstate(all="ignore"):
            out = _call(op, arrays, case_attrs)
        if out is None:
            return
        want = _expected_shape(op, kind, arrays, case_attrs, reference.shape)
        if want is not None:
            assert out.shape == tuple(want), (
                f"op {name!r} ({kind}): output shape {out.shape}, expected {tuple(want)} for "
                f"inputs {[(x.shape, x.dtype.name) for x in arrays]}")

    check()
