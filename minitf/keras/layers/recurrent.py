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
from ...nest import flatten, map_structure, pack_sequence_as
from ...ops import array_ops, lstm_ops, math_ops
from ...ops.convert import convert_to_tensor
from ...tensor import Tensor, TensorShape, Variable
from . import masking
from .base import Layer, _is_shape, _map_leaves
from .tracking import _CTX
from .recurrent_cells import (GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells,
                              _RecurrentCell, cell_output_size, matmul_last)

__all__ = ["RNN", "SimpleRNN", "LSTM", "GRU"]


def _state_spec(cell):
    """The cell's states as a list (one entry per state; a nested list for a cell of cells)
    of shapes without the batch dimension, as tuples: an int size is ``(size,)``, a
    ``TensorShape`` its dimensions."""
    def spec(size):
        if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
            return (size,)
        if isinstance(size, TensorShape) and size.rank is not None and \
                all(d is not None for d in size.as_list()):
            return tuple(size.as_list())
        if isinstance(size, (list, tuple)) and size:
            return [spec(s) for s in size]
        raise ValueError(f"RNN: the cell {cell!r} needs a state_size attribute (an integer, a "
                         f"TensorShape, or a list of them, one per state), got "
                         f"{getattr(cell, 'state_size', None)!r}")
    out = spec(getattr(cell, "state_size", None))
    return [out] if isinstance(out, tuple) else out


def _spec_leaves(spec):
    return [leaf for item in spec for leaf in (_spec_leaves(item) if isinstance(item, list)
                                               else [item])]


def _zero_states(spec, batch, dtype):
    """Zeros for every state of ``spec``, flat: one ``(batch, *shape)`` tensor each."""
    return [array_ops.zeros((batch,) + shape, dtype=dtype) for shape in _spec_leaves(spec)]


def _pack(spec, flat):
    """``flat`` (one value per leaf of ``spec``, in order) nested as ``spec``."""
    flat = iter(flat)

    def build(item):
        return [build(x) for x in item] if isinstance(item, list) else next(flat)
    return build(spec)


def _sequence_shapes(layer, shapes):
    """The shapes of the input sequences, one per sequence (several for a cell that takes a
    nest of inputs), each ``(batch, timesteps, ...)`` with the same batch and timesteps."""
    if _is_shape(shapes):
        check_sequences(layer, shapes)
        return [tuple(shapes)]
    flat = []
    _map_leaves(lambda shape: flat.append(tuple(shape)), shapes, _is_shape)
    for shape in flat:
        if len(shape) < 3 or shape[:2] != flat[0][:2]:
            raise ValueError(f"{type(layer).__name__} {layer.name!r}: nested input sequences "
                             f"must each be (batch, timesteps, ...) with one batch size and "
                             f"one number of timesteps, got shapes {flat}")
    return flat


def _pack_like(structure, flat):
    """``flat`` nested as ``structure``, a nest of tensors or of shapes (lists and tuples)."""
    flat = iter(flat)
    return _map_leaves(lambda _: next(flat), structure,
                       lambda v: isinstance(v, Tensor) or _is_shape(v))


def _stack_steps(outputs):
    """The per-step outputs (tensors or nests of them) stacked along a new time axis."""
    if isinstance(outputs[0], Tensor):
        return array_ops.stack(outputs, axis=1)
    columns = zip(*(flatten(output) for output in outputs))
    return pack_sequence_as(outputs[0], [array_ops.stack(list(c), axis=1) for c in columns])


def _cell_step(cell, step_shape, dtype, training):
    """``step(x_t, states) -> (output, new states)`` for one cell: a built-in cell with its
    dropout masks drawn once per sequence (as Keras does), a stack of cells one after the
    other, any other cell through its ``call``."""
    if isinstance(cell, _RecurrentCell):
        x_mask, rec_mask = cell._dropout_masks(step_shape, step_shape[0], dtype, training)
        params = cell._params(dtype)

        def step(x_t, states):
            if x_mask is not None:
                x_t = x_t * x_mask
            states = list(states) if isinstance(states, (list, tuple)) else [states]
            return cell._step(cell._project(x_t, params), states, params, rec_mask)
        return step
    if isinstance(cell, StackedRNNCells):
        steps, shape = [], step_shape
        for sub in cell.cells:
            steps.append(_cell_step(sub, shape, dtype, training))
            shape = (step_shape[0], cell_output_size(sub))

        def step(x_t, states):
            new = []
            for sub_step, sub_states in zip(steps, states):
                x_t, sub_new = sub_step(x_t, sub_states)
                new.append(sub_new)
            return x_t, new
        return step
    kwargs = {} if training is None else {"training": training}
    return lambda x_t, states: cell(x_t, states, **kwargs)


def _fused_lstm(sequences, params, states, go_backwards):
    """``(sequence, last output, [h, c])`` of an LSTM cell over ``sequences``, its loop in one
    op (``lstm_ops.lstm_sequence``, time-major; it adds the bias)."""
    kernel, recurrent_kernel, bias, _ = params
    projected = matmul_last(array_ops.transpose(sequences, (1, 0, 2)), kernel)
    if go_backwards:
        projected = projected[::-1]
    if bias is None:
        bias = array_ops.zeros((int(kernel.shape[-1]),), dtype=kernel.dtype)
    steps = lstm_ops.lstm_sequence(projected, bias, states[0], states[1], recurrent_kernel)
    last_h, last_c = steps[-1, :, 0], steps[-1, :, 1]
    return array_ops.transpose(steps[:, :, 0], (1, 0, 2)), last_h, [last_h, last_c]


def check_sequences(layer, shape):
    """Raise unless ``shape`` has the rank of the layer's input sequences: 3, ``(batch,
    timesteps, features)``, unless its cell (a wrapped layer's cell for ``Bidirectional``)
    declares another as ``_sequence_ndim`` / ``_sequence_layout`` (as ``ConvLSTMCell``)."""
    cell = getattr(getattr(layer, "forward_layer", layer), "cell", None)
    ndim = getattr(cell, "_sequence_ndim", 3)
    if len(shape) != ndim:
        layout = getattr(cell, "_sequence_layout", "(batch, timesteps, features)")
        raise ValueError(f"Input 0 of layer {layer.name!r} ({type(layer).__name__}) is "
                         f"incompatible with the layer: expected ndim={ndim} {layout}, found "
                         f"ndim={len(shape)}. Full shape received: {tuple(shape)}")


class RNN(Layer):
    """Run ``cell`` over the time axis: ``RNN(LSTMCell(8))`` computes what ``LSTM(8)`` does.

    ``cell`` is a layer with a ``state_size`` (an int, a ``TensorShape``, or a list of them
    for several states) whose ``call(inputs, states)`` returns ``(output, new_states)``; the
    built-in cells take a faster path (one input projection for the whole sequence). A list of
    cells runs as ``StackedRNNCells`` (states nested per cell). A cell may take a tuple of
    input sequences (each ``(batch, timesteps, ...)``) and return nested outputs.

    ``return_sequences``: all outputs ``(batch, timesteps, units)`` instead of the last;
    ``return_state``: also return the final states, as ``(output, *states)``;
    ``go_backwards``: process the sequence in reverse (the returned sequence is in processing
    order, i.e. reversed). ``initial_state`` (call argument) is a list with one ``(batch,
    size)`` tensor per state (zeros by default; nested as the states, or flat).

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
            cell = StackedRNNCells(cell)
        if not isinstance(cell, Layer):
            raise ValueError(f"{type(self).__name__}: cell must be a keras layer with a "
                             f"state_size and call(inputs, states), got {cell!r}")
        _state_spec(cell)
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
        """The cell's ``state_size`` as a list (one entry per state), as Keras 3."""
        size = self.cell.state_size
        return list(size) if isinstance(size, (list, tuple)) else [size]

    def __call__(self, *args, **kwargs):
        # initial_state travels as a positional argument so that the KerasTensors in it are
        # inputs of the functional graph (keyword arguments are not walked for inputs).
        if len(args) == 1 and kwargs.get("initial_state") is not None:
            args = args + (kwargs.pop("initial_state"),)
        return super().__call__(*args, **kwargs)

    def build(self, sequences_shape, initial_state_shape=None):
        shapes = _sequence_shapes(self, sequences_shape)
        if not self.cell.built:
            steps = [(s[0],) + tuple(s[2:]) for s in shapes]
            self.cell.build(steps[0] if _is_shape(sequences_shape) else
                            _pack_like(sequences_shape, steps))
        if self.stateful:
            if self.states is not None:
                self.reset_state()
                return
            batch = shapes[0][0]
            if batch is None:
                raise ValueError(
                    f"{type(self).__name__} {self.name!r}: with stateful=True the batch size "
                    f"must be static; got input shape {tuple(sequences_shape)}. Give it with "
                    f"Input(batch_size=...) or the first layer's batch_input_shape=")
            states = map_structure(lambda state: Variable(state, trainable=False,
                                                          name="rnn_state"),
                                   self.get_initial_state(int(batch)))
            object.__setattr__(self, "states", states)

    def get_initial_state(self, batch_size):
        """The cell's initial states (its ``get_initial_state`` where it has one, else zeros):
        a list with one ``(batch_size, *shape)`` tensor per state (nested for stacked
        cells)."""
        cell_states = getattr(self.cell, "get_initial_state", None)
        if cell_states is None:
            spec = _state_spec(self.cell)
            return _pack(spec, _zero_states(spec, batch_size, self._compute_dtype))
        states = cell_states(batch_size=batch_size)
        return list(states) if isinstance(states, (list, tuple)) else [states]

    def reset_state(self):
        """Set a stateful layer's states back to the cell's initial states."""
        if self.states is not None:
            variables = flatten(self.states)
            batch = int(variables[0].shape[0])
            for variable, value in zip(variables, flatten(self.get_initial_state(batch))):
                variable.assign(value)

    def reset_states(self):
        """Alias of ``reset_state`` (tf.keras 2's name)."""
        self.reset_state()

    def _initial_states(self, initial_state, batch, dtype):
        """The initial states, flat (one tensor per state, in order), checked and cast."""
        spec = _state_spec(self.cell)
        if initial_state is None:
            return _zero_states(spec, batch, dtype)
        shapes = _spec_leaves(spec)
        states = flatten(initial_state)
        if len(states) != len(shapes):
            raise ValueError(f"{type(self).__name__} {self.name!r}: initial_state has "
                             f"{len(states)} tensor(s), the cell has {len(shapes)} state(s) of "
                             f"sizes {self.state_size}")
        out = []
        for i, (state, shape) in enumerate(zip(states, shapes)):
            state = state if isinstance(state, Tensor) else convert_to_tensor(state)
            got = tuple(state._value.shape)
            if got != (batch,) + shape:
                expected = "(batch, units)" if len(shape) == 1 else "(batch, *state shape)"
                raise ValueError(f"{type(self).__name__} {self.name!r}: initial_state[{i}] "
                                 f"has shape {got}, expected {expected} = {(batch,) + shape}")
            out.append(state if state._value.dtype == dtype.np else math_ops.cast(state, dtype))
        return out

    def call(self, sequences, initial_state=None, mask=None, training=None):
        leaves = flatten(sequences)
        single = isinstance(sequences, Tensor)    # else a nest of sequences
        shapes = _sequence_shapes(self, tuple(sequences._value.shape) if single
                                  else [tuple(x._value.shape) for x in leaves])
        batch, steps = shapes[0][0], shapes[0][1]
        dtype = leaves[0].dtype
        if steps == 0:
            raise ValueError(f"{type(self).__name__} {self.name!r}: the input sequences have "
                             f"no time steps (shape {shapes[0]})")
        if self.stateful and self.states is not None:
            expected = int(flatten(self.states)[0].shape[0])
            if batch != expected:
                raise ValueError(
                    f"{type(self).__name__} {self.name!r} is stateful: the batch size of the "
                    f"input sequences must stay the one of its states. Expected batch size: "
                    f"{expected}; received batch size: {batch} (input shape {shapes[0]})")
            if initial_state is None:   # snapshots: the states are assigned after the loop
                initial_state = [state.read_value() for state in flatten(self.states)]
        states = self._initial_states(initial_state, batch, dtype)
        spec = _state_spec(self.cell)
        cell = self.cell
        if isinstance(cell, _RecurrentCell) and single:
            # the input part of every step is one product over the whole sequence
            x_mask, rec_mask = cell._dropout_masks(shapes[0], batch, dtype, training)
            if x_mask is not None:  # one mask for every step (Keras' variational dropout)
                sequences = sequences * array_ops.reshape(x_mask, (batch, 1, shapes[0][2]))
            params = cell._params(dtype)
            if mask is None and rec_mask is None and cell._runs_fused():
                return self._finish(*_fused_lstm(sequences, params, states,
                                                 self.go_backwards), spec)
            inputs = array_ops.unstack(cell._project(sequences, params), axis=1)

            def step(x_t, states):
                return cell._step(x_t, states, params, rec_mask)
        else:
            cell_step = _cell_step(cell, (batch,) + tuple(shapes[0][2:]), dtype, training)
            if single:
                inputs = array_ops.unstack(sequences, axis=1)
            else:
                columns = [array_ops.unstack(x, axis=1) for x in leaves]
                inputs = [_pack_like(sequences, [column[t] for column in columns])
                          for t in range(steps)]

            def step(x_t, states):
                output, new = cell_step(x_t, _pack(spec, states))
                return output, flatten(new)
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
        return self._finish(_stack_steps(outputs) if self.return_sequences else None, output,
                            states, spec)

    def _finish(self, sequence, last, states, spec):
        """The call's result from the output sequence (None without ``return_sequences``),
        the last output and the final states (flat); a stateful layer keeps the states."""
        output = sequence if self.return_sequences else last
        if self.stateful and self.states is not None and not _CTX.placeholder_run:
            for variable, state in zip(flatten(self.states), states):
                variable.assign(state)
        if self.return_state:
            return (output, *_pack(spec, states))
        return output

    def compute_mask(self, inputs, mask):
        """The input's mask with ``return_sequences`` (None for the states), else None."""
        mask = flatten(mask)[0] if isinstance(mask, (list, tuple)) else mask
        output_mask = mask if self.return_sequences else None
        return [output_mask] + [None] * len(self.state_size) if self.return_state \
            else output_mask

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        size = cell_output_size(self.cell)
        spec = _state_spec(self.cell)
        if not _is_shape(sequences_shape) or not isinstance(size, int) or \
                any(isinstance(item, list) or len(item) != 1 for item in spec):
            return super().compute_output_shape(sequences_shape)   # a run on zeros
        check_sequences(self, sequences_shape)
        batch, length = sequences_shape[0], sequences_shape[1]
        output = (batch, length, size) if self.return_sequences else (batch, size)
        if self.return_state:
            return (output,) + tuple((batch,) + shape for shape in spec)
        return output

    def get_config(self):
        from .serialization import serialize
        return {**super().get_config(), "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards,
                "stateful": self.stateful, "unroll": self.unroll,
                "zero_output_for_mask": self.zero_output_for_mask, "cell": serialize(self.cell)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import from_config_with_nested
        return from_config_with_nested(cls, config, "cell", custom_objects)


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
