"""Native fused kernels: the same bits as the ufunc path, built once, and optional."""
import os

import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import native
from minitf.keras import optimizers

needs_kernels = pytest.mark.skipif(native.kernels() is None,
                                   reason="no C compiler (or MINITF_NATIVE=0)")

SCALARS = (0.9, 0.1, 0.999, 0.001, 1e-7, -1e-3, 0.996)   # b1, c1, b2, c2, eps, scale, decay


def _state(n, dtype, seed):
    rng = np.random.default_rng(seed)
    g, m, w = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    v = np.abs(rng.standard_normal(n)).astype(dtype) * dtype(0.01)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3e38], dtype=dtype)
    for a in (g, m, w):
        k = min(n, len(specials))
        a[:k] = specials[:k]
        rng.shuffle(a)
    v[:4] = 0.0
    return g, m, v, w


@needs_kernels
@pytest.mark.parametrize("n", [1, 9, 1000, 100_003])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_adam_gives_the_bits_of_the_ufunc_path(n, dtype):
    g, m, v, w = _state(n, dtype, n)
    ref = [a.copy() for a in (g, m, v, w)]
    with np.errstate(all="ignore"):
        native.adam_ufuncs(*ref, np.empty(n, dtype), *SCALARS)
        assert native.adam(w, g, m, v, *SCALARS)
    for got, want in zip((m, v, w), ref[1:]):
        np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


@needs_kernels
def test_fused_adam_declines_what_it_cannot_run():
    g, m, v, w = _state(64, np.float32, 0)
    before = [a.copy() for a in (g, m, v, w)]
    strided = np.zeros(128, np.float32)[::2]
    cases = [
        (strided, g, m, v),                                   # non-contiguous weights
        (w, g.astype(np.float64), m, v),                       # mixed dtypes
        (np.zeros(64, np.float16),) * 4,                       # no float16 kernel
        (w[:32], g, m, v),                                     # shapes differ
        (w.tolist(), g, m, v),                                 # not arrays
        (w, g, m, m),                                          # m and v alias
        (w, w, m, v),                                          # g is w
    ]
    for args in cases:
        assert native.adam(*args, *SCALARS) is False
    for a, b in zip((g, m, v, w), before):
        np.testing.assert_array_equal(a, b)


def test_build_is_cached_and_optional(tmp_path, monkeypatch):
    monkeypatch.setenv("MINITF_CACHE_DIR", str(tmp_path))
    if native.kernels() is not None:
        assert native._load() is not None
        built = [p for p in os.listdir(tmp_path) if p.endswith(".so")]
        assert len(built) == 1 and not [p for p in os.listdir(tmp_path) if p not in built]
        stamp = os.stat(tmp_path / built[0]).st_mtime_ns
        assert native._load() is not None
        assert os.stat(tmp_path / built[0]).st_mtime_ns == stamp     # reused, not rebuilt
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    assert native._load() is None
    monkeypatch.delenv("CC")
    monkeypatch.setenv("MINITF_NATIVE", "0")
    assert native._load() is None


@needs_kernels
@pytest.mark.parametrize("make", [lambda: optimizers.Adam(1e-2),
                                  lambda: optimizers.AdamW(1e-2, weight_decay=0.05)],
                         ids=["adam", "adamw"])
@pytest.mark.skipif(B.get_backend() != "numpy", reason="native kernels run on numpy arrays only")
def test_optimizer_steps_are_the_same_with_and_without_native_kernels(make, monkeypatch):
    rng = np.random.default_rng(11)
    shapes = [(300, 200), (200,), (200, 10)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(4)]
    calls = []
    real_adam, real_batch = native.adam, native.AdamBatch.__call__

    def counting_adam(*args):
        done = real_adam(*args)
        calls.append(done)
        return done

    def counting_batch(*args):
        done = real_batch(*args)
        calls.append(done)
        return done

    monkeypatch.setattr(native, "adam", counting_adam)
    monkeypatch.setattr(native.AdamBatch, "__call__", counting_batch)
    results = []
    for compiled in (native.kernels(), None):
        monkeypatch.setattr(native, "_kernels", compiled)
        variables = [tf.Variable(a) for a in init]
        opt = make()
        for g in grads:
            opt.apply_gradients(zip(g, variables))
        results.append([v.numpy() for v in variables])
    assert any(calls) and not all(calls)   # native with kernels, ufuncs without
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_a_cache_others_can_write_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("MINITF_CACHE_DIR", str(shared))
    assert native._load() is None
    assert not list(shared.iterdir())


CPUINFO = """processor\t: 0
model name\t: Example CPU
flags\t\t: fpu sse2 avx avx2
processor\t: 1
model name\t: Example CPU
flags\t\t: fpu sse2 avx avx2 {extra}
"""


def test_cache_key_follows_the_instruction_set(tmp_path, monkeypatch):
    """Nodes sharing a home directory: a CPU with other feature flags (or another
    -march=native expansion) gets another cache entry; the same CPU the same one."""
    def key_for(extra, target):
        path = tmp_path / f"cpuinfo-{extra or 'base'}"
        path.write_text(CPUINFO.format(extra=extra))
        monkeypatch.setattr(native, "_cpu_signature",
                            lambda: native.__dict__["_real_cpu_signature"](str(path)))
        monkeypatch.setattr(native, "_native_target", lambda compiler: target)
        return native._cache_key("cc", "cc 1.0")

    monkeypatch.setitem(native.__dict__, "_real_cpu_signature", native._cpu_signature)
    base = key_for("", "#define __AVX2__ 1")
    assert key_for("", "#define __AVX2__ 1") == base
    assert key_for("avx512f", "#define __AVX2__ 1") != base          # a flag more
    assert key_for("", "#define __AVX2__ 1\n#define __AVX512F__ 1") != base
    sig = native.__dict__["_real_cpu_signature"](str(tmp_path / "cpuinfo-avx512f"))
    assert sig == "Example CPU\navx avx2 avx512f fpu sse2"          # union over processors
    assert native.__dict__["_real_cpu_signature"](str(tmp_path / "missing")) is not None


def test_native_target_is_the_compilers_expansion():
    import shutil
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    macros = native._native_target("cc")
    assert "#define" in macros
    assert native._native_target(os.devnull + "/no-such-compiler") == ""


def test_march_override_is_checked_and_keys_the_cache(monkeypatch):
    """``MINITF_NATIVE_MARCH``: its own cache entry; refused, with the variable named, when the
    compiler does not know it or it enables instruction sets ``-march=native`` does not."""
    macros = {"-march=native": "#define __AVX2__ 1\n#define __tune_example__ 1",
              "-march=older": "#define __AVX2__ 1\n#define __k8 1",
              "-march=newer": "#define __AVX2__ 1\n#define __AVX512F__ 1",
              "-march=bogus": ""}
    monkeypatch.setattr(native, "_target_macros", lambda compiler, march: macros[march])
    monkeypatch.delenv("MINITF_NATIVE_MARCH", raising=False)
    native._check_march("cc")
    base = native._cache_key("cc", "cc 1.0")
    monkeypatch.setenv("MINITF_NATIVE_MARCH", "older")
    native._check_march("cc")                                    # a subset: accepted
    assert native.march() == "-march=older"
    assert native._cache_key("cc", "cc 1.0") != base
    monkeypatch.setenv("MINITF_NATIVE_MARCH", "newer")
    with pytest.raises(ValueError, match=r"MINITF_NATIVE_MARCH='newer' enables \['__AVX512F__'\]"):
        native._check_march("cc")
    monkeypatch.setenv("MINITF_NATIVE_MARCH", "bogus")
    with pytest.raises(ValueError, match="MINITF_NATIVE_MARCH='bogus': cc does not accept"):
        native._check_march("cc")


_OLDER_BUILD_SCRIPT = """
import numpy as np
from minitf import native, native_nn
k = native.kernels()
print(*[name for name in ("nn", "winograd", "direct_conv") if getattr(k, name) is not None])
rng = np.random.default_rng(0)
g = rng.standard_normal(70_001).astype(np.float32)
y = rng.standard_normal(70_001).astype(np.float32)
g[:4] = [np.nan, np.inf, -np.inf, -0.0]
y[4:8] = [0.0, -0.0, np.nan, 1e-40]
out = native_nn.relu_grad(g, y, np.empty_like(g))
print(out is not None and np.array_equal(out.view(np.uint32), (g * (y > 0)).view(np.uint32)))
"""


@needs_kernels
def test_kernels_built_for_avx2_give_numpys_bits(tmp_path):
    """Built with ``MINITF_NATIVE_MARCH=x86-64-v3`` (AVX2, no AVX-512), as on a CPU without
    AVX-512: every kernel family passes its start-up comparison with numpy, and the relu
    gradient (a multiply by a comparison, which such a build once ran as a scalar branch per
    element) gives numpy's bits."""
    import shutil
    import subprocess
    import sys
    if shutil.which("cc") is None or "__AVX2__" not in native._target_macros(
            "cc", "-march=native"):
        pytest.skip("not an x86 CPU with AVX2, or no C compiler")
    env = dict(os.environ, MINITF_NATIVE_MARCH="x86-64-v3", MINITF_CACHE_DIR=str(tmp_path),
               MINITF_BACKEND="numpy")
    done = subprocess.run([sys.executable, "-c", _OLDER_BUILD_SCRIPT], env=env, timeout=600,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["nn", "winograd", "direct_conv", "True"]
    assert len([p for p in os.listdir(tmp_path) if p.endswith(".so")]) == 1


def _batch_state(sizes, dtype, seed):
    """Variables, slots and gradient buffers of several sizes: one below AdamBatch's copy
    limit, one above it (its gradient is read in place)."""
    parts = [_state(n, dtype, seed + k) for k, n in enumerate(sizes)]
    gs, ms, vs, ws = (list(x) for x in zip(*parts))
    return gs, ms, vs, ws, [np.empty(n, dtype) for n in sizes]


@needs_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adam_batch_gives_the_bits_of_the_ufunc_path(dtype):
    sizes = [1, native._COPY_MAX + 7, 37]
    gs, ms, vs, ws, bufs = _batch_state(sizes, dtype, 5)
    ref = [[a.copy() for a in x] for x in (gs, ms, vs, ws)]
    batch = native.adam_batch(ws, ms, vs, bufs)
    assert batch is not None
    decays = (0.996, 1.0, 0.5)
    rng = np.random.default_rng(3)
    for step in range(3):
        with np.errstate(all="ignore"):
            for k in range(len(sizes)):
                native.adam_ufuncs(ref[0][k], ref[1][k], ref[2][k], ref[3][k],
                                   np.empty(sizes[k], dtype), *SCALARS[:6], decays[k])
            assert batch(gs, *SCALARS[:6], decays)
        for got, want in zip((ms, vs, ws), ref[1:]):
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))
        # The same gradient objects with new values, then new objects: both are read anew.
        new = [rng.standard_normal(n).astype(dtype) for n in sizes]
        if step == 0:
            for g, r, n in zip(gs, ref[0], new):
                g[...] = n
                r[...] = n
        else:
            gs = new
            ref[0] = [n.copy() for n in new]


def test_adam_parts_cut_large_variables_where_the_products_cut_them():
    """Each large variable by 16-aligned blocks of its rows (the rows ``mkl_blas`` gives each
    thread in the products that read and write it); the small ones, end to end, even out
    the parts; every element in exactly one part."""
    from minitf import mkl_blas
    shapes = [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
    bounds = native.adam_parts(shapes, 2)
    assert bounds[1][0] == 400 * 512 == mkl_blas.blocks(128, 512, 784, 2)[2] * 512
    assert bounds[1][2] == 256 * 512
    for k in (0, 2):
        assert bounds[k] == ([0] * 6 if k == 0 else [int(np.prod(s)) for s in shapes])
    loads = [sum(hi - lo for lo, hi in zip(bounds[k], bounds[k + 1])) for k in range(2)]
    assert abs(loads[0] - loads[1]) < 0.01 * sum(loads)
    # Three parts, a 4-d kernel (rows of its last dimension) and small variables to spread.
    shapes = [(3, 3, 64, 128), (1000,), (300, 200), (7,), (5000,)]
    sizes = [int(np.prod(s)) for s in shapes]
    bounds = native.adam_parts(shapes, 3)
    assert bounds[0] == [0] * 5 and bounds[3] == sizes
    for j in range(5):
        assert all(bounds[k][j] <= bounds[k + 1][j] for k in range(3))
    assert [bounds[k][0] for k in (1, 2)] == [192 * 128, 384 * 128]
    assert [bounds[k][2] for k in (1, 2)] == [112 * 200, 224 * 200]
    loads = [sum(hi - lo for lo, hi in zip(bounds[k], bounds[k + 1])) for k in range(3)]
    assert max(loads) - min(loads) < 0.05 * sum(sizes)
    assert native.adam_parts(shapes, 1) == [[0] * 5, sizes]


@needs_kernels
@pytest.mark.parametrize("parts", [2, 3])
def test_adam_batch_in_parts_gives_the_bits_of_the_ufunc_path(monkeypatch, parts):
    """Matrices cut by rows and small variables spread over the parts: every element updated
    once, with the ufunc path's bits."""
    from minitf import kernel_threads, thread_pool
    if not thread_pool.active():
        pytest.skip("no thread pool")
    monkeypatch.setattr(kernel_threads, "count", lambda: parts)
    shapes = [(300, 200), (200,), (70000,), (3, 3, 32, 64), (5,)]
    ws, ms, vs, gs, bufs = [], [], [], [], []
    for shape in shapes:
        g, m, v, w = _state(int(np.prod(shape)), np.float32, len(ws))
        ws.append(w.reshape(shape)), ms.append(m.reshape(shape)), vs.append(v.reshape(shape))
        gs.append(g.reshape(shape))
        bufs.append(np.empty(shape, np.float32) if g.size <= native.copy_max() else None)
    ref = [[a.copy() for a in x] for x in (gs, ms, vs, ws)]
    batch = native.adam_batch(ws, ms, vs, bufs)
    decays = (0.99, 1.0, 0.98, 1.0, 0.5)
    with np.errstate(all="ignore"):
        for k, shape in enumerate(shapes):
            native.adam_ufuncs(ref[0][k], ref[1][k], ref[2][k], ref[3][k],
                               np.empty(shape, np.float32), *SCALARS[:6], decays[k])
        assert batch(gs, *SCALARS[:6], decays)
    assert parts in batch._bounds
    for got, want in zip((ms, vs, ws), ref[1:]):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@needs_kernels
def test_adam_batch_declines_what_it_cannot_run():
    sizes = [3, native._COPY_MAX + 1]
    gs, ms, vs, ws, bufs = _batch_state(sizes, np.float32, 9)
    assert native.adam_batch(ws, ms, [vs[0], vs[0]], bufs) is None           # wrong shape
    assert native.adam_batch(ws, ms, [vs[0], ms[1]], bufs) is None           # aliasing slots
    assert native.adam_batch(ws, ms, [vs[0], vs[1].astype(np.float64)], bufs) is None
    strided = np.empty(2 * sizes[1], np.float32)[::2]
    assert native.adam_batch([ws[0], strided], ms, vs, bufs) is None
    batch = native.adam_batch(ws, ms, vs, bufs)
    before = [a.copy() for a in (*ms, *vs, *ws)]
    for large in (ms[1], ws[1], gs[1].astype(np.float64), np.empty(2 * sizes[1], np.float32)[::2]):
        assert batch([gs[0], large], *SCALARS[:6], (1.0, 1.0)) is False   # slot, dtype, strides
    assert batch([[0.0] * sizes[0], gs[1]], *SCALARS[:6], (1.0, 1.0)) is False   # not an array
    for a, b in zip((*ms, *vs, *ws), before):
        np.testing.assert_array_equal(a, b)


def _traced_adamw_with_and_without_kernels(monkeypatch, units, xs):
    """A Dense stack (relu between layers of ``units``) after traced AdamW steps on ``xs``,
    with the native kernels and then without them: ``(model, [weights, weights])``."""
    results = []
    for compiled in (native.kernels(), None):
        monkeypatch.setattr(native, "_kernels", compiled)
        tf.keras.utils.set_random_seed(0)
        model = tf.keras.Sequential([tf.keras.layers.Dense(n, activation="relu")
                                     for n in units[:-1]] + [tf.keras.layers.Dense(units[-1])])
        model.build((None, xs[0].shape[1]))
        opt = optimizers.AdamW(1e-2, weight_decay=0.01)
        opt.exclude_from_weight_decay(var_names=["bias"])

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x)))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))

        for x in xs:
            step(x)
        results.append([v.numpy() for v in model.trainable_variables])
    return model, results


@needs_kernels
@pytest.mark.skipif(B.get_backend() != "numpy", reason="native kernels run on numpy arrays only")
def test_a_traced_small_model_takes_one_native_call_per_step(monkeypatch):
    """A Dense model's variables share an arena: with the kernels each step is one native
    call, without them the ufunc path; the results are the same bits."""
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((8, 20)).astype(np.float32) for _ in range(4)]
    calls = []
    real_call = native.AdamBatch.__call__

    def counting_call(self, *args):
        done = real_call(self, *args)
        calls.append(done)
        return done

    monkeypatch.setattr(native.AdamBatch, "__call__", counting_call)
    _, results = _traced_adamw_with_and_without_kernels(monkeypatch, (16, 3), xs)
    assert calls == [True] * len(xs)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@needs_kernels
@pytest.mark.skipif(B.get_backend() != "numpy", reason="native kernels run on numpy arrays only")
def test_a_traced_step_updates_every_variable_in_one_native_call(monkeypatch):
    """Large and small variables (gradients read in place or copied) in one call, split over
    the thread pool where it runs; the same bits as the ufunc path."""
    from minitf import kernel_threads, thread_pool
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((8, 400)).astype(np.float32) for _ in range(3)]
    parts = []
    real_many = native.kernels().adam_many["float32"]
    monkeypatch.setitem(native.kernels().adam_many, "float32",
                        lambda p, *args: parts.append(p) or real_many(p, *args))
    # 120k weights (read in place), 12k (read in place, in an arena), 120 (copied)
    model, results = _traced_adamw_with_and_without_kernels(monkeypatch, (300, 40, 3), xs)
    assert model.layers[1].kernel.shape.num_elements() > native.copy_max()
    pooled = thread_pool.active() and kernel_threads.count() > 1
    assert parts == [2 if pooled else 1] * len(xs)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
