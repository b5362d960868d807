"""Embedding: integer ids -> rows of a trainable ``(input_dim, output_dim)`` table."""
from ... import dtypes
from ...ops import array_ops, math_ops
from .. import constraints, initializers, regularizers
from . import _config
from .base import Layer


class Embedding(Layer):
    """Look up ``embeddings[ids]``: ``(batch, ...) int -> (batch, ..., output_dim)``.

    Under mixed precision the gathered rows (not the whole table) are cast to the compute dtype.
    ``mask_zero=True``: id 0 is padding; the output carries the mask ``ids != 0`` that later
    layers (LSTM, GRU, pooling...) use to skip those steps (see ``masking.py``).

        emb = Embedding(1000, 64)
        emb(minitf.constant([[4, 20, 7]])).shape     # (1, 3, 64)
    """

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 input_length=None, **kwargs):
        super().__init__(**kwargs)
        if int(input_dim) < 1 or int(output_dim) < 1:
            raise ValueError(f"Embedding: input_dim and output_dim must be positive, got "
                             f"{input_dim}, {output_dim}")
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        # Ids are not autocast: float16 cannot hold integers above 2048 exactly.
        object.__setattr__(self, "_cast_np", None)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(name="embeddings",
                                          shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint,
                                          autocast=False)

    def call(self, inputs):
        ids = inputs
        if not ids.dtype.is_integer:
            ids = math_ops.cast(ids, dtypes.int32)
        out = array_ops.gather(self.embeddings, ids)
        if out._value.dtype != self._compute_dtype.np and self._compute_dtype.is_floating:
            out = math_ops.cast(out, self._compute_dtype)
        return out

    def compute_mask(self, inputs, mask=None):
        """With ``mask_zero``: True where the id is not 0 (the padding id)."""
        return math_ops.not_equal(inputs, 0) if self.mask_zero else None

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim, "mask_zero": self.mask_zero,
                **_config.weights(self, "embeddings")}
