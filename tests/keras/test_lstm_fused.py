"""``keras.layers.LSTM`` through ``lstm_ops.lstm_sequence`` (the whole sequence as one op)
against the same layer run as per-step ops: the same output bits, the same gradients (to float
rounding: the backward pass sums in another order), higher orders, forward mode, traced steps;
where the layer falls back to per-step ops; the compiled kernels against the numpy path."""
import numpy as np
import pytest

import minitf as tf
from minitf import native, native_lstm
from minitf.keras.layers import recurrent_cells
from minitf.ops import lstm_ops, registry
from minitf.ops.linalg_ops import matrix_product


@pytest.fixture
def per_step(monkeypatch):
    """Run LSTM layers as per-step ops (the reference) inside ``with per_step():``."""
    import contextlib

    @contextlib.contextmanager
    def scope():
        with monkeypatch.context() as patch:
            patch.setattr(recurrent_cells.LSTMCell, "_runs_fused", lambda self: False)
            yield
    return scope


@pytest.fixture
def fused_calls(monkeypatch):
    calls = []
    original = registry.OPS["lstm_sequence"].forward
    monkeypatch.setattr(registry.OPS["lstm_sequence"], "forward",
                        lambda *a: calls.append(a[0].shape) or original(*a))
    return calls


def _layer(seed=0, dtype="float32", **options):
    tf.keras.utils.set_random_seed(seed)
    return tf.keras.layers.LSTM(7, dtype=dtype, **options)


def _outputs_and_grads(layer, x, initial=None, training=None):
    with tf.GradientTape() as tape:
        tape.watch([x] + list(initial or []))
        out = layer(x, initial_state=initial, training=training)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        loss = sum(tf.reduce_sum(tf.sin(o) * (k + 1.5)) for k, o in enumerate(outs))
    sources = [x] + list(initial or []) + layer.trainable_variables
    return [o.numpy() for o in outs], [g.numpy() for g in tape.gradient(loss, sources)]


def _assert_like_per_step(make_layer, x, per_step, initial=None, rtol=2e-5):
    fused_out, fused_grads = _outputs_and_grads(make_layer(), x, initial)
    with per_step():
        step_out, step_grads = _outputs_and_grads(make_layer(), x, initial)
    for a, b in zip(fused_out, step_out):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fused_grads, step_grads):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, np.abs(b).max()))


OPTIONS = [{}, {"return_sequences": True}, {"return_state": True},
           {"return_sequences": True, "return_state": True, "go_backwards": True},
           {"unit_forget_bias": False, "use_bias": False}]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("shape", [(4, 9, 5), (1, 1, 3), (3, 2, 1)])
def test_outputs_are_the_per_step_bits_and_gradients_agree(options, shape, per_step,
                                                           fused_calls):
    x = tf.constant(np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 2)
    _assert_like_per_step(lambda: _layer(**options), x, per_step)
    assert fused_calls and fused_calls[0] == (shape[1], shape[0], 28)


def test_float64_and_initial_states_that_are_views_of_another_lstm(per_step, fused_calls):
    # The encoder's final states are strided views of its op's output; the decoder starts
    # from them (as in keras.io's encoder-decoder guide).
    rng = np.random.default_rng(2)
    x = tf.constant(rng.standard_normal((3, 6, 4)))
    _, h, c = _layer(seed=3, dtype="float64", return_state=True)(x)
    assert not h._value.flags.c_contiguous
    y = tf.constant(rng.standard_normal((3, 5, 2)))
    _assert_like_per_step(lambda: _layer(seed=4, dtype="float64", return_sequences=True), y,
                          per_step, initial=[h, c], rtol=1e-12)
    assert len(fused_calls) == 2


def test_stateful_layer_carries_the_states_between_calls(per_step):
    rng = np.random.default_rng(3)
    batches = [tf.constant(rng.standard_normal((2, 4, 3)).astype(np.float32)) for _ in range(3)]

    def run():
        tf.keras.utils.set_random_seed(5)
        layer = tf.keras.layers.LSTM(4, stateful=True, return_sequences=True)
        layer.build((2, 4, 3))
        return [layer(b).numpy() for b in batches] + [s.numpy() for s in layer.states]

    fused = run()
    with per_step():
        reference = run()
    for a, b in zip(fused, reference):
        np.testing.assert_array_equal(a, b)


def test_input_dropout_runs_fused_and_recurrent_dropout_per_step(fused_calls):
    x = tf.constant(np.ones((2, 3, 4), np.float32))
    tf.keras.layers.LSTM(3, dropout=0.5)(x, training=True)
    assert len(fused_calls) == 1
    tf.keras.layers.LSTM(3, recurrent_dropout=0.5)(x, training=True)
    assert len(fused_calls) == 1                  # the recurrent mask needs per-step ops
    tf.keras.layers.LSTM(3, recurrent_dropout=0.5)(x, training=False)
    assert len(fused_calls) == 2                  # inference: no mask


@pytest.mark.parametrize("options", [{"activation": "relu"},
                                     {"recurrent_activation": "hard_sigmoid"}], ids=str)
def test_other_activations_and_masks_run_per_step(options, fused_calls):
    x = tf.constant(np.ones((2, 3, 4), np.float32))
    tf.keras.layers.LSTM(3, **options)(x)
    tf.keras.layers.LSTM(3)(x, mask=tf.constant([[True, True, False], [True, False, False]]))
    assert fused_calls == []
    tf.keras.layers.LSTM(3, activation=tf.tanh, recurrent_activation=tf.sigmoid)(x)
    assert len(fused_calls) == 1                  # the same functions under other names


def test_a_cell_subclass_with_its_own_step_runs_it(fused_calls):
    class Doubled(tf.keras.layers.LSTMCell):
        def _step(self, x_proj, states, params, recurrent_mask):
            h, new = super()._step(x_proj, states, params, recurrent_mask)
            return 2.0 * h, new

    x = tf.constant(np.ones((2, 3, 4), np.float32))
    out = tf.keras.layers.RNN(Doubled(3))(x)
    assert fused_calls == [] and out.shape == (2, 3)
    tf.keras.layers.RNN(tf.keras.layers.LSTMCell(3))(x)
    assert fused_calls == [(3, 2, 12)]


def test_second_order_and_forward_mode_agree_with_per_step_ops(per_step):
    rng = np.random.default_rng(4)
    x = tf.Variable(rng.standard_normal((2, 3, 2)))

    def run():
        layer = _layer(seed=6, dtype="float64", return_sequences=True)
        layer.build((None, 3, 2))
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = tf.reduce_sum(tf.square(layer(x)))
            grads = inner.gradient(loss, [x, layer.cell.recurrent_kernel])
            penalty = sum(tf.reduce_sum(tf.square(g)) for g in grads)
        second = outer.gradient(penalty, [x, layer.cell.kernel])
        tangent = tf.constant(rng.standard_normal((2, 3, 2)))
        with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
            out = layer(x)
        return [g.numpy() for g in grads + second] + [acc.jvp(out).numpy()]

    rng = np.random.default_rng(4)
    fused = run()
    rng = np.random.default_rng(4)
    with per_step():
        reference = run()
    for a, b in zip(fused, reference):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_traced_training_step_matches_eager(fused_calls):
    rng = np.random.default_rng(5)
    x = tf.constant(rng.standard_normal((4, 6, 3)).astype(np.float32))
    y = tf.constant(rng.integers(0, 2, 4).astype(np.int32))

    def losses(step):
        tf.keras.utils.set_random_seed(7)
        model = tf.keras.Sequential([tf.keras.layers.LSTM(5), tf.keras.layers.Dense(2)])
        model.build((None, 6, 3))
        optimizer = tf.keras.optimizers.Adam(0.05)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def train():
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        train = step(train)
        return [float(train()) for _ in range(4)]

    eager, traced = losses(lambda f: f), losses(tf.function)
    np.testing.assert_allclose(traced, eager, rtol=1e-6)
    assert eager[-1] < eager[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("steps, batch, units", [(5, 3, 4), (1, 1, 1), (3, 2, 17)])
def test_compiled_passes_give_the_numpy_paths_bits(dtype, steps, batch, units):
    if native.family("lstm") is None:
        pytest.skip("no compiled kernels here")
    rng = np.random.default_rng(6)
    x_proj = (rng.standard_normal((steps, batch, 4 * units)) * 3).astype(dtype)[::-1]
    h0, c0 = rng.standard_normal((2, batch, units)).astype(dtype)
    kernel = (rng.standard_normal((units, 4 * units)) * 0.5).astype(dtype)
    bias = rng.standard_normal(4 * units).astype(dtype)
    expected = lstm_ops._numpy_forward(x_proj, bias, h0, c0, kernel)
    got = np.empty_like(expected)
    assert native_lstm.forward(x_proj, bias, h0, c0, kernel, got, matrix_product)   # reversed
    np.testing.assert_array_equal(got, expected)
    g = rng.standard_normal(expected.shape).astype(dtype)
    back = lstm_ops._numpy_backward(c0, kernel, expected, g)
    got = np.empty_like(back)
    lstm_ops.last_row(got, *native_lstm.backward(c0, kernel, expected, g, got, matrix_product))
    np.testing.assert_array_equal(got, back)


def test_the_backward_pass_is_the_closed_form_of_one_step():
    # One step from zero states: h = o tanh(c), c = i c~; d h / d z by hand.
    z = np.array([[0.3, -0.2, 0.5, 0.1]])
    i, f, o = (1 / (1 + np.exp(-z[0, k])) for k in (0, 1, 3))
    cc = np.tanh(z[0, 2])
    c = i * cc
    on_host = {"xp": np, "product": np.matmul}
    y = lstm_ops._numpy_forward(z[None], np.zeros(4), np.zeros((1, 1)), np.zeros((1, 1)),
                                np.zeros((1, 4)), **on_host)
    np.testing.assert_allclose(y[0, 0, :, 0], [o * np.tanh(c), c, i, f, cc, o], rtol=1e-15)
    g = np.zeros_like(y)
    g[0, 0, 0] = 1.0     # d h
    grads = lstm_ops._numpy_backward(np.zeros((1, 1)), np.zeros((1, 4)), y, g, **on_host)
    dc = o * (1 - np.tanh(c) ** 2)
    # dz (c_prev = 0: no forget-gate gradient), then h0's (a zero kernel) and c0's gradients
    expected = [[dc * cc * i * (1 - i), 0.0, dc * i * (1 - cc ** 2), np.tanh(c) * o * (1 - o)],
                [0.0, dc * f, 0.0, 0.0]]
    np.testing.assert_allclose(grads[:, 0], expected, rtol=1e-14, atol=1e-300)


def test_compiled_passes_hold_the_copies_they_read_by_address():
    # A strided c0 is copied before the kernels read it by address; the copy must live until
    # the last step. The product allocates blocks of its size on every call: a copy freed
    # too early would be overwritten by them (NaN here).
    if native.family("lstm") is None:
        pytest.skip("no compiled kernels here")
    rng = np.random.default_rng(7)
    steps, batch, u = 4, 3, 5
    x_proj = rng.standard_normal((steps, batch, 4 * u))
    h0 = rng.standard_normal((batch, u))
    c0 = rng.standard_normal((batch, 2 * u))[:, ::2]          # strided
    kernel = rng.standard_normal((u, 4 * u)) * 0.5
    bias = rng.standard_normal(4 * u)

    def product(a, b, out=None):
        garbage = [np.full(c0.shape, np.nan) for _ in range(8)]
        del garbage
        return np.matmul(a, b, out=out)

    on_host = {"xp": np, "product": np.matmul}
    expected = lstm_ops._numpy_forward(x_proj, bias, h0, c0, kernel, **on_host)
    y = np.empty_like(expected)
    assert native_lstm.forward(x_proj, bias, h0, c0, kernel, y, product)
    np.testing.assert_array_equal(y, expected)
    g = rng.standard_normal(y.shape)
    expected = lstm_ops._numpy_backward(c0, kernel, y, g, **on_host)
    got = np.empty_like(expected)
    lstm_ops.last_row(got, *native_lstm.backward(c0, kernel, y, g, got, product))
    np.testing.assert_array_equal(got, expected)
