"""Callbacks of the training runner: progress, metric logs, checkpoints, early stopping, NaN guard.

They are ``keras.callbacks.Callback`` subclasses: the runner calls every callback's Keras hooks
(``on_train_begin``, ``on_epoch_begin``, ``on_train_batch_end``, ``on_epoch_end``,
``on_train_end`` with its logs), so any Keras callback (``keras.callbacks.TensorBoard``,
``TerminateOnNaN``...) runs in the runner too, and a callback that sets
``model.stop_training`` ends the run at the next epoch boundary. On top of that, the runner's
own callbacks carry what an exactly resumable run needs:

A callback runs when its ``trigger`` fires at a ``"step"`` or ``"epoch"`` event (see
``triggers``); callbacks run in decreasing ``priority``, so at one event the NaN guard comes
first, the learning-rate monitor fills ``logs["lr"]`` before the loggers write it, the loggers
write before early stopping decides and the checkpoint records it all::

    class PrintLoss(Callback):
        trigger = IntervalTrigger(100, "step")
        def __call__(self, runner, event, logs):
            print(runner.step, logs["loss"])

Step logs hold ``step``, ``epoch`` (1-based, in progress), ``batch_loss`` and the running
``loss``/``accuracy`` of the epoch; epoch logs hold ``epoch`` (completed), ``step``, ``loss``,
``accuracy``, ``val_loss``, ``val_accuracy``, ``lr``, ``epoch_time`` and ``samples_per_sec``.
State that must survive a resume goes in ``state_dict()``; it is saved in every checkpoint.
The runner-level hooks receive the runner: ``on_run_begin(runner)``,
``on_run_epoch_begin(runner)``, ``on_run_end(runner)`` and ``close()``.
"""
import csv
import io
import json
import math
import os
import sys
import time
from collections.abc import MutableMapping

from ..keras import callbacks as keras_callbacks
from . import plotting
from .checkpoint import checkpoint_name, prune_checkpoints, remove_stale_temporaries
from .triggers import EVERY_EPOCH, EVERY_STEP, AnyTrigger, IntervalTrigger, get_trigger

__all__ = ["Callback", "NonFiniteLossError", "NaNGuard", "LearningRateMonitor",
           "ProgressDisplay", "CSVLogger", "JSONLinesLogger", "ModelCheckpoint",
           "EarlyStopping", "PlotCurves", "CSV_COLUMNS", "resolve_mode", "format_logs", "StepLogs"]

#: Columns of metrics.csv, in order.
CSV_COLUMNS = ("epoch", "step", "loss", "accuracy", "val_loss", "val_accuracy", "lr",
               "epoch_time", "samples_per_sec")


class NonFiniteLossError(RuntimeError):
    """The training loss became NaN or infinite; the run stops without saving that state."""

    def __init__(self, step, epoch, value, detail=None):
        self.step, self.epoch, self.value = step, epoch, value
        what = f"non-finite loss ({value})" if value != "overflow" else \
            "non-finite gradients at every loss scale"
        super().__init__(f"{what} at step {step} (epoch {epoch}); the run stopped without "
                         f"saving this state{': ' + detail if detail else ''}")


class Callback(keras_callbacks.Callback):
    """Base class: override ``__call__`` (run when ``trigger`` fires), the runner hooks and
    any Keras hook you need."""

    priority = 0
    trigger = None

    @property
    def name(self):
        """Key of this callback's state in checkpoints (unique per runner)."""
        return type(self).__name__

    def on_run_begin(self, runner):
        pass

    def on_run_epoch_begin(self, runner):
        pass

    def __call__(self, runner, event, logs):
        pass

    def on_run_end(self, runner):
        """After training finished normally (not after an error)."""

    def close(self):
        """Always called last, also after an error (release files, progress bars)."""

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


def resolve_mode(metric, mode):
    """"min" or "max" for ``metric``; ``auto`` minimises losses and maximises the rest."""
    if mode != "auto":
        return mode
    return "min" if "loss" in metric else "max"


def _improved(value, best, mode, min_delta=0.0):
    if value is None or not math.isfinite(value):
        return False
    if best is None:
        return True
    return keras_callbacks._Monitor(None, mode, min_delta).improved(value, best)


def format_logs(logs, keys=("loss", "accuracy", "val_loss", "val_accuracy")):
    parts = [f"{k} {logs[k]:.4f}" for k in keys if logs.get(k) is not None]
    if logs.get("lr") is not None:
        parts.append(f"lr {logs['lr']:.3g}")
    return "  ".join(parts)


class StepLogs(MutableMapping):
    """A step's logs, read from the device only when a callback asks for them.

    ``batch_loss``, ``loss`` and ``accuracy`` are device scalars until first read (each read is
    a host sync on a GPU, so a step no callback looks at costs none); other keys are plain."""

    def __init__(self, step, epoch, batch_loss, loss_metric, accuracy_metric):
        self._plain = {"step": step, "epoch": epoch}
        self._lazy = {"batch_loss": lambda: batch_loss, "loss": loss_metric.result,
                      "accuracy": accuracy_metric.result}

    def __getitem__(self, key):
        if key in self._lazy:
            self._plain[key] = float(self._lazy.pop(key)())
        return self._plain[key]

    def __setitem__(self, key, value):
        self._lazy.pop(key, None)
        self._plain[key] = value

    def __delitem__(self, key):
        self._lazy.pop(key, None)
        self._plain.pop(key, None)

    def __iter__(self):
        return iter(list(self._plain) + [k for k in self._lazy if k not in self._plain])

    def __len__(self):
        return len(self._plain) + len(self._lazy)


class NaNGuard(Callback):
    """Stops the run at the first non-finite training loss (before anything is saved).

    By default it reads every step's loss. Given a sparser ``trigger`` (on a GPU, so that steps
    do not wait for the host), it also checks the epoch's running mean loss, which is
    non-finite once any batch loss since the epoch began was: the run stops at that check."""

    priority = 1000
    trigger = EVERY_STEP

    def __init__(self, trigger=None):
        if trigger is not None:
            self.trigger = trigger

    def __call__(self, runner, event, logs):
        keys = ("batch_loss",) if self.trigger is EVERY_STEP else ("batch_loss", "loss")
        for key in keys:
            value = logs.get(key)
            if value is not None and not math.isfinite(value):
                raise NonFiniteLossError(runner.step, logs["epoch"], value)


class LearningRateMonitor(Callback):
    """Puts the optimizer's current learning rate in the logs (``logs["lr"]``)."""

    priority = 900

    def __init__(self, trigger=EVERY_EPOCH):
        self.trigger = get_trigger(trigger)

    def __call__(self, runner, event, logs):
        logs["lr"] = runner.learning_rate()


class ProgressDisplay(Callback):
    """A tqdm bar per epoch (loss, accuracy, samples/s), or one summary line per epoch.

    mode: "bar", "line", "none", or "auto" (a bar when stderr is a terminal, else lines).
    """

    priority = 800
    trigger = AnyTrigger(EVERY_STEP, EVERY_EPOCH)

    def __init__(self, mode="auto", stream=None, refresh_seconds=0.2):
        if mode == "auto":
            mode = "bar" if sys.stderr.isatty() else "line"
        self.mode, self.stream, self.refresh = mode, stream, refresh_seconds
        self._bar = None

    def _out(self):
        return self.stream or sys.stdout

    def on_run_epoch_begin(self, runner):
        self._last = 0.0
        if self.mode == "bar":
            from tqdm import tqdm
            it = runner.train_iter
            self._close_bar()
            self._bar = tqdm(total=len(it), initial=it.batch_index, file=sys.stderr,
                             desc=f"epoch {it.epoch + 1}/{runner.epochs}", unit="batch",
                             dynamic_ncols=True, leave=True)

    def __call__(self, runner, event, logs):
        if self.mode == "none":
            return
        if event == "step":
            if self._bar is not None:
                self._bar.update(1)
                now = time.perf_counter()
                if now - self._last >= self.refresh:
                    self._last = now
                    rate = runner.epoch_samples / max(runner.epoch_seconds, 1e-9)
                    self._bar.set_postfix_str(
                        f"loss {logs['loss']:.4f} acc {logs['accuracy']:.4f} "
                        f"{rate:,.0f} samples/s", refresh=False)
            return
        line = (f"epoch {logs['epoch']}/{runner.epochs}  step {logs['step']}  "
                f"{format_logs(logs)}  {logs['samples_per_sec']:,.0f} samples/s  "
                f"{logs['epoch_time']:.1f}s")
        if self._bar is not None:
            self._close_bar()
        print(line, file=self._out(), flush=True)

    def _close_bar(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def close(self):
        self._close_bar()


class _AppendLog(Callback):
    """A log file appended to as the run goes; its size is saved in checkpoints, and a resumed
    run cuts it back to that size, so records written after the checkpoint appear once."""

    def __init__(self, path):
        self.path = path
        self._size = None

    def _append(self, text):
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        with open(self.path, "a", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            self._size = fh.tell()

    def _current_size(self):
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def state_dict(self):
        return {"bytes": self._current_size() if self._size is None else self._size}

    def load_state_dict(self, state):
        size = int(state.get("bytes", 0))
        if self._current_size() > size:
            os.truncate(self.path, size)
        self._size = None


class CSVLogger(_AppendLog):
    """metrics.csv: one row per epoch, ``CSV_COLUMNS``; one header, appended on resume."""

    priority = 500

    def __init__(self, path, columns=CSV_COLUMNS, trigger=EVERY_EPOCH):
        super().__init__(path)
        self.columns, self.trigger = tuple(columns), get_trigger(trigger)

    def __call__(self, runner, event, logs):
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        if self._current_size() == 0:
            writer.writerow(self.columns)
        writer.writerow(["" if logs.get(c) is None else _plain(logs[c]) for c in self.columns])
        self._append(buf.getvalue())


class JSONLinesLogger(_AppendLog):
    """metrics.jsonl: ``{"event": "step"|"epoch", ...logs, "time": unix seconds}`` per record."""

    priority = 500

    def __init__(self, path, trigger=EVERY_EPOCH):
        super().__init__(path)
        self.trigger = get_trigger(trigger)

    def __call__(self, runner, event, logs):
        record = {"event": event, **{k: _plain(v) for k, v in logs.items()},
                  "time": round(time.time(), 3)}
        self._append(json.dumps(record) + "\n")


def _plain(value):
    """JSON/CSV friendly: Python numbers, non-finite floats as None."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class EarlyStopping(keras_callbacks.EarlyStopping, Callback):
    """Keras' ``EarlyStopping`` (same counting of ``patience`` and ``min_delta``) that asks the
    runner to stop with a reason, and whose state is saved in checkpoints."""

    priority = 200
    trigger = EVERY_EPOCH

    def __init__(self, metric="val_loss", patience=5, min_delta=0.0, mode="auto"):
        super().__init__(monitor=metric, min_delta=min_delta, patience=patience,
                         mode=resolve_mode(metric, mode))
        self.metric = metric
        self.on_train_begin()

    def on_train_begin(self, logs=None):
        if self._op is None:  # once: a resumed run keeps the state loaded from a checkpoint
            super().on_train_begin(logs)

    def on_epoch_end(self, epoch, logs=None):
        """The runner decides through ``__call__`` (with its trigger)."""

    def __call__(self, runner, event, logs):
        value = logs.get(self.metric)
        value = None if value is None or not math.isfinite(value) else float(value)
        if self.update(logs["epoch"] - 1, value):
            runner.request_stop(f"early stopping: {self.metric} did not improve for "
                                f"{self.wait} epochs (best {self.best:.6g} at epoch "
                                f"{self.best_epoch + 1})")

    def state_dict(self):
        finite = math.isfinite(self.best)
        return {"best": self.best if finite else None,
                "best_epoch": self.best_epoch + 1 if finite else 0, "wait": self.wait}

    def load_state_dict(self, state):
        if state["best"] is None:
            self.best, self.best_epoch = self._op.worst(), 0
        else:
            self.best, self.best_epoch = float(state["best"]), int(state["best_epoch"]) - 1
        self.wait = int(state["wait"])


class ModelCheckpoint(Callback):
    """Saves ``ckpt-<step>.h5`` at its trigger and when training ends; keeps the last
    ``keep_last``; with ``best_metric``, also ``best.h5`` whenever that metric improves."""

    priority = 100

    def __init__(self, directory, trigger=EVERY_EPOCH, keep_last=3, best_metric=None,
                 best_mode="auto"):
        self.directory, self.keep_last = directory, keep_last
        self.save_trigger = get_trigger(trigger)
        self.trigger = AnyTrigger(self.save_trigger, EVERY_EPOCH) if best_metric \
            else self.save_trigger
        self.best_metric = best_metric
        self.best_mode = resolve_mode(best_metric, best_mode) if best_metric else None
        self.best, self.best_step = None, None
        self._saved_at = None  # runner.position() of the newest checkpoint this process wrote

    @property
    def best_path(self):
        return os.path.join(self.directory, "best.h5")

    def on_run_begin(self, runner):
        os.makedirs(self.directory, exist_ok=True)
        remove_stale_temporaries(self.directory)
        self._saved_at = runner.position()  # the state we start from is saved already

    def __call__(self, runner, event, logs):
        # A step that ends an epoch may save before the epoch's evaluation; the checkpoint
        # records that, and a run resumed from it evaluates and logs that epoch first.
        improved = (event == "epoch" and self.best_metric is not None
                    and _improved(logs.get(self.best_metric), self.best, self.best_mode))
        if improved:  # before saving, so that both files record the new best
            self.best, self.best_step = logs[self.best_metric], runner.step
        if self.save_trigger(event, runner):
            self._save(runner)
        if improved:
            runner.save_checkpoint(self.best_path)

    def _save(self, runner):
        runner.save_checkpoint(os.path.join(self.directory, checkpoint_name(runner.step)))
        self._saved_at = runner.position()
        prune_checkpoints(self.directory, self.keep_last)

    def on_run_end(self, runner):
        if runner.position() != self._saved_at:
            self._save(runner)

    def state_dict(self):
        return {"best": self.best, "best_step": self.best_step}

    def load_state_dict(self, state):
        self.best, self.best_step = state["best"], state["best_step"]


class PlotCurves(Callback):
    """Writes the loss and accuracy curves (PNG) after every epoch when matplotlib is there."""

    priority = 50
    trigger = EVERY_EPOCH

    def __init__(self, path):
        self.path = path

    def __call__(self, runner, event, logs):
        plotting.plot_history(runner.history, self.path)


def step_trigger(every_steps, every_epoch=False):
    """Trigger for "every N steps (0: never) and/or each epoch"."""
    parts = []
    if every_steps:
        parts.append(IntervalTrigger(every_steps, "step"))
    if every_epoch:
        parts.append(EVERY_EPOCH)
    return AnyTrigger(*parts)
