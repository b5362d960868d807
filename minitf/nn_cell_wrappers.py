"""``tf.nn.RNNCellDropoutWrapper``, ``RNNCellResidualWrapper`` and ``RNNCellDeviceWrapper``:
Keras layers wrapping a recurrent cell (one with ``state_size`` and ``call(inputs, states)``),
usable wherever the cell is, such as ``keras.layers.RNN``.
"""
import hashlib
import numbers

from . import config as _config
from .keras.layers.base import Layer
from .ops import math_ops, nn_ops, random_ops
from .ops.registry import InvalidArgumentError


def _flatten(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def _pack_like(structure, leaves):
    """``leaves`` (a flat list, consumed in order) in the nesting of ``structure``."""
    it = iter(leaves)

    def pack(s):
        if isinstance(s, (list, tuple)):
            return type(s)(pack(v) for v in s)
        return next(it)
    return pack(structure)


class _RNNCellWrapper(Layer):
    """What the wrappers share: the wrapped cell's sizes, build, states and config."""

    def __init__(self, cell, **kwargs):
        if not callable(getattr(cell, "call", None)) or not hasattr(cell, "state_size"):
            raise TypeError(f"{type(self).__name__}: cell must be a recurrent cell with a "
                            f"state_size and call(inputs, states), got {cell!r}")
        super().__init__(**kwargs)
        self.cell = cell

    @property
    def wrapped_cell(self):
        return self.cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        from .keras.layers.recurrent_cells import cell_output_size
        return cell_output_size(self.cell)

    def build(self, inputs_shape):
        if not self.cell.built:
            self.cell.build(inputs_shape)
            if not self.cell.built:
                self.cell._mark_built()
        self._mark_built()

    def get_initial_state(self, batch_size=None, **kwargs):
        """The wrapped cell's initial states."""
        return self.cell.get_initial_state(batch_size)

    def call(self, inputs, states, training=None, **kwargs):
        if training is not None:
            kwargs["training"] = training
        return self._call_wrapped_cell(inputs, states, self.cell.call, **kwargs)

    def get_config(self):
        from .keras.layers.serialization import serialize
        return {**super().get_config(), "cell": serialize(self.cell)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .keras.layers.serialization import from_config_with_nested
        return from_config_with_nested(cls, config, "cell", custom_objects)


class RNNCellDropoutWrapper(_RNNCellWrapper):
    """Dropout on the inputs, outputs and/or new states of ``cell``, as TF's wrapper: keep
    probabilities below 1 drop at every call (training or not). With
    ``variational_recurrent`` one mask per wrapper (drawn at construction, shared by the
    batch and every step) is used; it needs ``dtype``, and ``input_size`` when
    ``input_keep_prob < 1``."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(
                dropout_state_filter_visitor):
            raise TypeError(f"RNNCellDropoutWrapper: dropout_state_filter_visitor must be "
                            f"callable, got {dropout_state_filter_visitor!r}")
        self._dropout_state_filter = dropout_state_filter_visitor
        for value, attr in ((input_keep_prob, "input_keep_prob"),
                            (state_keep_prob, "state_keep_prob"),
                            (output_keep_prob, "output_keep_prob")):
            if not isinstance(value, numbers.Real) or not 0 <= value <= 1:
                raise InvalidArgumentError(f"RNNCellDropoutWrapper: {attr} must be a number "
                                           f"between 0 and 1, got {value!r}")
            setattr(self, "_" + attr, float(value))
        self._variational_recurrent = bool(variational_recurrent)
        self._input_size = input_size
        self._seed = seed
        self._recurrent_input_noise = None
        self._recurrent_state_noise = None
        self._recurrent_output_noise = None
        if self._variational_recurrent:
            if dtype is None:
                raise InvalidArgumentError("RNNCellDropoutWrapper: with variational_recurrent="
                                           "True, dtype must be given")
            if self._input_keep_prob < 1.0:
                if input_size is None:
                    raise InvalidArgumentError(
                        "RNNCellDropoutWrapper: with variational_recurrent=True and "
                        "input_keep_prob < 1, input_size must be given")
                self._recurrent_input_noise = self._noise(input_size, "input", dtype)
            self._recurrent_state_noise = self._noise(cell.state_size, "state", dtype)
            self._recurrent_output_noise = self._noise(self.output_size, "output", dtype)

    def _gen_seed(self, salt_prefix, index):
        """The op seed of one dropout (TF's derivation from ``seed`` and a salt)."""
        if self._seed is None:
            return None
        text = f"{self._seed}{salt_prefix}_{index}".encode("utf-8")
        return int(hashlib.md5(text).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _noise(self, sizes, salt_prefix, dtype):
        """Uniform noise of shape ``(1, *size)`` per entry of ``sizes``."""
        leaves = _flatten(sizes if isinstance(sizes, (list, tuple)) else [sizes])
        noise = []
        for i, size in enumerate(leaves):
            dims = list(size.as_list()) if hasattr(size, "as_list") else [int(size)]
            noise.append(random_ops.uniform([1] + dims, dtype=dtype,
                                            seed=self._gen_seed(salt_prefix, i)))
        return noise

    def _dropout(self, values, salt_prefix, noise, keep_prob, which=None):
        leaves = _flatten(values)
        out = []
        for i, value in enumerate(leaves):
            if which is not None and not which[i]:
                out.append(value)
            elif noise is None:
                out.append(nn_ops.dropout(value, rate=1.0 - keep_prob,
                                          seed=self._gen_seed(salt_prefix, i)))
            else:
                mask = math_ops.floor(math_ops.cast(noise[i], value.dtype) + keep_prob)
                out.append(value / keep_prob * mask)
        return _pack_like(values, out) if isinstance(values, (list, tuple)) else out[0]

    def _call_wrapped_cell(self, inputs, states, cell_call_fn, **kwargs):
        if self._input_keep_prob < 1:
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise,
                                   self._input_keep_prob)
        output, new_states = cell_call_fn(inputs, states, **kwargs)
        if self._state_keep_prob < 1:
            which = None
            if self._dropout_state_filter is not None:
                which = [bool(self._dropout_state_filter(s)) for s in _flatten(new_states)]
            new_states = self._dropout(new_states, "state", self._recurrent_state_noise,
                                       self._state_keep_prob, which)
        if self._output_keep_prob < 1:
            output = self._dropout(output, "output", self._recurrent_output_noise,
                                   self._output_keep_prob)
        return output, new_states

    def get_config(self):
        config = {"input_keep_prob": self._input_keep_prob,
                  "output_keep_prob": self._output_keep_prob,
                  "state_keep_prob": self._state_keep_prob,
                  "variational_recurrent": self._variational_recurrent,
                  "input_size": self._input_size, "seed": self._seed}
        return {**super().get_config(), **config}


class RNNCellResidualWrapper(_RNNCellWrapper):
    """``cell`` with its output replaced by ``residual_fn(inputs, output)`` (default
    ``inputs + output``, which needs equal shapes)."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        if residual_fn is not None and not callable(residual_fn):
            raise TypeError(f"RNNCellResidualWrapper: residual_fn must be callable, got "
                            f"{residual_fn!r}")
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, states, cell_call_fn, **kwargs):
        output, new_states = cell_call_fn(inputs, states, **kwargs)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_states
        ins, outs = _flatten(inputs), _flatten(output)
        if len(ins) != len(outs):
            raise InvalidArgumentError(f"RNNCellResidualWrapper: inputs ({len(ins)} tensors) "
                                       f"and outputs ({len(outs)}) differ in structure")
        summed = []
        for x, y in zip(ins, outs):
            if tuple(x.shape) != tuple(y.shape):
                raise InvalidArgumentError(
                    f"RNNCellResidualWrapper: the inputs of shape {tuple(x.shape)} and the "
                    f"cell's outputs of shape {tuple(y.shape)} cannot be added; give a "
                    f"residual_fn or a cell whose output size is the input size")
            summed.append(x + y)
        res = _pack_like(output, summed) if isinstance(output, (list, tuple)) else summed[0]
        return res, new_states


class RNNCellDeviceWrapper(_RNNCellWrapper):
    """``cell`` run under ``tf.device(device)`` (which minitf accepts and records nothing
    for: every op runs on the backend's device)."""

    def __init__(self, cell, device, **kwargs):
        super().__init__(cell, **kwargs)
        self._device = device

    def get_initial_state(self, batch_size=None, **kwargs):
        with _config.device(self._device):
            return super().get_initial_state(batch_size)

    def _call_wrapped_cell(self, inputs, states, cell_call_fn, **kwargs):
        with _config.device(self._device):
            return cell_call_fn(inputs, states, **kwargs)

    def get_config(self):
        return {**super().get_config(), "device": self._device}


def install(tf):
    """Set the wrappers on ``tf.nn``."""
    tf.nn.RNNCellDropoutWrapper = RNNCellDropoutWrapper
    tf.nn.RNNCellResidualWrapper = RNNCellResidualWrapper
    tf.nn.RNNCellDeviceWrapper = RNNCellDeviceWrapper


__all__ = ["RNNCellDropoutWrapper", "RNNCellResidualWrapper", "RNNCellDeviceWrapper"]
