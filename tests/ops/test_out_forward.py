"""Every op with an ``out_forward`` (the kernel a traced replay writes into planned buffers with)
computes what its ``forward`` computes: into a fresh array, and for element-wise ops also in
place, into each input of the output's shape and dtype."""
import numpy as np
import pytest

from minitf import backend as B
from minitf.ops.registry import OPS

WITH_OUT = sorted((op for op in OPS.values() if op.out_forward is not None),
                  key=lambda op: op.name)


def test_the_replay_hot_path_has_out_kernels():
    assert {"add", "subtract", "multiply", "matmul", "relu", "relu_grad"} <= \
        {op.name for op in WITH_OUT}


@pytest.mark.parametrize("op", WITH_OUT, ids=lambda op: op.name)
def test_out_forward_matches_forward(op):
    for inputs, attrs in op.samples():
        arrays = [B.xp.asarray(x) for x in inputs]
        expected = B.to_numpy(op.forward(*arrays, **attrs))
        out = B.xp.empty(expected.shape, dtype=expected.dtype)
        got = op.out_forward(out, *[a.copy() for a in arrays], **attrs)
        np.testing.assert_array_equal(B.to_numpy(got), expected)
        if not op.elementwise:
            continue
        for k, a in enumerate(arrays):
            if a.shape != expected.shape or a.dtype != expected.dtype:
                continue
            args = [x.copy() for x in arrays]
            got = op.out_forward(args[k], *args, **attrs)   # in place into input k
            assert got is args[k]
            np.testing.assert_array_equal(B.to_numpy(got), expected, err_msg=f"in place, input {k}")
