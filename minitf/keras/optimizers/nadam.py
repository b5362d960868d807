"""Nadam (Adam with Nesterov momentum) as Keras 3 computes it."""
from ... import backend as B
from ._scratch import second_scratch
from .base import Optimizer, accepts_param_groups


class Nadam(Optimizer):
    """Keras 3's Nadam (Dozat, 2015), with ``t = iterations + 1``::

        u_t = beta_1 * (1 - 0.5 * 0.96 ** t);  u_t1 = beta_1 * (1 - 0.5 * 0.96 ** (t + 1))
        prod_t = u_1 * ... * u_t;  prod_t1 = prod_t * u_t1
        m += (g - m) * (1 - beta_1);  v += (g * g - v) * (1 - beta_2)
        m_hat = u_t1 * m / (1 - prod_t1) + (1 - u_t) * g / (1 - prod_t)
        w -= lr * m_hat / (sqrt(v / (1 - beta_2 ** t)) + epsilon)

    Defaults: ``learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7``. Slots
    ``momentum`` and ``velocity``. The running product ``prod_t`` (a variable in Keras) follows
    from ``iterations`` and ``beta_1``, so it is recomputed rather than stored.
    """
    _GROUP_KEYS = ("beta_1", "beta_2", "epsilon")

    @accepts_param_groups
    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 name="nadam", **kwargs):
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self._u_products = {}    # beta_1 -> (t, prod_t), advanced one step at a time
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                         clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         name=name, **kwargs)

    def _slot_names(self, group_index):
        return ("momentum", "velocity")

    def _u_product(self, b1, t):
        known_t, product = self._u_products.get(b1, (0, 1.0))
        if known_t > t:
            known_t, product = 0, 1.0
        for i in range(known_t + 1, t + 1):
            product *= b1 * (1.0 - 0.5 * 0.96 ** i)
        self._u_products[b1] = (t, product)
        return product

    def _scalars(self, gi, lr, step):
        b1 = float(self._hyper(gi, "beta_1", step))
        b2 = float(self._hyper(gi, "beta_2", step))
        eps = float(self._hyper(gi, "epsilon", step))
        t = step + 1
        u_t = b1 * (1.0 - 0.5 * 0.96 ** t)
        u_t1 = b1 * (1.0 - 0.5 * 0.96 ** (t + 1))
        product = self._u_product(b1, t)
        m_coef = u_t1 / (1.0 - product * u_t1)
        g_coef = (1.0 - u_t) / (1.0 - product)
        return (b1, b2, eps, m_coef, g_coef, 1.0 - b2 ** t, lr)

    def _kernel(self, sc, g, slots, t):
        b1, b2, eps, m_coef, g_coef, v_correction, lr = sc
        xp = B.xp
        m = slots["momentum"]
        v = slots["velocity"]
        B.axpby(1.0 - b1, g, b1, m, scratch=t)
        xp.multiply(g, g, out=t)
        B.axpby(1.0 - b2, t, b2, v, scratch=t)
        m_hat = second_scratch(self, t)
        xp.multiply(m, m_coef, out=m_hat)
        xp.multiply(g, g_coef, out=t)
        m_hat += t
        xp.divide(v, v_correction, out=t)
        xp.sqrt(t, out=t)
        t += eps
        xp.divide(m_hat, t, out=t)
        return t, -lr

    def _hyper_config(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}
