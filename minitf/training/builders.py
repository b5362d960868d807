"""Build the pieces of a run from a resolved config: data, optimizer, callbacks.

``train.py`` wires these together; each builder is usable on its own::

    data = load_data(cfg)                       # arrays, normalisation, evaluation split
    optimizer = build_optimizer(cfg, model, steps_per_epoch=len(train_iter))
    callbacks = build_callbacks(cfg, run_dir)
"""
import os

import numpy as np

from minitf import backend as B
from minitf import keras

from . import callbacks as cb
from .config import ConfigError

__all__ = ["Data", "Normalizer", "load_data", "make_iterators", "build_schedule",
           "build_optimizer", "param_groups", "build_callbacks", "checkpoint_dir",
           "tensorboard_dir", "OPTIMIZERS"]

#: Config optimizer names -> keras.optimizers class names.
OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop",
              "adagrad": "Adagrad", "adadelta": "Adadelta", "adamax": "Adamax", "nadam": "Nadam",
              "lion": "Lion", "ftrl": "Ftrl"}


class Normalizer:
    """uint8 images -> float32: ``scale`` (x/255), ``standardize`` ((x/255 - mean)/std) or
    ``none``. The statistics come from the training images (exactly, via a 256-bin histogram,
    without a float copy of the data set)."""

    def __init__(self, kind, x_train):
        self.kind = kind
        self.mean, self.std = 0.0, 1.0
        if kind == "standardize":
            counts = np.bincount(np.asarray(x_train, np.uint8).ravel(), minlength=256)
            levels = np.arange(256, dtype=np.float64) / 255.0
            total = counts.sum()
            mean = float(counts @ levels / total)
            std = float(np.sqrt(counts @ (levels - mean) ** 2 / total))
            self.mean, self.std = mean, std
        self._scale = np.float32(1.0 / 255.0 if kind != "none" else 1.0)
        self._mean, self._inv_std = np.float32(self.mean), np.float32(1.0 / self.std)

    def __call__(self, batch):
        x = batch.astype(np.float32) * self._scale
        if self.kind == "standardize":
            x -= self._mean
            x *= self._inv_std
        return x

    def __repr__(self):
        return f"Normalizer({self.kind!r}, mean={self.mean:.4f}, std={self.std:.4f})"


class Data:
    """Arrays of a run: ``train``, ``eval`` (the per-epoch split, named ``eval_split``) and
    ``test`` as (x, y) uint8 pairs, plus ``normalize`` and the per-sample ``input_shape``."""

    def __init__(self, train, eval, eval_split, test, normalize):
        self.train, self.eval, self.eval_split = train, eval, eval_split
        self.test, self.normalize = test, normalize
        self.input_shape = tuple(train[0].shape[1:])


def load_data(cfg):
    """Load and split the dataset named in ``cfg["data"]`` (DatasetError when unavailable)."""
    import datasets

    d = cfg["data"]
    (x, y), (x_test, y_test) = datasets.load(d["dataset"], data_dir=d["data_dir"])
    if d["train_limit"] is not None:
        x, y = x[:d["train_limit"]], y[:d["train_limit"]]
    validation = None
    if d["validation_split"] > 0:
        n_val = int(round(len(x) * d["validation_split"]))
        if not 0 < n_val < len(x):
            raise ConfigError(f"data.validation_split = {d['validation_split']} leaves "
                              f"{n_val} of {len(x)} samples for validation; it must leave "
                              "at least one sample on each side")
        # A seeded random subset (the datasets are ordered by nothing in particular, but a
        # fixed permutation keeps every class represented whatever the order).
        order = np.random.default_rng(cfg["seed"]).permutation(len(x))
        held, kept = np.sort(order[:n_val]), np.sort(order[n_val:])
        x, y, validation = x[kept], y[kept], (x[held], y[held])
    split = d["eval_on"]
    if split == "auto":
        split = "validation" if validation is not None else "test"
    evaluation = validation if split == "validation" else (x_test, y_test)
    if d["eval_limit"] is not None:
        evaluation = (evaluation[0][:d["eval_limit"]], evaluation[1][:d["eval_limit"]])
    return Data((x, y), evaluation, split, (x_test, y_test), Normalizer(d["normalization"], x))


def make_iterators(cfg, data):
    """(train, eval) BatchIterators; the training one is seeded with ``cfg["seed"]``."""
    from datasets import BatchIterator

    from ..openblas import may_use_blas

    d, t = cfg["data"], cfg["train"]
    if B.host_syncs_stall():   # a GPU: the data set lives on the device
        from .device_data import DeviceBatches
        return (DeviceBatches(*data.train, t["batch_size"], shuffle=d["shuffle"], seed=cfg["seed"],
                              drop_remainder=d["drop_remainder"], normalize=data.normalize),
                DeviceBatches(*data.eval, t["eval_batch_size"], shuffle=False,
                              normalize=data.normalize))
    # may_use_blas: the optimizer can then still park OpenBLAS's workers while prefetching.
    train = BatchIterator(*data.train, t["batch_size"], shuffle=d["shuffle"], seed=cfg["seed"],
                          drop_remainder=d["drop_remainder"], normalize=data.normalize,
                          prefetch=d["prefetch"], around_batch=may_use_blas)
    evaluation = BatchIterator(*data.eval, t["eval_batch_size"], shuffle=False,
                               normalize=data.normalize, prefetch=d["prefetch"],
                               around_batch=may_use_blas)
    return train, evaluation


def build_schedule(opt_cfg, total_updates):
    """The learning rate: a float or a keras.optimizers.schedules object."""
    s, lr = opt_cfg["schedule"], opt_cfg["learning_rate"]
    schedules = keras.optimizers.schedules
    decay_steps = s["decay_steps"] or max(1, total_updates)
    if s["name"] == "constant":
        return lr
    if s["name"] == "cosine":
        return schedules.CosineDecay(lr, decay_steps, alpha=s["alpha"])
    if s["name"] == "exponential":
        return schedules.ExponentialDecay(lr, decay_steps, s["decay_rate"],
                                          staircase=s["staircase"])
    return schedules.PiecewiseConstantDecay(s["boundaries"], s["values"])


def param_groups(model, groups_cfg):
    """Optimizer groups ``[{"params": [...], "learning_rate": ...}, ...]`` by layer-name prefix.

    Each config group takes the trainable variables of the model's top-level layers whose name
    starts with its ``prefix`` (a variable goes to the first group that matches); the
    remaining variables form a last group with the optimizer's own settings.
    """
    if not groups_cfg:
        return None
    layers = list(model.layers)
    taken, groups = set(), []
    for i, g in enumerate(groups_cfg):
        matched = [layer for layer in layers if layer.name.startswith(g["prefix"])]
        if not matched:
            raise ConfigError(
                f"optimizer.param_groups[{i}].prefix = {g['prefix']!r} is not valid: no layer "
                f"name starts with it (layers: {', '.join(layer.name for layer in layers)})")
        params = [v for layer in matched for v in layer.trainable_variables
                  if id(v) not in taken]
        taken.update(id(v) for v in params)
        group = {"params": params}
        for key in ("learning_rate", "weight_decay"):
            if g[key] is not None:
                group[key] = g[key]
        groups.append(group)
    rest = [v for v in model.trainable_variables if id(v) not in taken]
    if rest:
        groups.append({"params": rest})
    return groups


def build_optimizer(cfg, model, steps_per_epoch):
    """The configured optimizer (wrapped in a LossScaleOptimizer under mixed_float16).

    Schedules without ``decay_steps`` span the whole run: ``epochs * steps_per_epoch`` training
    steps, counted in optimizer updates (divided by the accumulation steps).
    """
    o = cfg["optimizer"]
    accumulation = o["gradient_accumulation_steps"]
    total_updates = cfg["train"]["epochs"] * steps_per_epoch // accumulation
    kwargs = dict(o["kwargs"])
    for key, arg in (("global_norm", "global_clipnorm"), ("norm", "clipnorm"),
                     ("value", "clipvalue")):
        if o["clip"][key] is not None:
            kwargs[arg] = o["clip"][key]
    if accumulation > 1:
        kwargs["gradient_accumulation_steps"] = accumulation
    cls = getattr(keras.optimizers, OPTIMIZERS[o["name"]])
    lr = build_schedule(o, total_updates)
    groups = param_groups(model, o["param_groups"])
    try:
        opt = cls(groups, learning_rate=lr, **kwargs) if groups else cls(learning_rate=lr,
                                                                          **kwargs)
    except TypeError as exc:
        raise ConfigError(f"optimizer.kwargs = {o['kwargs']!r} is not valid for "
                          f"{cls.__name__}: {exc}") from None
    if cfg["precision"]["policy"] == "mixed_float16":
        p = cfg["precision"]
        opt = keras.mixed_precision.LossScaleOptimizer(
            opt, initial_scale=p["initial_scale"], dynamic_growth_steps=p["dynamic_growth_steps"])
    return opt


def checkpoint_dir(cfg, run_dir):
    """``checkpoint.dir`` resolved against the run directory."""
    d = cfg["checkpoint"]["dir"]
    return os.path.join(run_dir, "checkpoints") if d is None else os.path.join(run_dir, d)


def build_callbacks(cfg, run_dir, progress_stream=None):
    """NaN guard, learning-rate monitor, progress, CSV/JSON-lines logs, early stopping,
    checkpoints, curves and TensorBoard scalars, as configured."""
    log, ck, es = cfg["logging"], cfg["checkpoint"], cfg["early_stopping"]
    records = cb.step_trigger(log["every_steps"], every_epoch=True)
    guard = cb.NaNGuard(records if B.host_syncs_stall() else None)  # GPU: no per-step sync
    out = [guard, cb.LearningRateMonitor(records),
           cb.ProgressDisplay(log["progress"], stream=progress_stream)]
    if log["csv"]:
        out.append(cb.CSVLogger(os.path.join(run_dir, "metrics.csv")))
    if log["jsonl"]:
        out.append(cb.JSONLinesLogger(os.path.join(run_dir, "metrics.jsonl"), records))
    if es["metric"] is not None:
        out.append(cb.EarlyStopping(es["metric"], es["patience"], es["min_delta"], es["mode"]))
    out.append(cb.ModelCheckpoint(checkpoint_dir(cfg, run_dir),
                                  cb.step_trigger(ck["every_steps"], ck["every_epoch"]),
                                  keep_last=ck["keep_last"], best_metric=ck["best_metric"],
                                  best_mode=ck["best_mode"]))
    if log["plot"]:
        out.append(cb.PlotCurves(os.path.join(run_dir, "curves.png")))
    if log["tensorboard"]:
        out.append(keras.callbacks.TensorBoard(tensorboard_dir(run_dir)))
    return out


def tensorboard_dir(run_dir):
    """Where a run's TensorBoard event files go (``train/`` and ``validation/`` below)."""
    return os.path.join(run_dir, "tensorboard")
