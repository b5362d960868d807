"""fit/evaluate/predict arguments as Keras 3 defines them: sample_weight, class_weight,
validation_split/data/steps/freq, steps_per_epoch, initial_epoch, shuffle, verbose,
return_dict, predict(batch_size), add_loss terms, Dataset inputs; checked against numpy."""
import contextlib
import io

import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import ops


def _data(n=12, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype("float32")
    y = (x @ np.array([[1.0], [-1.0], [0.5]], "float32") + 0.1).astype("float32")
    return x, y


def _linear(lr=0.1, loss="mse", metrics=None, seed=0, units=1):
    tf.random.set_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(units)])
    model.compile(keras.optimizers.SGD(lr), loss, metrics=metrics)
    return model


def _weighted_mse_step(w, b, x, y, sw, lr):
    """One SGD step on Keras' weighted loss sum(sw * per-sample mse) / batch size (float64)."""
    w, b = w.astype(np.float64), b.astype(np.float64)
    err = x @ w + b - y                                  # (n, 1)
    n = len(x)
    loss = float(np.sum(sw * np.mean(err ** 2, axis=1)) / n)
    g_err = 2.0 * err * sw[:, None] / n
    return loss, w - lr * x.T @ g_err, b - lr * g_err.sum(axis=0)


def test_sample_weight_weights_the_loss_and_the_gradient():
    x, y = _data()
    sw = np.linspace(0.0, 2.0, len(x)).astype("float32")
    model = _linear(lr=0.1)
    w0, b0 = model.get_weights()
    h = model.fit(x, y, sample_weight=sw, batch_size=len(x), epochs=1, verbose=0)
    loss, w1, b1 = _weighted_mse_step(w0, b0, x, y, sw, 0.1)
    assert h.history["loss"][0] == pytest.approx(loss, rel=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], w1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.get_weights()[1], b1, rtol=1e-5, atol=1e-6)
    # evaluate weighs the same way
    w, b = model.get_weights()
    per_sample = np.mean((x @ w + b - y) ** 2, axis=1)
    assert model.evaluate(x, y, sample_weight=sw, verbose=0) == pytest.approx(
        float(np.sum(sw * per_sample) / len(x)), rel=1e-5)


def test_class_weight_matches_a_hand_weighted_loss():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((9, 3)).astype("float32")
    labels = np.array([0, 1, 2, 0, 1, 2, 0, 0, 1])
    cw = {0: 1.0, 1: 3.0, 2: 0.5}
    tf.random.set_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(3)])
    model.compile(keras.optimizers.SGD(0.0),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    h = model.fit(x, labels, class_weight=cw, batch_size=9, epochs=1, verbose=0)
    w, b = [v.astype(np.float64) for v in model.get_weights()]
    logits = x @ w + b
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    nll = -logp[np.arange(9), labels]
    weights = np.array([cw[c] for c in labels])
    assert h.history["loss"][0] == pytest.approx(float(np.sum(weights * nll) / 9), rel=1e-5)
    # one-hot labels pick the class by argmax
    model.compile(keras.optimizers.SGD(0.0),
                  keras.losses.CategoricalCrossentropy(from_logits=True))
    h = model.fit(x, np.eye(3, dtype="float32")[labels], class_weight=cw, batch_size=9,
                  epochs=1, verbose=0)
    assert h.history["loss"][0] == pytest.approx(float(np.sum(weights * nll) / 9), rel=1e-5)
    with pytest.raises(ValueError, match="keys 0..2"):
        model.fit(x, labels, class_weight={0: 1.0, 2: 1.0}, verbose=0)
    with pytest.raises(ValueError, match="not both"):
        model.fit(x, labels, class_weight=cw, sample_weight=np.ones(9), verbose=0)


def test_validation_split_holds_out_the_last_samples():
    x, y = _data(20)
    model = _linear(lr=0.05)
    h = model.fit(x, y, validation_split=0.25, epochs=2, batch_size=5, shuffle=False,
                  verbose=0)
    # floor(20 * 0.75) = 15 training samples: 3 steps per epoch, 2 epochs
    assert int(model.optimizer.iterations.numpy()) == 6
    assert h.history["val_loss"][-1] == pytest.approx(
        model.evaluate(x[15:], y[15:], verbose=0), rel=1e-6)
    with pytest.raises(ValueError, match="validation_split"):
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(4), validation_split=0.2,
                  verbose=0)


def test_validation_data_with_sample_weights_steps_and_freq():
    x, y = _data(12)
    model = _linear(lr=0.0)
    sw = np.array([1.0] * 6 + [0.0] * 6, "float32")
    h = model.fit(x, y, epochs=4, verbose=0, validation_data=(x, y, sw), validation_freq=2)
    assert len(h.history["val_loss"]) == 2 and len(h.history["loss"]) == 4
    w, b = model.get_weights()
    per_sample = np.mean((x @ w + b - y) ** 2, axis=1)
    assert h.history["val_loss"][0] == pytest.approx(float(np.sum(per_sample[:6]) / 12), rel=1e-5)
    # validation_steps cuts an endless validation dataset
    ds = tf.data.Dataset.from_tensor_slices((x[:4], y[:4])).batch(2).repeat()
    h = model.fit(x, y, epochs=1, verbose=0, validation_data=ds, validation_steps=3)
    assert h.history["val_loss"][0] == pytest.approx(
        float(np.mean(np.concatenate([per_sample[:2], per_sample[2:4], per_sample[:2]]))),
        rel=1e-5)


def test_steps_per_epoch_continues_across_epochs_and_wraps():
    x, y = _data(10)
    seen = []

    class Recording(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, inputs):
            return self.dense(inputs)

        def train_step(self, data):
            seen.append(float(data[0][0, 0]))
            return super().train_step(data)

    model = Recording()
    model.compile(keras.optimizers.SGD(0.0), "mse", run_eagerly=True)
    model.fit(x, y, batch_size=4, steps_per_epoch=2, epochs=3, shuffle=False, verbose=0)
    # 3 batches per pass (rows 0, 4, 8); 6 steps: two passes
    assert seen == [x[i, 0] for i in (0, 4, 8, 0, 4, 8)]
    seen.clear()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(5)
    model.fit(ds, steps_per_epoch=3, epochs=1, verbose=0)
    assert seen == [x[i, 0] for i in (0, 5, 0)]

    def two_batches():
        yield x[:4], y[:4]
        yield x[4:8], y[4:8]

    seen.clear()
    with pytest.warns(UserWarning, match="ran out of data"):
        h = model.fit(two_batches(), steps_per_epoch=3, epochs=2, verbose=0)
    assert len(seen) == 2 and len(h.history["loss"]) == 1


def test_shuffle_permutes_each_epoch_reproducibly():
    x, y = _data(8)
    x[:, 0] = np.arange(8)

    def first_rows(shuffle, seed=0):
        rows = []

        class Rec(keras.Model):
            def __init__(self):
                super().__init__()
                self.dense = keras.layers.Dense(1)

            def call(self, inputs):
                return self.dense(inputs)

            def train_step(self, data):
                rows.extend(int(v) for v in data[0].numpy()[:, 0])
                return super().train_step(data)

        model = Rec()
        model.compile(keras.optimizers.SGD(0.0), "mse", run_eagerly=True)
        tf.random.set_seed(seed)
        model.fit(x, y, batch_size=4, epochs=2, shuffle=shuffle, verbose=0)
        return rows

    assert first_rows(False) == list(range(8)) * 2
    shuffled = first_rows(True)
    assert sorted(shuffled[:8]) == list(range(8)) and sorted(shuffled[8:]) == list(range(8))
    assert shuffled[:8] != shuffled[8:] and shuffled != list(range(8)) * 2
    assert first_rows(True) == shuffled


def test_initial_epoch_and_verbose():
    x, y = _data()
    model = _linear()
    h = model.fit(x, y, epochs=4, initial_epoch=2, verbose=0)
    assert h.epoch == [2, 3]
    for verbose, lines in ((0, 0), (2, 3)):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            model.fit(x, y, epochs=3, verbose=verbose)
        out = buf.getvalue().strip().splitlines()
        assert len(out) == lines
    assert out[0].startswith("Epoch 1/3")


def test_evaluate_return_dict_and_order_and_predict_batches():
    x, y = _data(10)
    model = _linear(metrics=["mae"])
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    w, b = model.get_weights()
    pred = x @ w + b
    assert list(logs) == ["loss", "mae"] == model.metrics_names
    assert logs["loss"] == pytest.approx(float(np.mean((pred - y) ** 2)), rel=1e-5)
    assert logs["mae"] == pytest.approx(float(np.mean(np.abs(pred - y))), rel=1e-5)
    assert model.evaluate(x, y, verbose=0) == pytest.approx([logs["loss"], logs["mae"]])
    batches = []
    out = model.predict(x, batch_size=3, verbose=0, callbacks=[keras.callbacks.LambdaCallback(
        on_predict_batch_end=lambda b, logs: batches.append(logs["outputs"].shape[0]))])
    assert batches == [3, 3, 3, 1]
    np.testing.assert_allclose(out, pred, rtol=1e-5, atol=1e-6)
    ds_out = model.predict(tf.data.Dataset.from_tensor_slices((x, y)).batch(4), verbose=0)
    np.testing.assert_allclose(ds_out, pred, rtol=1e-5, atol=1e-6)


def test_add_loss_terms_are_part_of_the_fit_loss():
    class WithPenalty(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, inputs):
            self.add_loss(0.25)
            return self.dense(inputs)

    x, y = _data()
    model = WithPenalty()
    model.compile(keras.optimizers.SGD(0.0), "mse")
    h = model.fit(x, y, batch_size=len(x), epochs=1, verbose=0)
    w, b = model.get_weights()
    assert h.history["loss"][0] == pytest.approx(
        float(np.mean((x @ w + b - y) ** 2)) + 0.25, rel=1e-5)


def test_an_added_loss_tensor_is_summed_as_in_keras_3():
    """add_loss of a per-example (batch, 1) tensor (the keras.io OCR example's CTC layer):
    Keras 3 adds its sum."""
    class PerExample(keras.layers.Layer):
        def call(self, inputs, targets):
            self.add_loss(ops.square(inputs - targets))      # shape (batch, 1)
            return inputs

    x, y = _data()
    inp, target = keras.Input((x.shape[1],)), keras.Input((1,))
    model = keras.Model([inp, target], PerExample()(keras.layers.Dense(1)(inp), target))
    model.compile(keras.optimizers.SGD(0.0))
    h = model.fit([x, y], batch_size=len(x), epochs=1, verbose=0)
    w, b = model.get_weights()
    assert h.history["loss"][0] == pytest.approx(float(np.sum((x @ w + b - y) ** 2)),
                                                 rel=1e-5)


def test_fit_on_datasets_of_pairs_and_triples():
    x, y = _data(12)
    sw = np.linspace(0.5, 1.5, 12).astype("float32")
    m1, m2 = _linear(lr=0.1), _linear(lr=0.1)
    m1.fit(x, y, sample_weight=sw, batch_size=4, epochs=2, shuffle=False, verbose=0)
    m2.fit(tf.data.Dataset.from_tensor_slices((x, y, sw)).batch(4), epochs=2, verbose=0)
    for a, b in zip(m1.get_weights(), m2.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    forever = tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat()
    with pytest.raises(ValueError, match="steps_per_epoch"):
        m2.fit(forever, verbose=0)
    with pytest.raises(ValueError, match="validation_steps"):
        m2.fit(x, y, validation_data=forever, verbose=0)
    with pytest.raises(ValueError, match="inside the dataset"):
        m2.fit(tf.data.Dataset.from_tensor_slices(x).batch(4), y, verbose=0)


def test_train_and_test_on_batch_with_weights():
    x, y = _data(6)
    sw = np.array([0, 1, 2, 0, 1, 2], "float32")
    model = _linear(lr=0.1)
    w0, b0 = model.get_weights()
    loss = model.train_on_batch(x, y, sample_weight=sw)
    ref, w1, _ = _weighted_mse_step(w0, b0, x, y, sw, 0.1)
    assert loss == pytest.approx(ref, rel=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], w1, rtol=1e-5, atol=1e-6)
    w, b = model.get_weights()
    assert model.test_on_batch(x, y, sample_weight=sw) == pytest.approx(
        float(np.sum(sw * np.mean((x @ w + b - y) ** 2, axis=1)) / 6), rel=1e-5)


def test_several_outputs_with_loss_weights_and_per_output_metrics():
    tf.random.set_seed(0)
    inputs = keras.Input((4,), name="features")
    hidden = keras.layers.Dense(8, activation="relu")(inputs)
    priority = keras.layers.Dense(1, name="priority")(hidden)
    department = keras.layers.Dense(3, name="department")(hidden)
    model = keras.Model(inputs, [priority, department])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4)).astype("float32")
    y_priority = (rng.random((16, 1)) > 0.5).astype("float32")
    y_department = np.eye(3, dtype="float32")[np.arange(16) % 3]
    p, d = (o.numpy().astype(np.float64) for o in model(x))
    bce = np.mean(np.maximum(p, 0) - p * y_priority + np.log1p(np.exp(-np.abs(p))))
    logp = d - np.log(np.exp(d).sum(axis=1, keepdims=True))
    cce = -np.mean(np.sum(y_department * logp, axis=1))
    acc = np.mean(np.argmax(d, 1) == np.argmax(y_department, 1))
    bce_loss = keras.losses.BinaryCrossentropy(from_logits=True)
    cce_loss = keras.losses.CategoricalCrossentropy(from_logits=True)
    # by name (dicts) and by position (lists), as the functional API guide compiles it
    model.compile(keras.optimizers.SGD(0.0),
                  loss={"priority": bce_loss, "department": cce_loss},
                  loss_weights={"priority": 1.0, "department": 0.2},
                  metrics={"department": ["accuracy"]})
    h = model.fit(x, {"priority": y_priority, "department": y_department}, batch_size=16,
                  epochs=1, verbose=0)
    assert h.history["loss"][0] == pytest.approx(bce + 0.2 * cce, rel=1e-5)
    assert h.history["department_accuracy"][0] == pytest.approx(acc)
    # each output's own loss, unweighted
    assert h.history["priority_loss"][0] == pytest.approx(bce, rel=1e-5)
    assert h.history["department_loss"][0] == pytest.approx(cce, rel=1e-5)
    model.compile(keras.optimizers.SGD(0.0), loss=[bce_loss, cce_loss], loss_weights=[1.0, 0.2],
                  metrics=[[], ["accuracy"]])
    logs = model.evaluate(x, [y_priority, y_department], verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(bce + 0.2 * cce, rel=1e-5)
    assert logs["department_accuracy"] == pytest.approx(acc)
    model.compile(keras.optimizers.SGD(0.0), loss=[bce_loss, cce_loss],
                  metrics=["mae", "accuracy"])
    logs = model.evaluate(x, [y_priority, y_department], verbose=0, return_dict=True)
    assert logs["department_accuracy"] == pytest.approx(acc)
    assert logs["priority_mae"] == pytest.approx(float(np.mean(np.abs(p - y_priority))),
                                                 rel=1e-5)
    # a flat list that is not one entry per output applies to every output (tf.keras 2)
    model.compile(keras.optimizers.SGD(0.0), loss=[bce_loss, cce_loss],
                  metrics=["accuracy", keras.metrics.MeanAbsoluteError(name="mae"), "mse"])
    logs = model.evaluate(x, [y_priority, y_department], verbose=0, return_dict=True)
    assert logs["department_accuracy"] == pytest.approx(acc)
    assert logs["priority_accuracy"] == pytest.approx(
        float(np.mean((p > 0.5) == (y_priority > 0.5))))
    assert logs["priority_mae"] == pytest.approx(float(np.mean(np.abs(p - y_priority))),
                                                 rel=1e-5)
    assert logs["department_mae"] == pytest.approx(float(np.mean(np.abs(d - y_department))),
                                                   rel=1e-5)
    assert logs["department_mse"] == pytest.approx(float(np.mean((d - y_department) ** 2)),
                                                   rel=1e-5)

    class Needy(keras.metrics.Mean):   # a metric its config cannot rebuild
        def __init__(self, scale):
            super().__init__(name="needy")
            self.scale = scale

    with pytest.raises(ValueError, match="cannot be copied from its config"):
        model.compile("sgd", loss=[bce_loss, cce_loss], metrics=[Needy(2.0)])


def test_steps_receive_x_alone_without_targets():
    """fit(x) (no y), as the VAE example calls it: train_step gets x itself, as in Keras 3."""
    received = []

    class AutoEncoder(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(3)

        def call(self, inputs):
            return self.dense(inputs)

        def train_step(self, data):
            received.append(type(data))
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self(data, training=True) - data))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}

    x, _ = _data(8)
    model = AutoEncoder()
    model.compile(keras.optimizers.SGD(0.0), run_eagerly=True)
    h = model.fit(x, batch_size=8, epochs=1, verbose=0)
    model.fit(tf.data.Dataset.from_tensor_slices(x).batch(8), epochs=1, verbose=0)
    assert received == [tf.Tensor, tf.Tensor]
    w, b = model.get_weights()
    assert h.history["loss"][0] == pytest.approx(float(np.mean((x @ w + b - x) ** 2)),
                                                 rel=1e-5)


def test_function_metrics_take_sample_weights_in_custom_steps():
    x, y = _data(8)
    sw = np.array([0, 1, 2, 3, 0, 1, 2, 3], "float32")[:, None]

    class Weighted(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, inputs):
            return self.dense(inputs)

        def test_step(self, data):
            x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
            y_pred = self(x, training=False)
            for metric in self.metrics:
                if metric.name != "loss":
                    metric.update_state(y, y_pred, sample_weight=sample_weight)
            return {m.name: m.result() for m in self.metrics if m.name != "loss"}

    model = Weighted()
    model.compile("sgd", "mse", metrics=["mae"])
    logs = model.evaluate(x, y, sample_weight=sw, verbose=0, return_dict=True)
    w, b = model.get_weights()
    err = np.abs(x @ w + b - y)[:, 0]
    assert logs["mae"] == pytest.approx(float(np.sum(err * sw[:, 0]) / sw.sum()), rel=1e-5)
    tf.random.set_seed(0)
    binary = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, activation="sigmoid")])
    binary.compile("sgd", keras.losses.binary_crossentropy, metrics=["accuracy"])
    labels = (y > 0).astype("float32")
    logs = binary.evaluate(x, labels, verbose=0, return_dict=True)
    p = binary.predict(x, verbose=0)
    assert logs["accuracy"] == pytest.approx(float(np.mean((p > 0.5) == (labels > 0.5))))


def test_weighted_metrics_see_the_sample_weights():
    x, y = _data(10)
    sw = np.linspace(0.0, 1.0, 10).astype("float32")
    model = _linear(lr=0.0, metrics=["mae"])
    model.compile(keras.optimizers.SGD(0.0), "mse", metrics=["mae"], weighted_metrics=["mae"])
    h = model.fit(x, y, sample_weight=sw, batch_size=10, epochs=1, verbose=0)
    w, b = model.get_weights()
    err = np.abs(x @ w + b - y)[:, 0]
    assert h.history["mae"][0] == pytest.approx(float(np.mean(err)), rel=1e-5)
    assert h.history["weighted_mae"][0] == pytest.approx(float(np.sum(err * sw) / sw.sum()),
                                                         rel=1e-5)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)  # no weights: both agree
    assert logs["weighted_mae"] == pytest.approx(logs["mae"], rel=1e-6)


def test_a_compiled_model_inside_another_keeps_its_trackers_out():
    # Keras 3: a nested model's own loss tracker is not one of the outer model's metrics, so
    # the outer loss is reported (a GAN's compiled discriminator, a distillation teacher)
    inner = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    inner.compile(optimizer="sgd", loss="mse")
    outer = keras.Sequential([keras.Input((3,)), inner, keras.layers.Dense(1)])
    outer.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(0).normal(size=(6, 3)).astype("float32")
    y = np.ones((6, 1), "float32")
    assert [m.name for m in outer.metrics] == ["loss"]
    expected = float(np.mean((outer.predict(x, verbose=0).astype(np.float64) - 1.0) ** 2))
    assert outer.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-5)


def test_compute_loss_override_without_training_argument_serves_evaluate():
    class Weighted(keras.Model):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                         allow_empty=False):
            return 2.0 * tf.reduce_mean(tf.square(y_pred - y))

    inputs = keras.Input((2,))
    model = Weighted(inputs, keras.layers.Dense(1, kernel_initializer="ones")(inputs))
    model.compile(optimizer="sgd")
    x = np.array([[1.0, 2.0], [0.5, -1.0]], "float32")
    y = np.zeros((2, 1), "float32")
    assert model.evaluate(x, y, verbose=0) == pytest.approx(2.0 * (9.0 + 0.25) / 2, rel=1e-6)


def test_one_callback_not_in_a_list():
    # Keras accepts `callbacks=<a Callback>` (TF's "Simple audio recognition" tutorial passes
    # EarlyStopping so); the run is the same as with a list.
    x, y = _data()
    seen = []

    class Record(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append((epoch, round(logs["loss"], 6)))

    runs = []
    for callbacks in (Record(), [Record()]):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        seen.clear()
        model.fit(x, y, epochs=3, verbose=0, callbacks=callbacks)
        runs.append(list(seen))
    assert len(runs[0]) == 3 and runs[0] == runs[1]
