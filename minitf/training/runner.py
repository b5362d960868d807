"""The training runner: a custom GradientTape loop with evaluation, callbacks and exact resume.

One training step (``Runner.train_step``) is what a TF 2 user writes by hand::

    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
        scaled = optimizer.get_scaled_loss(loss)          # mixed_float16 only
    grads = tape.gradient(scaled, model.trainable_variables)
    grads = optimizer.get_unscaled_gradients(grads)       # mixed_float16 only
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

Gradient accumulation, clipping and parameter groups live in the optimizer; the runner counts
``step`` = batches trained. Around the step it runs callbacks at step and epoch events (see
``callbacks``), evaluates after each epoch, and saves/restores everything a bit-identical resume
needs: model variables, optimizer state (its accumulators included, so a run may stop inside an
accumulation window), loss scale, the global RNG, the data iterator's position, the running
metrics of the epoch, callback states and the history.

    runner = Runner(model, optimizer, loss_fn, train_iter, eval_iter, epochs=10)
    runner.train()
"""
import sys
import time

import numpy as np

import minitf as tf
from minitf import keras
from minitf.ops import random_ops

from .callbacks import NonFiniteLossError, StepLogs
from .checkpoint import CheckpointError, save_checkpoint

__all__ = ["Runner", "current_learning_rate", "make_eval_step", "evaluate"]


def current_learning_rate(optimizer):
    """The learning rate the optimizer uses for its next update, as a Python float."""
    opt = getattr(optimizer, "inner_optimizer", optimizer)
    lr = opt.learning_rate
    if callable(lr) and not isinstance(lr, tf.Tensor):  # a schedule object
        lr = lr(opt.iterations)
    return float(lr)


def _metric_arrays(metric):
    return [np.array(v.numpy()) for v in metric.variables]


def _set_metric_arrays(metric, arrays):
    variables = list(metric.variables)
    if len(variables) != len(arrays):
        raise ValueError(f"metric {metric.name!r} has {len(variables)} variables, the "
                         f"checkpoint {len(arrays)}")
    for var, value in zip(variables, arrays):
        var.assign(value)


def make_eval_step(model, loss_fn, use_function=True):
    """``eval_step(x, y) -> (sum of the losses, number of correct predictions)`` of a batch."""
    def eval_step(x, y):
        logits = tf.cast(model(x, training=False), tf.float32)
        loss = loss_fn(y, logits) * float(y.shape[0])
        predicted = tf.cast(tf.argmax(logits, axis=-1), y.dtype)
        return loss, tf.reduce_sum(tf.cast(tf.equal(predicted, y), tf.float32))

    return tf.function(eval_step) if use_function and hasattr(tf, "function") else eval_step


def evaluate(eval_step, iterator):
    """``{"loss", "accuracy"}`` over one epoch of a BatchIterator (``make_eval_step``'s step)."""
    total, correct, count = 0.0, 0.0, 0
    for xb, yb in iterator.epoch_batches():
        loss, right = eval_step(tf.constant(xb), tf.constant(yb.astype(np.int32)))
        total += float(loss)
        correct += float(right)
        count += len(yb)
    reduce_sums = getattr(iterator, "reduce_sums", None)
    if reduce_sums is not None:  # one rank's shard of a data-parallel evaluation
        total, correct, count = reduce_sums(total, correct, count)
    return {"loss": total / count, "accuracy": correct / count}


def _rng_state():
    """The global generator's state (for dropout); the cupy generator's cannot be saved."""
    try:
        return {"minitf": random_ops.get_state()}
    except NotImplementedError:
        return {"unavailable": f"the {tf.get_backend()} random generator state was not saved: "
                               "dropout after this resume differs from an uninterrupted run"}


def _hook(cb, name, *args):
    fn = getattr(cb, name, None)
    if fn is not None:
        fn(*args)


def _callback_name(cb):
    return getattr(cb, "name", None) if isinstance(getattr(cb, "name", None), str) \
        else type(cb).__name__


class Runner:
    """Trains ``model`` on ``train_iter`` (a ``datasets.BatchIterator``) for ``epochs`` epochs.

    Args:
        model: a ``keras.Model`` returning logits.
        optimizer: a keras optimizer, or a ``LossScaleOptimizer`` with ``mixed_precision``.
        loss_fn: ``loss_fn(y_true, logits)`` -> scalar loss.
        train_iter: endless BatchIterator of (x, y) numpy batches.
        eval_iter: BatchIterator (no shuffle) over the evaluation split, or None.
        epochs: number of epochs; ``max_steps``: optional cap on the total step count.
        mixed_precision: scale the loss / unscale gradients (optimizer is a LossScaleOptimizer).
        use_function: trace the step with ``minitf.function`` when minitf has it.
        callbacks: ``training.callbacks.Callback`` objects (run in decreasing priority) and
            any ``keras.callbacks.Callback`` (priority 0; Keras hooks only).
        config_text, run_dir: recorded in checkpoints.
    """

    def __init__(self, model, optimizer, loss_fn, train_iter, eval_iter=None, *, epochs,
                 max_steps=None, mixed_precision=False, use_function=True, callbacks=(),
                 config_text="", run_dir=""):
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.train_iter, self.eval_iter = train_iter, eval_iter
        self.epochs, self.max_steps = epochs, max_steps
        self.mixed_precision = mixed_precision
        self.callbacks = sorted(callbacks, key=lambda cb: -getattr(cb, "priority", 0))
        names = [_callback_name(cb) for cb in self.callbacks]
        if len(set(names)) != len(names):
            raise ValueError(f"callback names must be unique, got {names}")
        self.config_text, self.run_dir = config_text, run_dir
        self.train_loss = keras.metrics.Mean(name="loss")
        self.train_accuracy = keras.metrics.SparseCategoricalAccuracy(name="accuracy")
        self.step = 0
        self.epoch_end_pending = False  # the last step ended an epoch not yet evaluated
        self.early_stopped = False
        self.stop_reason = None
        self.epoch_seconds, self.epoch_samples = 0.0, 0
        self.history = []
        # Data-parallel runs: ``(loss, y, logits) -> the same for the global batch``, for the
        # training metrics (see minitf.distributed.data_parallel).
        self.metric_inputs = None
        wrap = tf.function if use_function and hasattr(tf, "function") else (lambda f: f)
        self._train_step = wrap(self.train_step)
        self._eval_step = make_eval_step(model, loss_fn, use_function)

    # -- the steps ------------------------------------------------------------------------------

    def train_step(self, x, y):
        """One optimizer step on a batch; returns the (unscaled) loss."""
        model, opt = self.model, self.optimizer
        variables = model.trainable_variables
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            if self.mixed_precision:
                logits = tf.cast(logits, tf.float32)
            loss = self.loss_fn(y, logits)
            total = loss
            if getattr(model, "losses", None):  # regularisation terms added by layers
                total = loss + tf.add_n(list(model.losses))
            if self.mixed_precision:
                total = opt.get_scaled_loss(total)
        grads = tape.gradient(total, variables)
        if self.mixed_precision:
            grads = opt.get_unscaled_gradients(grads)
        opt.apply_gradients(zip(grads, variables))
        if self.metric_inputs is not None:
            loss, y, logits = self.metric_inputs(loss, y, logits)
        self.train_loss.update_state(loss)
        self.train_accuracy.update_state(y, logits)
        return loss

    def evaluate(self, iterator=None):
        """``{"loss", "accuracy"}`` over one pass of ``iterator`` (default: ``eval_iter``)."""
        return evaluate(self._eval_step, self.eval_iter if iterator is None else iterator)

    # -- the loop -------------------------------------------------------------------------------

    @property
    def epoch(self):
        """Completed epochs."""
        return self.train_iter.epoch

    def position(self):
        return (self.step, self.epoch_end_pending)

    def learning_rate(self):
        return current_learning_rate(self.optimizer)

    def request_stop(self, reason):
        """Stop after the current event (used by early stopping)."""
        self.early_stopped = True
        self.stop_reason = reason

    def _reached_max_steps(self):
        if self.max_steps is None or self.step < self.max_steps:
            return False
        self.stop_reason = self.stop_reason or f"reached max_steps={self.max_steps}"
        return True

    def _finished(self):
        return self.early_stopped or self._reached_max_steps() or self.epoch >= self.epochs

    def _event(self, event, logs):
        """Run the callbacks whose trigger fires, each followed by its Keras hook (a
        completed epoch ``e`` is Keras' epoch index ``e - 1``)."""
        for cb in self.callbacks:
            trigger = getattr(cb, "trigger", None)
            if trigger is not None and trigger(event, self):
                cb(self, event, logs)
            if event == "step":
                batch = (self.train_iter.batch_index or len(self.train_iter)) - 1
                _hook(cb, "on_train_batch_end", batch, logs)
            else:
                _hook(cb, "on_epoch_end", logs["epoch"] - 1, logs)
        if getattr(self.model, "stop_training", False):
            object.__setattr__(self.model, "stop_training", False)
            if not self.early_stopped:
                self.request_stop("a callback set model.stop_training")

    def _keras_params(self):
        return {"epochs": self.epochs, "steps": len(self.train_iter), "verbose": 0,
                "initial_epoch": self.epoch, "initial_step": self.step}

    def train(self):
        """Train until ``epochs`` (or ``max_steps``, or early stopping); returns the history.

        A ``NonFiniteLossError`` (from the NaN guard) or any other error propagates after the
        callbacks are closed, without a final checkpoint.
        """
        try:
            object.__setattr__(self.model, "stop_training", False)
            for cb in self.callbacks:
                _hook(cb, "set_model", self.model)
                _hook(cb, "set_params", self._keras_params())
                _hook(cb, "on_run_begin", self)
                _hook(cb, "on_train_begin", {})
            if self.epoch_end_pending:
                self._end_epoch()
            while not self._finished():
                if not self._run_epoch():
                    break
            for cb in self.callbacks:
                _hook(cb, "on_run_end", self)
                _hook(cb, "on_train_end", dict(self.history[-1]) if self.history else {})
        finally:
            for cb in self.callbacks:
                _hook(cb, "close")
        return self.history

    def _run_epoch(self):
        """Train the rest of the current epoch; False when ``max_steps`` stopped it midway."""
        it = self.train_iter
        if it.batch_index == 0:
            self.train_loss.reset_state()
            self.train_accuracy.reset_state()
            self.epoch_seconds, self.epoch_samples = 0.0, 0
        epoch_number = it.epoch + 1
        for cb in self.callbacks:
            _hook(cb, "on_run_epoch_begin", self)
            _hook(cb, "on_epoch_begin", it.epoch, {})
        start = time.perf_counter()
        for xb, yb in it.epoch_batches():
            try:
                loss = self._train_step(tf.constant(xb), tf.constant(yb.astype(np.int32)))
            except FloatingPointError as exc:  # loss scaling gave up: overflow at scale 1
                raise NonFiniteLossError(self.step + 1, epoch_number, "overflow",
                                         detail=str(exc)) from None
            self.step += 1
            self.epoch_end_pending = it.batch_index == 0
            self.epoch_samples += len(yb)
            self.epoch_seconds += time.perf_counter() - start
            self._event("step", StepLogs(self.step, epoch_number, loss, self.train_loss,
                                         self.train_accuracy))
            if self._reached_max_steps() and not self.epoch_end_pending:
                return False
            start = time.perf_counter()
        self._end_epoch()
        return True

    def _end_epoch(self):
        logs = {"epoch": self.epoch, "step": self.step,
                "loss": float(self.train_loss.result()),
                "accuracy": float(self.train_accuracy.result())}
        if self.eval_iter is not None:
            val = self.evaluate()
            logs.update(val_loss=val["loss"], val_accuracy=val["accuracy"])
        logs["epoch_time"] = self.epoch_seconds
        logs["samples_per_sec"] = self.epoch_samples / max(self.epoch_seconds, 1e-9)
        self.epoch_end_pending = False
        self.history.append(logs)  # callbacks may add to it (the learning rate)
        self._event("epoch", logs)

    # -- state ----------------------------------------------------------------------------------

    def state_dict(self):
        """Everything besides the model variables that an exact resume needs."""
        state = {
            "progress": {"step": self.step, "epoch_end_pending": self.epoch_end_pending,
                         "early_stopped": self.early_stopped,
                         "stop_reason": (self.stop_reason or "") if self.early_stopped else "",
                         "epoch_seconds": self.epoch_seconds,
                         "epoch_samples": self.epoch_samples},
            "optimizer": self.optimizer.get_state(),  # with loss_scale/* under mixed precision
            "rng": _rng_state(),
            "data": {"train": self.train_iter.state_dict()},
            "metrics": {"loss": _metric_arrays(self.train_loss),
                        "accuracy": _metric_arrays(self.train_accuracy)},
            "callbacks": {cb.name: state for cb in self.callbacks
                          if hasattr(cb, "state_dict") and (state := cb.state_dict())},
            "history": list(self.history),
        }
        return state

    def load_state_dict(self, state):
        """Restore ``state_dict()``'s output (the model variables are restored separately)."""
        progress = state["progress"]
        self.optimizer.set_state(state["optimizer"])
        self.train_iter.load_state_dict(state["data"]["train"])
        _set_metric_arrays(self.train_loss, state["metrics"]["loss"])
        _set_metric_arrays(self.train_accuracy, state["metrics"]["accuracy"])
        for cb in self.callbacks:
            if hasattr(cb, "load_state_dict") and cb.name in state["callbacks"]:
                cb.load_state_dict(state["callbacks"][cb.name])
        self.history = [dict(row) for row in state["history"]]
        self.step = int(progress["step"])
        self.epoch_end_pending = bool(progress["epoch_end_pending"])
        self.early_stopped = bool(progress["early_stopped"])
        self.stop_reason = progress["stop_reason"] or None
        self.epoch_seconds = float(progress["epoch_seconds"])
        self.epoch_samples = int(progress["epoch_samples"])
        if "minitf" in state["rng"]:  # last: nothing above may draw after it
            random_ops.set_state(state["rng"]["minitf"])
        else:
            print(f"warning: {state['rng']['unavailable']}", file=sys.stderr)

    def save_checkpoint(self, path):
        """Write the full training state to ``path`` (atomically)."""
        return save_checkpoint(
            path, model=self.model, state=self.state_dict(),
            attrs={"step": self.step, "epoch": self.epoch, "run_dir": self.run_dir},
            config_text=self.config_text, write_weights=keras.saving.write_weights)

    def restore(self, checkpoint):
        """Load an open ``checkpoint.Checkpoint`` (weights and state) into this runner."""
        checkpoint.read_weights(self.model, keras.saving.read_weights)
        state = checkpoint.read_state()
        try:
            self.load_state_dict(state)
        except (KeyError, ValueError, TypeError) as exc:
            raise CheckpointError(f"checkpoint {checkpoint.path}: cannot restore the training "
                                  f"state: {type(exc).__name__}: {exc}") from None

