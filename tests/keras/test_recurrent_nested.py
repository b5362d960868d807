"""RNN over stacked cells (``RNN([cell, cell])``, ``StackedRNNCells``) and over cells with
nested states and inputs (tf.keras 2's "RNNs with nested input/output" guide section).

References: the stacked layer against the same cells run as separate layers (each checked
against numpy in test_recurrent.py), and a custom cell against a numpy loop."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers


def _seq(batch=3, steps=5, features=2, seed=0):
    return np.random.default_rng(seed).normal(size=(batch, steps, features)).astype("float32")


def _stack_and_layers():
    """RNN([LSTMCell(4), GRUCell(3)]) and LSTM(4) -> GRU(3) with the same weights."""
    x = _seq()
    stacked = layers.RNN([layers.LSTMCell(4), layers.GRUCell(3)], return_sequences=True,
                         return_state=True)
    stacked(x)
    lstm = layers.LSTM(4, return_sequences=True, return_state=True)
    gru = layers.GRU(3, return_sequences=True, return_state=True)
    h_seq = lstm(x)[0]
    gru(h_seq)
    lstm.set_weights([w.numpy() for w in stacked.cell.cells[0].weights])
    gru.set_weights([w.numpy() for w in stacked.cell.cells[1].weights])
    return x, stacked, lstm, gru


def test_stacked_cells_compute_the_stacked_layers():
    x, stacked, lstm, gru = _stack_and_layers()
    assert isinstance(stacked.cell, layers.StackedRNNCells)
    assert stacked.state_size == [[4, 4], 3]
    seq, (h1, c1), h2 = stacked(x)          # states nested per cell, as Keras 3
    ref_seq, ref_h1, ref_c1 = lstm(x)
    ref_out, ref_h2 = gru(ref_seq)
    np.testing.assert_allclose(seq.numpy(), ref_out.numpy(), rtol=1e-5, atol=1e-6)
    for got, want in ((h1, ref_h1), (c1, ref_c1), (h2, ref_h2)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_initial_states_nested_or_flat_and_their_errors():
    x, stacked, lstm, gru = _stack_and_layers()
    rng = np.random.default_rng(1)
    h0, c0, g0 = (rng.normal(size=(3, n)).astype("float32") for n in (4, 4, 3))
    nested = stacked(x, initial_state=[[h0, c0], g0])
    flat = stacked(x, initial_state=[h0, c0, g0])       # tf.keras 2 passed them flat
    ref_seq = lstm(x, initial_state=[h0, c0])[0]
    ref = gru(ref_seq, initial_state=[g0])[0]
    for out in (nested, flat):
        np.testing.assert_allclose(out[0].numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"initial_state has 2 tensor\(s\), the cell has 3"):
        stacked(x, initial_state=[h0, c0])
    with pytest.raises(ValueError, match=r"initial_state\[2\] has shape \(3, 4\), expected"):
        stacked(x, initial_state=[h0, c0, h0])


def test_stacked_cells_called_directly_and_their_config():
    cells = layers.StackedRNNCells([layers.SimpleRNNCell(3), layers.LSTMCell(2)])
    x = tf.constant(np.ones((2, 4), np.float32))
    states = cells.get_initial_state(batch_size=2)
    assert [type(s).__name__ for s in states] == ["list", "list"]
    out, new = cells(x, states)
    assert tuple(out.shape) == (2, 2) and cells.output_size == 2
    first = cells.cells[0]
    h = np.tanh(np.ones((2, 4)) @ first.kernel.numpy() + first.bias.numpy())
    np.testing.assert_allclose(new[0][0].numpy(), h, rtol=1e-5)
    np.testing.assert_allclose(out.numpy(), new[1][0].numpy())

    layer = layers.RNN(cells, name="stack")
    clone = layers.deserialize(layers.serialize(layer))
    assert isinstance(clone.cell, layers.StackedRNNCells)
    assert [type(c).__name__ for c in clone.cell.cells] == ["SimpleRNNCell", "LSTMCell"]
    assert [c.units for c in clone.cell.cells] == [3, 2]
    with pytest.raises(ValueError, match="non-empty list of cells"):
        layers.StackedRNNCells([])
    with pytest.raises(ValueError, match="call method and a state_size"):
        layers.StackedRNNCells([layers.Dense(2)])


def test_a_stacked_rnn_in_a_functional_model_trains_and_saves(tmp_path):
    inputs = keras.Input((None, 2))
    seq, states_1, state_2 = layers.RNN([layers.LSTMCell(4), layers.GRUCell(3)],
                                        return_state=True)(inputs)
    assert tuple(seq.shape) == (None, 3) and tuple(state_2.shape) == (None, 3)
    assert [tuple(s.shape) for s in states_1] == [(None, 4), (None, 4)]
    model = keras.Model(inputs, layers.Dense(1)(seq))
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse")
    x = _seq(16, 6, 2, seed=3)
    y = x.sum(axis=(1, 2))[:, None] / 6
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=15, batch_size=8, verbose=0)
    assert model.evaluate(x, y, verbose=0) < 0.5 * before
    model.save(tmp_path / "stacked.keras")
    loaded = keras.models.load_model(tmp_path / "stacked.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_dropout_in_stacked_cells_keeps_one_mask_per_sequence():
    # A pass-through first cell, then a GRU cell with input dropout, kernel of ones and no
    # recurrent kernel: every gate sees s = the sum of the kept (scaled) inputs, so with one
    # mask per sequence (Keras' rule) s is one of 0, 2, 4, 6 and fixed along each example.
    class Identity(layers.Layer):
        state_size = 3
        output_size = 3

        def call(self, inputs, states):
            return inputs, states

    gru = layers.GRUCell(2, dropout=0.5, kernel_initializer="ones",
                         recurrent_initializer="zeros")
    rnn = layers.RNN([Identity(), gru], return_sequences=True)
    x = np.ones((8, 6, 3), np.float32)
    tf.random.set_seed(5)
    out = rnn(x, training=True).numpy()[:, :, 0].astype(np.float64)

    def run(s):
        z, h, seq = 1 / (1 + np.exp(-s)), 0.0, []
        for _ in range(6):
            h = z * h + (1 - z) * np.tanh(s)
            seq.append(h)
        return np.array(seq)

    sums = []
    for example in out:
        matches = [s for s in (0.0, 2.0, 4.0, 6.0) if np.allclose(run(s), example, atol=1e-5)]
        assert len(matches) == 1, example
        sums.append(matches[0])
    assert len(set(sums)) > 1                         # the masks differ between examples
    np.testing.assert_allclose(rnn(x).numpy()[:, :, 0], np.tile(run(3.0), (8, 1)), rtol=1e-5)


def test_stateful_stacked_rnn_continues_and_resets():
    x = _seq(2, 4, 2, seed=6)
    rnn = layers.RNN([layers.LSTMCell(3), layers.SimpleRNNCell(2)], stateful=True,
                     return_state=True)
    keras.Sequential([keras.Input((4, 2), batch_size=2), rnn])
    assert [len(s) if isinstance(s, list) else 1 for s in rnn.states] == [2, 1]
    _, first_lstm, first_simple = rnn(x)
    _, _, second_simple = rnn(x)
    whole = layers.RNN([layers.LSTMCell(3), layers.SimpleRNNCell(2)], return_state=True)
    whole(x)
    whole.set_weights(rnn.get_weights())
    _, _, ref = whole(np.concatenate([x, x], axis=1))
    np.testing.assert_allclose(second_simple.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rnn.states[0][0].numpy(), whole(np.concatenate(
        [x, x], axis=1))[1][0].numpy(), rtol=1e-5, atol=1e-6)
    rnn.reset_states()
    assert all(not np.any(v.numpy()) for v in tf.nest.flatten(rnn.states))
    np.testing.assert_allclose(rnn(x)[2].numpy(), first_simple.numpy(), rtol=1e-6)


class _MatrixStateCell(layers.Layer):
    """Two states, a vector and a matrix; two inputs, a vector and a matrix sequence."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.state_size = [tf.TensorShape([3]), tf.TensorShape([2, 2])]
        self.output_size = [tf.TensorShape([3]), tf.TensorShape([2, 2])]

    def call(self, inputs, states):
        a, b = inputs
        s1, s2 = states
        new = (s1 * 0.5 + a, s2 * 0.5 + b)
        return new, list(new)


def _matrix_reference(a, b, keep):
    s1, s2 = np.zeros((a.shape[0], 3)), np.zeros((a.shape[0], 2, 2))
    for t in range(a.shape[1]):
        k = keep[:, t]
        s1 = np.where(k[:, None], 0.5 * s1 + a[:, t], s1)
        s2 = np.where(k[:, None, None], 0.5 * s2 + b[:, t], s2)
    return s1, s2


def test_nested_inputs_and_matrix_states_with_a_mask():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(2, 4, 3)).astype("float32")
    b = rng.normal(size=(2, 4, 2, 2)).astype("float32")
    keep = np.array([[True, True, False, True], [True, False, False, False]])
    rnn = layers.RNN(_MatrixStateCell(), return_state=True, return_sequences=True)
    (seq_1, seq_2), s1, s2 = rnn((a, b), mask=keep)
    ref_1, ref_2 = _matrix_reference(a, b, keep)
    np.testing.assert_allclose(s1.numpy(), ref_1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2.numpy(), ref_2, rtol=1e-5, atol=1e-6)
    assert tuple(seq_1.shape) == (2, 4, 3) and tuple(seq_2.shape) == (2, 4, 2, 2)
    # a masked step repeats the previous output (example 1 after its first step)
    np.testing.assert_allclose(seq_2.numpy()[1, 3], seq_2.numpy()[1, 0])

    ia, ib = keras.Input((None, 3)), keras.Input((None, 2, 2))
    out_1, out_2 = layers.RNN(_MatrixStateCell())((ia, ib))
    assert tuple(out_1.shape) == (None, 3) and tuple(out_2.shape) == (None, 2, 2)
    with pytest.raises(ValueError, match="one batch size and one number of timesteps"):
        rnn((a, b[:, :3]))
