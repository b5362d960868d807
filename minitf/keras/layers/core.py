"""Core layers: Dense, Dropout, Flatten, Reshape, Activation."""
import math

from ...ops import array_ops, fused_ops, linalg_ops, nn_ops
from ...ops.registry import apply2, lookup
from .. import activations, initializers
from .base import Layer

_MATMUL = lookup("matmul")
_FUSED_ACTIVATIONS = {activations.linear: "linear", activations.relu: "relu",
                      activations.sigmoid: "sigmoid", activations.tanh: "tanh"}


class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` on the last axis.

    ``kernel`` has shape ``(input_dim, units)``, ``bias`` ``(units,)``. Inputs of rank > 2 are
    flattened to 2-D around the product (one matrix multiply, whatever the rank).

        layer = Dense(10, activation="relu")
        layer(minitf.random.normal([7, 5])).shape    # (7, 10); layer.kernel.shape == (5, 10)
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        if int(units) != units or units < 1:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self._linear = self.activation is activations.linear

    def build(self, input_shape):
        in_dim = input_shape[-1] if len(input_shape) else None
        if in_dim is None:
            raise ValueError(f"Dense {self.name!r}: the last input dimension must be known, got "
                             f"input shape {tuple(input_shape)}")
        self.kernel = self.add_weight(name="kernel", shape=(in_dim, self.units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.units,),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        else:
            self.bias = None

    def call(self, inputs):
        kernel = self.kernel
        shape = inputs._value.shape
        if len(shape) == 2 and shape[1] == kernel._value.shape[0] \
                and inputs._value.dtype == kernel._value.dtype:
            y = apply2(_MATMUL, inputs, kernel)
        elif len(shape) > 2:
            flat = array_ops.reshape(inputs, (-1, shape[-1]))
            y = array_ops.reshape(linalg_ops.matmul(flat, kernel), tuple(shape[:-1]) +
                                  (self.units,))
        else:
            y = linalg_ops.matmul(inputs, kernel)  # validates and explains shape/dtype errors
        if self.bias is not None:
            fused = _FUSED_ACTIVATIONS.get(self.activation)
            if fused is not None and fused_ops.use_fused_layers():   # the GPU: one kernel
                return fused_ops.bias_activation(y, self.bias, fused)
            y = y + self.bias
        return y if self._linear else self.activation(y)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer)}


class Dropout(Layer):
    """Zero a fraction ``rate`` of the inputs (scaling the rest by 1/(1-rate)) when training."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed

    def call(self, inputs, training=None):
        if training and self.rate > 0:
            return nn_ops.dropout(inputs, self.rate, noise_shape=self.noise_shape)
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}


class Flatten(Layer):
    """Collapse all dimensions but the batch: ``(N, d1, d2, ...) -> (N, d1*d2*...)``."""
    _passthrough_dtype = True

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError("Flatten: only data_format='channels_last' is supported")

    def call(self, inputs):
        shape = inputs._value.shape
        if len(shape) == 2:
            return inputs
        return array_ops.reshape(inputs, (shape[0], -1) if len(shape) else (1, 1))

    def compute_output_shape(self, input_shape):
        rest = tuple(input_shape[1:])
        n = None if any(d is None for d in rest) else math.prod(rest)
        return (input_shape[0], n)


class Reshape(Layer):
    """Reshape each example to ``target_shape`` (no batch dimension; one entry may be -1)."""
    _passthrough_dtype = True

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError(f"Reshape: at most one -1 in target_shape, got {self.target_shape}")

    def call(self, inputs):
        return array_ops.reshape(inputs, (inputs._value.shape[0],) + self.target_shape)

    def compute_output_shape(self, input_shape):
        target = list(self.target_shape)
        if -1 in target:
            rest = tuple(input_shape[1:])
            if any(d is None for d in rest):
                target[target.index(-1)] = None
            else:
                known = math.prod(d for d in target if d != -1)
                total = math.prod(rest)
                if total % known:
                    raise ValueError(f"Reshape: cannot reshape {rest} to {self.target_shape}")
                target[target.index(-1)] = total // known
        elif None not in input_shape[1:] and math.prod(input_shape[1:]) != math.prod(target):
            raise ValueError(f"Reshape {self.name!r}: input shape {tuple(input_shape)[1:]} has "
                             f"{math.prod(input_shape[1:])} values, target {self.target_shape} "
                             f"{math.prod(target)}")
        return (input_shape[0],) + tuple(target)

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


class Activation(Layer):
    """Apply an activation (a name such as ``"softmax"`` or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(),
                "activation": activations.serialize(self.activation)}


__all__ = ["Dense", "Dropout", "Flatten", "Reshape", "Activation"]
