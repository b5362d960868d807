"""Adamax (Adam with the infinity norm) as Keras 3 computes it."""
from ... import backend as B
from .base import Optimizer, accepts_param_groups


class Adamax(Optimizer):
    """Keras 3's Adamax (Kingma & Ba, section 7.1), with ``t = iterations + 1``::

        m += (g - m) * (1 - beta_1)
        u = maximum(beta_2 * u, |g|)
        w -= lr * m / ((1 - beta_1 ** t) * (u + epsilon))

    Defaults: ``learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7``. Slots
    ``momentum`` and ``norm``.
    """
    _GROUP_KEYS = ("beta_1", "beta_2", "epsilon")

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 name="adamax", **kwargs):
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        return ("momentum", "norm")

    def _scalars(self, gi, lr, step):
        b1 = float(self._hyper(gi, "beta_1", step))
        b2 = float(self._hyper(gi, "beta_2", step))
        eps = float(self._hyper(gi, "epsilon", step))
        return (b1, b2, eps, lr / (1.0 - b1 ** (step + 1)))

    def _kernel(self, sc, g, slots, t):
        b1, b2, eps, step_size = sc
        xp = B.xp
        m = slots["momentum"]
        u = slots["norm"]
        B.axpby(1.0 - b1, g, b1, m, scratch=t)
        u *= b2
        xp.abs(g, out=t)
        xp.maximum(u, t, out=u)
        xp.add(u, eps, out=t)
        xp.divide(m, t, out=t)
        return t, -step_size

    def _hyper_config(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}
