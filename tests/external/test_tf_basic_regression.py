"""Port of tensorflow.org's tutorial "Basic regression: Predict fuel efficiency"
(https://www.tensorflow.org/tutorials/keras/regression).

From the tutorial: a `Normalization(axis=-1)` layer adapted to the training features (its
`mean` printed as a (1, 9) array, the first example normalized), the one-input horsepower model
(`Normalization(input_shape=[1,], axis=None)` + `Dense(1)`, 5 parameters), the linear model on
all features (kernel of shape (9, 1)), the DNN built by `build_and_compile_model` (Dense 64 relu,
Dense 64 relu, Dense 1; 4,356 parameters on horsepower, 4,884 on all features), compiled with
`mean_absolute_error` and `Adam(0.1)` (linear) / `Adam(0.001)` (DNN), trained with
`validation_split=0.2, verbose=0`, `history.history`/`history.epoch`, `evaluate`, `predict` on
`tf.linspace(0.0, 250, 251)` and on the test set, and `model.save('dnn_model.keras')` +
`tf.keras.models.load_model` giving the same results.

Changes: the Auto MPG CSV (a download) is replaced by a synthetic table with the same columns
(Cylinders, Displacement, Horsepower, Weight, Acceleration, Model Year and the one-hot Origin
columns Europe/Japan/USA), 314 training and 78 test rows as in the tutorial, held in numpy
arrays instead of pandas DataFrames (a column is `train_features[:, HP]`, a 1-D array as the
tutorial's Series). MPG is a noisy, non-linear function of weight, horsepower, year and origin.
The DNN's summary is checked after `fit`: in Keras 3 a Sequential without an `Input` is built on
its first call (the tutorial's printed summary comes from an earlier Keras), and a trained
model's summary also counts the optimizer's variables. The plots and the
pandas tables are left out.
"""
import functools

import numpy as np

import minitf as tf
from minitf.keras import layers

COLUMNS = ["Cylinders", "Displacement", "Horsepower", "Weight", "Acceleration", "Model Year",
           "Europe", "Japan", "USA"]
HP = COLUMNS.index("Horsepower")


@functools.lru_cache(maxsize=None)
def auto_mpg_like():
    """(train_features, train_labels, test_features, test_labels), float64 numpy arrays."""
    rng = np.random.default_rng(0)
    n = 392
    cylinders = rng.choice([4.0, 6.0, 8.0], size=n, p=[0.5, 0.25, 0.25])
    displacement = cylinders * 40.0 + rng.normal(0, 15, n)
    horsepower = 0.35 * displacement + 30 + rng.normal(0, 10, n)
    weight = 9.0 * displacement + 1200 + rng.normal(0, 200, n)
    acceleration = 22 - 0.05 * horsepower + rng.normal(0, 1.5, n)
    year = rng.integers(70, 83, n).astype(float)
    origin = np.where(cylinders > 4, 0, rng.integers(0, 3, n))  # 0 USA, 1 Europe, 2 Japan
    europe, japan, usa = (origin == 1) * 1.0, (origin == 2) * 1.0, (origin == 0) * 1.0
    # Fuel use (gallons per 100 miles) is about linear in weight and power, so MPG is not.
    gallons = 0.0013 * weight + 0.012 * horsepower - 0.12 * (year - 76) - 0.3 * japan
    mpg = 100.0 / np.maximum(gallons, 2.0) + rng.normal(0, 1.0, n)
    features = np.stack([cylinders, displacement, horsepower, weight, acceleration, year,
                         europe, japan, usa], axis=1)
    order = rng.permutation(n)  # dataset.sample(frac=0.8, random_state=0) / drop(...)
    train, test = order[:314], order[314:]
    return features[train], mpg[train], features[test], mpg[test]


def _summary_lines(model):
    lines = []
    model.summary(print_fn=lines.append)
    return "\n".join(lines)


def build_and_compile_model(norm):
    model = tf.keras.Sequential([
        norm,
        layers.Dense(64, activation="relu"),
        layers.Dense(64, activation="relu"),
        layers.Dense(1),
    ])
    model.compile(loss="mean_absolute_error", optimizer=tf.keras.optimizers.Adam(0.001))
    return model


def _baseline_mae():
    train_features, train_labels, _, test_labels = auto_mpg_like()
    return float(np.mean(np.abs(test_labels - train_labels.mean())))


@functools.lru_cache(maxsize=None)
def _normalizer():
    train_features = auto_mpg_like()[0]
    normalizer = tf.keras.layers.Normalization(axis=-1)
    normalizer.adapt(np.array(train_features))
    return normalizer


def test_synthetic_table_shapes():
    train_features, train_labels, test_features, test_labels = auto_mpg_like()
    assert train_features.shape == (314, 9) and test_features.shape == (78, 9)
    assert train_labels.shape == (314,) and test_labels.shape == (78,)
    assert 8 < train_labels.min() and train_labels.max() < 50


def test_normalization_layer_adapt():
    train_features = auto_mpg_like()[0]
    normalizer = _normalizer()
    mean = train_features.mean(axis=0)
    std = train_features.std(axis=0)
    np.testing.assert_allclose(normalizer.mean.numpy().ravel(), mean, rtol=1e-5)
    first = np.array(train_features[:1])
    normalized = normalizer(first).numpy()
    assert normalized.shape == (1, 9)
    np.testing.assert_allclose(normalized, (first - mean) / std, rtol=1e-4, atol=1e-4)
    all_normalized = normalizer(train_features).numpy()
    np.testing.assert_allclose(all_normalized.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_allclose(all_normalized.std(axis=0), 1.0, rtol=1e-4)
    # The tutorial prints normalizer.mean.numpy() as a (1, 9) array.
    assert normalizer.mean.numpy().shape == (1, 9)


def _horsepower_normalizer():
    horsepower = np.array(auto_mpg_like()[0][:, HP])
    horsepower_normalizer = layers.Normalization(input_shape=[1, ], axis=None)
    horsepower_normalizer.adapt(horsepower)
    return horsepower, horsepower_normalizer


def test_linear_regression_with_one_variable():
    train_features, train_labels, test_features, test_labels = auto_mpg_like()
    tf.random.set_seed(0)
    horsepower, horsepower_normalizer = _horsepower_normalizer()
    horsepower_model = tf.keras.Sequential([
        horsepower_normalizer,
        layers.Dense(units=1),
    ])
    summary = _summary_lines(horsepower_model)
    assert "Total params: 5" in summary
    assert "Trainable params: 2" in summary
    assert "Non-trainable params: 3" in summary

    # The untrained model runs on the first 10 horsepower values.
    out = horsepower_model.predict(horsepower[:10], verbose=0)
    assert out.shape == (10, 1)
    kernel, bias = horsepower_model.layers[1].get_weights()
    z = (horsepower[:10] - horsepower.mean()) / horsepower.std()
    np.testing.assert_allclose(out[:, 0], z * kernel[0, 0] + bias[0], rtol=1e-4, atol=1e-5)

    horsepower_model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=0.1),
                             loss="mean_absolute_error")
    history = horsepower_model.fit(train_features[:, HP], train_labels, epochs=100, verbose=0,
                                   validation_split=0.2)
    assert sorted(history.history) == ["loss", "val_loss"]
    assert history.epoch == list(range(100))
    loss, val_loss = history.history["loss"], history.history["val_loss"]
    assert len(loss) == len(val_loss) == 100
    assert loss[-1] < loss[0] / 3
    assert val_loss[-1] < val_loss[0] / 3

    test_mae = horsepower_model.evaluate(test_features[:, HP], test_labels, verbose=0)
    assert isinstance(test_mae, float)
    assert test_mae < 0.7 * _baseline_mae()
    pred = horsepower_model.predict(test_features[:, HP], verbose=0)
    np.testing.assert_allclose(test_mae, np.mean(np.abs(pred[:, 0] - test_labels)), rtol=1e-4)

    # The fitted line over 0..250 horsepower: a straight line, decreasing.
    x = tf.linspace(0.0, 250, 251)
    y = horsepower_model.predict(x, verbose=0)
    assert y.shape == (251, 1)
    np.testing.assert_allclose(np.diff(y[:, 0], 2), 0.0, atol=1e-3)
    assert y[-1, 0] < y[0, 0]


def test_linear_regression_with_multiple_inputs():
    train_features, train_labels, test_features, test_labels = auto_mpg_like()
    tf.random.set_seed(1)
    normalizer = _normalizer()
    linear_model = tf.keras.Sequential([
        normalizer,
        layers.Dense(units=1),
    ])
    assert linear_model.predict(train_features[:10], verbose=0).shape == (10, 1)
    assert tuple(linear_model.layers[1].kernel.shape) == (9, 1)

    linear_model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=0.1),
                         loss="mean_absolute_error")
    history = linear_model.fit(train_features, train_labels, epochs=100, verbose=0,
                               validation_split=0.2)
    assert sorted(history.history) == ["loss", "val_loss"]
    assert history.history["loss"][-1] < history.history["loss"][0] / 4
    test_mae = linear_model.evaluate(test_features, test_labels, verbose=0)
    assert test_mae < 0.35 * _baseline_mae()
    # The normalizer's statistics stay the adapted ones while the Dense layer trains.
    np.testing.assert_allclose(normalizer.mean.numpy().ravel(), train_features.mean(axis=0),
                               rtol=1e-5)


def test_dnn_regression_with_one_input_summary_and_fit():
    train_features, train_labels, test_features, test_labels = auto_mpg_like()
    tf.random.set_seed(2)
    _, horsepower_normalizer = _horsepower_normalizer()
    dnn_horsepower_model = build_and_compile_model(horsepower_normalizer)
    summary = _summary_lines(dnn_horsepower_model)
    assert "Total params: 4,356" in summary
    assert "Trainable params: 4,353" in summary
    assert "Non-trainable params: 3" in summary
    history = dnn_horsepower_model.fit(train_features[:, HP], train_labels,
                                       validation_split=0.2, verbose=0, epochs=100)
    assert history.history["loss"][-1] < history.history["loss"][0] / 3
    test_mae = dnn_horsepower_model.evaluate(test_features[:, HP], test_labels, verbose=0)
    assert test_mae < 0.7 * _baseline_mae()
    # Unlike the linear model, the fitted curve over 0..250 horsepower is not a line.
    y = dnn_horsepower_model.predict(tf.linspace(0.0, 250, 251), verbose=0)
    assert y.shape == (251, 1)
    assert np.abs(np.diff(y[:, 0], 2)).max() > 1e-3


def test_dnn_regression_full_model_save_and_reload(tmp_path):
    train_features, train_labels, test_features, test_labels = auto_mpg_like()
    tf.random.set_seed(3)
    dnn_model = build_and_compile_model(_normalizer())
    # Keras 3 builds this Sequential (no Input) on its first call: before, the summary shows
    # the Dense layers unbuilt and only the normalizer's 19 statistics.
    assert "Total params: 19" in _summary_lines(dnn_model)
    history = dnn_model.fit(train_features, train_labels, validation_split=0.2, verbose=0,
                            epochs=100)
    assert dnn_model.count_params() == 4884  # the tutorial's total
    assert sorted(history.history) == ["loss", "val_loss"]
    assert history.history["loss"][-1] < history.history["loss"][0] / 5
    test_mae = dnn_model.evaluate(test_features, test_labels, verbose=0)
    assert test_mae < 0.3 * _baseline_mae()

    test_predictions = dnn_model.predict(test_features, verbose=0).flatten()
    assert test_predictions.shape == (78,)
    error = test_predictions - test_labels
    np.testing.assert_allclose(np.mean(np.abs(error)), test_mae, rtol=1e-4)

    path = str(tmp_path / "dnn_model.keras")
    dnn_model.save(path)
    reloaded = tf.keras.models.load_model(path)
    np.testing.assert_allclose(reloaded.evaluate(test_features, test_labels, verbose=0),
                               test_mae, rtol=1e-5)
    np.testing.assert_allclose(reloaded.predict(test_features, verbose=0).flatten(),
                               test_predictions, rtol=1e-5, atol=1e-5)
    assert reloaded.count_params() == 4884
    np.testing.assert_allclose(reloaded.layers[0].mean.numpy(), dnn_model.layers[0].mean.numpy())

    # After training, Keras 3's summary adds the optimizer's variables (Adam's two slots per
    # trainable weight, plus its iteration count and learning rate) to the total. TF's lines:
    summary = _summary_lines(dnn_model)
    assert "Trainable params: 4,865" in summary  # the tutorial's numbers
    assert "Non-trainable params: 19" in summary
    assert "Optimizer params: 9,732" in summary
    assert "Total params: 14,616" in summary
