"""Keras masking: Embedding(mask_zero=True) and Masking create masks, recurrent layers skip the
masked steps (states frozen, output repeated), Dense/Dropout pass masks on, and TF's "Text
classification with an RNN" model gives the same output for a padded sequence as unpadded.
References: numpy re-implementations of the masked recurrences below, and outputs recorded
with Keras 3.15 (``tests/fixtures/keras/mask_*``, from ``tools/make_mask_fixtures.py``)."""
import gc
import os
import sys
import warnings

import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras.keras_mask import _MASKS
from minitf.keras.layers.masking import get_mask, set_mask

layers = keras.layers
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import make_mask_fixtures as mask_models  # noqa: E402


# --- numpy references: Keras' cells with TF-backend masking ---------------------------------------

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _simple_step(x_t, states, w):
    kernel, recurrent, bias = w
    h = np.tanh(x_t @ kernel + states[0] @ recurrent + bias)
    return h, [h]


def _lstm_step(x_t, states, w):
    kernel, recurrent, bias = w
    h, c = states
    i, f, g, o = np.split(x_t @ kernel + h @ recurrent + bias, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h = _sigmoid(o) * np.tanh(c)
    return h, [h, c]


def _gru_step(x_t, states, w):
    kernel, recurrent, bias = w            # reset_after=True: bias (2, 3 * units)
    h = states[0]
    xz, xr, xh = np.split(x_t @ kernel + bias[0], 3, axis=-1)
    hz, hr, hh = np.split(h @ recurrent + bias[1], 3, axis=-1)
    z, r = _sigmoid(xz + hz), _sigmoid(xr + hr)
    h = z * h + (1 - z) * np.tanh(xh + r * hh)
    return h, [h]


STEPS = {"SimpleRNN": (_simple_step, 1), "LSTM": (_lstm_step, 2), "GRU": (_gru_step, 1)}


def masked_rnn(kind, x, mask, weights, units, backwards=False, zero_output=False):
    """(outputs in processing order, final states): at a masked step the states keep their
    values and the output is the previous output (zeros before the first / with zero_output)."""
    step, n_states = STEPS[kind]
    states = [np.zeros((x.shape[0], units)) for _ in range(n_states)]
    order = range(x.shape[1])[::-1] if backwards else range(x.shape[1])
    previous, outputs = np.zeros((x.shape[0], units)), []
    for t in order:
        keep = mask[:, t][:, None]
        out, new = step(x[:, t], states, weights)
        states = [np.where(keep, n, s) for n, s in zip(new, states)]
        previous = np.where(keep, out, 0.0 if zero_output else previous)
        outputs.append(previous)
    return np.stack(outputs, axis=1), states


def _padded_batch():
    mask = np.array([[1, 1, 1, 1, 1, 1],      # full
                     [1, 1, 1, 0, 0, 0],      # post-padding
                     [0, 0, 1, 1, 1, 1],      # pre-padding
                     [1, 0, 1, 1, 0, 1],      # holes
                     [0, 0, 0, 0, 0, 0]], bool)  # nothing
    x = np.random.default_rng(3).standard_normal((5, 6, 3)).astype("float32")
    return x, mask


# --- recurrent layers with a mask -----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("backwards", [False, True])
def test_masked_recurrent_layers_match_numpy(kind, backwards):
    x, mask = _padded_batch()
    layer = getattr(layers, kind)(4, return_sequences=True, return_state=True,
                                  go_backwards=backwards)
    seq, *states = layer(x, mask=mask)
    weights = [w.numpy().astype("float64") for w in layer.weights]
    ref_seq, ref_states = masked_rnn(kind, x.astype("float64"), mask, weights, 4, backwards)
    np.testing.assert_allclose(seq.numpy(), ref_seq, rtol=1e-5, atol=1e-6)
    for got, want in zip(states, ref_states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    # the fully masked row never leaves the zero state
    assert np.all(seq.numpy()[4] == 0) and all(np.all(s.numpy()[4] == 0) for s in states)
    # and the mask matters: without it the padded rows differ
    unmasked = layer(x)[0].numpy()
    assert np.abs(unmasked[1:] - ref_seq[1:]).max() > 1e-2


def test_last_output_and_zero_output_for_mask():
    x, mask = _padded_batch()
    layer = layers.GRU(3, zero_output_for_mask=True, return_sequences=True)
    seq = layer(x, mask=mask).numpy()
    weights = [w.numpy().astype("float64") for w in layer.weights]
    ref, _ = masked_rnn("GRU", x.astype("float64"), mask, weights, 3, zero_output=True)
    np.testing.assert_allclose(seq, ref, rtol=1e-5, atol=1e-6)
    assert np.all(seq[~mask] == 0)
    last = layers.GRU(3)
    last(x[:1])
    last.set_weights(layer.get_weights())
    ref, _ = masked_rnn("GRU", x.astype("float64"), mask, weights, 3)
    # post-padded row 1: the output is the one of its last real step (t=2)
    np.testing.assert_allclose(last(x, mask=mask).numpy(), ref[:, -1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ref[1, -1], ref[1, 2])


def test_numeric_mask_is_cast_to_bool_and_bad_mask_shape_raises():
    x, mask = _padded_batch()
    layer = layers.LSTM(2)
    np.testing.assert_array_equal(layer(x, mask=mask.astype("float32")).numpy(),
                                  layer(x, mask=mask).numpy())
    with pytest.raises(ValueError, match=r"LSTM 'lstm_bad'.*mask must have shape \(batch, "
                                         r"timesteps\) = \(5, 6\), got \(5, 5\)"):
        layers.LSTM(2, name="lstm_bad")(x, mask=mask[:, :5])


def test_rnn_output_mask_only_with_return_sequences():
    x, mask = _padded_batch()
    seq = layers.SimpleRNN(2, return_sequences=True)(x, mask=mask)
    np.testing.assert_array_equal(get_mask(seq).numpy(), mask)
    last = layers.SimpleRNN(2)(x, mask=mask)
    assert get_mask(last) is None
    out, h = layers.SimpleRNN(2, return_sequences=True, return_state=True)(x, mask=mask)
    np.testing.assert_array_equal(get_mask(out).numpy(), mask)
    assert get_mask(h) is None


# --- Embedding(mask_zero=True) and the tutorial model ---------------------------------------------

def test_embedding_mask_zero_sets_the_mask_and_round_trips():
    emb = layers.Embedding(10, 3, mask_zero=True)
    ids = np.array([[4, 2, 0, 0], [0, 7, 1, 0]])
    out = emb(ids)
    np.testing.assert_array_equal(get_mask(out).numpy(), ids != 0)
    np.testing.assert_array_equal(emb.compute_mask(tf.constant(ids)).numpy(), ids != 0)
    assert emb.supports_masking
    again = layers.Embedding.from_config(emb.get_config())
    assert again.mask_zero is True and again.supports_masking
    plain = layers.Embedding(10, 3)
    assert get_mask(plain(ids)) is None and plain.compute_mask(tf.constant(ids)) is None


def _tutorial_model(vocab=40, dim=8, units=6):
    """TF's text-classification tutorial: Embedding(mask_zero) -> Bidirectional(LSTM) ->
    Dense(relu) -> Dense(1) (smaller sizes)."""
    return keras.Sequential([
        keras.Input((None,), dtype="int32"), layers.Embedding(vocab, dim, mask_zero=True),
        layers.Bidirectional(layers.LSTM(units)), layers.Dense(units, activation="relu"),
        layers.Dense(1)])


def _lstm_reference(x, weights, units, backwards=False):
    """The plain (unmasked) LSTM over a whole sequence: the final h."""
    h = np.zeros((1, units))
    c = np.zeros((1, units))
    for t in (range(len(x))[::-1] if backwards else range(len(x))):
        h, (h, c) = _lstm_step(x[None, t], [h, c], weights)
    return h[0]


def test_tutorial_model_ignores_padding_like_an_unpadded_sequence():
    tf.random.set_seed(4)
    model = _tutorial_model()
    sequences = [[5, 9, 2, 31, 7], [3, 3], [12], [8, 1, 19, 4, 4, 30, 2]]
    padded = np.zeros((len(sequences), 10), "int32")
    for row, seq in enumerate(sequences):
        padded[row, :len(seq)] = seq
    batch = model(padded).numpy()
    emb = model.layers[0].embeddings.numpy().astype("float64")
    bidi = model.layers[1]
    fw = [w.numpy().astype("float64") for w in bidi.forward_layer.weights]
    bw = [w.numpy().astype("float64") for w in bidi.backward_layer.weights]
    dense1, dense2 = model.layers[2], model.layers[3]
    for row, seq in enumerate(sequences):
        alone = model(np.array([seq], "int32")).numpy()
        np.testing.assert_allclose(batch[row], alone[0], rtol=1e-5, atol=1e-6)
        # explicit computation of the unpadded sequence
        x = emb[seq]
        features = np.concatenate([_lstm_reference(x, fw, 6), _lstm_reference(x, bw, 6, True)])
        hidden = np.maximum(features @ dense1.kernel.numpy() + dense1.bias.numpy(), 0)
        want = hidden @ dense2.kernel.numpy() + dense2.bias.numpy()
        np.testing.assert_allclose(batch[row], want, rtol=1e-4, atol=1e-5)
    # the same model without the mask would read the padding
    no_mask = _tutorial_model()
    no_mask.layers[0].mask_zero = False
    no_mask.layers[0].supports_masking = False
    no_mask.set_weights(model.get_weights())
    assert np.abs(no_mask(padded).numpy() - batch).max() > 1e-3


def test_padding_ids_get_no_gradient():
    tf.random.set_seed(5)
    model = _tutorial_model()
    ids = np.array([[4, 9, 0, 0], [7, 0, 0, 0]], "int32")
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(ids))
    grad = tape.gradient(loss, model.layers[0].embeddings)
    dense = tf.convert_to_tensor(grad).numpy()
    assert np.all(dense[0] == 0)                 # row 0: only looked up at masked steps
    assert np.abs(dense[[4, 7, 9]]).min() > 0


@pytest.mark.parametrize("name", sorted(mask_models.MODELS))
def test_keras_masked_models_reproduce_keras_outputs(name):
    model = mask_models.MODELS[name](keras)
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    np.testing.assert_allclose(model(data["x"], training=False).numpy(), data["y"], rtol=1e-5,
                               atol=1e-5)


def test_keras_fixture_depends_on_the_mask():
    model = mask_models.mask_tutorial(keras)
    data = np.load(os.path.join(FIXTURES, "mask_tutorial.npz"))
    model.load_weights(os.path.join(FIXTURES, "mask_tutorial.weights.h5"))
    emb = model.layers[0]
    emb.mask_zero = emb.supports_masking = False
    assert np.abs(model(data["x"]).numpy() - data["y"]).max() > 1e-2


# --- the Masking layer ----------------------------------------------------------------------------

def test_masking_layer_values_and_mask():
    x = np.array([[[1., 2.], [0., 0.], [0., 3.]], [[-1., -1.], [5., -1.], [0., 0.]]], "float32")
    out = layers.Masking()(x)
    keep = np.array([[True, False, True], [True, True, False]])
    np.testing.assert_array_equal(out.numpy(), x * keep[..., None])
    np.testing.assert_array_equal(get_mask(out).numpy(), keep)
    minus = layers.Masking(mask_value=-1.0)
    out = minus(x)
    keep = np.array([[True, True, True], [False, True, True]])
    np.testing.assert_array_equal(get_mask(out).numpy(), keep)
    np.testing.assert_array_equal(out.numpy(), x * keep[..., None])
    again = layers.deserialize(layers.serialize(minus))
    assert type(again) is layers.Masking and again.mask_value == -1.0


def test_masking_layer_feeds_an_lstm():
    x, mask = _padded_batch()
    x = x * mask[..., None]
    model = keras.Sequential([keras.Input((6, 3)), layers.Masking(),
                              layers.LSTM(3, return_sequences=True)])
    weights = [w.numpy().astype("float64") for w in model.layers[1].weights]
    ref, _ = masked_rnn("LSTM", x.astype("float64"), mask, weights, 3)
    np.testing.assert_allclose(model(x).numpy(), ref, rtol=1e-5, atol=1e-6)


# --- propagation ----------------------------------------------------------------------------------

def test_mask_passes_through_dense_dropout_activation():
    ids = np.array([[3, 1, 0], [2, 0, 0]])
    x = layers.Embedding(5, 4, mask_zero=True)(ids)
    for layer in (layers.Dense(3), layers.Dropout(0.5), layers.Activation("relu"),
                  layers.TimeDistributed(layers.Dense(2))):
        for training in (False, True):
            y = layer(x, training=training)
            np.testing.assert_array_equal(get_mask(y).numpy(), ids != 0)
    with pytest.warns(UserWarning, match="does not support masking"):
        assert get_mask(layers.Lambda(lambda t: t * 2)(x)) is None
    lam = layers.Lambda(lambda t: t * 2, mask=lambda t, m: tf.logical_not(m))
    np.testing.assert_array_equal(get_mask(lam(x)).numpy(), ids == 0)


def test_layer_without_masking_warns_and_drops_the_mask():
    x = layers.Embedding(5, 4, mask_zero=True)(np.array([[3, 1, 0]]))
    with pytest.warns(UserWarning, match=r"Layer 'flat' \(of type Flatten\) was passed an input "
                                         r"with a mask.*does not support masking"):
        y = layers.Flatten(name="flat")(x)
    assert get_mask(y) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layers.Flatten()(layers.Embedding(5, 4)(np.array([[3, 1, 0]])))   # no mask: silent


def test_global_average_pooling_1d_averages_unmasked_steps():
    x, mask = _padded_batch()
    x, mask = x[:4], mask[:4]
    pool = layers.GlobalAveragePooling1D()
    want = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    np.testing.assert_allclose(pool(x, mask=mask).numpy(), want, rtol=1e-6)
    seq = layers.Masking()(x * mask[..., None])
    out = pool(seq)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    assert get_mask(out) is None
    np.testing.assert_allclose(pool(x).numpy(), x.mean(1), rtol=1e-6)


def test_attention_layers_use_the_propagated_masks():
    rng = np.random.default_rng(0)
    q_ids = np.array([[1, 2, 0], [3, 0, 0]])
    v_ids = np.array([[4, 0, 0, 0], [1, 2, 3, 0]])
    emb = layers.Embedding(6, 4, mask_zero=True)
    emb.build(None)
    emb.embeddings.assign(rng.standard_normal((6, 4)).astype("float32"))
    q, v = emb(q_ids), emb(v_ids)
    att = layers.Attention()
    out = att([q, v])
    explicit = att([tf.identity(q), tf.identity(v)], mask=[q_ids != 0, v_ids != 0])
    np.testing.assert_allclose(out.numpy(), explicit.numpy(), rtol=1e-6)
    assert np.abs(att([tf.identity(q), tf.identity(v)]).numpy() - out.numpy()).max() > 1e-3
    np.testing.assert_array_equal(get_mask(out).numpy(), q_ids != 0)
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=3)
    out = mha(q, v)
    pairs = (q_ids != 0)[:, :, None] & (v_ids != 0)[:, None, :]
    explicit = mha(tf.identity(q), tf.identity(v), attention_mask=pairs)
    np.testing.assert_allclose(out.numpy(), explicit.numpy(), rtol=1e-6)
    np.testing.assert_array_equal(get_mask(out).numpy(), q_ids != 0)


def test_functional_model_takes_a_mask_argument():
    inputs = keras.Input((6, 3))
    model = keras.Model(inputs, layers.SimpleRNN(2, return_sequences=True)(inputs))
    x, mask = _padded_batch()
    with pytest.warns(UserWarning, match="Functional.*does not support masking"):  # as Keras
        out = model(x, mask=mask)
    weights = [w.numpy().astype("float64") for w in model.layers[1].weights]
    ref, _ = masked_rnn("SimpleRNN", x.astype("float64"), mask, weights, 2)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(get_mask(out).numpy(), mask)


# --- the mask table -------------------------------------------------------------------------------

def test_mask_table_entries_die_with_their_tensor():
    t = tf.constant([[1.0, 2.0]])
    set_mask(t, tf.constant([[True, False]]))
    key = id(t)
    assert key in _MASKS
    del t
    gc.collect()
    assert key not in _MASKS
    with pytest.raises(TypeError, match="set_mask: masks attach to minitf Tensors, got list"):
        set_mask([1.0], tf.constant([True]))


# --- training, tf.function, saving ----------------------------------------------------------------

def _toy_text(n=64, length=8, seed=0):
    """Label 1 when token 1 occurs in the (zero-padded) sequence."""
    rng = np.random.default_rng(seed)
    x = np.zeros((n, length), "int32")
    for row in range(n):
        size = rng.integers(2, length + 1)
        x[row, :size] = rng.integers(1, 10, size)
    y = (x == 1).any(axis=1).astype("float32")[:, None]
    return x, y


def test_fit_with_mask_zero_reduces_the_loss():
    tf.random.set_seed(7)
    model = _tutorial_model(vocab=10, dim=8, units=8)
    model.compile(optimizer=keras.optimizers.Adam(0.02),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True))
    x, y = _toy_text()
    history = model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
    # still padding-invariant after training (inside fit the steps were traced)
    more = np.pad(x[:4], ((0, 0), (0, 5)))
    np.testing.assert_allclose(model(more).numpy(), model(x[:4]).numpy(), rtol=1e-5,
                               atol=1e-6)


def test_masked_model_under_tf_function():
    tf.random.set_seed(8)
    model = _tutorial_model()

    @tf.function
    def predict(ids):
        return model(ids)

    first = np.array([[3, 4, 5, 0, 0], [6, 0, 0, 0, 0]], "int32")
    second = np.array([[7, 0, 0, 0, 0], [1, 2, 3, 4, 5]], "int32")
    for ids in (first, second):
        np.testing.assert_allclose(predict(tf.constant(ids)).numpy(), model(ids).numpy(),
                                   rtol=1e-6)
    # the mask was not frozen at trace time: row 0 of `second` equals [7] alone
    np.testing.assert_allclose(predict(tf.constant(second)).numpy()[0],
                               model(np.array([[7]], "int32")).numpy()[0], rtol=1e-5)


def test_save_and_load_a_mask_zero_model(tmp_path):
    tf.random.set_seed(9)
    model = _tutorial_model()
    ids = np.array([[3, 4, 5, 0, 0, 0], [6, 2, 0, 0, 0, 0]], "int32")
    want = model(ids).numpy()
    path = str(tmp_path / "masked.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.layers[0].mask_zero is True
    np.testing.assert_allclose(loaded(ids).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(loaded(ids[:, :3]).numpy(), want, rtol=1e-5)


def test_layer_normalization_passes_the_mask_through():
    ids = np.array([[3, 5, 0, 0], [2, 0, 0, 0]])
    embedded = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
    normed = keras.layers.LayerNormalization()(embedded)
    np.testing.assert_array_equal(get_mask(normed).numpy(), ids != 0)


# --- layers that use or combine masks (values printed by Keras 3.15, numpy backend) ----------

def test_batch_normalization_statistics_skip_masked_steps():
    x = np.random.default_rng(0).normal(size=(3, 5, 4)).astype("float32") * 2 + 1
    keep = np.array([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]], bool)
    bn = layers.BatchNormalization(momentum=0.5)
    y = bn(x, training=True, mask=tf.constant(keep))
    np.testing.assert_allclose(y.numpy()[0, :2], [[0.04462427, -0.6796422, 0.5639649, -0.0824492],
                                                 [-0.7670907, -0.08187556, 1.2088659, 0.8549258]],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_mean.numpy(),
                               [0.5893696, 0.9292167, 0.5601252, 0.67897624], rtol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(),
                               [1.8273555, 1.8637462, 2.6170177, 2.1139102], rtol=1e-6)
    # the same statistics in numpy: mean and biased variance of the kept steps
    kept = x[keep].astype(np.float64)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.5 * kept.mean(0), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.5 + 0.5 * kept.var(0), rtol=1e-5)
    with pytest.raises(ValueError, match="one dimension less"):
        bn(x, training=True, mask=tf.ones((3, 5, 4), tf.bool))


def test_masks_flow_through_batch_normalization_in_a_model():
    tokens = np.array([[4, 2, 0, 0], [1, 0, 0, 0]])
    embedded = layers.Embedding(6, 3, mask_zero=True)(tokens)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no "does not support masking" warning
        normalized = layers.BatchNormalization()(embedded, training=True)
    np.testing.assert_array_equal(get_mask(normalized).numpy(), tokens != 0)
    kept = embedded.numpy()[tokens != 0].astype(np.float64)
    np.testing.assert_allclose(normalized.numpy()[tokens != 0],
                               (kept - kept.mean(0)) / np.sqrt(kept.var(0) + 1e-3), rtol=1e-4,
                               atol=1e-5)


def test_merge_layers_combine_masks_as_keras():
    first = tf.constant(np.array([[1, 1, 0, 0, 0], [1, 0, 0, 0, 0]], bool))
    second = tf.constant(np.array([[1, 0, 0, 0, 1], [1, 1, 1, 0, 0]], bool))
    x = tf.ones((2, 5, 3))
    union = [[1, 1, 0, 0, 1], [1, 1, 1, 0, 0]]
    for layer in (layers.Add(), layers.Subtract(), layers.Multiply(), layers.Average(),
                  layers.Maximum(), layers.Minimum(), layers.Concatenate()):
        np.testing.assert_array_equal(layer.compute_mask([x, x], [first, second]).numpy(), union)
    assert layers.Add().compute_mask([x, x], [first, None]) is None
    np.testing.assert_array_equal(layers.Concatenate().compute_mask([x, x], [first, None]).numpy(),
                                  np.ones((2, 5)))
    np.testing.assert_array_equal(
        layers.Concatenate(axis=1).compute_mask([x, x], [first, second]).numpy(),
        [[1, 1, 0, 0, 0, 1, 0, 0, 0, 1], [1, 0, 0, 0, 0, 1, 1, 1, 0, 0]])
    assert layers.Dot(axes=2).compute_mask([x, x], [first, second]) is None
    # called on masked tensors, the output carries the combined mask
    embed = layers.Embedding(6, 3, mask_zero=True)
    a, b = embed(np.array([[1, 2, 0], [3, 0, 0]])), embed(np.array([[1, 0, 5], [0, 0, 0]]))
    np.testing.assert_array_equal(get_mask(layers.add([a, b])).numpy(), [[1, 1, 1], [1, 0, 0]])
