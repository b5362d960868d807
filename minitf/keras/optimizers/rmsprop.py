"""RMSprop with Keras 3's form (epsilon inside the square root)."""
from ... import backend as B
from .base import Optimizer, accepts_param_groups


class RMSprop(Optimizer):
    """Keras 3's RMSprop::

        v = rho * v + (1 - rho) * g * g
        a = rho * a + (1 - rho) * g                      # centered only
        denominator = v - a * a + epsilon  (centered)  or  v + epsilon
        increment = lr * g / sqrt(denominator)
        mom = momentum * mom + increment; w -= mom       # momentum > 0
        w -= increment                                   # otherwise

    Defaults: ``learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False``.
    Slots ``velocity``, ``momentum`` (momentum > 0), ``average_gradient`` (centered).
    """
    _GROUP_KEYS = ("rho", "momentum", "epsilon")
    _conditional_slots = True

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 name="rmsprop", **kwargs):
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = bool(centered)
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        group = self.param_groups[group_index] if group_index < len(self.param_groups) else {}
        names = ["velocity"]
        if group.get("momentum", self.momentum):
            names.append("momentum")
        if self.centered:
            names.append("average_gradient")
        return tuple(names)

    def _scalars(self, gi, lr, step):
        return (lr, float(self._hyper(gi, "rho", step)), float(self._hyper(gi, "momentum", step)),
                float(self._hyper(gi, "epsilon", step)))

    def _kernel(self, sc, g, slots, t):
        lr, rho, momentum, eps = sc
        xp = B.xp
        v = slots["velocity"]
        xp.multiply(g, g, out=t)
        B.axpby(1.0 - rho, t, rho, v, scratch=t)
        if self.centered:
            a = slots["average_gradient"]
            B.axpby(1.0 - rho, g, rho, a, scratch=t)
            xp.multiply(a, a, out=t)
            xp.subtract(v, t, out=t)
            t += eps
        else:
            xp.add(v, eps, out=t)
        xp.sqrt(t, out=t)
        xp.divide(g, t, out=t)
        if momentum > 0:
            mom = slots["momentum"]
            B.axpby(lr, t, momentum, mom, scratch=t)
            return mom, -1.0
        return t, -lr

    def _hyper_config(self):
        return {"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                "centered": self.centered}
