"""Model architecture as JSON-ready dicts, the form of Keras 3's ``config.json``.

    {"module": "keras.layers", "class_name": "Dense", "registered_name": null,
     "config": {...get_config()...}, "build_config": {"input_shape": [null, 4]}}

Sequential models list their layers' entries under ``config["layers"]``; Functional models also
record each layer's ``inbound_nodes`` (the calls that built the graph, with the tensors as
``{"class_name": "__keras_tensor__", "config": {"keras_history": [layer, node, index]}}``) and
the model's ``input_layers`` / ``output_layers``.

Deserializing looks classes up by name only: the ``custom_objects`` argument, then the
classes registered with ``register_keras_serializable`` (or added to ``get_custom_objects()``),
then minitf's own layers and models. Nothing from a file is ever executed or unpickled: a Lambda
layer or a serialized Python function is refused.
"""
from ..nest import flatten
from . import layers as layers_module
from .layers.base import InputLayer, KerasTensor, Layer

__all__ = ["register_keras_serializable", "get_custom_objects", "get_registered_name",
           "serialize_keras_object", "deserialize_keras_object", "CustomObjectScope",
           "custom_object_scope"]

_CUSTOM_OBJECTS = {}
_SCOPES = []


def register_keras_serializable(package="Custom", name=None):
    """Decorator: make a class (layer, model, regularizer...) or a function loadable by
    ``load_model`` under ``"<package>><name>"`` (name: the class or function name)."""
    def decorator(cls):
        key = f"{package}>{name or cls.__name__}"
        if key in _CUSTOM_OBJECTS and _CUSTOM_OBJECTS[key] is not cls:
            raise ValueError(f"register_keras_serializable: {key!r} is already registered "
                             f"for {_CUSTOM_OBJECTS[key]!r}")
        _CUSTOM_OBJECTS[key] = cls
        cls._registered_name = key
        return cls
    return decorator


def get_custom_objects():
    """The global ``{name: class}`` registry (mutable, as in Keras)."""
    return _CUSTOM_OBJECTS


def get_registered_name(obj):
    """The name ``obj`` (a class, a function or an instance) is registered under with
    ``register_keras_serializable`` (``"package>name"``), else its plain name."""
    if callable(obj) and not isinstance(obj, type) and hasattr(obj, "__name__"):
        return getattr(obj, "__dict__", {}).get("_registered_name", obj.__name__)
    cls = obj if isinstance(obj, type) else type(obj)
    return cls.__dict__.get("_registered_name", cls.__name__)


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class or function registered as ``name``: looked up in the active custom object
    scopes, the global registry, then ``custom_objects`` and ``module_objects``; None if
    absent."""
    for scope in reversed(_SCOPES):
        if name in scope:
            return scope[name]
    if name in _CUSTOM_OBJECTS:
        return _CUSTOM_OBJECTS[name]
    for mapping in (custom_objects, module_objects):
        if mapping and name in mapping:
            return mapping[name]
    return None


class CustomObjectScope:
    """``with custom_object_scope({"MyLayer": MyLayer}):`` extra classes for deserialization."""

    def __init__(self, *objects):
        self.objects = {}
        for mapping in objects:
            self.objects.update(mapping or {})

    def __enter__(self):
        _SCOPES.append(self.objects)
        return self

    def __exit__(self, *exc):
        _SCOPES.pop()


custom_object_scope = CustomObjectScope


# --- serializing ---------------------------------------------------------------------------------

def _module_of(obj):
    from .models import Functional, Model
    if type(obj).__dict__.get("_registered_name") is not None or \
            type(obj).__module__.split(".")[0] != "minitf":
        return type(obj).__module__
    if type(obj) is Functional:
        return "keras.src.models.functional"  # where Keras 3 looks the class up
    from .feature_space import FeatureSpace
    if type(obj) is FeatureSpace:
        return "keras.utils"
    return "keras" if isinstance(obj, Model) else "keras.layers"


def _json_shape(shape):
    if shape is None:
        return None
    if isinstance(shape, (list, tuple)) and all(d is None or isinstance(d, int) for d in shape):
        return [None if d is None else int(d) for d in shape]
    if isinstance(shape, dict):
        return {k: _json_shape(v) for k, v in shape.items()}
    if isinstance(shape, (list, tuple)):
        return [_json_shape(s) for s in shape]
    return [None if d is None else int(d) for d in shape]


def _jsonable(value, where):
    """``value`` with tuples as lists, dtypes as names and numpy scalars as Python numbers;
    anything else that JSON cannot hold (a function, an object) raises naming ``where``."""
    from ..dtypes import DType
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, DType):
        return value.name
    if isinstance(value, dict):
        return {str(k): _jsonable(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    if isinstance(value, Layer) or _object_module(value) is not None or _is_function(value):
        return serialize_keras_object(value)  # nested Keras objects, as Keras 3 writes them
    raise TypeError(f"cannot serialize {where} = {value!r}: a config holds plain values "
                    "(numbers, strings, lists, dicts) and Keras objects (layers, "
                    "regularizers, initializers, named functions); give the layer a "
                    "get_config() that returns such values")


def layer_config(layer):
    """``layer.get_config()``, with the forms Sequential, Functional and InputLayer need."""
    from .models import Functional, Sequential
    if isinstance(layer, InputLayer):
        return {"batch_shape": _json_shape(layer.batch_shape),
                "dtype": layer._input_tensor.dtype, "name": layer.name}
    if isinstance(layer, Sequential):
        return _jsonable(_sequential_config(layer), f"Sequential {layer.name!r} config")
    if isinstance(layer, Functional):
        return _jsonable(_functional_config(layer), f"model {layer.name!r} config")
    return layer.get_config()


def serialize_keras_object(obj):
    """The ``{"module", "class_name", "config", "registered_name", ...}`` entry of a Keras
    object: a layer or model, a regularizer, initializer, optimizer, loss, metric or
    schedule (anything with ``get_config``), or a named function (by its name only). Plain
    values, lists and dicts come back with their items serialized."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (list, tuple)):  # a tuple stays a tuple, as in Keras (JSON: a list)
        return type(obj)(serialize_keras_object(v) for v in obj) if type(obj) in (
            list, tuple) else [serialize_keras_object(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): serialize_keras_object(v) for k, v in obj.items()}
    if isinstance(obj, Layer):
        return _serialize_layer(obj)
    if _is_function(obj):
        return _serialize_function(obj)
    module = _object_module(obj)
    if module is None:
        raise TypeError(f"serialize_keras_object: cannot serialize {obj!r} (a "
                        f"{type(obj).__name__}): expected a Keras object with get_config(), "
                        "a named function, or plain values")
    return {"module": module, "class_name": type(obj).__name__,
            "config": _jsonable(obj.get_config(), f"{type(obj).__name__} config"),
            "registered_name": _registered_name(type(obj))}


def _registered_name(cls):
    """Keras 3's ``registered_name``: the registry key of a registered class, None for
    Keras' (minitf's) own classes, else the class name."""
    registered = cls.__dict__.get("_registered_name")
    if registered is None and cls.__module__.split(".")[0] != "minitf":
        return cls.__name__
    return registered


def _object_kinds():
    """``(module name, base class, builtin classes by name)`` of the non-layer Keras objects."""
    from . import initializers, losses, metrics, optimizers, regularizers
    from .optimizers import schedules
    return (("keras.regularizers", regularizers.Regularizer, regularizers._CLASSES),
            ("keras.initializers", initializers.Initializer, initializers._CLASSES),
            ("keras.optimizers.schedules", schedules.LearningRateSchedule, schedules._BY_NAME),
            ("keras.optimizers", optimizers.Optimizer, optimizers._CLASSES),
            ("keras.optimizers", optimizers.LossScaleOptimizer, optimizers._CLASSES),
            ("keras.losses", losses.Loss, losses._CLASSES),
            ("keras.metrics", metrics.Metric, metrics._CLASSES))


def _object_module(obj):
    """The Keras module an object's entry names (its own module for user classes), or None
    when it is not a serializable Keras object."""
    for module, base, _ in _object_kinds():
        if isinstance(obj, base):
            own = type(obj).__module__
            return module if own.split(".")[0] == "minitf" else own
    return None


def _is_function(value):
    import types
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType))


def _builtin_functions():
    """``{(module, name): function}`` of the activations and loss functions Keras names."""
    from . import activations, losses
    found = {("keras.activations", k): v for k, v in activations._BY_NAME.items()}
    found.update({("keras.losses", k): v for k, v in losses._FUNCTIONS.items()})
    return found


def _serialize_function(fn):
    """A function by name, in Keras 3's layout: ``{"module": "builtins", "class_name":
    "function", "config": <registry key or name>, "registered_name": "function"}``. A
    registered function is written under its key; another named function (Keras' own
    activations and losses included) with its name, and loading an unknown one needs it in
    ``custom_objects`` (as in Keras 3). Lambdas have no name to look up and are refused."""
    name = fn.__name__
    registered = getattr(fn, "_registered_name", None)
    if registered is None and name == "<lambda>":
        raise TypeError("cannot serialize a lambda: it has no name to load it by; use a "
                        "named function (registered with "
                        "@keras.saving.register_keras_serializable()) instead")
    return {"module": "builtins", "class_name": "function", "config": registered or name,
            "registered_name": "function"}


def _serialize_layer(layer):
    from .models import Functional
    registered = _registered_name(type(layer))
    if type(layer) is Functional:
        registered = "Functional"
    entry = {"module": _module_of(layer), "class_name": type(layer).__name__,
             "config": _jsonable(layer_config(layer), f"{type(layer).__name__} "
                                 f"{layer.name!r} config"),
             "registered_name": registered}
    build_config = None if isinstance(layer, InputLayer) else layer.get_build_config()
    if build_config is not None:
        entry["build_config"] = serialize_keras_object(build_config)
    return entry


def _shape_tuple(shape):
    """A recorded build shape as Keras keeps it: a tuple of ints/None (structures of them)."""
    if isinstance(shape, dict):
        return {k: _shape_tuple(v) for k, v in shape.items()}
    if shape is None or isinstance(shape, (int, str)):
        return shape
    items = list(shape)
    if all(d is None or isinstance(d, int) or hasattr(d, "__index__") for d in items):
        return tuple(None if d is None else int(d) for d in items)
    return [_shape_tuple(s) for s in items]


def get_build_config(layer):
    """``Layer.get_build_config``: ``{"input_shape": shape}`` of the shape the layer was built
    for (by its first call or an explicit ``build(shape)``), or None."""
    shape = layer.__dict__.get("_build_input_shape")
    if shape is None or not layer.built:
        return None
    return {"input_shape": _shape_tuple(shape)}


def build_from_config(layer, config):
    """``Layer.build_from_config``: ``build(input_shape)`` (or ``build(**shapes_dict)``)."""
    if not config:
        return
    if config.get("input_shape") is not None:
        shape = config["input_shape"]
        layer.build(tuple(shape) if _is_flat_shape(shape) else shape)
    elif config.get("shapes_dict"):
        layer.build(**{k: tuple(v) if _is_flat_shape(v) else v
                       for k, v in config["shapes_dict"].items()})


def _sequential_config(model):
    entries = []
    if model._input_layer is not None:
        entries.append(serialize_keras_object(model._input_layer))
    elif model._graph is not None:  # built on a first call: its input as an InputLayer entry
        kt = model._graph[0]
        entries.append({"module": "keras.layers", "class_name": "InputLayer",
                        "config": {"batch_shape": _json_shape(kt.shape),
                                   "dtype": _jsonable(kt.dtype, "input dtype"),
                                   "name": f"{model.name}_input"},
                        "registered_name": None})
    entries += [serialize_keras_object(layer) for layer in model.layers]
    return {"name": model.name, "trainable": model.trainable,
            "dtype": model._dtype_policy.name, "layers": entries}


def _history(tensor, graph):
    """``[layer name, index of the call among the model's calls of it, output index]``."""
    names, node_index = graph
    node = tensor._node
    outs = list(flatten(node.outputs))
    index = next(i for i, t in enumerate(outs) if t is tensor)
    return [names[id(node.layer)], node_index[id(node)], index]


def _encode_args(value, graph):
    if isinstance(value, KerasTensor):
        return {"class_name": "__keras_tensor__",
                "config": {"shape": _json_shape(value.shape), "dtype": value.dtype,
                           "keras_history": _history(value, graph)}}
    if isinstance(value, (list, tuple)):
        return [_encode_args(v, graph) for v in value]
    if isinstance(value, dict):
        return {k: _encode_args(v, graph) for k, v in value.items()}
    return value


def _functional_config(model):
    from .models import _topological_nodes
    names = {id(layer): layer.name for layer in model.layers}
    if len(set(names.values())) != len(names):
        raise ValueError(f"model {model.name!r}: layer names must be unique to serialize it")
    nodes = [t._node for t in model.inputs] + [
        n for n in _topological_nodes(model.outputs) if not isinstance(n.layer, InputLayer)]
    by_layer, node_index = {}, {}
    for node in nodes:
        calls = by_layer.setdefault(id(node.layer), [])
        if id(node) not in node_index:
            node_index[id(node)] = len(calls)
            calls.append(node)
    graph = (names, node_index)
    entries = []
    for layer in model.layers:
        entry = serialize_keras_object(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = [] if isinstance(layer, InputLayer) else [
            {"args": _encode_args(list(node.args), graph),
             "kwargs": _encode_args(node.kwargs, graph)}
            for node in by_layer.get(id(layer), [])]
        entries.append(entry)
    def refs(struct, flat):
        if isinstance(struct, dict):  # a dict of inputs/outputs stays a dict, as in Keras
            return {k: _history(v, graph) for k, v in struct.items()}
        found = [_history(t, graph) for t in flat]
        return found[0] if len(found) == 1 else found  # one: the reference itself, as Keras

    return {"name": model.name, "trainable": model.trainable, "layers": entries,
            "input_layers": refs(model._inputs_struct, model.inputs),
            "output_layers": refs(model._outputs_struct, model.outputs)}


# --- deserializing -------------------------------------------------------------------------------

_REFUSED = {"Lambda": "a Lambda layer holds Python code",
            "__lambda__": "a serialized Python function is code"}


def _builtin_classes():
    from .models import Functional, Sequential
    found = {name: getattr(layers_module, name) for name in dir(layers_module)
             if isinstance(getattr(layers_module, name), type)
             and issubclass(getattr(layers_module, name), Layer)}
    found.update(Sequential=Sequential, Functional=Functional, Model=Functional)
    from .feature_space import FeatureSpace
    found["FeatureSpace"] = FeatureSpace
    return found


def _resolve(entry, custom_objects):
    class_name = entry.get("class_name")
    if class_name in _REFUSED:
        raise ValueError(f"cannot deserialize {class_name!r}: {_REFUSED[class_name]}, and "
                         "minitf never executes code from a model file; rebuild that part in "
                         "Python and load the weights")
    registered = entry.get("registered_name")
    found = _lookup((registered, class_name), custom_objects)
    if found is not None:
        return found
    builtins = _builtin_classes()
    if class_name in builtins and (registered in (None, class_name)) and not str(
            entry.get("module")).startswith(("keras.regularizers", "keras.initializers",
                                             "keras.optimizers", "keras.losses",
                                             "keras.metrics")):
        return builtins[class_name]
    found = _resolve_object_class(entry) if registered in (None, class_name) else None
    if found is not None:
        return found
    raise ValueError(f"unknown class {registered or class_name!r} in the model config: pass it "
                     "in custom_objects={...} or decorate it with "
                     "@keras.saving.register_keras_serializable()")


def _check_no_code(value, where):
    if isinstance(value, dict):
        if value.get("class_name") in _REFUSED:
            _resolve(value, None)  # raises
        for k, v in value.items():
            _check_no_code(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_no_code(v, f"{where}[{i}]")


def _lookup(keys, custom_objects):
    for mapping in [custom_objects or {}] + _SCOPES[::-1] + [_CUSTOM_OBJECTS]:
        for key in keys:
            if key and key in mapping:
                return mapping[key]
    return None


def _resolve_function(entry, custom_objects):
    """A function named by an entry: from ``custom_objects``, a scope or the registry, else
    Keras' own activations and losses. Only looked up, never imported."""
    name, registered = entry.get("config"), entry.get("registered_name")
    if registered == "function":  # Keras 3's layout: the name (or registry key) is the config
        registered = None
    found = _lookup((registered, name), custom_objects)
    if found is None and isinstance(name, str) and ">" in name:
        # a registered function's key ("package>fn") found by its plain name in
        # custom_objects or a scope (Keras 3.15 requires the key there)
        found = _lookup((name.split(">", 1)[1],), custom_objects)
    if found is None:
        found = _builtin_functions().get((entry.get("module"), name))
    if found is None:
        found = next((fn for (_, key), fn in _builtin_functions().items() if key == name), None)
    if found is None:
        raise ValueError(f"unknown function {registered or name!r} in the config: pass it in "
                         "custom_objects={...} or decorate it with "
                         "@keras.saving.register_keras_serializable()")
    return found


def _resolve_object_class(entry):
    """A builtin non-layer class (regularizer, initializer, optimizer...) named by an entry;
    its ``module`` decides between namesakes (``keras.losses`` vs ``keras.metrics``)."""
    name, module = entry.get("class_name"), entry.get("module")
    kinds = _object_kinds()
    for kind_module, _, classes in kinds:
        if kind_module == module and name in classes:
            return classes[name]
    if module is None or not str(module).startswith("keras.layers"):
        for _, _, classes in kinds:
            if name in classes:
                return classes[name]
    return None


def deserialize_keras_object(entry, custom_objects=None):
    """Build the object ``serialize_keras_object`` described: a layer or model (weights not
    loaded), another Keras object through its class's ``from_config``, or a function looked up
    by name. Plain values come back as they are."""
    if custom_objects:  # seen by nested lookups too (a Dense's activation entry...)
        with CustomObjectScope(custom_objects):
            return _deserialize(entry, custom_objects)
    return _deserialize(entry, custom_objects)


def _deserialize(entry, custom_objects):
    from .models import Functional, Sequential
    if entry is None or isinstance(entry, (bool, int, float, str)):
        return entry
    if isinstance(entry, list):
        return [deserialize_keras_object(v, custom_objects) for v in entry]
    if not isinstance(entry, dict) or "class_name" not in entry:
        raise ValueError(f"deserialize_keras_object: expected a dict with 'class_name', got "
                         f"{type(entry).__name__}")
    _check_no_code(entry, entry["class_name"])
    if entry["class_name"] == "function":
        return _resolve_function(entry, custom_objects)
    cls = _resolve(entry, custom_objects)
    config = dict(entry.get("config") or {})
    if not (isinstance(cls, type) and issubclass(cls, Layer)):
        try:
            return cls.from_config(config)
        except TypeError as exc:
            raise ValueError(f"{getattr(cls, '__name__', cls)}.from_config failed ({exc}); a "
                             "class whose __init__ takes arguments needs get_config() returning "
                             "them") from None
    if cls is InputLayer:
        return InputLayer(batch_shape=tuple(config["batch_shape"]), dtype=config.get("dtype"),
                          name=config.get("name"))
    if issubclass(cls, Sequential) and "layers" in config and cls is Sequential:
        layers = [deserialize_keras_object(e, custom_objects) for e in config.pop("layers")]
        model = Sequential(layers, name=config.get("name"),
                           trainable=config.get("trainable", True))
    elif cls is Functional:
        model = _functional_from_config(config, custom_objects)
    else:
        try:
            model = cls.from_config(_from_keras(cls, config))
        except TypeError as exc:
            raise ValueError(f"{cls.__name__}.from_config failed ({exc}); a class whose "
                             "__init__ takes arguments needs get_config() returning them (and "
                             "from_config when they are not plain values)") from None
    build_config = entry.get("build_config")
    if build_config and not model.built:  # before the weights are loaded, as in Keras
        model.build_from_config(build_config)
    return model


# Options Keras 3 writes into layer configs that minitf's layers do not take: dropped when they
# hold the value that means "off"; any other value is an error naming the option.
_NEUTRAL = {"quantization_config": None, "activity_regularizer": None, "lora_rank": None,
            "lora_alpha": None, "groups": 1, "synchronized": False, "renorm": False,
            "renorm_clipping": None, "renorm_momentum": 0.99, "rms_scaling": False,
            "embeddings_regularizer": None, "embeddings_constraint": None,
            "input_axes": None, "output_axes": None, "sparse": False, "ragged": False,
            "optional": False}


def _accepted(cls):
    import inspect
    names, open_kwargs = set(), False
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters.values()
        names |= {p.name for p in params if p.kind is not p.VAR_KEYWORD}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return names
        open_kwargs = True
        if klass is Layer:
            return names
    return None if open_kwargs else names


def _from_keras(cls, config):
    """A config Keras 3 wrote, in the form minitf's constructors take: dtype policies as their
    name, initializer entries without the Keras-only options, neutral Keras-only options
    dropped."""
    config = {k: _from_keras_value(v) for k, v in config.items()}
    accepted = _accepted(cls)
    if accepted is None:
        return config
    for key in [k for k in config if k not in accepted]:
        if key in _NEUTRAL and config[key] == _NEUTRAL[key]:
            del config[key]
        elif key in _NEUTRAL:
            raise ValueError(f"{cls.__name__}: the Keras option {key}={config[key]!r} is not "
                             "supported by minitf")
    return config


def _from_keras_value(value):
    if isinstance(value, dict) and value.get("class_name") == "DTypePolicy":
        return value.get("config", {}).get("name")
    if isinstance(value, dict) and value.get("module") == "keras.initializers":
        inner = {k: v for k, v in (value.get("config") or {}).items()
                 if not (k in _NEUTRAL and v == _NEUTRAL[k])}
        return {"class_name": value["class_name"], "config": inner}
    return value


def _is_flat_shape(shape):
    return isinstance(shape, (list, tuple)) and all(d is None or isinstance(d, int) for d in shape)


def _functional_from_config(config, custom_objects, cls=None):
    """The model of a functional config: ``cls(inputs, outputs, name=...)`` (``Functional``
    unless a subclass of Model is given)."""
    from .models import Functional
    cls = cls or Functional
    created, tensors = {}, {}
    pending = []
    for entry in config["layers"]:
        layer = deserialize_keras_object(entry, custom_objects)
        created[entry["name"]] = layer
        if isinstance(layer, InputLayer):
            tensors[(entry["name"], 0, 0)] = layer._input_tensor
        for node in entry.get("inbound_nodes", []):
            pending.append((entry["name"], node))

    def decode(value):
        if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
            key = tuple(value["config"]["keras_history"])
            if key not in tensors:
                raise KeyError(key)
            return tensors[key]
        if isinstance(value, list):
            return [decode(v) for v in value]
        if isinstance(value, dict):
            return {k: decode(v) for k, v in value.items()}
        return value

    node_counts = {}
    while pending:
        progressed = False
        for item in list(pending):
            name, node = item
            try:
                args, kwargs = decode(node["args"]), decode(node.get("kwargs", {}))
            except KeyError:
                continue
            outputs = created[name](*args, **kwargs)
            index = node_counts.get(name, 0)
            node_counts[name] = index + 1
            for i, t in enumerate(flatten(outputs)):
                tensors[(name, index, i)] = t
            pending.remove(item)
            progressed = True
        if not progressed:
            raise ValueError(f"functional config: cannot connect the layers "
                             f"{sorted({n for n, _ in pending})} (their inputs are missing)")

    def pick(refs):
        if isinstance(refs, dict):
            return {k: pick(v)[0] for k, v in refs.items()}
        if len(refs) == 3 and isinstance(refs[0], str):  # a single reference
            refs = [refs]
        try:
            return [tensors[tuple(r)] for r in refs]
        except KeyError as exc:
            raise ValueError(f"functional config: unknown tensor {exc.args[0]}") from None

    inputs, outputs = pick(config["input_layers"]), pick(config["output_layers"])
    return cls(inputs[0] if isinstance(inputs, list) and len(inputs) == 1 else inputs,
               outputs[0] if isinstance(outputs, list) and len(outputs) == 1 else outputs,
               name=config.get("name"), trainable=config.get("trainable", True))
