"""Losses and mean metrics weight by the Keras mask of ``y_pred`` (Keras 3's ``Loss.__call__``
and ``MeanMetricWrapper.update_state``): a padded step counts for nothing, and
``sum_over_batch_size`` averages over the unmasked elements. References: the same reductions
written out in float64 numpy."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras.keras_mask import get_mask

layers = keras.layers

TOKENS = np.array([[3, 5, 2, 0, 0], [1, 4, 0, 0, 0], [7, 7, 7, 7, 1]], np.int32)
KEEP = TOKENS != 0


def _masked_logits(seed=0):
    logits = np.random.default_rng(seed).normal(size=(3, 5, 4)).astype(np.float32)
    out = tf.constant(logits)
    out._keras_mask = tf.constant(KEEP)
    return logits.astype(np.float64), out


def _sparse_ce(logits, labels):
    shifted = logits - logits.max(-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_p, labels[..., None], -1)[..., 0]


def test_keras_mask_attribute_reads_and_writes_the_mask_table():
    t = tf.ones((2, 3))
    assert t._keras_mask is None
    t._keras_mask = tf.constant([[True, False, True], [True, True, False]])
    np.testing.assert_array_equal(get_mask(t).numpy(), [[1, 0, 1], [1, 1, 0]])
    t._keras_mask = None
    assert get_mask(t) is None
    embedded = layers.Embedding(8, 2, mask_zero=True)(TOKENS)
    np.testing.assert_array_equal(embedded._keras_mask.numpy(), KEEP)


def test_loss_averages_over_unmasked_steps_only():
    logits, out = _masked_logits()
    labels = np.random.default_rng(1).integers(0, 4, size=(3, 5))
    ce = _sparse_ce(logits, labels)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    expected = (ce * KEEP).sum() / KEEP.sum()
    assert abs(expected - ce.mean()) > 1e-3          # the mask changes the value
    np.testing.assert_allclose(float(loss(labels, out)), expected, rtol=1e-6)

    # sample weights multiply in; the divisor stays the number of unmasked elements
    weights = np.array([1.0, 0.5, 2.0])
    np.testing.assert_allclose(float(loss(labels, out, sample_weight=weights)),
                               (ce * KEEP * weights[:, None]).sum() / KEEP.sum(), rtol=1e-6)
    summed = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")
    np.testing.assert_allclose(float(summed(labels, out)), (ce * KEEP).sum(), rtol=1e-6)
    per_element = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
    np.testing.assert_allclose(per_element(labels, out).numpy(), ce * KEEP, rtol=1e-5,
                               atol=1e-7)


def test_mask_and_ignore_class_combine():
    logits, out = _masked_logits(2)
    labels = np.array([[1, -1, 2, 3, 0], [0, 1, 2, 2, 2], [-1, 3, 3, 0, -1]])
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    keep = KEEP & (labels != -1)
    ce = _sparse_ce(logits, np.where(labels < 0, 0, labels))
    np.testing.assert_allclose(float(loss(labels, out)), (ce * keep).sum() / keep.sum(),
                               rtol=1e-6)


def test_regression_loss_with_a_mask_and_everything_masked():
    pred = np.random.default_rng(3).normal(size=(3, 5, 2)).astype(np.float32)
    true = np.random.default_rng(4).normal(size=(3, 5, 2)).astype(np.float32)
    out = tf.constant(pred)
    out._keras_mask = tf.constant(KEEP)
    per_step = ((pred.astype(np.float64) - true) ** 2).mean(-1)
    np.testing.assert_allclose(float(keras.losses.MeanSquaredError()(true, out)),
                               (per_step * KEEP).sum() / KEEP.sum(), rtol=1e-6)
    out._keras_mask = tf.zeros((3, 5), tf.bool)
    assert float(keras.losses.MeanSquaredError()(true, out)) == 0.0


def test_mean_metrics_skip_masked_steps():
    logits, out = _masked_logits(5)
    labels = np.random.default_rng(6).integers(0, 4, size=(3, 5))
    hits = (logits.argmax(-1) == labels).astype(np.float64)
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    accuracy.update_state(labels, out)
    np.testing.assert_allclose(float(accuracy.result()), (hits * KEEP).sum() / KEEP.sum(),
                               rtol=1e-6)
    weights = np.array([2.0, 1.0, 0.5])
    weighted = keras.metrics.SparseCategoricalAccuracy()
    weighted.update_state(labels, out, sample_weight=weights)
    w = KEEP * weights[:, None]
    np.testing.assert_allclose(float(weighted.result()), (hits * w).sum() / w.sum(), rtol=1e-6)
    # a loss function used as a metric goes through the same wrapper
    ce_metric = keras.metrics.SparseCategoricalCrossentropy(from_logits=True)
    ce_metric.update_state(labels, out)
    ce = _sparse_ce(logits, labels)
    np.testing.assert_allclose(float(ce_metric.result()), (ce * KEEP).sum() / KEEP.sum(),
                               rtol=1e-5)


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_fit_and_evaluate_use_the_output_mask(run_eagerly):
    model = keras.Sequential([keras.Input((5,), dtype="int32"),
                              layers.Embedding(10, 6, mask_zero=True),
                              layers.SimpleRNN(8, return_sequences=True),
                              layers.Dense(4)])
    labels = np.random.default_rng(7).integers(0, 4, size=(3, 5))
    model.compile(optimizer=keras.optimizers.SGD(0.1), run_eagerly=run_eagerly,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    logits = model(TOKENS).numpy().astype(np.float64)
    ce = _sparse_ce(logits, labels)
    hits = logits.argmax(-1) == labels
    result = model.evaluate(TOKENS, labels, return_dict=True, verbose=0)
    np.testing.assert_allclose(result["loss"], (ce * KEEP).sum() / KEEP.sum(), rtol=1e-5)
    np.testing.assert_allclose(result["accuracy"], (hits * KEEP).sum() / KEEP.sum(), rtol=1e-6)

    # the gradient of a padded step's loss is zero: changing its label changes nothing
    other = labels.copy()
    other[~KEEP] = (other[~KEEP] + 1) % 4
    weights = [w.numpy() for w in model.weights]
    model.fit(TOKENS, labels, epochs=1, batch_size=3, verbose=0, shuffle=False)
    after = [w.numpy() for w in model.weights]
    model.set_weights(weights)
    model.fit(TOKENS, other, epochs=1, batch_size=3, verbose=0, shuffle=False)
    for a, b in zip(after, model.weights):
        np.testing.assert_allclose(b.numpy(), a, rtol=1e-6, atol=1e-7)


def test_per_sample_weights_apply_to_every_step_of_a_sequence_loss():
    # tf.keras 2 broadcasts (batch,) weights over (batch, steps) losses; Keras 3 raises there
    logits = np.random.default_rng(8).normal(size=(3, 5, 4))
    labels = np.random.default_rng(9).integers(0, 4, size=(3, 5))
    weights = np.array([1.0, 0.0, 3.0])
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    ce = _sparse_ce(logits, labels)
    np.testing.assert_allclose(
        float(loss(labels, logits.astype(np.float32), sample_weight=weights)),
        (ce * weights[:, None]).mean(), rtol=1e-6)
