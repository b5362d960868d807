"""Models: subclassed ``Model``, functional ``Model(inputs, outputs)`` and ``Sequential``.

A Model is a Layer with the training API (``compile``/``fit``/``evaluate``/``predict``, see
``trainer.py``), ``summary()`` and HDF5 ``save_weights``/``load_weights`` (see ``saving.py``).

    inputs = keras.Input(shape=(784,))
    x = keras.layers.Dense(64, activation="relu")(inputs)
    outputs = keras.layers.Dense(10)(x)
    model = keras.Model(inputs, outputs)          # functional: replays the recorded layer calls

    model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(10)])
"""
import inspect

import numpy

from .. import backend as B
from .._state import PauseRecording
from ..nest import flatten
from ..tensor import Tensor
from . import saving
from .layers import masking
from .layers.base import (InputLayer, KerasTensor, Layer, _is_shape, _map_leaves, Input)
from .trainer import History, Trainer  # noqa: F401 - History is part of the public API


def _is_kt(value):
    return isinstance(value, KerasTensor)


def _conform_input(x, kt):
    """A model input as its ``keras.Input`` declares it, as Keras does: arrays and Python
    values become tensors of the input's dtype; one trailing size-1 dimension is added or
    removed when that is all that differs (``(n,)`` data for a ``(None, 1)`` input)."""
    if not isinstance(x, Tensor):
        if not (B.is_array(x) or isinstance(x, (numpy.ndarray, numpy.generic, list, int, float))):
            return x
        from ..ops.convert import convert_to_tensor
        try:
            x = convert_to_tensor(x, dtype=kt.dtype)
        except (TypeError, ValueError):
            return x    # the layers report what they cannot take
    rank, ref = len(x._value.shape), kt.shape
    if rank == len(ref) - 1 and ref[-1] == 1:
        from ..ops.array_ops import expand_dims
        return expand_dims(x, -1)
    if rank == len(ref) + 1 and rank and x._value.shape[-1] == 1:
        from ..ops.array_ops import squeeze
        return squeeze(x, -1)
    return x


def _spec_through_layers(model, inputs, args, kwargs, has_layers):
    """A nested model's output specs for KerasTensor ``inputs``, as Keras finds them: where an
    input has an unknown dimension past the batch one (a sequence length), its layers are
    called on KerasTensors one after another, each with its own output rule, so the length
    stays unknown; a run of the whole model on placeholders would give it size 1, too short
    for a ``Conv1D`` inside. Otherwise that placeholder run (``Layer.compute_output_spec``)."""
    flat = list(flatten(inputs))
    if not (has_layers and flat and all(_is_kt(t) for t in flat)
            and any(None in tuple(t.shape)[1:] for t in flat)):
        return Layer.compute_output_spec(model, inputs, *args, **kwargs)

    def fresh(t):   # the layers' nodes must not join the graph the model is called in
        copy = KerasTensor(t.shape, t.dtype)
        copy._keras_mask = t._keras_mask
        return copy

    out = model.call(_map_leaves(fresh, inputs, _is_kt))
    masking.capture_symbolic_masks([getattr(t, "_keras_mask", None) for t in flatten(out)])
    return _map_leaves(lambda t: (t.shape, t.dtype), out, _is_kt)


class Model(Trainer, Layer):
    """A trainable layer tree: subclass it (``__init__`` + ``call``) or call it as
    ``Model(inputs, outputs)`` on ``keras.Input`` placeholders (functional API)."""

    _default_build = True
    from .model_api import (get_state_tree, make_predict_function, make_test_function,  # noqa
                            make_train_function, metrics_variables, set_state_tree)

    def __new__(cls, *args, **kwargs):
        if cls is Model and ("outputs" in kwargs or len(args) >= 2):
            return object.__new__(Functional)
        if not issubclass(cls, (Functional, Sequential)) and _functional_arguments(args, kwargs):
            # Keras 3: a subclass called with inputs/outputs is a functional model that keeps
            # the subclass's own methods (train_step, test_step, metrics, ...)
            return Layer.__new__(_functional_subclass(cls), *args, **kwargs)
        return Layer.__new__(cls, *args, **kwargs)

    def __init__(self, *args, **kwargs):
        Layer.__init__(self, *args, **kwargs)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A functional config (with ``input_layers``) rebuilds a functional model (of ``cls``
        when it is a subclass of Model); otherwise ``cls(**config)`` as for layers."""
        if "input_layers" in config and "layers" in config:
            from .serialization import _functional_from_config
            return _functional_from_config(config, custom_objects,
                                           Functional if cls is Model else cls)
        return cls(**config)

    def build(self, input_shape=None):
        """Create the weights by running the model once on zeros of ``input_shape`` (``None``
        dims as 1) in inference mode, without recording gradients."""
        if self.built or not type(self)._default_build:
            # a subclass's own build() calling super().build(input_shape): nothing to run
            return
        if input_shape is None:
            raise ValueError(f"{type(self).__name__}.build needs an input shape")

        def zeros(shape):
            d = self._compute_dtype if self._compute_dtype.is_floating else None
            return Tensor(B.xp.zeros(tuple(1 if s is None else int(s) for s in shape),
                                     dtype=d.np if d is not None else B.xp.float32))

        dummy = _map_leaves(zeros, input_shape, _is_shape)
        with PauseRecording():
            self(dummy, training=False)

    @property
    def run_eagerly(self):
        """Whether ``fit`` runs the training step eagerly instead of as a ``minitf.function``
        (``compile(run_eagerly=...)`` sets it; assign it to change it later)."""
        return self._run_eagerly

    @run_eagerly.setter
    def run_eagerly(self, value):
        object.__setattr__(self, "_run_eagerly", bool(value))
        object.__setattr__(self, "_train_fn", None)

    @property
    def input_shape(self):
        """The shape of the model's input (a list of shapes for several inputs)."""
        shapes = [tuple(t.shape) for t in self.inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    # --- summary -------------------------------------------------------------------------------
    def _summary_rows(self):
        return [(layer, layer._output_shape) for layer in self.layers]

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Print the layers, their output shapes and parameter counts, then the totals
        (trainable and non-trainable). ``print_fn`` receives one line at a time."""
        if self.built:
            self._assign_paths()
        print_fn = print_fn or print
        rows = []

        def add_rows(model, indent):
            for layer, shape in model._summary_rows():
                name = f"{' ' * indent}{layer.name} ({type(layer).__name__})"
                params = _count(layer.weights) if layer.built else "0 (unbuilt)"
                rows.append((name, _format_shape(shape), f"{params:,}" if isinstance(
                    params, int) else params, layer))
                if expand_nested and isinstance(layer, Model):
                    add_rows(layer, indent + 2)

        add_rows(self, 0)
        header = ("Layer (type)", "Output Shape", "Param #")
        if show_trainable:
            header += ("Trainable",)
        if line_length is not None:
            cols = [int(line_length * p) for p in (positions or (0.45, 0.75, 1.0))]
        else:  # columns as wide as their content
            widths = [max([len(header[i])] + [len(r[i]) for r in rows]) + 4 for i in range(3)]
            widths[-1] = max(widths[-1], 65 - widths[0] - widths[1])
            cols = [sum(widths[:i + 1]) for i in range(3)]
        if show_trainable:
            cols.append(cols[-1] + 11)

        def line(fields):
            out, start = [], 0
            for field, end in zip(fields, cols):
                cell = " " + str(field)
                out.append(cell[:end - start].ljust(end - start))
                start = end
            return "".join(out).rstrip()

        total_width = cols[-1]
        print_fn(f'Model: "{self.name}"')
        print_fn("_" * total_width)
        print_fn(line(header))
        print_fn("=" * total_width)
        for i, (name, shape, params, layer) in enumerate(rows):
            fields = (name, shape, params) + (("Y" if layer.trainable else "N",)
                                              if show_trainable else ())
            print_fn(line(fields))
            if i < len(rows) - 1:
                print_fn("")
        print_fn("=" * total_width)
        trainable, non_trainable = self.trainable_variables, self.non_trainable_variables
        total = self.variables
        optimizer = getattr(self, "optimizer", None)   # counted once it has variables (Keras 3)
        slots = optimizer.variables if getattr(optimizer, "built", False) else None
        if slots is not None:
            total = total + slots
        print_fn(f" Total params: {_count(total):,} ({_bytes(total)})")
        print_fn(f" Trainable params: {_count(trainable):,} ({_bytes(trainable)})")
        print_fn(f" Non-trainable params: {_count(non_trainable):,} ({_bytes(non_trainable)})")
        if slots is not None:
            print_fn(f" Optimizer params: {_count(slots):,} ({_bytes(slots)})")
        print_fn("_" * total_width)

    def get_layer(self, name=None, index=None):
        """A direct sublayer by name or index."""
        layers = self.layers
        if index is not None:
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"no layer named {name!r}; layers: {[lay.name for lay in layers]}")

    # --- weights files --------------------------------------------------------------------------
    def save_weights(self, filepath, overwrite=True, save_format=None, options=None):
        """Write all variables to an HDF5 ``.weights.h5`` file (layout: see ``saving``), or,
        for another name, to tf.keras 2's checkpoint format."""
        saving.save_weights(self, filepath, overwrite=overwrite, save_format=save_format)

    def load_weights(self, filepath, skip_mismatch=False, by_name=False, options=None):
        """Read variables saved by ``save_weights`` (or a training checkpoint's
        ``/model_weights``); a different architecture raises a ValueError listing the missing,
        unexpected and mismatched weights. A checkpoint-format prefix returns the restore
        status."""
        if by_name:
            raise ValueError("load_weights: by_name=True (tf.keras 2's legacy HDF5 matching "
                             "by layer name) is not supported")
        return saving.load_weights(self, filepath, skip_mismatch=skip_mismatch)

    def save(self, filepath, overwrite=True):
        """Write the architecture, weights and compile configuration (optimizer state
        included) to a Keras 3 ``.keras`` archive (see ``archive.py``);
        ``keras.models.load_model`` reads it back."""
        saving.save_model(self, filepath, overwrite=overwrite)

    def to_json(self, **kwargs):
        """The model's serialized entry (``keras.saving.serialize_keras_object``) as a JSON
        string; ``keras.models.model_from_json`` rebuilds the model (fresh weights)."""
        import json
        from .serialization import serialize_keras_object
        return json.dumps(serialize_keras_object(self), **kwargs)


def _count(variables):
    return sum(int(v._value.size) for v in variables)


def _bytes(variables):
    n = float(sum(int(v._value.nbytes) for v in variables))
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.2f} {unit}"
        n /= 1024


def _format_shape(shape):
    if shape is None:
        return "?"
    if _is_shape(shape):
        return "(" + ", ".join("None" if d is None else str(d) for d in shape) + \
            ("," if len(shape) == 1 else "") + ")"
    return ", ".join(_format_shape(s) for s in shape) if isinstance(shape, (list, tuple)) \
        else str(shape)


# --- functional ----------------------------------------------------------------------------------

class Functional(Model):
    """A model built from a graph of layer calls on ``keras.Input`` placeholders."""

    _flat_attrs = frozenset({"_layers"})

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        flat_in = list(flatten(inputs))
        flat_out = list(flatten(outputs))
        for t in flat_in + flat_out:
            if not _is_kt(t):
                raise TypeError(f"Model(inputs, outputs): expected KerasTensors (from "
                                f"keras.Input and layer calls), got {type(t).__name__}")
        # as in Keras 3, an input may also be an intermediate tensor of a graph: the model
        # then runs the layers between it and the outputs
        input_ids = {id(t) for t in flat_in}
        nodes = _topological_nodes(flat_out, input_ids)
        for node in nodes:
            if isinstance(node.layer, InputLayer) and id(node.outputs) not in input_ids:
                raise ValueError(f"Graph disconnected: the output depends on input "
                                 f"{node.outputs!r}, which is not among the model inputs")
        layers, seen = [], set()
        for node in [t._node for t in flat_in
                     if isinstance(t._node.layer, InputLayer)] + nodes:
            if id(node.layer) not in seen:
                seen.add(id(node.layer))
                layers.append(node.layer)
        s = object.__setattr__
        s(self, "_inputs_struct", inputs)
        s(self, "_outputs_struct", outputs)
        s(self, "_flat_inputs", flat_in)
        s(self, "_plan", [_plan_step(n) for n in nodes if not isinstance(n.layer, InputLayer)])
        self._layers = layers
        s(self, "_output_shape", _map_leaves(lambda t: t.shape, outputs, _is_kt))
        self._mark_built()

    @property
    def layers(self):
        return list(self._layers)

    @property
    def inputs(self):
        return list(self._flat_inputs)

    @property
    def outputs(self):
        return list(flatten(self._outputs_struct))

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_names(self):
        return [t._node.layer.name for t in self._flat_inputs]

    @property
    def output_names(self):
        """The names of the layers producing the outputs (the keys of a dict of outputs)."""
        struct = self._outputs_struct
        if isinstance(struct, dict):
            return sorted(struct)
        return [t._node.layer.name for t in flatten(struct)]

    def _summary_rows(self):
        return [(layer, layer._output_shape) for layer in self._layers]

    def _flatten_inputs(self, inputs):
        struct = self._inputs_struct
        if isinstance(struct, dict):
            if not isinstance(inputs, dict):
                raise ValueError(f"model {self.name!r} expects a dict of inputs with keys "
                                 f"{sorted(struct)}")
            return [inputs[k] for k in sorted(struct)]
        if isinstance(inputs, dict):  # keyed by the names of the keras.Input placeholders
            names = [t.name for t in self._flat_inputs]
            missing = [name for name in names if name not in inputs]
            if missing:
                raise ValueError(f"model {self.name!r}: the dict of inputs has the keys "
                                 f"{sorted(inputs)}; the model's inputs are named {names} "
                                 f"(missing: {missing})")
            return [inputs[name] for name in names]
        n = len(self._flat_inputs)
        if n == 1:
            if isinstance(inputs, (list, tuple)) and len(inputs) == 1:
                return [inputs[0]]
            return [inputs]
        flat = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(flat) != n:
            raise ValueError(f"model {self.name!r} expects {n} inputs, got {len(flat)}")
        return flat

    def compute_output_spec(self, inputs, *args, **kwargs):
        return _spec_through_layers(self, inputs, args, kwargs, True)

    def call(self, inputs, training=None, mask=None):
        values = {}
        flat = self._flatten_inputs(inputs)
        masks = [None] * len(flat) if mask is None else self._flatten_inputs(mask)
        for kt, x, m in zip(self._flat_inputs, flat, masks):
            values[id(kt)] = masking.carry_mask(x, _conform_input(x, kt), m)
        for layer, single, args, kwargs, out_ids in self._plan:
            if single is not None:
                out = layer(values[single], **kwargs)
            else:
                a = _map_leaves(lambda t: values[id(t)], args, _is_kt)
                out = layer(*a, **_map_leaves(lambda t: values[id(t)], kwargs, _is_kt))
            if len(out_ids) == 1 and isinstance(out, Tensor):
                values[out_ids[0]] = out
            else:
                for i, o in zip(out_ids, flatten(out)):
                    values[i] = o
        return _map_leaves(lambda t: values[id(t)], self._outputs_struct, _is_kt)

    def get_config(self):
        """The layers with their calls (``inbound_nodes``), inputs and outputs, as in Keras 3."""
        from .serialization import layer_config
        return layer_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import deserialize_keras_object
        return deserialize_keras_object({"class_name": "Functional", "config": config},
                                        custom_objects)


def _functional_arguments(args, kwargs):
    """Whether ``Model(...)`` arguments are ``(inputs, outputs)`` made of KerasTensors."""
    if len(args) == 2:
        inputs, outputs = args
    elif len(args) == 1 and "outputs" in kwargs:
        inputs, outputs = args[0], kwargs["outputs"]
    elif not args and "inputs" in kwargs and "outputs" in kwargs:
        inputs, outputs = kwargs["inputs"], kwargs["outputs"]
    else:
        return False
    flat = list(flatten(inputs)) + list(flatten(outputs))
    return bool(flat) and all(_is_kt(t) for t in flat)


_FUNCTIONAL_SUBCLASSES = {}


def _functional_subclass(cls):
    """``cls`` with Functional's graph behind it (one class per subclass, made once): its MRO
    puts the subclass's methods first, then Functional's, then Model's."""
    sub = _FUNCTIONAL_SUBCLASSES.get(cls)
    if sub is None:
        attrs = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                 "__doc__": cls.__doc__, "_functional_of": cls}
        if "_registered_name" in cls.__dict__:
            attrs["_registered_name"] = cls.__dict__["_registered_name"]
        sub = type(cls.__name__, (cls, Functional), attrs)
        _FUNCTIONAL_SUBCLASSES[cls] = sub
    return sub


def _plan_step(node):
    """(layer, id of the single KerasTensor input or None, args, kwargs, output ids)."""
    args = node.args
    single = id(args[0]) if len(args) == 1 and _is_kt(args[0]) and not any(
        _is_kt(v) for v in flatten(node.kwargs)) else None
    out_ids = [id(t) for t in flatten(node.outputs)]
    return (node.layer, single, args, dict(node.kwargs), out_ids)


def _topological_nodes(outputs, stop_ids=()):
    """The nodes the outputs depend on, each after its inputs (iterative DFS), not going past
    the tensors whose ids are in ``stop_ids`` (the model's inputs)."""
    order, done = [], set()
    stack = [(t._node, False) for t in reversed(outputs) if id(t) not in stop_ids]
    active = set()
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if expanded:
            done.add(id(node))
            active.discard(id(node))
            order.append(node)
            continue
        if id(node) in active:
            raise ValueError("the layer graph has a cycle")
        active.add(id(node))
        stack.append((node, True))
        for t in reversed(node.inputs):
            if id(t._node) not in done and id(t) not in stop_ids:
                stack.append((t._node, False))
    return order


# --- sequential ----------------------------------------------------------------------------------

class Sequential(Model):
    """A linear stack of layers: ``Sequential([Input((784,)), Dense(64), Dense(10)])``.

    With a known input (``keras.Input`` first, or ``input_shape=`` on the first layer) the
    model is built at once; otherwise on the first call.
    """

    _flat_attrs = frozenset({"_layers"})

    def __init__(self, layers=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self._layers = []
        object.__setattr__(self, "_input_layer", None)
        object.__setattr__(self, "_graph", None)
        for layer in layers or ():
            self.add(layer, rebuild=False)
        self._maybe_build()

    def add(self, layer, rebuild=True):
        """Append a layer (a ``keras.Input`` is accepted first)."""
        if _is_kt(layer) and isinstance(layer._node.layer, InputLayer):
            layer = layer._node.layer
        if isinstance(layer, InputLayer):
            if self._layers or self._input_layer is not None:
                raise ValueError("Sequential: an Input/InputLayer can only come first")
            object.__setattr__(self, "_input_layer", layer)
        elif isinstance(layer, Layer):
            self._layers.append(layer)
        else:
            raise TypeError(f"Sequential.add: expected a Layer, got {type(layer).__name__}")
        if rebuild:
            object.__setattr__(self, "built", False)
            self._maybe_build()

    def pop(self):
        """Remove the last layer."""
        if not self._layers:
            raise TypeError("Sequential.pop: there are no layers")
        layer = self._layers.pop()
        object.__setattr__(self, "built", False)
        self._maybe_build()
        return layer

    @property
    def layers(self):
        return list(self._layers)

    @property
    def input(self):
        return self._graph[0] if self._graph else Layer.input.fget(self)

    @property
    def output(self):
        return self._graph[1] if self._graph else Layer.output.fget(self)

    @property
    def inputs(self):
        """``[input]`` once the model knows its input shape."""
        return [self.input]

    @property
    def outputs(self):
        return [self.output]

    def _maybe_build(self):
        if self._input_layer is not None:
            kt = self._input_layer._input_tensor
            self._build_graph(kt.shape, kt.dtype)
        elif self._layers and self._layers[0]._batch_input_shape is not None:
            self._build_graph(self._layers[0]._batch_input_shape, None)

    def _declared_input(self):
        """The KerasTensor of the input the model declares (``keras.Input`` first, or
        ``input_shape=`` on the first layer), or None."""
        if self._input_layer is not None:
            return self._input_layer._input_tensor
        if self._graph and self._layers and self._layers[0]._batch_input_shape is not None:
            return self._graph[0]
        return None

    def _build_graph(self, batch_shape, dtype):
        if self._input_layer is not None:
            kt = self._input_layer._input_tensor
        else:
            kt = Input(batch_shape=tuple(batch_shape), dtype=dtype or (
                self._compute_dtype.name if self._compute_dtype.is_floating else "float32"))
        x = kt
        for layer in self._layers:
            x = layer(x)
        object.__setattr__(self, "_graph", (kt, x))
        object.__setattr__(self, "_output_shape", x.shape if _is_kt(x) else None)
        self._mark_built()

    def build(self, input_shape=None):
        if input_shape is None:
            if self._input_layer is None:
                raise ValueError("Sequential.build needs an input shape")
            input_shape = self._input_layer.batch_shape
        if not self._layers:
            return
        self._build_graph(input_shape, None)

    def _build_from(self, inputs):
        if isinstance(inputs, Tensor) and self._layers:
            self._build_graph((None,) + tuple(inputs._value.shape[1:]), inputs.dtype.name)
        else:
            self._mark_built()

    def compute_output_spec(self, inputs, *args, **kwargs):
        return _spec_through_layers(self, inputs, args, kwargs, bool(self._layers))

    def call(self, inputs, training=None, mask=None):
        x = inputs
        declared = self._declared_input()
        if declared is not None and not isinstance(x, (dict, list, tuple)):
            x = _conform_input(x, declared)
        x = masking.carry_mask(inputs, x, mask)
        for layer in self._layers:
            x = layer(x)
        return x

    def _summary_rows(self):
        return [(layer, layer._output_shape) for layer in self._layers]

    def get_config(self):
        """The layers' serialized entries (see ``serialization``), as Keras 3 writes them."""
        from .serialization import layer_config
        return layer_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .serialization import deserialize_keras_object
        return deserialize_keras_object({"class_name": "Sequential", "config": config},
                                        custom_objects)


def save_model(model, filepath, overwrite=True):
    """``keras.models.save_model(model, "x.keras")``: the same as ``model.save``."""
    saving.save_model(model, filepath, overwrite=overwrite)


def model_from_json(json_string, custom_objects=None):
    """The model ``model.to_json()`` described, with freshly initialised weights."""
    import json
    from .serialization import deserialize_keras_object
    return deserialize_keras_object(json.loads(json_string), custom_objects)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """``keras.models.load_model``: a model saved with ``model.save("....keras")``."""
    return saving.load_model(filepath, custom_objects=custom_objects, compile=compile,
                             safe_mode=safe_mode)


def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, custom_objects=None):
    """A copy of a Functional or Sequential model with new layers (freshly initialised
    weights), as Keras's ``clone_model``. ``clone_function(layer)`` makes each layer's copy
    (default: ``layer.__class__.from_config(layer.get_config())``; return the layer itself to
    share it); ``call_function(layer, *args, **kwargs)`` calls it in the new graph (Functional
    models only: it may add layers around a call); ``recursive=True`` clones nested
    Functional and Sequential models layer by layer; ``input_tensors`` (KerasTensors shaped
    like ``model.input``) become the new model's inputs. A compiled model's clone is compiled
    the same way. A subclassed model is rebuilt from its config (``custom_objects`` names its
    classes). Copy the weights with ``clone.set_weights(model.get_weights())``."""
    from .serialization import deserialize_keras_object, serialize_keras_object
    if isinstance(model, (Sequential, Functional)):
        clone_layer = _layer_cloner(clone_function, call_function, recursive, {})
        if isinstance(model, Sequential):
            if call_function is not None:
                raise ValueError("clone_model: call_function is not supported for Sequential "
                                 "models (their layers are listed, not called); use it with "
                                 "a Functional model")
            clone = _clone_sequential(model, clone_layer, input_tensors)
        else:
            clone = _clone_functional(model, clone_layer, call_function, input_tensors)
    else:
        if clone_function is not None or input_tensors is not None:
            raise ValueError(f"clone_model: clone_function and input_tensors are supported for "
                             f"Sequential and Functional models only; got a "
                             f"{type(model).__name__}")
        if call_function is not None:
            raise ValueError(f"clone_model: call_function is supported for Functional models "
                             f"only; got a {type(model).__name__}")
        clone = deserialize_keras_object(serialize_keras_object(model), custom_objects)
    config = model.get_compile_config() if model.compiled else None
    if config is not None and not clone.compiled:
        clone.compile_from_config(config)
    return clone


def _layer_cloner(clone_function, call_function, recursive, cache):
    """``clone_function`` made to clone each layer once (a shared layer stays shared) and,
    with ``recursive``, to clone nested models layer by layer."""
    if clone_function is None:
        def clone_function(layer):
            return layer.__class__.from_config(layer.get_config())
    elif not callable(clone_function):
        raise ValueError(f"clone_model: clone_function must be callable, got "
                         f"{clone_function!r}")

    def clone_layer(layer):
        if id(layer) not in cache:
            if recursive and isinstance(layer, Sequential):
                cache[id(layer)] = _clone_sequential(layer, clone_layer, None)
            elif recursive and isinstance(layer, Functional):
                cache[id(layer)] = _clone_functional(layer, clone_layer, call_function, None)
            else:
                cache[id(layer)] = clone_function(layer)
        return cache[id(layer)]
    return clone_layer


def _clone_sequential(model, clone_layer, input_tensors):
    layers = [clone_layer(layer) for layer in model.layers]
    if input_tensors is not None:
        flat = list(flatten(input_tensors))
        if len(flat) != 1 or not _is_kt(flat[0]) or not isinstance(flat[0]._node.layer,
                                                                   InputLayer):
            raise ValueError(f"clone_model: input_tensors of a Sequential model must be one "
                             f"keras.Input tensor, got {input_tensors!r}")
        layers.insert(0, flat[0])
    elif (kt := model._declared_input()) is not None:
        layers.insert(0, Input(batch_shape=tuple(kt.shape), dtype=kt.dtype.name,
                               name=kt._node.layer.name))
    return Sequential(layers, name=model.name, trainable=model.trainable)


def _clone_functional(model, clone_layer, call_function, input_tensors):
    if input_tensors is None:
        inputs = _map_leaves(lambda kt: Input(batch_shape=tuple(kt.shape), dtype=kt.dtype.name,
                                              name=kt._node.layer.name),
                             model._inputs_struct, _is_kt)
    else:
        inputs = input_tensors
        if not all(_is_kt(t) for t in flatten(inputs)):
            raise ValueError(f"clone_model: input_tensors must be KerasTensors, got "
                             f"{input_tensors!r}")
        if not _same_layout(inputs, model._inputs_struct):
            raise ValueError(f"clone_model: input_tensors must have the structure of "
                             f"model.input, {model._inputs_struct!r}; got {input_tensors!r}")
    values = {id(old): new for old, new in zip(model._flat_inputs, flatten(inputs))}
    for layer, _, args, kwargs, out_ids in model._plan:
        args = _map_leaves(lambda t: values[id(t)], args, _is_kt)
        kwargs = _map_leaves(lambda t: values[id(t)], kwargs, _is_kt)
        copy = clone_layer(layer)
        out = call_function(copy, *args, **kwargs) if call_function else copy(*args, **kwargs)
        for i, o in zip(out_ids, flatten(out)):
            values[i] = o
    outputs = _map_leaves(lambda t: values[id(t)], model._outputs_struct, _is_kt)
    return _functional_class(model)(inputs, outputs, name=model.name)


def _same_layout(a, b):
    """Whether two nests of KerasTensors have the same layout (lists and tuples alike)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(_same_layout(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))
                and len(a) == len(b) and all(map(_same_layout, a, b)))
    return True


def _functional_class(model):
    """The class of a functional model's clone: a subclass of Model called with ``(inputs,
    outputs)`` stays itself where its constructor takes them (so its ``train_step`` and other
    methods come along), else the clone is a Functional model."""
    user = getattr(type(model), "_functional_of", None)
    if user is None:
        return type(model)
    try:
        params = list(inspect.signature(user.__init__).parameters.values())[1:3]
    except (TypeError, ValueError):
        return Functional
    if (params and params[0].kind is inspect.Parameter.VAR_POSITIONAL) or \
            [p.name for p in params] == ["inputs", "outputs"]:
        return user
    return Functional
