"""Fusion of adjacent steps of a traced plan into one kernel.

A traced step (``minitf.function``) records each op of the forward and backward passes as a
step of its own; some adjacent pairs cost a pass over memory less as one kernel. ``fuse``
rewrites a plan's ``("op", op, input slots, attrs, output slot)`` steps by the rules below.
Each fused op is a registered op (the gradient check covers it) whose kernel gives the pair's
values bit for bit, so a fused replay computes exactly what the unfused one did.

The rules serve ``max_pool(relu(..))`` (``Conv2D(..., activation="relu")`` or ``ReLU``
before ``MaxPooling2D``); ``minitf.ops.pool_fusion_ops`` has the fused ops:

- forward, ``relu(z)`` or ``bias_activation(z, b, "relu")`` then ``tiled_max_pool(a)``: the
  relu becomes ``relu_pooled`` / ``bias_relu_pooled``, which also computes the pooling image by
  image while the image is in cache; the pool step, kept, picks its result up. The relu's
  output stays a step's output (the backward reads it).
- backward, ``tiled_max_grad(a, g)`` then ``relu_grad(that, a)``: ``tiled_max_relu_grad(a,
  g)``, one pass writing the masked scatter instead of writing the scatter and then reading it
  and ``a`` again. Only where the scatter feeds nothing else.
- backward, ``tiled_max_relu_grad`` then ``sum_to`` of its result (the bias gradient of a
  convolution before the relu): the scatter, with ``sums=True``, also sums each image's
  channels as it writes them, in the order ``sum_to``'s own kernel adds them, and ``sum_to``
  takes those sums instead of reading the whole gradient again.
- backward, ``tiled_max_relu_grad`` then ``batch_norm_reduce_grads`` of its result (a batch
  norm before the relu): ``tiled_max_relu_grad_bn``, which also adds up the batch norm's
  parameter sums as it writes the scatter, in that op's order, and leaves them for it.

Two rules serve ``Dense(..., activation="relu")``; ``minitf.ops.product_fusion_ops`` has the
fused ops (on MKL each thread finishes its own blocks of the product while they are in cache):

- forward, ``matmul(a, w)`` then ``bias_activation(that, b, "relu")``: ``matmul_bias_relu``.
- backward, across steps: ``relu_grad(g, y)`` of a product ``g`` (the input gradient of the
  next layer) becomes ``matmul_relu_grad`` in the product's step, and the relu_grad's step
  goes. ``y`` must exist before the product (a forward output); the steps between cannot
  read the relu_grad's output, which did not exist before its step.

Then one rule across steps: ``batch_norm_train`` whose output only a ``relu_pooled`` reads
(``BatchNormalization``, ``ReLU``, ``MaxPooling2D``) becomes ``batch_norm_relu_pooled``
writing the relu's output, and the relu's step goes. The steps between the two (the moving
averages' updates) cannot read the relu's output, which did not exist before the relu's step.

Last, for ``Conv2D(..., activation="relu")`` whose output a convolution reads
(``minitf.ops.conv_fusion_ops``): a ``relu_grad`` that no product took, then ``sum_to`` of its
result (the bias gradient), becomes ``relu_grad_sums``, which also sums each image's channels
as it writes the result; ``sum_to`` takes those sums.

``MINITF_PLAN_FUSION=0`` turns fusion off (to compare, or to rule it out), and with it the
eager counterparts of the pooling and bias-sum rules (``minitf.eager_fusion``).
"""
import collections
import os

from .ops.registry import OPS


def _pool_then_relu_grad(first, second, single_use):
    """The backward pair as one masked scatter; the scatter must feed nothing else."""
    _, _, (x, g), attrs, scatter = first
    _, _, (grad, y), _, out = second
    if grad == scatter and y == x and single_use(scatter):
        return [("op", OPS["tiled_max_relu_grad"], (x, g), attrs, out)]
    return None


def _scatter_then_bias_sums(first, second, single_use):
    """The masked scatter also sums each image's channels for the bias gradient after it
    (``sum_to`` down to one axis picks the sums up; the scatter stays a step's output)."""
    _, op, ins, attrs, scatter = first
    _, _, sum_ins, sum_attrs, _ = second
    if sum_ins != (scatter,) or len(sum_attrs.get("shape", ())) != 1 or attrs.get("sums"):
        return None
    return [("op", op, ins, dict(attrs, sums=True), scatter), second]


def _scatter_then_batch_norm_sums(first, second, single_use):
    """The masked scatter also adds up the batch norm parameter gradients' sums that
    ``batch_norm_reduce_grads`` takes of it next (it stays a step, picking them up)."""
    _, _, ins, attrs, scatter = first
    _, _, (bn_x, g), bn_attrs, _ = second
    if g != scatter or attrs.get("sums"):
        return None
    return [("op", OPS["tiled_max_relu_grad_bn"], ins + (bn_x,),
             {"ksize": attrs["ksize"], "epsilon": bn_attrs.get("epsilon", 1e-3)}, scatter),
            second]


def _relu_then_pool(first, second, single_use):
    """The relu computes the pool's maxima too; the pool step then picks them up."""
    _, op, ins, attrs, a = first
    _, _, pooled_ins, pool_attrs, _ = second
    if pooled_ins != (a,) or not pool_attrs.get("cache"):
        return None
    ksize = {"ksize": pool_attrs["ksize"]}
    if op.name == "relu":
        return [("op", OPS["relu_pooled"], ins, ksize, a), second]
    if (attrs or {}).get("activation") == "relu":
        return [("op", OPS["bias_relu_pooled"], ins, ksize, a), second]
    return None


def _product_then_bias_relu(first, second, single_use):
    """A ``Dense`` layer's relu finishes its product's blocks (``matmul_bias_relu``); the
    product must feed nothing else."""
    _, _, (a, w), attrs, z = first
    _, _, ins, bias_attrs, out = second
    if (attrs or len(ins) != 2 or ins[0] != z or ins[1] == z
            or (bias_attrs or {}).get("activation") != "relu" or not single_use(z)):
        return None
    return [("op", OPS["matmul_bias_relu"], (a, w, ins[1]), {}, out)]


_RULES = {("tiled_max_grad", "relu_grad"): _pool_then_relu_grad,
          ("matmul", "bias_activation"): _product_then_bias_relu,
          ("tiled_max_relu_grad", "sum_to"): _scatter_then_bias_sums,
          ("tiled_max_relu_grad", "batch_norm_reduce_grads"): _scatter_then_batch_norm_sums,
          ("relu", "tiled_max_pool"): _relu_then_pool,
          ("bias_activation", "tiled_max_pool"): _relu_then_pool}


def _fold_batch_norms(steps, single_use):
    """Each ``relu_pooled`` of a batch norm's output that nothing else reads, done by the
    batch norm's step as ``batch_norm_relu_pooled``."""
    producers = {step[4]: index for index, step in enumerate(steps)
                 if step[0] == "op" and step[1].name == "batch_norm_train"}
    folded, gone = list(steps), set()
    for index, (kind, op, ins, attrs, out) in enumerate(steps):
        if kind != "op" or op.name != "relu_pooled" or len(ins) != 1:
            continue
        norm = producers.get(ins[0])
        if norm is None or not single_use(ins[0]):
            continue
        _, _, norm_ins, norm_attrs, _ = steps[norm]
        folded[norm] = ("op", OPS["batch_norm_relu_pooled"], norm_ins,
                        dict(norm_attrs or {}, ksize=attrs["ksize"]), out)
        gone.add(index)
    return [step for index, step in enumerate(folded) if index not in gone]


def _fold_relu_grads(steps, single_use):
    """Each ``relu_grad(g, y)`` of a product ``g`` that nothing else reads, done by the
    product's step as ``matmul_relu_grad`` (``y``, a forward output, exists by then)."""
    made = {}
    for index, step in enumerate(steps):
        for slot in step[4] if isinstance(step[4], (tuple, list)) else (step[4],):
            made.setdefault(slot, index)
    folded, gone = list(steps), set()
    for index, (kind, op, ins, attrs, out) in enumerate(steps):
        if kind != "op" or op.name != "relu_grad" or len(ins) != 2:
            continue
        g, y = ins
        product = made.get(g)
        if product is None or not single_use(g) or made.get(y, -1) >= product:
            continue
        kind, producer, product_ins, product_attrs, _ = steps[product]
        if (kind != "op" or producer.name != "matmul" or product_attrs
                or y in product_ins):
            continue
        folded[product] = ("op", OPS["matmul_relu_grad"], product_ins + (y,), {}, out)
        gone.add(index)
    return [step for index, step in enumerate(folded) if index not in gone]


def _fold_bias_sums(steps):
    """Each ``relu_grad`` left (not a product's: a convolution's) whose result ``sum_to``
    reduces to one axis in the next step becomes ``relu_grad_sums``; the ``sum_to`` stays and
    picks the sums up. After ``_fold_relu_grads``, which takes a Dense layer's."""
    folded = list(steps)
    for index in range(len(steps) - 1):
        kind, op, ins, attrs, out = steps[index]
        after = steps[index + 1]
        if (kind == "op" and op.name == "relu_grad" and not attrs and after[0] == "op"
                and after[1].name == "sum_to" and after[2] == (out,)
                and len(after[3].get("shape", ())) == 1):
            folded[index] = ("op", OPS["relu_grad_sums"], ins, {}, out)
    return folded


def enabled():
    return os.environ.get("MINITF_PLAN_FUSION", "1") != "0"


def fuse(steps, kinds, out_refs):
    """``steps`` with every pair a rule matches replaced by the rule's steps."""
    if not enabled():
        return steps
    reads = collections.Counter(i for step in steps for i in step[2])
    returned = {ref for kind, ref in out_refs if kind != "py"}

    def single_use(slot):
        return reads[slot] == 1 and slot not in returned and kinds[slot] == "temp"

    fused = []
    for step in steps:
        previous = fused[-1] if fused else None
        rule = (previous is not None and previous[0] == "op" and step[0] == "op"
                and _RULES.get((previous[1].name, step[1].name)))
        replacement = rule(previous, step, single_use) if rule else None
        if replacement is None:
            fused.append(step)
        else:
            fused[-1:] = replacement
    return _fold_bias_sums(_fold_relu_grads(_fold_batch_norms(fused, single_use), single_use))
