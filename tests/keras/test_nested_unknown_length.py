"""A model nested in another, called on an input whose length is unknown (``Input((None,))``,
a variable-length ``TextVectorization``): its output shape comes from its layers' own rules,
as in Keras, so a ``Conv1D`` inside sees an unknown length, not a placeholder of length 1.
The reference values are the same layers applied one after the other."""
import numpy as np
import pytest

import minitf as tf
from minitf.keras import layers

pytestmark = pytest.mark.filterwarnings("ignore:Layer 'conv1d.*does not support masking")


def conv_stack():
    return [layers.Embedding(20, 4), layers.Conv1D(3, 5, strides=2, activation="relu"),
            layers.GlobalMaxPooling1D()]


TOKENS = np.array([[1, 2, 3, 4, 5, 6, 7, 8, 9], [9, 8, 7, 6, 5, 4, 3, 2, 1]], np.int64)


def apply(stack, x):
    for layer in stack:
        x = layer(x)
    return x


def test_sequential_nested_in_sequential():
    stack = conv_stack()
    inner = tf.keras.Sequential(stack)
    inner(TOKENS)        # built on data first, as a trained model is
    outer = tf.keras.Sequential([tf.keras.Input(shape=(None,), dtype="int64"), inner,
                                 layers.Dense(2)])
    assert outer.output_shape == (None, 2)
    assert inner.output_shape == (None, 3)
    np.testing.assert_allclose(outer(TOKENS).numpy(),
                               outer.layers[-1](apply(stack, TOKENS)).numpy(), rtol=1e-6)


def test_functional_nested_in_functional():
    tokens = tf.keras.Input(shape=(None,), dtype="int64")
    stack = conv_stack()
    inner = tf.keras.Model(tokens, apply(stack, tokens))
    outer_in = tf.keras.Input(shape=(None,), dtype="int64")
    dense = layers.Dense(2)
    outer = tf.keras.Model(outer_in, dense(inner(outer_in)))
    assert tuple(outer.output.shape) == (None, 2)
    np.testing.assert_allclose(outer(TOKENS).numpy(), dense(apply(stack, TOKENS)).numpy(),
                               rtol=1e-6)
    # The nested call left the outer graph with its own input and two layers.
    assert [type(layer).__name__ for layer in outer.layers] == ["InputLayer", "Functional",
                                                                "Dense"]


def test_an_unknown_length_stays_unknown_and_the_mask_passes():
    inner = tf.keras.Sequential([layers.Embedding(20, 4, mask_zero=True),
                                 layers.LSTM(3, return_sequences=True)])
    outer = tf.keras.Sequential([tf.keras.Input(shape=(None,), dtype="int64"), inner])
    assert outer.output_shape == (None, None, 3)
    mask = outer.output._keras_mask
    assert mask is not None and tuple(mask.shape) == (None, None)
    padded = np.array([[3, 4, 0, 0]], np.int64)
    # A masked LSTM repeats its last output over the padding.
    out = outer(padded).numpy()
    np.testing.assert_allclose(out[0, 2], out[0, 1], rtol=1e-6)
    np.testing.assert_allclose(out[0, 3], out[0, 1], rtol=1e-6)


def test_a_known_length_is_inferred_as_before():
    inner = tf.keras.Sequential([layers.Embedding(20, 4), layers.Flatten()])
    outer = tf.keras.Sequential([tf.keras.Input(shape=(6,), dtype="int64"), inner])
    assert outer.output_shape == (None, 24)


def test_export_model_after_variable_length_text_vectorization():
    vocab = ["", "[UNK]", "a", "b", "c", "d"]
    stack = conv_stack()
    model = tf.keras.Sequential(stack)
    model(TOKENS)
    vectorize = layers.TextVectorization(vocabulary=vocab)
    export = tf.keras.Sequential([vectorize, model, layers.Activation("sigmoid")])
    texts = ["a b c d a b c d a", "d c b a d c b a d c b"]
    expected = tf.sigmoid(apply(stack, vectorize(tf.constant(texts)))).numpy()
    np.testing.assert_allclose(export.predict(texts, verbose=0), expected, rtol=1e-6)


class TokenAndPosition(layers.Layer):
    """A custom layer without compute_output_shape (keras.io's transformer examples' kind)."""

    def __init__(self, positions, **kwargs):
        super().__init__(**kwargs)
        self.tokens = layers.Embedding(20, 4)
        self.positions = layers.Embedding(positions, 4)

    def call(self, x):
        return self.tokens(x) + self.positions(tf.range(tf.shape(x)[-1]))


def test_a_custom_layer_keeps_an_unknown_length():
    tokens = tf.keras.Input(shape=(None,), dtype="int64")
    embedded = TokenAndPosition(64)(tokens)
    assert tuple(embedded.shape) == (None, None, 4)        # Keras 3.15 gives the same
    conv = layers.Conv1D(3, 5)
    model = tf.keras.Model(tokens, layers.GlobalMaxPooling1D()(conv(embedded)))
    assert tuple(conv.output.shape) == (None, None, 3)
    assert model(TOKENS).shape == (2, 3)


def test_a_custom_layer_that_needs_short_inputs_still_builds():
    # Eight positions: the probe lengths do not fit, so the length is inferred as 1 (the
    # model still runs on real data of any length up to 8).
    tokens = tf.keras.Input(shape=(None,), dtype="int64")
    embedded = TokenAndPosition(8)(tokens)
    assert embedded.shape[0] is None and embedded.shape[-1] == 4
    model = tf.keras.Model(tokens, layers.GlobalAveragePooling1D()(embedded))
    assert model(TOKENS[:, :8]).shape == (2, 4)
