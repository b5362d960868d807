"""Attention layers: ``MultiHeadAttention`` (scaled dot-product attention over learned
per-head projections, as in Transformers), ``Attention`` (dot-product, Luong-style) and
``AdditiveAttention`` (Bahdanau-style), with Keras 3's weights, configs and masking rules.

Masks say where attention is allowed (True = attend), with Keras 3's rules: in
MultiHeadAttention masked scores are replaced by -1e9 (-3e4 in float16) before the softmax and
their probabilities set to 0 after it, so a query whose keys are all masked attends to nothing
(output = the output projection's bias), except without dropout and returned scores, where Keras
uses its fused attention and such a query attends uniformly to all keys. MultiHeadAttention
also removes the masks of its inputs (its output keeps the query's), as Keras 3 does.
Attention and AdditiveAttention subtract 1e9 (65504 in float16) from masked scores, so such a
query keeps its unmasked distribution.
"""
import math

from ... import backend as B
from ...ops import array_ops, einsum_ops, linalg_ops, math_ops, nn_ops, reduce_ops
from ...ops.convert import convert_to_tensor
from ...tensor import Tensor, TensorShape
from .. import constraints, initializers, regularizers
from .activation import Softmax
from . import masking
from .base import Layer
from .core import Dropout, set_kernel_bias_options


def _large_negative(dtype):
    return -3e4 if dtype.name == "float16" else -1e9


def _as_bool(mask):
    """A bool Tensor from a bool or number mask (as Keras' Softmax: floats keep > 0.5,
    integers keep > 0)."""
    mask = mask if isinstance(mask, Tensor) else convert_to_tensor(mask)
    if mask.dtype.name != "bool":
        threshold = 0.5 if mask.dtype.is_floating else 0   # Keras casts 0.5 to the mask's dtype
        mask = math_ops.greater(mask, convert_to_tensor(threshold, dtype=mask.dtype))
    return mask


def _causal(q_len, k_len):
    """``(q_len, k_len)`` bool: query ``i`` may attend to keys ``j <= i``."""
    return Tensor(B.xp.tril(B.xp.ones((q_len, k_len), dtype=bool)))


def _masked_softmax(scores, mask, zero_masked=True):
    """Softmax over the last axis where ``mask`` (broadcasting against ``scores``) holds, 0
    elsewhere (Keras' ``Softmax`` layer with a mask). ``zero_masked=False``: masked scores are
    only filled with a large negative number (Keras' fused ``dot_product_attention``), so a
    row with every key masked becomes uniform over all keys instead of 0."""
    if mask is None:
        return nn_ops.softmax(scores, axis=-1)
    scores = math_ops.where(mask, scores, convert_to_tensor(_large_negative(scores.dtype),
                                                            dtype=scores.dtype))
    probs = nn_ops.softmax(scores, axis=-1)
    if not zero_masked:
        return probs
    return math_ops.where(mask, probs, array_ops.zeros_like(probs))


def _tensor_like(value, dtype):
    """``value`` as a Tensor of ``dtype`` (floats converted/cast, as layer inputs are)."""
    if not isinstance(value, Tensor):
        value = convert_to_tensor(value)
    if value.dtype != dtype and (value.dtype.is_floating or value.dtype.is_integer):
        value = math_ops.cast(value, dtype)
    return value


class _Projection(Layer):
    """``einsum(equation, inputs, kernel) + bias``: the projections inside MultiHeadAttention
    (Keras' ``EinsumDense`` with the equations MultiHeadAttention gives it)."""
    supports_masking = True   # masked query/value inputs: MultiHeadAttention uses their masks

    def __init__(self, equation, kernel_shape, bias_shape, options, **kwargs):
        super().__init__(**kwargs)
        self.equation = equation
        self.kernel_shape = tuple(kernel_shape)
        self.bias_shape = None if bias_shape is None else tuple(bias_shape)
        self._options = options

    def build(self, input_shape):
        opts = self._options
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_shape,
                                      initializer=opts["kernel_initializer"],
                                      regularizer=opts["kernel_regularizer"],
                                      constraint=opts["kernel_constraint"])
        self.bias = None if self.bias_shape is None else self.add_weight(
            name="bias", shape=self.bias_shape, initializer=opts["bias_initializer"],
            regularizer=opts["bias_regularizer"], constraint=opts["bias_constraint"])

    def call(self, inputs):
        y = einsum_ops.einsum(self.equation, inputs, self.kernel)
        return y if self.bias is None else y + self.bias


def name_after_projections(layer, prefix=None):
    """Keras names an attention layer's weights after its projection sublayers
    ("mha/query/kernel"); its weight files keep them under the attribute names
    ("mha/query_dense/vars/0"), as tracking does. ``layer._projections()`` lists them."""
    prefix = layer.name if prefix is None else prefix
    for projection in layer._projections():
        for key, var in projection._members()[0]:
            var._name = f"{prefix}/{projection.name}/{key}"


def _positive_int(value, what, optional=False):
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"MultiHeadAttention: {what} must be a positive integer"
                         f"{' or None' if optional else ''}, got {what}={value!r}")
    return value


class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al., 2017): ``query``, ``key`` and ``value`` are
    projected to ``num_heads`` heads, each head computes
    ``softmax(q k^T / sqrt(key_dim)) v``, and the concatenated heads are projected to
    ``output_shape`` (by default the query's feature size).

        mha = MultiHeadAttention(num_heads=2, key_dim=16)
        out, scores = mha(x, x, return_attention_scores=True, use_causal_mask=True)
        # x: (batch, T, dim) -> out (batch, T, dim), scores (batch, 2, T, T)

    Weights, as Keras stores them: ``query_dense``/``key_dense``/``value_dense`` kernels
    ``(dim, num_heads, key_dim)`` (``value_dim`` for the value) with biases
    ``(num_heads, key_dim)``, and ``output_dense`` kernel ``(num_heads, value_dim, *out)``
    with bias ``out``. ``attention_mask`` (``(B, T, S)``, or broadcastable: True = attend)
    and ``use_causal_mask`` combine. Inputs of rank > 3 attend over all their middle axes
    jointly (Keras' default ``attention_axes``); other ``attention_axes`` are not supported.
    """

    _default_build = True   # the weights need the value's shape too: built on the first call

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, sliding_window=None,
                 flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 use_gate=False, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = _positive_int(num_heads, "num_heads")
        self.key_dim = _positive_int(key_dim, "key_dim")
        self.value_dim = _positive_int(value_dim, "value_dim", optional=True) or self.key_dim
        if not 0 <= dropout < 1:
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1), got {dropout}")
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self.use_gate = bool(use_gate)
        if output_shape:
            output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(
                int(d) for d in output_shape)
        self._output_shape_arg = output_shape or None
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        self.attention_axes = None if attention_axes is None else tuple(attention_axes)
        self.sliding_window = _positive_int(sliding_window, "sliding_window", optional=True)
        self.flash_attention = flash_attention
        set_kernel_bias_options(self, kernel_initializer, bias_initializer, kernel_regularizer,
                                bias_regularizer, kernel_constraint, bias_constraint)
        self.seed = seed
        # Keras regularizes the projections' outputs, not this layer's
        self._projection_activity_regularizer = regularizers.get(activity_regularizer)
        self.query_dense = self.key_dense = self.value_dense = self.output_dense = None

    # --- building ------------------------------------------------------------------------------
    def _check_axes(self, rank):
        default = tuple(range(1, rank - 1))
        if self.attention_axes is not None:
            axes = tuple(a % (rank - 1) if a < 0 else a for a in self.attention_axes)
            if axes != default:
                raise ValueError(
                    f"MultiHeadAttention {self.name!r}: only the default attention_axes "
                    f"(all axes but the batch and the features: {default} for rank-{rank} "
                    f"inputs) are supported, got {self.attention_axes}")
        self.attention_axes = default

    def build(self, query_shape, value_shape=None, key_shape=None):
        """Create the projections for inputs of these shapes (``value_shape`` defaults to
        ``query_shape``, ``key_shape`` to ``value_shape``)."""
        query_shape = tuple(query_shape)
        value_shape = query_shape if value_shape is None else tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if len(query_shape) < 3 or len(value_shape) != len(query_shape):
            raise ValueError(f"MultiHeadAttention {self.name!r}: query and value must both be "
                             f"(batch, ..., features) of rank >= 3, got query {query_shape} "
                             f"and value {value_shape}")
        if value_shape[1:-1] != key_shape[1:-1]:
            raise ValueError(f"MultiHeadAttention {self.name!r}: all dimensions of value and "
                             f"key except the last must be equal, got value {value_shape} and "
                             f"key {key_shape}")
        if None in (query_shape[-1], value_shape[-1], key_shape[-1]):
            raise ValueError(f"MultiHeadAttention {self.name!r}: the feature dimensions must be "
                             f"known, got query {query_shape}, value {value_shape}, "
                             f"key {key_shape}")
        self._check_axes(len(query_shape))
        n, kd, vd = self.num_heads, self.key_dim, self.value_dim
        out = self._output_shape_arg or (query_shape[-1],)
        bias = self.use_bias
        out_letters = "xyzw"[:len(out)]
        # assignment order = Keras' weight order: query, key, (gate), value, output
        self.query_dense = self._projection("query", "...d,dnh->...nh", (query_shape[-1], n, kd),
                                            (n, kd) if bias else None)
        self.key_dense = self._projection("key", "...d,dnh->...nh", (key_shape[-1], n, kd),
                                          (n, kd) if bias else None)
        if self.use_gate:
            self._gate_dense = self._projection("gate", "...d,dnh->...nh",
                                                (query_shape[-1], n, vd),
                                                (n, vd) if bias else None)
        self.value_dense = self._projection("value", "...d,dnh->...nh", (value_shape[-1], n, vd),
                                            (n, vd) if bias else None)
        self.output_dense = self._projection(
            "attention_output", f"...nh,nh{out_letters}->...{out_letters}", (n, vd) + out,
            out if bias else None)
        self._softmax = Softmax(axis=-1, dtype=self._dtype_policy)
        self._dropout_layer = Dropout(rate=self.dropout, seed=self.seed,
                                      dtype=self._dtype_policy)

    def _projection(self, name, equation, kernel_shape, bias_shape):
        options = {"kernel_initializer": self.kernel_initializer,
                   "bias_initializer": self.bias_initializer,
                   "kernel_regularizer": self.kernel_regularizer,
                   "bias_regularizer": self.bias_regularizer,
                   "kernel_constraint": self.kernel_constraint,
                   "bias_constraint": self.bias_constraint}
        layer = _Projection(equation, kernel_shape, bias_shape, options, name=name,
                            dtype=self._dtype_policy,
                            activity_regularizer=self._projection_activity_regularizer)
        layer.build(TensorShape((None,) * (len(kernel_shape) - 1)))
        return layer

    def _projections(self):
        return [p for p in (self.query_dense, self.key_dense,
                            self.__dict__.get("_gate_dense"), self.value_dense,
                            self.output_dense) if p is not None]

    def _assign_paths(self, prefix=None, seen=None):
        super()._assign_paths(prefix, seen)
        name_after_projections(self, prefix)

    # --- calling -------------------------------------------------------------------------------
    supports_masking = True   # the output keeps the query's mask

    def __call__(self, *args, **kwargs):
        # Keras also takes the inputs by name: mha(query=x, value=x, key=x)
        if not args and "query" in kwargs:
            args = (kwargs.pop("query"),)
        return super().__call__(*args, **kwargs)

    def call(self, query, value, key=None, attention_mask=None, return_attention_scores=False,
             training=None, use_causal_mask=False, *, query_mask=None, value_mask=None,
             key_mask=None):
        # Keras 3: the masks of query, value and key (given, or the tensors' own) join
        # attention_mask
        attention_mask = masking.attention_mask_from_inputs(
            query, value, key, attention_mask, query_mask, value_mask, key_mask)
        # Keras 3 then removes the inputs' masks: only the output keeps the query's, so a
        # residual Add of the (now unmasked) input and the output carries no mask
        if masking.any_masks():
            for tensor in (query, value, key):
                masking.set_mask(tensor, None)
        dtype = query.dtype
        value = _tensor_like(value, dtype)
        key = value if key is None else _tensor_like(key, dtype)
        if self.query_dense is None:
            self.build(query.shape, value.shape, key.shape)
        q_shape, v_shape = tuple(query.shape), tuple(value.shape)
        rank = len(q_shape)
        if len(v_shape) != rank or len(key.shape) != rank or v_shape[1:-1] != tuple(
                key.shape)[1:-1]:
            raise ValueError(f"MultiHeadAttention {self.name!r}: query {q_shape}, value "
                             f"{v_shape} and key {tuple(key.shape)} must have the same rank, "
                             f"and value and key the same dimensions but the last")
        q_axes, kv_axes = q_shape[1:-1], v_shape[1:-1]
        t_len, s_len = math.prod(q_axes), math.prod(kv_axes)
        if rank > 3:  # attention over all middle axes at once = over them flattened
            query = array_ops.reshape(query, (-1, t_len, q_shape[-1]))
            value = array_ops.reshape(value, (-1, s_len, v_shape[-1]))
            key = array_ops.reshape(key, (-1, s_len, key.shape[-1]))
        mask = self._attention_mask(attention_mask, use_causal_mask, rank, q_axes, kv_axes)

        q = self.query_dense(query)                           # (B, T, N, key_dim)
        k = self.key_dense(key)                               # (B, S, N, key_dim)
        v = self.value_dense(value)                           # (B, S, N, value_dim)
        q = q * convert_to_tensor(1.0 / math.sqrt(float(self.key_dim)), dtype=q.dtype)
        scores = einsum_ops.einsum("btnh,bsnh->bnts", q, k)
        # Keras 3 computes attention without dropout or returned scores with the backend's fused
        # dot_product_attention, which does not zero the rows of fully masked queries
        fused = self.dropout == 0 and not return_attention_scores and rank == 3
        probs = _masked_softmax(scores, mask, zero_masked=not fused)
        dropped = self._dropout_layer(probs, training=training) if self.dropout > 0 else probs
        heads = einsum_ops.einsum("bnts,bsnh->btnh", dropped, v)
        if self.use_gate:
            heads = heads * math_ops.sigmoid(self._gate_dense(query))
        output = self.output_dense(heads)
        if rank > 3:
            output = array_ops.reshape(output, (-1,) + q_axes + tuple(output.shape[2:]))
            probs = array_ops.reshape(probs, (-1, self.num_heads) + q_axes + kv_axes)
        return (output, probs) if return_attention_scores else output

    def _attention_mask(self, attention_mask, use_causal_mask, rank, q_axes, kv_axes):
        """The mask for scores ``(B, N, T, S)`` (with the middle axes flattened), or None."""
        t_len, s_len = math.prod(q_axes), math.prod(kv_axes)
        mask = None
        if attention_mask is not None:
            mask = _as_bool(attention_mask)
            full = q_axes + kv_axes
            if mask.ndim < len(full) or mask.ndim > len(full) + 1:
                raise ValueError(f"MultiHeadAttention {self.name!r}: attention_mask must be "
                                 f"(batch, {', '.join(map(str, full))}) or broadcastable to "
                                 f"it, got shape {tuple(mask.shape)}")
            if rank > 3:
                lead = tuple(mask.shape[:mask.ndim - len(full)])
                mask = array_ops.reshape(array_ops.broadcast_to(mask, lead + full),
                                         lead + (t_len, s_len))
            if mask.ndim == 3:  # (B, T, S) -> (B, 1, T, S): the same for every head
                mask = array_ops.expand_dims(mask, 1)
        if use_causal_mask:
            if rank > 3:
                raise ValueError(f"MultiHeadAttention {self.name!r}: use_causal_mask needs "
                                 f"(batch, sequence, features) inputs, got rank {rank}")
            causal = _causal(t_len, s_len)
            mask = causal if mask is None else math_ops.logical_and(mask, causal)
        if self.sliding_window is not None:
            if rank > 3:
                raise ValueError(f"MultiHeadAttention {self.name!r}: sliding_window needs "
                                 f"(batch, sequence, features) inputs, got rank {rank}")
            rows = B.xp.arange(t_len).reshape(-1, 1)
            band = Tensor(B.xp.abs(rows - B.xp.arange(s_len)) < self.sliding_window)
            mask = band if mask is None else math_ops.logical_and(mask, band)
        return mask

    # --- shapes and config ---------------------------------------------------------------------
    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        query_shape = tuple(query_shape)
        if value_shape is not None and key_shape is not None and \
                tuple(value_shape)[1:-1] != tuple(key_shape)[1:-1]:
            raise ValueError(f"MultiHeadAttention {self.name!r}: all dimensions of value and "
                             f"key except the last must be equal, got value "
                             f"{tuple(value_shape)} and key {tuple(key_shape)}")
        if self._output_shape_arg:
            return query_shape[:-1] + self._output_shape_arg
        return query_shape

    def compute_output_spec(self, query, value, key=None, attention_mask=None,
                            return_attention_scores=False, training=None,
                            use_causal_mask=False):
        key_shape = None if key is None else key.shape
        if self.query_dense is None:
            self.build(query.shape, value.shape, key_shape)
        out = TensorShape(self.compute_output_shape(query.shape, value.shape, key_shape))
        spec = (out, self._compute_dtype)
        if return_attention_scores:
            scores = (query.shape[0], self.num_heads) + tuple(query.shape[1:-1]) + tuple(
                value.shape[1:-1])
            return spec, (TensorShape(scores), self._compute_dtype)
        return spec

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout,
                "use_bias": self.use_bias, "use_gate": self.use_gate,
                "output_shape": self._output_shape_arg,
                "attention_axes": self.attention_axes, "sliding_window": self.sliding_window,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(
                    self._projection_activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint),
                "seed": self.seed}


# --- Attention / AdditiveAttention ---------------------------------------------------------------

class Attention(Layer):
    """Dot-product (Luong-style) attention over ``[query, value]`` or ``[query, value, key]``
    (``(B, Tq, dim)``, ``(B, Tv, dim)``, key defaulting to value):
    ``softmax(query @ key^T) @ value``, shape ``(B, Tq, dim)``.

    ``use_scale=True`` learns a scalar multiplying the scores; ``score_mode="concat"`` scores
    with ``sum(tanh(query + key))`` instead (times a learned scalar). ``mask=[query_mask,
    value_mask]`` (``(B, Tq)``, ``(B, Tv)``, True = keep) zeroes masked query rows and hides
    masked values; ``use_causal_mask`` lets query ``i`` see only values ``j <= i``.
    """

    _score_modes = ("dot", "concat")

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in self._score_modes:
            raise ValueError(f"{type(self).__name__}: score_mode must be one of "
                             f"{set(self._score_modes)}, got {score_mode!r}")
        if not 0 <= dropout < 1:
            raise ValueError(f"{type(self).__name__}: dropout must be in [0, 1), got {dropout}")
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        self.dropout = float(dropout)
        self.seed = seed

    def _validate(self, inputs, mask=None):
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)) or not 2 <= len(inputs) <= 3:
            raise ValueError(f"{name} layer must be called on a list of 2 or 3 inputs, namely "
                             f"[query, value] or [query, value, key], got {inputs!r}")
        if mask is not None and (not isinstance(mask, (list, tuple)) or
                                 not 2 <= len(mask) <= 3):
            raise ValueError(f"{name} layer mask must be a list [query_mask, value_mask], got "
                             f"{mask!r}")

    def build(self, input_shape):
        self._validate(input_shape)
        self.scale = self.add_weight(name="scale", shape=(), initializer="ones") \
            if self.use_scale else None
        self.concat_score_weight = self.add_weight(
            name="concat_score_weight", shape=(), initializer="ones") \
            if self.score_mode == "concat" else None

    def _calculate_scores(self, query, key):
        if self.score_mode == "dot":
            scores = linalg_ops.matmul(query, key, transpose_b=True)
            return scores if self.scale is None else scores * self.scale
        pairs = array_ops.expand_dims(query, -2) + array_ops.expand_dims(key, -3)
        if self.scale is not None:
            pairs = self.scale * pairs
        return self.concat_score_weight * reduce_ops.reduce_sum(math_ops.tanh(pairs), axis=-1)

    def call(self, inputs, mask=None, training=None, return_attention_scores=False,
             use_causal_mask=False):
        self._validate(inputs, mask)
        query = inputs[0]
        value = _tensor_like(inputs[1], query.dtype)
        key = value if len(inputs) < 3 else _tensor_like(inputs[2], query.dtype)
        for what, t in (("query", query), ("value", value), ("key", key)):
            if t.ndim < 3:
                raise ValueError(f"{type(self).__name__} {self.name!r}: {what} must be "
                                 f"(batch, steps, dim), got shape {tuple(t.shape)}")
        if tuple(key.shape)[-2] != tuple(value.shape)[-2]:
            raise ValueError(f"{type(self).__name__} {self.name!r}: key and value must have "
                             f"the same number of steps, got key {tuple(key.shape)} and value "
                             f"{tuple(value.shape)}")
        query_mask = None if mask is None or mask[0] is None else _as_bool(mask[0])
        value_mask = None if mask is None or mask[1] is None else _as_bool(mask[1])
        scores = self._calculate_scores(query, key)
        score_mask = None if value_mask is None else array_ops.expand_dims(value_mask, -2)
        if use_causal_mask:
            causal = _causal(scores.shape[-2], scores.shape[-1])
            score_mask = causal if score_mask is None else math_ops.logical_and(score_mask,
                                                                                causal)
        if score_mask is not None:
            big = 65504.0 if scores.dtype.name == "float16" else 1e9
            scores = math_ops.where(score_mask, scores,
                                    scores - convert_to_tensor(big, dtype=scores.dtype))
        weights = nn_ops.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = nn_ops.dropout(weights, self.dropout, seed=self.seed)
        output = linalg_ops.matmul(weights, value)
        if query_mask is not None:
            output = math_ops.where(array_ops.expand_dims(query_mask, -1), output,
                                    array_ops.zeros_like(output))
        return (output, weights) if return_attention_scores else output

    def compute_mask(self, inputs, mask=None):
        """The query's mask (Keras)."""
        return None if mask is None or mask[0] is None else _as_bool(mask[0])

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-1]) + (input_shape[1][-1],)

    def compute_output_spec(self, inputs, mask=None, training=None,
                            return_attention_scores=False, use_causal_mask=False):
        self._validate(inputs, mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        out = (TensorShape(self.compute_output_shape([query.shape, value.shape])),
               self._compute_dtype)
        if return_attention_scores:
            scores = tuple(query.shape[:-1]) + (key.shape[-2],)
            return out, (TensorShape(scores), self._compute_dtype)
        return out

    def get_config(self):
        return {**super().get_config(), "use_scale": self.use_scale,
                "score_mode": self.score_mode, "dropout": self.dropout, "seed": self.seed}


class AdditiveAttention(Attention):
    """Additive (Bahdanau-style) attention: scores ``sum(scale * tanh(query + key))`` over
    the features, with a learned ``scale`` vector of the feature size (``use_scale=True``,
    the default). Called like ``Attention``."""

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate(input_shape)
        dim = input_shape[0][-1]
        if dim is None:
            raise ValueError(f"AdditiveAttention {self.name!r}: the query's last dimension "
                             f"must be known, got {tuple(input_shape[0])}")
        self.scale = self.add_weight(name="scale", shape=(dim,),
                                     initializer="glorot_uniform") if self.use_scale else None
        self.concat_score_weight = None

    def _calculate_scores(self, query, key):
        pairs = math_ops.tanh(array_ops.expand_dims(query, -2) + array_ops.expand_dims(key, -3))
        if self.scale is not None:
            pairs = self.scale * pairs
        return reduce_ops.reduce_sum(pairs, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config


__all__ = ["MultiHeadAttention", "Attention", "AdditiveAttention"]
