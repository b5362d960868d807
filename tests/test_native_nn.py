"""Native CNN kernels (minitf.native_nn) against the numpy paths they replace."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import native, native_nn
from minitf.ops import conv_ops, norm_ops
from minitf.testing import sparse_ce_step

pytestmark = pytest.mark.skipif(
    B.get_backend() != "numpy" or native.kernels() is None or native.kernels().nn is None,
    reason="numpy's native kernels: another backend, no C compiler or MINITF_NATIVE=0")


@pytest.fixture
def numpy_path(monkeypatch):
    """Every native_nn kernel declines: the ops take their numpy path."""
    monkeypatch.setattr(native_nn, "_fn", lambda name, *arrays: None)


def _awkward(rng, shape, dtype=np.float32):
    """Integers (many ties) with NaN, infinities and signed zeros scattered in."""
    x = rng.integers(-3, 4, shape).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 4, replace=False)] = [np.nan, np.inf, -np.inf, -0.0]
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,ksize", [((3, 8, 6, 5), (2, 2)), ((2, 7, 9, 3), (2, 3)),
                                         ((1, 5, 5, 16), (3, 3))])
def test_max_pool_and_its_gradient_match_the_numpy_path(shape, ksize, dtype):
    rng = np.random.default_rng(0)
    x = _awkward(rng, shape, dtype)
    out_shape = (shape[0], shape[1] // ksize[0], shape[2] // ksize[1], shape[3])
    g = rng.standard_normal(out_shape).astype(dtype)
    g.reshape(-1)[0] = np.nan                          # a NaN gradient spreads over its window
    with np.errstate(invalid="ignore"):
        out, arg = native_nn.max_pool(x, ksize)
        np.testing.assert_array_equal(out, conv_ops._tiled_max(x, ksize))
        got = native_nn.max_pool_grad(g, arg, x.shape, ksize)
        want = np.zeros_like(x)
        for view, mask in zip(conv_ops._windows(want, ksize),
                              conv_ops._first_max_selectors(x, ksize)):
            np.multiply(g, mask, out=view)
    np.testing.assert_array_equal(got, want)


def test_max_pool_gradient_goes_to_the_first_maximum_and_reads_strided_gradients():
    x = np.array([[1.0, 5.0, 5.0, 0.0], [5.0, 2.0, -1.0, 7.0]], np.float32).reshape(1, 2, 4, 1)
    out, arg = native_nn.max_pool(x, (2, 2))
    np.testing.assert_array_equal(out.ravel(), [5.0, 7.0])
    np.testing.assert_array_equal(arg.ravel(), [1, 3])         # row-major offsets in the window
    g = np.array([[10.0, 99.0, 20.0, 99.0]], np.float32)[:, ::2].reshape(1, 1, 2, 1)
    dx = native_nn.max_pool_grad(g, arg, x.shape, (2, 2))
    np.testing.assert_array_equal(dx.reshape(2, 4), [[0, 10, 0, 0], [0, 0, 0, 20]])


@pytest.mark.parametrize("ksize,strides,dilations", [((3, 3), (1, 1), (1, 1)),
                                                     ((2, 3), (2, 1), (1, 2)),
                                                     ((1, 2), (3, 2), (2, 1))])
def test_patches_match_the_numpy_path(ksize, strides, dilations, numpy_path):
    x = np.random.default_rng(1).standard_normal((2, 9, 8, 6))
    assert native_nn.patches(x, ksize, strides, dilations) is None      # numpy's path below
    want = conv_ops._patches_forward(x, ksize, strides, dilations)
    np.testing.assert_array_equal(_native_patches(x, ksize, strides, dilations), want)


def _native_patches(x, ksize, strides, dilations):
    fn = native.kernels().nn.fns["patches"][x.dtype.name]
    (kh, kw), (sh, sw), (dh, dw) = ksize, strides, dilations
    n, h, w, c = x.shape
    oh, ow = (h - (kh - 1) * dh - 1) // sh + 1, (w - (kw - 1) * dw - 1) // sw + 1
    out = np.empty((n, oh, ow, kh, kw, c), x.dtype)
    fn(n, h, w, c, kh, kw, sh, sw, dh, dw, 0, 0, 0, 0, x.ctypes.data, out.ctypes.data)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ksize,strides,dilations,pads", [
    ((3, 3), (2, 2), (1, 1), ((0, 1), (0, 1))),       # TF's SAME, stride 2, even image
    ((3, 3), (1, 1), (1, 1), ((1, 1), (1, 1))),
    ((5, 5), (1, 1), (1, 1), ((2, 2), (2, 2))),       # windows wider than some images' rows
    ((3, 2), (1, 2), (2, 1), ((2, 1), (1, 3))),
    ((1, 1), (2, 3), (1, 1), ((0, 0), (4, 0))),       # whole windows on the padding
    ((2, 3), (1, 1), (1, 1), ((1, 0), (4, 5)))])      # ... and rows of windows cut at both ends
def test_patches_of_a_padded_image_and_col2im_back_need_no_padded_copy(dtype, ksize, strides,
                                                                       dilations, pads):
    """Against numpy: the windows of the zero-padded copy, and col2im's adjoint (the windows
    added into the padded image, then cropped)."""
    x = np.random.default_rng(4).standard_normal((3, 6, 4, 5)).astype(dtype)
    padded = np.pad(x, ((0, 0),) + pads + ((0, 0),))
    want = conv_ops._patches_forward(padded, ksize, strides, dilations)
    got = native_nn.patches(x, ksize, strides, dilations, pads)
    np.testing.assert_array_equal(got, want)
    cols = np.random.default_rng(5).standard_normal(want.shape).astype(dtype)
    (top, _), (left, _) = pads
    back = conv_ops._col2im_forward(cols, padded.shape[1:3], ksize, strides,
                                    dilations)[:, top:top + 6, left:left + 4]
    np.testing.assert_allclose(native_nn.col2im(cols, (6, 4), ksize, strides, dilations,
                                                pads=pads), back, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("padding", [[[0, 0], [0, 0], [1, 0], [0, 0]], "VALID"])
def test_explicit_padding_too_small_for_the_filter_is_an_error_naming_the_padded_size(padding):
    """The native padded windows keep im2col's check: a 3x3 filter on a 2x2 image padded to
    2x3 has no window, the same error as the unpadded path (not an empty result)."""
    x = tf.ones((1, 2, 2, 4))
    w = tf.ones((3, 3, 4, 2))
    size = "2x3" if padding != "VALID" else "2x2"
    with pytest.raises(ValueError, match=f"a 3x3 window .* does not fit in {size}"):
        tf.nn.conv2d(x, w, 1, padding)


def test_a_traced_im2col_same_convolution_has_no_pad_op_and_matches_a_padded_copy():
    """Conv2D(padding="same") on im2col (stride 2; 8x8 images, which Winograd leaves to
    im2col) against ZeroPadding2D + a VALID Conv2D with the same weights: the same losses and
    weights after three steps, and no pad op in the traced step."""
    from tests.test_plan_fusion import _op_names
    L = tf.keras.layers

    def build(same):
        tf.random.set_seed(4)
        convs = ([L.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
                  L.Conv2D(8, 3, padding="same", activation="relu")] if same else
                 [L.ZeroPadding2D(((0, 1), (0, 1))), L.Conv2D(16, 3, strides=2,
                                                            activation="relu"),
                  L.ZeroPadding2D(1), L.Conv2D(8, 3, activation="relu")])
        model = tf.keras.Sequential(convs + [L.Flatten(), L.Dense(3)])
        model.build((None, 16, 16, 8))
        return model

    same, padded = build(True), build(False)
    for a, b in zip(padded.variables, same.variables):
        b.assign(a)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((6, 16, 16, 8)).astype(np.float32)
    y = rng.integers(0, 3, 6).astype(np.int32)
    runs = {}
    for name, model in (("same", same), ("padded", padded)):
        step = tf.function(sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2)))
        runs[name] = [float(step(x, y)) for _ in range(3)], step
    np.testing.assert_allclose(runs["same"][0], runs["padded"][0], rtol=1e-6)
    assert runs["same"][0][-1] < runs["same"][0][0]
    for a, b in zip(same.variables, padded.variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    assert "_pad_forward" not in _op_names(runs["same"][1])
    assert _op_names(runs["padded"][1]).count("_pad_forward") == 2


@pytest.mark.parametrize("channels", [1, 2, 3])
def test_patches_of_few_channel_images_are_each_window_in_order(channels):
    x = np.random.default_rng(3).standard_normal((2, 7, 6, channels)).astype(np.float32)
    got = native_nn.patches(x, (5, 3), (1, 2), (1, 1))
    assert got is not None and got.shape == (2, 3, 2, 5, 3, channels)
    for b, y, xo in np.ndindex(2, 3, 2):
        np.testing.assert_array_equal(got[b, y, xo], x[b, y:y + 5, 2 * xo:2 * xo + 3])


def test_patches_leave_other_arrays_to_numpy():
    assert native_nn.patches(np.zeros((1, 4, 4, 8), np.float16), (2, 2), (1, 1), (1, 1)) is None
    assert native_nn.patches(np.zeros((4, 4, 8), np.float32), (2, 2), (1, 1), (1, 1)) is None
    x = np.arange(2 * 5 * 5 * 4, dtype=np.float32).reshape(2, 5, 5, 4)
    np.testing.assert_array_equal(native_nn.patches(x, (3, 2), (1, 2), (1, 1)),
                                  _native_patches(x, (3, 2), (1, 2), (1, 1)))


def test_bias_relu_and_relu_grad_match_numpy_in_and_out_of_place():
    rng = np.random.default_rng(2)
    x, g = _awkward(rng, (4, 3, 5)), _awkward(rng, (4, 3, 5))
    b = rng.standard_normal(5).astype(np.float32)
    with np.errstate(invalid="ignore"):
        want_y = np.maximum(x + b, 0)
        want_g = g * (x > 0)
    np.testing.assert_array_equal(native_nn.bias_relu(x, b), want_y)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(native_nn.relu(x), np.maximum(x, 0))
    grad = native_nn.relu_grad(g, x)
    np.testing.assert_array_equal(grad.view(np.uint32), want_g.view(np.uint32))   # -0.0 too
    inplace = g.copy()
    assert native_nn.relu_grad(inplace, x, out=inplace) is inplace
    np.testing.assert_array_equal(inplace.view(np.uint32), want_g.view(np.uint32))
    assert native_nn.bias_relu(x, b, out=x) is x
    np.testing.assert_array_equal(x, want_y)
    assert native_nn.bias_relu(x, b[:3]) is None                   # not one bias per channel
    assert native_nn.relu_grad(g[:2], x) is None                   # shapes differ
    assert native_nn.bias_relu(x, b, out=np.empty((4, 3, 5), np.float64)) is None


def _batch_norm_step(x, gamma, beta, seed_g):
    """Output, beta/gamma gradients and input gradient of batch_norm_train."""
    xt, gt, bt = tf.constant(x), tf.Variable(gamma), tf.Variable(beta)
    dy = tf.constant(np.random.default_rng(seed_g).standard_normal(x.shape).astype(x.dtype))
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = norm_ops.batch_norm_train(xt, gt, bt, epsilon=1e-3, cache=True)
        loss = tf.reduce_sum(y * dy)
    grads = tape.gradient(loss, [xt, gt, bt])
    moments = norm_ops.batch_norm_moments(xt, epsilon=1e-3)
    return [y.numpy(), moments.numpy()] + [g.numpy() for g in grads]


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_batch_norm_kernels_match_the_numpy_path(dtype, tol, monkeypatch):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((6, 5, 4, 7)) * 3 + 2).astype(dtype)
    gamma = rng.uniform(0.5, 2, 7).astype(dtype)
    beta = rng.standard_normal(7).astype(dtype)
    native_values = _batch_norm_step(x, gamma, beta, 4)
    monkeypatch.setattr(native_nn, "_fn", lambda name, *arrays: None)
    numpy_values = _batch_norm_step(x, gamma, beta, 4)
    for got, want in zip(native_values, numpy_values):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_pass_moments_keep_their_accuracy_far_from_zero_and_their_special_values(dtype):
    """The moments' one pass (sums of x - shift and its squares, the shift each channel's first
    value) against float64 two-pass numpy: a mean 10^4 standard deviations from zero loses
    nothing (raw sums of squares would keep ~1e-8 of the variance in float64); infinities and
    NaN give numpy's NaN/inf results; no rows give NaN."""
    if B.get_backend() != "numpy" or not native_nn.available():
        pytest.skip("numpy's native kernels only (no C compiler, or another backend)")
    rng = np.random.default_rng(12)
    x = (1e4 + rng.standard_normal((70, 9, 3, 5)) * [1.0, 1e-2, 3.0, 0.5, 1.0]).astype(dtype)
    x[..., 4] -= 2e4                                            # a negative mean too
    mean, var = native_nn.bn_moments(x)
    x64 = x.astype(np.float64).reshape(-1, 5)
    np.testing.assert_allclose(mean, x64.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(var, x64.var(axis=0), rtol=1e-9)
    with np.errstate(invalid="ignore"):
        special = x.copy()
        special.reshape(-1, 5)[[0, 7, 11], [0, 1, 2]] = [np.inf, -np.inf, np.nan]
        got = native_nn.bn_moments(special)
        want = special.astype(np.float64).reshape(-1, 5)
        want = (want.mean(axis=0), want.var(axis=0))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9)            # NaN and inf where numpy's
    assert all(np.isnan(a).all() for a in native_nn.bn_moments(x[:0]))


def test_batch_norm_gradient_matches_central_differences():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 5))
    gamma, beta = rng.uniform(0.5, 2, 5), rng.standard_normal(5)
    dy = rng.standard_normal(x.shape)

    def loss(xv):
        return float(np.sum(norm_ops.batch_norm_train(tf.constant(xv), tf.constant(gamma),
                                                      tf.constant(beta)).numpy() * dy))

    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        out = tf.reduce_sum(norm_ops.batch_norm_train(xt, tf.constant(gamma),
                                                      tf.constant(beta)) * dy)
    got = tape.gradient(out, xt).numpy()
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = 1e-6
        numeric[i] = (loss(x + step) - loss(x - step)) / 2e-6
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-7)


def test_a_conv_bn_relu_pool_step_trains_the_same_with_and_without_kernels(monkeypatch):
    def run():
        tf.random.set_seed(0)
        layers = tf.keras.layers
        model = tf.keras.Sequential([
            layers.Conv2D(8, 3, activation="relu"), layers.MaxPooling2D(2),
            layers.Conv2D(6, 3, padding="same", use_bias=False), layers.BatchNormalization(),
            layers.ReLU(), layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(3)])
        model.build((None, 12, 12, 2))
        step = tf.function(sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2)))
        rng = np.random.default_rng(6)
        x = tf.constant(rng.standard_normal((32, 12, 12, 2)).astype(np.float32))   # 16k+
        y = tf.constant(rng.integers(0, 3, 32).astype(np.int32))
        losses = [float(step(x, y)) for _ in range(5)]
        return losses, [v.numpy() for v in model.variables]

    native_losses, native_vars = run()
    monkeypatch.setattr(native_nn, "_fn", lambda name, *arrays: None)
    monkeypatch.setattr(native_nn, "available", lambda: False)
    numpy_losses, numpy_vars = run()
    assert native_losses[-1] < native_losses[0]
    np.testing.assert_allclose(native_losses, numpy_losses, rtol=1e-4)
    for a, b in zip(native_vars, numpy_vars):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("ksize,strides,dilations", [((3, 3), (1, 1), (1, 1)),
                                                     ((2, 3), (2, 1), (1, 2)),
                                                     ((3, 2), (2, 3), (2, 1))])
def test_col2im_and_the_conv_input_gradient_match_the_numpy_path(ksize, strides, dilations,
                                                                  monkeypatch):
    rng = np.random.default_rng(7)
    size = (9, 10)
    oh = (size[0] - (ksize[0] - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (size[1] - (ksize[1] - 1) * dilations[1] - 1) // strides[1] + 1
    cols = rng.standard_normal((2, oh, ow) + ksize + (5,))
    g = rng.standard_normal((2, oh, ow, 4))
    w = rng.standard_normal(ksize + (5, 4))
    got = [native_nn.col2im(cols, size, ksize, strides, dilations),
           conv_ops._conv_input_grad_forward(g, w, size, strides, dilations)]
    monkeypatch.setattr(native_nn, "_fn", lambda name, *arrays: None)
    monkeypatch.setattr(native_nn, "available", lambda: False)
    want = [conv_ops._col2im_forward(cols, size, ksize, strides, dilations),
            conv_ops._conv_input_grad_forward(g, w, size, strides, dilations)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)


def _direct_conv(x, w):
    """Valid 3x3 cross-correlation by kernel offsets, in float64."""
    n, h, wd, _ = x.shape
    out = np.zeros((n, h - 2, wd - 2, w.shape[3]))
    for i in range(3):
        for j in range(3):
            out += x[:, i:i + h - 2, j:j + wd - 2].astype(np.float64) @ w[i, j]
    return out


@pytest.mark.parametrize("shape,filters", [((3, 9, 8, 8), 8), ((2, 6, 11, 12), 17),
                                           ((1, 3, 3, 40), 9), ((2, 11, 10, 40), 9),
                                           ((5, 16, 16, 32), 64)])
@pytest.mark.parametrize("block_bytes", [4096, 1 << 20])
@pytest.mark.parametrize("max_tile", [2, 4])
def test_winograd_convolution_and_gradients_match_a_direct_convolution(shape, filters,
                                                                       block_bytes, max_tile,
                                                                       monkeypatch):
    from minitf import winograd
    monkeypatch.setattr(winograd, "BLOCK_BYTES", block_bytes)   # one block, or many
    monkeypatch.setattr(winograd, "MAX_TILE", max_tile)         # F(2x2, 3x3) only, or both
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((3, 3, shape[3], filters))
    g = rng.standard_normal((shape[0], shape[1] - 2, shape[2] - 2, filters))
    assert winograd.applies(x.shape, w.shape, (1, 1), (1, 1), x.dtype)
    # The adjoints by their definition: <conv(x), g> = <x, input_grad(g)> = <w, filter_grad>.
    y = _direct_conv(x, w)
    dx = np.zeros_like(x)
    dw = np.zeros_like(w)
    for i in range(3):
        for j in range(3):
            window = x[:, i:i + shape[1] - 2, j:j + shape[2] - 2]
            dx[:, i:i + shape[1] - 2, j:j + shape[2] - 2] += g @ w[i, j].T
            dw[i, j] = np.einsum("nhwc,nhwo->co", window, g)
    np.testing.assert_allclose(winograd.conv(x, w), y, rtol=1e-11, atol=1e-11)
    v = winograd.transform_input(x)
    np.testing.assert_allclose(winograd.conv(x, w, v), y, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(winograd.input_grad(g, w, shape[1:3]), dx, rtol=1e-11,
                               atol=1e-11)
    np.testing.assert_allclose(winograd.filter_grad(x, g), dw, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(winograd.filter_grad(x, g, v), dw, rtol=1e-11, atol=1e-11)
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    np.testing.assert_allclose(winograd.conv(x32, w32), _direct_conv(x32, w32),
                               rtol=2e-5, atol=2e-5 * np.abs(y).max())


def test_winograd_picks_the_tile_size_with_fewer_transformed_values(monkeypatch):
    from minitf import winograd
    assert winograd.tile_size(11, 11) == 4      # 3x3 tiles of 36 planes: 324 < 36 x 16 = 576
    assert winograd.tile_size(14, 14) == 4      # 16 x 36 = 576 < 49 x 16 = 784
    assert winograd.tile_size(4, 9) == 4        # 3 x 36 = 108 < 10 x 16 = 160
    assert winograd.tile_size(5, 5) == 2        # 4 x 36 = 144 = 9 x 16: a tie keeps 2
    assert winograd.tile_size(1, 1) == 2
    monkeypatch.setattr(winograd, "MAX_TILE", 2)
    assert winograd.tile_size(11, 11) == 2


def test_winograd_blocks_bound_their_bytes_and_each_plane_product():
    """A block's transforms stay within BLOCK_BYTES; each plane's product within OpenBLAS's
    small-matrix size (larger ones from two threads stalled now and then) unless that would
    take the block below MIN_BLOCK_BYTES."""
    from minitf import winograd
    if winograd._kernels() is None:
        pytest.skip("no native kernels")

    def block(c, o):
        return winograd._Tiles(8, 30, 30, max(c, o), np.float32, product=(c, o)).block

    tile = 36 * 4     # bytes per tile and channel: 36 planes of float32
    assert block(32, 64) == winograd.BLOCK_BYTES // (tile * 64)        # 455 tiles: the bytes
    assert block(32, 64) * 32 * 64 <= winograd.MAX_PLANE_WORK
    assert block(64, 64) == winograd.MAX_PLANE_WORK // (64 * 64)       # 244: the product
    assert block(256, 256) == winograd.MIN_BLOCK_BYTES // (tile * 256)  # 28: the least bytes
    assert block(1, 1) == winograd.BLOCK_BYTES // tile
    assert winograd._Tiles(8, 30, 30, 9000, np.float32, product=(9000, 9000)).block == 1


def test_winograd_takes_only_what_it_was_built_for():
    from minitf import winograd
    ok = ((2, 8, 8, 16), (3, 3, 16, 16), (1, 1), (1, 1), np.float32)
    assert winograd.applies(*ok)
    for index, value in [(1, (3, 3, 4, 16)), (1, (3, 3, 16, 4)), (1, (5, 5, 16, 16)),
                         (2, (2, 1)), (3, (2, 2)), (4, np.float16), (0, (2, 2, 2, 16))]:
        case = list(ok)
        case[index] = value
        assert not winograd.applies(*case), case


def test_winograd_runs_where_it_beats_im2col():
    """By the output's size and the input channels (minitf/winograd.py's measured bounds)."""
    from minitf import winograd

    def pays(h, w, c, o=64):
        return winograd.pays((8, h + 2, w + 2, c), (3, 3, c, o))

    assert pays(11, 11, 32) and pays(14, 14, 64) and pays(10, 10, 32)   # 100 pixels
    assert not pays(9, 11, 32)               # 99 pixels
    assert not pays(7, 7, 64) and not pays(5, 5, 128)     # small images: im2col
    assert not pays(14, 14, 16) and pays(20, 20, 16) and pays(26, 26, 16)
    assert not pays(19, 21, 16)              # 399 pixels and 16 channels
    assert not pays(26, 26, 8) and not pays(100, 100, 15)


def test_conv_layers_pick_winograd_and_match_the_im2col_path(monkeypatch):
    rng = np.random.default_rng(9)
    x = tf.constant(rng.standard_normal((4, 12, 11, 32)).astype(np.float32))
    layer = tf.keras.layers.Conv2D(24, 3, padding="same")
    layer.build(x.shape)

    def step():
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.square(layer(x)))
        return [loss.numpy()] + [g.numpy() for g in tape.gradient(loss, [x, layer.kernel])]

    from minitf import winograd
    calls = []
    real = winograd.conv
    monkeypatch.setattr(winograd, "conv", lambda *a, **k: calls.append(1) or real(*a, **k))
    fast = step()
    assert calls
    monkeypatch.setattr(winograd, "MIN_CHANNELS", 10 ** 6)       # the im2col path
    slow = step()
    for a, b in zip(fast, slow):   # F(4x4, 3x3)'s float32 error: ~1e-6 of the values' scale
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5 * np.abs(b).max())


def test_kernels_split_over_threads_give_the_one_thread_results(monkeypatch):
    from minitf import kernel_threads, winograd
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 10, 8, 16)).astype(np.float32)
    w = rng.standard_normal((3, 3, 16, 12)).astype(np.float32)
    g = rng.standard_normal((6, 8, 6, 12)).astype(np.float32)
    gamma, beta = rng.uniform(0.5, 2, 16).astype(np.float32), rng.standard_normal(16)
    mean, inv = x.mean(axis=(0, 1, 2)), 1 / x.std(axis=(0, 1, 2))

    def everything():
        pooled, arg = native_nn.max_pool(x, (2, 2))
        return [winograd.conv(x, w), winograd.input_grad(g, w, (10, 8)),
                winograd.filter_grad(x, g), winograd.transform_input(x), pooled,
                native_nn.max_pool_grad(pooled, arg, x.shape, (2, 2)),
                *native_nn.bn_moments(x), native_nn.bn_reduce(x, x, mean, inv),
                native_nn.bn_apply(x, mean, inv, gamma, beta),
                native_nn.patches(x, (3, 3), (1, 1), (1, 1)),
                native_nn.bias_relu(x, beta.astype(np.float32)), native_nn.relu_grad(x, -x)]

    monkeypatch.setattr(kernel_threads, "count", lambda: 1)
    one = everything()
    monkeypatch.setattr(kernel_threads, "count", lambda: 3)
    monkeypatch.setattr(native_nn, "MIN_PART", 1)
    monkeypatch.setattr(winograd, "MIN_PART_PLANES", 1)
    parts = []
    real_run = kernel_threads.run
    monkeypatch.setattr(kernel_threads, "run",
                        lambda fn, p, **kw: parts.append(len(p)) or real_run(fn, p, **kw))
    split = everything()
    assert min(parts) == 3                                  # every kernel ran in three parts
    for a, b in zip(one, split):    # float32 sums in another order: agree to their rounding
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * np.abs(b).max())


def test_a_failing_part_raises_in_the_caller(monkeypatch):
    from minitf import kernel_threads
    monkeypatch.setattr(kernel_threads, "count", lambda: 2)
    assert kernel_threads.split(10, 4) == [(0, 5), (5, 10)]
    assert kernel_threads.split(10, 6) == [(0, 10)]             # parts of 6 or more: one
    assert kernel_threads.split(0, 4) == [(0, 0)]

    def fail(start, stop):
        if start:
            raise ValueError(f"part {start}..{stop}")

    with pytest.raises(ValueError, match="part 5..10"):
        kernel_threads.run(fail, [(0, 5), (5, 10)])


def test_a_traced_step_on_the_native_kernels_matches_eager_over_changing_batches(
        winograd_everywhere):
    """The kernels' caches (Winograd's input transform, pooling offsets, BatchNorm statistics)
    are keyed by array identity; a traced step reuses its buffers, so a stale entry would show
    here as a difference from eager."""
    from minitf import winograd
    layers = tf.keras.layers

    def train(traced):
        tf.random.set_seed(1)
        model = tf.keras.Sequential([
            layers.Conv2D(8, 3, padding="same", use_bias=False), layers.BatchNormalization(),
            layers.ReLU(), layers.MaxPooling2D(2), layers.Conv2D(16, 3, activation="relu"),
            layers.Flatten(), layers.Dense(3)])
        model.build((None, 10, 10, 8))
        step = sparse_ce_step(model, tf.keras.optimizers.Adam(1e-2))
        step = tf.function(step) if traced else step
        rng = np.random.default_rng(11)
        batches = [(tf.constant(rng.standard_normal((32, 10, 10, 8)).astype(np.float32)),
                    tf.constant(rng.integers(0, 3, 32).astype(np.int32))) for _ in range(3)]
        return [float(step(*batches[i % 3])) for i in range(7)], model.variables

    assert winograd.applies((32, 10, 10, 8), (3, 3, 8, 8), (1, 1), (1, 1), np.float32)
    eager_losses, eager_vars = train(False)
    traced_losses, traced_vars = train(True)
    assert eager_losses == traced_losses
    for a, b in zip(eager_vars, traced_vars):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_kernel_threads_follow_the_blas_thread_count():
    threadpool_limits = pytest.importorskip("threadpoolctl").threadpool_limits
    from minitf import kernel_threads, openblas
    if openblas.threads() is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS minitf can query")
    with threadpool_limits(1, user_api="blas"):
        assert kernel_threads.count() == 1
        assert kernel_threads.split(10 ** 6, 1) == [(0, 10 ** 6)]
    with threadpool_limits(2, user_api="blas"):
        assert kernel_threads.count() == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(7, 5), (2, 3, 11), (4, 1)])
def test_sparse_cross_entropy_gives_the_bits_of_the_numpy_path(shape, dtype, label_dtype,
                                                                monkeypatch):
    """Losses and the kept gradient, on rows with NaN, infinities and ties."""
    from minitf.ops import nn_ops
    rng = np.random.default_rng(8)
    logits = (rng.standard_normal(shape) * 4).astype(dtype)
    logits.reshape(-1, shape[-1])[0, 0] = np.nan
    if shape[-1] > 1:
        logits.reshape(-1, shape[-1])[1, :] = [np.inf] + [1.0] * (shape[-1] - 1)
        logits.reshape(-1, shape[-1])[2, :] = 2.5     # every entry the maximum
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(label_dtype)
    with np.errstate(all="ignore"):
        got = native_nn.sparse_cross_entropy(labels, logits)
        monkeypatch.setattr(native_nn, "sparse_cross_entropy", lambda *a: None)
        want_loss = nn_ops._sparse_ce_forward(labels, logits)
    want_grad = nn_ops._backprops.take(logits, (logits.shape, id(labels)))[1]
    assert got is not None
    for a, b in zip(got, (want_loss, want_grad)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))


def test_sparse_cross_entropy_leaves_bad_labels_and_other_types_to_numpy():
    logits = np.zeros((3, 4), np.float32)
    before = logits.copy()
    for labels in (np.array([0, 4, 1], np.int32), np.array([0, -1, 1], np.int64)):
        assert native_nn.sparse_cross_entropy(labels, logits) is None
        with pytest.raises(tf.errors.InvalidArgumentError, match="labels must be in"):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
    assert native_nn.sparse_cross_entropy(np.array([0, 1, 2], np.uint8), logits) is None
    assert native_nn.sparse_cross_entropy(np.array([0, 1, 2]), logits[:, ::2].copy().T) is None
    np.testing.assert_array_equal(logits, before)
