"""Adam and AdamW with Keras 3's update (epsilon-hat form of the bias correction)."""
import math

from ... import backend as B
from ... import cuda_kernels, native
from .base import Optimizer, accepts_param_groups


class Adam(Optimizer):
    """Adam (Kingma & Ba) as Keras 3 computes it, with ``t = iterations + 1``::

        m += (g - m) * (1 - beta_1)         # computed as beta_1 * m + (1 - beta_1) * g
        v += (g * g - v) * (1 - beta_2)
        alpha = lr * sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
        w -= m * alpha / (sqrt(v) + epsilon)          # v_hat = max(v_hat, v) with amsgrad

    Defaults: ``learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7``. Slots ``m``,
    ``v`` (and ``vhat``). The update is 12 in-place passes over each variable (large variables
    split over two threads on numpy, small ones updated together).

        opt = Adam(1e-3)
        opt = Adam([{"params": backbone, "learning_rate": 1e-5}, {"params": head}], learning_rate=1e-3)
    """
    _GROUP_KEYS = ("beta_1", "beta_2", "epsilon")

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="adam", **kwargs):
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = bool(amsgrad)
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        return ("m", "v", "vhat") if self.amsgrad else ("m", "v")

    def _scalars(self, gi, lr, step):
        b1 = float(self._hyper(gi, "beta_1", step))
        b2 = float(self._hyper(gi, "beta_2", step))
        eps = float(self._hyper(gi, "epsilon", step))
        t = step + 1
        alpha = lr * math.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t)
        return (b1, 1.0 - b1, b2, 1.0 - b2, alpha, eps)

    def _fuses(self):
        return not self.amsgrad and native.kernels() is not None

    def _fused_update(self, sc, g, slots, w, decay):
        if self.amsgrad:
            return False
        b1, c1, b2, c2, alpha, eps = sc
        if cuda_kernels.enabled():   # the GPU: one fused kernel per variable
            return cuda_kernels.adam(w, g, slots["m"], slots["v"], b1, c1, b2, c2, eps, -alpha,
                                     decay)
        return native.adam(w, g, slots["m"], slots["v"], b1, c1, b2, c2, eps, -alpha, decay)

    def _fused_step(self, plan, gs, scalars):
        if self.amsgrad or cuda_kernels.enabled() or plan.work[1]:
            return False    # plan.work[1]: the plan splits over a helper thread instead
        batch = plan.native
        if batch is None:
            batch = plan.native = self._step_batch(plan.entries) or False
        if not batch:
            return False
        decay, (b1, c1, b2, c2, alpha, eps) = scalars
        return batch(gs, b1, c1, b2, c2, eps, -alpha, plan.decays(decay))

    def _step_batch(self, entries):
        """A ``native.AdamBatch`` over every variable of a plan, or None. Small gradients are
        copied into buffers (their arena's, else the entry's own), large ones read in place."""
        gbufs = []
        for e in entries:
            if e.w.size > native.copy_max():
                gbufs.append(None)
            elif e.arena is not None:
                gbufs.append(e.arena.view(e.arena.gflat, e.arena.entries.index(e)))
            else:
                gbufs.append(self._gbuf(e))
        return native.adam_batch([e.w for e in entries], [e.slots["m"] for e in entries],
                                 [e.slots["v"] for e in entries], gbufs)

    def _fused_arena(self, sc, arena, gs, decays):
        if self.amsgrad:
            return False
        batch = arena.native
        if batch is None:
            batch = arena.native = native.adam_batch(
                [e.w for e in arena.entries], [e.slots["m"] for e in arena.entries],
                [e.slots["v"] for e in arena.entries],
                [arena.view(arena.gflat, k) for k in range(len(arena.entries))]) or False
        if not batch:
            return False
        b1, c1, b2, c2, alpha, eps = sc
        return batch(gs, b1, c1, b2, c2, eps, -alpha, decays)

    def _kernel(self, sc, g, slots, t):
        b1, c1, b2, c2, alpha, eps = sc
        xp = B.xp
        m = slots["m"]
        v = slots["v"]
        # m = beta_1 * m + (1 - beta_1) * g and v likewise: Keras' m += (g - m) * (1 - beta_1)
        # up to rounding, in one pass each.
        B.axpby(c1, g, b1, m, scratch=t)
        xp.multiply(g, g, out=t)
        B.axpby(c2, t, b2, v, scratch=t)
        if self.amsgrad:
            vhat = slots["vhat"]
            xp.maximum(vhat, v, out=vhat)
            v = vhat
        xp.sqrt(v, out=t)
        t += eps
        xp.divide(m, t, out=t)
        return t, -alpha

    def _hyper_config(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                "amsgrad": self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): before each update
    ``w -= w * weight_decay * lr``. Keras default ``weight_decay=0.004``."""

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="adamw", **kwargs):
        if weight_decay is None:
            raise ValueError("AdamW: weight_decay must be a number, got None")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)
