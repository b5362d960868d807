"""EinsumDense: a dense layer whose product with the kernel is an einsum (Keras 3)."""
import re

from ...ops import einsum_ops
from .. import activations
from . import _config
from .base import Layer
from .core import set_weight_options

_FORMS = ((re.compile(r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)$"), None),
          (re.compile(r"\.\.\.([a-zA-Z]+),([a-zA-Z]+)->\.\.\.([a-zA-Z]+)$"), "left"),
          (re.compile(r"([a-zA-Z]{2,})\.\.\.,([a-zA-Z]+)->([a-zA-Z]+)\.\.\.$"), "right"))


def analyze_equation(equation, bias_axes, input_shape, output_shape):
    """``(kernel_shape, bias_shape or None, full_output_shape)`` of an EinsumDense equation
    for ``input_shape`` (with the batch dimension) and ``output_shape`` (without the batch
    and the dimensions an ellipsis stands for)."""
    equation = equation.replace(" ", "")
    for pattern, elided_side in _FORMS:
        match = pattern.match(equation)
        if match:
            break
    else:
        raise ValueError(f"EinsumDense: invalid equation {equation!r}; equations must have "
                         f"the form '[X],[Y]->[Z]', '...[X],[Y]->...[Z]' or "
                         f"'[X]...,[Y]->[Z]...'")
    input_spec, weight_spec, output_spec = match.groups()
    input_shape = list(input_shape)
    elided = len(input_shape) - len(input_spec)
    if elided < 0 or (elided and elided_side is None) or (elided_side == "left" and elided < 1):
        raise ValueError(f"EinsumDense: equation {equation!r} does not fit inputs of shape "
                         f"{tuple(input_shape)}")
    output = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    output.insert(0, input_shape[0])
    if elided_side == "left":
        output[1:1] = input_shape[1:elided]
        input_at = {d: i + elided for i, d in enumerate(input_spec)}
        output_at = {d: i + elided for i, d in enumerate(output_spec)}
    else:
        if elided:
            output.extend(input_shape[len(input_shape) - elided:])
        input_at = {d: i for i, d in enumerate(input_spec)}
        output_at = {d: i for i, d in enumerate(output_spec)}
    if len(output) != len(output_spec) + elided:
        needed = len(output_spec) - (0 if elided_side == "left" else 1)
        raise ValueError(f"EinsumDense: output_shape {output_shape!r} must have {needed} "
                         f"dimensions for the output spec {output_spec!r} of {equation!r}")
    for d in input_spec:
        if d in output_at:
            want, got = output[output_at[d]], input_shape[input_at[d]]
            if want is not None and got is not None and want != got:
                raise ValueError(f"EinsumDense: input shape {tuple(input_shape)} and output "
                                 f"shape {tuple(output)} do not match at the shared dimension "
                                 f"{d!r} of {equation!r}")
            if want is None:
                output[output_at[d]] = got
    for d in output_spec:
        if d not in input_spec and d not in weight_spec:
            raise ValueError(f"EinsumDense: dimension {d!r} of the output spec {output_spec!r} "
                             f"is in neither the input spec {input_spec!r} nor the weight spec "
                             f"{weight_spec!r}")
    kernel_shape = []
    for d in weight_spec:
        if d in input_at:
            kernel_shape.append(input_shape[input_at[d]])
        elif d in output_at:
            kernel_shape.append(output[output_at[d]])
        else:
            raise ValueError(f"EinsumDense: weight dimension {d!r} is in neither the input spec "
                             f"{input_spec!r} nor the output spec {output_spec!r}")
        if kernel_shape[-1] is None:
            raise ValueError(f"EinsumDense: the kernel dimension {d!r} of {equation!r} is "
                             f"unknown for input shape {tuple(input_shape)} and output shape "
                             f"{tuple(output)}")
    bias_shape = None
    if bias_axes:
        for d in bias_axes:
            if d not in output_spec:
                raise ValueError(f"EinsumDense: bias axis {d!r} is not in the output spec "
                                 f"{output_spec!r}")
        first = min(output_spec.index(d) for d in bias_axes)
        bias_shape = [output[output_at[d]] if d in bias_axes else 1
                      for d in output_spec[first:]]
        if elided_side != "left":
            bias_shape += [1] * elided
    return kernel_shape, bias_shape, output


class EinsumDense(Layer):
    """``activation(einsum(equation, inputs, kernel) + bias)``.

    ``equation`` is ``"<input>,<kernel>-><output>"`` (optionally with ``...`` at the left of
    input and output, or at the right of both); ``output_shape`` gives the output's
    dimensions without the batch dimension and those of the ellipsis (None: that of the input);
    ``bias_axes`` names the output letters the bias varies along.

        layer = EinsumDense("abc,cd->abd", output_shape=(None, 64), bias_axes="d")
        layer(minitf.zeros([2, 32, 128])).shape      # (2, 32, 64); kernel (128, 64)
    """
    _cast_integers = True

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, lora_alpha=None, **kwargs):
        super().__init__(**kwargs)
        if lora_rank:
            raise NotImplementedError("EinsumDense: LoRA (lora_rank) is not supported")
        self.equation = str(equation)
        self.partial_output_shape = ((output_shape,) if isinstance(output_shape, int)
                                     else tuple(output_shape))
        self.bias_axes = bias_axes
        set_weight_options(self, activation, bool(bias_axes), kernel_initializer,
                           bias_initializer, kernel_regularizer, bias_regularizer,
                           kernel_constraint, bias_constraint)
        self.full_output_shape = None

    def build(self, input_shape):
        kernel_shape, bias_shape, full = analyze_equation(
            self.equation, self.bias_axes, tuple(input_shape), self.partial_output_shape)
        self.full_output_shape = tuple(full)
        self.kernel = self.add_weight(name="kernel", shape=tuple(kernel_shape),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if bias_shape is not None:
            self.bias = self.add_weight(name="bias", shape=tuple(bias_shape),
                                        initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        else:
            self.bias = None

    def call(self, inputs):
        y = einsum_ops.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            y = y + self.bias
        return y if self._linear else self.activation(y)

    def compute_output_shape(self, input_shape):
        return analyze_equation(self.equation, self.bias_axes, tuple(input_shape),
                                self.partial_output_shape)[2]

    def get_config(self):
        config = {**super().get_config(), "output_shape": list(self.partial_output_shape),
                  "equation": self.equation,
                  "activation": activations.serialize(self.activation),
                  "bias_axes": self.bias_axes, **_config.weights(self, "kernel", "bias")}
        return config


__all__ = ["EinsumDense"]
