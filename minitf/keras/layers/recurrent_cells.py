"""Recurrent cells with Keras 3's weights and formulas: ``SimpleRNNCell``, ``LSTMCell``,
``GRUCell``.

A cell computes one time step, ``cell(x_t, states) -> (output, new_states)``. The recurrent
layers (``recurrent.py``) use it in two pieces so that the input part of every step is a single
matrix multiply over the whole sequence:

* ``_params(dtype)``: the weights in the compute dtype, split the way the steps use them;
* ``_project(x, params)``: ``x @ kernel (+ input bias)`` on the last axis of ``x``;
* ``_step(x_proj, states, params, recurrent_mask)``: the recurrent part of one step.

Weights are created as Keras creates them (same names, shapes, order and gate layout), so a
Keras ``.weights.h5`` file loads unchanged:

* ``SimpleRNNCell``: ``kernel (d, u)``, ``recurrent_kernel (u, u)``, ``bias (u,)``;
* ``LSTMCell``: ``kernel (d, 4u)``, ``recurrent_kernel (u, 4u)``, ``bias (4u,)``, gates
  ``i, f, c, o``; states ``[h, c]``;
* ``GRUCell``: ``kernel (d, 3u)``, ``recurrent_kernel (u, 3u)``, gates ``z, r, h``; ``bias``
  ``(2, 3u)`` (input and recurrent biases) with ``reset_after=True``, ``(3u,)`` otherwise.
"""
from ...ops import array_ops, linalg_ops, math_ops, nn_ops
from .. import activations, constraints, initializers, regularizers
from . import _config
from .base import Layer

__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells"]


def matmul_last(x, w):
    """``x @ w`` on the last axis of ``x`` (any rank >= 2): one 2-D matrix multiply."""
    shape = tuple(x._value.shape)
    if len(shape) == 2:
        return linalg_ops.matmul(x, w)
    flat = array_ops.reshape(x, (-1, shape[-1]))
    return array_ops.reshape(linalg_ops.matmul(flat, w),
                             shape[:-1] + (int(w._value.shape[-1]),))


def _like(var, dtype):
    """``var`` in ``dtype`` (a cast only under mixed precision)."""
    if var is None or var._value.dtype == dtype.np:
        return var
    return math_ops.cast(var, dtype)


def dropout_mask(shape, rate, dtype):
    """A Keras dropout mask (zeros with probability ``rate``, the rest ``1 / (1 - rate)``)."""
    return nn_ops.dropout(array_ops.ones(shape, dtype=dtype), rate)


class _RecurrentCell(Layer):
    """What the three cells share: options, weights and the single-step ``call``."""
    _gates = 1
    _cast_integers = True

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        kwargs.pop("implementation", None)  # Keras' kernel choice; the results are the same
        super().__init__(**kwargs)
        if isinstance(units, bool) or not isinstance(units, (int, float)) or units < 1 \
                or int(units) != units:
            raise ValueError(f"{type(self).__name__}: units must be a positive integer, got "
                             f"{units!r}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        # Keras clips the rates to [0, 1] and applies them only strictly inside (0, 1).
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape):
        input_dim = input_shape[-1] if len(input_shape) else None
        if input_dim is None:
            raise ValueError(f"{type(self).__name__} {self.name!r}: the last input dimension "
                             f"(features) must be known, got input shape "
                             f"{tuple(input_shape)}")
        width = self._gates * self.units
        self.kernel = self.add_weight(name="kernel", shape=(int(input_dim), width),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel",
                                                shape=(self.units, width),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=self._bias_shape(),
                                        initializer=self._bias_initializer(),
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        else:
            self.bias = None

    # --- the pieces the recurrent layers use ----------------------------------------------
    def _params(self, dtype):
        """The weights in ``dtype``: ``(kernel, recurrent_kernel, input bias, extra)``."""
        return (_like(self.kernel, dtype), _like(self.recurrent_kernel, dtype),
                _like(self.bias, dtype), None)

    def _project(self, x, params):
        kernel, _, input_bias, _ = params
        y = matmul_last(x, kernel)
        return y if input_bias is None else y + input_bias

    def _step(self, x_proj, states, params, recurrent_mask):
        raise NotImplementedError

    def _runs_fused(self):
        return False

    def _dropout_masks(self, inputs_shape, batch, dtype, training):
        """(input mask of shape ``(batch, features)`` or None, recurrent mask or None)."""
        mask = rec = None
        if training and 0.0 < self.dropout < 1.0:
            mask = dropout_mask((batch, inputs_shape[-1]), self.dropout, dtype)
        if training and 0.0 < self.recurrent_dropout < 1.0:
            rec = dropout_mask((batch, self.units), self.recurrent_dropout, dtype)
        return mask, rec

    # --- Keras' cell API -----------------------------------------------------------------------
    def call(self, inputs, states, training=None):
        """One step: ``(output, new_states)`` for inputs ``(batch, features)``; ``states`` is a
        list (or a single tensor for one-state cells, returned the same way)."""
        single = not isinstance(states, (list, tuple))
        state_list = [states] if single else list(states)
        shape = tuple(inputs._value.shape)
        mask, rec = self._dropout_masks(shape, shape[0], inputs.dtype, training)
        if mask is not None:
            inputs = inputs * mask
        params = self._params(inputs.dtype)
        output, new_states = self._step(self._project(inputs, params), state_list, params, rec)
        return output, (new_states[0] if single and len(new_states) == 1 else new_states)

    def get_initial_state(self, batch_size=None):
        """Zero states, one ``(batch_size, size)`` tensor per state."""
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) \
            else [self.state_size]
        return [array_ops.zeros((batch_size, size), dtype=self._compute_dtype)
                for size in sizes]

    def get_config(self):
        config = {**super().get_config(), "units": self.units,
                  "activation": activations.serialize(self.activation)}
        config.update(self._gate_config())
        config["use_bias"] = self.use_bias
        config.update(_config.weights(self, "kernel", "recurrent", "bias"))
        config.update(self._extra_config())
        config.update({"dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                       "seed": self.seed})
        return config

    def _gate_config(self):
        return {}

    def _extra_config(self):
        return {}


class SimpleRNNCell(_RecurrentCell):
    """``h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)``; one state."""

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, kernel_constraint, recurrent_constraint,
                         bias_constraint, dropout, recurrent_dropout, seed, **kwargs)

    def _step(self, x_proj, states, params, recurrent_mask):
        h = states[0] if recurrent_mask is None else states[0] * recurrent_mask
        output = self.activation(x_proj + linalg_ops.matmul(h, params[1]))
        return output, [output]


class LSTMCell(_RecurrentCell):
    """Long short-term memory step (Hochreiter & Schmidhuber 1997), Keras' formulation::

        i, f, c~, o = split(x @ kernel + h @ recurrent_kernel + bias, 4)
        c = sigma(f) * c_prev + sigma(i) * activation(c~);  h = sigma(o) * activation(c)

    with ``sigma = recurrent_activation``; states ``[h, c]``. ``unit_forget_bias=True``
    initializes the forget gate's bias to ones.
    """
    _gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, kernel_constraint, recurrent_constraint,
                         bias_constraint, dropout, recurrent_dropout, seed, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        units, init = self.units, self.bias_initializer

        def forget_gate_ones(shape, dtype=None):
            return array_ops.concat([
                initializers.get(init)((units,), dtype=dtype),
                initializers.get("ones")((units,), dtype=dtype),
                initializers.get(init)((2 * units,), dtype=dtype)], 0)
        return forget_gate_ones

    def _step(self, x_proj, states, params, recurrent_mask):
        h_prev, c_prev = states[0], states[1]
        h = h_prev if recurrent_mask is None else h_prev * recurrent_mask
        z = x_proj + linalg_ops.matmul(h, params[1])
        z_i, z_f, z_c, z_o = array_ops.split(z, 4, axis=-1)
        gate = self.recurrent_activation
        c = gate(z_f) * c_prev + gate(z_i) * self.activation(z_c)
        h = gate(z_o) * self.activation(c)
        return h, [h, c]

    def _runs_fused(self):
        """Whether a whole sequence may run as one ``lstm_sequence`` op: Keras' formulas with
        its default activations, in this class's own ``_step``."""
        return (type(self)._step is LSTMCell._step
                and self.activation in (activations.tanh, math_ops.tanh)
                and self.recurrent_activation in (activations.sigmoid, math_ops.sigmoid))

    def _gate_config(self):
        return {"recurrent_activation": activations.serialize(self.recurrent_activation)}

    def _extra_config(self):
        return {"unit_forget_bias": self.unit_forget_bias}


class GRUCell(_RecurrentCell):
    """Gated recurrent unit step (Cho et al. 2014), Keras' formulation::

        z = sigma(x_z + h @ R_z + b_z);  r = sigma(x_r + h @ R_r + b_r)
        reset_after=True:  h~ = activation(x_h + r * (h @ R_h + b_h))   (recurrent bias b)
        reset_after=False: h~ = activation(x_h + (r * h) @ R_h)
        h_new = z * h + (1 - z) * h~

    where ``x_* = x @ kernel_* + input bias`` and ``sigma = recurrent_activation``.
    """
    _gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, reset_after=True,
                 seed=None, **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, kernel_regularizer, recurrent_regularizer,
                         bias_regularizer, kernel_constraint, recurrent_constraint,
                         bias_constraint, dropout, recurrent_dropout, seed, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _params(self, dtype):
        kernel, recurrent, bias, _ = super()._params(dtype)
        if self.reset_after:
            input_bias, recurrent_bias = (None, None) if bias is None else \
                array_ops.unstack(bias, axis=0)
            return kernel, recurrent, input_bias, recurrent_bias
        # reset before: z and r use the first 2u columns, the candidate the last u
        return kernel, array_ops.split(recurrent, [2 * self.units, self.units], axis=1), \
            bias, None

    def _step(self, x_proj, states, params, recurrent_mask):
        h_prev = states[0]
        h = h_prev if recurrent_mask is None else h_prev * recurrent_mask
        x_z, x_r, x_h = array_ops.split(x_proj, 3, axis=-1)
        gate = self.recurrent_activation
        if self.reset_after:
            inner = linalg_ops.matmul(h, params[1])
            if params[3] is not None:
                inner = inner + params[3]
            r_z, r_r, r_h = array_ops.split(inner, 3, axis=-1)
            z, r = gate(x_z + r_z), gate(x_r + r_r)
            candidate = self.activation(x_h + r * r_h)
        else:
            zr_kernel, h_kernel = params[1]
            r_z, r_r = array_ops.split(linalg_ops.matmul(h, zr_kernel), 2, axis=-1)
            z, r = gate(x_z + r_z), gate(x_r + r_r)
            candidate = self.activation(x_h + linalg_ops.matmul(r * h, h_kernel))
        h_new = z * h_prev + (1.0 - z) * candidate
        return h_new, [h_new]

    def _gate_config(self):
        return {"recurrent_activation": activations.serialize(self.recurrent_activation)}

    def _extra_config(self):
        return {"reset_after": self.reset_after}


class StackedRNNCells(Layer):
    """Several cells run as one: at each step cell ``k + 1`` takes cell ``k``'s output.
    ``state_size`` lists each cell's ``state_size``, and the states are nested the same way
    (``[[h1, c1], [h2, c2]]`` for two LSTM cells). ``RNN([cell1, cell2])`` makes one.

        RNN(StackedRNNCells([LSTMCell(8), LSTMCell(4)]))(minitf.zeros([2, 5, 3])).shape  # (2, 4)
    """

    def __init__(self, cells, **kwargs):
        cells = list(cells) if isinstance(cells, (list, tuple)) else None
        if not cells:
            raise ValueError(f"StackedRNNCells: cells must be a non-empty list of cells, got "
                             f"{cells!r}")
        for cell in cells:
            if not callable(getattr(cell, "call", None)) or not hasattr(cell, "state_size"):
                raise ValueError(f"StackedRNNCells: every cell needs a call method and a "
                                 f"state_size attribute, got {cell!r}")
        super().__init__(**kwargs)
        self.cells = cells

    @property
    def state_size(self):
        return [cell.state_size for cell in self.cells]

    @property
    def output_size(self):
        return cell_output_size(self.cells[-1])

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(input_shape)
            input_shape = (input_shape[0], cell_output_size(cell))

    def get_initial_state(self, batch_size=None):
        """Each cell's initial states (its own ``get_initial_state``, else zeros), nested."""
        states = []
        for cell in self.cells:
            initial = getattr(cell, "get_initial_state", None)
            if initial is not None:
                states.append(initial(batch_size=batch_size))
            elif isinstance(cell.state_size, (list, tuple)):
                states.append([array_ops.zeros((batch_size, size), dtype=self._compute_dtype)
                               for size in cell.state_size])
            else:
                states.append(array_ops.zeros((batch_size, cell.state_size),
                                              dtype=self._compute_dtype))
        return states

    def call(self, inputs, states, training=None):
        """One step of every cell in turn: ``(last cell's output, [each cell's new states])``."""
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            nested = isinstance(cell_states, (list, tuple))
            kwargs = {} if training is None else {"training": training}
            inputs, cell_states = cell(inputs, list(cell_states) if nested else [cell_states],
                                       **kwargs)
            if not nested and isinstance(cell_states, (list, tuple)) and len(cell_states) == 1:
                cell_states = cell_states[0]
            new_states.append(cell_states)
        return inputs, new_states

    def get_config(self):
        from .serialization import serialize
        return {**super().get_config(), "cells": [serialize(cell) for cell in self.cells]}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import deserialize
        config = dict(config)
        cells = [deserialize(cell, custom_objects) if isinstance(cell, dict) else cell
                 for cell in config.pop("cells")]
        return cls(cells, **config)


def cell_output_size(cell):
    """A cell's ``output_size``, else the size of its first state (Keras' rule)."""
    size = getattr(cell, "output_size", None)
    if size is not None:
        return size
    size = cell.state_size
    return size[0] if isinstance(size, (list, tuple)) else size
