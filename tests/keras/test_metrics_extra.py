"""Top-k accuracies, probabilistic / regression / hinge metrics, confusion counts and MeanIoU:
values from the keras.io docstring examples (``keras/src/metrics/*.py``), numpy
re-computations, sample weights, traced updates, configs, string names and ``compile``."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras

M = keras.metrics


def _result(metric, y_true, y_pred, sample_weight=None):
    metric.reset_state()
    metric.update_state(y_true, y_pred, sample_weight=sample_weight)
    return float(metric.result())


# (metric, y_true, y_pred, result, sample_weight, weighted result), from each class docstring.
DOCUMENTED = [
    (lambda: M.TopKCategoricalAccuracy(k=1), [[0, 0, 1], [0, 1, 0]],
     [[0.1, 0.9, 0.8], [0.05, 0.95, 0]], 0.5, [0.7, 0.3], 0.3),
    (lambda: M.SparseTopKCategoricalAccuracy(k=1), [2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]],
     0.5, [0.7, 0.3], 0.3),
    (M.BinaryCrossentropy, [[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], 0.81492424, [1, 0],
     0.9162905),
    (M.CategoricalCrossentropy, [[0, 1, 0], [0, 0, 1]], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]],
     1.1769392, [0.3, 0.7], 1.6271976),
    (M.SparseCategoricalCrossentropy, [1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]], 1.1769392,
     [0.3, 0.7], 1.6271976),
    (M.KLDivergence, [[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], 0.45814306, [1, 0], 0.9162892),
    (M.Poisson, [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.49999997, [1, 0], 0.99999994),
    (M.MeanAbsolutePercentageError, [[0, 1], [0, 0]], [[1, 1], [0, 0]], 250000000.0, [1, 0],
     500000000.0),
    (M.MeanSquaredLogarithmicError, [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.12011322, [1, 0],
     0.24022643),
    (lambda: M.CosineSimilarity(axis=1), [[0, 1], [1, 1]], [[1, 0], [1, 1]], 0.49999997,
     [0.3, 0.7], 0.6999999),
    (M.LogCoshError, [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.10844523, [1, 0], 0.21689045),
    (M.Hinge, [[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], 1.3, [1, 0], 1.1),
    (M.SquaredHinge, [[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], 1.86, [1, 0], 1.46),
    (M.CategoricalHinge, [[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], 1.4000001, [1, 0], 1.2),
    (M.TruePositives, [0, 1, 1, 1], [1, 0, 1, 1], 2.0, [0, 0, 1, 0], 1.0),
    (M.FalsePositives, [0, 1, 0, 0], [0, 0, 1, 1], 2.0, [0, 0, 1, 0], 1.0),
    (M.TrueNegatives, [0, 1, 0, 0], [1, 1, 0, 0], 2.0, [0, 0, 1, 0], 1.0),
    (M.FalseNegatives, [0, 1, 1, 1], [0, 1, 0, 0], 2.0, [0, 0, 1, 0], 1.0),
    (lambda: M.MeanIoU(num_classes=2), [0, 0, 1, 1], [0, 1, 0, 1], 0.33333334,
     [0.3, 0.3, 0.3, 0.1], 0.23809525),
]


@pytest.mark.parametrize("make,y_true,y_pred,value,weights,weighted", DOCUMENTED,
                         ids=[str(i) for i in range(len(DOCUMENTED))])
def test_documented_examples(make, y_true, y_pred, value, weights, weighted):
    metric = make()
    assert _result(metric, y_true, y_pred) == pytest.approx(value, rel=1e-6)
    assert _result(metric, y_true, y_pred, weights) == pytest.approx(weighted, rel=1e-6)
    metric.reset_state()
    assert float(metric.result()) == 0.0


def _np_in_top_k(labels, preds, k):
    kth = np.sort(preds, -1)[:, -k]
    return preds[np.arange(len(labels)), labels] >= kth


def test_top_k_against_numpy_with_ties_and_accumulation():
    rng = np.random.default_rng(0)
    metric = M.SparseTopKCategoricalAccuracy(k=3)
    one_hot = M.TopKCategoricalAccuracy(k=3)
    hits, total = 0.0, 0.0
    for _ in range(3):
        preds = rng.integers(0, 4, (20, 6)).astype(np.float32)   # many ties
        labels = rng.integers(0, 6, 20)
        weights = rng.uniform(0, 1, 20)
        metric.update_state(labels, preds, sample_weight=weights)
        one_hot.update_state(np.eye(6)[labels], preds, sample_weight=weights)
        matches = _np_in_top_k(labels, preds, 3)
        hits += np.sum(matches * weights)
        total += np.sum(weights)
    assert float(metric.result()) == pytest.approx(hits / total, rel=1e-5)
    assert float(one_hot.result()) == pytest.approx(hits / total, rel=1e-5)
    # a tie at the k-th value counts as in the top k (tf.math.in_top_k)
    np.testing.assert_array_equal(M.sparse_top_k_categorical_accuracy(
        [0, 2], [[0.5, 0.5, 0.1], [0.5, 0.5, 0.1]], k=1).numpy(), [1.0, 0.0])
    # a label outside the classes is never in the top k; k above the class count takes all
    np.testing.assert_array_equal(M.sparse_top_k_categorical_accuracy(
        [5, 1], [[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]], k=10).numpy(), [0.0, 1.0])
    # rank-3 predictions keep the labels' shape
    preds = rng.standard_normal((2, 3, 4))
    labels = rng.integers(0, 4, (2, 3))
    got = M.sparse_top_k_categorical_accuracy(labels, preds, k=2)
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(got.numpy().ravel(), _np_in_top_k(
        labels.ravel(), preds.reshape(-1, 4), 2).astype(np.float32))


def test_sparse_top_k_from_sorted_ids():
    metric = M.SparseTopKCategoricalAccuracy(k=2, from_sorted_ids=True)
    metric.update_state([3, 1, 0], [[3, 0, 2], [2, 0, 1], [1, 2, 0]])
    assert float(metric.result()) == pytest.approx(1 / 3)
    assert metric.get_config()["from_sorted_ids"] is True


def test_mean_iou_against_numpy():
    rng = np.random.default_rng(1)
    n = 4
    metric = M.MeanIoU(num_classes=n, ignore_class=3)
    cm = np.zeros((n, n))
    for _ in range(2):
        labels = rng.integers(0, n, (5, 6))
        preds = rng.integers(0, n, (5, 6))
        weights = rng.uniform(0, 1, (5, 6))
        metric.update_state(labels, preds, sample_weight=weights)
        keep = labels != 3
        np.add.at(cm, (labels[keep], preds[keep]), weights[keep])
    tp = np.diag(cm)
    denominator = cm.sum(0) + cm.sum(1) - tp
    valid = denominator > 1e-9
    assert float(metric.result()) == pytest.approx(np.sum(tp[valid] / denominator[valid])
                                                   / valid.sum(), rel=1e-5)
    # one-hot labels and probabilities through argmax
    dense = M.MeanIoU(num_classes=3, sparse_y_true=False, sparse_y_pred=False)
    dense.update_state(np.eye(3)[[0, 1, 2, 2]], [[0.9, 0.1, 0], [0.2, 0.7, 0.1],
                                                 [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]])
    # class 0: tp 1, fp 1 -> 1/2; class 1: 1/1; class 2: tp 1, fn 1 -> 1/2
    assert float(dense.result()) == pytest.approx(2 / 3)


def test_confusion_counts_with_thresholds():
    metric = M.TruePositives(thresholds=[0.15, 0.5, 0.85])
    metric.update_state([1, 1, 0, 1], [0.2, 0.6, 0.9, 0.9])
    np.testing.assert_allclose(metric.result().numpy(), [3.0, 2.0, 1.0])
    fn = M.FalseNegatives(thresholds=0.7)
    fn.update_state([[1, 1], [0, 1]], [[0.2, 0.6], [0.9, 0.9]])
    assert float(fn.result()) == 2.0
    assert M.FalsePositives(thresholds=[0.3]).get_config()["thresholds"] == [0.3]
    assert M.TrueNegatives().get_config()["thresholds"] is None


def test_traced_updates_replay_with_new_values():
    metrics = [M.TopKCategoricalAccuracy(k=2), M.BinaryCrossentropy(from_logits=True),
               M.MeanAbsolutePercentageError(), M.CosineSimilarity(), M.TruePositives(),
               M.MeanIoU(num_classes=3, sparse_y_true=False, sparse_y_pred=False)]

    @tf.function
    def update(y_true, y_pred):
        for m in metrics:
            m.update_state(y_true, y_pred)

    rng = np.random.default_rng(2)
    batches = []
    for _ in range(2):
        y_true = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]
        y_pred = rng.uniform(0.05, 1.0, (8, 3)).astype(np.float32)
        update(tf.constant(y_true), tf.constant(y_pred))
        batches.append((y_true, y_pred))
    y_true = np.concatenate([b[0] for b in batches])
    y_pred = np.concatenate([b[1] for b in batches])
    for m in metrics:
        fresh = type(m).from_config(m.get_config())
        fresh.update_state(y_true, y_pred)
        assert float(m.result()) == pytest.approx(float(fresh.result()), rel=1e-5), m.name


def test_names_and_configs():
    assert type(M.get("top_k_categorical_accuracy")) is M.TopKCategoricalAccuracy
    assert type(M.get("sparse_top_k_categorical_accuracy")) is M.SparseTopKCategoricalAccuracy
    assert type(M.get("mape")) is M.MeanAbsolutePercentageError
    assert type(M.get("msle")) is M.MeanSquaredLogarithmicError
    assert type(M.get("bce")) is M.BinaryCrossentropy
    assert type(M.get("log_cosh_error")) is M.LogCoshError
    assert type(M.get("kl_divergence")) is M.KLDivergence
    with pytest.raises(TypeError, match="num_classes"):  # found, but needs num_classes
        M.get("mean_io_u")
    assert type(M.get("true_positives")) is M.TruePositives
    assert tf.keras.metrics.Hinge is M.Hinge
    cases = [M.TopKCategoricalAccuracy(k=3), M.SparseTopKCategoricalAccuracy(k=2, name="top2"),
             M.BinaryCrossentropy(from_logits=True, label_smoothing=0.1),
             M.CategoricalCrossentropy(axis=1), M.SparseCategoricalCrossentropy(from_logits=True),
             M.CosineSimilarity(axis=0), M.LogCoshError(), M.Poisson(),
             M.FalsePositives(thresholds=[0.2, 0.4]), M.MeanIoU(5, ignore_class=0)]
    for m in cases:
        restored = M.deserialize(M.serialize(m))
        assert type(restored) is type(m) and restored.get_config() == m.get_config()
    assert cases[0].get_config()["k"] == 3 and cases[1].name == "top2"
    assert cases[6].name == "logcosh" and cases[9].name == "mean_io_u"


def test_bad_inputs():
    with pytest.raises(tf.errors.InvalidArgumentError, match="top_k.*rank >= 2"):
        M.sparse_top_k_categorical_accuracy([1, 0], [0.2, 0.8])
    with pytest.raises(tf.errors.InvalidArgumentError, match="3 labels but y_pred has 2 rows"):
        M.SparseTopKCategoricalAccuracy().update_state([0, 1, 2], [[0.1, 0.9], [0.4, 0.6]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"MeanIoU.*\[0, 2\).*\[0, 2\]"):
        M.MeanIoU(num_classes=2).update_state([0, 1, 2], [0, 1, 1])
    with pytest.raises(ValueError, match="num_classes"):
        M.MeanIoU(num_classes=0)


def test_compile_with_metric_names_reports_their_values():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 5)).astype(np.float32)
    labels = rng.integers(0, 6, 40)
    y = np.eye(6, dtype=np.float32)[labels]
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(6, activation="softmax")])
    model.compile("adam", "categorical_crossentropy",
                  metrics=["top_k_categorical_accuracy", "categorical_hinge", "mape",
                           M.KLDivergence(), M.TopKCategoricalAccuracy(k=2, name="top2")])
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0).history
    assert {"top_k_categorical_accuracy", "categorical_hinge", "mape", "kl_divergence",
            "top2"} <= set(history)
    results = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    probs = model.predict(x, verbose=0)
    assert results["top_k_categorical_accuracy"] == pytest.approx(
        np.mean(_np_in_top_k(labels, probs, 5)))
    assert results["top2"] == pytest.approx(np.mean(_np_in_top_k(labels, probs, 2)))
    hinge = np.maximum(np.max((1 - y) * probs, -1) - np.sum(y * probs, -1) + 1, 0)
    assert results["categorical_hinge"] == pytest.approx(np.mean(hinge), rel=1e-5)
    mape = 100 * np.mean(np.abs(y - probs) / np.maximum(np.abs(y), 1e-7), -1)
    assert results["mape"] == pytest.approx(np.mean(mape), rel=1e-5)
    t, p = np.clip(y, 1e-7, 1), np.clip(probs, 1e-7, 1)
    assert results["kl_divergence"] == pytest.approx(np.mean(np.sum(t * np.log(t / p), -1)),
                                                     rel=1e-5)
