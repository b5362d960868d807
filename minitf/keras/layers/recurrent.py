"""Recurrent layers: ``RNN(cell)``, ``SimpleRNN``, ``LSTM`` and ``GRU`` (Keras 3's API).

Inputs are ``(batch, timesteps, features)``. The layers run a Python loop over the time steps
built from registered ops, so gradients (of any order) and ``minitf.function`` tracing need
nothing special; inside a traced function the loop is unrolled for the traced sequence length.
For the built-in cells the input part of all steps is one matrix multiply
(``x @ kernel + bias`` over the whole sequence) and the loop only runs the recurrent part.

Each layer holds its cell as ``layer.cell`` (the weights live there, as in Keras: a Keras
``.weights.h5`` file stores them under ``<layer>/cell/vars``).

    lstm = LSTM(8, return_sequences=True, return_state=True)
    seq, h, c = lstm(minitf.random.normal([4, 10, 3]))     # (4, 10, 8), (4, 8), (4, 8)
"""
from ...nest import flatten
from ...ops import array_ops, math_ops
from ...ops.convert import convert_to_tensor
from ...tensor import Tensor, Variable
from . import masking
from .base import Layer
from .tracking import _CTX
from .recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell, _RecurrentCell

__all__ = ["RNN", "SimpleRNN", "LSTM", "GRU"]


def _state_sizes(cell):
    size = getattr(cell, "state_size", None)
    if isinstance(size, int):
        return [size]
    if isinstance(size, (list, tuple)) and size and all(isinstance(s, int) for s in size):
        return list(size)
    raise ValueError(f"RNN: the cell {cell!r} needs a state_size attribute (an integer or a "
                     f"list of integers, one per state), got {size!r}")


def check_sequences(layer, shape):
    if len(shape) != 3:
        raise ValueError(f"Input 0 of layer {layer.name!r} ({type(layer).__name__}) is "
                         f"incompatible with the layer: expected ndim=3 (batch, timesteps, "
                         f"features), found ndim={len(shape)}. Full shape received: "
                         f"{tuple(shape)}")


class RNN(Layer):
    """Run ``cell`` over the time axis: ``RNN(LSTMCell(8))`` computes what ``LSTM(8)`` does.

    ``cell`` is a layer with a ``state_size`` (an int, or a list for several states) whose
    ``call(inputs, states)`` returns ``(output, new_states)``; the built-in cells take a faster
    path (one input projection for the whole sequence). ``return_sequences``: all outputs
    ``(batch, timesteps, units)`` instead of the last; ``return_state``: also return the final
    states, as ``(output, *states)``; ``go_backwards``: process the sequence in reverse (the
    returned sequence is in processing order, i.e. reversed). ``initial_state`` (call argument)
    is a list with one ``(batch, size)`` tensor per state (zeros by default).

    ``mask`` (call argument, or the mask of the input such as ``Embedding(mask_zero=True)``'s):
    ``(batch, timesteps)`` bools; at a masked step the states keep their values and the output
    repeats the previous output (zeros with ``zero_output_for_mask``). With
    ``return_sequences`` the output carries the mask on.

    ``stateful=True``: the final states of a call are the initial states of the next one (example
    ``i`` of a batch continues example ``i`` of the previous batch). The batch size is then fixed
    at build (give it to ``Input(batch_size=...)`` or the first layer's ``batch_input_shape``);
    the states live in ``layer.states`` (non-trainable variables, not among the layer's weights,
    as in Keras) and ``reset_state()`` / ``reset_states()`` sets them back to the cell's initial
    state. ``unroll`` is accepted and has no effect (the loop is always a Python loop).
    """
    _cast_integers = True

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        for key in ("implementation", "use_cudnn"):  # Keras' kernel choices
            kwargs.pop(key, None)
        if kwargs.pop("time_major", False):
            raise NotImplementedError(f"{type(self).__name__}: time_major=True is not "
                                      f"supported; pass (batch, timesteps, features) inputs")
        if isinstance(cell, (list, tuple)):
            raise NotImplementedError(f"{type(self).__name__}: a list of cells (stacked cells) "
                                      f"is not supported; stack RNN layers with "
                                      f"return_sequences=True instead")
        if not isinstance(cell, Layer):
            raise ValueError(f"{type(self).__name__}: cell must be a keras layer with a "
                             f"state_size and call(inputs, states), got {cell!r}")
        _state_sizes(cell)
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        object.__setattr__(self, "states", None)   # untracked: Keras keeps them out of weights

    @property
    def state_size(self):
        return _state_sizes(self.cell)

    def __call__(self, *args, **kwargs):
        # initial_state travels as a positional argument so that the KerasTensors in it are
        # inputs of the functional graph (keyword arguments are not walked for inputs).
        if len(args) == 1 and kwargs.get("initial_state") is not None:
            args = args + (kwargs.pop("initial_state"),)
        return super().__call__(*args, **kwargs)

    def build(self, sequences_shape, initial_state_shape=None):
        check_sequences(self, sequences_shape)
        if not self.cell.built:
            self.cell.build((sequences_shape[0],) + tuple(sequences_shape[2:]))
        if self.stateful:
            if self.states is not None:
                self.reset_state()
                return
            batch = sequences_shape[0]
            if batch is None:
                raise ValueError(
                    f"{type(self).__name__} {self.name!r}: with stateful=True the batch size "
                    f"must be static; got input shape {tuple(sequences_shape)}. Give it with "
                    f"Input(batch_size=...) or the first layer's batch_input_shape=")
            states = [Variable(state, trainable=False, name="rnn_state")
                      for state in self.get_initial_state(int(batch))]
            object.__setattr__(self, "states", states)

    def get_initial_state(self, batch_size):
        """The cell's initial states (its ``get_initial_state`` where it has one, else zeros):
        a list with one ``(batch_size, size)`` tensor per state."""
        cell_states = getattr(self.cell, "get_initial_state", None)
        if cell_states is None:
            return [array_ops.zeros((batch_size, size), dtype=self._compute_dtype)
                    for size in self.state_size]
        states = cell_states(batch_size=batch_size)
        return list(states) if isinstance(states, (list, tuple)) else [states]

    def reset_state(self):
        """Set a stateful layer's states back to the cell's initial states."""
        if self.states is not None:
            batch = int(self.states[0].shape[0])
            for variable, value in zip(self.states, self.get_initial_state(batch)):
                variable.assign(value)

    def reset_states(self):
        """Alias of ``reset_state`` (tf.keras 2's name)."""
        self.reset_state()

    def _initial_states(self, initial_state, batch, dtype):
        sizes = self.state_size
        if initial_state is None:
            return [array_ops.zeros((batch, size), dtype=dtype) for size in sizes]
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) \
            else [initial_state]
        if len(states) != len(sizes):
            raise ValueError(f"{type(self).__name__} {self.name!r}: initial_state has "
                             f"{len(states)} tensor(s), the cell has {len(sizes)} state(s) of "
                             f"sizes {sizes}")
        out = []
        for i, (state, size) in enumerate(zip(states, sizes)):
            state = state if isinstance(state, Tensor) else convert_to_tensor(state)
            shape = tuple(state._value.shape)
            if shape != (batch, size):
                raise ValueError(f"{type(self).__name__} {self.name!r}: initial_state[{i}] "
                                 f"has shape {shape}, expected (batch, units) = "
                                 f"{(batch, size)}")
            out.append(state if state._value.dtype == dtype.np else math_ops.cast(state, dtype))
        return out

    def call(self, sequences, initial_state=None, mask=None, training=None):
        shape = tuple(sequences._value.shape)
        check_sequences(self, shape)
        batch, steps = shape[0], shape[1]
        if steps == 0:
            raise ValueError(f"{type(self).__name__} {self.name!r}: the input sequences have "
                             f"no time steps (shape {shape})")
        if self.stateful and self.states is not None:
            expected = int(self.states[0].shape[0])
            if batch != expected:
                raise ValueError(
                    f"{type(self).__name__} {self.name!r} is stateful: the batch size of the "
                    f"input sequences must stay the one of its states. Expected batch size: "
                    f"{expected}; received batch size: {batch} (input shape {shape})")
            if initial_state is None:   # snapshots: the states are assigned after the loop
                initial_state = [state.read_value() for state in self.states]
        states = self._initial_states(initial_state, batch, sequences.dtype)
        cell = self.cell
        if isinstance(cell, _RecurrentCell):
            x_mask, rec_mask = cell._dropout_masks(shape, batch, sequences.dtype, training)
            if x_mask is not None:  # one mask for every step (Keras' variational dropout)
                sequences = sequences * array_ops.reshape(x_mask, (batch, 1, shape[2]))
            params = cell._params(sequences.dtype)
            inputs = array_ops.unstack(cell._project(sequences, params), axis=1)

            def step(x_t, states):
                return cell._step(x_t, states, params, rec_mask)
        else:
            inputs = array_ops.unstack(sequences, axis=1)
            kwargs = {} if training is None else {"training": training}

            def step(x_t, states):
                output, new = cell(x_t, states, **kwargs)
                return output, list(new) if isinstance(new, (list, tuple)) else [new]
        if self.go_backwards:
            inputs = inputs[::-1]
        if mask is not None:
            step = masking.masked_rnn_step(step, masking.rnn_step_masks(
                self, mask, batch, steps, self.go_backwards), self.zero_output_for_mask)
        outputs = []
        for x_t in inputs:
            output, states = step(x_t, states)
            if self.return_sequences:
                outputs.append(output)
        if self.return_sequences:
            output = array_ops.stack(outputs, axis=1)
        if self.stateful and self.states is not None and not _CTX.placeholder_run:
            for variable, state in zip(self.states, states):
                variable.assign(state)
        if self.return_state:
            return (output, *states)
        return output

    def compute_mask(self, inputs, mask):
        """The input's mask with ``return_sequences`` (None for the states), else None."""
        mask = flatten(mask)[0] if isinstance(mask, (list, tuple)) else mask
        output_mask = mask if self.return_sequences else None
        return [output_mask] + [None] * len(self.state_size) if self.return_state \
            else output_mask

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        check_sequences(self, sequences_shape)
        batch, length = sequences_shape[0], sequences_shape[1]
        size = getattr(self.cell, "output_size", None) or self.state_size[0]
        output = (batch, length, size) if self.return_sequences else (batch, size)
        if self.return_state:
            return (output,) + tuple((batch, s) for s in self.state_size)
        return output

    def get_config(self):
        from .serialization import serialize
        return {**super().get_config(), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards,
                "stateful": self.stateful, "unroll": self.unroll,
                "zero_output_for_mask": self.zero_output_for_mask, "cell": serialize(self.cell)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import deserialize
        config = dict(config)
        cell = config.pop("cell")
        if isinstance(cell, dict):
            cell = deserialize(cell, custom_objects)
        return cls(cell, **config)


# --- the layers with a built-in cell -----------------------------------------------------------

_CELL_OPTIONS = ("units", "activation", "use_bias", "kernel_initializer",
                 "recurrent_initializer", "bias_initializer", "kernel_regularizer",
                 "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
                 "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout")


class _CellLayer(RNN):
    """An RNN whose cell it creates from its own arguments (SimpleRNN, LSTM, GRU)."""
    _cell_class = None
    _cell_name = None

    def __init__(self, cell_options, return_sequences, return_state, go_backwards, stateful,
                 unroll, **kwargs):
        cell = self._cell_class(**cell_options, dtype=kwargs.get("dtype"),
                                trainable=kwargs.get("trainable", True), name=self._cell_name,
                                implementation=kwargs.pop("implementation", 2))
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll, **kwargs)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        return super().call(sequences, initial_state=initial_state, mask=mask,
                            training=training)

    def get_config(self):
        config = super().get_config()
        del config["cell"]
        cell = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell.pop(key, None)
        config.update(cell)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)


def _delegate(name):
    return property(lambda self: getattr(self.cell, name),
                    doc=f"The cell's ``{name}``.")


for _name in _CELL_OPTIONS + ("seed", "recurrent_activation", "unit_forget_bias",
                              "reset_after"):
    setattr(_CellLayer, _name, _delegate(_name))


class SimpleRNN(_CellLayer):
    """Fully-connected RNN: ``h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel +
    bias)``; the output is ``h``. See ``RNN`` for the sequence options."""
    _cell_class = SimpleRNNCell
    _cell_name = "simple_rnn_cell"

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, seed=None, **kwargs):
        options = dict(units=units, activation=activation, use_bias=use_bias,
                       kernel_initializer=kernel_initializer,
                       recurrent_initializer=recurrent_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       recurrent_regularizer=recurrent_regularizer,
                       bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                       recurrent_constraint=recurrent_constraint,
                       bias_constraint=bias_constraint, dropout=dropout,
                       recurrent_dropout=recurrent_dropout, seed=seed)
        super().__init__(options, return_sequences, return_state, go_backwards, stateful,
                         unroll, activity_regularizer=activity_regularizer, **kwargs)


class LSTM(_CellLayer):
    """Long short-term memory layer (``LSTMCell`` run over time); states ``[h, c]``, so
    ``return_state=True`` returns ``(output, h, c)``. See ``RNN`` for the sequence options."""
    _cell_class = LSTMCell
    _cell_name = "lstm_cell"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, seed=None, return_sequences=False,
                 return_state=False, go_backwards=False, stateful=False, unroll=False,
                 **kwargs):
        options = dict(units=units, activation=activation,
                       recurrent_activation=recurrent_activation, use_bias=use_bias,
                       kernel_initializer=kernel_initializer,
                       recurrent_initializer=recurrent_initializer,
                       bias_initializer=bias_initializer, unit_forget_bias=unit_forget_bias,
                       kernel_regularizer=kernel_regularizer,
                       recurrent_regularizer=recurrent_regularizer,
                       bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                       recurrent_constraint=recurrent_constraint,
                       bias_constraint=bias_constraint, dropout=dropout,
                       recurrent_dropout=recurrent_dropout, seed=seed)
        super().__init__(options, return_sequences, return_state, go_backwards, stateful,
                         unroll, activity_regularizer=activity_regularizer, **kwargs)


class GRU(_CellLayer):
    """Gated recurrent unit layer (``GRUCell`` run over time). ``reset_after=True`` (the
    default, cuDNN-compatible) keeps separate input and recurrent biases, ``bias`` of shape
    ``(2, 3 * units)``. See ``RNN`` for the sequence options."""
    _cell_class = GRUCell
    _cell_name = "gru_cell"

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, reset_after=True, **kwargs):
        options = dict(units=units, activation=activation,
                       recurrent_activation=recurrent_activation, use_bias=use_bias,
                       kernel_initializer=kernel_initializer,
                       recurrent_initializer=recurrent_initializer,
                       bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                       recurrent_regularizer=recurrent_regularizer,
                       bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                       recurrent_constraint=recurrent_constraint,
                       bias_constraint=bias_constraint, dropout=dropout,
                       recurrent_dropout=recurrent_dropout, reset_after=reset_after, seed=seed)
        super().__init__(options, return_sequences, return_state, go_backwards, stateful,
                         unroll, activity_regularizer=activity_regularizer, **kwargs)
