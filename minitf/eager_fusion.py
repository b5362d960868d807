"""Backward rules of adjacent tape records fused in eager mode: ``minitf.plan_fusion``'s
pooling rules for a tape's own backward pass.

The backward pass of ``max_pool(relu(z))`` (``Conv2D(..., activation="relu")`` or ``ReLU``
before ``MaxPooling2D``) runs the pool's rule (the gradient scattered to each window's first
maximum), then the relu's (a mask), then, for a bias, a sum over the images: three passes
over an activation-sized array. Where the relu's output feeds nothing else the pass reaches,
``tiled_max_relu_grad`` writes the scatter already masked and, for a bias, each image's channel
sums as it goes (picked up by ``sum_to``), in one pass; after ``BatchNormalization`` (its
output read by the relu alone) the pass adds up the batch norm's parameter sums instead
(``tiled_max_relu_grad_bn``, picked up by ``batch_norm_reduce_grads``). The values are the
unfused rules' bit for bit (the fused ops' own tests hold that), and the relu's record is then
skipped: nothing else gave its output a gradient.

Only first-order passes on numpy arrays fuse (a pass that records its rules on a tape, a
forward accumulator or a trace sees them unfused; a trace fuses its plan itself), and only
rules nobody replaced (``RegisterGradient``). ``MINITF_PLAN_FUSION=0`` turns this off too.
"""
import collections
import os

import numpy

from .ops.registry import OPS

OP, IN_IDS, SAVED, OUT, ATTRS, SHAPES, OUT_ID = range(7)   # a tape record's fields

ENABLED = os.environ.get("MINITF_PLAN_FUSION", "1") != "0"


class PoolRelu:
    """The records of one backward pass, indexed on first use: each output's record and how
    many records of the pass read each tensor."""

    def __init__(self, relevant):
        self._producer = {e[OUT_ID]: e for e in relevant}
        self._uses = collections.Counter(i for e in relevant for i in e[IN_IDS])
        self._relu, self._bias_relu = OPS["relu"], OPS["bias_activation"]
        self._batch_norm = OPS["batch_norm_train"]
        self._masked_scatter = OPS["tiled_max_relu_grad"]
        self._masked_scatter_bn = OPS["tiled_max_relu_grad_bn"]

    def grads(self, pool, in_ids, attrs, g, grads, keep, reach):
        """``(relu's record, its input gradients)`` for a record of ``pool`` (a
        ``tiled_max_pool``: ``in_ids``, ``attrs``) whose input a relu alone wrote and only the
        pool reads, with ``g`` the pool output's gradient; else None (the rules run one by
        one)."""
        a_id = in_ids[0]
        producer = self._single_use_record(a_id, (self._relu, self._bias_relu))
        if (producer is None or type(g) is not numpy.ndarray or a_id in keep or a_id in grads
                or pool.user_grad is not None or producer[OUT] is None):
            return None
        op = producer[OP]
        if op is self._bias_relu and producer[ATTRS].get("activation") != "relu":
            return None
        a = producer[OUT]._value
        if type(a) is not numpy.ndarray or a.ndim != 4:
            return None
        ksize = attrs["ksize"]
        if op is self._bias_relu:
            bias = len(producer[SHAPES][1]) == 1 and producer[IN_IDS][1] in reach
            dz = self._masked_scatter.forward(a, g, ksize=ksize, sums=bias)
            return producer, (dz, dz)
        norm = self._single_use_record(producer[IN_IDS][0], (self._batch_norm,))
        if norm is not None and norm[SAVED] is not None:   # BatchNormalization, ReLU, pool
            dz = self._masked_scatter_bn.forward(a, g, norm[SAVED][0]._value, ksize=ksize,
                                                 epsilon=norm[ATTRS].get("epsilon", 1e-3))
        else:
            dz = self._masked_scatter.forward(a, g, ksize=ksize)
        return producer, (dz,)

    def _single_use_record(self, tensor_id, ops):
        """The record of one of ``ops`` (no replaced gradient) that wrote ``tensor_id``, where
        only one record of the pass reads that tensor; else None."""
        record = self._producer.get(tensor_id)
        if (record is None or record[OP] not in ops or record[OP].user_grad is not None
                or self._uses[tensor_id] != 1):
            return None
        return record
