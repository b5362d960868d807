"""Port of the keras.io code example "Timeseries classification with a Transformer model"
(https://keras.io/examples/timeseries/timeseries_classification_transformer/, keras-team/keras-io
examples/timeseries/timeseries_classification_transformer.py).

Kept: `transformer_encoder` (MultiHeadAttention(key_dim, num_heads, dropout) on (inputs, inputs),
Dropout, LayerNormalization(epsilon=1e-6), residual adds, the Conv1D(kernel_size=1) feed-forward
part), `build_model` with GlobalAveragePooling1D(data_format="channels_first") and the Dense /
Dropout head, compile with sparse_categorical_crossentropy, Adam(learning_rate=1e-4) and the
sparse_categorical_accuracy metric, fit with validation_split=0.2, batch_size=64 and
EarlyStopping(patience=10, restore_best_weights=True), evaluate.

Changed: the FordA dataset (a download) is replaced by a synthetic two-class set of 40-step
univariate series (an upward or a downward ramp plus noise). The example's full-size model
(head_size=256, num_heads=4, ff_dim=4, 4 blocks, mlp_units=[128], input (500, 1)) is only built,
to check the 93,130 parameters its summary prints; training uses a smaller configuration and 10
epochs. A later revision of the example pools with data_format="channels_last" (29,258
parameters); that count is checked as well. The encoder block is checked against a float64 numpy
computation with random weights and 4 features (with the example's single feature the
LayerNormalizations output their beta). TF 2.21 / Keras 3.15 on the same data and
configuration: the training loss goes from 0.91-1.05 to 0.68-0.78 in 10 epochs (3 seeds), and
evaluating the restored weights on the validation rows reproduces the best val_loss exactly.
"""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers

n_classes = 2


def transformer_encoder(inputs, head_size, num_heads, ff_dim, dropout=0):
    # Attention and Normalization
    x = layers.MultiHeadAttention(key_dim=head_size, num_heads=num_heads, dropout=dropout)(
        inputs, inputs)
    x = layers.Dropout(dropout)(x)
    x = layers.LayerNormalization(epsilon=1e-6)(x)
    res = x + inputs

    # Feed Forward Part
    x = layers.Conv1D(filters=ff_dim, kernel_size=1, activation="relu")(res)
    x = layers.Dropout(dropout)(x)
    x = layers.Conv1D(filters=inputs.shape[-1], kernel_size=1)(x)
    x = layers.LayerNormalization(epsilon=1e-6)(x)
    return x + res


def build_model(input_shape, head_size, num_heads, ff_dim, num_transformer_blocks, mlp_units,
                dropout=0, mlp_dropout=0, data_format="channels_first"):
    inputs = keras.Input(shape=input_shape)
    x = inputs
    for _ in range(num_transformer_blocks):
        x = transformer_encoder(x, head_size, num_heads, ff_dim, dropout)

    x = layers.GlobalAveragePooling1D(data_format=data_format)(x)
    for dim in mlp_units:
        x = layers.Dense(dim, activation="relu")(x)
        x = layers.Dropout(mlp_dropout)(x)
    outputs = layers.Dense(n_classes, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def _mha_params(dim, head_size, num_heads):
    qkv = 3 * (dim * num_heads * head_size + num_heads * head_size)
    return qkv + num_heads * head_size * dim + dim


def _block_params(dim, head_size, num_heads, ff_dim):
    return (_mha_params(dim, head_size, num_heads) + 2 * dim           # attention + LayerNorm
            + dim * ff_dim + ff_dim + ff_dim * dim + dim + 2 * dim)   # two 1x1 convs + LayerNorm


def test_full_size_model_parameter_count():
    model = build_model((500, 1), head_size=256, num_heads=4, ff_dim=4,
                        num_transformer_blocks=4, mlp_units=[128], mlp_dropout=0.4, dropout=0.25)
    assert _mha_params(1, 256, 4) == 7169  # the summary's multi_head_attention row
    hand = 4 * _block_params(1, 256, 4, 4) + (500 * 128 + 128) + (128 * 2 + 2)
    assert hand == 93130
    assert model.count_params() == 93130
    assert tuple(model.output.shape) == (None, 2)
    lines = []
    model.summary(print_fn=lines.append)
    assert any("Total params: 93,130" in line for line in lines)
    pooled = [l for l in model.layers if isinstance(l, layers.GlobalAveragePooling1D)][0]
    assert tuple(pooled.output.shape) == (None, 500)  # averages the feature axis


def test_channels_last_revision_parameter_count():
    model = build_model((500, 1), head_size=256, num_heads=4, ff_dim=4,
                        num_transformer_blocks=4, mlp_units=[128], mlp_dropout=0.4, dropout=0.25,
                        data_format="channels_last")
    assert model.count_params() == 4 * _block_params(1, 256, 4, 4) + (1 * 128 + 128) + 258 == 29258
    mha = [l for l in model.layers if isinstance(l, layers.MultiHeadAttention)]
    assert len(mha) == 4
    assert [tuple(w.shape) for w in mha[0].weights] == [
        (1, 4, 256), (4, 256), (1, 4, 256), (4, 256), (1, 4, 256), (4, 256), (4, 256, 1), (1,)]


def _layer_norm(x, gamma, beta, eps=1e-6):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_encoder_block_matches_numpy():
    head_size, num_heads, ff_dim, dim, steps = 8, 2, 5, 4, 6
    inputs = keras.Input(shape=(steps, dim))
    block = keras.Model(inputs, transformer_encoder(inputs, head_size, num_heads, ff_dim,
                                                    dropout=0.25))
    assert block.count_params() == _block_params(dim, head_size, num_heads, ff_dim) == 373
    rng = np.random.default_rng(3)
    block.set_weights([rng.normal(0, 0.5, w.shape).astype("float32")
                       for w in block.get_weights()])
    mha = [l for l in block.layers if isinstance(l, layers.MultiHeadAttention)][0]
    ln1, ln2 = [l for l in block.layers if isinstance(l, layers.LayerNormalization)]
    conv1, conv2 = [l for l in block.layers if isinstance(l, layers.Conv1D)]
    qk, qb, kk, kb, vk, vb, ok, ob = [w.astype(np.float64) for w in mha.get_weights()]

    x = rng.normal(size=(3, steps, dim))
    q = np.einsum("btd,dhk->bthk", x, qk) + qb
    k = np.einsum("btd,dhk->bthk", x, kk) + kb
    v = np.einsum("btd,dhk->bthk", x, vk) + vb
    scores = np.einsum("bqhk,bshk->bhqs", q, k) / np.sqrt(head_size)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    scores /= scores.sum(axis=-1, keepdims=True)
    att = np.einsum("bqhk,hkd->bqd", np.einsum("bhqs,bshk->bqhk", scores, v), ok) + ob
    res = _layer_norm(att, *[w.astype(np.float64) for w in ln1.get_weights()]) + x
    c1k, c1b = [w.astype(np.float64) for w in conv1.get_weights()]
    c2k, c2b = [w.astype(np.float64) for w in conv2.get_weights()]
    assert c1k.shape == (1, dim, ff_dim) and c2k.shape == (1, ff_dim, dim)
    h = np.maximum(res @ c1k[0] + c1b, 0) @ c2k[0] + c2b
    expected = _layer_norm(h, *[w.astype(np.float64) for w in ln2.get_weights()]) + res

    got = block(x.astype("float32"))  # inference: dropout off
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(block.predict(x.astype("float32"), verbose=0), expected,
                               rtol=1e-4, atol=1e-5)


def _ramps(rng, n, steps=40):
    y = rng.integers(0, 2, n)
    t = np.linspace(-1, 1, steps)
    x = (2 * y - 1)[:, None] * t[None] + 0.3 * rng.standard_normal((n, steps))
    return x.reshape((x.shape[0], x.shape[1], 1)).astype("float32"), y


def test_train_and_evaluate_small_model():
    rng = np.random.default_rng(0)
    x_train, y_train = _ramps(rng, 256)
    x_test, y_test = _ramps(rng, 128)
    idx = rng.permutation(len(x_train))
    x_train, y_train = x_train[idx], y_train[idx]

    tf.random.set_seed(0)
    model = build_model(x_train.shape[1:], head_size=16, num_heads=2, ff_dim=4,
                        num_transformer_blocks=2, mlp_units=[32], mlp_dropout=0.1, dropout=0.1)
    assert model.count_params() == 2 * _block_params(1, 16, 2, 4) + (40 * 32 + 32) + (32 * 2 + 2)
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=keras.optimizers.Adam(learning_rate=1e-4),
                  metrics=["sparse_categorical_accuracy"])
    loss0, _ = model.evaluate(x_train, y_train, verbose=0)
    callbacks = [keras.callbacks.EarlyStopping(patience=10, restore_best_weights=True)]
    history = model.fit(x_train, y_train, validation_split=0.2, epochs=10, batch_size=64,
                        callbacks=callbacks, verbose=0)
    assert set(history.history) == {"loss", "sparse_categorical_accuracy", "val_loss",
                                    "val_sparse_categorical_accuracy"}
    assert len(history.history["loss"]) == 10  # patience 10 never triggers in 10 epochs
    assert history.params["steps"] == 4  # floor(256 * 0.8) = 204 training rows, batches of 64
    loss1, _ = model.evaluate(x_train, y_train, verbose=0)
    assert loss1 < 0.9 * loss0, (loss0, loss1)
    # restore_best_weights: the model now holds the weights of the best val_loss epoch;
    # the validation rows are the last 52 (Keras splits at floor(n * (1 - 0.2))).
    val_loss, _ = model.evaluate(x_train[204:], y_train[204:], verbose=0)
    np.testing.assert_allclose(val_loss, min(history.history["val_loss"]), rtol=1e-5)
    test_loss, test_acc = model.evaluate(x_test, y_test, verbose=1)
    assert np.isfinite(test_loss) and 0.0 <= test_acc <= 1.0
