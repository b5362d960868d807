"""MKL's products (minitf/mkl_blas.py, the optional ``[mkl]`` extra): the choice of library,
and, where MKL is installed, its products split over the thread pool against float64 numpy
references in every layout it reads in place."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import mkl_blas, thread_pool


@pytest.fixture
def forced_mkl(monkeypatch):
    """MKL on whatever CPU this is, or a skip where it cannot run here."""
    monkeypatch.setenv("MINITF_BLAS", "mkl")
    mkl_blas.reset()
    try:
        if B.get_backend() != "numpy" or not mkl_blas.active():
            pytest.skip("MKL not installed (pip install 'minitf[mkl]'), or no thread pool")
        yield
    finally:
        monkeypatch.delenv("MINITF_BLAS")
        mkl_blas.reset()


def test_an_unknown_choice_names_the_variable_and_the_choices(monkeypatch):
    monkeypatch.setenv("MINITF_BLAS", "atlas")
    with pytest.raises(ValueError, match=r"MINITF_BLAS='atlas'.*'auto', 'mkl' or 'openblas'"):
        mkl_blas.choice()


def test_openblas_or_no_installation_leaves_products_to_numpy(monkeypatch):
    a = np.ones((256, 256), np.float32)
    try:
        monkeypatch.setenv("MINITF_BLAS", "openblas")
        mkl_blas.reset()
        assert not mkl_blas.active() and mkl_blas.product(a, a) is None
        monkeypatch.setenv("MINITF_BLAS", "mkl")
        monkeypatch.setattr(mkl_blas, "_find_library", lambda: None)
        mkl_blas.reset()
        assert not mkl_blas.active() and mkl_blas.product(a, a) is None
        np.testing.assert_array_equal(tf.matmul(a, a).numpy(), a @ a)
    finally:
        monkeypatch.delenv("MINITF_BLAS")
        mkl_blas.reset()


def test_auto_wants_an_intel_cpu(tmp_path):
    for vendor, want in (("GenuineIntel", True), ("AuthenticAMD", False)):
        info = tmp_path / vendor
        info.write_text(f"processor\t: 0\nvendor_id\t: {vendor}\nmodel\t\t: 1\n")
        assert mkl_blas._intel_cpu(str(info)) is want
    assert mkl_blas._intel_cpu(str(tmp_path / "missing")) is False


def _layouts(rng, m, k, n, dtype):
    """``(a, b)`` pairs of one product in every layout MKL reads in place."""
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    return [(a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b)),
            (np.ascontiguousarray(a.T).T, np.ascontiguousarray(b.T).T)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(128, 784, 512), (784, 128, 512), (1000, 300, 37),
                                   (37, 300, 1000), (129, 513, 257)])
def test_products_match_float64_numpy_in_every_layout(forced_mkl, m, k, n, dtype):
    rng = np.random.default_rng(m + k + n)
    tol = {"rtol": 1e-4, "atol": 1e-4 * np.sqrt(k)} if dtype == np.float32 else \
        {"rtol": 1e-12, "atol": 1e-12 * np.sqrt(k)}
    for a, b in _layouts(rng, m, k, n, dtype):
        got = mkl_blas.product(a, b)
        assert got is not None and got.dtype == dtype and got.flags.c_contiguous
        np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), **tol)
        out = np.full((m, n), np.nan, dtype)
        assert mkl_blas.product(a, b, out) is out
        np.testing.assert_array_equal(out, mkl_blas.product(a, b))   # the same bits again
    # tf.matmul (and its transpose flags) takes this path: the same bits as the product of
    # the same layout (the layout chooses the blocks, so it may change the rounding).
    a, b = _layouts(rng, m, k, n, dtype)[0]
    np.testing.assert_array_equal(tf.matmul(a, b).numpy(), mkl_blas.product(a, b))
    a_t = np.ascontiguousarray(a.T)
    np.testing.assert_array_equal(tf.matmul(a_t, b, transpose_a=True).numpy(),
                                  mkl_blas.product(a_t.T, b))


def test_large_products_split_over_the_pool_and_cover_every_block(forced_mkl):
    """Rows (m >= n) or columns in 16-aligned blocks, one per thread: each output element
    written once, against a float64 reference (NaN-filled output beforehand)."""
    if not thread_pool.active():
        pytest.skip("no thread pool")
    rng = np.random.default_rng(3)
    for m, k, n in [(1001, 64, 40), (40, 64, 1001), (17, 4000, 33)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        out = np.full((m, n), np.nan, np.float32)
        assert mkl_blas.product(a, b, out) is out
        np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_blocks_follow_the_stored_rows_of_the_largest_matrix():
    """A batch of 128 against a (784, 512) weight: the forward product cuts the weight's rows
    (the inner dimension), the input gradient ``g @ W.T`` its rows too (C's columns), the
    weight gradient ``x.T @ g`` the rows it writes; all on the same 16-aligned edges, which
    ``native.adam_parts`` uses for the update."""
    N, T = mkl_blas._NO_TRANS, mkl_blas._TRANS
    by_columns, by_rows, by_depth = mkl_blas._BY_COLUMNS, mkl_blas._BY_ROWS, mkl_blas._BY_DEPTH
    assert mkl_blas.blocks(128, 512, 784, 2, N, N) == (by_depth, 2, 400)       # x @ W
    assert mkl_blas.blocks(128, 784, 512, 2, N, T) == (by_columns, 2, 400)     # g @ W.T
    assert mkl_blas.blocks(784, 512, 128, 2, T, N) == (by_rows, 2, 400)        # x.T @ g
    assert mkl_blas.blocks(784, 512, 128, 4, T, N) == (by_rows, 4, 208)
    assert mkl_blas.blocks(128, 512, 784, 1, N, N) == (by_depth, 1, 784)
    # A stored transposed and the largest: its stored rows are the inner dimension.
    assert mkl_blas.blocks(600, 40, 500, 2, T, N) == (by_depth, 2, 256)
    assert mkl_blas.blocks(600, 40, 500, 2, N, N) == (by_rows, 2, 304)
    # Too short to cut where the rule says: the longest dimension instead.
    assert mkl_blas.blocks(8, 20, 20000, 2, N, T) == (by_depth, 2, 10000)
    # Small work: one block.
    assert mkl_blas.blocks(64, 64, 64, 2, N, N)[1] == 1


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inner_dimension_blocks_add_up_in_part_order(forced_mkl, monkeypatch, threads, dtype):
    """Cut along k (a weight's rows), the parts' partial products are added to C in the order
    of the parts: the same bits as MKL's products of each k block summed in that order with
    numpy, against a float64 reference too; 1,000 rows of k leave a short last block."""
    if not thread_pool.active():
        pytest.skip("no thread pool")
    from minitf import kernel_threads
    monkeypatch.setattr(kernel_threads, "count", lambda: threads)
    rng = np.random.default_rng(threads)
    m, k, n = 96, 1000, 300
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    by, parts, step = mkl_blas.blocks(m, n, k, threads)
    assert by == mkl_blas._BY_DEPTH and parts == threads
    out = np.full((m, n), np.nan, dtype)
    assert mkl_blas.product(a, b, out) is out
    want = None
    monkeypatch.setattr(kernel_threads, "count", lambda: 1)
    for lo in range(0, k, step):
        part = mkl_blas.product(np.ascontiguousarray(a[:, lo:lo + step]), b[lo:lo + step])
        assert part is not None
        want = part if want is None else want + part
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=tol, atol=tol * np.sqrt(k))
    np.testing.assert_array_equal(out, want)


def test_what_mkl_declines_numpy_computes(forced_mkl):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal((512, 256)).astype(np.float32)
    declined = [(a, b.astype(np.float64), None),             # mixed dtypes
                (a[:, ::2], b[::2], None),                    # strided views
                (a[:8, :8], b[:8, :8], None),                 # too small to pay
                (a, b[:, :10], None),                         # a 10-wide output
                (a.astype(np.int64), b.astype(np.int64), None),
                (a, b, np.empty((256, 256), np.float64)),     # out of another dtype
                (a, b, np.empty((256, 256), np.float32, order="F"))]
    big = np.zeros((512, 512), np.float32)
    declined.append((big, big, big))                          # out is an input
    for x, y, out in declined:
        assert mkl_blas.product(x, y, out) is None
    for x, y, _ in declined[:5]:
        np.testing.assert_allclose(tf.matmul(x, y).numpy(), x @ y, rtol=1e-5, atol=1e-4)
