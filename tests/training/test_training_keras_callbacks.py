"""Keras callbacks in train.py's runner: the hooks it calls with which logs, stop_training,
and the runner's own callbacks as Keras callbacks (one EarlyStopping rule for both)."""
import numpy as np

import minitf as tf
from minitf import keras
from datasets import BatchIterator
from minitf.training import callbacks as cb
from minitf.training.builders import Normalizer
from minitf.training.runner import Runner
from models import build_model


def _runner(callbacks, epochs=3):
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (80, 6, 6), dtype=np.uint8)
    y = (x[:, :3].mean(axis=(1, 2)) > x[:, 3:].mean(axis=(1, 2))).astype(np.uint8)
    model = build_model("mlp", hidden_units=[8], num_classes=2)
    model(tf.zeros((1, 6, 6)), training=False)
    norm = Normalizer("scale", x)
    train_it = BatchIterator(x[:64], y[:64], 16, seed=3, normalize=norm)  # 4 steps per epoch
    eval_it = BatchIterator(x[64:], y[64:], 16, shuffle=False, normalize=norm)
    return Runner(model, keras.optimizers.SGD(0.1),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True), train_it,
                  eval_it, epochs=epochs, callbacks=callbacks, use_function=False)


class Recorder(keras.callbacks.Callback):
    def __init__(self, stop_at=None):
        self.calls, self.stop_at = [], stop_at

    def on_train_begin(self, logs=None):
        self.calls.append(("train_begin", self.params["epochs"], self.params["steps"]))

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(("epoch_begin", epoch))

    def on_train_batch_end(self, batch, logs=None):
        self.calls.append(("batch_end", batch, logs["step"]))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, sorted(logs)))
        if epoch == self.stop_at:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        self.calls.append(("train_end", logs["epoch"]))


def test_runner_calls_the_keras_hooks_and_honours_stop_training():
    rec = Recorder(stop_at=1)
    runner = _runner([rec])
    runner.train()
    keys = sorted(["epoch", "step", "loss", "accuracy", "val_loss", "val_accuracy",
                   "epoch_time", "samples_per_sec"])
    expected = [("train_begin", 3, 4)]
    for epoch in range(2):
        expected.append(("epoch_begin", epoch))
        expected += [("batch_end", b, epoch * 4 + b + 1) for b in range(4)]
        expected.append(("epoch_end", epoch, keys))
    expected.append(("train_end", 2))
    assert rec.calls == expected
    assert runner.epoch == 2 and runner.stop_reason == "a callback set model.stop_training"
    assert runner.model.stop_training is False


def test_runner_callbacks_are_keras_callbacks_with_the_keras_rule():
    es = cb.EarlyStopping("val_loss", patience=1, min_delta=0.5)
    assert isinstance(es, keras.callbacks.EarlyStopping)
    assert isinstance(cb.NaNGuard(), keras.callbacks.Callback)
    runner = _runner([es], epochs=5)
    runner.train()
    # no epoch improves val_loss by 0.5: epoch 1 sets the best, epoch 2 stops (patience 1)
    assert runner.epoch == 2 and es.best_epoch == 0
    assert runner.stop_reason.startswith("early stopping: val_loss did not improve for 1 epochs")
    assert es.best == runner.history[0]["val_loss"]
