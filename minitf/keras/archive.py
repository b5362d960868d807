"""Whole models in Keras 3's ``.keras`` format: ``model.save("m.keras")`` / ``load_model``.

A ``.keras`` file is a zip archive holding

    metadata.json       who wrote it and when
    config.json         the architecture (``serialization.serialize_keras_object``)
    model.weights.h5    the weights in the ``.weights.h5`` layout (see ``weights_h5.py``)
    assets/<path>/...   files a layer's ``save_assets(dir_path)`` wrote, under the layer's
                        path in the weights tree (``assets/layers/<layer>/vocabulary.txt``)

Loading rebuilds the architecture from the config by class name (built-in layers and models,
``custom_objects``, classes registered with ``register_keras_serializable``) and loads the
weights (each layer's ``build_from_config(build_config)`` first, then ``compile_from_config``,
the weights through ``load_own_variables`` hooks where a layer has them, then each layer's
``load_assets(dir_path)`` with its files extracted to a temporary folder). Nothing in the file
is executed or unpickled; Lambda layers are refused. The archive is
written to a temporary file and moved into place, so an interrupted save leaves no partial file.
"""
import datetime
import io
import json
import os
import posixpath
import tempfile
import zipfile

import h5py

from ..atomic_file import atomic_path
from . import weights_h5
from .serialization import deserialize_keras_object, serialize_keras_object

__all__ = ["save_model", "load_model", "read_archive_weights"]

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.h5"
ASSETS = "assets"


def _check_suffix(filepath, what):
    filepath = os.fspath(filepath)
    if not filepath.endswith(".keras"):
        raise ValueError(f"{what}: the filename must end in '.keras' (or '.h5' for Keras' legacy "
                         f"HDF5 format), got {filepath!r} (weights alone: "
                         "model.save_weights('....weights.h5'))")
    return filepath


def save_model(model, filepath, overwrite=True):
    """Write ``model`` (architecture and weights) to a ``.keras`` archive."""
    from .. import __version__
    filepath = _check_suffix(filepath, "save")
    if not overwrite and os.path.exists(filepath):
        raise FileExistsError(f"save: {filepath!r} exists and overwrite=False")
    if not model.built:
        raise ValueError(f"save: model {model.name!r} is not built yet; call it on a batch or "
                         "use model.build(input_shape) first")
    config = serialize_keras_object(model)
    # a custom get_compile_config may return objects (losses, optimizers, functions): they
    # are serialized as Keras does, and compile_from_config receives those entries
    compile_config = model.get_compile_config() if hasattr(
        model, "get_compile_config") else None
    config["compile_config"] = serialize_keras_object(compile_config)
    metadata = {"producer": "minitf", "minitf_version": __version__,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    weights = io.BytesIO()
    model._assign_paths()
    with h5py.File(weights, "w") as f:
        weights_h5.write_layout(f, model)
    config_json = json.dumps(config)
    with atomic_path(filepath, suffix=".keras") as tmp:
        with zipfile.ZipFile(tmp, "w") as zf:
            zf.writestr(METADATA, json.dumps(metadata))
            zf.writestr(CONFIG, config_json)
            zf.writestr(WEIGHTS, weights.getvalue())
            _save_assets(zf, model)


def _asset_layers(model, method):
    """``(zip folder, layer)`` of the layers that have a ``method`` hook (``save_assets`` /
    ``load_assets``), at their path in the weights tree, as Keras names them."""
    for path, layer in weights_h5.layer_entries(model):
        if callable(getattr(layer, method, None)):
            yield (posixpath.join(ASSETS, path) if path else ASSETS), layer


def _save_assets(zf, model):
    for folder, layer in _asset_layers(model, "save_assets"):
        with tempfile.TemporaryDirectory(prefix="minitf_assets_") as tmp:
            layer.save_assets(tmp)
            for root, _, files in os.walk(tmp):
                for name in sorted(files):
                    full = os.path.join(root, name)
                    rel = os.path.relpath(full, tmp).replace(os.sep, "/")
                    zf.write(full, f"{folder}/{rel}")


def _load_assets(zf, model, filepath):
    names = [n for n in zf.namelist() if n.startswith(ASSETS + "/") and not n.endswith("/")]
    for folder, layer in _asset_layers(model, "load_assets"):
        prefix = folder + "/"
        with tempfile.TemporaryDirectory(prefix="minitf_assets_") as tmp:
            for name in names:
                if not name.startswith(prefix):
                    continue
                rel = name[len(prefix):]
                parts = rel.split("/")
                if any(p in ("", ".", "..") for p in parts) or ":" in rel or "\\" in rel:
                    raise ValueError(f"load_model: {filepath!r}: unsafe asset path {name!r}")
                target = os.path.join(tmp, *parts)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as out:
                    out.write(zf.read(name))
            layer.load_assets(tmp)


def _open(filepath, what):
    filepath = _check_suffix(filepath, what)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"{what}: no such file {filepath!r}")
    try:
        zf = zipfile.ZipFile(filepath, "r")
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{what}: {filepath!r} is not a .keras archive (not a zip file: "
                         f"{exc})") from None
    names = set(zf.namelist())
    missing = [n for n in (CONFIG, WEIGHTS) if n not in names]
    if missing:
        zf.close()
        raise ValueError(f"{what}: {filepath!r} is not a .keras archive: it lacks {missing}")
    return filepath, zf


def _read_weights(zf, model, filepath, skip_mismatch):
    from .saving import read_weights_file
    with h5py.File(io.BytesIO(zf.read(WEIGHTS)), "r") as f:
        read_weights_file(f, model, f"{filepath}:{WEIGHTS}", skip_mismatch)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """Rebuild a model saved with ``model.save("....keras")`` (or by Keras 3, for the layers
    minitf has), weights included. With ``compile=True`` a model saved compiled comes back
    compiled with its optimizer state, so training resumes where it stopped. ``safe_mode`` is
    accepted for Keras' signature: code in a file is never executed."""
    del safe_mode
    filepath, zf = _open(filepath, "load_model")
    with zf:
        try:
            config = json.loads(zf.read(CONFIG).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"load_model: {filepath!r}: config.json is not valid JSON: "
                             f"{exc}") from None
        model = deserialize_keras_object(config, custom_objects)
        if not model.built:
            raise ValueError(f"load_model: {filepath!r}: model {model.name!r} could not be "
                             "built from its config (no build_config input_shape)")
        if compile and config.get("compile_config") and hasattr(model, "compile_from_config"):
            from .serialization import CustomObjectScope
            with CustomObjectScope(custom_objects or {}):
                model.compile_from_config(config["compile_config"])
        _read_weights(zf, model, filepath, skip_mismatch=False)
        _load_assets(zf, model, filepath)
    return model


def read_archive_weights(model, filepath, skip_mismatch=False):
    """``model.load_weights("m.keras")``: the weights of a ``.keras`` archive."""
    filepath, zf = _open(filepath, "load_weights")
    with zf:
        _read_weights(zf, model, filepath, skip_mismatch)
