"""Fused steps of a traced plan (minitf/plan_fusion.py): the fused kernel gives the pair's values
bit for bit, a traced training step with the pattern is fused and trains exactly as the unfused
plan and as eager, and a pair whose intermediate is needed elsewhere is left alone."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import eager_fusion, native_nn, plan_fusion
from minitf.ops import conv_ops, norm_ops, pool_fusion_ops
from minitf.ops.registry import RAW
from minitf.testing import sparse_ce_step


def _awkward(rng, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype).round(0)     # ties and zeros of both signs
    flat = x.reshape(-1)
    flat[:4] = [np.nan, -0.0, np.inf, -np.inf]
    rng.shuffle(flat)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,ksize", [((3, 8, 6, 5), (2, 2)), ((2, 7, 9, 3), (2, 3))])
def test_fused_pool_relu_gradient_is_the_pair_bit_for_bit(shape, ksize, dtype):
    rng = np.random.default_rng(1)
    x = _awkward(rng, shape, dtype)
    g = _awkward(rng, (shape[0], shape[1] // ksize[0], shape[2] // ksize[1], shape[3]), dtype)
    xb, gb = B.from_numpy(x), B.from_numpy(g)       # numpy's kernel or another backend's path
    with np.errstate(invalid="ignore"):
        want = B.to_numpy(RAW.relu_grad(conv_ops._tiled_max_grad_forward(xb, gb, ksize), xb))
        got = B.to_numpy(pool_fusion_ops._tiled_max_relu_grad_forward(xb, gb, ksize))
    assert got.dtype == dtype and got.shape == x.shape
    bits = f"u{np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(got.view(bits), want.view(bits))   # NaN and -0.0 included
    # Against an independent formula on NaN-free values: g at each window's first maximum
    # (numpy's argmax), then zero where x <= 0.
    x, g = (np.nan_to_num(a, posinf=7.0, neginf=-7.0) for a in (x, g))
    fused = pool_fusion_ops._tiled_max_relu_grad_forward(B.from_numpy(x), B.from_numpy(g), ksize)
    got = B.to_numpy(fused)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, _first_max_scatter(x, g, ksize) * (x > 0))


def _first_max_scatter(x, g, ksize):
    (n, h, w, c), (kh, kw) = x.shape, ksize
    oh, ow = h // kh, w // kw
    windows = x[:, :oh * kh, :ow * kw].reshape(n, oh, kh, ow, kw, c).transpose(0, 1, 3, 2, 4, 5)
    first = windows.reshape(n, oh, ow, kh * kw, c).argmax(axis=3)
    out = np.zeros_like(x)
    for q in range(kh * kw):
        out[:, q // kw:oh * kh:kh, q % kw:ow * kw:kw] = np.where(first == q, g, 0)
    return out


def test_native_masked_scatter_matches_when_the_kernel_runs():
    if B.get_backend() != "numpy" or not native_nn.available():
        pytest.skip("numpy's native kernels only (no C compiler, or another backend)")
    x = np.array([[1.0, 5.0, 0.0, -3.0], [5.0, 2.0, -1.0, -2.0]], np.float32).reshape(1, 2, 4, 1)
    out, arg = native_nn.max_pool(x, (2, 2))
    g = np.array([10.0, 20.0], np.float32).reshape(1, 1, 2, 1)
    dx = native_nn.max_pool_grad(g, arg, x.shape, (2, 2), relu_of=x)
    # The first window's maximum (5 at offset 1) is positive; the second's (0) is not.
    np.testing.assert_array_equal(dx.reshape(2, 4), [[0, 10, 0, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scatter_sums_are_the_bias_gradient_kernels_bits(dtype):
    """The scatter's per-image channel sums equal ``image_sums`` of its result bit for bit
    (NaN included), and those are the float64 sums of each image; ``sum_to`` of a large NHWC
    gradient to its channels adds them up, close to the float64 sum."""
    if B.get_backend() != "numpy" or not native_nn.available():
        pytest.skip("numpy's native kernels only (no C compiler, or another backend)")
    rng = np.random.default_rng(4)
    x = _awkward(rng, (3, 8, 6, 5), dtype)
    g = _awkward(rng, (3, 4, 3, 5), dtype)
    _, arg = native_nn.max_pool(x, (2, 2))
    sums = np.empty((3, 5))
    with np.errstate(invalid="ignore"):
        dx = native_nn.max_pool_grad(g, arg, x.shape, (2, 2), relu_of=x, sums=sums)
    np.testing.assert_array_equal(sums, native_nn.image_sums(dx))
    finite = rng.standard_normal((4, 9, 7, 6)).astype(dtype)
    np.testing.assert_allclose(native_nn.image_sums(finite),
                               finite.astype(np.float64).sum(axis=(1, 2)), rtol=1e-12)
    big = rng.standard_normal((64, 16, 16, 8)).astype(dtype)
    assert native_nn.pays(big)
    from minitf.ops.array_ops import _sum_to_forward
    np.testing.assert_allclose(_sum_to_forward(big, (8,)),
                               big.astype(np.float64).sum(axis=(0, 1, 2)),
                               rtol=1e-6 if dtype == np.float32 else 1e-13, atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_relu_and_pool_are_the_pair_and_leave_the_maxima_for_the_pool_step(bias, dtype):
    rng = np.random.default_rng(3)
    x = _awkward(rng, (4, 11, 13, 128), dtype)      # large enough for the native kernel
    b = rng.standard_normal(128).astype(dtype)
    xb, bb = B.from_numpy(x), B.from_numpy(b)
    with np.errstate(invalid="ignore"):
        if bias:
            a = pool_fusion_ops._bias_relu_pooled_forward(xb, bb, (2, 3))
            want_a = RAW.bias_activation(xb, bb, activation="relu")
        else:
            a = pool_fusion_ops._relu_pooled_forward(xb, (2, 3))
            want_a = RAW.relu(xb)
        pooled = conv_ops._tiled_max_forward(a, (2, 3), cache=True)
        again = conv_ops._tiled_max_forward(a, (2, 3), cache=True)   # computed afresh
        want = conv_ops._tiled_max(B.from_numpy(B.to_numpy(want_a)), (2, 3))
    bits = f"u{np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(B.to_numpy(a).view(bits), B.to_numpy(want_a).view(bits))
    for got in (pooled, again):
        np.testing.assert_array_equal(B.to_numpy(got), B.to_numpy(want))
    if B.get_backend() == "numpy" and native_nn.available():
        assert again is not pooled      # the fused pass's maxima served the first pool only


def _cnn_step(seed):
    L = tf.keras.layers
    tf.random.set_seed(seed)
    model = tf.keras.Sequential([L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(2),
                                 L.Conv2D(4, 3), L.ReLU(), L.MaxPooling2D(2),
                                 L.Flatten(), L.Dense(3)])
    model.build((None, 20, 20, 2))
    return model, sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2))


def _op_names(function):
    (plan,) = function._plans.values()
    return [getattr(fn, "__name__", "") for _, fn, *_ in plan.steps]


def _op_attrs(function, name):
    (plan,) = function._plans.values()
    return [attrs for _, fn, _, attrs, *_ in plan.steps if getattr(fn, "__name__", "") == name]


def train_fused_unfused_eager(make_step, batches, monkeypatch):
    """A fresh ``make_step()`` (``(model, step)``) trained on ``batches`` three ways: traced
    with plan fusion on (``"fused"``) and off (``"unfused"``), and eager. Checks that all three
    give the same losses and weights, bit for bit, and that the loss falls; returns the traced
    functions by mode, for their plans."""
    results, traced = {}, {}
    for mode in ("fused", "unfused", "eager"):
        monkeypatch.setenv("MINITF_PLAN_FUSION", "0" if mode == "unfused" else "1")
        model, step = make_step()
        run = step if mode == "eager" else tf.function(step)
        results[mode] = ([float(run(x, y)) for x, y in batches],
                         [v.numpy() for v in model.variables])
        if mode != "eager":
            traced[mode] = run
    fused = results["fused"]
    for other in ("unfused", "eager"):
        assert fused[0] == results[other][0]
        for a, b in zip(fused[1], results[other][1]):
            np.testing.assert_array_equal(a, b)
    assert fused[0][-1] < fused[0][0]     # it trains
    return traced


def image_sums_taken(model_step, x, y, monkeypatch):
    """The shapes ``native_nn.image_sums`` summed in a traced step's second call, and then in
    an eager step: which bias gradients ``sum_to`` computed itself."""
    _, step = model_step
    run = tf.function(step)
    run(x, y)
    computed = []
    real = native_nn.image_sums
    monkeypatch.setattr(native_nn, "image_sums", lambda a: computed.append(a.shape) or real(a))
    run(x, y)
    replayed = list(computed)
    step(x, y)
    return replayed, computed[len(replayed):]


def test_traced_cnn_step_fuses_both_pooling_layers_and_trains_as_unfused_and_eager(monkeypatch):
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((9, 20, 20, 2)).astype(np.float32),
                rng.integers(0, 3, 9).astype(np.int32)) for _ in range(4)]
    traced = train_fused_unfused_eager(lambda: _cnn_step(0), batches, monkeypatch)
    fused, unfused = _op_names(traced["fused"]), _op_names(traced["unfused"])
    # Conv2D(activation="relu") and ReLU() before MaxPooling2D: both pairs fused, forward
    # and backward (the first layer's on the native kernels, the second's below their size).
    # (Conv2D's bias and relu are one bias_activation op on numpy, an add and a relu elsewhere.)
    assert (fused.count("_bias_relu_pooled_forward")
            + fused.count("_relu_pooled_forward")) == 2
    if B.get_backend() == "numpy":
        assert fused.count("_bias_relu_pooled_forward") == 1
    assert fused.count("_tiled_max_relu_grad_forward") == 2
    assert "_relu_grad_forward" not in fused and "_tiled_max_grad_forward" not in fused
    assert not {"_bias_relu_pooled_forward", "_relu_pooled_forward",
                "_tiled_max_relu_grad_forward"} & set(unfused)
    assert unfused.count("_tiled_max_grad_forward") == 2
    # Each scatter also sums the images' channels for the convolution's bias gradient after
    # it (taken from the cache where the kernels run: the first layer's): the same bits.
    scatters = _op_attrs(traced["fused"], "_tiled_max_relu_grad_forward")
    assert [attrs.get("sums") for attrs in scatters] == [True, True]


@pytest.mark.parametrize("eager_fused", [True, False])
def test_a_replay_takes_the_bias_sums_from_the_scatter(eager_fused, monkeypatch):
    """In a traced step the bias gradient after a fused scatter is not summed again; nor in an
    eager one (minitf.eager_fusion), unless that is turned off."""
    if B.get_backend() != "numpy" or not native_nn.available():
        pytest.skip("numpy's native kernels only (no C compiler, or another backend)")
    monkeypatch.setattr(eager_fusion, "ENABLED", eager_fused)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((9, 20, 20, 2)).astype(np.float32)
    y = rng.integers(0, 3, 9).astype(np.int32)
    replayed, eager = image_sums_taken(_cnn_step(1), x, y, monkeypatch)
    assert replayed == []            # the first layer's sums came with its scatter
    assert eager == ([] if eager_fused else [(9, 18, 18, 16)])   # else sum_to computes them


def test_pair_is_not_fused_when_the_scatter_is_returned():
    xv = np.random.default_rng(2).standard_normal((2, 4, 4, 3))
    x = tf.Variable(xv)

    @tf.function
    def grads():
        with tf.GradientTape() as tape:
            a = tf.nn.relu(x)
            y = tf.nn.max_pool2d(a, 2, 2, "VALID")
            loss = tf.reduce_sum(y * y)
        return tape.gradient(loss, [a, x])   # the scatter (d loss / d a) is an output

    da, dx = grads()
    names = _op_names(grads)
    assert "_tiled_max_relu_grad_forward" not in names
    assert "_tiled_max_grad_forward" in names and "_relu_grad_forward" in names
    # d loss / d a: 2 * max at each window's first maximum; d loss / d x: that where x > 0.
    a = np.maximum(xv, 0)
    want = _first_max_scatter(a, 2 * a.reshape(2, 2, 2, 2, 2, 3).max(axis=(2, 4)), (2, 2))
    np.testing.assert_allclose(da.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(dx.numpy(), want * (xv > 0), rtol=1e-12)


class _Op:
    def __init__(self, name):
        self.name = name


def test_fuse_rewrites_only_adjacent_single_use_temporaries():
    G, R, other = _Op("tiled_max_grad"), _Op("relu_grad"), _Op("add")
    kinds = ["temp"] * 8
    attrs = {"ksize": (2, 2)}
    pair = [("op", G, (1, 2), attrs, 3), ("op", R, (3, 1), {}, 4)]
    (step,) = plan_fusion.fuse(pair, kinds, [("slot", 4)])
    assert step[1].name == "tiled_max_relu_grad" and step[2:] == ((1, 2), attrs, 4)
    # The scatter read again later, returned, or not adjacent: left alone.
    assert plan_fusion.fuse(pair + [("op", other, (3, 4), {}, 5)], kinds, []) == \
        pair + [("op", other, (3, 4), {}, 5)]
    assert plan_fusion.fuse(pair, kinds, [("slot", 3)]) == pair
    apart = [pair[0], ("op", other, (2, 2), {}, 6), pair[1]]
    assert plan_fusion.fuse(apart, kinds, []) == apart
    # A relu before a caching pool: the relu also pools; the pool step stays (it reads it).
    pool = _Op("tiled_max_pool")
    forward = [("op", _Op("relu"), (1,), {}, 2), ("op", pool, (2,), attrs | {"cache": True}, 3)]
    relu, kept = plan_fusion.fuse(forward + [("op", other, (2, 3), {}, 4)], kinds, [])[:2]
    assert relu[1].name == "relu_pooled" and relu[2:] == ((1,), attrs, 2)
    assert kept == forward[1]
    uncached = [forward[0], ("op", pool, (2,), attrs | {"cache": False}, 3)]
    assert plan_fusion.fuse(uncached, kinds, []) == uncached
    sigmoid = [("op", _Op("bias_activation"), (1, 5), {"activation": "sigmoid"}, 2), forward[1]]
    assert plan_fusion.fuse(sigmoid, kinds, []) == sigmoid
    # relu_grad of the scatter against another array than the pooled input: not the pattern.
    masked_by_other = [pair[0], ("op", R, (3, 7), {}, 4)]
    assert plan_fusion.fuse(masked_by_other, kinds, []) == masked_by_other
    # The masked scatter, then its sum down to the channels (a bias gradient): the scatter
    # sums too; the sum step stays, and the scatter may be read elsewhere.
    S = _Op("sum_to")
    bias = [("op", _Op("tiled_max_relu_grad"), (1, 2), attrs, 3),
            ("op", S, (3,), {"shape": (5,)}, 4), ("op", other, (3, 1), {}, 6)]
    summed = plan_fusion.fuse(bias, kinds, [])
    assert summed[0][2:] == ((1, 2), attrs | {"sums": True}, 3) and summed[1:] == bias[1:]
    for not_it in ([bias[0], ("op", S, (1,), {"shape": (5,)}, 4)],       # sums another array
                   [bias[0], ("op", S, (3,), {"shape": (1, 5)}, 4)]):    # not to one axis
        assert plan_fusion.fuse(not_it, kinds, []) == not_it


def test_dense_relu_reads_its_bias_variable_without_a_copy_in_a_traced_step():
    """``Dense(activation="relu")``'s fused bias+relu op takes the bias Variable itself, as
    matmul takes the kernel: a traced step has no ``identity`` (a copy of the bias) in it, and
    trains as the eager step does."""
    L = tf.keras.layers
    rng = np.random.default_rng(3)
    batches = [(rng.standard_normal((64, 300)).astype(np.float32),
                rng.integers(0, 4, 64).astype(np.int32)) for _ in range(3)]

    def train(traced):
        tf.random.set_seed(5)
        model = tf.keras.Sequential([L.Dense(256, activation="relu"), L.Dense(4)])
        model.build((None, 300))
        step = sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2))
        run = tf.function(step) if traced else step
        losses = [float(run(x, y)) for x, y in batches]
        names = list(next(iter(run._plans.values())).step_names) if traced else None
        return losses, [v.numpy() for v in model.variables], names

    traced, eager = train(True), train(False)
    assert "identity" not in traced[2]
    assert traced[2].count("matmul") >= 2
    assert traced[0] == eager[0] and traced[0][-1] < traced[0][0]
    for a, b in zip(traced[1], eager[1]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cache", [False, True])
def test_fused_batch_norm_relu_pool_is_the_triple_bit_for_bit(dtype, cache):
    """relu(batch_norm_train(x)) as one op: the same bits as the two ops (signed zeros
    included), the maxima left for the pool step, and (with ``cache``) the statistics left for
    the batch norm's gradient ops, as the batch norm itself leaves them."""
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((6, 10, 12, 48)) * 3).round(0).astype(dtype)   # ties, zeros
    gamma = rng.uniform(0.5, 2.0, 48).astype(dtype)
    beta = rng.standard_normal(48).astype(dtype)
    beta[:8] = 0.0                           # normalized zeros: relu sees +0.0 and -0.0
    xb, gb, bb = B.from_numpy(x), B.from_numpy(gamma), B.from_numpy(beta)
    a = pool_fusion_ops._batch_norm_relu_pooled_forward(xb, gb, bb, (2, 3), cache=cache)
    want_a = RAW.relu(RAW.batch_norm_train(xb, gb, bb, cache=False))
    bits = f"u{np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(B.to_numpy(a).view(bits), B.to_numpy(want_a).view(bits))
    pooled = conv_ops._tiled_max_forward(a, (2, 3), cache=True)
    want = conv_ops._tiled_max(B.from_numpy(B.to_numpy(want_a)), (2, 3))
    np.testing.assert_array_equal(B.to_numpy(pooled), B.to_numpy(want))
    # Against an independent float64 formula (the batch's biased variance, eps 1e-3).
    x64 = x.astype(np.float64)
    xhat = (x64 - x64.mean(axis=(0, 1, 2))) / np.sqrt(x64.var(axis=(0, 1, 2)) + 1e-3)
    np.testing.assert_allclose(B.to_numpy(a), np.maximum(xhat * gamma + beta, 0),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
    if B.get_backend() == "numpy" and native_nn.available():
        moments = RAW.batch_norm_moments(xb)
        assert (norm_ops._derived.get(xb, norm_ops._key(xb, 1e-3)) is not None) == cache
        np.testing.assert_allclose(B.to_numpy(moments), [x64.mean(axis=(0, 1, 2)),
                                                         x64.var(axis=(0, 1, 2))], rtol=1e-6)


def _bn_step(seed):
    L = tf.keras.layers
    tf.random.set_seed(seed)
    model = tf.keras.Sequential([L.Conv2D(8, 3, padding="same", use_bias=False),
                                 L.BatchNormalization(), L.ReLU(), L.MaxPooling2D(2),
                                 L.Conv2D(4, 3, use_bias=False), L.BatchNormalization(),
                                 L.Activation("relu"), L.MaxPooling2D(2),
                                 L.Flatten(), L.Dense(3)])
    model.build((None, 16, 16, 2))
    return model, sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2))


def test_traced_conv_bn_relu_pool_step_folds_the_batch_norms_and_trains_as_unfused_and_eager(
        monkeypatch):
    """Conv2D, BatchNormalization, ReLU, MaxPooling2D (``models/cnn.py``'s block): in a traced
    step each batch norm also does the relu and the pooling (the first on the native kernels:
    16 images of 16x16x8), with the same losses, weights and moving statistics, bit for bit,
    as the unfused plan and as eager."""
    rng = np.random.default_rng(9)
    batches = [(rng.standard_normal((16, 16, 16, 2)).astype(np.float32),
                rng.integers(0, 3, 16).astype(np.int32)) for _ in range(4)]
    traced = train_fused_unfused_eager(lambda: _bn_step(0), batches, monkeypatch)
    names, unfused = _op_names(traced["fused"]), _op_names(traced["unfused"])
    assert names.count("_batch_norm_relu_pooled_forward") == 2
    assert "_train_forward" not in names and "_relu_pooled_forward" not in names
    assert unfused.count("_train_forward") == 2
    # Backward: each masked scatter also adds up its batch norm's parameter sums.
    assert names.count("_tiled_max_relu_grad_bn_forward") == 2
    assert "_tiled_max_relu_grad_forward" not in names
    assert "_batch_norm_relu_pooled_forward" not in unfused


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("images", [8, 9])
def test_scatter_adds_the_batch_norm_sums_bit_for_bit(dtype, images):
    """The masked scatter with the batch norm's sums: the scatter's bits, and the sums
    ``batch_norm_reduce_grads`` then takes are the bits it computes itself; where its split over
    threads would fall inside an image (9 images on two threads) the sums are left to it."""
    rng = np.random.default_rng(10)
    shape = (images, 40, 30, 128)                         # 2 x 128k elements and more
    bn_x = (rng.standard_normal(shape) * 2).round(1).astype(dtype)
    a = np.maximum(bn_x - 0.5, 0).astype(dtype)             # zeros: the relu's mask
    g = rng.standard_normal((images, 20, 15, 128)).astype(dtype)
    xb, gb, bnb = B.from_numpy(a), B.from_numpy(g), B.from_numpy(bn_x)
    RAW.batch_norm_train(bnb, B.from_numpy(np.ones(128, dtype)),
                         B.from_numpy(np.zeros(128, dtype)), cache=True)
    out = pool_fusion_ops._tiled_max_relu_grad_bn_forward(xb, gb, bnb, (2, 2))
    want = pool_fusion_ops._tiled_max_relu_grad_forward(xb, gb, (2, 2))
    bits = f"u{np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(B.to_numpy(out).view(bits), B.to_numpy(want).view(bits))
    left = norm_ops._derived.get(out, norm_ops.reduce_grads_key(out, 1e-3)) is not None
    sums = B.to_numpy(norm_ops._reduce_grads_forward(bnb, out))          # takes them
    fresh = B.to_numpy(norm_ops._reduce_grads_forward(bnb, B.from_numpy(B.to_numpy(out))))
    np.testing.assert_array_equal(sums.view(bits), fresh.view(bits))
    dy = B.to_numpy(want).astype(np.float64).reshape(-1, 128)
    xhat = (bn_x.reshape(-1, 128) - bn_x.mean(axis=(0, 1, 2), dtype=np.float64)) / np.sqrt(
        bn_x.var(axis=(0, 1, 2), dtype=np.float64) + 1e-3)
    np.testing.assert_allclose(sums, [dy.sum(0), (dy * xhat).sum(0)],
                               rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-3)
    if B.get_backend() == "numpy" and native_nn.available():
        from minitf import kernel_threads
        assert left == (images % 2 == 0 or kernel_threads.count() == 1)


def test_fold_batch_norm_needs_its_output_read_by_the_relu_alone():
    N, R, M, P = (_Op(n) for n in ("batch_norm_train", "relu_pooled", "batch_norm_moments",
                                   "tiled_max_pool"))
    kinds = ["temp"] * 9
    bn_attrs, ksize = {"epsilon": 1e-3, "cache": True}, {"ksize": (2, 2)}
    steps = [("op", N, (1, 2, 3), bn_attrs, 4), ("op", M, (1,), {}, 5),
             ("op", R, (4,), ksize, 6), ("op", P, (6,), ksize | {"cache": True}, 7)]
    folded = plan_fusion.fuse(steps, kinds, [])
    assert folded[0][1].name == "batch_norm_relu_pooled"
    assert folded[0][2:] == ((1, 2, 3), bn_attrs | ksize, 6)
    assert folded[1:] == [steps[1], steps[3]]
    # The batch norm's output read elsewhere too, or returned: left alone.
    read = steps + [("op", _Op("add"), (4, 7), {}, 8)]
    assert plan_fusion.fuse(read, kinds, []) == read
    assert plan_fusion.fuse(steps, kinds, [("slot", 4)]) == steps
    # Backward: the masked scatter, then the batch norm's sums of it: the scatter adds them.
    S, Q = _Op("tiled_max_relu_grad"), _Op("batch_norm_reduce_grads")
    backward = [("op", S, (6, 7), ksize, 8), ("op", Q, (1, 8), {"epsilon": 0.01}, 5)]
    fused = plan_fusion.fuse(backward, kinds, [])
    assert fused[0][1].name == "tiled_max_relu_grad_bn"
    assert fused[0][2:] == ((6, 7, 1), ksize | {"epsilon": 0.01}, 8) and fused[1] == backward[1]
    other_sums = [backward[0], ("op", Q, (1, 6), {"epsilon": 0.01}, 5)]
    assert plan_fusion.fuse(other_sums, kinds, []) == other_sums
