"""Configs of Functional and Sequential models (Keras 3's layout), and models rebuilt from them.

A Functional config lists every layer (``keras.layers.serialize``) with its ``inbound_nodes``:
for each call of the layer inside the model, the call's arguments, where a KerasTensor is
written as ``{"class_name": "__keras_tensor__", "config": {"shape", "dtype",
"keras_history": [layer name, node index, tensor index]}}``. ``input_layers`` /
``output_layers`` give the model's inputs and outputs the same way, in the model's structure
(one ``[name, node, tensor]`` triple, a list of them or a dict of them).
"""
from ..nest import flatten
from .layers.base import InputLayer, KerasTensor
from .layers.serialization import deserialize, serialize

_KT = "__keras_tensor__"


def _history_map(nodes):
    """id(KerasTensor) -> [layer name, node index within the model, tensor index]."""
    counts, where = {}, {}
    for node in nodes:
        name = node.layer.name
        index = counts.get(id(node.layer), 0)
        counts[id(node.layer)] = index + 1
        for i, t in enumerate(flatten(node.outputs)):
            where[id(t)] = [name, index, i]
    return where


def _encode(value, where):
    if isinstance(value, KerasTensor):
        return {"class_name": _KT, "config": {
            "shape": [d for d in value.shape], "dtype": value.dtype.name,
            "keras_history": list(where[id(value)])}}
    if isinstance(value, dict):
        return {k: _encode(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v, where) for v in value]
    return value


def _structure(value, where):
    if isinstance(value, KerasTensor):
        return list(where[id(value)])
    if isinstance(value, dict):
        return {k: _structure(v, where) for k, v in value.items()}
    return [_structure(v, where) for v in value]


def functional_config(model, nodes):
    """``get_config()`` of a Functional model whose layer calls are ``nodes`` (topological,
    input nodes included)."""
    where = _history_map(nodes)
    names = set()
    for layer in model.layers:
        if layer.name in names:
            raise ValueError(f"model {model.name!r} has two layers named {layer.name!r}; "
                             f"layer names must be unique to serialize a model")
        names.add(layer.name)
    by_layer = {}
    for node in nodes:
        if isinstance(node.layer, InputLayer):
            continue
        by_layer.setdefault(id(node.layer), []).append(
            {"args": _encode(list(node.args), where), "kwargs": _encode(node.kwargs, where)})
    layers = []
    for layer in model.layers:
        entry = serialize(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = by_layer.get(id(layer), [])
        layers.append(entry)
    return {"name": model.name, "trainable": model.trainable, "layers": layers,
            "input_layers": _structure(model._inputs_struct, where),
            "output_layers": _structure(model._outputs_struct, where)}


def _is_triple(value):
    return (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)
            and all(isinstance(v, int) for v in value[1:]))


def functional_from_config(cls, config, custom_objects=None):
    """Rebuild the layers, replay their calls on new KerasTensors and build ``cls(inputs,
    outputs)``."""
    layers, order = {}, []
    for entry in config["layers"]:
        layer = deserialize(entry, custom_objects)
        name = entry.get("name", layer.name)
        layers[name] = layer
        order.append((name, entry.get("inbound_nodes", [])))
    outputs = {}  # (layer name, node index) -> flat list of output KerasTensors
    for name, layer in layers.items():
        if isinstance(layer, InputLayer):
            outputs[(name, 0)] = [layer._input_tensor]

    def ready(value):
        if isinstance(value, dict) and value.get("class_name") == _KT:
            name, index, _ = value["config"]["keras_history"]
            return (name, index) in outputs
        if isinstance(value, dict):
            return all(ready(v) for v in value.values())
        if isinstance(value, list):
            return all(ready(v) for v in value)
        return True

    def decode(value):
        if isinstance(value, dict) and value.get("class_name") == _KT:
            name, index, tensor = value["config"]["keras_history"]
            return outputs[(name, index)][tensor]
        if isinstance(value, dict):
            return {k: decode(v) for k, v in value.items()}
        if isinstance(value, list):
            return [decode(v) for v in value]
        return value

    pending = [(name, i, node) for name, nodes in order for i, node in enumerate(nodes)]
    while pending:
        remaining = []
        for name, index, node in pending:
            earlier_done = index == 0 or (name, index - 1) in outputs
            if earlier_done and ready(node["args"]) and ready(node["kwargs"]):
                args = decode(node["args"])
                out = layers[name](*args, **decode(node["kwargs"]))
                outputs[(name, index)] = list(flatten(out))
            else:
                remaining.append((name, index, node))
        if len(remaining) == len(pending):
            raise ValueError(f"model config {config.get('name')!r}: cannot rebuild the calls of "
                             f"{sorted({n for n, _, _ in remaining})}: their inputs are never "
                             f"produced")
        pending = remaining

    def tensors(struct):
        if _is_triple(struct):
            name, index, tensor = struct
            return outputs[(name, index)][tensor]
        if isinstance(struct, dict):
            return {k: tensors(v) for k, v in struct.items()}
        return [tensors(v) for v in struct]

    return cls(tensors(config["input_layers"]), tensors(config["output_layers"]),
               name=config.get("name"), trainable=config.get("trainable", True))


def sequential_config(model):
    layers = ([serialize(model._input_layer)] if model._input_layer is not None else []) + [
        serialize(layer) for layer in model._layers]
    config = {"name": model.name, "trainable": model.trainable,
              "dtype": model._dtype_policy.name, "layers": layers}
    if model._graph is not None:
        config["build_input_shape"] = list(model._graph[0].shape)
    return config


def sequential_from_config(cls, config, custom_objects=None):
    model = cls(name=config.get("name"), trainable=config.get("trainable", True),
                dtype=config.get("dtype"))
    for entry in config.get("layers", []):
        model.add(deserialize(entry, custom_objects))
    shape = config.get("build_input_shape")
    if not model.built and shape is not None and model._input_layer is None and model.layers:
        model.build(tuple(shape))
    return model
