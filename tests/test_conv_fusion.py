"""A convolution's relu gradient read in place from a padded gradient, and fused with its bias
gradient's sums (minitf/native_nn.py's relu_grad_rows, minitf/ops/conv_fusion_ops.py and the
last rule of minitf/plan_fusion.py): the relu gradient's and sum_to's bits, and a traced
SAME-padded Conv-Conv step that trains exactly as unfused and eager."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import eager_fusion, native_nn, plan_fusion
from minitf.ops.array_ops import image_sums_key
from minitf.ops.derived import derived
from minitf.ops.registry import RAW
from minitf.testing import sparse_ce_step
from tests.test_plan_fusion import _Op, _op_names, image_sums_taken, train_fused_unfused_eager

native_only = pytest.mark.skipif(
    B.get_backend() != "numpy" or not native_nn.available(),
    reason="numpy's native kernels only (no C compiler, or another backend)")


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


def _awkward(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40]
    rng.shuffle(flat)
    return x


@native_only
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("view", ["interior", "rows", "contiguous", "one channel"])
def test_relu_grad_rows_is_relu_grad_and_image_sums_bit_for_bit(view, dtype):
    rng = np.random.default_rng(3)
    padded = _awkward(rng, (5, 12, 11, 4), dtype)
    g = {"interior": padded[:, 1:-1, 1:-1],        # a SAME layer's input gradient, cropped
         "rows": padded[:, 2:9],                     # whole rows: one run per image
         "contiguous": padded,
         "one channel": padded[:, 1:-1, 1:-1, 2:3]}[view]
    if view == "one channel":                       # its runs are single elements: declined
        assert native_nn.relu_grad_rows(g, np.ones(g.shape, dtype)) is None
        return
    y = _awkward(rng, g.shape, dtype)
    with np.errstate(all="ignore"):
        want = np.multiply(g, y > 0)
        want_sums = native_nn.image_sums(np.ascontiguousarray(want))
    sums = np.full((g.shape[0], g.shape[-1]), 7.0)
    got = native_nn.relu_grad_rows(g, y, sums=sums)
    assert got.flags.c_contiguous
    _same_bits(got, want)
    _same_bits(sums, want_sums)
    # In place on the view itself, as a replay may run it: the padding is left alone.
    before = padded.copy()
    assert native_nn.relu_grad_rows(g, y, out=g) is g
    _same_bits(g, want)
    border = np.ones(padded.shape, bool)
    border[(slice(None),) + tuple(slice(s.start, s.stop) for s in {
        "interior": (slice(1, -1), slice(1, -1)), "rows": (slice(2, 9), slice(None)),
        "contiguous": (slice(None), slice(None))}[view])] = False
    _same_bits(padded[border], before[border])


@native_only
def test_layouts_the_kernel_cannot_read_take_numpys_path():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 8, 10, 3)).astype(np.float32)
    y = rng.standard_normal((6, 8, 10, 3)).astype(np.float32)
    g = x.transpose(0, 2, 1, 3).copy().transpose(0, 2, 1, 3)   # runs not evenly spaced
    assert native_nn._runs(g) is None and native_nn.relu_grad_rows(g, y) is None
    _same_bits(RAW.relu_grad(g, y), np.multiply(g, y > 0))
    # Evenly spaced runs: read in place (every other pixel: runs of one pixel's channels).
    assert native_nn._runs(x[:, 1:-1, 1:-1]) == (6, 24, (240, 30))
    assert native_nn._runs(x[:, :, ::2]) == (40, 3, (240, 6))
    y5 = np.ascontiguousarray(y[:, :, :5])
    _same_bits(native_nn.relu_grad_rows(x[:, :, ::2], y5), np.multiply(x[:, :, ::2], y5 > 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_grad_sums_is_relu_grad_and_leaves_sum_tos_sums(dtype):
    rng = np.random.default_rng(5)
    padded = _awkward(rng, (9, 18, 18, 8), dtype)
    g = padded[:, 1:-1, 1:-1]            # read in place on numpy
    if B.get_backend() != "numpy":
        g = B.from_numpy(np.ascontiguousarray(g))
    y = B.from_numpy(_awkward(rng, (9, 16, 16, 8), dtype))
    with np.errstate(all="ignore"):
        want = RAW.relu_grad(g, y)
        got = RAW.relu_grad_sums(g, y)
        want_bias = B.to_numpy(RAW.sum_to(want, shape=(8,)))
    _same_bits(B.to_numpy(got), B.to_numpy(want))
    if B.get_backend() == "numpy" and native_nn.available():
        assert derived.get(got, image_sums_key(got)) is not None    # left for sum_to
    _same_bits(B.to_numpy(RAW.sum_to(got, shape=(8,))), want_bias)
    assert derived.get(got, image_sums_key(got)) is None            # and taken


def test_the_rule_takes_a_convolutions_relu_grad_and_leaves_a_dense_layers_to_its_product():
    M, RG, S, other = (_Op(n) for n in ("matmul", "relu_grad", "sum_to", "add"))
    kinds = ["temp"] * 12
    conv = [("op", RG, (1, 2), {}, 3), ("op", S, (3,), {"shape": (8,)}, 4)]
    fused, kept = plan_fusion.fuse(conv, kinds, [("slot", 4)])
    assert fused[1].name == "relu_grad_sums" and fused[2:] == ((1, 2), {}, 3)
    assert kept == conv[1]
    for not_it in ([conv[0], ("op", S, (3,), {"shape": (1, 8)}, 4)],       # not one axis
                   [conv[0], ("op", S, (5,), {"shape": (8,)}, 4)],         # another array
                   [conv[0], ("op", other, (3,), {}, 5), conv[1]]):        # not adjacent
        assert plan_fusion.fuse(not_it, kinds, []) == not_it
    # A Dense layer's relu_grad of a product: the product's step takes it, as before.
    dense = [("op", M, (5, 6), {}, 1), ("op", other, (7,), {}, 8)] + conv
    steps = plan_fusion.fuse(dense, kinds, [("slot", 4)])
    assert [s[1].name for s in steps] == ["matmul_relu_grad", "add", "sum_to"]


def _vgg_step(seed, channels):
    L = tf.keras.layers
    tf.random.set_seed(seed)
    model = tf.keras.Sequential([
        L.Conv2D(32, 3, padding="same", activation="relu"),
        L.Conv2D(16, 3, padding="same", activation="relu"), L.MaxPooling2D(2),
        L.Flatten(), L.Dense(3)])
    model.build((None, 12, 12, channels))
    return model, sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2))


@pytest.mark.parametrize("channels", [3, 8])
def test_traced_same_conv_conv_step_fuses_the_bias_sums_and_trains_as_unfused_and_eager(
        monkeypatch, winograd_everywhere, channels):
    """RGB input (the direct kernels) or eight channels (Winograd), SAME padding: the first
    layer's relu gradient reads the second layer's cropped input gradient and sums its bias
    gradient in the same pass; the same losses and weights, bit for bit."""
    rng = np.random.default_rng(6)
    batches = [(rng.standard_normal((9, 12, 12, channels)).astype(np.float32),
                rng.integers(0, 3, 9).astype(np.int32))] * 3     # the same batch: its loss falls
    traced = train_fused_unfused_eager(lambda: _vgg_step(0, channels), batches, monkeypatch)
    assert _op_names(traced["fused"]).count("_relu_grad_sums_forward") == 1
    assert "_relu_grad_sums_forward" not in _op_names(traced["unfused"])


@native_only
@pytest.mark.parametrize("eager_fused", [True, False])
def test_a_replay_takes_the_convolution_bias_sums_from_the_relu_gradient(eager_fused,
                                                                          monkeypatch):
    """So does an eager step (``bias_activation``'s relu rule), unless fusion is off."""
    monkeypatch.setattr(eager_fusion, "ENABLED", eager_fused)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((9, 12, 12, 3)).astype(np.float32)
    y = rng.integers(0, 3, 9).astype(np.int32)
    replayed, eager = image_sums_taken(_vgg_step(1, 3), x, y, monkeypatch)
    assert (9, 12, 12, 32) not in replayed      # the first layer's sums came with its mask
    assert ((9, 12, 12, 32) in eager) is not eager_fused   # else sum_to computes them
