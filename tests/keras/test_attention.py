"""MultiHeadAttention, Attention and AdditiveAttention: outputs against softmax attention
written out in numpy, masks, returned scores, gradients, tf.function, training, configs, weight
files, errors.

The ``attn_*`` fixtures in ``tests/fixtures/keras`` were written by Keras 3.15 (numpy backend):
Keras built the models ``attn_mha`` and ``attn_luong`` of ``tools/layer_fixture_models.py``
(the same code builds them here, ``K`` = ``keras``), gave every weight ``normal(0, 0.5)`` values (numpy ``default_rng(500 + i)``), saved
them with ``save_weights`` and recorded its inference outputs for the inputs ``x0, x1...``,
plus calls of single layers with masks (``mask``, ``qmask``, ``vmask``).
"""
import os
import sys

import numpy as np
import pytest

import h5_layout
import minitf as tf
from minitf import keras
from minitf.keras import layers
from minitf.testing import check_grads, check_variable_grads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import layer_fixture_models as fixture_models  # noqa: E402 - the models of the fixtures
RNG = np.random.default_rng(0)


def _randomize(layer, seed=1, scale=0.5):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.standard_normal(v.shape.as_list()) * scale)


# --- numpy references ----------------------------------------------------------------------------

def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _mha_reference(layer, q, v, k=None, mask=None):
    """Keras 3's MultiHeadAttention with explicit loops over batch and heads."""
    k = v if k is None else k
    wq, bq, wk, bk, wv, bv, wo, bo = [w.numpy() for w in layer.weights]
    batch, heads = q.shape[0], wq.shape[1]
    out = np.zeros(q.shape[:-1] + wo.shape[2:])
    probs = np.zeros((batch, heads, q.shape[1], v.shape[1]))
    for b in range(batch):
        for n in range(heads):
            qh = q[b] @ wq[:, n] + bq[n]                     # (T, key_dim)
            kh = k[b] @ wk[:, n] + bk[n]                     # (S, key_dim)
            vh = v[b] @ wv[:, n] + bv[n]                     # (S, value_dim)
            scores = qh @ kh.T / np.sqrt(wq.shape[2])
            if mask is not None:
                scores = np.where(mask[b], scores, -1e9)
            p = _softmax(scores)
            if mask is not None:
                p = np.where(mask[b], p, 0.0)
            probs[b, n] = p
            out[b] += np.tensordot(p @ vh, wo[n], axes=1)
    return out + bo, probs


def _attention_reference(q, v, k, scores_fn, q_mask=None, v_mask=None, causal=False):
    scores = np.stack([scores_fn(q[b], k[b]) for b in range(q.shape[0])])
    allowed = np.ones(scores.shape, bool)
    if v_mask is not None:
        allowed &= v_mask[:, None, :]
    if causal:
        allowed &= np.tril(np.ones(scores.shape[1:], bool))
    weights = _softmax(np.where(allowed, scores, scores - 1e9))
    out = weights @ v
    if q_mask is not None:
        out = np.where(q_mask[..., None], out, 0.0)
    return out, weights


# --- MultiHeadAttention --------------------------------------------------------------------------

def _mha(q_shape=(2, 4, 6), v_shape=(2, 5, 6), k_shape=None, **kwargs):
    layer = layers.MultiHeadAttention(dtype="float64", **kwargs)
    layer.build(q_shape, v_shape, k_shape)
    _randomize(layer)
    return layer


def test_mha_weights_are_laid_out_and_named_as_keras():
    layer = _mha(k_shape=(2, 5, 3), num_heads=2, key_dim=3, value_dim=4, output_shape=7,
                 name="mha")
    # paths, shapes and order as Keras 3.15 lists them for the same layer
    assert [(v.path, tuple(v.shape)) for v in layer.weights] == [
        ("mha/query/kernel", (6, 2, 3)), ("mha/query/bias", (2, 3)),
        ("mha/key/kernel", (3, 2, 3)), ("mha/key/bias", (2, 3)),
        ("mha/value/kernel", (6, 2, 4)), ("mha/value/bias", (2, 4)),
        ("mha/attention_output/kernel", (2, 4, 7)), ("mha/attention_output/bias", (7,))]
    assert layer.count_params() == 36 + 6 + 18 + 6 + 48 + 8 + 56 + 7


@pytest.mark.parametrize("with_key", [False, True])
def test_mha_matches_numpy_reference(with_key):
    k_shape = (2, 5, 3) if with_key else None
    layer = _mha(k_shape=k_shape, num_heads=2, key_dim=3, value_dim=4, output_shape=7)
    q, v = RNG.standard_normal((2, 4, 6)), RNG.standard_normal((2, 5, 6))
    k = RNG.standard_normal((2, 5, 3)) if with_key else None
    out, scores = layer(q, v, k, return_attention_scores=True)
    want, want_scores = _mha_reference(layer, q, v, k)
    assert out.shape == (2, 4, 7) and scores.shape == (2, 2, 4, 5)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scores.numpy().sum(-1), 1.0, rtol=1e-12)


def test_mha_takes_query_value_and_key_by_keyword():
    # Keras 3 binds the inputs by name: mha(query=x, value=x, key=x), as the TF Transformer
    # tutorial calls it
    layer = _mha(k_shape=(2, 5, 3), num_heads=2, key_dim=3)
    q, v, k = RNG.standard_normal((2, 4, 6)), RNG.standard_normal((2, 5, 6)), \
        RNG.standard_normal((2, 5, 3))
    causal = np.tril(np.ones((4, 5), bool))
    out, scores = layer(query=q, key=k, value=v, use_causal_mask=True,
                        return_attention_scores=True)
    want, want_scores = _mha_reference(layer, q, v, k, mask=np.broadcast_to(causal, (2, 4, 5)))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-10, atol=1e-12)
    # the query's padding mask still reaches the attention when the query is a keyword
    x = layers.Embedding(7, 6, mask_zero=True, dtype="float64")(tf.constant([[3, 5, 0, 0]]))
    self_layer = _mha(q_shape=(1, 4, 6), v_shape=(1, 4, 6), num_heads=2, key_dim=3)
    _, scores = self_layer(query=x, value=x, key=x, return_attention_scores=True)
    assert (scores.numpy()[0, :, :2, 2:] == 0).all()
    np.testing.assert_allclose(scores.numpy()[0, :, :2, :2].sum(-1), 1.0, rtol=1e-12)
    with pytest.raises(TypeError, match="needs the inputs as its first argument"):
        layer(value=v, key=k)


def test_mha_consumes_the_masks_of_its_inputs():
    # Keras 3.15 MultiHeadAttention.call: the inputs' masks are removed, the output keeps the
    # query's, so a residual Add of input and output (masks OR-ed, None if one is missing) has none
    x = layers.Embedding(7, 6, mask_zero=True)(tf.constant([[3, 5, 0], [1, 0, 0]]))
    context = layers.Embedding(7, 6, mask_zero=True)(tf.constant([[2, 0], [4, 4]]))
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=3)
    out = mha(x, context)
    assert x._keras_mask is None and context._keras_mask is None
    np.testing.assert_array_equal(out._keras_mask.numpy(), [[True, True, False],
                                                            [True, False, False]])
    assert layers.Add()([x, out])._keras_mask is None


def test_mha_padding_and_causal_masks():
    layer = _mha(num_heads=3, key_dim=2)
    x = RNG.standard_normal((2, 5, 6))
    lengths = np.array([5, 3])
    padding = np.arange(5)[None, None, :] < lengths[:, None, None]   # (B, 1, S)
    out, scores = layer(x, x, attention_mask=padding, return_attention_scores=True)
    want, want_scores = _mha_reference(layer, x, x, mask=np.broadcast_to(padding, (2, 5, 5)))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-10, atol=1e-12)
    assert (scores.numpy()[1, :, :, 3:] == 0).all()

    causal = np.tril(np.ones((5, 5), bool))
    out, scores = layer(x, x, use_causal_mask=True, attention_mask=padding,
                        return_attention_scores=True)
    want, want_scores = _mha_reference(layer, x, x, mask=causal[None] & padding)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-10, atol=1e-12)
    assert (np.triu(scores.numpy()[0, 0], 1) == 0).all()
    # the causal output at step t does not depend on later steps
    changed = x.copy()
    changed[:, 3:] += 1.0
    np.testing.assert_allclose(layer(changed, changed, use_causal_mask=True).numpy()[:, :3],
                               layer(x, x, use_causal_mask=True).numpy()[:, :3], rtol=1e-12)


def test_mha_integer_mask_and_fully_masked_query():
    """A 0/1 mask works like a bool mask; a query with every key masked attends to nothing,
    so its output is the output projection's bias (Keras 3's masked Softmax zeroes it)."""
    layer = _mha(num_heads=2, key_dim=3)
    q, v = RNG.standard_normal((2, 4, 6)), RNG.standard_normal((2, 5, 6))
    mask = (RNG.random((2, 4, 5)) > 0.3).astype("int32")
    mask[0, 1] = 0
    out, scores = layer(q, v, attention_mask=mask, return_attention_scores=True)
    want, _ = _mha_reference(layer, q, v, mask=mask.astype(bool))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
    assert (scores.numpy()[0, :, 1] == 0).all()
    np.testing.assert_allclose(out.numpy()[0, 1], layer.output_dense.bias.numpy(), rtol=1e-12)


def test_mha_fully_masked_query_without_dropout_or_scores_is_uniform():
    """Keras 3.15 runs MultiHeadAttention without dropout and returned scores through the fused
    dot_product_attention, where a query with every key masked attends uniformly to all keys;
    with dropout or return_attention_scores its probabilities are zeroed. Expected rows: the
    same weights and inputs in TF 2.21 / Keras 3.15."""
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 3, 4)).astype("float32")
    v = rng.standard_normal((1, 4, 4)).astype("float32")
    mask = np.ones((1, 3, 4), bool)
    mask[0, 1] = False
    mask[0, 2, 2:] = False
    want = {(0.0, False): [0.09617, -1.04224, 0.11406, 0.15447],
            (0.0, True): [0.08352, 0.36729, -0.29371, 0.18985],
            (0.1, False): [0.49325, 0.37663, 0.60449, 0.35724]}
    for (dropout, scores), row in want.items():
        layer = layers.MultiHeadAttention(num_heads=2, key_dim=2, dropout=dropout)
        layer(q, v)
        for w in layer.weights:
            w.assign(rng.standard_normal(tuple(w.shape)).astype("float32") * 0.5)
        out = layer(q, v, attention_mask=mask, return_attention_scores=scores)
        out = out[0] if scores else out
        np.testing.assert_allclose(out.numpy()[0, 1], row, atol=2e-5)
        _, _, _, _, wv, bv, wo, bo = [w.numpy().astype("float64") for w in layer.weights]
        mean_value = (np.einsum("sd,dnh->snh", v[0], wv) + bv).mean(axis=0)    # (heads, h)
        uniform = np.einsum("nh,nho->o", mean_value, wo) + bo
        np.testing.assert_allclose(out.numpy()[0, 1], bo if dropout or scores else uniform,
                                   rtol=1e-5, atol=1e-6)


def test_mha_without_bias_and_with_dropout():
    layer = _mha(num_heads=2, key_dim=2, use_bias=False, dropout=0.5)
    assert [v.path.split("/", 1)[1] for v in layer.weights] == [
        "query/kernel", "key/kernel", "value/kernel", "attention_output/kernel"]
    x = RNG.standard_normal((2, 4, 6))
    tf.random.set_seed(3)
    inference = layer(x, x).numpy()
    np.testing.assert_array_equal(layer(x, x, training=False).numpy(), inference)
    trained = layer(x, x, training=True).numpy()
    assert np.abs(trained - inference).max() > 1e-3


def test_mha_rank4_inputs_attend_over_all_middle_axes():
    """Keras' default attention_axes for (B, H, W, C) inputs: (1, 2), i.e. every pixel
    attends to every pixel, which equals attention over the flattened pixels."""
    layer = _mha((2, 2, 3, 5), (2, 2, 3, 5), num_heads=2, key_dim=2)
    img = RNG.standard_normal((2, 2, 3, 5))
    out, scores = layer(img, img, return_attention_scores=True)
    assert out.shape == (2, 2, 3, 5) and scores.shape == (2, 2, 2, 3, 2, 3)
    flat = img.reshape(2, 6, 5)
    want, want_scores = _mha_reference(layer, flat, flat)
    np.testing.assert_allclose(out.numpy(), want.reshape(2, 2, 3, 5), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(scores.numpy(), want_scores.reshape(2, 2, 2, 3, 2, 3),
                               rtol=1e-10, atol=1e-12)


def test_mha_input_gradients_match_central_differences():
    layer = _mha((1, 3, 4), (1, 2, 4), num_heads=2, key_dim=2, value_dim=3)
    q, v = RNG.standard_normal((1, 3, 4)), RNG.standard_normal((1, 2, 4))
    mask = np.array([[[True, True], [True, False], [False, True]]])

    def run(q, v):
        return layer(q, v, attention_mask=mask)

    check_grads(run, [q, v], order=2)


def test_mha_weight_gradients_match_central_differences():
    layer = _mha((2, 3, 4), (2, 3, 4), num_heads=2, key_dim=2, value_dim=2, output_shape=3)
    x = RNG.standard_normal((2, 3, 4))
    target = RNG.standard_normal((2, 3, 3))

    def loss():
        return tf.reduce_sum((layer(x, x, use_causal_mask=True) - target) ** 2)

    assert len(layer.trainable_variables) == 8
    check_variable_grads(loss, layer.trainable_variables, rtol=1e-6, atol=1e-8)


def test_mha_in_tf_function_over_two_calls():
    layer = _mha(num_heads=2, key_dim=3)

    @tf.function
    def step(q, v, mask):
        out, scores = layer(q, v, attention_mask=mask, return_attention_scores=True,
                            use_causal_mask=True)
        return out, scores

    for _ in range(2):
        q, v = RNG.standard_normal((2, 4, 6)), RNG.standard_normal((2, 4, 6))
        mask = RNG.random((2, 4, 4)) > 0.3
        out, scores = step(tf.constant(q), tf.constant(v), tf.constant(mask))
        want, want_scores = _mha_reference(layer, q, v,
                                           mask=mask & np.tril(np.ones((4, 4), bool)))
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-10, atol=1e-12)


def _transformer_block(seq=6, dim=8):
    inputs = keras.Input((seq, dim))
    attended = layers.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs,
                                                                 use_causal_mask=True)
    x = layers.LayerNormalization()(inputs + attended)
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(inputs, layers.Dense(1)(x))


def test_mha_model_fit_reduces_the_loss():
    tf.random.set_seed(0)
    model = _transformer_block()
    x = RNG.standard_normal((64, 6, 8)).astype("float32")
    y = (x[:, :, 0].sum(axis=1, keepdims=True) > 0).astype("float32")
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0]


def test_mha_functional_scores_output_and_shapes():
    q_in, v_in = keras.Input((4, 6)), keras.Input((5, 3))
    layer = layers.MultiHeadAttention(2, 3, output_shape=(2, 3))
    out, scores = layer(q_in, v_in, return_attention_scores=True)
    assert tuple(out.shape) == (None, 4, 2, 3) and tuple(scores.shape) == (None, 2, 4, 5)
    model = keras.Model([q_in, v_in], [out, scores])
    q, v = RNG.standard_normal((3, 4, 6)), RNG.standard_normal((3, 5, 3))
    got_out, got_scores = model([q, v])
    assert got_out.shape == (3, 4, 2, 3) and got_scores.shape == (3, 2, 4, 5)
    np.testing.assert_allclose(got_scores.numpy().sum(-1), 1.0, rtol=1e-5)
    assert layer.compute_output_shape((None, 4, 6), (None, 5, 3)) == (None, 4, 2, 3)


def test_mha_get_config_round_trip_and_keras_keys():
    layer = layers.MultiHeadAttention(4, 8, value_dim=6, dropout=0.1, use_bias=False,
                                      output_shape=5, kernel_initializer="he_normal",
                                      name="mha")
    config = layer.get_config()
    # the keys Keras 3.15's MultiHeadAttention.get_config returns
    assert set(config) == {
        "name", "trainable", "dtype", "num_heads", "key_dim", "value_dim", "dropout",
        "use_bias", "use_gate", "output_shape", "attention_axes", "sliding_window",
        "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
        "activity_regularizer", "kernel_constraint", "bias_constraint", "seed"}
    assert config["output_shape"] == (5,) and config["value_dim"] == 6
    clone = layers.MultiHeadAttention.from_config(config)
    assert clone.get_config() == config
    again = layers.deserialize(layers.serialize(layer))
    assert type(again) is layers.MultiHeadAttention and again.num_heads == 4
    x = np.zeros((1, 3, 7), "float32")
    assert clone(x, x).shape == (1, 3, 5)
    assert clone.get_config()["attention_axes"] == (1,)  # filled in when built, as Keras
    assert layers.MultiHeadAttention.from_config(clone.get_config())(x, x).shape == (1, 3, 5)


def test_mha_weights_h5_round_trip(tmp_path):
    model = _transformer_block()
    x = RNG.standard_normal((2, 6, 8)).astype("float32")
    before = model(x).numpy()
    path = str(tmp_path / "block.weights.h5")
    model.save_weights(path)
    fresh = _transformer_block()
    assert np.abs(fresh(x).numpy() - before).max() > 1e-4
    fresh.load_weights(path)
    np.testing.assert_array_equal(fresh(x).numpy(), before)


def test_mha_keras_archive_round_trip(tmp_path):
    model = _transformer_block()
    x = RNG.standard_normal((2, 6, 8)).astype("float32")
    path = str(tmp_path / "block.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


def test_mha_errors():
    with pytest.raises(ValueError, match="num_heads must be a positive integer"):
        layers.MultiHeadAttention(0, 4)
    with pytest.raises(ValueError, match="key_dim must be a positive integer"):
        layers.MultiHeadAttention(2, 2.5)
    with pytest.raises(ValueError, match=r"only the default attention_axes .*\(1, 2\)"):
        layers.MultiHeadAttention(2, 2, attention_axes=(2,))(np.zeros((1, 2, 3, 4)),
                                                             np.zeros((1, 2, 3, 4)))
    with pytest.raises(ValueError, match="value and key except the last must be equal"):
        layers.MultiHeadAttention(2, 2)(np.zeros((1, 3, 4)), np.zeros((1, 5, 4)),
                                        np.zeros((1, 4, 4)))
    with pytest.raises(ValueError, match="rank >= 3"):
        layers.MultiHeadAttention(2, 2)(np.zeros((3, 4)), np.zeros((3, 4)))
    layer = _mha(num_heads=2, key_dim=2)
    with pytest.raises(ValueError, match=r"attention_mask must be \(batch, 4, 5\)"):
        layer(np.zeros((2, 4, 6)), np.zeros((2, 5, 6)), attention_mask=np.ones((5,), bool))


# --- Keras 3 files -------------------------------------------------------------------------------

def _load(name):
    model = fixture_models.MODELS[name](keras)
    data = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    xs = [data[f"x{i}"] for i in range(sum(f.startswith("x") for f in data.files))]
    before = model(xs)
    model.load_weights(os.path.join(FIXTURES, f"{name}.weights.h5"))
    return model, data, xs, before


@pytest.mark.parametrize("name", ["attn_mha", "attn_luong"])
def test_keras_weights_file_reproduces_keras_outputs(name):
    model, data, xs, before = _load(name)
    outputs = model(xs, training=False)
    changed = 0
    for i, (old, out) in enumerate(zip(before, outputs)):
        want = data[f"y{i}"]
        assert np.abs(want).max() > 0.1
        changed += np.abs(old.numpy() - want).max() > 1e-3
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    assert changed >= len(outputs) - 1   # only the weightless Attention() gave Keras' output


@pytest.mark.parametrize("name", ["attn_mha", "attn_luong"])
def test_written_layout_equals_keras_layout(name, tmp_path):
    model = fixture_models.MODELS[name](keras)
    path = tmp_path / f"{name}.weights.h5"
    model.save_weights(path)
    assert h5_layout.listing(path) == h5_layout.listing(os.path.join(FIXTURES, f"{name}.weights.h5"))


def test_keras_mha_masks_match():
    model, data, xs, _ = _load("attn_mha")
    cross = model.layers[4]
    q, v, k, _ = xs
    mask = data["mask"]
    out, scores = cross(q, v, k, attention_mask=mask, use_causal_mask=True,
                        return_attention_scores=True)
    np.testing.assert_allclose(out.numpy(), data["masked_causal"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), data["masked_causal_scores"], rtol=1e-5,
                               atol=1e-6)
    # Keras' fused path (no scores returned, no dropout) gives a query with every key masked
    # a uniform distribution; minitf attends to nothing there, as Keras' other path does.
    masked = cross(q, v, k, attention_mask=mask).numpy()
    keep = mask.any(axis=-1)
    assert not keep.all()
    np.testing.assert_allclose(masked[keep], data["masked"][keep], rtol=1e-5, atol=1e-5)


def test_keras_luong_masks_match():
    model, data, xs, _ = _load("attn_luong")
    for i, layer in enumerate(model.layers[3:]):
        assert type(layer).__name__ == str(data[f"layer{i}"])
        out, scores = layer(xs, mask=[data["qmask"], data["vmask"]],
                            return_attention_scores=True, use_causal_mask=True)
        np.testing.assert_allclose(out.numpy(), data[f"masked{i}"], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(scores.numpy(), data[f"masked_scores{i}"], rtol=1e-5,
                                   atol=1e-6)


# --- Attention / AdditiveAttention ---------------------------------------------------------------

def test_attention_dot_matches_numpy():
    q, v, k = (RNG.standard_normal(s) for s in ((2, 4, 3), (2, 5, 3), (2, 5, 3)))
    layer = layers.Attention(dtype="float64")
    out, weights = layer([q, v, k], return_attention_scores=True)
    want, want_w = _attention_reference(q, v, k, lambda a, b: a @ b.T)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(weights.numpy(), want_w, rtol=1e-12)
    assert layer.weights == []
    # key defaults to value
    np.testing.assert_allclose(layer([q, v]).numpy(),
                               _attention_reference(q, v, v, lambda a, b: a @ b.T)[0],
                               rtol=1e-12)


def test_attention_scale_concat_and_masks():
    q, v, k = (RNG.standard_normal(s) for s in ((2, 4, 3), (2, 4, 3), (2, 4, 3)))
    layer = layers.Attention(use_scale=True, score_mode="concat", dtype="float64")
    layer([q, v, k])
    layer.scale.assign(0.7)
    layer.concat_score_weight.assign(1.3)
    q_mask = np.array([[1, 1, 0, 1], [1, 1, 1, 1]], bool)
    v_mask = np.array([[1, 0, 1, 1], [1, 1, 1, 0]], bool)
    out, weights = layer([q, v, k], mask=[q_mask, v_mask], use_causal_mask=True,
                         return_attention_scores=True)
    want, want_w = _attention_reference(
        q, v, k, lambda a, b: 1.3 * np.tanh(0.7 * (a[:, None] + b[None])).sum(-1),
        q_mask, v_mask, causal=True)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(weights.numpy(), want_w, rtol=1e-12, atol=1e-300)
    assert (out.numpy()[0, 2] == 0).all()


def test_additive_attention_matches_numpy_and_trains():
    q, v = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4))
    layer = layers.AdditiveAttention(dtype="float64")
    layer([q, v])
    scale = layer.scale.numpy()
    assert scale.shape == (4,)
    out = layer([q, v])
    want, _ = _attention_reference(q, v, v, lambda a, b: (scale * np.tanh(a[:, None] + b[None]))
                                   .sum(-1))
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)
    check_grads(lambda q, v: layer([q, v]), [q, v], order=1)


def test_attention_dropout_only_when_training():
    layer = layers.Attention(dropout=0.5)
    q, v = RNG.standard_normal((2, 4, 3)), RNG.standard_normal((2, 6, 3))
    out = layer([q, v]).numpy()
    np.testing.assert_array_equal(layer([q, v], training=False).numpy(), out)
    assert np.abs(layer([q, v], training=True).numpy() - out).max() > 1e-3


def test_attention_in_tf_function_and_functional_model():
    layer = layers.Attention(use_scale=True)

    @tf.function
    def run(q, v):
        return layer([q, v], return_attention_scores=True)

    for _ in range(2):
        q, v = (RNG.standard_normal((2, 3, 4)).astype("float32") for _ in range(2))
        out, weights = run(tf.constant(q), tf.constant(v))
        want, want_w = _attention_reference(q, v, v, lambda a, b: a @ b.T)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(weights.numpy(), want_w, rtol=1e-5, atol=1e-6)

    q_in, v_in = keras.Input((3, 4)), keras.Input((7, 4))
    out, scores = layers.AdditiveAttention()([q_in, v_in], return_attention_scores=True)
    assert tuple(out.shape) == (None, 3, 4) and tuple(scores.shape) == (None, 3, 7)
    model = keras.Model([q_in, v_in], [out, scores])
    got = model([RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 7, 4))])
    assert got[1].shape == (2, 3, 7)


def test_attention_configs_round_trip():
    layer = layers.Attention(use_scale=True, score_mode="concat", dropout=0.2, name="att")
    config = layer.get_config()
    assert {k: config[k] for k in ("use_scale", "score_mode", "dropout", "seed")} == {
        "use_scale": True, "score_mode": "concat", "dropout": 0.2, "seed": None}
    assert layers.Attention.from_config(config).get_config() == config
    additive = layers.AdditiveAttention(use_scale=False)
    config = additive.get_config()
    assert "score_mode" not in config and config["use_scale"] is False   # as Keras 3
    again = layers.deserialize(layers.serialize(additive))
    assert type(again) is layers.AdditiveAttention and again.use_scale is False


def test_attention_errors():
    layer = layers.Attention()
    with pytest.raises(ValueError, match=r"list of 2 or 3 inputs"):
        layer(np.zeros((1, 2, 3)))
    with pytest.raises(ValueError, match="score_mode must be one of"):
        layers.Attention(score_mode="cosine")
    with pytest.raises(ValueError, match="same number of steps"):
        layers.Attention()([np.zeros((1, 2, 3)), np.zeros((1, 4, 3)), np.zeros((1, 5, 3))])
    with pytest.raises(ValueError, match=r"mask must be a list \[query_mask, value_mask\]"):
        layers.Attention()([np.zeros((1, 2, 3)), np.zeros((1, 4, 3))],
                           mask=np.ones((1, 4), bool))


def test_mha_query_value_and_key_mask_arguments():
    # Keras 3.15: key_mask=m gives exactly attention_mask=m[:, None, :]; query_mask=r gives
    # attention_mask=r[:, :, None] (rows of masked queries get no attention); an explicit
    # mask replaces the tensor's own.
    tf.keras.utils.set_random_seed(0)
    mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    q = tf.constant(np.random.default_rng(0).normal(size=(2, 3, 4)), tf.float32)
    keys = np.array([[True, True, False], [True, False, False]])
    rows = np.array([[True, False, True], [True, True, False]])
    np.testing.assert_allclose(mha(q, q, key_mask=tf.constant(keys)).numpy(),
                               mha(q, q, attention_mask=keys[:, None, :]).numpy())
    np.testing.assert_allclose(mha(q, q, value_mask=tf.constant(keys)).numpy(),
                               mha(q, q, attention_mask=keys[:, None, :]).numpy())
    np.testing.assert_allclose(
        mha(q, q, query_mask=tf.constant(rows), key_mask=tf.constant(keys)).numpy(),
        mha(q, q, attention_mask=rows[:, :, None] & keys[:, None, :]).numpy())
