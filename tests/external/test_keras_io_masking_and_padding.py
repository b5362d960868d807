"""Port of the keras.io guide "Understanding masking & padding"
(https://keras.io/guides/understanding_masking_and_padding/).

Covered as the guide writes it (only the imports changed): ``keras.utils.pad_sequences`` on the
guide's three token lists (its printed padded matrix), ``Embedding(mask_zero=True)`` and
``Masking`` with the mask read from ``_keras_mask`` (the guide's printed boolean matrix), mask
propagation into ``LSTM`` in a Sequential and a functional model, passing ``mask=`` by hand
(the guide's ``MyLayer``), and the guide's custom layers ``TemporalSplit`` (``compute_mask``
returning two masks, the guide's printed halves), ``CustomEmbedding`` (``compute_mask`` of its
own), ``MyActivation`` (``supports_masking = True``) and ``TemporalSoftmax`` (a ``mask``
argument in ``call``).

Changed: the random token inputs are smaller or fixed (so that padded and masked steps are
known), and the LSTM outputs are checked against an independent float64 numpy recurrence that
skips masked steps (state carried, output repeated), which is what masking means for an RNN.
The guide's ``TemporalSoftmax`` sums over the last axis (of size 1 after ``Dense(1)``), so its
values are 1 at real steps and 0/0 = NaN at masked ones; that is asserted as written, and a
variant summing over time (the evident intent) is checked too. Likewise ``CustomEmbedding``'s
``ops.take(self.embeddings, inputs)`` has no ``axis``, so (numpy's rule, as Keras 3 with
TensorFlow does) it indexes the flattened table and returns one number per token.
"""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers, ops

RAW_INPUTS = [
    [711, 632, 71],
    [73, 8, 3215, 55, 927],
    [83, 91, 1, 645, 1253, 927],
]
GUIDE_PADDED = np.array([[711, 632, 71, 0, 0, 0],
                         [73, 8, 3215, 55, 927, 0],
                         [83, 91, 1, 645, 1253, 927]])
GUIDE_MASK = np.array([[True, True, True, False, False, False],
                       [True, True, True, True, True, False],
                       [True, True, True, True, True, True]])


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_lstm(x, kernel, recurrent_kernel, bias, mask=None):
    """float64 Keras LSTM (gates i, f, c, o) over (batch, time, features); at a masked step the
    states keep their values and the output repeats the previous one. Returns the last output."""
    x = x.astype(np.float64)
    batch, steps, _ = x.shape
    units = recurrent_kernel.shape[0]
    h = np.zeros((batch, units))
    c = np.zeros((batch, units))
    for t in range(steps):
        z = x[:, t] @ kernel + h @ recurrent_kernel + bias
        i, f = _sigmoid(z[:, :units]), _sigmoid(z[:, units:2 * units])
        g, o = np.tanh(z[:, 2 * units:3 * units]), _sigmoid(z[:, 3 * units:])
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        keep = np.ones((batch, 1), bool) if mask is None else mask[:, t:t + 1]
        h = np.where(keep, h_new, h)
        c = np.where(keep, c_new, c)
    return h


def _lstm_weights(lstm):
    kernel, recurrent_kernel, bias = (w.astype(np.float64) for w in lstm.get_weights())
    return kernel, recurrent_kernel, bias


def test_pad_sequences_as_printed_in_the_guide():
    padded_inputs = keras.utils.pad_sequences(RAW_INPUTS, padding="post")
    np.testing.assert_array_equal(padded_inputs, GUIDE_PADDED)
    assert padded_inputs.dtype == np.int32
    # the default is "pre" padding (zeros at the beginning), with 0 as the value
    pre = keras.utils.pad_sequences(RAW_INPUTS)
    np.testing.assert_array_equal(pre[0], [0, 0, 0, 711, 632, 71])
    np.testing.assert_array_equal(pre[2], RAW_INPUTS[2])
    # "value" configures the padding value; maxlen truncates ("pre" truncation by default)
    np.testing.assert_array_equal(
        keras.utils.pad_sequences(RAW_INPUTS, padding="post", value=-1)[0],
        [711, 632, 71, -1, -1, -1])
    np.testing.assert_array_equal(keras.utils.pad_sequences(RAW_INPUTS, maxlen=4),
                                  [[0, 711, 632, 71], [8, 3215, 55, 927], [1, 645, 1253, 927]])


def test_embedding_mask_zero_sets_keras_mask():
    padded_inputs = keras.utils.pad_sequences(RAW_INPUTS, padding="post")
    embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
    masked_output = embedding(padded_inputs)
    assert tuple(masked_output.shape) == (3, 6, 16)
    assert masked_output._keras_mask.dtype == tf.bool
    np.testing.assert_array_equal(masked_output._keras_mask.numpy(), GUIDE_MASK)
    np.testing.assert_array_equal(embedding.compute_mask(padded_inputs).numpy(), GUIDE_MASK)
    # the embedding values are the rows of the table, padding index included
    table = embedding.embeddings.numpy()
    np.testing.assert_array_equal(masked_output.numpy(), table[GUIDE_PADDED])


def test_masking_layer_sets_keras_mask():
    padded_inputs = keras.utils.pad_sequences(RAW_INPUTS, padding="post")
    masking_layer = layers.Masking()
    # Simulate the embedding lookup by expanding the 2D input to 3D, with embedding dimension 10.
    unmasked_embedding = ops.cast(
        ops.tile(ops.expand_dims(padded_inputs, axis=-1), [1, 1, 10]), dtype="float32")
    masked_embedding = masking_layer(unmasked_embedding)
    np.testing.assert_array_equal(masked_embedding._keras_mask.numpy(), GUIDE_MASK)
    np.testing.assert_array_equal(masked_embedding.numpy(),
                                  np.repeat(GUIDE_PADDED[..., None], 10, -1).astype("float32"))

    # a step is masked only when *all* its features equal mask_value; masked steps come out 0
    x = np.array([[[1.0, -1.0], [-1.0, -1.0], [-1.0, 2.0]]], "float32")
    y = layers.Masking(mask_value=-1.0)(x)
    np.testing.assert_array_equal(y._keras_mask.numpy(), [[True, False, True]])
    np.testing.assert_array_equal(y.numpy(), [[[1.0, -1.0], [0.0, 0.0], [-1.0, 2.0]]])


def _check_lstm_model_ignores_padding(model, embedding, lstm, padded):
    out = model(padded).numpy()
    assert out.shape == (padded.shape[0], 32)
    table = embedding.get_weights()[0].astype(np.float64)
    expected = _np_lstm(table[padded], *_lstm_weights(lstm), mask=padded != 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    # each padded row gives what its unpadded sequence gives alone
    for row, seq in zip(out, RAW_INPUTS):
        alone = model(np.array([seq], "int32")).numpy()[0]
        np.testing.assert_allclose(row, alone, rtol=1e-4, atol=1e-5)
    # and the result differs from running over the padding (the mask is really used)
    unmasked = _np_lstm(table[padded], *_lstm_weights(lstm))
    assert np.abs(out[0] - unmasked[0]).max() > 1e-3


def test_mask_propagates_to_lstm_in_sequential_model():
    tf.random.set_seed(0)
    model = keras.Sequential([
        layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True),
        layers.LSTM(32),
    ])
    padded = keras.utils.pad_sequences(RAW_INPUTS, padding="post")
    model(padded)
    _check_lstm_model_ignores_padding(model, model.layers[0], model.layers[1], padded)


def test_mask_propagates_to_lstm_in_functional_model():
    tf.random.set_seed(1)
    inputs = keras.Input(shape=(None,), dtype="int32")
    embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
    lstm = layers.LSTM(32)
    outputs = lstm(embedding(inputs))
    model = keras.Model(inputs, outputs)
    padded = keras.utils.pad_sequences(RAW_INPUTS, padding="post")
    _check_lstm_model_ignores_padding(model, embedding, lstm, padded)
    # "pre" padding: masked steps at the start leave the zero state untouched
    pre = keras.utils.pad_sequences(RAW_INPUTS)
    np.testing.assert_allclose(model(pre).numpy(), model(padded).numpy(), rtol=1e-4, atol=1e-5)


class MyLayer(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
        self.lstm = layers.LSTM(32)

    def call(self, inputs):
        x = self.embedding(inputs)
        # Note that you could also prepare a `mask` tensor manually.
        # It only needs to be a boolean tensor with the right shape, i.e. (batch_size, timesteps).
        mask = self.embedding.compute_mask(inputs)
        output = self.lstm(x, mask=mask)  # The layer will ignore the masked values
        return output


def test_passing_mask_tensors_directly_to_layers():
    tf.random.set_seed(2)
    layer = MyLayer()
    x = np.random.default_rng(0).random((32, 10)) * 100
    x = x.astype("int32")
    x[:, 7:] = 0          # padding at the end
    x[::2, 3] = 0         # and a masked step in the middle of every other sequence
    out = layer(x)
    assert tuple(out.shape) == (32, 32)
    table = layer.embedding.get_weights()[0].astype(np.float64)
    expected = _np_lstm(table[x], *_lstm_weights(layer.lstm), mask=x != 0)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


class TemporalSplit(keras.layers.Layer):
    """Split the input tensor into 2 tensors along the time dimension."""

    def call(self, inputs):
        # Expect the input to be 3D and mask to be 2D, split the input tensor into 2
        # subtensors along the time axis (axis 1).
        return ops.split(inputs, 2, axis=1)

    def compute_mask(self, inputs, mask=None):
        # Also split the mask into 2 if it presents.
        if mask is None:
            return None
        return ops.split(mask, 2, axis=1)


def test_temporal_split_splits_the_mask():
    padded_inputs = keras.utils.pad_sequences(RAW_INPUTS, padding="post")
    unmasked_embedding = ops.cast(
        ops.tile(ops.expand_dims(padded_inputs, axis=-1), [1, 1, 10]), dtype="float32")
    masked_embedding = layers.Masking()(unmasked_embedding)
    first_half, second_half = TemporalSplit()(masked_embedding)
    assert tuple(first_half.shape) == (3, 3, 10) and tuple(second_half.shape) == (3, 3, 10)
    np.testing.assert_array_equal(first_half._keras_mask.numpy(),
                                  [[True, True, True], [True, True, True], [True, True, True]])
    np.testing.assert_array_equal(second_half._keras_mask.numpy(),
                                  [[False, False, False], [True, True, False], [True, True, True]])
    # without an incoming mask there is none on the outputs
    a, b = TemporalSplit()(unmasked_embedding)
    assert getattr(a, "_keras_mask", None) is None and getattr(b, "_keras_mask", None) is None


class CustomEmbedding(keras.layers.Layer):
    def __init__(self, input_dim, output_dim, mask_zero=False, **kwargs):
        super().__init__(**kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.mask_zero = mask_zero

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            shape=(self.input_dim, self.output_dim),
            initializer="random_normal",
            dtype="float32",
        )

    def call(self, inputs):
        inputs = ops.cast(inputs, "int32")
        return ops.take(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return ops.not_equal(inputs, 0)


def test_custom_embedding_with_compute_mask():
    layer = CustomEmbedding(10, 32, mask_zero=True)
    x = np.random.default_rng(1).random((3, 10)) * 9
    x = x.astype("int32")
    x[0, -2:] = 0
    y = layer(x)
    mask = layer.compute_mask(x)
    np.testing.assert_array_equal(mask.numpy(), x != 0)
    assert not mask.numpy().all()
    # keras.ops.take without `axis` indexes the flattened table (numpy's rule), so the guide's
    # layer returns one number per token: shape (3, 10), as Keras 3 with TensorFlow gives
    assert tuple(y.shape) == (3, 10)
    np.testing.assert_array_equal(y.numpy(), layer.embeddings.numpy().ravel()[x])
    np.testing.assert_array_equal(y._keras_mask.numpy(), x != 0)
    assert CustomEmbedding(10, 32).compute_mask(x) is None


class MyActivation(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Signal that the layer is safe for mask propagation
        self.supports_masking = True

    def call(self, inputs):
        return ops.relu(inputs)


def test_supports_masking_passes_the_mask_along():
    tf.random.set_seed(3)
    inputs = keras.Input(shape=(None,), dtype="int32")
    embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
    x = embedding(inputs)
    x = MyActivation()(x)  # Will pass the mask along
    # The guide prints "Mask found: <KerasTensor shape=(None, None), dtype=bool, ...>"
    assert x._keras_mask is not None
    assert tuple(x._keras_mask.shape) == (None, None)
    assert x._keras_mask.dtype == tf.bool
    lstm = layers.LSTM(32)
    outputs = lstm(x)  # Will receive the mask
    model = keras.Model(inputs, outputs)

    tokens = np.random.default_rng(2).integers(1, 5000, size=(8, 12))
    tokens[:, 9:] = 0
    tokens[1, 4] = 0
    y = model(tokens)
    assert tuple(y.shape) == (8, 32)
    table = embedding.get_weights()[0].astype(np.float64)
    expected = _np_lstm(np.maximum(table[tokens], 0), *_lstm_weights(lstm), mask=tokens != 0)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-4, atol=1e-5)


class TemporalSoftmax(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        assert mask is not None
        broadcast_float_mask = ops.expand_dims(ops.cast(mask, "float32"), -1)
        inputs_exp = ops.exp(inputs) * broadcast_float_mask
        inputs_sum = ops.sum(inputs_exp * broadcast_float_mask, axis=-1, keepdims=True)
        return inputs_exp / inputs_sum


class TemporalSoftmaxOverTime(keras.layers.Layer):
    """The guide's layer normalising over the time axis (axis=1)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        assert mask is not None
        broadcast_float_mask = ops.expand_dims(ops.cast(mask, "float32"), -1)
        inputs_exp = ops.exp(inputs) * broadcast_float_mask
        inputs_sum = ops.sum(inputs_exp * broadcast_float_mask, axis=1, keepdims=True)
        return inputs_exp / inputs_sum


def _temporal_softmax_model(layer_class):
    inputs = keras.Input(shape=(None,), dtype="int32")
    embedding = layers.Embedding(input_dim=10, output_dim=32, mask_zero=True)
    dense = layers.Dense(1)
    x = dense(embedding(inputs))
    outputs = layer_class()(x)
    return keras.Model(inputs, outputs), embedding, dense


def _tokens():
    tokens = np.random.default_rng(3).integers(0, 10, size=(32, 100))
    tokens[:, 0] = 1  # every row has a real step
    assert (tokens == 0).any()
    return tokens


def test_temporal_softmax_receives_the_mask_in_call():
    tf.random.set_seed(4)
    model, _, _ = _temporal_softmax_model(TemporalSoftmax)
    tokens = _tokens()
    y = model(tokens).numpy()
    assert y.shape == (32, 100, 1)
    # the guide's layer sums over the feature axis of size 1: exp(x) / exp(x) where the step is
    # real, 0 / 0 where it is masked
    real = tokens != 0
    np.testing.assert_allclose(y[real], 1.0, rtol=1e-6)
    assert np.isnan(y[~real]).all()


def test_temporal_softmax_over_time_matches_numpy():
    tf.random.set_seed(5)
    model, embedding, dense = _temporal_softmax_model(TemporalSoftmaxOverTime)
    tokens = _tokens()
    y = model(tokens).numpy()
    table = embedding.get_weights()[0].astype(np.float64)
    kernel, bias = (w.astype(np.float64) for w in dense.get_weights())
    logits = table[tokens] @ kernel + bias
    weights = np.exp(logits) * (tokens != 0)[..., None]
    expected = weights / weights.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)
