"""A subclass of ``keras.Model`` called as ``Sub(inputs, outputs)`` is a functional model that
keeps the subclass's own methods (Keras 3 semantics, used by the keras.io guide "Customizing
what happens in fit()")."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras.models import Functional


class HalfLossModel(keras.Model):
    """train_step reports half the loss, test_step a fixed extra entry: both must be used."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tracker = keras.metrics.Mean(name="half")

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        self.tracker.update_state(loss / 2.0)
        return {"half": self.tracker.result()}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.tracker.update_state(tf.reduce_mean(tf.abs(y - y_pred)))
        return {"half": self.tracker.result(), "marker": tf.constant(7.0)}

    @property
    def metrics(self):
        return [self.tracker]


def _graph():
    inputs = keras.Input(shape=(3,))
    return inputs, keras.layers.Dense(1, name="out")(inputs)


def _data():
    rng = np.random.default_rng(0)
    return rng.random((8, 3)).astype("float32"), rng.random((8, 1)).astype("float32")


def test_subclass_with_inputs_outputs_is_functional_and_keeps_its_methods():
    model = HalfLossModel(*_graph())
    assert isinstance(model, HalfLossModel) and isinstance(model, Functional)
    assert type(model).__name__ == "HalfLossModel"
    assert [layer.name for layer in model.layers][-1] == "out"
    assert model.built and len(model.trainable_variables) == 2
    # the same class is reused for every functional instance of the subclass
    assert type(HalfLossModel(*_graph())) is type(model)


def test_fit_and_evaluate_run_the_overridden_steps():
    x, y = _data()
    model = HalfLossModel(*_graph())
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    w, b = (v.astype(np.float64) for v in model.get_weights())
    err = x @ w + b - y
    history = model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert history.history["half"][0] == pytest.approx(np.mean(err ** 2) / 2, rel=1e-5)
    g = 2 * err / len(x)
    w, b = w - 0.1 * x.T @ g, b - 0.1 * g.sum(0)
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5, atol=1e-6)
    result = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    assert result["half"] == pytest.approx(np.mean(np.abs(x @ w + b - y)), rel=1e-5)
    assert result["marker"] == pytest.approx(7.0)


def test_keyword_and_positional_forms_and_plain_subclass_arguments():
    inputs, outputs = _graph()
    assert isinstance(HalfLossModel(inputs=inputs, outputs=outputs), Functional)
    assert isinstance(HalfLossModel(inputs, outputs=outputs), Functional)

    class Pair(keras.Model):  # two non-symbolic positional arguments stay a plain subclass
        def __init__(self, a, b):
            super().__init__()
            self.a, self.b = a, b

        def call(self, x):
            return x * self.a + self.b

    pair = Pair(2.0, 1.0)
    assert not isinstance(pair, Functional)
    np.testing.assert_allclose(pair(tf.constant([1.0, 2.0])).numpy(), [3.0, 5.0])


def test_weights_and_keras_archive_round_trip(tmp_path):
    x, _ = _data()
    model = HalfLossModel(*_graph())
    model.save_weights(str(tmp_path / "m.weights.h5"))
    other = HalfLossModel(*_graph())
    other.load_weights(str(tmp_path / "m.weights.h5"))
    np.testing.assert_allclose(other.predict(x, verbose=0), model.predict(x, verbose=0))
    model.save(str(tmp_path / "m.keras"))
    loaded = keras.models.load_model(str(tmp_path / "m.keras"),
                                     custom_objects={"HalfLossModel": HalfLossModel})
    assert isinstance(loaded, HalfLossModel) and isinstance(loaded, Functional)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="HalfLossModel"):
        keras.models.load_model(str(tmp_path / "m.keras"))
