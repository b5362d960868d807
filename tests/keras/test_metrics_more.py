"""Metrics beyond the mean/accuracy core (values from Keras' documented examples or numpy),
custom ``Metric`` subclasses, ``Loss`` subclasses, learning-rate schedules, ``keras.utils``
and ``keras.ops``."""
import math

import numpy as np
import pytest

import minitf as tf
from minitf import keras

M = keras.metrics
S = keras.optimizers.schedules


def test_documented_metric_examples():
    m = M.AUC(num_thresholds=3)
    m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    assert float(m.result()) == pytest.approx(0.75)
    m = M.BinaryAccuracy()
    m.update_state([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])
    assert float(m.result()) == pytest.approx(0.75)
    m = M.MeanAbsoluteError()
    m.update_state([[0, 1], [0, 0]], [[1, 1], [0, 0]])
    assert float(m.result()) == pytest.approx(0.25)
    m.reset_states()
    assert float(m.result()) == 0.0
    m = M.MeanSquaredError()
    m.update_state([[0, 1], [0, 0]], [[1, 1], [0, 0]], sample_weight=[1, 0])
    assert float(m.result()) == pytest.approx(0.5)
    m = M.Precision()
    m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    assert float(m.result()) == pytest.approx(2 / 3)
    m = M.Recall()
    m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    assert float(m.result()) == pytest.approx(2 / 3)
    m = M.Sum()
    m.update_state([1, 3, 5, 7])
    assert float(m.result()) == 16.0
    m = M.RootMeanSquaredError()
    m.update_state([[0, 1], [0, 0]], [[1, 1], [0, 0]])
    assert float(m.result()) == pytest.approx(0.5)


def test_auc_matches_the_rank_statistic():
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 2, 300)
    y_pred = np.clip(y_true * 0.3 + rng.uniform(0, 0.7, 300), 0, 1)
    m = M.AUC(num_thresholds=1000)
    m.update_state(y_true, y_pred)
    pos, neg = y_pred[y_true == 1], y_pred[y_true == 0]
    exact = (pos[:, None] > neg[None, :]).mean()
    assert float(m.result()) == pytest.approx(exact, abs=2e-3)


class BinaryTruePositives(M.Metric):
    def __init__(self, name="binary_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_weight(name="tp", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = tf.cast(y_true, tf.bool)
        y_pred = tf.cast(y_pred, tf.bool)
        values = tf.cast(tf.logical_and(tf.equal(y_true, True), tf.equal(y_pred, True)),
                         self.dtype)
        if sample_weight is not None:
            values = tf.multiply(values, tf.cast(sample_weight, self.dtype))
        self.true_positives.assign_add(tf.reduce_sum(values))

    def result(self):
        return self.true_positives


def test_custom_metric_subclass():
    m = BinaryTruePositives()
    m.update_state(tf.constant([1, 0, 1, 1]), tf.constant([1, 1, 1, 0]))
    m.update_state(tf.constant([1, 1]), tf.constant([1, 1]), sample_weight=tf.constant([0.5, 1.0]))
    assert float(m.result()) == pytest.approx(3.5)
    assert len(m.variables) == 1
    m.reset_state()
    assert float(m.result()) == 0.0


def test_mean_metric_wrapper_with_a_function_of_tensors():
    def squared_error(y_true, y_pred, scale=1.0):
        return scale * tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)

    m = M.MeanMetricWrapper(squared_error, name="se", scale=2.0)
    m.update_state(np.array([[1, 2]]), np.array([[1.0, 4.0]], np.float32))
    m.update_state(np.array([[0, 0]]), np.array([[0.0, 0.0]], np.float32))
    assert float(m.result()) == pytest.approx(2.0)
    assert m.name == "se"


class WeightedMSE(keras.losses.Loss):
    def __init__(self, weight=2.0, reduction="sum_over_batch_size", name="weighted_mse"):
        super().__init__(reduction=reduction, name=name)
        self.weight = weight

    def call(self, y_true, y_pred):
        return self.weight * tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


def test_loss_subclass_reductions():
    y_true = np.array([[0.0, 1.0], [1.0, 1.0]], np.float32)
    y_pred = np.array([[1.0, 1.0], [1.0, 0.0]], np.float32)
    per_sample = 2.0 * np.array([0.5, 0.5])
    assert float(WeightedMSE()(y_true, y_pred)) == pytest.approx(per_sample.mean())
    assert float(WeightedMSE(reduction="sum")(y_true, y_pred)) == pytest.approx(per_sample.sum())
    np.testing.assert_allclose(WeightedMSE(reduction="none")(y_true, y_pred).numpy(), per_sample)
    assert float(WeightedMSE()(y_true, y_pred, sample_weight=[1.0, 0.0])) == pytest.approx(0.5)
    assert WeightedMSE().name == "weighted_mse"


def _keras_sgdr(step, lr0, first, t_mul, m_mul, alpha):
    fraction = step / first
    if t_mul != 1.0:
        i = math.floor(math.log(1 - fraction * (1 - t_mul)) / math.log(t_mul))
        fraction = (fraction - (1 - t_mul ** i) / (1 - t_mul)) / t_mul ** i
    else:
        i = math.floor(fraction)
        fraction -= i
    return lr0 * ((1 - alpha) * 0.5 * m_mul ** i * (1 + math.cos(math.pi * fraction)) + alpha)


@pytest.mark.parametrize("step", [0, 3, 10, 17, 30, 55, 100])
def test_schedules(step):
    inv = S.InverseTimeDecay(0.1, decay_steps=10, decay_rate=0.5)
    assert inv.host_value(step) == pytest.approx(0.1 / (1 + 0.5 * step / 10))
    assert S.InverseTimeDecay(0.1, 10, 0.5, staircase=True).host_value(step) == pytest.approx(
        0.1 / (1 + 0.5 * (step // 10)))
    poly = S.PolynomialDecay(0.1, decay_steps=40, end_learning_rate=0.01, power=0.5)
    s = min(step, 40)
    assert poly.host_value(step) == pytest.approx(0.09 * (1 - s / 40) ** 0.5 + 0.01)
    cyc = S.PolynomialDecay(0.1, decay_steps=40, end_learning_rate=0.01, cycle=True)
    horizon = 40 * max(1, math.ceil(step / 40))
    assert cyc.host_value(step) == pytest.approx(0.09 * (1 - step / horizon) + 0.01)
    for t_mul, m_mul, alpha in ((2.0, 1.0, 0.0), (1.0, 0.5, 0.1), (1.5, 0.8, 0.0)):
        sgdr = S.CosineDecayRestarts(0.1, 10, t_mul=t_mul, m_mul=m_mul, alpha=alpha)
        assert sgdr.host_value(step) == pytest.approx(_keras_sgdr(step, 0.1, 10, t_mul, m_mul,
                                                                  alpha))
        # the tensor path (used when called with a Tensor step) agrees
        assert float(sgdr(tf.constant(step))) == pytest.approx(sgdr.host_value(step), rel=1e-5)
    for sched in (inv, poly, cyc):
        assert float(sched(tf.constant(step))) == pytest.approx(sched.host_value(step), rel=1e-5)
        clone = S.deserialize(S.serialize(sched))
        assert clone.host_value(step) == pytest.approx(sched.host_value(step))


def test_schedule_drives_an_optimizer():
    var = tf.Variable(0.0)
    opt = keras.optimizers.SGD(S.InverseTimeDecay(1.0, decay_steps=1, decay_rate=1.0))
    for _ in range(3):
        opt.apply_gradients([(tf.constant(1.0), var)])
    assert float(var) == pytest.approx(-(1.0 + 1 / 2 + 1 / 3), rel=1e-6)


def test_utils():
    U = keras.utils
    np.testing.assert_array_equal(U.to_categorical([0, 2, 1], num_classes=3),
                                  np.eye(3, dtype=np.float32)[[0, 2, 1]])
    assert U.to_categorical(np.array([[1], [0]])).shape == (2, 2)
    assert U.to_categorical([1]).dtype == np.float64   # as Keras 3
    with pytest.raises(ValueError, match="out of range"):
        U.to_categorical([3], num_classes=3)
    assert U.unpack_x_y_sample_weight((1, 2)) == (1, 2, None)
    assert U.unpack_x_y_sample_weight((1, 2, 3)) == (1, 2, 3)
    assert U.unpack_x_y_sample_weight([1, 2]) == (1, 2, None)  # a list reads as a tuple (Keras 3)
    assert U.unpack_x_y_sample_weight(5) == (5, None, None)
    assert U.pack_x_y_sample_weight(1, 2) == (1, 2)
    assert U.pack_x_y_sample_weight(1) == 1
    assert U.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)


def test_keras_ops_aliases():
    ops = keras.ops
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    assert float(ops.sum(x)) == 6.0
    np.testing.assert_allclose(ops.mean(x, axis=0).numpy(), [2.0, 1.0])
    np.testing.assert_allclose(ops.max(x, axis=1).numpy(), [1.0, 4.0])
    np.testing.assert_allclose(ops.square(x).numpy(), [[1, 4], [9, 16]])
    np.testing.assert_allclose(ops.var(x, axis=0).numpy(), [1.0, 9.0])
    assert ops.shape(x) == (2, 2)
    np.testing.assert_allclose(ops.concatenate([x, x], axis=1).numpy().shape, (2, 4))
    np.testing.assert_allclose(ops.clip(x, 0.0, 2.0).numpy(), [[1, 0], [2, 2]])


@pytest.mark.parametrize("kwargs, expected", [
    # values printed by Keras 3.15 (numpy backend) for the same data and updates
    (dict(curve="PR"), 0.6661779880523682),
    (dict(curve="PR", summation_method="minoring"), 0.64482581615448),
    (dict(curve="PR", summation_method="majoring"), 0.6719896197319031),
    (dict(curve="ROC"), 0.8323957920074463),
    (dict(curve="PR", num_thresholds=7), 0.592387318611145),
])
def test_auc_pr_and_roc_match_keras(kwargs, expected):
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.2).astype("float32")
    p = np.clip(y * 0.3 + rng.random(300) * 0.7, 0, 1).astype("float32")
    w = rng.random(300).astype("float32")
    auc = keras.metrics.AUC(**kwargs)
    auc.update_state(y, p)
    auc.update_state(y[:50], p[:50], sample_weight=w[:50])
    assert float(auc.result()) == pytest.approx(expected, rel=1e-6)


def test_pr_auc_of_a_perfect_ranking_is_one():
    auc = keras.metrics.AUC(curve="PR", num_thresholds=1000)
    auc.update_state([0, 0, 1, 1, 1], [0.1, 0.2, 0.7, 0.8, 0.9])
    assert float(auc.result()) == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="curve must be 'ROC' or 'PR'"):
        keras.metrics.AUC(curve="PRGAIN")


def test_schedules_take_float_steps_and_arrays_of_steps():
    S = keras.optimizers.schedules
    schedule = S.InverseTimeDecay(0.001, decay_steps=20 * 10, decay_rate=1)
    steps = np.array([0, 200, 2040.8])
    expected = 0.001 / (1 + steps / 200)   # TF computes it in float32: 0.00083051 at 2040.8
    np.testing.assert_allclose(schedule(steps).numpy(), expected, rtol=1e-6)
    assert float(schedule(2040.8)) == pytest.approx(0.001 / (1 + 2040.8 / 200), rel=1e-6)
    assert float(schedule(200)) == pytest.approx(0.0005, rel=1e-7)


def test_a_loss_object_as_a_metric_is_named_by_its_name():
    # the "Overfit and underfit" tutorial monitors 'val_binary_crossentropy' this way
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    bce = keras.losses.BinaryCrossentropy(from_logits=True, name="binary_crossentropy")
    model.compile(optimizer="sgd", loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[bce, "accuracy"])
    x = np.random.default_rng(0).normal(size=(8, 3)).astype("float32")
    y = (x[:, :1] > 0).astype("float32")
    history = model.fit(x, y, validation_data=(x, y), epochs=1, verbose=0)
    assert {"binary_crossentropy", "val_binary_crossentropy"} <= set(history.history)
    logits = model.predict(x, verbose=0).astype(np.float64)
    expected = np.mean(np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-np.abs(logits))))
    assert history.history["val_binary_crossentropy"][0] == pytest.approx(expected, rel=1e-5)
