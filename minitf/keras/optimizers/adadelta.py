"""Adadelta as Keras 3 computes it."""
from ... import backend as B
from ._scratch import second_scratch
from .base import Optimizer, accepts_param_groups


class Adadelta(Optimizer):
    """Keras 3's Adadelta (Zeiler, 2012)::

        acc_g = rho * acc_g + (1 - rho) * g * g
        delta = -sqrt(acc_delta + epsilon) * g / sqrt(acc_g + epsilon)
        acc_delta = rho * acc_delta + (1 - rho) * delta * delta
        w += lr * delta

    Defaults: ``learning_rate=0.001, rho=0.95, epsilon=1e-7`` (the paper's form is
    ``learning_rate=1.0``). Slots ``accumulated_grad`` and ``accumulated_delta_var``.
    """
    _GROUP_KEYS = ("rho", "epsilon")

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="adadelta", **kwargs):
        self.rho = rho
        self.epsilon = epsilon
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        return ("accumulated_grad", "accumulated_delta_var")

    def _scalars(self, gi, lr, step):
        return (float(self._hyper(gi, "rho", step)), float(self._hyper(gi, "epsilon", step)), lr)

    def _kernel(self, sc, g, slots, t):
        rho, eps, lr = sc
        xp = B.xp
        acc_g = slots["accumulated_grad"]
        acc_delta = slots["accumulated_delta_var"]
        xp.multiply(g, g, out=t)
        B.axpby(1.0 - rho, t, rho, acc_g, scratch=t)
        rms_g = second_scratch(self, t)
        xp.add(acc_g, eps, out=rms_g)
        xp.sqrt(rms_g, out=rms_g)
        xp.add(acc_delta, eps, out=t)
        xp.sqrt(t, out=t)
        t *= g
        t /= rms_g                      # t = -delta
        xp.multiply(t, t, out=rms_g)
        B.axpby(1.0 - rho, rms_g, rho, acc_delta, scratch=rms_g)
        return t, -lr

    def _hyper_config(self):
        return {"rho": self.rho, "epsilon": self.epsilon}
