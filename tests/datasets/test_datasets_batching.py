"""BatchIterator: coverage, seeding, drop_remainder, prefetch and exact resumption."""

import itertools
import threading
import time

import numpy as np
import pytest

from datasets import BatchIterator

N, BS = 103, 10


def _data(n=N):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    y = np.arange(n, dtype=np.int64)
    return x, y


def _take(it, count):
    return [(xb.copy(), yb.copy()) for xb, yb in itertools.islice(it, count)]


def _same(a, b):
    assert len(a) == len(b)
    for (xa, ya), (xb, yb) in zip(a, b):
        np.testing.assert_array_equal(xa, xb)
        np.testing.assert_array_equal(ya, yb)


@pytest.mark.parametrize("prefetch", [0, 2])
def test_each_epoch_covers_all_samples_once(prefetch):
    x, y = _data()
    it = BatchIterator(x, y, BS, prefetch=prefetch)
    assert len(it) == 11
    for epoch in range(3):
        assert it.epoch == epoch
        batches = list(it.epoch_batches())
        assert [len(yb) for _, yb in batches] == [10] * 10 + [3]
        seen = np.concatenate([yb for _, yb in batches])
        assert sorted(seen.tolist()) == list(range(N))
        for xb, yb in batches:  # x and y stay aligned
            np.testing.assert_array_equal(xb[:, 0], 2 * yb)
    assert it.epoch == 3 and it.batch_index == 0
    it.close()


def test_seeded_reproducibility_and_epoch_orders():
    x, y = _data()
    a = _take(BatchIterator(x, y, BS, seed=5), 33)
    b = _take(BatchIterator(x, y, BS, seed=5), 33)
    c = _take(BatchIterator(x, y, BS, seed=6), 33)
    _same(a, b)
    assert not np.array_equal(a[0][1], c[0][1])
    orders = [np.concatenate([yb for _, yb in a[e * 11:(e + 1) * 11]]) for e in range(3)]
    assert not np.array_equal(orders[0], orders[1])
    assert not np.array_equal(orders[1], orders[2])


def test_no_shuffle_is_in_order():
    x, y = _data()
    batches = _take(BatchIterator(x, y, BS, shuffle=False), 12)
    np.testing.assert_array_equal(np.concatenate([yb for _, yb in batches[:11]]), np.arange(N))
    np.testing.assert_array_equal(batches[11][1], np.arange(10))


def test_drop_remainder():
    x, y = _data()
    it = BatchIterator(x, y, BS, drop_remainder=True)
    assert len(it) == 10
    for _ in range(2):
        batches = list(it.epoch_batches())
        assert [len(yb) for _, yb in batches] == [10] * 10
        assert len(set(np.concatenate([yb for _, yb in batches]).tolist())) == 100
    with pytest.raises(ValueError, match="no batches"):
        BatchIterator(x[:5], y[:5], BS, drop_remainder=True)


def test_normalize_and_copies():
    x, y = _data()
    it = BatchIterator(x, y, BS, shuffle=False, normalize=lambda b: b / 2)
    xb, yb = next(it)
    np.testing.assert_array_equal(xb, x[:10] / 2)
    yb[:] = -1  # batches are copies: the data is untouched
    assert y[0] == 0


def test_epoch_batches_after_partial_epoch():
    x, y = _data()
    it = BatchIterator(x, y, BS)
    first = _take(it, 4)
    assert (it.epoch, it.batch_index) == (0, 4)
    rest = list(it.epoch_batches())
    assert len(rest) == 7 and it.epoch == 1
    _same(first + rest, _take(BatchIterator(x, y, BS), 11))


@pytest.mark.parametrize("prefetch_a, prefetch_b", [(0, 0), (2, 2), (0, 2), (2, 0)])
@pytest.mark.parametrize("stop_at", [4, 11, 15, 30])
def test_restore_mid_stream_matches_uninterrupted(prefetch_a, prefetch_b, stop_at):
    x, y = _data()
    total = 3 * 11
    reference = _take(BatchIterator(x, y, BS, seed=3), total)

    original = BatchIterator(x, y, BS, seed=3, prefetch=prefetch_a)
    head = _take(original, stop_at)
    state = original.state_dict()
    assert state["epoch"] * 11 + state["batch_index"] == stop_at

    restored = BatchIterator(x, y, BS, seed=12345, prefetch=prefetch_b)  # seed comes from state
    _take(restored, 5)  # its own position is discarded too
    restored.load_state_dict(state)
    _same(head + _take(restored, total - stop_at), reference)
    _same(head + _take(original, total - stop_at), reference)
    original.close()
    restored.close()


def test_state_has_only_plain_values():
    x, y = _data()
    it = BatchIterator(x, y, BS, prefetch=2)
    _take(it, 3)
    state = it.state_dict()
    for key, value in state.items():
        assert type(value) in (int, str) or isinstance(value, np.ndarray), key
        if isinstance(value, np.ndarray):
            assert value.dtype.kind in "iu"
    assert state["batch_index"] == 3 and state["epoch"] == 0
    it.close()


def test_prefetch_state_counts_received_batches_only():
    x, y = _data()
    plain = BatchIterator(x, y, BS)
    fetched = BatchIterator(x, y, BS, prefetch=3)
    _take(plain, 2)
    _take(fetched, 2)
    time.sleep(0.05)  # let the thread run ahead and fill its queue
    assert fetched.batch_index == 2
    a, b = plain.state_dict(), fetched.state_dict()
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    fetched.close()


def test_state_round_trips_through_hdf5(tmp_path):
    h5py = pytest.importorskip("h5py")
    x, y = _data()
    it = BatchIterator(x, y, BS, seed=9)
    _take(it, 14)
    with h5py.File(tmp_path / "s.h5", "w") as f:
        for key, value in it.state_dict().items():
            f[key] = value
    with h5py.File(tmp_path / "s.h5", "r") as f:
        state = {key: f[key][()] for key in f}
    restored = BatchIterator(x, y, BS)
    restored.load_state_dict(state)
    _same(_take(restored, 20), _take(it, 20))


def test_load_state_dict_rejects_mismatch():
    x, y = _data()
    state = BatchIterator(x, y, BS).state_dict()
    with pytest.raises(ValueError, match="batch_size"):
        BatchIterator(x, y, 7).load_state_dict(state)
    with pytest.raises(ValueError, match="num_samples"):
        BatchIterator(x[:50], y[:50], BS).load_state_dict(state)
    bad = dict(state, permutation=np.zeros(N, np.int64))
    with pytest.raises(ValueError, match="permutation"):
        BatchIterator(x, y, BS).load_state_dict(bad)


def test_prefetch_error_reaches_consumer_without_advancing():
    x, y = _data()
    calls = []

    def flaky(b):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("boom")
        return b

    it = BatchIterator(x, y, BS, normalize=flaky, prefetch=2)
    _take(it, 2)
    with pytest.raises(RuntimeError, match="boom"):
        next(it)
    assert it.batch_index == 2
    xb, yb = next(it)  # the thread restarts from the same place
    _same([(xb, yb)], _take(BatchIterator(x, y, BS), 3)[2:])
    it.close()


def test_close_stops_thread_and_invalid_arguments():
    x, y = _data()
    before = threading.active_count()
    it = BatchIterator(x, y, BS, prefetch=1)
    next(it)
    it.close()
    assert threading.active_count() == before
    with pytest.raises(ValueError):
        BatchIterator(x, y[:5], BS)
    with pytest.raises(ValueError):
        BatchIterator(x, y, 0)
    with pytest.raises(ValueError):
        BatchIterator(x, y, BS, seed=-1)


def test_around_batch_wraps_each_prefetched_batch_and_its_normalize():
    """The prefetch thread enters ``around_batch()`` around every batch it prepares, with the
    user's ``normalize`` running inside it."""
    x, y = _data()
    events = []

    class Around:
        def __enter__(self):
            events.append(("enter", threading.current_thread().name))

        def __exit__(self, *exc):
            events.append(("exit", threading.current_thread().name))

    def normalize(b):
        events.append(("normalize", threading.current_thread().name))
        return b

    it = BatchIterator(x, y, BS, normalize=normalize, prefetch=2, around_batch=Around)
    _take(it, 3)
    it.close()
    main = threading.current_thread().name
    assert events and all(name != main for _, name in events)
    kinds = [kind for kind, _ in events]
    assert kinds[:6] == ["enter", "normalize", "exit"] * 2
    with pytest.raises(TypeError, match="around_batch"):
        BatchIterator(x, y, BS, around_batch=3)
