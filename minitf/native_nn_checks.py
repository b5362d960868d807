"""The start-up check of ``minitf.native_nn``'s kernels: each against numpy's formulas on
awkward values (NaN, infinities, signed zeros, subnormals, ties), so a compiler or flag that
rounds or orders differently turns the family off instead of changing results."""
import numpy

from .native_nn import _DTYPES, _address


def _awkward(rng, shape, dtype):
    """Values with NaN, infinities, signed zeros, subnormals and many ties, shuffled."""
    x = rng.standard_normal(shape).astype(dtype).round(0)
    flat = x.reshape(-1)
    specials = [numpy.nan, numpy.inf, -numpy.inf, 0.0, -0.0, 1e-40, -1e-40, 3e38]
    flat[:len(specials)] = specials
    rng.shuffle(flat)
    return x


def _pool_matches(fns, dtype, rng):
    x, g = _awkward(rng, (2, 7, 9, 5), dtype), _awkward(rng, (2, 3, 3, 5), dtype)
    kh, kw = 2, 3
    out, arg = numpy.empty(g.shape, dtype), numpy.empty(g.shape, numpy.uint8)
    fns["fwd"][dtype](2, 7, 9, 5, kh, kw, _address(x), _address(out), _address(arg))
    dx = numpy.empty(x.shape, dtype)
    fns["bwd"][dtype](2, 7, 9, 5, kh, kw, _address(g), _address(arg), None,
                        _address(dx), None, None, None, None, None, None)
    masked, sums = numpy.empty(x.shape, dtype), numpy.empty((2, 5))
    mean, inv = rng.standard_normal(5).astype(dtype), rng.uniform(0.5, 2, 5).astype(dtype)
    bn_sums, want_bn = numpy.zeros((2, 5)), numpy.empty((2, 5))
    fns["bwd"][dtype](2, 7, 9, 5, kh, kw, _address(g), _address(arg), _address(x),
                        _address(masked), _address(sums), _address(x), _address(mean),
                        _address(inv), _address(bn_sums[0]), _address(bn_sums[1]))
    want_sums = numpy.empty((2, 5))
    fns["image_sums"][dtype](2, 7 * 9, 5, _address(masked), _address(want_sums))
    fns["bn_reduce"][dtype](2 * 7 * 9, 5, _address(x), _address(masked), _address(mean),
                            _address(inv), _address(want_bn[0]), _address(want_bn[1]))
    views = [x[:, i:i + 6:kh, j:j + 9:kw] for i in range(kh) for j in range(kw)]
    top = views[0].copy()
    for v in views[1:]:
        numpy.maximum(top, v, out=top)
    want_arg = numpy.full(g.shape, kh * kw - 1, numpy.uint8)
    for q in reversed(range(kh * kw)):
        want_arg[views[q] == top] = q
    want_dx = numpy.zeros(x.shape, dtype)
    for q in range(kh * kw):
        want_dx[:, q // kw:q // kw + 6:kh, q % kw:q % kw + 9:kw] = g * (want_arg == q)
    want_masked = numpy.multiply(want_dx, x > 0)
    bits = f"u{numpy.dtype(dtype).itemsize}"      # signed zeros too: the same bits as relu_grad
    return (numpy.array_equal(out, top, equal_nan=True) and numpy.array_equal(arg, want_arg)
            and numpy.array_equal(dx, want_dx, equal_nan=True)
            and numpy.array_equal(masked.view(bits), want_masked.view(bits))
            and numpy.array_equal(sums, want_sums, equal_nan=True)
            and numpy.array_equal(bn_sums, want_bn, equal_nan=True)
            and _relu_pool_matches(fns, dtype, x, rng))


def _relu_pool_matches(fns, dtype, x, rng):
    n, h, w, c = x.shape
    b = rng.standard_normal(c).astype(dtype)
    for bias in (b, None):
        a, top = numpy.empty_like(x), numpy.empty((n, h // 2, w // 3, c), dtype)
        arg, want_top = numpy.empty(top.shape, numpy.uint8), numpy.empty_like(top)
        want_arg = numpy.empty_like(arg)
        fns["relu_pool"][dtype](n, h, w, c, 2, 3, _address(x),
                                None if bias is None else _address(bias), _address(a),
                                _address(top), _address(arg))
        want_a = numpy.maximum(x if bias is None else x + bias, 0)
        fns["fwd"][dtype](n, h, w, c, 2, 3, _address(a), _address(want_top),
                          _address(want_arg))
        if not (numpy.array_equal(a, want_a, equal_nan=True)
                and numpy.array_equal(top, want_top, equal_nan=True)
                and numpy.array_equal(arg, want_arg)):
            return False
    return True


def _elementwise_match(fns, dtype, rng):
    x, g = _awkward(rng, (6, 5), dtype), _awkward(rng, (6, 5), dtype)
    b = rng.standard_normal(5).astype(dtype)
    z, gy = numpy.empty_like(x), numpy.empty_like(x)
    fns["bias_relu"][dtype](6, 5, _address(x), _address(b), _address(z))
    fns["relu_grad"][dtype](x.size, _address(g), _address(x), _address(gy))
    r = numpy.empty_like(x)
    fns["relu"][dtype](x.size, _address(x), _address(r))
    want_gy = numpy.multiply(g, x > 0)
    bits = f"u{gy.itemsize}"
    return (numpy.array_equal(z, numpy.maximum(x + b, 0), equal_nan=True)
            and numpy.array_equal(r, numpy.maximum(x, 0), equal_nan=True)
            and numpy.array_equal(gy.view(bits), want_gy.view(bits))
            and _relu_grad_rows_match(fns, dtype, rng))


def _relu_grad_rows_match(fns, dtype, rng):
    """relu_grad_rows on the interior of a padded gradient, with image sums, and on a stack of
    cotangents over one y: relu_grad's bits and image_sums' bits."""
    padded, y = _awkward(rng, (2, 6, 7, 3), dtype), _awkward(rng, (2, 4, 5, 3), dtype)
    g = padded[:, 1:5, 1:6]
    item = padded.itemsize
    out, sums, want_sums = numpy.empty(y.shape, dtype), numpy.empty((2, 3)), numpy.empty((2, 3))
    fns["relu_grad_rows"][dtype](2, 4, 15, 3, g.ctypes.data, padded.strides[0] // item,
                                 padded.strides[1] // item, _address(y), 60, 15, _address(out),
                                 60, 15, _address(sums))
    want = numpy.multiply(g, y > 0)
    fns["image_sums"][dtype](2, 20, 3, _address(want), _address(want_sums))
    # A stack of two cotangents over one y, stored example-major: y's rows serve both.
    stack, y2 = _awkward(rng, (4, 2, 15), dtype), _awkward(rng, (4, 15), dtype)
    out2 = numpy.empty_like(stack)
    fns["relu_grad_rows"][dtype](4, 2, 15, 3, stack.ctypes.data, 30, 15, _address(y2), 15, 0,
                                 _address(out2), 30, 15, None)
    want2 = numpy.multiply(stack, y2[:, None, :] > 0)
    return (numpy.array_equal(out.view(f"u{item}"), want.view(f"u{item}"))
            and numpy.array_equal(sums, want_sums, equal_nan=True)
            and numpy.array_equal(out2.view(f"u{item}"), want2.view(f"u{item}")))


def _patches_match(fns, dtype, rng):
    """Windows of unpadded and zero-padded images, and col2im adding them back (in float64:
    the sums' order differs from the reference's)."""
    x = rng.standard_normal((2, 7, 8, 5)).astype(dtype)
    for (kh, kw), (sh, sw), (dh, dw), (pt, pb, pl, pr) in [
            ((3, 3), (1, 1), (1, 1), (0, 0, 0, 0)), ((2, 3), (2, 1), (1, 2), (0, 0, 0, 0)),
            ((3, 3), (2, 2), (1, 1), (0, 1, 1, 0)), ((3, 2), (1, 2), (2, 1), (2, 1, 1, 3))]:
        padded = numpy.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
        oh = (7 + pt + pb - (kh - 1) * dh - 1) // sh + 1
        ow = (8 + pl + pr - (kw - 1) * dw - 1) // sw + 1
        out = numpy.empty((2, oh, ow, kh, kw, 5), dtype)
        fns["patches"][dtype](2, 7, 8, 5, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, _address(x),
                              _address(out))
        back = numpy.empty_like(x)
        fns["col2im"][dtype](2, 7, 8, 5, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr,
                             _address(out), _address(back))
        want_back = numpy.zeros(padded.shape)
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
                cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
                if not numpy.array_equal(out[:, :, :, i, j], padded[:, rows, cols]):
                    return False
                want_back[:, rows, cols] += padded[:, rows, cols]
        want_back = want_back[:, pt:pt + 7, pl:pl + 8]
        if dtype == "float64" and not numpy.allclose(back, want_back, rtol=1e-14, atol=1e-14):
            return False
    return True


def matches_numpy(kernels):
    """Every kernel against numpy's formulas (pooling and relu on NaN, infinities, signed zeros,
    subnormals and ties; signs of zero aside, which ``numpy.maximum`` itself does not fix)."""
    rng = numpy.random.default_rng(0)
    with numpy.errstate(all="ignore"):
        return all(check(kernels.fns, dtype, rng) for dtype in _DTYPES
                   for check in (_pool_matches, _elementwise_match, _patches_match))
