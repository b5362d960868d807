"""Compiled element-wise kernels (minitf.native_elementwise): the numpy paths' bits, the
activations' values and derivatives against float64 formulas, and the start-up check that
turns a kernel that rounds differently off."""
import math

import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import native, native_elementwise, native_nn
from minitf.ops import math_ops

pytestmark = pytest.mark.skipif(
    B.get_backend() != "numpy" or native.kernels() is None,
    reason="numpy's native kernels: another backend, no C compiler or MINITF_NATIVE=0")

FORMS = [pytest.param(False, id="exact"), pytest.param(True, id="tanh")]


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint32)


def _gelu64(x, approximate):
    """GELU and its derivative in float64 from math.erf / math.tanh, element by element."""
    x = x.astype(np.float64).reshape(-1)
    if approximate:
        c, a = math.sqrt(2 / math.pi), 0.044715
        t = np.array([math.tanh(c * (v + a * v ** 3)) for v in x])
        y = 0.5 * x * (1 + t)
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * a * x * x)
    else:
        phi_big = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
        y = x * phi_big
        d = phi_big + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return y, d


def test_the_family_passes_its_start_up_check():
    # A change to the numpy formulas or to minitf.normal_fit that the C source does not follow
    # would turn the family off silently (slower, same values): this keeps it visible.
    assert native.family("elementwise") is not None


@pytest.mark.parametrize("approximate", FORMS)
@pytest.mark.parametrize("shape", [(128, 512), (3, 100_003)])   # one part; parts over threads
def test_forward_and_gradient_are_the_numpy_paths_bits(shape, approximate):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e-40, 40.0]
    g = rng.standard_normal(shape).astype(np.float32)
    with np.errstate(all="ignore"):
        y = native_elementwise.gelu(x, approximate)
        d = native_elementwise.gelu_grad(g, x, approximate)
        want_y, want_d = math_ops._gelu_numpy(x, approximate), math_ops._gelu_grad_numpy(
            g, x, approximate)
    assert y is not None and d is not None and y.shape == d.shape == shape
    np.testing.assert_array_equal(_bits(y), _bits(want_y))
    np.testing.assert_array_equal(_bits(d), _bits(want_d))


@pytest.mark.parametrize("approximate", FORMS)
def test_values_and_derivative_against_float64_closed_forms(approximate):
    x = np.linspace(-8, 8, 40_001).astype(np.float32).reshape(1, -1)
    g = np.ones_like(x)
    y = native_elementwise.gelu(x, approximate)
    d = native_elementwise.gelu_grad(g, x, approximate)
    want_y, want_d = _gelu64(x, approximate)
    np.testing.assert_allclose(y.reshape(-1), want_y, rtol=2e-6, atol=2e-7)
    # The tanh form's 1 - t^2 cancels in float32 where tanh is near -1 or 1 (|x| > 4): the
    # numpy path's error too (same bits), 1.2e-6 at most here.
    np.testing.assert_allclose(d.reshape(-1), want_d, rtol=2e-6,
                               atol=2e-6 if approximate else 4e-7)


@pytest.mark.parametrize("approximate", FORMS)
def test_the_ops_take_the_kernels_and_keep_their_values(approximate, monkeypatch):
    rng = np.random.default_rng(2)
    x = tf.constant((rng.standard_normal((64, 512)) * 2).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.gelu(x, approximate=approximate)
        loss = tf.reduce_sum(y * y)
    dx = tape.gradient(loss, x).numpy()
    calls = []
    monkeypatch.setattr(native_elementwise, "_fns", lambda *a: calls.append(1))   # numpy path
    with tf.GradientTape() as tape:
        tape.watch(x)
        y2 = tf.nn.gelu(x, approximate=approximate)
        loss2 = tf.reduce_sum(y2 * y2)
    dx2 = tape.gradient(loss2, x).numpy()
    assert len(calls) == 2     # the forward and the gradient both asked for the kernels
    np.testing.assert_array_equal(_bits(y.numpy()), _bits(y2.numpy()))
    np.testing.assert_array_equal(_bits(dx), _bits(dx2))
    want_y, want_d = _gelu64(x.numpy(), approximate)
    np.testing.assert_allclose(y.numpy().reshape(-1), want_y, rtol=2e-6, atol=2e-7)
    np.testing.assert_allclose(dx.reshape(-1), 2 * want_y * want_d, rtol=1e-5, atol=1e-6)


def test_what_the_kernels_leave_to_numpy():
    x = np.ones((128, 512), np.float32)
    small = np.ones((4, 8), np.float32)
    assert small.size < native_nn.PAYS_FROM and native_elementwise.gelu(small) is None
    assert native_elementwise.gelu(x.astype(np.float64)) is None    # float64: erfc to rounding
    assert native_elementwise.gelu(np.ones((512, 256), np.float32).T) is None   # strided
    assert native_elementwise.gelu_grad(np.ones((2, 128, 512), np.float32), x) is None   # a stack
    # float16 runs in float32 (math_ops._working), then rounds once
    h = (np.random.default_rng(3).standard_normal((128, 512)) * 2).astype(np.float16)
    y = tf.nn.gelu(tf.constant(h)).numpy()
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, math_ops._gelu_numpy(h.astype(np.float32), False)
                                  .astype(np.float16))


def test_the_start_up_check_rejects_a_kernel_one_ulp_off():
    good = native.family("elementwise")

    class OneUlpOff:
        fns = dict(good.fns)

    finish = good.fns["gelu_exact_finish"]

    def off(n, x, y):
        finish(n, x, y)
        out = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_float * n).from_address(y))
        out[n // 2] = np.nextafter(out[n // 2], np.float32(np.inf))

    OneUlpOff.fns["gelu_exact_finish"] = off
    assert native_elementwise.matches_numpy(good)
    assert not native_elementwise.matches_numpy(OneUlpOff)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_full,b_full", [(True, True), (True, False), (False, True),
                                           (False, False)])
def test_select_is_numpy_where_bit_for_bit(dtype, a_full, b_full):
    rng = np.random.default_rng(4)
    shape = (3, 100_001)                       # several parts over the threads
    condition = rng.random(shape) < 0.4
    a = rng.standard_normal(shape if a_full else ()).astype(dtype)
    b = rng.standard_normal(shape if b_full else (1, 1)).astype(dtype)
    if a_full:
        a.reshape(-1)[:4] = [np.nan, -0.0, np.inf, -np.inf]
    out = native_elementwise.select(condition, a, b)
    assert out is not None and out.shape == shape and out.dtype == dtype
    want = np.where(condition, a, b)
    np.testing.assert_array_equal(out.view(f"u{out.itemsize}"), want.view(f"u{out.itemsize}"))


def test_select_leaves_other_cases_to_numpy():
    c = np.ones((128, 512), bool)
    f = np.ones((128, 512), np.float32)
    assert native_elementwise.select(c, f, f.astype(np.float64)) is None   # promotion
    assert native_elementwise.select(c.astype(np.float32), f, f) is None   # not a mask
    assert native_elementwise.select(c[:, :1], f, f) is None            # broadcast condition
    assert native_elementwise.select(c, f.T.copy().T, f[:, ::-1]) is None   # strided
    assert native_elementwise.select(c[:4, :4], f[:4, :4], f[:4, :4]) is None   # small


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_is_the_numpy_paths_bits_and_the_logistic(dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 100_001)) * 8).astype(dtype)
    x.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, -0.0, 800.0, -800.0]
    with np.errstate(all="ignore"):
        y = native_elementwise.sigmoid(x)
        want = math_ops._sigmoid_numpy(x)
    assert y is not None
    np.testing.assert_array_equal(y.view(f"u{y.itemsize}"), want.view(f"u{y.itemsize}"))
    finite = np.isfinite(x)
    exact = np.array([1 / (1 + math.exp(-v)) if v > -700 else 0.0
                      for v in x[finite].astype(np.float64)])
    np.testing.assert_allclose(y[finite], exact, rtol=4 * np.finfo(dtype).eps, atol=1e-300)
    assert y.reshape(-1)[1] == 1 and y.reshape(-1)[2] == 0 and np.isnan(y.reshape(-1)[0])


@pytest.mark.parametrize("name,fn,want", [
    ("leaky_relu", lambda x: tf.nn.leaky_relu(x, 0.3),
     lambda x: (np.where(x > 0, x, 0.3 * x), np.where(x > 0, 1.0, 0.3))),
    ("elu", tf.nn.elu, lambda x: (np.where(x > 0, x, np.expm1(x)),
                                  np.where(x > 0, 1.0, np.exp(x)))),
    ("selu", tf.nn.selu, lambda x: (1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x)), 1.0507009873554805 * np.where(
        x > 0, 1.0, 1.6732632423543772 * np.exp(x)))),
    ("relu6", tf.nn.relu6, lambda x: (np.clip(x, 0, 6), ((x > 0) & (x < 6)) * 1.0)),
    ("softplus", tf.nn.softplus, lambda x: (np.logaddexp(0, x), 1 / (1 + np.exp(-x)))),
    ("log_sigmoid", tf.math.log_sigmoid, lambda x: (-np.logaddexp(0, -x),
                                                    1 / (1 + np.exp(x)))),
    ("sigmoid", tf.nn.sigmoid, lambda x: (1 / (1 + np.exp(-x)),
                                          np.exp(-x) / (1 + np.exp(-x)) ** 2)),
    ("swish", tf.nn.silu, lambda x: (x / (1 + np.exp(-x)), 1 / (1 + np.exp(-x)) + x * np.exp(
        -x) / (1 + np.exp(-x)) ** 2)),
    ("where", lambda x: tf.where(x > 0.5, x * 2.0, -x), lambda x: (
        np.where(x > 0.5, 2 * x, -x), np.where(x > 0.5, 2.0, -1.0))),
])
def test_large_activations_against_float64_formulas(name, fn, want):
    # Layers of 128x512: the compiled select and sigmoid, softplus' vectorised form, run here
    # (the gradient check's small samples take the numpy paths).
    rng = np.random.default_rng(6)
    x32 = (rng.standard_normal((128, 512)) * 4).astype(np.float32)
    x = tf.constant(x32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    dy = tape.gradient(y, x).numpy()
    with np.errstate(over="ignore"):
        want_y, want_dy = want(x32.astype(np.float64))
    np.testing.assert_allclose(y.numpy(), want_y, rtol=3e-6, atol=3e-7)
    np.testing.assert_allclose(dy, want_dy, rtol=3e-6, atol=3e-7)


def test_sigmoid_of_a_strided_gate_is_the_numpy_paths_bits():
    # an RNN's gates: (batch, units) column blocks of one product, from 1,024 elements
    z = (np.random.default_rng(7).standard_normal((64, 512)) * 6).astype(np.float32)
    gate = z[:, 128:256]
    assert gate.size >= native_elementwise.SIGMOID_FROM and not gate.flags.c_contiguous
    y = native_elementwise.sigmoid(gate)
    assert y is not None and y.shape == gate.shape
    np.testing.assert_array_equal(_bits(y), _bits(math_ops._sigmoid_numpy(gate)))
    assert native_elementwise.sigmoid(z[:2, :100]) is None    # fewer: numpy's path
