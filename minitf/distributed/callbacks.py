"""Horovod's Keras callbacks (``hvd.callbacks``) for ``model.fit`` on several ranks:
start from rank 0's weights, average the logged metrics, warm the learning rate up."""
from ..keras.callbacks import Callback, _optimizer_lr
from . import runtime
from .comm import DistributedError
from .training import broadcast_variables


class BroadcastGlobalVariablesCallback(Callback):
    """After the first batch, set every rank's model and optimizer variables to
    ``root_rank``'s (the optimizer's slots exist only once it has run a step)."""

    def __init__(self, root_rank=0, device=""):
        self.root_rank = int(root_rank)
        self.broadcast_done = False

    def on_train_batch_end(self, batch, logs=None):
        if self.broadcast_done:
            return
        broadcast_variables(self.model.variables, self.root_rank)
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None:
            broadcast_variables(optimizer.variables, self.root_rank)
        self.broadcast_done = True


class MetricAverageCallback(Callback):
    """At each epoch's end, replace every numeric log value by its average over the ranks.
    Put it before the callbacks that read the logs (checkpoints, early stopping)."""

    def __init__(self, device=""):
        pass

    def on_epoch_end(self, epoch, logs=None):
        if logs is None or runtime.size() == 1:
            return
        from .horovod_api import allgather_object
        keys = sorted(k for k, v in logs.items() if isinstance(v, (int, float))
                      or hasattr(v, "__float__"))
        values = allgather_object([float(logs[k]) for k in keys])
        if any(len(v) != len(keys) for v in values):
            raise DistributedError(
                f"MetricAverageCallback: the ranks log different metrics at epoch {epoch}")
        for i, key in enumerate(keys):
            logs[key] = sum(v[i] for v in values) / len(values)


class LearningRateScheduleCallback(Callback):
    """``learning_rate = initial_lr * multiplier(epoch)`` for epochs in ``[start_epoch,
    end_epoch)``: set at each epoch's start with ``staircase=True``, else at each batch with a
    fractional epoch (``epoch + batch / steps_per_epoch``). ``multiplier`` may be a number."""

    def __init__(self, initial_lr, multiplier, start_epoch=0, end_epoch=None, staircase=True,
                 momentum_correction=True, steps_per_epoch=None, verbose=0):
        self.initial_lr = float(initial_lr)
        self.multiplier = multiplier if callable(multiplier) else (lambda epoch: multiplier)
        self.start_epoch, self.end_epoch = start_epoch, end_epoch
        self.staircase = staircase
        self.steps_per_epoch = steps_per_epoch
        self.verbose = verbose
        self.current_epoch = None

    def _active(self, epoch):
        return epoch >= self.start_epoch and (self.end_epoch is None or epoch < self.end_epoch)

    def _set(self, epoch):
        self.model.optimizer.learning_rate = self.initial_lr * float(self.multiplier(epoch))

    def on_epoch_begin(self, epoch, logs=None):
        self.current_epoch = epoch
        if self.staircase and self._active(epoch):
            self._set(epoch)

    def on_train_batch_begin(self, batch, logs=None):
        if self.staircase or not self._active(self.current_epoch):
            return
        steps = self.steps_per_epoch or (self.params or {}).get("steps")
        if not steps:
            raise ValueError(f"{type(self).__name__}: steps_per_epoch is needed (fit did not "
                             f"report the number of steps)")
        self._set(self.current_epoch + batch / steps)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _optimizer_lr(self.model)


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """Horovod's warmup: the rate grows linearly, batch by batch, from ``initial_lr / size`` to
    ``initial_lr`` over ``warmup_epochs`` (for a rate already scaled by the number of ranks)."""

    def __init__(self, initial_lr, warmup_epochs=5, momentum_correction=True,
                 steps_per_epoch=None, verbose=0):
        size = runtime.size()

        def multiplier(epoch):
            return 1.0 / size * (epoch * (size - 1) / warmup_epochs + 1)

        super().__init__(initial_lr, multiplier, start_epoch=0, end_epoch=warmup_epochs,
                         staircase=False, momentum_correction=momentum_correction,
                         steps_per_epoch=steps_per_epoch, verbose=verbose)
        self.warmup_epochs = warmup_epochs

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.warmup_epochs - 1:
            self.model.optimizer.learning_rate = self.initial_lr
            if self.verbose:
                print(f"\nEpoch {epoch + 1}: finished gradual learning rate warmup to "
                      f"{self.initial_lr:g}.")
        super().on_epoch_end(epoch, logs)
