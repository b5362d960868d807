"""Learning-rate schedules with Keras 3's formulas and configs.

A schedule maps the optimizer's update count to a learning rate. Optimizers evaluate it on the
host, inside their update kernel, through ``host_value(step)`` (a Python float, no ops), so a
traced training step sees the schedule move. Calling the schedule, ``schedule(step)``, gives a
float32 Tensor as in Keras; with a Tensor ``step`` it is computed with minitf ops.

    lr = ExponentialDecay(0.1, decay_steps=100, decay_rate=0.5, staircase=True)
    lr(250)  # 0.025
"""
import math

import numpy

from ... import dtypes
from ...ops.array_ops import constant
from ...ops.math_ops import cast, cos, floor, maximum, minimum, pow as _pow, where
from ...tensor import Tensor


class LearningRateSchedule:
    """Base class: subclasses implement ``host_value(step)`` (and may override ``__call__``).

    A user subclass written TF-style, with only ``__call__(step)`` built from minitf ops, works
    too: ``host_value`` then calls it with an int64 step tensor and reads the result.
    """

    def __call__(self, step):
        if isinstance(step, Tensor):
            return self._tensor_value(cast(step, dtypes.float32))
        if isinstance(step, (int, numpy.integer)):
            return constant(self.host_value(int(step)), dtype="float32")
        # float steps and arrays of steps (plotting a schedule): computed in float32, as TF
        return self._tensor_value(constant(numpy.asarray(step, dtype=numpy.float32)))

    def host_value(self, step):
        """The learning rate after ``step`` updates, as a Python float."""
        if type(self).__call__ is LearningRateSchedule.__call__:
            raise NotImplementedError(f"{type(self).__name__} must implement host_value or __call__")
        from ..._state import NoTrace
        with NoTrace():  # a user's ops must not land in a function trace being recorded
            return float(self(constant(int(step), dtype="int64")))

    def _tensor_value(self, step):
        raise NotImplementedError

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} must implement get_config")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class _RateDecay(LearningRateSchedule):
    """A decay driven by ``p = step / decay_steps`` (floored when ``staircase``) and
    ``decay_rate``; subclasses say how ``p`` scales ``initial_learning_rate``."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name=None):
        if decay_steps <= 0:
            raise ValueError(f"{type(self).__name__}: decay_steps must be > 0, got "
                             f"{decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = type(self).__name__ if name is None else name

    def _host_progress(self, step):
        p = step / self.decay_steps
        return math.floor(p) if self.staircase else p

    def _tensor_progress(self, step):
        p = step / float(self.decay_steps)
        return floor(p) if self.staircase else p

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_RateDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (floored when
    ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def host_value(self, step):
        return float(self.initial_learning_rate) * float(self.decay_rate) ** \
            self._host_progress(step)

    def _tensor_value(self, step):
        return float(self.initial_learning_rate) * _pow(
            constant(float(self.decay_rate), dtype="float32"), self._tensor_progress(step))


class CosineDecay(LearningRateSchedule):
    """Cosine decay with an optional linear warmup, as Keras 3.

    Without ``warmup_target``: ``lr0 * ((1 - alpha) * 0.5 * (1 + cos(pi * s / decay_steps)) + alpha)``
    with ``s = min(step, decay_steps)``. With it, the rate first rises linearly from
    ``initial_learning_rate`` to ``warmup_target`` over ``warmup_steps``, then decays from
    ``warmup_target`` over ``decay_steps``.
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        if decay_steps <= 0:
            raise ValueError(f"CosineDecay: decay_steps must be > 0, got {decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step, lr_from):
        cosine = 0.5 * (1.0 + math.cos(math.pi * step / self.decay_steps))
        return lr_from * ((1.0 - self.alpha) * cosine + self.alpha)

    def host_value(self, step):
        lr0 = float(self.initial_learning_rate)
        if self.warmup_target is None:
            return self._decay(min(step, self.decay_steps), lr0)
        step = min(step, self.decay_steps + self.warmup_steps)
        if step < self.warmup_steps:
            return (float(self.warmup_target) - lr0) * (step / self.warmup_steps) + lr0
        return self._decay(step - self.warmup_steps, float(self.warmup_target))

    def _tensor_decay(self, step, lr_from):
        cosine = 0.5 * (1.0 + cos(math.pi * step / float(self.decay_steps)))
        return lr_from * ((1.0 - self.alpha) * cosine + self.alpha)

    def _tensor_value(self, step):
        lr0 = float(self.initial_learning_rate)
        if self.warmup_target is None:
            return self._tensor_decay(minimum(step, float(self.decay_steps)), lr0)
        warm = float(self.warmup_steps)
        step = minimum(step, float(self.decay_steps) + warm)
        rising = (float(self.warmup_target) - lr0) * (step / max(warm, 1.0)) + lr0
        decaying = self._tensor_decay(maximum(step - warm, 0.0), float(self.warmup_target))
        return where(step < warm, rising, decaying)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < step <= boundaries[i]``, ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"PiecewiseConstantDecay: the length of boundaries ({len(boundaries)})"
                             f" must be one less than the length of values ({len(values)})")
        self.boundaries = list(boundaries)
        self.values = list(values)
        self.name = name

    def host_value(self, step):
        for boundary, value in zip(self.boundaries, self.values):
            if step <= boundary:
                return float(value)
        return float(self.values[-1])

    def _tensor_value(self, step):
        out = constant(float(self.values[-1]), dtype="float32")
        for boundary, value in reversed(list(zip(self.boundaries, self.values))):
            out = where(step <= float(boundary), constant(float(value), dtype="float32"), out)
        return out

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class InverseTimeDecay(_RateDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (the ratio floored
    when ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def host_value(self, step):
        return float(self.initial_learning_rate) / (
            1.0 + float(self.decay_rate) * self._host_progress(step))

    def _tensor_value(self, step):
        return float(self.initial_learning_rate) / (
            1.0 + float(self.decay_rate) * self._tensor_progress(step))


class PolynomialDecay(LearningRateSchedule):
    """``(lr0 - end) * (1 - s / decay_steps) ** power + end`` with ``s = min(step,
    decay_steps)``; with ``cycle=True`` the horizon grows to the next multiple of
    ``decay_steps`` instead of stopping."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0,
                 cycle=False, name="PolynomialDecay"):
        if decay_steps <= 0:
            raise ValueError(f"PolynomialDecay: decay_steps must be > 0, got {decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def host_value(self, step):
        lr0, end = float(self.initial_learning_rate), float(self.end_learning_rate)
        horizon = float(self.decay_steps)
        if self.cycle:
            horizon *= 1.0 if step == 0 else math.ceil(step / horizon)
        else:
            step = min(step, horizon)
        return (lr0 - end) * (1.0 - step / horizon) ** float(self.power) + end

    def _tensor_value(self, step):
        from ...ops.math_ops import ceil
        lr0, end = float(self.initial_learning_rate), float(self.end_learning_rate)
        horizon = float(self.decay_steps)
        if self.cycle:
            horizon = horizon * where(step == 0.0, constant(1.0, dtype="float32"),
                                      ceil(step / horizon))
        else:
            step = minimum(step, horizon)
        return (lr0 - end) * _pow(1.0 - step / horizon, float(self.power)) + end

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): periods of ``first_decay_steps``, each
    ``t_mul`` times longer than the last, restarting from ``m_mul`` times the previous peak;
    ``alpha`` is the floor as a fraction of the peak."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name="SGDRDecay"):
        if first_decay_steps <= 0:
            raise ValueError(f"CosineDecayRestarts: first_decay_steps must be > 0, got "
                             f"{first_decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def host_value(self, step):
        t_mul, m_mul = float(self._t_mul), float(self._m_mul)
        fraction = step / float(self.first_decay_steps)
        if t_mul != 1.0:
            restart = math.floor(math.log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
            done = (1.0 - t_mul ** restart) / (1.0 - t_mul)
            fraction = (fraction - done) / t_mul ** restart
        else:
            restart = math.floor(fraction)
            fraction -= restart
        cosine = 0.5 * m_mul ** restart * (1.0 + math.cos(math.pi * fraction))
        return float(self.initial_learning_rate) * ((1.0 - self.alpha) * cosine + self.alpha)

    def _tensor_value(self, step):
        from ...ops.math_ops import log
        t_mul, m_mul = float(self._t_mul), float(self._m_mul)
        fraction = step / float(self.first_decay_steps)
        if t_mul != 1.0:
            restart = floor(log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
            t_pow = _pow(constant(t_mul, dtype="float32"), restart)
            fraction = (fraction - (1.0 - t_pow) / (1.0 - t_mul)) / t_pow
        else:
            restart = floor(fraction)
            fraction = fraction - restart
        m_fac = _pow(constant(m_mul, dtype="float32"), restart)
        cosine = 0.5 * m_fac * (1.0 + cos(math.pi * fraction))
        return float(self.initial_learning_rate) * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


_BY_NAME = {c.__name__: c for c in (ExponentialDecay, CosineDecay, PiecewiseConstantDecay,
                                    InverseTimeDecay, PolynomialDecay, CosineDecayRestarts)}


def serialize(schedule):
    """``{"class_name": ..., "config": ...}`` for a schedule."""
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config, custom_objects=None):
    """The schedule described by ``serialize``'s output."""
    classes = dict(_BY_NAME, **(custom_objects or {}))
    name = config["class_name"]
    if name not in classes:
        raise ValueError(f"unknown learning rate schedule {name!r}; known: {sorted(classes)}")
    return classes[name].from_config(dict(config["config"]))
