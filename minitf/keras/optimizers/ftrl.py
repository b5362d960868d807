"""FTRL-Proximal as Keras 3 computes it."""
from ... import backend as B
from .base import Optimizer, accepts_param_groups


class Ftrl(Optimizer):
    """Keras 3's FTRL (McMahan et al., 2013), with ``p = -learning_rate_power``::

        g_shrunk = g + 2 * l2_shrinkage_regularization_strength * w
        n_new = n + g * g
        z += g_shrunk - (n_new ** p - n ** p) / lr * w
        quadratic = n_new ** p / lr + 2 * (l2_regularization_strength + beta / (2 * lr))
        w = (clip(z, -l1, l1) - z) / quadratic          # 0 where |z| <= l1
        n = n_new

    Defaults: ``learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1``,
    all regularization strengths and ``beta`` 0. Slots ``accumulator`` (starts at
    ``initial_accumulator_value``) and ``linear``.
    """
    _GROUP_KEYS = ("learning_rate_power", "l1_regularization_strength",
                   "l2_regularization_strength", "l2_shrinkage_regularization_strength", "beta")

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="ftrl", **kwargs):
        for arg, value in (("initial_accumulator_value", initial_accumulator_value),
                           ("l1_regularization_strength", l1_regularization_strength),
                           ("l2_regularization_strength", l2_regularization_strength),
                           ("l2_shrinkage_regularization_strength",
                            l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"`{arg}` needs to be positive or zero. Received: "
                                 f"{arg}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError("`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        return ("accumulator", "linear")

    def _slot_init(self, slot):
        return float(self.initial_accumulator_value) if slot == "accumulator" else 0.0

    def _scalars(self, gi, lr, step):
        def hyper(key):
            return float(self._hyper(gi, key, step))
        l2 = hyper("l2_regularization_strength") + hyper("beta") / (2.0 * lr)
        return (lr, -hyper("learning_rate_power"), hyper("l1_regularization_strength"), l2,
                hyper("l2_shrinkage_regularization_strength"))

    # The new weights are not ``w + scale * delta`` but a function of the ``linear`` slot, so
    # the whole update (with the weight decay first, as Keras applies it) runs here, where the
    # variable is at hand; ``_kernel`` is never reached.
    def _fused_update(self, sc, g, slots, w, decay):
        lr, power, l1, l2, shrinkage = sc
        xp = B.xp
        if decay != 1.0:
            w *= decay
        accum = slots["accumulator"]
        linear = slots["linear"]
        grad = g + (2.0 * shrinkage) * w if shrinkage else g
        new_accum = accum + g * g
        new_power = xp.power(new_accum, power)
        linear += grad
        linear -= (new_power - xp.power(accum, power)) / lr * w
        quadratic = new_power / lr + 2.0 * l2
        clipped = xp.clip(linear, -l1, l1)
        xp.divide(clipped - linear, quadratic, out=w, casting="unsafe")
        xp.copyto(accum, new_accum)
        return True

    def _fused_arena(self, sc, arena, gs, decays):
        for k, (e, g, decay) in enumerate(zip(arena.entries, gs, decays)):
            slots = {name: arena.view(flat, k) for name, flat in arena.flat.items()}
            self._fused_update(sc, g, slots, e.w, decay)
        return True

    def _hyper_config(self):
        return {"learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength":
                    self.l2_shrinkage_regularization_strength,
                "beta": self.beta}
