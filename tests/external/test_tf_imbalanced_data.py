"""Port of the tensorflow.org tutorial "Classification on imbalanced data"
(https://www.tensorflow.org/tutorials/structured_data/imbalanced_data).

Changes from the tutorial:
- A synthetic imbalanced table (3000 rows, 12 standard-normal features, about 4% positives whose
  first 6 features are shifted) replaces the Kaggle credit-card CSV (no downloads). The pandas /
  sklearn steps (train_test_split, StandardScaler) are written in numpy: shuffle, 64/16/20 split,
  standardise with the training mean/std, clip to [-5, 5]. Labels are kept 2-D, shape (N, 1), as
  Keras 3 requires for the BinaryCrossentropy metric with a (N, 1) output.
- Smaller batches (256 instead of 2048) and fewer epochs; plots and seaborn confusion matrices are
  replaced by assertions: metric values from `evaluate` are checked against numpy computations on
  the same `predict` outputs (confusion counts, accuracy, precision, recall, cross entropy, Brier
  score, ROC AUC by trapezoid and PR AUC by Keras' interpolation at Keras' 200 thresholds).
- `resampled_steps_per_epoch` is cast to int: Keras 3 rejects a numpy float there
  ("'numpy.float64' object cannot be interpreted as an integer").
- `model.metrics_names` is ['loss', 'compile_metrics'] in Keras 3 (TF 2.21) and the flat metric
  names in tf.keras 2, so the tutorial's zip(model.metrics_names, results) is checked through the
  flat `evaluate` list (loss, then the METRICS in order) and `return_dict=True` instead.
"""
import os

import numpy as np
import pytest

import minitf as tf
from minitf import keras

N_ROWS, N_FEATURES = 3000, 12
EPOCHS = 30
BATCH_SIZE = 256
BUFFER_SIZE = 1000
METRIC_NAMES = ['cross entropy', 'Brier score', 'tp', 'fp', 'tn', 'fn', 'accuracy', 'precision',
                'recall', 'auc', 'prc']


def _table():
    rng = np.random.default_rng(1234)
    features = rng.normal(size=(N_ROWS, N_FEATURES))
    labels = (rng.uniform(size=N_ROWS) < 0.04).astype(np.int64)
    features[labels == 1, :6] += 1.2
    return features, labels


def _split(features, labels, test_size, rng):
    idx = rng.permutation(len(labels))
    n_test = int(round(test_size * len(labels)))
    return (features[idx[n_test:]], labels[idx[n_test:]]), (features[idx[:n_test]], labels[idx[:n_test]])


def load_data():
    """The tutorial's cleaning/splitting/normalising, in numpy."""
    features, labels = _table()
    rng = np.random.default_rng(0)
    (train_x, train_y), (test_x, test_y) = _split(features, labels, 0.2, rng)
    (train_x, train_y), (val_x, val_y) = _split(train_x, train_y, 0.2, rng)
    train_labels = train_y.reshape(-1, 1)
    val_labels = val_y.reshape(-1, 1)
    test_labels = test_y.reshape(-1, 1)
    mean, std = train_x.mean(axis=0), train_x.std(axis=0)
    train_features = np.clip((train_x - mean) / std, -5, 5)
    val_features = np.clip((val_x - mean) / std, -5, 5)
    test_features = np.clip((test_x - mean) / std, -5, 5)
    return (train_features, train_labels), (val_features, val_labels), (test_features, test_labels)


@pytest.fixture(scope="module")
def data():
    return load_data()


def make_metrics():
    return [
        keras.metrics.BinaryCrossentropy(name='cross entropy'),  # same as model's loss
        keras.metrics.MeanSquaredError(name='Brier score'),
        keras.metrics.TruePositives(name='tp'),
        keras.metrics.FalsePositives(name='fp'),
        keras.metrics.TrueNegatives(name='tn'),
        keras.metrics.FalseNegatives(name='fn'),
        keras.metrics.BinaryAccuracy(name='accuracy'),
        keras.metrics.Precision(name='precision'),
        keras.metrics.Recall(name='recall'),
        keras.metrics.AUC(name='auc'),
        keras.metrics.AUC(name='prc', curve='PR'),  # precision-recall curve
    ]


def make_model(n_features=N_FEATURES, metrics=None, output_bias=None):
    if metrics is None:
        metrics = make_metrics()
    if output_bias is not None:
        output_bias = tf.keras.initializers.Constant(output_bias)
    model = keras.Sequential([
        keras.layers.Dense(16, activation='relu', input_shape=(n_features,)),
        keras.layers.Dropout(0.5),
        keras.layers.Dense(1, activation='sigmoid', bias_initializer=output_bias),
    ])
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss=keras.losses.BinaryCrossentropy(),
        metrics=metrics)
    return model


def early_stopping():
    return tf.keras.callbacks.EarlyStopping(
        monitor='val_prc', verbose=0, patience=10, mode='max', restore_best_weights=True)


# ---- numpy references -------------------------------------------------------------------------

def _keras_thresholds(num_thresholds=200):
    eps = 1e-7
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return np.array([0.0 - eps] + inner + [1.0 + eps])


def _confusion_at(y, p, thresholds):
    y = y.astype(bool)
    pred_pos = p[None, :] > thresholds[:, None]
    tp = (pred_pos & y[None, :]).sum(1).astype(np.float64)
    fp = (pred_pos & ~y[None, :]).sum(1).astype(np.float64)
    fn = (~pred_pos & y[None, :]).sum(1).astype(np.float64)
    tn = (~pred_pos & ~y[None, :]).sum(1).astype(np.float64)
    return tp, fp, tn, fn


def _div(a, b):
    out = np.zeros_like(a, dtype=np.float64)
    np.divide(a, b, out=out, where=b != 0)
    return out


def numpy_roc_auc(y, p):
    tp, fp, tn, fn = _confusion_at(y, p, _keras_thresholds())
    tpr, fpr = _div(tp, tp + fn), _div(fp, fp + tn)
    return float(np.sum((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2))


def numpy_pr_auc(y, p):
    """Keras' 'interpolation' summation for curve='PR' (Davis & Goadrich)."""
    tp, fp, tn, fn = _confusion_at(y, p, _keras_thresholds())
    dtp = tp[:-1] - tp[1:]
    pos = tp + fp
    dp = pos[:-1] - pos[1:]
    prec_slope = _div(dtp, np.maximum(dp, 0))
    intercept = tp[1:] - prec_slope * pos[1:]
    safe_ratio = np.where((dp > 0) & (pos[1:] > 0), _div(pos[:-1], np.maximum(pos[1:], 0)), 1.0)
    inc = _div(prec_slope * (dtp + intercept * np.log(safe_ratio)), np.maximum(tp[1:] + fn[1:], 0))
    return float(np.sum(inc))


def numpy_metrics(y, p):
    y = y.reshape(-1).astype(np.float64)
    p = p.reshape(-1).astype(np.float64)
    pc = np.clip(p, 1e-7, 1 - 1e-7)
    pred = p > 0.5
    tp = float(np.sum(pred & (y == 1)))
    fp = float(np.sum(pred & (y == 0)))
    tn = float(np.sum(~pred & (y == 0)))
    fn = float(np.sum(~pred & (y == 1)))
    return {
        'cross entropy': float(np.mean(-(y * np.log(pc) + (1 - y) * np.log(1 - pc)))),
        'Brier score': float(np.mean((y - p) ** 2)),
        'tp': tp, 'fp': fp, 'tn': tn, 'fn': fn,
        'accuracy': (tp + tn) / len(y),
        'precision': tp / (tp + fp) if tp + fp else 0.0,
        'recall': tp / (tp + fn) if tp + fn else 0.0,
        'auc': numpy_roc_auc(y, p),
        'prc': numpy_pr_auc(y, p),
    }


def _check_against_numpy(results, y, p):
    ref = numpy_metrics(y, p)
    for name in ['tp', 'fp', 'tn', 'fn']:
        assert results[name] == ref[name], name
    for name in ['accuracy', 'precision', 'recall']:
        assert results[name] == pytest.approx(ref[name], abs=1e-6), name
    for name in ['cross entropy', 'Brier score', 'auc', 'prc']:
        assert results[name] == pytest.approx(ref[name], rel=1e-4, abs=1e-5), name
    assert results['loss'] == pytest.approx(ref['cross entropy'], rel=1e-4)
    return ref


# ---- tests ------------------------------------------------------------------------------------

def test_numpy_split_and_standardisation(data):
    (train_features, train_labels), (val_features, val_labels), (test_features, test_labels) = data
    assert train_features.shape == (1920, N_FEATURES)
    assert val_features.shape == (480, N_FEATURES)
    assert test_features.shape == (600, N_FEATURES)
    assert train_labels.shape == (1920, 1)
    np.testing.assert_allclose(train_features.mean(0), 0, atol=1e-2)  # clipping moves it slightly
    assert np.all(np.abs(train_features) <= 5) and np.all(np.abs(test_features) <= 5)
    neg, pos = np.bincount(_table()[1])
    assert neg + pos == N_ROWS and 0.02 < pos / N_ROWS < 0.06


def test_metric_list_matches_numpy_on_fixed_predictions():
    rng = np.random.default_rng(5)
    y = (rng.uniform(size=(400, 1)) < 0.1).astype(np.float32)
    p = np.clip(rng.uniform(size=(400, 1)) * 0.6 + 0.35 * y, 0, 1).astype(np.float32)
    metrics = make_metrics()
    assert [m.name for m in metrics] == METRIC_NAMES
    results = {}
    for m in metrics:
        # two batches, as a model's evaluate would feed them
        m.update_state(y[:250], p[:250])
        m.update_state(y[250:], p[250:])
        results[m.name] = float(m.result())
    results['loss'] = results['cross entropy']
    ref = _check_against_numpy(results, y, p)
    assert 0.5 < ref['auc'] < 1 and 0 < ref['prc'] < ref['auc']


def test_summary_and_initial_bias(data, tmp_path):
    (train_features, train_labels), _, _ = data
    model = make_model()
    lines = []
    model.summary(print_fn=lines.append)
    assert any("Total params: 225" in line for line in lines)  # 12*16+16 + 16+1
    assert model.predict(train_features[:10], verbose=0).shape == (10, 1)

    neg, pos = np.bincount(train_labels[:, 0])
    initial_bias = np.log([pos / neg])
    model = make_model(output_bias=initial_bias)
    np.testing.assert_allclose(model.layers[-1].bias.numpy(), initial_bias, rtol=1e-6)
    preds = model.predict(train_features[:10], verbose=0)
    p0 = pos / (pos + neg)
    # with the random first layer the predictions start near p0 (tutorial: ~0.01 for fraud)
    assert np.all(preds < 0.5)
    results = model.evaluate(train_features, train_labels, batch_size=BATCH_SIZE, verbose=0)
    expected = -p0 * np.log(p0) - (1 - p0) * np.log(1 - p0)
    assert len(results) == 1 + len(METRIC_NAMES)
    assert results[0] < 2 * expected
    # independent check: with the output kernel zeroed, every prediction is exactly sigmoid(bias)
    model.layers[-1].kernel.assign(np.zeros((16, 1), np.float32))
    results = model.evaluate(train_features, train_labels, batch_size=BATCH_SIZE, verbose=0)
    assert results[0] == pytest.approx(expected, rel=1e-4)

    initial_weights = os.path.join(str(tmp_path), 'initial.weights.h5')
    model.save_weights(initial_weights)
    model2 = make_model()
    model2.load_weights(initial_weights)
    for a, b in zip(model.get_weights(), model2.get_weights()):
        np.testing.assert_array_equal(a, b)
    model2.layers[-1].bias.assign([0.0])
    assert model2.layers[-1].bias.numpy().tolist() == [0.0]


@pytest.fixture(scope="module")
def initial_weights(data, tmp_path_factory):
    (train_features, train_labels), _, _ = data
    tf.keras.utils.set_random_seed(1)
    neg, pos = np.bincount(train_labels[:, 0])
    model = make_model(output_bias=np.log([pos / neg]))
    path = os.path.join(str(tmp_path_factory.mktemp("imbalanced")), 'initial.weights.h5')
    model.save_weights(path)
    return path


@pytest.fixture(scope="module")
def baseline(data, initial_weights):
    (train_features, train_labels), (val_features, val_labels), _ = data
    model = make_model()
    model.load_weights(initial_weights)
    history = model.fit(
        train_features, train_labels, batch_size=BATCH_SIZE, epochs=EPOCHS,
        callbacks=[early_stopping()], validation_data=(val_features, val_labels), verbose=0)
    return model, history


def test_baseline_fit_early_stopping_and_evaluate(data, baseline):
    _, (val_features, val_labels), (test_features, test_labels) = data
    model, history = baseline
    expected_keys = {'loss'} | set(METRIC_NAMES)
    assert set(history.history) == expected_keys | {'val_' + k for k in expected_keys}
    assert len(history.epoch) <= EPOCHS
    assert history.history['loss'][-1] < history.history['loss'][0]
    # restore_best_weights: the model holds the weights of the best val_prc epoch
    val_results = model.evaluate(val_features, val_labels, batch_size=BATCH_SIZE, verbose=0,
                                 return_dict=True)
    assert val_results['prc'] == pytest.approx(max(history.history['val_prc']), abs=1e-5)

    test_predictions = model.predict(test_features, batch_size=BATCH_SIZE, verbose=0)
    baseline_results = model.evaluate(test_features, test_labels, batch_size=BATCH_SIZE, verbose=0)
    # Keras 3 (TF 2.21) gives ['loss', 'compile_metrics'] here, tf.keras 2 the flat names; the
    # evaluate list is flat in both: loss, then the compiled metrics in order.
    assert model.metrics_names[0] == 'loss'
    results = dict(zip(['loss'] + METRIC_NAMES, baseline_results))
    as_dict = model.evaluate(test_features, test_labels, batch_size=BATCH_SIZE, verbose=0,
                             return_dict=True)
    assert set(as_dict) == set(results)
    for k in results:
        assert as_dict[k] == pytest.approx(results[k], rel=1e-6)
    ref = _check_against_numpy(results, test_labels, test_predictions)
    assert ref['auc'] > 0.9
    assert ref['tp'] + ref['fn'] == test_labels.sum()


def test_class_weights(data, initial_weights, baseline):
    (train_features, train_labels), (val_features, val_labels), (test_features, test_labels) = data
    neg, pos = np.bincount(train_labels[:, 0])
    total = neg + pos
    weight_for_0 = (1 / neg) * (total / 2.0)
    weight_for_1 = (1 / pos) * (total / 2.0)
    class_weight = {0: weight_for_0, 1: weight_for_1}
    assert weight_for_0 < 1 < weight_for_1

    weighted_model = make_model()
    weighted_model.load_weights(initial_weights)
    weighted_history = weighted_model.fit(
        train_features, train_labels, batch_size=BATCH_SIZE, epochs=EPOCHS,
        callbacks=[early_stopping()], validation_data=(val_features, val_labels),
        class_weight=class_weight, verbose=0)
    assert weighted_history.history['loss'][-1] < weighted_history.history['loss'][0]
    preds = weighted_model.predict(test_features, batch_size=BATCH_SIZE, verbose=0)
    weighted_results = weighted_model.evaluate(test_features, test_labels, batch_size=BATCH_SIZE,
                                               verbose=0, return_dict=True)
    _check_against_numpy(weighted_results, test_labels, preds)
    base = baseline[0].evaluate(test_features, test_labels, batch_size=BATCH_SIZE, verbose=0,
                                return_dict=True)
    # the tutorial's point: class weights trade false positives for recall
    assert weighted_results['recall'] >= base['recall']
    assert weighted_results['fp'] > base['fp']
    assert weighted_results['recall'] > 0.7


def test_oversampling_with_tf_data(data, initial_weights):
    (train_features, train_labels), (val_features, val_labels), (test_features, test_labels) = data
    bool_train_labels = train_labels[:, 0] != 0
    pos_features, neg_features = train_features[bool_train_labels], train_features[~bool_train_labels]
    pos_labels, neg_labels = train_labels[bool_train_labels], train_labels[~bool_train_labels]
    neg = len(neg_features)

    def make_ds(features, labels):
        ds = tf.data.Dataset.from_tensor_slices((features, labels))  # .cache()
        ds = ds.shuffle(BUFFER_SIZE).repeat()
        return ds

    tf.random.set_seed(3)
    pos_ds = make_ds(pos_features, pos_labels)
    neg_ds = make_ds(neg_features, neg_labels)
    for features, label in pos_ds.take(1):
        assert features.shape == (N_FEATURES,)
        assert label.numpy().tolist() == [1]
        assert any(np.allclose(features.numpy(), row) for row in pos_features)

    resampled_ds = tf.data.Dataset.sample_from_datasets([pos_ds, neg_ds], weights=[0.5, 0.5])
    resampled_ds = resampled_ds.batch(BATCH_SIZE).prefetch(2)
    for features, label in resampled_ds.take(1):
        assert features.shape == (BATCH_SIZE, N_FEATURES)
        assert 0.4 < label.numpy().mean() < 0.6

    resampled_steps_per_epoch = int(np.ceil(2.0 * neg / BATCH_SIZE))
    assert resampled_steps_per_epoch == 15

    resampled_model = make_model()
    resampled_model.load_weights(initial_weights)
    output_layer = resampled_model.layers[-1]
    output_layer.bias.assign([0])

    val_ds = tf.data.Dataset.from_tensor_slices((val_features, val_labels)).cache()
    val_ds = val_ds.batch(BATCH_SIZE).prefetch(2)

    resampled_history = resampled_model.fit(
        resampled_ds, epochs=10, steps_per_epoch=resampled_steps_per_epoch,
        callbacks=[early_stopping()], validation_data=val_ds, verbose=0)
    h = resampled_history.history
    assert len(h['loss']) <= 10 and 'val_prc' in h
    assert h['loss'][-1] < h['loss'][0]
    # balanced batches: the training accuracy is measured on ~50% positives
    assert h['tp'][0] + h['fn'][0] == pytest.approx(resampled_steps_per_epoch * BATCH_SIZE / 2,
                                                    rel=0.1)
    preds = resampled_model.predict(test_features, batch_size=BATCH_SIZE, verbose=0)
    results = resampled_model.evaluate(test_features, test_labels, batch_size=BATCH_SIZE,
                                       verbose=0, return_dict=True)
    _check_against_numpy(results, test_labels, preds)
    assert results['recall'] > 0.7 and results['auc'] > 0.9
