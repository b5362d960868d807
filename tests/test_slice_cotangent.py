"""Slices' gradients kept as pieces (minitf.slice_cotangent): the same values as the dense
path, for disjoint, overlapping and repeated indices, mixed with whole-tensor reads, and in
higher-order passes."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf import slice_cotangent
from minitf.ops import registry


def _dense_slices(monkeypatch):
    """getitem's rule builds the zero-filled gradient of every slice (the path without
    pieces)."""
    monkeypatch.setattr(slice_cotangent, "ENABLED", False)


def _bits(a):
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def _grads(fn, *values):
    variables = [tf.Variable(v) for v in values]
    with tf.GradientTape() as tape:
        loss = fn(*variables)
    return [g.numpy() for g in tape.gradient(loss, variables)]


def test_unstacked_steps_get_their_own_gradient():
    x = np.arange(4 * 5 * 3, dtype=np.float32).reshape(4, 5, 3) / 10
    c = np.linspace(-2, 2, 5).astype(np.float32)

    def loss(v):
        steps = tf.unstack(v, axis=1)
        return sum(float(c[t]) * tf.reduce_sum(steps[t] * steps[t]) for t in range(5))

    (g,) = _grads(loss, x)
    np.testing.assert_allclose(g, 2 * x * c[None, :, None], rtol=1e-6)


def test_overlapping_repeated_and_whole_reads_add_up():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)).astype(np.float32)

    def loss(v):
        return (tf.reduce_sum(v[1:4] * 2.0) + tf.reduce_sum(v[2:6] * 3.0)      # overlap
                + tf.reduce_sum(tf.gather(v, [0, 0, 5]) * 5.0)                  # repeats
                + tf.reduce_sum(v[..., 1] * 7.0) + tf.reduce_sum(v * v)          # whole
                + v[3, 2] * 11.0 + v[3, 2] * 13.0)                               # scalars

    (g,) = _grads(loss, x)
    want = 2 * x
    want[1:4] += 2.0
    want[2:6] += 3.0
    want[0] += 10.0
    want[5] += 5.0
    want[:, 1] += 7.0
    want[3, 2] += 24.0
    np.testing.assert_allclose(g, want, rtol=1e-6)


def test_a_sliced_source_gets_a_dense_array_back():
    x = tf.Variable(np.ones((3, 4), np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(x[0]) + 3.0 * tf.reduce_sum(x[2, 1:3])
    g = tape.gradient(loss, x)
    assert isinstance(g, tf.Tensor) and type(g.numpy()) is np.ndarray
    np.testing.assert_array_equal(g.numpy(), [[1, 1, 1, 1], [0, 0, 0, 0], [0, 3, 3, 0]])


@pytest.mark.parametrize("pieces", [True, False])
def test_pieces_are_zero_filled_once(pieces, monkeypatch):
    dense_calls, zero_fills = [], []
    original_dense = slice_cotangent.SliceCotangent.dense
    monkeypatch.setattr(slice_cotangent.SliceCotangent, "dense",
                        lambda self: dense_calls.append(len(self.parts))
                        or original_dense(self))
    original_fill = registry.RAW.getitem_grad
    monkeypatch.setattr(registry.RAW, "getitem_grad",
                        lambda *a, **k: zero_fills.append(1) or original_fill(*a, **k))
    if not pieces:
        _dense_slices(monkeypatch)
    x = tf.Variable(np.ones((2, 8, 3), np.float32))
    with tf.GradientTape() as tape:
        loss = sum(tf.reduce_sum(step) for step in tf.unstack(x, axis=1))
    g = tape.gradient(loss, x)
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 8, 3)))
    assert (dense_calls, zero_fills) == (([8], []) if pieces else ([], [1] * 8))


# LSTM with a recurrent activation that ``lstm_ops.lstm_sequence`` does not run: its steps are
# per-step ops, which slice the gates and the projected sequence.
PER_STEP_LSTM = {"recurrent_activation": "hard_sigmoid"}


@pytest.mark.parametrize("cell", ["LSTM", "GRU", "SimpleRNN"])
def test_recurrent_layers_gradients_are_the_dense_paths_bits(cell, monkeypatch):
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((5, 7, 3)).astype(np.float32))
    options = PER_STEP_LSTM if cell == "LSTM" else {}
    layer = getattr(tf.keras.layers, cell)(6, return_sequences=True, **options)
    layer.build((None, 7, 3))

    def grads():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(layer(x)))
        return [g.numpy() for g in tape.gradient(loss, layer.trainable_variables)]

    pieces = grads()
    _dense_slices(monkeypatch)
    dense = grads()
    for a, b in zip(pieces, dense):
        np.testing.assert_array_equal(_bits(a), _bits(b))


@pytest.mark.parametrize("pieces", [True, False])
def test_a_traced_step_replays_the_pieces_as_one_op(pieces, monkeypatch):
    if not pieces:
        _dense_slices(monkeypatch)
    rng = np.random.default_rng(2)
    x = tf.constant(rng.standard_normal((4, 6, 3)).astype(np.float32))
    layer = tf.keras.layers.LSTM(5, **PER_STEP_LSTM)
    layer.build((None, 6, 3))
    calls = []
    original = registry.OPS["slice_pieces"].forward
    monkeypatch.setattr(registry.OPS["slice_pieces"], "forward",
                        lambda *a, **k: calls.append(len(a)) or original(*a, **k))

    def loss_grads():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(layer(x)))
        return tape.gradient(loss, layer.trainable_variables)

    traced = [g.numpy() for g in tf.function(loss_grads)()]
    eager = [g.numpy() for g in loss_grads()]
    for a, b in zip(traced, eager):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # the projection's 6 steps and each step's 4 gates: 7 ops, each seen by the trace
    assert (len(calls) > 0) == pieces and (not pieces or 6 in calls and 4 in calls)


def test_second_order_through_slices():
    x = tf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(x[0] ** 3) + tf.reduce_sum(x[:, 1] ** 2)
        g = inner.gradient(y, x)
        z = tf.reduce_sum(g * g)
    gg = outer.gradient(z, x).numpy()
    # g = [[3a^2, 3b^2 + 2b], [0, 2d]]; dz/dx = 2 g dg/dx
    a, b, d = 1.0, 2.0, 4.0
    want = [[2 * 3 * a * a * 6 * a, 2 * (3 * b * b + 2 * b) * (6 * b + 2)], [0.0, 2 * 2 * d * 2]]
    np.testing.assert_allclose(gg, want)


def test_add_at_adds_repeated_indices_and_basic_keys_once():
    xp = B.xp
    t = xp.zeros(5)
    slice_cotangent.add_at(t, (xp.asarray([1, 1, 3]),), xp.asarray([1.0, 2.0, 4.0]))
    slice_cotangent.add_at(t, (slice(0, 2),), xp.asarray([10.0, 10.0]))
    np.testing.assert_array_equal(B.to_numpy(t), [10, 13, 0, 4, 0])
    assert slice_cotangent.is_basic((slice(None), 3, None, Ellipsis, np.int64(2)))
    assert not slice_cotangent.is_basic((np.array([0]),))
    assert not slice_cotangent.is_basic((True,))


@pytest.mark.parametrize("first_whole", [True, False])
def test_overlapping_pieces_add_in_the_dense_paths_order(first_whole, monkeypatch):
    # float32 sums of values of very different sizes round differently in another order
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 5)).astype(np.float32)
    w = [(rng.standard_normal((4, 5)) * 10.0 ** k).astype(np.float32) for k in (-3, 0, 4)]

    def loss(v):
        whole = tf.reduce_sum(v * tf.constant(rng.standard_normal((7, 5)).astype(np.float32)))
        parts = (tf.reduce_sum(v[0:4] * w[0]) + tf.reduce_sum(v[2:6] * w[1])
                 + tf.reduce_sum(v[3:7] * w[2]))
        return whole + parts if first_whole else parts + whole

    state = rng.bit_generator.state
    (pieces,) = _grads(loss, x)
    _dense_slices(monkeypatch)
    rng.bit_generator.state = state
    (dense,) = _grads(loss, x)
    np.testing.assert_array_equal(_bits(pieces), _bits(dense))
