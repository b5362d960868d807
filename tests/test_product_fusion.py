"""Matrix products fused with the relu beside them (minitf/ops/product_fusion_ops.py and the
rules in minitf/plan_fusion.py): the fused ops give the unfused pair's bits, on MKL's blocks
and on numpy's BLAS, and a traced Dense-relu step trains exactly as unfused and eager."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import mkl_blas, plan_fusion
from minitf.ops.registry import OPS, RAW
from minitf.testing import sparse_ce_step
from tests.test_plan_fusion import _Op, _op_names, train_fused_unfused_eager


@pytest.fixture(params=["openblas", "mkl"])
def blas(request, monkeypatch):
    """Each test once on numpy's BLAS and once on MKL (where it is installed)."""
    monkeypatch.setenv("MINITF_BLAS", request.param)
    mkl_blas.reset()
    if request.param == "mkl" and (B.get_backend() != "numpy" or not mkl_blas.active()):
        pytest.skip("MKL not installed (pip install 'minitf[mkl]'), or no thread pool")
    yield request.param
    monkeypatch.delenv("MINITF_BLAS")
    mkl_blas.reset()


def _operands(rng, m, k, n, dtype):
    a = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((k, n)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal((m, n)).astype(dtype)
    a[3, :] = np.nan            # a NaN row of the product: relu keeps it, the mask may zero it
    y[5, ::7] = np.nan          # NaN in the mask: not > 0
    y[6, ::5] = 0.0
    return a, w, b, y


# (128, 784) @ (784, 512) is cut along the inner dimension on MKL, (784, 128) @ (128, 512) by
# rows, (64, 300) @ (300, 700) by columns; (16, 8) @ (8, 8) stays on numpy everywhere.
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(128, 784, 512), (784, 128, 512), (64, 300, 700),
                                   (16, 8, 8)])
def test_fused_products_are_the_pair_bit_for_bit(blas, m, k, n, dtype):
    rng = np.random.default_rng(m + n)
    a, w, b, y = (B.from_numpy(x) for x in _operands(rng, m, k, n, dtype))

    def same_bits(got, want):
        got, want = B.to_numpy(got), B.to_numpy(want)
        np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))

    with np.errstate(all="ignore"):
        product = RAW.matmul(a, w)
        want_relu = RAW.bias_activation(product, b, activation="relu")
        want_grad = RAW.relu_grad(product, y)
        got_relu = RAW.matmul_bias_relu(a, w, b)
        got_grad = RAW.matmul_relu_grad(a, w, y)
        assert np.isnan(B.to_numpy(got_relu)[3]).all()
        assert (B.to_numpy(got_grad)[6, ::5] == 0).all()
        same_bits(got_relu, want_relu)
        same_bits(got_grad, want_grad)
        # Into a replay's buffer, as a traced step runs them.
        for name, extra, want in (("matmul_bias_relu", b, want_relu),
                                  ("matmul_relu_grad", y, want_grad)):
            out = B.from_numpy(np.full((m, n), 7.0, dtype))
            same_bits(OPS[name].out_forward(out, a, w, extra), want)


def test_product_rules_need_a_single_use_product():
    M, BA, RG, other = (_Op(n) for n in ("matmul", "bias_activation", "relu_grad", "add"))
    kinds = ["temp"] * 12
    dense = [("op", M, (1, 2), {}, 3), ("op", BA, (3, 4), {"activation": "relu"}, 5)]
    (fused,) = plan_fusion.fuse(dense, kinds, [("slot", 5)])
    assert fused[1].name == "matmul_bias_relu" and fused[2:] == ((1, 2, 4), {}, 5)
    for not_it in (dense + [("op", other, (3, 5), {}, 6)],                      # read again
                   [dense[0], ("op", BA, (3, 4), {"activation": "tanh"}, 5)],   # not relu
                   [("op", M, (1, 2), {"transpose_a": True}, 3), dense[1]]):    # attrs
        assert plan_fusion.fuse(not_it, kinds, []) == not_it
    assert plan_fusion.fuse(dense, kinds, [("slot", 3)]) == dense                # returned
    # Backward: relu_grad of an input gradient a few steps later, masked by a forward
    # output: the product's step does both; the steps between stay.
    backward = [("op", other, (1, 1), {}, 7),                 # y = slot 7, made before
                ("op", M, (8, 9), {}, 10),
                ("op", _Op("transpose"), (2,), {"perm": (1, 0)}, 11),
                ("op", RG, (10, 7), {}, 6)]
    folded = plan_fusion.fuse(backward, kinds, [])
    assert [s[1].name for s in folded] == ["add", "matmul_relu_grad", "transpose"]
    assert folded[1][2:] == ((8, 9, 7), {}, 6)
    late_mask = [backward[1], ("op", other, (1, 1), {}, 7), ("op", RG, (10, 7), {}, 6)]
    assert plan_fusion.fuse(late_mask, kinds, []) == late_mask    # y made after the product
    read = backward + [("op", other, (10, 6), {}, 5)]
    assert plan_fusion.fuse(read, kinds, []) == read


def _mlp_step(seed):
    tf.keras.utils.set_random_seed(seed)
    model = tf.keras.Sequential([tf.keras.layers.Dense(300, activation="relu"),
                                 tf.keras.layers.Dense(300, activation="relu"),
                                 tf.keras.layers.Dense(4)])
    model.build((None, 200))
    return model, sparse_ce_step(model, tf.keras.optimizers.Adam(1e-3))


def test_traced_dense_relu_step_fuses_its_products_and_trains_as_unfused_and_eager(
        blas, monkeypatch):
    """(64, 200) @ (200, 300) and (64, 300) @ (300, 300): on MKL where it runs (each thread
    finishing its blocks), else numpy's BLAS then the relu kernels; the same bits either way."""
    rng = np.random.default_rng(1)
    batch = (rng.standard_normal((64, 200)).astype(np.float32),
             rng.integers(0, 4, 64).astype(np.int32))
    batches = [batch] * 4         # the same batch: its loss falls
    traced = train_fused_unfused_eager(lambda: _mlp_step(3), batches, monkeypatch)
    fused, unfused = _op_names(traced["fused"]), _op_names(traced["unfused"])
    if B.get_backend() == "numpy":   # Dense's bias and relu are one op on numpy only
        assert fused.count("_matmul_bias_relu_out") == 2
        assert fused.count("_matmul_relu_grad_out") == 2
        assert "_bias_activation_out" not in fused
        assert not {"_matmul_bias_relu_out", "_matmul_relu_grad_out"} & set(unfused)


def test_epilogues_wait_for_native_nn_kernels(blas):
    """The epilogues are native_nn's bias_relu and relu_grad: where those kernels failed
    their start-up check, MKL declines a fused product and the op runs the pair instead."""
    if blas != "mkl":
        pytest.skip("MKL's epilogues only")
    rng = np.random.default_rng(4)
    a, w, b, y = _operands(rng, 128, 784, 512, np.float32)
    assert mkl_blas.product(a, w, bias=b) is not None
    saved = mkl_blas._state
    mkl_blas._state = saved[:2] + (False,)
    try:
        assert mkl_blas.product(a, w, bias=b) is None and mkl_blas.product(a, w, mask=y) is None
        assert mkl_blas.product(a, w) is not None
        with np.errstate(all="ignore"):
            want = RAW.bias_activation(RAW.matmul(a, w), b, activation="relu")
            np.testing.assert_array_equal(RAW.matmul_bias_relu(a, w, b), want)
    finally:
        mkl_blas._state = saved
