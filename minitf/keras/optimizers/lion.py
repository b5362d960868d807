"""Lion (evolved sign momentum) as Keras 3 computes it."""
from ... import backend as B
from ._scratch import second_scratch
from .base import Optimizer, accepts_param_groups


class Lion(Optimizer):
    """Keras 3's Lion (Chen et al., 2023)::

        w -= lr * sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g

    Defaults: ``learning_rate=0.001, beta_1=0.9, beta_2=0.99``; ``beta_1`` must be in (0, 1].
    Slot ``momentum``. Its steps have a larger norm than Adam's: a learning rate 3-10x smaller
    and a weight decay 3-10x larger than AdamW's keep ``lr * weight_decay`` similar.
    """
    _GROUP_KEYS = ("beta_1", "beta_2")

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="lion", **kwargs):
        if isinstance(beta_1, (int, float)) and (beta_1 <= 0 or beta_1 > 1):
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}.")
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        return ("momentum",)

    def _scalars(self, gi, lr, step):
        return (float(self._hyper(gi, "beta_1", step)), float(self._hyper(gi, "beta_2", step)),
                lr)

    def _kernel(self, sc, g, slots, t):
        b1, b2, lr = sc
        xp = B.xp
        m = slots["momentum"]
        scaled_g = second_scratch(self, t)
        xp.multiply(g, 1.0 - b1, out=scaled_g)
        xp.multiply(m, b1, out=t)
        t += scaled_g
        xp.sign(t, out=t)
        B.axpby(1.0 - b2, g, b2, m, scratch=scaled_g)
        return t, -lr

    def _hyper_config(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2}
