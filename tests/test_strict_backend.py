"""The strict backend behaves like cupy where host/device mistakes show: implicit conversion to
numpy raises, explicit copies work, scalar reads are counted, and the namespace offers only
what cupy offers. These tests build strict arrays directly, so they run under every backend;
the ones that switch minitf to strict restore the previous backend."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import strict_backend as S

xp = S.xp


@pytest.fixture
def strict_backend():
    previous = B.get_backend()
    B.set_backend("strict")
    try:
        yield
    finally:
        B.set_backend(previous)


def _a():
    return xp.asarray(np.array([[1.0, -2.0], [3.0, 4.0]], np.float32))


@pytest.mark.parametrize("convert", [
    np.asarray, np.array, np.ascontiguousarray, np.sum, np.mean, np.linalg.norm,
    lambda a: np.concatenate([a, a]), lambda a: np.stack([a]), lambda a: np.asarray([a, a]),
    lambda a: a.__array__(), lambda a: np.testing.assert_array_equal(a, a),
    lambda a: np.add.at(a, [0], 1.0), lambda a: np.add.reduce(a),
], ids=["asarray", "array", "ascontiguousarray", "sum", "mean", "linalg.norm", "concatenate",
        "stack", "asarray_list", "__array__", "assert_array_equal", "ufunc.at", "ufunc.reduce"])
def test_implicit_conversion_to_numpy_raises(convert):
    with pytest.raises(TypeError, match="implicit conversion"):
        convert(_a())


@pytest.mark.parametrize("mix", [
    lambda a, h: a + h, lambda a, h: h * a, lambda a, h: xp.add(a, h),
    lambda a, h: xp.concatenate([a, h]), lambda a, h: np.maximum(a, h),
    lambda a, h: xp.where(a > 0, a, h),
], ids=["add", "rmul", "xp.add", "xp.concatenate", "numpy ufunc", "xp.where"])
def test_mixing_a_host_array_in_raises(mix):
    """cupy rejects numpy arrays as operands; host data has to be moved explicitly."""
    with pytest.raises(TypeError, match="host numpy.ndarray"):
        mix(_a(), np.ones((2, 2), np.float32))


def test_operators_methods_and_numpy_ufuncs_compute_on_the_device():
    a = _a()
    host = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    checks = [(a + 1, host + 1), (2.0 * a, 2.0 * host), (a @ a, host @ host), (-a, -host),
              (a[1], host[1]), (a.T, host.T), (a.sum(axis=0), host.sum(axis=0)),
              (xp.maximum(a, 0), np.maximum(host, 0)), (np.exp(a), np.exp(host)),
              (a[xp.asarray(np.array([1, 0]))], host[[1, 0]]), (a.reshape(-1), host.reshape(-1))]
    for got, expected in checks:
        assert type(got) is S.StrictArray
        np.testing.assert_array_equal(got.get(), expected)
    b = a.copy()
    b += a
    b[0, 0] = 10.0
    np.testing.assert_array_equal(b.get(), [[10.0, -4.0], [6.0, 8.0]])
    out = xp.empty((2, 2), np.float32)
    assert xp.multiply(a, 3, out=out) is out
    np.testing.assert_array_equal(out.get(), host * 3)


def test_reductions_return_0d_arrays_as_cupy_does():
    total = xp.sum(_a())
    assert type(total) is S.StrictArray and total.shape == ()
    assert type(_a()[0, 0]) is S.StrictArray


def test_named_linalg_results_hold_device_arrays():
    result = xp.linalg.svd(_a())
    assert type(result).__name__ == "SVDResult"
    assert all(type(part) is S.StrictArray for part in result)
    np.testing.assert_allclose(result.S.get(), np.linalg.svd(_a().get()).S)
    assert type(xp.linalg.eigh(xp.asarray(np.eye(2))).eigenvalues) is S.StrictArray


def test_explicit_host_copies_give_numpy_arrays():
    a = _a()
    for host in (a.get(), xp.asnumpy(a)):
        assert type(host) is np.ndarray
        np.testing.assert_array_equal(host, [[1.0, -2.0], [3.0, 4.0]])
    host = a.get()
    host[0, 0] = 7.0                     # a copy: the device array is unchanged
    assert float(a[0, 0]) == 1.0


def test_scalar_reads_work_and_are_counted_as_syncs():
    a = _a()
    scalars, copies = S.sync_count("scalar"), S.sync_count("copy")
    assert float(a[0, 0]) == 1.0 and int(a[1, 1]) == 4 and bool(a[1, 0] > 0)
    assert a[0, 1].item() == -2.0 and a.tolist() == [[1.0, -2.0], [3.0, 4.0]]
    assert S.sync_count("scalar") == scalars + 5 and S.sync_count("copy") == copies
    a.get()
    xp.asnumpy(a)
    assert S.sync_count("copy") == copies + 2
    assert S.sync_count() == scalars + copies + 7


def test_the_namespace_offers_only_what_cupy_offers():
    for missing in ("frompyfunc", "errstate", "nditer", "seterr", "fromiter", "lib", "ctypeslib"):
        assert hasattr(np, missing) and not hasattr(xp, missing), missing
    assert not hasattr(xp.add, "at")            # no ufunc.at before cupy 13: scatter_add
    assert not hasattr(_a(), "ctypes")
    np.testing.assert_array_equal(xp.add.reduce(_a(), axis=1).get(), [-1.0, 7.0])


def test_strict_arrays_refuse_pickling():
    import pickle
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(_a())


def test_tensors_on_the_strict_backend(strict_backend):
    assert B.xp is S.xp and B.get_backend() == "strict"
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert type(t._value) is S.StrictArray
    value = t.numpy()
    assert type(value) is np.ndarray
    np.testing.assert_array_equal((t @ t).numpy(), value @ value)
    before = B.sync_count()
    assert float(tf.reduce_sum(t)) == 10.0
    assert B.sync_count() > before
    with pytest.raises(TypeError, match="implicit conversion"):
        np.asarray(t._value)


def test_scatter_add_adds_repeated_indices(strict_backend):
    target = xp.zeros(3, np.float32)
    B.scatter_add(target, xp.asarray(np.array([0, 2, 0])), xp.asarray(np.ones(3, np.float32)))
    np.testing.assert_array_equal(target.get(), [2.0, 0.0, 1.0])


def test_the_generator_draws_the_numpy_backend_numbers():
    expected = np.random.default_rng(3).standard_normal(4, dtype=np.float32)
    got = xp.random.default_rng(3).standard_normal(size=4, dtype=np.float32)
    np.testing.assert_array_equal(got.get(), expected)


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="strict"):
        B.set_backend("torch")


def test_the_array_type_is_constructed_as_cupy_ndarray_is():
    a = xp.ndarray((2, 3), dtype=np.float32)
    assert type(a) is S.StrictArray and a.shape == (2, 3) and a.dtype == np.float32
