"""Stochastic gradient descent with Keras 3's momentum and Nesterov forms."""
from ... import backend as B
from .base import Optimizer, accepts_param_groups


class SGD(Optimizer):
    """``w -= lr * g``; with momentum ``m = momentum * m - lr * g`` then ``w += m``
    (Nesterov: ``w += momentum * m - lr * g`` with the new ``m``).

    Keras defaults: ``learning_rate=0.01, momentum=0.0, nesterov=False``. The ``momentum`` slot
    exists only where momentum is non-zero.

        opt = SGD(0.1, momentum=0.9)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    """
    _GROUP_KEYS = ("momentum", "nesterov")
    _conditional_slots = True

    @accepts_param_groups
    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="SGD", **kwargs):
        if not isinstance(momentum, (int, float)) or momentum < 0 or momentum > 1:
            raise ValueError(f"SGD: momentum must be a float in [0, 1], got {momentum!r}")
        self.momentum = momentum
        self.nesterov = nesterov
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        group = self.param_groups[group_index] if group_index < len(self.param_groups) else {}
        return ("momentum",) if group.get("momentum", self.momentum) else ()

    def _scalars(self, gi, lr, step):
        return (lr, float(self._hyper(gi, "momentum", step)), bool(self._hyper(gi, "nesterov", step)))

    def _kernel(self, sc, g, slots, t):
        lr, momentum, nesterov = sc
        if not momentum:
            return g, -lr
        m = slots["momentum"]
        if not nesterov:
            B.axpby(-lr, g, momentum, m, scratch=t)     # m = momentum * m - lr * g
            return m, 1.0
        xp = B.xp
        xp.multiply(g, lr, out=t)
        m *= momentum
        m -= t
        # momentum * m - lr * g, without a second scratch buffer
        t *= -1.0 / momentum
        t += m
        t *= momentum
        return t, 1.0

    def _hyper_config(self):
        return {"momentum": self.momentum, "nesterov": self.nesterov}
