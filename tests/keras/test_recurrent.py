"""SimpleRNN, LSTM, GRU, their cells and RNN(cell): outputs against the numpy references of
``rnn_reference.py`` (Keras 3's equations), gradients, tf.function, training, configs, errors."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers
from minitf.testing import check_grads, check_variable_grads
import rnn_reference as ref

RNG = np.random.default_rng(0)


def _seq(batch=3, steps=5, features=4, dtype="float64"):
    return RNG.standard_normal((batch, steps, features)).astype(dtype)


def _weights(layer):
    cell = layer.cell
    bias = None if cell.bias is None else cell.bias.numpy()
    return cell.kernel.numpy(), cell.recurrent_kernel.numpy(), bias


def _reference(layer, x, initial=None, reset_after=True):
    kernel, recurrent, bias = _weights(layer)
    initial = initial or []
    backwards = layer.go_backwards
    if isinstance(layer, layers.LSTM):
        return ref.lstm(x, kernel, recurrent, bias, *initial, backwards=backwards)
    if isinstance(layer, layers.GRU):
        return ref.gru(x, kernel, recurrent, bias, *initial,
                       reset_after=layer.reset_after, backwards=backwards)
    return ref.simple_rnn(x, kernel, recurrent, bias, *initial, backwards=backwards)


def _randomize(layer, scale=0.5):
    rng = np.random.default_rng(1)
    for v in layer.weights:
        v.assign(rng.standard_normal(v.shape.as_list()) * scale)


LAYERS = {
    "simple_rnn": lambda **kw: layers.SimpleRNN(4, dtype="float64", **kw),
    "lstm": lambda **kw: layers.LSTM(4, dtype="float64", **kw),
    "gru": lambda **kw: layers.GRU(4, dtype="float64", **kw),
    "gru_reset_before": lambda **kw: layers.GRU(4, reset_after=False, dtype="float64", **kw),
    "lstm_no_bias": lambda **kw: layers.LSTM(4, use_bias=False, dtype="float64", **kw),
    "gru_no_bias": lambda **kw: layers.GRU(4, use_bias=False, dtype="float64", **kw),
}


@pytest.mark.parametrize("kind", sorted(LAYERS))
@pytest.mark.parametrize("shape", [(3, 5, 4), (1, 1, 2), (2, 7, 1)])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_outputs_match_numpy_reference(kind, shape, go_backwards):
    x = _seq(*shape)
    layer = LAYERS[kind](return_sequences=True, return_state=True, go_backwards=go_backwards)
    layer.build((None,) + shape[1:])
    _randomize(layer)
    seq, *states = layer(x)
    want_seq, want_states = _reference(layer, x)
    np.testing.assert_allclose(seq.numpy(), want_seq, rtol=1e-10, atol=1e-12)
    assert len(states) == len(want_states)
    for got, want in zip(states, want_states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    last = LAYERS[kind](go_backwards=go_backwards)
    last.build((None,) + shape[1:])
    last.set_weights(layer.get_weights())
    np.testing.assert_allclose(last(x).numpy(), want_seq[:, -1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["simple_rnn", "lstm", "gru", "gru_reset_before"])
def test_initial_state(kind):
    x = _seq(2, 4, 3)
    layer = LAYERS[kind](return_state=True)
    layer.build((None, 4, 3))
    _randomize(layer)
    n_states = 2 if "lstm" in kind else 1
    initial = [RNG.standard_normal((2, 4)) for _ in range(n_states)]
    out, *states = layer(x, initial_state=initial)
    want_seq, want_states = _reference(layer, x, initial)
    np.testing.assert_allclose(out.numpy(), want_seq[:, -1], rtol=1e-10)
    for got, want in zip(states, want_states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    # a single-state layer also takes the state as one tensor, not a list
    if n_states == 1:
        np.testing.assert_allclose(layer(x, initial_state=initial[0])[0].numpy(),
                                   want_seq[:, -1], rtol=1e-10)
    # and zero states are the default
    zeros = [np.zeros((2, 4))] * n_states
    np.testing.assert_allclose(layer(x)[0].numpy(),
                               layer(x, initial_state=zeros)[0].numpy(), rtol=1e-12)


def test_weight_shapes_names_and_gate_layout():
    lstm = layers.LSTM(5)
    lstm.build((None, 7, 3))
    assert [v.path.split("/", 1)[1] for v in lstm.weights] == \
        ["cell/kernel", "cell/recurrent_kernel", "cell/bias"]
    assert [tuple(v.shape) for v in lstm.weights] == [(3, 20), (5, 20), (20,)]
    # unit_forget_bias: the forget gate (second quarter, gates i, f, c, o) starts at one
    np.testing.assert_array_equal(lstm.cell.bias.numpy(),
                                  np.r_[np.zeros(5), np.ones(5), np.zeros(10)])
    # orthogonal recurrent kernel: rows of (units, 4 units) are orthonormal
    rk = lstm.cell.recurrent_kernel.numpy()
    np.testing.assert_allclose(rk @ rk.T, np.eye(5), atol=1e-5)
    no_forget = layers.LSTM(5, unit_forget_bias=False)
    no_forget.build((None, 7, 3))
    np.testing.assert_array_equal(no_forget.cell.bias.numpy(), np.zeros(20))

    gru = layers.GRU(4)
    gru.build((None, 2, 3))
    assert [tuple(v.shape) for v in gru.weights] == [(3, 12), (4, 12), (2, 12)]
    gru_before = layers.GRU(4, reset_after=False)
    gru_before.build((None, 2, 3))
    assert [tuple(v.shape) for v in gru_before.weights] == [(3, 12), (4, 12), (12,)]
    simple = layers.SimpleRNN(6, use_bias=False)
    simple.build((None, 2, 3))
    assert [tuple(v.shape) for v in simple.weights] == [(3, 6), (6, 6)]
    assert simple.count_params() == 18 + 36


@pytest.mark.parametrize("cell_class,layer_class", [
    (layers.SimpleRNNCell, layers.SimpleRNN), (layers.LSTMCell, layers.LSTM),
    (layers.GRUCell, layers.GRU)])
def test_rnn_of_cell_equals_layer_and_cell_steps(cell_class, layer_class):
    x = _seq(2, 5, 3)
    layer = layer_class(4, return_sequences=True, dtype="float64")
    layer.build((None, 5, 3))
    _randomize(layer)
    rnn = layers.RNN(cell_class(4, dtype="float64"), return_sequences=True, dtype="float64")
    rnn.build((None, 5, 3))
    rnn.set_weights(layer.get_weights())
    np.testing.assert_allclose(rnn(x).numpy(), layer(x).numpy(), rtol=1e-12)
    # calling the cell step by step gives the same sequence
    cell = rnn.cell
    states = cell.get_initial_state(batch_size=2)
    assert [tuple(s.shape) for s in states] == [(2, 4)] * len(states)
    for t in range(5):
        out, states = cell(x[:, t], states)
        np.testing.assert_allclose(out.numpy(), layer(x).numpy()[:, t], rtol=1e-12)


def test_rnn_with_a_custom_cell():
    class MinimalCell(layers.Layer):
        """h_t = tanh(x_t @ w + h_{t-1}) (Keras' RNN docs example)."""

        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.state_size = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), name="w")

        def call(self, inputs, states):
            h = tf.tanh(tf.matmul(inputs, self.w) + states[0])
            return h, [h]

    x = _seq(2, 3, 4, "float32")
    rnn = layers.RNN(MinimalCell(5), return_sequences=True, return_state=True)
    seq, h = rnn(x)
    w = rnn.cell.w.numpy()
    want = np.zeros((2, 5))
    for t in range(3):
        want = np.tanh(x[:, t] @ w + want)
        np.testing.assert_allclose(seq.numpy()[:, t], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-5, atol=1e-6)
    assert rnn.compute_output_shape((None, 3, 4)) == ((None, 3, 5), (None, 5))


@pytest.mark.parametrize("kind", ["lstm", "gru", "gru_reset_before", "simple_rnn"])
def test_gradients_wrt_inputs_and_states_check_numerically(kind):
    """VJP/JVP vs central differences, jacobians and second order (minitf.testing)."""
    layer = LAYERS[kind](return_sequences=True, return_state=True)
    layer.build((None, 3, 2))
    _randomize(layer)
    x = RNG.standard_normal((2, 3, 2))
    states = [RNG.standard_normal((2, 4)) for _ in range(2 if kind == "lstm" else 1)]

    def run(x, *states):
        return layer(x, initial_state=list(states))

    check_grads(run, [x, *states], order=2)


@pytest.mark.parametrize("kind", ["lstm", "gru", "gru_reset_before", "simple_rnn"])
def test_weight_gradients_match_central_differences(kind):
    layer = LAYERS[kind](go_backwards=kind == "gru")
    layer.build((None, 3, 2))
    _randomize(layer)
    x = RNG.standard_normal((2, 3, 2))
    target = RNG.standard_normal((2, 4))

    def loss():
        return tf.reduce_sum((layer(x) - target) ** 2)

    check_variable_grads(loss, layer.trainable_variables, rtol=1e-6, atol=1e-8)


def test_second_order_gradient_through_lstm():
    layer = LAYERS["lstm"]()
    layer.build((None, 2, 2))
    _randomize(layer)
    x = tf.constant(RNG.standard_normal((1, 2, 2)))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(layer(x) ** 2)
        g = inner.gradient(y, x)
        gsum = tf.reduce_sum(g)
    hess_row = outer.gradient(gsum, x).numpy()
    eps = 1e-5
    numeric = np.zeros(x.shape.as_list())
    for idx in np.ndindex(*numeric.shape):
        for sign in (1, -1):
            bumped = x.numpy().copy()
            bumped[idx] += sign * eps
            xb = tf.constant(bumped)
            with tf.GradientTape() as tape:
                tape.watch(xb)
                yb = tf.reduce_sum(layer(xb) ** 2)
            numeric[idx] += sign * tf.reduce_sum(tape.gradient(yb, xb)).numpy() / (2 * eps)
    np.testing.assert_allclose(hess_row, numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("kind", ["lstm", "gru", "simple_rnn"])
def test_tf_function_matches_eager_over_two_calls(kind):
    layer = LAYERS[kind](return_sequences=True, return_state=True)
    layer.build((None, 4, 3))
    _randomize(layer)

    @tf.function
    def run(x):
        return layer(x)

    for _ in range(2):
        x = _seq(2, 4, 3)
        got = run(x)
        want_seq, want_states = _reference(layer, x)
        np.testing.assert_allclose(got[0].numpy(), want_seq, rtol=1e-10)
        np.testing.assert_allclose(got[-1].numpy(), want_states[-1], rtol=1e-10)


def test_traced_train_step_updates_like_eager():
    x = _seq(4, 5, 3, "float32")
    y = RNG.standard_normal((4, 2)).astype("float32")

    def make():
        tf.random.set_seed(3)
        return keras.Sequential([keras.Input((5, 3)), layers.GRU(4), layers.Dense(2)])

    def step_fn(model, opt):
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                    model.trainable_variables))
            return loss
        return step

    eager, traced = make(), make()
    traced.set_weights(eager.get_weights())
    eager_step = step_fn(eager, keras.optimizers.SGD(0.1))
    traced_step = tf.function(step_fn(traced, keras.optimizers.SGD(0.1)))
    for _ in range(2):
        np.testing.assert_allclose(traced_step(x, y).numpy(), eager_step(x, y).numpy(),
                                   rtol=1e-5)
    for a, b in zip(traced.get_weights(), eager.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layer_class", [layers.LSTM, layers.GRU, layers.SimpleRNN])
def test_fit_reduces_loss_on_a_sequence_task(layer_class):
    """Predict the mean of a sequence (needs the whole sequence, so the state must carry)."""
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (128, 6, 1)).astype("float32")
    y = x.mean(axis=1)
    model = keras.Sequential([keras.Input((6, 1)), layer_class(8), layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse")
    history = model.fit(x, y, epochs=15, batch_size=32, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.35 * losses[0], losses
    np.testing.assert_allclose(model.evaluate(x, y, verbose=0), losses[-1], rtol=0.5)


def test_dropout_only_when_training():
    x = _seq(8, 5, 6, "float32")
    for layer in (layers.LSTM(6, dropout=0.5), layers.GRU(6, recurrent_dropout=0.5),
                  layers.SimpleRNN(6, dropout=0.3, recurrent_dropout=0.3)):
        inference = layer(x).numpy()
        np.testing.assert_array_equal(layer(x, training=False).numpy(), inference)
        assert np.abs(layer(x, training=True).numpy() - inference).max() > 1e-3
    # dropout=1.0 is clipped and, as in Keras, applies no dropout (0 < rate < 1 only)
    layer = layers.SimpleRNN(3, dropout=1.0)
    np.testing.assert_array_equal(layer(x, training=True).numpy(), layer(x).numpy())


def test_mixed_precision_computes_in_float16():
    layer = layers.LSTM(4, return_state=True, dtype="mixed_float16")
    out, h, c = layer(_seq(2, 3, 5, "float32"))
    assert out.dtype == tf.float16 and c.dtype == tf.float16
    assert layer.cell.kernel.dtype == tf.float32


def test_compute_output_shape_and_functional_shapes():
    lstm = layers.LSTM(6, return_sequences=True, return_state=True)
    assert lstm.compute_output_shape((None, 10, 3)) == ((None, 10, 6), (None, 6), (None, 6))
    assert layers.GRU(2).compute_output_shape((4, 10, 3)) == (4, 2)
    inputs = keras.Input((10, 3))
    seq, h, c = lstm(inputs)
    assert tuple(seq.shape) == (None, 10, 6) and tuple(c.shape) == (None, 6)


def test_get_config_round_trip_and_keras_keys():
    layer = layers.LSTM(7, activation="relu", dropout=0.25, go_backwards=True,
                        return_sequences=True, kernel_regularizer="l2", seed=5, name="enc")
    config = layer.get_config()
    for key, value in {"units": 7, "activation": "relu", "recurrent_activation": "sigmoid",
                       "unit_forget_bias": True, "dropout": 0.25, "recurrent_dropout": 0.0,
                       "go_backwards": True, "return_sequences": True, "return_state": False,
                       "stateful": False, "unroll": False, "seed": 5, "name": "enc"}.items():
        assert config[key] == value, key
    assert "cell" not in config
    clone = layers.LSTM.from_config(config)
    assert clone.get_config() == config
    assert clone.cell.activation is layer.cell.activation
    gru = layers.GRU(3, reset_after=False)
    assert layers.GRU.from_config(gru.get_config()).reset_after is False
    rebuilt = layers.deserialize(layers.serialize(layers.SimpleRNN(2, use_bias=False)))
    assert type(rebuilt) is layers.SimpleRNN and rebuilt.use_bias is False
    rnn = layers.RNN(layers.GRUCell(3), return_state=True)
    entry = layers.serialize(rnn)
    assert entry["config"]["cell"]["class_name"] == "GRUCell"
    again = layers.deserialize(entry)
    assert isinstance(again.cell, layers.GRUCell) and again.return_state


def test_keras_only_config_keys_are_accepted():
    """Keys Keras 3 / tf.keras write into configs (no effect in minitf)."""
    layer = layers.GRU(3, zero_output_for_mask=True, implementation=1, use_cudnn="auto",
                       time_major=False, unroll=True)
    assert layer(_seq(2, 4, 3, "float32")).shape == (2, 3)


def test_save_and_load_weights_and_keras_archive(tmp_path):
    x = _seq(3, 5, 2, "float32")
    inputs = keras.Input((5, 2))
    seq, h, c = layers.LSTM(4, return_sequences=True, return_state=True)(inputs)
    y = layers.GRU(3, go_backwards=True)(seq, initial_state=h[:, :3])
    model = keras.Model(inputs, layers.Dense(1)(y))
    want = model(x).numpy()
    model.save_weights(tmp_path / "m.weights.h5")
    model.save(tmp_path / "m.keras")
    other = keras.Model.from_config(model.get_config())
    assert np.abs(other(x).numpy() - want).max() > 1e-4
    other.load_weights(tmp_path / "m.weights.h5")
    np.testing.assert_allclose(other(x).numpy(), want, rtol=1e-6)
    loaded = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6)


# --- errors --------------------------------------------------------------------------------------

def test_rank_errors():
    with pytest.raises(ValueError, match=r"lstm.*expected ndim=3.*found ndim=2.*\(2, 3\)"):
        layers.LSTM(2, name="lstm")(np.zeros((2, 3), "float32"))
    with pytest.raises(ValueError, match="expected ndim=3"):
        layers.GRU(2)(keras.Input((3, 4, 5)))


def test_unsupported_options_are_refused():
    with pytest.raises(ValueError, match=r"mask must have shape \(batch, timesteps\)"):
        layers.GRU(2)(_seq(1, 2, 3, "float32"), mask=np.ones((1, 3), bool))
    with pytest.raises(ValueError, match="units must be a positive integer, got 0"):
        layers.SimpleRNN(0)
    with pytest.raises(ValueError, match="state_size"):
        layers.RNN(layers.Dense(3))


def test_initial_state_errors():
    x = _seq(2, 3, 4, "float32")
    with pytest.raises(ValueError, match=r"initial_state has 1 tensor\(s\), the cell has 2"):
        layers.LSTM(3)(x, initial_state=[np.zeros((2, 3), "float32")])
    with pytest.raises(ValueError, match=r"initial_state\[0\] has shape \(2, 5\), expected "
                                         r"\(batch, units\) = \(2, 3\)"):
        layers.GRU(3)(x, initial_state=[np.zeros((2, 5), "float32")])


# --- stateful layers -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["simple_rnn", "lstm", "gru", "gru_reset_before"])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_stateful_calls_continue_the_sequence(kind, go_backwards):
    """Three stateful calls on consecutive chunks give the states of one call on the whole
    sequence (numpy reference); reset_state() goes back to zeros."""
    chunks = [_seq(3, 4, 2) for _ in range(3)]
    layer = LAYERS[kind](stateful=True, return_sequences=True, go_backwards=go_backwards)
    layer.build((3, 4, 2))
    _randomize(layer)
    n_states = 2 if "lstm" in kind else 1
    assert [tuple(v.shape) for v in layer.states] == [(3, 4)] * n_states
    assert not any(v.trainable for v in layer.states)
    assert len(layer.weights) == (2 if "no_bias" in kind else 3)   # states are not weights
    initial = None
    for chunk in chunks:
        got = layer(chunk).numpy()
        want_seq, want_states = _reference(layer, chunk, initial)
        np.testing.assert_allclose(got, want_seq, rtol=1e-10, atol=1e-12)
        for variable, want in zip(layer.states, want_states):
            np.testing.assert_allclose(variable.numpy(), want, rtol=1e-10, atol=1e-12)
        initial = list(want_states)
    layer.reset_states()
    for variable in layer.states:
        np.testing.assert_array_equal(variable.numpy(), 0.0)
    np.testing.assert_allclose(layer(chunks[0]).numpy(), _reference(layer, chunks[0])[0],
                               rtol=1e-10, atol=1e-12)
    # an explicit initial_state wins over the kept states, and the result is kept
    start = [RNG.standard_normal((3, 4)) for _ in range(n_states)]
    want_seq, want_states = _reference(layer, chunks[1], start)
    np.testing.assert_allclose(layer(chunks[1], initial_state=start).numpy(), want_seq,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(layer.states[0].numpy(), want_states[0], rtol=1e-10)


def test_stateful_gradients_are_taken_at_the_states_read():
    """The states are assigned after the loop; the gradient still uses the values the call
    read (checked against central differences of a function of the weights)."""
    layer = LAYERS["lstm"](stateful=True)
    layer.build((2, 3, 2))
    _randomize(layer)
    layer(_seq(2, 3, 2))          # non-zero states
    x = _seq(2, 3, 2)
    start = [v.numpy() for v in layer.states]
    kernel = layer.cell.kernel
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) ** 2)
    grad = tape.gradient(loss, kernel).numpy()

    def f(k):
        fresh = LAYERS["lstm"]()
        fresh.build((None, 3, 2))
        fresh.set_weights([k, *layer.get_weights()[1:]])
        return float(np.sum(fresh(x, initial_state=start).numpy() ** 2))

    k0, eps = kernel.numpy(), 1e-6
    numeric = np.zeros_like(k0)
    for index in np.ndindex(k0.shape):
        hi, lo = k0.copy(), k0.copy()
        hi[index] += eps
        lo[index] -= eps
        numeric[index] = (f(hi) - f(lo)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_stateful_in_a_traced_function_matches_eager():
    eager = LAYERS["gru"](stateful=True)
    traced_layer = LAYERS["gru"](stateful=True)
    for layer in (eager, traced_layer):
        layer.build((2, 4, 3))
    _randomize(eager)
    traced_layer.set_weights(eager.get_weights())
    run = tf.function(lambda x: traced_layer(x))
    for _ in range(3):
        x = _seq(2, 4, 3)
        np.testing.assert_allclose(run(x).numpy(), eager(x).numpy(), rtol=1e-12)
        np.testing.assert_allclose(traced_layer.states[0].numpy(), eager.states[0].numpy(),
                                   rtol=1e-12)
    traced_layer.reset_state()
    eager.reset_state()
    x = _seq(2, 4, 3)
    np.testing.assert_allclose(run(x).numpy(), eager(x).numpy(), rtol=1e-12)


def test_stateful_model_predict_fit_and_reset_states():
    """A Sequential with a fixed batch size: predict on consecutive chunks equals one pass over
    the whole sequence; Model.reset_states() (tf.keras 2) clears the states; fit trains."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6, 3)).astype("float32")
    model = keras.Sequential([layers.LSTM(5, stateful=True, batch_input_shape=(4, None, 3)),
                              layers.Dense(1)])
    whole = keras.Sequential([layers.LSTM(5, batch_input_shape=(4, None, 3)), layers.Dense(1)])
    model.build((4, None, 3))
    whole.build((4, None, 3))
    whole.set_weights(model.get_weights())
    model.predict(x[:, :3], batch_size=4, verbose=0)
    np.testing.assert_allclose(model.predict(x[:, 3:], batch_size=4, verbose=0),
                               whole.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    model.reset_states()
    np.testing.assert_array_equal(model.layers[0].states[0].numpy(), 0.0)
    np.testing.assert_allclose(model.predict(x[:, :3], batch_size=4, verbose=0),
                               whole.predict(x[:, :3], verbose=0), rtol=1e-5, atol=1e-6)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    y = x.mean(axis=(1, 2))[:, None]
    losses = []
    for _ in range(30):
        model.reset_states()
        model.train_on_batch(x[:, :3], y)
        losses.append(float(model.train_on_batch(x[:, 3:], y)))
    assert losses[-1] < 0.2 * losses[0], losses


def test_stateful_bidirectional_resets_both_directions():
    layer = layers.Bidirectional(layers.LSTM(3, stateful=True, dtype="float64"))
    x = _seq(2, 4, 2)
    first = layer(x).numpy()
    assert layer.stateful and layer.forward_layer.stateful and layer.backward_layer.stateful
    assert np.abs(layer(x).numpy() - first).max() > 1e-6     # the states carried over
    layer.reset_states()
    np.testing.assert_allclose(layer(x).numpy(), first, rtol=1e-12)
    with pytest.raises(AttributeError, match="stateful"):
        layers.Bidirectional(layers.LSTM(3)).reset_state()


def test_stateful_errors():
    with pytest.raises(ValueError, match=r"stateful=True the batch size must be static.*"
                                         r"\(None, 4, 2\)"):
        keras.Sequential([keras.Input((4, 2)), layers.LSTM(3, stateful=True)])
    layer = layers.GRU(3, stateful=True)
    layer(np.zeros((2, 4, 2), "float32"))
    with pytest.raises(ValueError, match=r"Expected batch size: 2; received batch size: 5"):
        layer(np.zeros((5, 4, 2), "float32"))
    # a stateless layer has no states to reset
    stateless = layers.GRU(3)
    stateless(np.zeros((2, 4, 2), "float32"))
    assert stateless.states is None
    stateless.reset_states()


def test_stateful_layer_inside_a_custom_layer_keeps_its_states_at_graph_building():
    """A functional model infers a custom layer's output shape by running it on placeholder
    data; a stateful layer inside must not keep the states of that run."""
    class Wrapper(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.rnn = layers.SimpleRNN(3, stateful=True, bias_initializer="ones")

        def call(self, x):
            return self.rnn(x)

    inputs = keras.Input((4, 2), batch_size=2)
    wrapper = Wrapper()
    model = keras.Model(inputs, wrapper(inputs))
    np.testing.assert_array_equal(wrapper.rnn.states[0].numpy(), 0.0)
    x = np.ones((2, 4, 2), "float32")
    out = model(x).numpy()
    np.testing.assert_allclose(wrapper.rnn.states[0].numpy(), out, rtol=1e-6)
    assert np.abs(out).max() > 0.1
