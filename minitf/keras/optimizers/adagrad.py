"""Adagrad with Keras 3's defaults."""
from ... import backend as B
from .base import Optimizer, accepts_param_groups


class Adagrad(Optimizer):
    """``acc += g * g; w -= lr * g / sqrt(acc + epsilon)``.

    Defaults: ``learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7``. Slot
    ``accumulator``.
    """
    _GROUP_KEYS = ("epsilon",)

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 name="adagrad", **kwargs):
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        return ("accumulator",)

    def _slot_init(self, slot):
        return float(self.initial_accumulator_value)

    def _scalars(self, gi, lr, step):
        return (lr, float(self._hyper(gi, "epsilon", step)))

    def _kernel(self, sc, g, slots, t):
        lr, eps = sc
        xp = B.xp
        acc = slots["accumulator"]
        xp.multiply(g, g, out=t)
        acc += t
        xp.add(acc, eps, out=t)
        xp.sqrt(t, out=t)
        xp.divide(g, t, out=t)
        return t, -lr

    def _hyper_config(self):
        return {"initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}
