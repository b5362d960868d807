"""Fusion of adjacent steps of a traced plan into one kernel.

A traced step (``minitf.function``) records each op of the forward and backward passes as a
step of its own; some adjacent pairs cost a pass over memory less as one kernel. ``fuse``
rewrites a plan's ``("op", op, input slots, attrs, output slot)`` steps by the rules below.
Each fused op is a registered op (the gradient check covers it) whose kernel gives the pair's
values bit for bit, so a fused replay computes exactly what the unfused one did. A pair is
fused only where the first step's output feeds nothing but the second (and is no output of
the function): the intermediate is then never needed.

- ``tiled_max_grad(x, g)`` then ``relu_grad(that, x)``: the backward of ``max_pool(relu(..))``
  (``Conv2D(..., activation="relu")`` or ``ReLU`` before ``MaxPooling2D``), as
  ``tiled_max_relu_grad(x, g)``: one pass writing the masked scatter, instead of writing the
  scatter and then reading it and ``x`` again (measured on the benchmarks' CNNs: the relu
  gradient after the first pooling layer was ~6% of the two-thread step).

``MINITF_PLAN_FUSION=0`` turns fusion off (to compare, or to rule it out).
"""
import collections
import os

from .ops.registry import OPS


def _pool_then_relu_grad(first, second):
    """The fused step for ``first``, ``second`` or None."""
    _, op1, (x, g), attrs, scatter = first
    _, op2, (grad, y), _, out = second
    if op1.name == "tiled_max_grad" and op2.name == "relu_grad" and grad == scatter and y == x:
        return ("op", OPS["tiled_max_relu_grad"], (x, g), attrs, out)
    return None


_RULES = {("tiled_max_grad", "relu_grad"): _pool_then_relu_grad}


def enabled():
    return os.environ.get("MINITF_PLAN_FUSION", "1") != "0"


def fuse(steps, kinds, out_refs):
    """``steps`` with every pair a rule matches replaced by its fused step."""
    if not enabled():
        return steps
    reads = collections.Counter(i for step in steps for i in step[2])
    returned = {ref for kind, ref in out_refs if kind != "py"}
    fused = []
    for step in steps:
        previous = fused[-1] if fused else None
        if (previous is not None and previous[0] == "op" and step[0] == "op"
                and (previous[1].name, step[1].name) in _RULES):
            middle = previous[4]
            if reads[middle] == 1 and middle not in returned and kinds[middle] == "temp":
                replacement = _RULES[previous[1].name, step[1].name](previous, step)
                if replacement is not None:
                    fused[-1] = replacement
                    continue
        fused.append(step)
    return fused
