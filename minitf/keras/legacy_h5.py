"""Keras' legacy HDF5 model format: ``model.save("m.h5")``, ``load_model("m.h5")`` and
``model.load_weights`` of a tf.keras ``.h5`` weights file.

The layout is the one tf.keras 2 and Keras 3 (``keras/src/legacy/saving/legacy_h5_format.py``)
read and write:

    attrs: model_config (JSON), training_config (JSON, when compiled), keras_version, backend
    model_weights/                       attrs: layer_names, backend, keras_version
        <layer name>/                    attrs: weight_names (the layer's trainable weights,
            <weight name>                 then its non-trainable ones, in order)
        top_level_model_weights/         the model's own variables, outside any layer
    optimizer_weights/                   attrs: weight_names (the optimizer's variables)

Weights are matched to layers **by order** (the layers that have weights, in ``model.layers``
order), as Keras does, so names written by another program do not need to agree. Nothing in
the file is executed or unpickled. Files are written to a temporary file and renamed.
"""
import json
import logging
import os

import h5py
import numpy

from .. import backend as B
from ..atomic_file import atomic_path

logger = logging.getLogger("minitf")

SUFFIXES = (".h5", ".hdf5")
_ATTR_LIMIT = 64512   # HDF5's object header limit: longer name lists are split (Keras' rule)


def is_legacy_path(filepath):
    path = os.fspath(filepath)
    return path.endswith(SUFFIXES) and not path.endswith(".weights.h5")


def _names(group, name):
    """A list-of-strings attribute, possibly split into ``name0``, ``name1``... chunks."""
    if name in group.attrs:
        values = list(group.attrs[name])
    else:
        values, k = [], 0
        while f"{name}{k}" in group.attrs:
            values.extend(group.attrs[f"{name}{k}"])
            k += 1
    return [v.decode("utf8") if isinstance(v, bytes) else str(v) for v in values]


def _write_names(group, name, values):
    """Keras' rule: byte strings, split into ``name0``, ``name1``... past the header limit."""
    data = numpy.array([v.encode("utf8") for v in values]) if values else numpy.zeros(0)
    chunks = 1
    while data.nbytes / chunks > _ATTR_LIMIT:
        chunks += 1
    if chunks == 1:
        group.attrs[name] = data
    else:
        for k, part in enumerate(numpy.array_split(data, chunks)):
            group.attrs[f"{name}{k}"] = part


def is_legacy_weights(f):
    """Does the open h5py file (or group) hold legacy layer weights?"""
    return "layer_names" in f.attrs or "layer_names0" in f.attrs


def _layer_weights(layer):
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def _write_subset(group, variables, names):
    _write_names(group, "weight_names", names)
    for name, v in zip(names, variables):
        data = B.to_numpy(v._value)
        if data.dtype.name == "bfloat16":   # HDF5 has no bfloat16: stored widened
            data = data.astype("float32")
        group.create_dataset(name, data=data)


def write_model_weights(f, model):
    """The ``model_weights`` layout into the open h5py group ``f``."""
    from .. import __version__
    model._assign_paths()
    layers = list(model.layers)
    _write_names(f, "layer_names", [layer.name for layer in layers])
    f.attrs["backend"] = "minitf"
    f.attrs["keras_version"] = f"minitf-{__version__}"
    in_layers = set()
    for layer in sorted(layers, key=lambda layer: layer.name):
        weights = _layer_weights(layer)
        in_layers.update(id(v) for v in weights)
        _write_subset(f.create_group(layer.name), weights, [v.path for v in weights])
    own = [v for v in model.weights if id(v) not in in_layers]
    _write_subset(f.create_group("top_level_model_weights"), own, [v.path for v in own])


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """``model.save("m.h5")``: architecture, weights, compile arguments and optimizer state."""
    from .. import __version__
    from .serialization import serialize_keras_object
    filepath = os.fspath(filepath)
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"save: {filepath!r} exists and overwrite=False")
    if not model.built:
        raise ValueError(f"save: model {model.name!r} is not built yet; call it on a batch or "
                         "use model.build(input_shape) first")
    logger.warning("save: %r uses the legacy HDF5 model format; the '.keras' format keeps more "
                   "(custom objects' configs, exact resume of every optimizer)", filepath)
    config = json.dumps(serialize_keras_object(model))
    training = _training_config(model)
    optimizer = getattr(model, "optimizer", None)
    with atomic_path(filepath, suffix=os.path.splitext(filepath)[1]) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["backend"] = "minitf"
            f.attrs["keras_version"] = f"minitf-{__version__}"
            f.attrs["model_config"] = config
            if training is not None:
                f.attrs["training_config"] = json.dumps(training)
            write_model_weights(f.create_group("model_weights"), model)
            if include_optimizer and optimizer is not None and optimizer.variables:
                variables = list(optimizer.variables)
                _write_subset(f.create_group("optimizer_weights"), variables,
                              [v.path for v in variables])


def _training_config(model):
    if not getattr(model, "compiled", False) or not hasattr(model, "get_compile_config"):
        return None
    config = dict(model.get_compile_config())
    optimizer = config.pop("optimizer", None)
    if isinstance(optimizer, dict):
        optimizer = {"class_name": optimizer["class_name"], "config": optimizer["config"]}
    config["optimizer_config"] = optimizer
    return config


def read_model_weights(f, model, where, skip_mismatch=False):
    """Assign the legacy layer weights in the open group ``f`` to ``model``'s layers, matched by
    order. Checks everything before assigning anything (unless ``skip_mismatch``)."""
    saved = [name for name in _names(f, "layer_names") if _names(f[name], "weight_names")]
    layers = [layer for layer in model.layers if _layer_weights(layer)]
    if len(saved) != len(layers):
        raise ValueError(f"load_weights: {where} has weights for {len(saved)} layers "
                         f"({saved}) but model {model.name!r} has {len(layers)} layers with "
                         f"weights ({[layer.name for layer in layers]})")
    pairs, problems = [], []
    for name, layer in zip(saved, layers):
        group = f[name]
        values = [group[n][()] for n in _names(group, "weight_names")]
        pairs.append((layer, values, _check(layer.name, name, _layer_weights(layer), values,
                                            problems)))
    if "top_level_model_weights" in f:
        group = f["top_level_model_weights"]
        values = [group[n][()] for n in _names(group, "weight_names")]
        if values:
            in_layers = {id(v) for layer in model.layers for v in _layer_weights(layer)}
            own = [v for v in model.weights if id(v) not in in_layers]
            pairs.append((model, values, _check(model.name, "top_level_model_weights", own,
                                                values, problems)))
    if problems:
        message = f"load_weights: {where} does not match the model:\n" + "\n".join(problems)
        if not skip_mismatch:
            raise ValueError(message)
        logger.warning("load_weights(skip_mismatch=True): %s", message)
    for _, values, variables in pairs:
        for var, value in zip(variables or (), values):
            var.assign(B.from_numpy(value, dtype=var._value.dtype))


def _check(layer_name, saved_name, variables, values, problems):
    """``variables`` when ``values`` fit them, else None (and a line in ``problems``)."""
    if len(variables) != len(values):
        problems.append(f"  layer {layer_name!r} has {len(variables)} weights, the file's "
                        f"{saved_name!r} {len(values)}")
        return None
    for var, value in zip(variables, values):
        if tuple(var.shape) != tuple(value.shape):
            problems.append(f"  layer {layer_name!r}: {var.path} has shape {tuple(var.shape)}, "
                            f"the file's {saved_name!r} value {tuple(value.shape)}")
            return None
    return variables


def load_model(filepath, custom_objects=None, compile=True):
    """``keras.models.load_model("m.h5")``: rebuild the architecture from ``model_config``,
    load the weights, and compile (optimizer state included) when the file was compiled."""
    from .serialization import CustomObjectScope, deserialize_keras_object
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"load_model: no such file {filepath!r}")
    try:
        f = h5py.File(filepath, "r")
    except OSError as exc:
        raise ValueError(f"load_model: {filepath!r} is not an HDF5 file ({exc})") from None
    with f:
        if "model_config" not in f.attrs:
            raise ValueError(f"load_model: {filepath!r} has no model_config (a weights-only "
                             f"file: build the model and call model.load_weights)")
        config = json.loads(_text(f.attrs["model_config"]))
        model = deserialize_keras_object(config, custom_objects)
        if not model.built:
            raise ValueError(f"load_model: {filepath!r}: model {model.name!r} could not be "
                             "built from its config (it has no input shape)")
        read_model_weights(f["model_weights"], model, repr(filepath))
        training = f.attrs.get("training_config")
        if compile and training is not None:
            with CustomObjectScope(custom_objects or {}):
                _compile(model, json.loads(_text(training)), f, filepath)
    return model


def _text(value):
    return value.decode("utf8") if isinstance(value, bytes) else str(value)


def _compile(model, training, f, filepath):
    config = {k: training.get(k) for k in ("loss", "metrics", "loss_weights",
                                           "weighted_metrics")}
    config["optimizer"] = training.get("optimizer_config")
    model.compile_from_config(config)
    if "optimizer_weights" not in f or not getattr(model, "compiled", False):
        return
    group = f["optimizer_weights"]
    values = [group[n][()] for n in _names(group, "weight_names")]
    variables = list(model.optimizer.variables)
    if len(values) != len(variables) or any(tuple(v.shape) != tuple(a.shape)
                                            for v, a in zip(variables, values)):
        logger.warning("load_model: %r: the saved optimizer state (%d values) does not fit the "
                       "optimizer (%d variables); it starts afresh", filepath, len(values),
                       len(variables))
        return
    for var, value in zip(variables, values):
        var.assign(B.from_numpy(value, dtype=var._value.dtype))
