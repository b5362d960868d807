"""``fit``, ``evaluate`` and ``predict`` of ``keras.Model`` (methods of ``Trainer``).

The loops are Keras 3's: ``fit`` calls ``train_step`` on each batch, evaluates
``validation_data`` (or the ``validation_split`` held out from the end of the arrays) after
each epoch, and calls the callbacks' hooks with the logs (``loss``, the metrics, ``val_*``);
``evaluate`` and ``predict`` do the same with ``test_step``/``predict_step`` and the
``on_test_*``/``on_predict_*`` hooks. Unless ``compile(run_eagerly=True)``, the training step
runs as a ``minitf.function``, traced once per batch shape. Batch logs are read from the
metrics only when a callback looks at them (reading syncs the device).
"""
import warnings

from .. import backend as B
from ..nest import flatten, pack_sequence_as
from ..tensor import Tensor
from . import callbacks as callbacks_module
from . import config
from .io_utils import print_msg
from .trainer_data import (EpochIterator, is_batch_source, pack_x_y_sample_weight, to_device,
                           train_validation_split, unpack_x_y_sample_weight)


def _callback_list(callbacks, model, verbose, **params):
    if isinstance(callbacks, callbacks_module.CallbackList):
        return callbacks
    if isinstance(callbacks, callbacks_module.Callback):
        callbacks = [callbacks]    # one callback, as Keras accepts it
    cbs = list(callbacks or [])
    cbs_list = callbacks_module.CallbackList(cbs, add_history=params.pop("add_history", False),
                                             model=model)
    if not any(isinstance(cb, callbacks_module.ProgbarLogger) for cb in cbs_list):
        cbs_list.append(callbacks_module.ProgbarLogger())
        cbs_list.callbacks[-1].set_model(model)
    cbs_list.set_params(dict(params, verbose=verbose))
    return cbs_list


def _validation_due(epoch, validation_freq):
    if isinstance(validation_freq, int):
        return (epoch + 1) % validation_freq == 0
    return (epoch + 1) in validation_freq


def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
        validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
        sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
        validation_batch_size=None, validation_freq=1):
    """Train for ``epochs`` epochs (counting from ``initial_epoch``); returns a ``History``.

    ``x``/``y``/``sample_weight`` are arrays, or ``x`` is a ``tf.data.Dataset``/iterable of
    ``(x, y[, sample_weight])`` batches; ``class_weight`` maps class indices to loss weights.
    """
    self._check_compiled("fit")
    cap = config.max_epochs()
    if cap and cap < epochs:
        warnings.warn(f"Limiting epochs to {cap}", stacklevel=2)
        epochs = cap
    if validation_split and validation_data is None:
        if is_batch_source(x):
            raise ValueError("fit: validation_split is only supported for arrays and tensors, "
                             f"not for {type(x).__name__}; pass validation_data")
        (x, y, sample_weight), validation_data = train_validation_split(
            (to_device(x), to_device(y), to_device(sample_weight)), validation_split)
    data = EpochIterator(x, y, sample_weight, batch_size, shuffle, steps_per_epoch,
                         class_weight, what="fit")
    if validation_data is not None and not is_batch_source(validation_data):
        # on the device once, not at every epoch's evaluation
        validation_data = tuple(to_device(v) for v in
                                unpack_x_y_sample_weight(validation_data))
    cbs = _callback_list(callbacks, self, verbose, add_history=True, epochs=epochs,
                         steps=data.steps, initial_epoch=initial_epoch)
    object.__setattr__(self, "stop_training", False)
    object.__setattr__(self, "_initial_epoch", None)
    if not self.built and hasattr(data.source, "x"):
        self._ensure_built(data.source.x)
    cbs.on_train_begin()
    initial_epoch = self._initial_epoch or initial_epoch
    epoch_logs = {}
    for epoch in range(initial_epoch, epochs):
        self.reset_metrics()
        cbs.on_epoch_begin(epoch)
        steps, logs_fn = 0, None
        for step, batch in enumerate(data.epoch()):
            cbs.on_train_batch_begin(step)
            logs_fn = self._run_train_step(batch)
            steps += 1
            cbs.on_train_batch_end(step, callbacks_module.LazyLogs(logs_fn))
            if self.stop_training:
                break
        if steps == 0:
            warnings.warn("fit: the input ran out of data; stopping training", UserWarning,
                          stacklevel=2)
            break
        epoch_logs = logs_fn()
        if validation_data is not None and _validation_due(epoch, validation_freq):
            val_logs = _evaluate(self, validation_data, validation_batch_size or batch_size,
                                 validation_steps, cbs)
            epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
        cbs.on_epoch_end(epoch, epoch_logs)
        if self.stop_training or data.exhausted:
            break
    if epochs > 0 and hasattr(self.optimizer, "finalize_variable_values"):  # EMA weights
        self.optimizer.finalize_variable_values(self.trainable_weights)
    cbs.on_train_end(epoch_logs)
    object.__setattr__(self, "_initial_epoch", None)
    object.__setattr__(self, "history", cbs.history)
    return cbs.history


def _evaluate(model, data, batch_size, steps, cbs, sample_weight=None):
    """Run ``test_step`` over ``data`` (a batch source or an ``(x, y, sw)`` tuple) with
    ``cbs``'s test hooks; returns the logs as floats."""
    from .trainer import _floats
    if isinstance(data, tuple):
        x, y, sw = data
        it = EpochIterator(x, y, sw if sw is not None else sample_weight, batch_size, False,
                           steps, what="evaluate")
    else:
        it = EpochIterator(data, None, None, batch_size, False, steps, what="evaluate")
    model.reset_metrics()
    cbs.on_test_begin()
    results = None
    for step, (xb, yb, swb) in enumerate(it.epoch()):
        cbs.on_test_batch_begin(step)
        model._ensure_built(xb)
        results = model.test_step(pack_x_y_sample_weight(xb, yb, swb))
        cbs.on_test_batch_end(step, callbacks_module.LazyLogs(
            lambda r=results: _floats(r)))
    logs = _floats(results) if results is not None else model._logs_fn()
    cbs.on_test_end(logs)
    return logs


def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
             steps=None, callbacks=None, return_dict=False):
    """Loss and metrics over the data: a scalar (no metrics), a list in ``metrics_names``
    order, or a dict with ``return_dict=True``."""
    self._check_compiled("evaluate")
    if is_batch_source(x):
        data = x
        if y is not None or sample_weight is not None:
            raise ValueError("evaluate: y and sample_weight go inside the dataset, not beside "
                             "it")
    else:
        data = (x, y, sample_weight)
    cbs = _callback_list(callbacks, self, 0, steps=steps)
    logs = _evaluate(self, data, batch_size, steps, cbs)
    if verbose in (1, 2) or (verbose == "auto" and _stdout_is_tty()):
        print_msg(callbacks_module.format_logs(logs))
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def _stdout_is_tty():
    import sys
    return hasattr(sys.stdout, "isatty") and sys.stdout.isatty()


def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
    """Model outputs (``predict_step``) on ``x`` in inference mode, as host numpy arrays with
    the outputs' structure; ``x`` is arrays or a Dataset/iterable (targets are ignored)."""
    it = EpochIterator(x, None, None, batch_size, False, steps, what="predict")
    cbs = _callback_list(callbacks, self, 0, steps=it.steps)
    cbs.on_predict_begin()
    outputs = []
    for step, (xb, _, _) in enumerate(it.epoch()):
        cbs.on_predict_batch_begin(step)
        out = self.predict_step(pack_x_y_sample_weight(xb))
        outputs.append(out)
        cbs.on_predict_batch_end(step, {"outputs": out})
    cbs.on_predict_end()
    if not outputs:
        raise ValueError("predict: no data")
    first = outputs[0]
    if isinstance(first, Tensor):
        return B.to_numpy(B.xp.concatenate([o._value for o in outputs], axis=0))
    flat = [list(flatten(o)) for o in outputs]
    joined = [B.to_numpy(B.xp.concatenate([f[i]._value for f in flat], axis=0))
              for i in range(len(flat[0]))]
    return pack_sequence_as(first, joined)


def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                   return_dict=False):
    """One training step on one batch; the metrics cover that batch only."""
    from .trainer_data import class_weights_to_sample_weights
    self._check_compiled("train_on_batch")
    x, y, sw = to_device(x), to_device(y), to_device(sample_weight)
    if class_weight is not None:
        sw = class_weights_to_sample_weights(class_weight, y)
    self.reset_metrics()
    logs = self._run_train_step((x, y, sw))()
    return logs if return_dict else _single_or_list(logs)


def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
    """``test_step`` on one batch; the metrics cover that batch only."""
    from .trainer import _floats
    self._check_compiled("test_on_batch")
    x, y, sw = to_device(x), to_device(y), to_device(sample_weight)
    self.reset_metrics()
    self._ensure_built(x)
    logs = _floats(self.test_step(pack_x_y_sample_weight(x, y, sw)))
    return logs if return_dict else _single_or_list(logs)


def predict_on_batch(self, x):
    """``predict_step`` on one batch, as host numpy arrays."""
    out = self.predict_step(pack_x_y_sample_weight(to_device(x)))
    if isinstance(out, Tensor):
        return B.to_numpy(out._value)
    return pack_sequence_as(out, [B.to_numpy(t._value) for t in flatten(out)])


def _single_or_list(logs):
    values = list(logs.values())
    return values[0] if len(values) == 1 else values
