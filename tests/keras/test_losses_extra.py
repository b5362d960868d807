"""The regression, hinge and focal losses: values from the keras.io / tf.keras docstring
examples (``keras/src/losses/losses.py``), numpy re-computations, reductions and sample weights,
gradients, traced calls, configs, string names and ``compile(loss=...)``."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras

L = keras.losses
EPS = 1e-7


def _np_softplus(x):
    return np.logaddexp(0.0, x)


# Numpy versions of Keras 3's formulas (one value per sample).
NUMPY = {
    "mean_absolute_percentage_error":
        lambda t, p: 100 * np.mean(np.abs((t - p) / np.maximum(np.abs(t), EPS)), -1),
    "mean_squared_logarithmic_error":
        lambda t, p: np.mean((np.log(np.maximum(p, EPS) + 1) - np.log(np.maximum(t, EPS) + 1))
                             ** 2, -1),
    "log_cosh": lambda t, p: np.mean(np.log(np.cosh(p - t)), -1),
    "poisson": lambda t, p: np.mean(p - t * np.log(p + EPS), -1),
    "cosine_similarity": lambda t, p: -np.sum(
        t / np.linalg.norm(t, axis=-1, keepdims=True)
        * p / np.linalg.norm(p, axis=-1, keepdims=True), -1),
    "hinge": lambda t, p: np.mean(np.maximum(1 - t * p, 0), -1),
    "squared_hinge": lambda t, p: np.mean(np.maximum(1 - t * p, 0) ** 2, -1),
    "categorical_hinge": lambda t, p: np.maximum(
        np.max((1 - t) * p, -1) - np.sum(t * p, -1) + 1, 0),
}


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_functions_match_numpy(name):
    rng = np.random.default_rng(0)
    y_pred = rng.uniform(0.1, 3.0, (6, 4))
    if "hinge" in name:
        y_true = rng.choice([-1.0, 1.0], (6, 4))
        y_pred = rng.standard_normal((6, 4))
        if name == "categorical_hinge":
            y_true = np.eye(4)[rng.integers(0, 4, 6)]
    else:
        y_true = rng.uniform(0.1, 3.0, (6, 4))
    got = getattr(L, name)(tf.constant(y_true), tf.constant(y_pred))
    assert got.shape == (6,) and got.dtype == tf.float64
    np.testing.assert_allclose(got.numpy(), NUMPY[name](y_true, y_pred), rtol=1e-10)


def test_documented_examples_with_reductions():
    # tf.keras.losses.MeanAbsolutePercentageError docstring
    t, p = [[2., 1.], [2., 3.]], [[1., 1.], [1., 0.]]
    assert float(L.MeanAbsolutePercentageError()(t, p)) == pytest.approx(50.0)
    assert float(L.MeanAbsolutePercentageError()(t, p, sample_weight=[0.7, 0.3])) == \
        pytest.approx(20.0)
    assert float(L.MeanAbsolutePercentageError(reduction="sum")(t, p)) == pytest.approx(100.0)
    np.testing.assert_allclose(L.MeanAbsolutePercentageError(reduction="none")(t, p).numpy(),
                               [25.0, 75.0], rtol=1e-6)
    # tf.keras.losses.MeanSquaredLogarithmicError docstring
    t, p = [[0., 1.], [0., 0.]], [[1., 1.], [1., 0.]]
    assert float(L.MeanSquaredLogarithmicError()(t, p)) == pytest.approx(0.240, abs=1e-3)
    assert float(L.MeanSquaredLogarithmicError()(t, p, sample_weight=[0.7, 0.3])) == \
        pytest.approx(0.120, abs=1e-3)
    assert float(L.MeanSquaredLogarithmicError(reduction="sum")(t, p)) == \
        pytest.approx(0.480, abs=1e-3)
    # Hinge / SquaredHinge / CategoricalHinge docstrings
    t, p = [[0., 1.], [0., 0.]], [[0.6, 0.4], [0.4, 0.6]]
    assert float(L.Hinge()(t, p)) == pytest.approx(1.3)
    assert float(L.Hinge()(t, p, sample_weight=[1, 0])) == pytest.approx(0.55)
    np.testing.assert_allclose(L.Hinge(reduction=None)(t, p).numpy(), [1.1, 1.5], rtol=1e-6)
    assert float(L.SquaredHinge()(t, p)) == pytest.approx(1.86)
    assert float(L.SquaredHinge()(t, p, sample_weight=[1, 0])) == pytest.approx(0.73)
    np.testing.assert_allclose(L.SquaredHinge(reduction="none")(t, p).numpy(), [1.46, 2.26],
                               rtol=1e-6)
    assert float(L.CategoricalHinge()(t, p)) == pytest.approx(1.4)
    assert float(L.CategoricalHinge()(t, p, sample_weight=[1, 0])) == pytest.approx(0.6)
    assert float(L.CategoricalHinge(reduction="sum")(t, p)) == pytest.approx(2.8)
    # LogCosh / Poisson docstrings
    t, p = [[0., 1.], [0., 0.]], [[1., 1.], [0., 0.]]
    assert float(L.LogCosh()(t, p)) == pytest.approx(0.108, abs=1e-3)
    assert float(L.LogCosh()(t, p, sample_weight=[0.8, 0.2])) == pytest.approx(0.087, abs=1e-3)
    np.testing.assert_allclose(L.LogCosh(reduction="none")(t, p).numpy(), [0.217, 0.0],
                               atol=1e-3)
    assert float(L.Poisson()(t, p)) == pytest.approx(0.5, abs=1e-6)
    assert float(L.Poisson()(t, p, sample_weight=[0.8, 0.2])) == pytest.approx(0.4, abs=1e-6)
    assert float(L.Poisson(reduction="sum")(t, p)) == pytest.approx(0.999, abs=1e-3)
    # CosineSimilarity(axis=1) docstring
    t, p = [[0., 1.], [1., 1.]], [[1., 0.], [1., 1.]]
    assert float(L.CosineSimilarity(axis=1)(t, p)) == pytest.approx(-0.5, abs=1e-6)
    assert float(L.CosineSimilarity(axis=1)(t, p, sample_weight=[0.8, 0.2])) == \
        pytest.approx(-0.0999, abs=1e-4)
    np.testing.assert_allclose(L.CosineSimilarity(axis=1, reduction="none")(t, p).numpy(),
                               [0.0, -1.0], atol=1e-6)
    # keras.losses.cosine_similarity docstring: a zero vector gives 0
    np.testing.assert_allclose(
        L.cosine_similarity([[0., 1.], [1., 1.], [1., 1.]], [[1., 0.], [1., 1.], [-1., -1.]]),
        [0.0, -1.0, 1.0], atol=1e-6)
    np.testing.assert_array_equal(L.cosine_similarity([[0., 0.]], [[1., 2.]]).numpy(), [0.0])


def test_focal_documented_examples():
    # keras.losses.CategoricalFocalCrossentropy docstring
    t, p = [[0., 1., 0.], [0., 0., 1.]], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]]
    cfce = L.CategoricalFocalCrossentropy()
    assert float(cfce(t, p)) == pytest.approx(0.23315276, rel=1e-5)
    assert float(cfce(t, p, sample_weight=[0.3, 0.7])) == pytest.approx(0.1632, abs=1e-4)
    assert float(L.CategoricalFocalCrossentropy(reduction="sum")(t, p)) == \
        pytest.approx(0.46631, abs=1e-5)
    np.testing.assert_allclose(L.CategoricalFocalCrossentropy(reduction=None)(t, p).numpy(),
                               [3.2058331e-05, 4.6627346e-01], rtol=1e-5)
    # keras.losses.categorical_focal_crossentropy docstring
    np.testing.assert_allclose(
        L.categorical_focal_crossentropy([[0, 1, 0], [0, 0, 1]],
                                         [[0.05, 0.9, 0.05], [0.1, 0.85, 0.05]]).numpy(),
        [2.63401289e-04, 6.75912094e-01], rtol=1e-5)
    # keras.losses.BinaryFocalCrossentropy docstring
    t, p = [0, 1, 0, 0], [-18.6, 0.51, 2.94, -12.8]
    assert float(L.BinaryFocalCrossentropy(gamma=2, from_logits=True)(t, p)) == \
        pytest.approx(0.691, abs=1e-3)
    assert float(L.BinaryFocalCrossentropy(apply_class_balancing=True, gamma=2,
                                           from_logits=True)(t, p)) == \
        pytest.approx(0.51, abs=1e-2)
    assert float(L.BinaryFocalCrossentropy(gamma=3, from_logits=True)(t, p)) == \
        pytest.approx(0.647, abs=1e-3)
    # keras.losses.binary_focal_crossentropy docstring
    np.testing.assert_allclose(
        L.binary_focal_crossentropy([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], gamma=2).numpy(),
        [0.330, 0.206], atol=1e-3)


def test_focal_matches_numpy_with_smoothing_and_class_weights():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((5, 4))
    labels = np.eye(4)[rng.integers(0, 4, 5)]
    alpha = [0.1, 0.2, 0.3, 0.4]
    got = L.categorical_focal_crossentropy(labels, logits, alpha=alpha, gamma=1.5,
                                           from_logits=True, label_smoothing=0.2)
    t = labels * 0.8 + 0.2 / 4
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    p = np.clip(p, EPS, 1 - EPS)
    want = np.sum(np.array(alpha) * (1 - p) ** 1.5 * -t * np.log(p), -1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    y = rng.integers(0, 2, (5, 3)).astype(np.float64)
    probs = rng.uniform(0.01, 0.99, (5, 3))
    got = L.binary_focal_crossentropy(y, probs, apply_class_balancing=True, alpha=0.3, gamma=2.5,
                                      label_smoothing=0.1)
    ys = y * 0.9 + 0.05
    bce = -(ys * np.log(probs) + (1 - ys) * np.log(1 - probs))
    p_t = ys * probs + (1 - ys) * (1 - probs)
    want = np.mean((ys * 0.3 + (1 - ys) * 0.7) * (1 - p_t) ** 2.5 * bce, -1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_hinge_converts_binary_labels_only_when_all_are_binary():
    p = np.array([[0.3, -0.8, 2.0]])
    np.testing.assert_allclose(L.hinge([[1.0, 0.0, 1.0]], p).numpy(),
                               NUMPY["hinge"](np.array([[1.0, -1.0, 1.0]]), p))
    # 2.0 is not binary: the labels are used as they are
    np.testing.assert_allclose(L.hinge([[1.0, 0.0, 2.0]], p).numpy(),
                               NUMPY["hinge"](np.array([[1.0, 0.0, 2.0]]), p))


@pytest.mark.parametrize("fn", [L.mean_absolute_percentage_error,
                                L.mean_squared_logarithmic_error, L.log_cosh, L.poisson,
                                L.cosine_similarity, L.squared_hinge,
                                L.categorical_focal_crossentropy, L.binary_focal_crossentropy])
def test_gradients_match_central_differences(fn):
    rng = np.random.default_rng(2)
    y_true = rng.uniform(0.2, 0.8, (3, 4))
    y_pred = rng.uniform(0.2, 0.8, (3, 4))
    x = tf.Variable(y_pred)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(fn(y_true, x))
    grad = tape.gradient(loss, x).numpy()
    h = 1e-6
    numeric = np.zeros_like(y_pred)
    for idx in np.ndindex(*y_pred.shape):
        up, down = y_pred.copy(), y_pred.copy()
        up[idx] += h
        down[idx] -= h
        numeric[idx] = (float(tf.reduce_sum(fn(y_true, up)))
                        - float(tf.reduce_sum(fn(y_true, down)))) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


def test_traced_losses_follow_new_values():
    hinge = L.Hinge()
    focal = L.BinaryFocalCrossentropy(from_logits=True)
    mape = L.MeanAbsolutePercentageError()

    @tf.function
    def losses(t, p):
        return hinge(t, p), focal(tf.abs(t), p), mape(t + 3.0, p)

    rng = np.random.default_rng(3)
    for labels in ([[0., 1., 1.], [1., 0., 0.]], [[-1., 1., -1.], [1., 1., -1.]]):
        p = rng.standard_normal((2, 3)).astype(np.float32)
        t = np.array(labels, np.float32)
        h, f, m = losses(tf.constant(t), tf.constant(p))
        signed = 2 * t - 1 if set(t.ravel()) <= {0.0, 1.0} else t
        assert float(h) == pytest.approx(np.mean(np.maximum(1 - signed * p, 0)), rel=1e-5)
        assert float(f) == pytest.approx(float(L.binary_focal_crossentropy(
            np.abs(t), p, from_logits=True).numpy().mean()), rel=1e-5)
        assert float(m) == pytest.approx(np.mean(NUMPY["mean_absolute_percentage_error"](
            t + 3.0, p)), rel=1e-5)


def test_names_configs_and_serialization():
    assert L.get("mape") is L.mean_absolute_percentage_error is L.MAPE
    assert L.get("msle") is L.mean_squared_logarithmic_error
    assert L.get("logcosh") is L.log_cosh and L.get("poisson") is L.poisson
    for name in ("hinge", "squared_hinge", "categorical_hinge", "cosine_similarity",
                 "binary_focal_crossentropy", "categorical_focal_crossentropy"):
        assert L.get(name) is getattr(L, name)
    assert tf.keras.losses.LogCosh is L.LogCosh
    cases = [L.MeanAbsolutePercentageError(), L.MeanSquaredLogarithmicError(), L.LogCosh(),
             L.Poisson(), L.CosineSimilarity(axis=0), L.Hinge(), L.SquaredHinge(),
             L.CategoricalHinge(),
             L.CategoricalFocalCrossentropy(alpha=0.5, gamma=1.0, label_smoothing=0.1),
             L.BinaryFocalCrossentropy(apply_class_balancing=True, from_logits=True,
                                       reduction="sum")]
    for loss in cases:
        restored = L.deserialize(L.serialize(loss))
        assert type(restored) is type(loss) and restored.get_config() == loss.get_config()
        assert type(L.get(type(loss).__name__)) is type(loss)
    assert L.CosineSimilarity(axis=0).get_config()["axis"] == 0
    config = cases[-1].get_config()
    assert (config["apply_class_balancing"], config["from_logits"], config["reduction"]) == \
        (True, True, "sum")
    assert [c.name for c in cases[:4]] == ["mean_absolute_percentage_error",
                                           "mean_squared_logarithmic_error", "log_cosh",
                                           "poisson"]


def test_bad_inputs():
    with pytest.raises(tf.errors.InvalidArgumentError):
        L.MeanAbsolutePercentageError()([[1., 2., 3.]], [[1., 2.]])
    with pytest.raises(ValueError, match="axis"):
        L.CategoricalFocalCrossentropy(axis=True)
    with pytest.raises(ValueError, match="reduction"):
        L.LogCosh(reduction="average")
    with pytest.raises(ValueError, match="unknown loss"):
        L.get("mean_percentage_error")


@pytest.mark.parametrize("loss", ["mape", "msle", "logcosh", "poisson", "hinge",
                                  "binary_focal_crossentropy", "categorical_hinge"])
def test_compile_with_string_loss_trains(loss):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    if loss in ("hinge", "binary_focal_crossentropy"):
        y = (x[:, :1] > 0).astype(np.float32)
        head = keras.layers.Dense(1, activation="tanh" if loss == "hinge" else "sigmoid")
    elif loss == "categorical_hinge":
        y = np.eye(3, dtype=np.float32)[(x[:, 0] > 0).astype(int) + (x[:, 1] > 1).astype(int)]
        head = keras.layers.Dense(3)
    else:
        y = np.exp(0.3 * x[:, :1]).astype(np.float32) + 1.0
        head = keras.layers.Dense(1, activation="softplus")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), head])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=loss)
    history = model.fit(x, y, batch_size=16, epochs=6, verbose=0).history["loss"]
    assert history[-1] < history[0]
    # the loss the fit reports is the loss of the compiled function on the model's output
    expected = float(np.mean(L.get(loss)(y, model.predict(x, verbose=0)).numpy()))
    assert model.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-4)
