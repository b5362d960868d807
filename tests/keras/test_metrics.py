"""Keras metrics: values, sample weights, reset, lookup, and host-call (traceable) updates."""

import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from fake_tracer import tracing
from minitf.keras import metrics


def test_mean():
    m = metrics.Mean()
    m.update_state([1.0, 2.0, 3.0, 4.0])
    assert float(m.result()) == 2.5
    m.update_state([1.0, 2.0, 3.0, 4.0], sample_weight=[1, 1, 0, 0])   # Keras doc example
    assert float(m.result()) == pytest.approx((10 + 3) / 6)
    m.reset_state()
    assert float(m.result()) == 0.0
    m.update_state(5.0)
    m.update_state(tf.constant([[1.0, 3.0]]))      # rank 2: averaged per sample
    assert float(m.result()) == 3.5
    assert float(m.count) == 2.0
    assert m.total.dtype == tf.float32 and not m.total.trainable


def test_mean_call_returns_result():
    m = metrics.Mean(name="loss")
    assert float(m([2.0, 4.0])) == 3.0
    assert m.name == "loss" and len(m.variables) == 2


def test_sparse_categorical_accuracy():
    acc = metrics.SparseCategoricalAccuracy()
    acc.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])   # Keras doc example
    assert float(acc.result()) == 0.5
    acc.reset_state()
    acc.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]], sample_weight=[0.7, 0.3])
    assert float(acc.result()) == pytest.approx(0.3)
    acc.reset_state()
    acc.update_state(tf.constant([0, 1, 2]), tf.constant([[0.9, 0.1, 0], [0, 1, 0], [1, 0, 0.]]))
    assert float(acc.result()) == pytest.approx(2 / 3)
    acc.update_state(np.array([1.0]), np.array([[0.2, 0.8, 0.0]]))   # float labels
    assert float(acc.result()) == pytest.approx(3 / 4)


def test_accuracy_and_categorical_accuracy():
    a = metrics.Accuracy()
    a.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]])        # Keras doc example
    assert float(a.result()) == 0.75
    a.reset_state()
    a.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]], sample_weight=[1, 1, 0, 0])
    assert float(a.result()) == 0.5
    c = metrics.CategoricalAccuracy()
    c.update_state([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
    assert float(c.result()) == 0.5
    c.reset_state()
    c.update_state([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]],
                   sample_weight=[0.7, 0.3])
    assert float(c.result()) == pytest.approx(0.3)


def test_functional_accuracy():
    out = metrics.sparse_categorical_accuracy([1, 0], [[0.2, 0.8], [0.3, 0.7]])
    np.testing.assert_array_equal(out.numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(metrics.categorical_accuracy([[0, 1]], [[0.3, 0.7]]).numpy(),
                                  [1.0])
    np.testing.assert_array_equal(metrics.accuracy([1, 2], [1, 3]).numpy(), [1.0, 0.0])


def test_get():
    assert isinstance(metrics.get("accuracy"), metrics.Accuracy)
    assert isinstance(metrics.get("acc"), metrics.Accuracy)
    assert isinstance(metrics.get("sparse_categorical_accuracy"),
                      metrics.SparseCategoricalAccuracy)
    assert isinstance(metrics.get("SparseCategoricalAccuracy"), metrics.SparseCategoricalAccuracy)
    assert isinstance(metrics.get("categorical_accuracy"), metrics.CategoricalAccuracy)
    assert isinstance(metrics.get("mean"), metrics.Mean)
    m = metrics.Mean()
    assert metrics.get(m) is m
    assert isinstance(metrics.get(metrics.Accuracy), metrics.Accuracy)
    assert isinstance(metrics.deserialize(metrics.serialize(m)), metrics.Mean)
    with pytest.raises(ValueError):
        metrics.get("nope")


def test_update_state_is_one_host_call_and_replays():
    acc = metrics.SparseCategoricalAccuracy()
    with tracing() as tracer:
        acc.update_state(tf.constant([1, 0]), tf.constant([[0.2, 0.8], [0.3, 0.7]]))
    assert len(tracer.hosts) == 1 and tracer.ops == []
    fn, _ = tracer.hosts[0]
    fn(B.from_numpy(np.array([1, 1])), B.from_numpy(np.array([[0.2, 0.8], [0.3, 0.7]], np.float32)))   # a replay
    assert float(acc.result()) == 0.75
    with tracing() as tracer:
        acc.reset_state()
    assert len(tracer.assigns) == 2
    assert float(acc.result()) == 0.0
