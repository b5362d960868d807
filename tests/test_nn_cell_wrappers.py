"""Tests of tf.nn.RNNCellDropoutWrapper / RNNCellResidualWrapper / RNNCellDeviceWrapper around
Keras recurrent cells, checked against the unwrapped cell with the same weights."""
import numpy
import pytest

import minitf as tf
from minitf import keras


X = numpy.random.default_rng(3).normal(size=(4, 5, 6)).astype(numpy.float32)


def _rnn_pair(wrap, units=6, cell_type=keras.layers.SimpleRNNCell):
    """(RNN over the wrapped cell, RNN over the same cell unwrapped), both returning
    sequences and states."""
    cell = cell_type(units)
    wrapped = keras.layers.RNN(wrap(cell), return_sequences=True, return_state=True)
    plain = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    return wrapped, plain


def test_residual_wrapper_adds_the_inputs_to_the_outputs():
    wrapped, plain = _rnn_pair(tf.nn.RNNCellResidualWrapper)
    out, state = wrapped(X)
    ref_out, ref_state = plain(X)
    numpy.testing.assert_allclose(out.numpy(), ref_out.numpy() + X, rtol=1e-6)
    numpy.testing.assert_allclose(state.numpy(), ref_state.numpy(), rtol=1e-6)
    assert len(wrapped.trainable_weights) == 3


def test_residual_wrapper_with_residual_fn_and_lstm_states():
    wrapped, plain = _rnn_pair(
        lambda c: tf.nn.RNNCellResidualWrapper(c, residual_fn=lambda i, o: o - 2.0 * i),
        cell_type=keras.layers.LSTMCell)
    out, h, c = wrapped(X)
    ref_out, ref_h, ref_c = plain(X)
    numpy.testing.assert_allclose(out.numpy(), ref_out.numpy() - 2.0 * X, rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(c.numpy(), ref_c.numpy(), rtol=1e-6)


def test_residual_wrapper_shape_mismatch():
    layer = keras.layers.RNN(tf.nn.RNNCellResidualWrapper(keras.layers.SimpleRNNCell(3)))
    with pytest.raises(ValueError, match=r"RNNCellResidualWrapper: the inputs of shape \(4, 6\) "
                                         r"and the cell's outputs of shape \(4, 3\) cannot be "
                                         r"added"):
        layer(X)


def test_device_wrapper_runs_the_cell_unchanged_and_round_trips_its_config():
    wrapped, plain = _rnn_pair(lambda c: tf.nn.RNNCellDeviceWrapper(c, "/cpu:0"))
    numpy.testing.assert_allclose(wrapped(X)[0].numpy(), plain(X)[0].numpy(), rtol=1e-6)
    config = wrapped.cell.get_config()
    assert config["device"] == "/cpu:0"
    clone = tf.nn.RNNCellDeviceWrapper.from_config(config)
    assert isinstance(clone.cell, keras.layers.SimpleRNNCell) and clone.cell.units == 6


def test_dropout_wrapper_keep_all_is_the_cell():
    wrapped, plain = _rnn_pair(tf.nn.RNNCellDropoutWrapper)
    numpy.testing.assert_allclose(wrapped(X)[0].numpy(), plain(X)[0].numpy(), rtol=1e-6)


def test_dropout_wrapper_output_dropout():
    wrapped, plain = _rnn_pair(lambda c: tf.nn.RNNCellDropoutWrapper(c, output_keep_prob=0.5,
                                                                     seed=1))
    out, state = wrapped(X)
    ref_out, ref_state = plain(X)
    out, ref_out = out.numpy(), ref_out.numpy()
    dropped = out == 0
    # Kept outputs are scaled by 1 / keep_prob; the states are not touched.
    numpy.testing.assert_allclose(out[~dropped], 2.0 * ref_out[~dropped], rtol=1e-5)
    assert 0.2 < dropped.mean() < 0.8
    numpy.testing.assert_allclose(state.numpy(), ref_state.numpy(), rtol=1e-6)


def test_variational_dropout_uses_one_mask_for_every_step_and_example():
    wrapped, plain = _rnn_pair(lambda c: tf.nn.RNNCellDropoutWrapper(
        c, output_keep_prob=0.5, variational_recurrent=True, dtype=tf.float32, seed=4))
    out = wrapped(X)[0].numpy()
    ref = plain(X)[0].numpy()
    mask = (out != 0)
    assert (mask == mask[:1, :1]).all()     # the same units dropped everywhere
    assert 0 < mask[0, 0].sum() < 6
    numpy.testing.assert_allclose(out, ref * 2.0 * mask[:1, :1], rtol=1e-5)


def test_dropout_wrapper_state_dropout_changes_the_recurrence_and_trains():
    cell = keras.layers.GRUCell(6)
    layer = keras.layers.RNN(tf.nn.RNNCellDropoutWrapper(cell, state_keep_prob=0.5, seed=2))
    with tf.GradientTape() as tape:
        out = layer(X)
        loss = tf.reduce_sum(out ** 2)
    assert not numpy.allclose(out.numpy(), keras.layers.RNN(cell)(X).numpy())
    grads = tape.gradient(loss, layer.trainable_weights)
    assert len(grads) == 3 and all(g is not None for g in grads)
    filtered = keras.layers.RNN(tf.nn.RNNCellDropoutWrapper(
        cell, state_keep_prob=0.5, dropout_state_filter_visitor=lambda s: False))
    numpy.testing.assert_allclose(filtered(X).numpy(), keras.layers.RNN(cell)(X).numpy(),
                                  rtol=1e-6)


def test_wrapper_errors():
    cell = keras.layers.SimpleRNNCell(2)
    with pytest.raises(ValueError, match=r"RNNCellDropoutWrapper: input_keep_prob must be a "
                                         r"number between 0 and 1, got 1.5"):
        tf.nn.RNNCellDropoutWrapper(cell, input_keep_prob=1.5)
    with pytest.raises(ValueError, match="with variational_recurrent=True, dtype must be given"):
        tf.nn.RNNCellDropoutWrapper(cell, output_keep_prob=0.5, variational_recurrent=True)
    with pytest.raises(ValueError, match="input_keep_prob < 1, input_size must be given"):
        tf.nn.RNNCellDropoutWrapper(cell, input_keep_prob=0.5, variational_recurrent=True,
                                    dtype=tf.float32)
    with pytest.raises(TypeError, match=r"RNNCellResidualWrapper: cell must be a recurrent cell "
                                        r"with a state_size and call\(inputs, states\), got 3"):
        tf.nn.RNNCellResidualWrapper(3)
