"""Port of the keras.io guide "Writing your own callbacks"
(https://keras.io/guides/writing_your_own_callbacks/, keras-team/keras-io
guides/writing_your_own_callbacks.py): the guide's CustomCallback, LossAndErrorPrintingCallback,
EarlyStoppingAtMinLoss and CustomLearningRateScheduler on the guide's model (Dense(1) on 784
inputs, RMSprop(0.1), mean squared error), with Fashion-MNIST (shipped with the repository) in
place of MNIST. The learning rate is read and set through ``optimizer.learning_rate`` (Keras 3)
and, as the 2020 text does, through ``keras.backend.get_value``/``set_value`` on
``optimizer.lr``."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def mnist_like():
    (x_train, y_train), (x_test, y_test) = datasets.load("fashion_mnist")
    x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
    x_test = x_test.reshape(-1, 784).astype("float32") / 255.0
    return (x_train[:1000], y_train[:1000]), (x_test[:1000], y_test[:1000])


def get_model():
    model = keras.Sequential()
    model.add(keras.layers.Dense(1, input_dim=784))
    model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=0.1),
                  loss="mean_squared_error", metrics=["mean_absolute_error"])
    return model


class CustomCallback(keras.callbacks.Callback):
    """Records every hook with the keys of its logs (the guide prints them)."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def _log(self, what, logs, *index):
        self.lines.append((what,) + index + (list(logs.keys()),))


for _hook in ("on_train_begin", "on_train_end", "on_test_begin", "on_test_end",
              "on_predict_begin", "on_predict_end"):
    setattr(CustomCallback, _hook, lambda self, logs=None, h=_hook: self._log(h, logs))
for _hook in ("on_epoch_begin", "on_epoch_end", "on_train_batch_begin", "on_train_batch_end",
              "on_test_batch_begin", "on_test_batch_end", "on_predict_batch_begin",
              "on_predict_batch_end"):
    setattr(CustomCallback, _hook, lambda self, i, logs=None, h=_hook: self._log(h, logs, i))


def test_a_basic_example_logs_every_hook_with_its_keys(mnist_like):
    (x_train, y_train), (x_test, y_test) = mnist_like
    tf.random.set_seed(0)
    model = get_model()
    cb = CustomCallback()
    model.fit(x_train, y_train, batch_size=128, epochs=1, verbose=0, validation_split=0.5,
              callbacks=[cb])
    metrics = ["loss", "mean_absolute_error"]
    val = ["val_loss", "val_mean_absolute_error"]
    # 500 training samples: 4 batches of 128; 500 validation samples: 4 test batches
    expected = [("on_train_begin", []), ("on_epoch_begin", 0, [])]
    for b in range(4):
        expected += [("on_train_batch_begin", b, []), ("on_train_batch_end", b, metrics)]
    expected += [("on_test_begin", [])]
    for b in range(4):
        expected += [("on_test_batch_begin", b, []), ("on_test_batch_end", b, metrics)]
    expected += [("on_test_end", metrics), ("on_epoch_end", 0, metrics + val),
                 ("on_train_end", metrics + val)]
    assert cb.lines == expected
    cb = CustomCallback()
    model.evaluate(x_test, y_test, batch_size=128, verbose=0, callbacks=[cb])
    assert len([line for line in cb.lines if line[0] == "on_test_batch_end"]) == 8
    cb = CustomCallback()
    model.predict(x_test, batch_size=128, callbacks=[cb])
    assert cb.lines[-2] == ("on_predict_batch_end", 7, ["outputs"])
    assert cb.lines[0] == ("on_predict_begin", []) and cb.lines[-1] == ("on_predict_end", [])


class LossAndErrorPrintingCallback(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.batch_losses, self.test_losses, self.epochs = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.batch_losses.append(logs["loss"])

    def on_test_batch_end(self, batch, logs=None):
        self.test_losses.append(logs["loss"])

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append((logs["loss"], logs["mean_absolute_error"]))


def test_usage_of_the_logs_dict(mnist_like):
    (x_train, y_train), (x_test, y_test) = mnist_like
    tf.random.set_seed(1)
    model = get_model()
    cb = LossAndErrorPrintingCallback()
    model.fit(x_train, y_train, batch_size=128, epochs=2, verbose=0, callbacks=[cb])
    # 8 batches per epoch; batch logs hold the running mean, so the epoch's value is the last
    assert len(cb.batch_losses) == 16
    assert cb.epochs[0][0] == pytest.approx(cb.batch_losses[7], rel=1e-6)
    assert cb.epochs[1][0] == pytest.approx(cb.batch_losses[15], rel=1e-6)
    test_cb = LossAndErrorPrintingCallback()
    res = model.evaluate(x_test, y_test, batch_size=128, verbose=0, callbacks=[test_cb])
    w, b = (v.astype(np.float64) for v in model.get_weights())
    err = x_test @ w + b - y_test[:, None]
    assert res[0] == pytest.approx(float(np.mean(err ** 2)), rel=1e-4)
    assert res[1] == pytest.approx(float(np.mean(np.abs(err))), rel=1e-4)
    assert test_cb.test_losses[-1] == pytest.approx(res[0], rel=1e-6)


class EarlyStoppingAtMinLoss(keras.callbacks.Callback):
    """Stop training when the loss is at its min, i.e. the loss stops decreasing."""

    def __init__(self, patience=0):
        super().__init__()
        self.patience = patience
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf

    def on_epoch_end(self, epoch, logs=None):
        current = logs.get("loss")
        if np.less(current, self.best):
            self.best = current
            self.wait = 0
            self.best_weights = self.model.get_weights()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.model.stop_training = True
                self.model.set_weights(self.best_weights)


def test_early_stopping_at_min_loss(mnist_like):
    (x_train, y_train), _ = mnist_like
    tf.random.set_seed(2)
    model = get_model()
    snapshots = []
    stopper = EarlyStoppingAtMinLoss()
    h = model.fit(x_train, y_train, batch_size=64, steps_per_epoch=5, epochs=30, verbose=0,
                  callbacks=[keras.callbacks.LambdaCallback(
                      on_epoch_end=lambda e, logs: snapshots.append(model.get_weights())),
                      LossAndErrorPrintingCallback(), stopper])
    losses = h.history["loss"]
    # it stops at the first epoch whose loss is not below the best so far
    first_worse = next(i for i in range(1, len(losses)) if losses[i] >= min(losses[:i]))
    assert stopper.stopped_epoch == first_worse == len(losses) - 1
    best = int(np.argmin(losses))
    for got, want in zip(model.get_weights(), snapshots[best]):
        np.testing.assert_array_equal(got, want)
    # steps_per_epoch=5 continues through the 16 batches of a pass across epochs
    assert int(model.optimizer.iterations.numpy()) == 5 * len(losses)


class CustomLearningRateScheduler(keras.callbacks.Callback):
    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule

    def on_epoch_begin(self, epoch, logs=None):
        if not hasattr(self.model.optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        lr = float(np.array(self.model.optimizer.learning_rate))
        scheduled_lr = self.schedule(epoch, lr)
        self.model.optimizer.learning_rate = scheduled_lr


LR_SCHEDULE = [(3, 0.05), (6, 0.01), (9, 0.005), (12, 0.001)]


def lr_schedule(epoch, lr):
    if epoch < LR_SCHEDULE[0][0] or epoch > LR_SCHEDULE[-1][0]:
        return lr
    for i in range(len(LR_SCHEDULE)):
        if epoch == LR_SCHEDULE[i][0]:
            return LR_SCHEDULE[i][1]
    return lr


def test_learning_rate_scheduling(mnist_like):
    (x_train, y_train), _ = mnist_like
    tf.random.set_seed(3)
    model = get_model()
    rates = []
    model.fit(x_train, y_train, batch_size=64, steps_per_epoch=5, epochs=15, verbose=0,
              callbacks=[LossAndErrorPrintingCallback(), CustomLearningRateScheduler(lr_schedule),
                         keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: rates.append(
                             float(model.optimizer.learning_rate)))])
    expected = [0.1] * 3 + [0.05] * 3 + [0.01] * 3 + [0.005] * 3 + [0.001] * 3
    assert rates == pytest.approx(expected, rel=1e-6)


class BackendLearningRateScheduler(CustomLearningRateScheduler):
    """The 2020 text's version: ``tf.keras.backend.get_value``/``set_value`` on ``lr``."""

    def on_epoch_begin(self, epoch, logs=None):
        if not hasattr(self.model.optimizer, "lr"):
            raise ValueError('Optimizer must have a "lr" attribute.')
        lr = float(tf.keras.backend.get_value(self.model.optimizer.learning_rate))
        scheduled_lr = self.schedule(epoch, lr)
        tf.keras.backend.set_value(self.model.optimizer.lr, scheduled_lr)


def test_learning_rate_scheduling_through_the_backend_functions(mnist_like):
    (x_train, y_train), _ = mnist_like
    model = get_model()
    rates = []
    model.fit(x_train, y_train, batch_size=64, steps_per_epoch=2, epochs=7, verbose=0,
              callbacks=[BackendLearningRateScheduler(lr_schedule),
                         keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: rates.append(
                             float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))))])
    assert rates == pytest.approx([0.1] * 3 + [0.05] * 3 + [0.01], rel=1e-6)
    with pytest.raises(TypeError, match="set_value"):
        tf.keras.backend.set_value(0.1, 0.2)
