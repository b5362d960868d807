"""Bidirectional and TimeDistributed: merge modes, states, order of the backward outputs,
configs, tf.function and errors, against numpy references (``rnn_reference.py``)."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers
import rnn_reference as ref

RNG = np.random.default_rng(2)


def _randomize(layer, seed=1):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.standard_normal(v.shape.as_list()) * 0.5)


def _lstm_reference(rnn_layer, x, initial=(), backwards=False):
    cell = rnn_layer.cell
    return ref.lstm(x, cell.kernel.numpy(), cell.recurrent_kernel.numpy(), cell.bias.numpy(),
                    *initial, backwards=backwards)


MERGES = {"concat": lambda a, b: np.concatenate([a, b], axis=-1), "sum": np.add,
          "mul": np.multiply, "ave": lambda a, b: (a + b) / 2}


@pytest.mark.parametrize("merge_mode", sorted(MERGES) + [None])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_bidirectional_lstm_matches_reference(merge_mode, return_sequences):
    x = RNG.standard_normal((3, 5, 2))
    bi = layers.Bidirectional(layers.LSTM(4, return_sequences=return_sequences,
                                          dtype="float64"),
                              merge_mode=merge_mode, dtype="float64")
    bi.build((None, 5, 2))
    _randomize(bi)
    forward_seq, _ = _lstm_reference(bi.forward_layer, x)
    backward_seq, _ = _lstm_reference(bi.backward_layer, x, backwards=True)
    if return_sequences:
        # the backward outputs come back in input time order
        forward, backward = forward_seq, backward_seq[:, ::-1]
    else:
        forward, backward = forward_seq[:, -1], backward_seq[:, -1]
    got = bi(x)
    if merge_mode is None:
        assert isinstance(got, list) and len(got) == 2
        np.testing.assert_allclose(got[0].numpy(), forward, rtol=1e-10)
        np.testing.assert_allclose(got[1].numpy(), backward, rtol=1e-10)
    else:
        np.testing.assert_allclose(got.numpy(), MERGES[merge_mode](forward, backward),
                                   rtol=1e-10)
    out_shape = bi.compute_output_shape((None, 5, 2))
    width = 8 if merge_mode == "concat" else 4
    one = (None, 5, width) if return_sequences else (None, width)
    assert out_shape == ([one, one] if merge_mode is None else one)


def test_bidirectional_states_and_initial_state():
    x = RNG.standard_normal((2, 4, 3))
    bi = layers.Bidirectional(layers.LSTM(3, return_state=True, dtype="float64"),
                              dtype="float64")
    bi.build((None, 4, 3))
    _randomize(bi)
    initial = [RNG.standard_normal((2, 3)) for _ in range(4)]
    out, fh, fc, bh, bc = bi(x, initial_state=initial)
    _, (want_fh, want_fc) = _lstm_reference(bi.forward_layer, x, initial[:2])
    _, (want_bh, want_bc) = _lstm_reference(bi.backward_layer, x, initial[2:], backwards=True)
    for got, want in [(fh, want_fh), (fc, want_fc), (bh, want_bh), (bc, want_bc)]:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(out.numpy(), np.concatenate([want_fh, want_bh], -1),
                               rtol=1e-10)
    assert bi.compute_output_shape((None, 4, 3)) == ((None, 6), (None, 3), (None, 3),
                                                     (None, 3), (None, 3))
    with pytest.raises(ValueError, match="even number of tensors"):
        bi(x, initial_state=initial[:3])


def test_bidirectional_copies_the_layer():
    lstm = layers.LSTM(2, name="enc")
    bi = layers.Bidirectional(lstm)
    assert bi.forward_layer is not lstm
    assert (bi.forward_layer.name, bi.backward_layer.name) == ("forward_enc", "backward_enc")
    assert (bi.forward_layer.go_backwards, bi.backward_layer.go_backwards) == (False, True)
    bi(np.zeros((1, 3, 2), "float32"))
    assert [v.path.split("/", 1)[1] for v in bi.weights] == [
        "forward_layer/cell/kernel", "forward_layer/cell/recurrent_kernel",
        "forward_layer/cell/bias", "backward_layer/cell/kernel",
        "backward_layer/cell/recurrent_kernel", "backward_layer/cell/bias"]
    assert not lstm.built


def test_bidirectional_with_explicit_backward_layer_and_weights():
    forward = layers.GRU(3)
    backward = layers.SimpleRNN(3, go_backwards=True)
    bi = layers.Bidirectional(forward, backward_layer=backward, merge_mode="sum")
    assert bi.backward_layer is backward
    x = RNG.standard_normal((2, 4, 2)).astype("float32")
    y = bi(x)
    np.testing.assert_allclose(y.numpy(), (bi.forward_layer(x) + backward(x)).numpy(),
                               rtol=1e-6)
    weights = bi.get_weights()
    same = layers.Bidirectional(layers.GRU(3), backward_layer=layers.SimpleRNN(
        3, go_backwards=True), merge_mode="sum", weights=weights)
    np.testing.assert_allclose(same(x).numpy(), y.numpy(), rtol=1e-6)


def test_bidirectional_config_round_trip_and_errors():
    bi = layers.Bidirectional(layers.GRU(3, return_sequences=True), merge_mode="ave")
    entry = layers.serialize(bi)
    config = entry["config"]
    assert config["merge_mode"] == "ave"
    assert config["layer"]["class_name"] == "GRU"
    assert config["layer"]["config"]["name"] == bi.forward_layer.name
    assert config["backward_layer"]["config"]["go_backwards"] is True
    again = layers.deserialize(entry)
    assert again.merge_mode == "ave" and again.return_sequences
    assert again.forward_layer.name == bi.forward_layer.name
    with pytest.raises(ValueError, match="invalid merge_mode 'max'"):
        layers.Bidirectional(layers.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="recurrent layer"):
        layers.Bidirectional(layers.Dense(2))
    with pytest.raises(ValueError, match="different go_backwards"):
        layers.Bidirectional(layers.LSTM(2), backward_layer=layers.LSTM(2))
    with pytest.raises(ValueError, match="same return_sequences"):
        layers.Bidirectional(layers.LSTM(2), backward_layer=layers.LSTM(
            2, go_backwards=True, return_sequences=True))


def test_bidirectional_in_tf_function_over_two_calls():
    bi = layers.Bidirectional(layers.GRU(3, return_sequences=True, dtype="float64"),
                              dtype="float64")
    bi.build((None, 4, 2))
    _randomize(bi)

    @tf.function
    def run(x):
        return bi(x)

    for _ in range(2):
        x = RNG.standard_normal((2, 4, 2))
        cell_f, cell_b = bi.forward_layer.cell, bi.backward_layer.cell
        f, _ = ref.gru(x, cell_f.kernel.numpy(), cell_f.recurrent_kernel.numpy(),
                       cell_f.bias.numpy())
        b, _ = ref.gru(x, cell_b.kernel.numpy(), cell_b.recurrent_kernel.numpy(),
                       cell_b.bias.numpy(), backwards=True)
        np.testing.assert_allclose(run(x).numpy(), np.concatenate([f, b[:, ::-1]], -1),
                                   rtol=1e-10)


# --- TimeDistributed -----------------------------------------------------------------------------

def test_time_distributed_dense_equals_dense_on_the_folded_batch():
    x = RNG.standard_normal((3, 5, 4)).astype("float32")
    dense = layers.Dense(6, activation="relu")
    td = layers.TimeDistributed(dense)
    y = td(x)
    assert y.shape == (3, 5, 6)
    want = dense(x.reshape(15, 4)).numpy().reshape(3, 5, 6)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(
        y.numpy(), np.maximum(x @ dense.kernel.numpy() + dense.bias.numpy(), 0), rtol=1e-5,
        atol=1e-6)
    assert [v.path.split("/", 1)[1] for v in td.weights] == ["layer/kernel", "layer/bias"]
    assert td.compute_output_shape((None, 5, 4)) == (None, 5, 6)


def test_time_distributed_conv_and_symbolic_shapes():
    inputs = keras.Input((4, 8, 8, 3))
    conv = layers.Conv2D(5, 3)
    out = layers.TimeDistributed(conv)(inputs)
    assert tuple(out.shape) == (None, 4, 6, 6, 5)
    x = RNG.standard_normal((2, 4, 8, 8, 3)).astype("float32")
    model = keras.Model(inputs, out)
    y = model(x).numpy()
    for t in range(4):
        np.testing.assert_allclose(y[:, t], conv(x[:, t]).numpy(), rtol=1e-5, atol=1e-5)


def test_time_distributed_gradients_and_tf_function():
    td = layers.TimeDistributed(layers.Dense(2, dtype="float64"), dtype="float64")
    x = tf.constant(RNG.standard_normal((2, 3, 4)))

    @tf.function
    def loss(x):
        with tf.GradientTape() as tape:
            value = tf.reduce_sum(td(x) ** 2)
        return value, tape.gradient(value, td.layer.kernel)

    for scale in (1.0, 2.0):
        value, grad = loss(x * scale)
        xs = x.numpy() * scale
        y = xs @ td.layer.kernel.numpy() + td.layer.bias.numpy()
        np.testing.assert_allclose(value.numpy(), (y ** 2).sum(), rtol=1e-10)
        np.testing.assert_allclose(grad.numpy(), np.einsum("bti,btj->ij", xs, 2 * y),
                                   rtol=1e-10)


def test_time_distributed_config_and_errors():
    td = layers.TimeDistributed(layers.Dense(3, use_bias=False))
    again = layers.deserialize(layers.serialize(td))
    assert type(again.layer) is layers.Dense and again.layer.use_bias is False
    with pytest.raises(ValueError, match=r"at least 3 dimensions \(batch, time, \.\.\.\), got "
                                         r"shape \(2, 3\)"):
        td(np.zeros((2, 3), "float32"))
    with pytest.raises(ValueError, match="must be a keras layer instance"):
        layers.TimeDistributed(lambda x: x)
    # a mask passes through (Keras: TimeDistributed supports masking)
    from minitf.keras.layers.masking import get_mask
    mask = np.array([[True, False, True], [False, True, True]])
    out = td(np.ones((2, 3, 4), "float32"), mask=mask)
    np.testing.assert_array_equal(get_mask(out).numpy(), mask)


def test_sequence_model_with_wrappers_trains():
    """Tag every step of a sequence: positive where the running sum is positive."""
    tf.random.set_seed(1)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((96, 7, 2)).astype("float32")
    y = (np.cumsum(x[..., :1], axis=1) > 0).astype("float32")
    model = keras.Sequential([
        keras.Input((7, 2)), layers.Bidirectional(layers.GRU(6, return_sequences=True)),
        layers.TimeDistributed(layers.Dense(1, activation="sigmoid"))])
    model.compile(optimizer=keras.optimizers.Adam(0.03), loss="binary_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=12, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < 0.6 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.85
