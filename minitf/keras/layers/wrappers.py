"""Layer wrappers: ``Wrapper`` (the base class of layers that wrap one layer),
``Bidirectional`` (an RNN run both ways) and ``TimeDistributed`` (a layer applied to every
time step), with Keras 3's arguments, configs and weight layout."""
from ...ops import array_ops, slice_ops
from ...tensor import TensorShape
from . import masking
from .base import Layer
from .recurrent import check_sequences
from .symbolic import KerasTensor, _is_spec, _map_leaves

__all__ = ["Bidirectional", "TimeDistributed", "Wrapper"]

_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _copy_layer(layer, name, **changes):
    """A fresh layer built from ``layer``'s config (no weights shared), renamed."""
    from .serialization import deserialize, serialize
    entry = serialize(layer)
    entry.pop("build_config", None)
    entry["config"] = {**entry["config"], **changes, "name": name}
    return deserialize(entry)


def _strip(name, prefix):
    return name[len(prefix):] if name.startswith(prefix) else name


class Bidirectional(Layer):
    """Run a recurrent layer forwards and a copy of it backwards, and merge the outputs.

    ``layer`` (an ``RNN``/``LSTM``/``GRU``/``SimpleRNN``) is copied from its config into
    ``forward_layer`` (named ``forward_<name>``) and, unless ``backward_layer`` is given, into
    ``backward_layer`` with ``go_backwards=True``; neither shares weights with ``layer``. With
    ``return_sequences`` the backward outputs are flipped back to the input's time order before
    merging. ``merge_mode``: ``"concat"`` (last axis, the default), ``"sum"``, ``"mul"``,
    ``"ave"`` or ``None`` (a list ``[forward, backward]``). With ``return_state`` the result is
    ``(merged, *forward_states, *backward_states)``; ``initial_state`` takes the forward states
    followed by the backward states.

        Bidirectional(LSTM(8))(minitf.random.normal([4, 10, 3])).shape    # (4, 16)
    """

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None,
                 **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Bidirectional: layer must be a keras layer (an RNN such as "
                             f"LSTM), got {layer!r}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"Bidirectional: backward_layer must be a keras layer, got "
                             f"{backward_layer!r}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Bidirectional: invalid merge_mode {merge_mode!r}; expected one "
                             f"of {{'sum', 'mul', 'ave', 'concat', None}}")
        for attr in ("go_backwards", "return_sequences", "return_state"):
            if not hasattr(layer, attr):
                raise ValueError(f"Bidirectional: layer must be a recurrent layer (with "
                                 f"{attr}), got {type(layer).__name__}")
        super().__init__(**kwargs)
        self.forward_layer = _copy_layer(layer, f"forward_{_strip(layer.name, 'forward_')}")
        if backward_layer is None:
            self.backward_layer = _copy_layer(
                layer, f"backward_{_strip(layer.name, 'backward_')}",
                go_backwards=not layer.go_backwards)
        else:
            self.backward_layer = backward_layer
        forward, backward = self.forward_layer, self.backward_layer
        if forward.go_backwards == backward.go_backwards:
            raise ValueError(f"Bidirectional: the forward and backward layers need different "
                             f"go_backwards values, got {forward.go_backwards} for both")
        for attr in ("stateful", "return_sequences", "return_state"):
            if getattr(forward, attr) != getattr(backward, attr):
                raise ValueError(f"Bidirectional: the forward and backward layers need the "
                                 f"same {attr}, got {getattr(forward, attr)} and "
                                 f"{getattr(backward, attr)}")
        for sub in (forward, backward):  # Keras: masked steps of returned sequences are 0
            if getattr(sub, "zero_output_for_mask", None) is not None:
                sub.zero_output_for_mask = sub.return_sequences
        self.merge_mode = merge_mode
        self.stateful = forward.stateful
        self.return_sequences = forward.return_sequences
        self.return_state = forward.return_state
        # plain attribute: a list of arrays to assign once built, not tracked state
        object.__setattr__(self, "_initial_weights", None if weights is None else list(weights))

    def __call__(self, *args, **kwargs):
        # positional, so that KerasTensors in it are functional-graph inputs (see RNN)
        if len(args) == 1 and kwargs.get("initial_state") is not None:
            args = args + (kwargs.pop("initial_state"),)
        return super().__call__(*args, **kwargs)

    def build(self, sequences_shape, initial_state_shape=None):
        check_sequences(self, sequences_shape)
        for layer in (self.forward_layer, self.backward_layer):
            if not layer.built:
                layer.build(sequences_shape)
        if self._initial_weights is not None:
            half = len(self._initial_weights) // 2
            self.forward_layer.set_weights(self._initial_weights[:half])
            self.backward_layer.set_weights(self._initial_weights[half:])
            object.__setattr__(self, "_initial_weights", None)

    def call(self, sequences, initial_state=None, mask=None, training=None):
        forward_state = backward_state = None
        if initial_state is not None:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) \
                else [initial_state]
            if len(states) % 2:
                raise ValueError(f"Bidirectional {self.name!r}: initial_state needs the "
                                 f"forward states then the backward states (an even number "
                                 f"of tensors), got {len(states)}")
            half = len(states) // 2
            forward_state, backward_state = states[:half], states[half:]
        y = self.forward_layer(sequences, initial_state=forward_state, mask=mask,
                               training=training)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, mask=mask,
                                    training=training)
        states = ()
        if self.return_state:
            states = tuple(y[1:]) + tuple(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = slice_ops.reverse(y_rev, [1])
        output = self._merge(y, y_rev)
        if self.return_state:
            return (tuple(output) if self.merge_mode is None else (output,)) + states
        return output

    def reset_state(self):
        """Reset both directions' states (stateful layers only)."""
        if not self.stateful:
            raise AttributeError(f"Bidirectional {self.name!r}: reset_state() needs a stateful "
                                 f"layer (stateful=True)")
        self.forward_layer.reset_state()
        self.backward_layer.reset_state()

    def reset_states(self):
        """Alias of ``reset_state`` (tf.keras 2's name)."""
        self.reset_state()

    def _merge(self, y, y_rev):
        mode = self.merge_mode
        if mode == "concat":
            return array_ops.concat([y, y_rev], axis=-1)
        if mode == "sum":
            return y + y_rev
        if mode == "ave":
            return (y + y_rev) / 2
        if mode == "mul":
            return y * y_rev
        return [y, y_rev]

    def compute_mask(self, inputs, mask):
        """With ``return_sequences`` the input's mask (one per output when ``merge_mode`` is
        None), else None."""
        mask = mask[0] if isinstance(mask, list) else mask
        if self.return_sequences:
            return mask if self.merge_mode else [mask, mask]
        return None if self.merge_mode else [None, None]

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        output = self.forward_layer.compute_output_shape(sequences_shape)
        states = ()
        if self.return_state:
            output, states = output[0], tuple(output[1:])
        if self.merge_mode == "concat":
            output = tuple(output[:-1]) + (None if output[-1] is None else 2 * output[-1],)
        if self.return_state:
            head = (output, output) if self.merge_mode is None else (output,)
            return head + states + states
        return [output, output] if self.merge_mode is None else output

    def get_config(self):
        from .serialization import serialize
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": serialize(self.forward_layer),
                "backward_layer": serialize(self.backward_layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import deserialize
        config = dict(config)
        for key in ("layer", "backward_layer"):
            if isinstance(config.get(key), dict):
                config[key] = deserialize(config[key], custom_objects)
        return cls(**config)


class Wrapper(Layer):
    """Base class of a layer that wraps another (Keras's ``Wrapper``): keeps it as
    ``self.layer`` (its weights are the wrapper's), builds it with the wrapper's input shape
    unless a subclass's ``build`` does otherwise, and saves it in the wrapper's config."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"{type(self).__name__}: layer must be a keras layer instance, "
                             f"got {layer!r}")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            if not self.layer.built:
                self.layer._mark_built()

    def call(self, *args, **kwargs):
        return self.layer(*args, **kwargs)

    def get_config(self):
        from .serialization import serialize
        return {**super().get_config(), "layer": serialize(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import from_config_with_nested
        return from_config_with_nested(cls, config, "layer", custom_objects)


class TimeDistributed(Wrapper):
    """Apply ``layer`` to every time step of inputs ``(batch, time, ...)``.

    The steps are folded into the batch (``(batch * time, ...)``), the layer runs once and the
    result is unfolded to ``(batch, time, ...)``: the same weights at every step.

        TimeDistributed(Dense(8))(minitf.zeros([4, 10, 3])).shape    # (4, 10, 8)
    """

    def _child_shape(self, input_shape):
        if not isinstance(input_shape, (tuple, list, TensorShape)) or len(input_shape) < 3:
            raise ValueError(f"TimeDistributed {self.name!r}: inputs need at least 3 "
                             f"dimensions (batch, time, ...), got shape {input_shape}")
        batch, time = input_shape[0], input_shape[1]
        return (None if batch is None or time is None else batch * time,) + \
            tuple(input_shape[2:])

    def build(self, input_shape):
        child = self._child_shape(tuple(input_shape))
        if not self.layer.built:
            self.layer.build(TensorShape(child))

    supports_masking = True   # the output keeps the input's mask

    def call(self, inputs, training=None, mask=None):
        shape = tuple(inputs._value.shape)
        self._child_shape(shape)
        folded = array_ops.reshape(inputs, (shape[0] * shape[1],) + shape[2:])
        kwargs = {}
        if mask is not None and masking._call_takes_mask(self.layer):  # each step's mask
            kwargs["mask"] = array_ops.reshape(mask, (-1,) + tuple(mask.shape[2:]))
        outputs = self.layer(folded, training=training, **kwargs)
        return _map_tensors(lambda y: array_ops.reshape(
            y, shape[:2] + tuple(y._value.shape[1:])), outputs)

    def compute_output_spec(self, inputs, *args, **kwargs):
        shape = tuple(inputs.shape)
        child = KerasTensor(self._child_shape(shape), inputs.dtype)
        spec = self.layer.compute_output_spec(child)
        return _map_leaves(lambda s: (TensorShape(shape[:2] + tuple(s[0])[1:]), s[1]), spec,
                           _is_spec)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        child = self.layer.compute_output_shape(self._child_shape(input_shape))
        return input_shape[:2] + tuple(child)[1:]


def _map_tensors(fn, value):
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(fn, v) for v in value)
    if isinstance(value, dict):
        return {k: _map_tensors(fn, v) for k, v in value.items()}
    return fn(value)
