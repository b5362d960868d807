"""HDF5 checkpoints of the full training state (h5py only; no pickle anywhere).

Layout of one file::

    /                  attrs: format, format_version, step, epoch, config (resolved YAML text),
                              run_dir, created
    /model_weights     keras.saving.write_weights(group, model): the model's weights in
                       Keras 3's ``.weights.h5`` layout (``layers/dense/vars/0`` ...); files
                       from older minitf versions hold the path layout there, which still loads
    /state/...         a nested dict written by ``write_tree``: optimizer state, loss scale,
                       RNG states, data-iterator position, metric states, callback states, history

``write_tree`` maps dicts to groups, numpy arrays to datasets, and str/int/float/bool/None and
numpy scalars to attributes, with a JSON attribute recording each entry's type, so ``read_tree``
returns exactly what was written: ints of any size (a PCG64 state holds 128-bit ints; those go in
as decimal strings), floats bit for bit, any string keys. A dict of leaves keyed by paths (the
optimizer's ``slots/<variable path>/<slot>``) is stored as nested groups along those paths.

Files are written to a temporary file in the target directory, flushed, fsync'ed and moved into
place with ``os.replace``: a run killed during a save leaves the previous checkpoint intact.
Unreadable, truncated or foreign files raise ``CheckpointError`` naming the file.
"""
import json
import os
import re
import time

import h5py
import numpy as np

from ..atomic_file import atomic_path

__all__ = ["CheckpointError", "FORMAT", "FORMAT_VERSION", "write_tree", "read_tree",
           "atomic_write", "save_checkpoint", "Checkpoint", "open_checkpoint",
           "list_checkpoints", "latest_checkpoint", "prune_checkpoints", "checkpoint_name",
           "remove_stale_temporaries"]

FORMAT = "minitf.training.checkpoint"
FORMAT_VERSION = 1
_TYPES = "__minitf_types__"
_NAME = re.compile(r"^ckpt-(\d+)\.h5$")
_TMP_PREFIX = ".tmp-"


class CheckpointError(RuntimeError):
    """A checkpoint file is missing, unreadable, truncated, foreign or of an unknown version."""


# --- dict <-> HDF5 -----------------------------------------------------------------------------

def _escape(key):
    # "/" makes HDF5 paths, "." is the group itself, "" is not a name; "%" escapes first.
    if key in ("", "."):
        return {"": "%00", ".": "%2E"}[key]
    out = key.replace("%", "%25").replace("/", "%2F")
    return "%5F" + out[1:] if out == _TYPES else out


def _unescape(name):
    if name in ("%00", "%2E"):
        return {"%00": "", "%2E": "."}[name]
    if name.startswith("%5F"):
        name = "_" + name[3:]
    return name.replace("%2F", "/").replace("%25", "%")


def _host_array(value):
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "get") and hasattr(value, "shape"):  # a device array (cupy, strict)
        return value.get()
    return np.asarray(value.numpy())  # minitf Tensor / Variable


def _nest_paths(flat):
    """``{"a/b": 1, "a/c": 2}`` -> ``{"a": {"b": 1, "c": 2}}`` for a dict of leaves whose keys
    are paths (an optimizer's state); None when that does not apply or is ambiguous."""
    if not any("/" in k for k in flat if isinstance(k, str)):
        return None
    root = {}
    for key, value in flat.items():
        if not isinstance(key, str) or isinstance(value, (dict, list, tuple)):
            return None
        *parents, leaf = key.split("/")
        node = root
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict) or part in ("", "."):
                return None
        if leaf in ("", ".") or leaf in node:
            return None
        node[leaf] = value
    return root


def _flatten_paths(tree, prefix=""):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _flatten_paths(value, f"{prefix}{key}/")
        else:
            yield f"{prefix}{key}", value


def write_tree(group, tree, path=""):
    """Write a nested dict into an h5py group (see the module docstring for the mapping)."""
    types = {}
    for key, value in tree.items():
        where = f"{path}/{key}"
        if not isinstance(key, str):
            raise TypeError(f"checkpoint key {where!r}: keys must be strings, got {key!r}")
        name = _escape(key)
        nested = _nest_paths(value) if isinstance(value, dict) else None
        if nested is not None:  # {"slots/dense/kernel/m": ...} as groups slots/dense/kernel
            write_tree(group.create_group(name), nested, where)
            types[name] = "paths"
        elif isinstance(value, dict):
            write_tree(group.create_group(name), value, where)
            types[name] = "dict"
        elif isinstance(value, (list, tuple)):
            write_tree(group.create_group(name), {str(i): v for i, v in enumerate(value)}, where)
            types[name] = type(value).__name__
        elif value is None:
            types[name] = "none"
        elif isinstance(value, bool):
            group.attrs[name] = np.bool_(value)
            types[name] = "bool"
        elif isinstance(value, int):
            if -2 ** 63 <= value < 2 ** 63:
                group.attrs[name] = np.int64(value)
                types[name] = "int"
            else:
                group.attrs[name] = str(value)
                types[name] = "bigint"
        elif isinstance(value, float):
            group.attrs[name] = np.float64(value)
            types[name] = "float"
        elif isinstance(value, str):
            group.attrs[name] = value
            types[name] = "str"
        elif isinstance(value, np.generic):
            if value.dtype.kind not in "biuf":
                raise TypeError(f"checkpoint entry {where!r}: unsupported numpy scalar "
                                f"{value.dtype}")
            group.attrs.create(name, value, dtype=value.dtype)
            types[name] = "np:" + value.dtype.str
        elif isinstance(value, np.ndarray) or hasattr(value, "__array__"):
            array = _host_array(value)
            if array.dtype.kind not in "biuf":
                raise TypeError(f"checkpoint entry {where!r}: unsupported array dtype "
                                f"{array.dtype}")
            group.create_dataset(name, data=array)
            types[name] = "array"
        else:
            raise TypeError(f"checkpoint entry {where!r}: cannot store a "
                            f"{type(value).__name__}")
    group.attrs[_TYPES] = json.dumps(types)  # insertion order: read back in the same order


def read_tree(group):
    """Read back what ``write_tree`` wrote: the same nested dict, types and values."""
    types = json.loads(_attr_str(group.attrs[_TYPES]))
    out = {}
    for name in types:
        tag, key = types[name], _unescape(name)
        if tag in ("dict", "paths", "list", "tuple"):
            sub = read_tree(group[name])
            if tag == "paths":
                sub = dict(_flatten_paths(sub))
            elif tag != "dict":
                sub = [sub[str(i)] for i in range(len(sub))]
                sub = tuple(sub) if tag == "tuple" else sub
            out[key] = sub
        elif tag == "none":
            out[key] = None
        elif tag == "array":
            out[key] = np.array(group[name][()])
        else:
            raw = group.attrs[name]
            if tag == "bool":
                out[key] = bool(raw)
            elif tag == "int":
                out[key] = int(raw)
            elif tag == "bigint":
                out[key] = int(_attr_str(raw))
            elif tag == "float":
                out[key] = float(raw)
            elif tag == "str":
                out[key] = _attr_str(raw)
            elif tag.startswith("np:"):
                out[key] = np.dtype(tag[3:]).type(raw)
            else:
                raise ValueError(f"unknown entry type {tag!r} for {group.name}/{name}")
    return out


def _attr_str(value):
    if isinstance(value, np.ndarray):
        value = value.item()
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


# --- atomic files ------------------------------------------------------------------------------

def atomic_write(path, fill):
    """Create HDF5 file ``path`` by calling ``fill(h5file)`` on a temporary sibling, fsync, rename.

    On any exception (or a kill) before the rename, ``path`` is untouched; the temporary file
    is removed when Python gets the chance (``remove_stale_temporaries`` cleans up after kills).
    """
    path = os.path.abspath(os.fspath(path))
    with atomic_path(path, prefix=_TMP_PREFIX + os.path.basename(path) + ".") as tmp:
        with h5py.File(tmp, "w") as f:
            fill(f)
            f.flush()
    return path


def remove_stale_temporaries(directory):
    """Delete temporary files left by saves that were killed midway."""
    if not os.path.isdir(directory):
        return
    for name in os.listdir(directory):
        if name.startswith(_TMP_PREFIX) and name.endswith(".tmp"):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def save_checkpoint(path, *, model, state, attrs, config_text, write_weights):
    """Write one checkpoint atomically.

    Args:
        model: the model (or a list of its variables), written by ``write_weights(group,
            model)`` under ``/model_weights``.
        state: nested dict for ``/state`` (see ``write_tree``).
        attrs: extra root attributes (ints/floats/strings: step, epoch, ...).
        config_text: the resolved config as YAML text.
    """
    def fill(f):
        f.attrs["format"] = FORMAT
        f.attrs["format_version"] = np.int64(FORMAT_VERSION)
        f.attrs["config"] = config_text
        f.attrs["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        for key, value in attrs.items():
            f.attrs[key] = value
        write_weights(f.create_group("model_weights"), model)
        write_tree(f.create_group("state"), state, "/state")

    return atomic_write(path, fill)


# --- reading -----------------------------------------------------------------------------------

class Checkpoint:
    """An open, validated checkpoint; use as a context manager.

    Attributes: ``path``, ``file`` (the h5py.File), ``step``, ``epoch``, ``config_text``.
    Methods read parts, turning any h5py/format problem into ``CheckpointError``.
    """

    def __init__(self, path, h5):
        self.path, self.file = path, h5

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.file.close()

    def _fail(self, what, exc):
        return CheckpointError(f"checkpoint {self.path}: cannot read {what} "
                               f"({type(exc).__name__}: {exc}); the file is truncated or "
                               "corrupt, or was not written by minitf")

    def attr(self, name, default=None):
        try:
            value = self.file.attrs.get(name, default)
        except Exception as exc:  # noqa: BLE001 - h5py raises many types on corrupt files
            raise self._fail(f"attribute {name!r}", exc) from None
        if isinstance(value, (bytes, np.bytes_)):
            return value.decode("utf-8")
        if isinstance(value, np.generic):
            return value.item()
        return value

    @property
    def step(self):
        return int(self.attr("step", 0))

    @property
    def epoch(self):
        return int(self.attr("epoch", 0))

    @property
    def config_text(self):
        text = self.attr("config")
        if text is None:
            raise CheckpointError(f"checkpoint {self.path} has no 'config' attribute")
        return str(text)

    def read_state(self):
        """The nested ``/state`` dict."""
        try:
            return read_tree(self.file["state"])
        except Exception as exc:  # noqa: BLE001
            raise self._fail("the training state (/state)", exc) from None

    def read_weights(self, model, read_weights):
        """Load ``/model_weights`` into ``model`` with ``read_weights(group, model)``."""
        try:
            group = self.file["model_weights"]
        except Exception as exc:  # noqa: BLE001
            raise self._fail("the model weights (/model_weights)", exc) from None
        try:
            read_weights(group, model)
        except ValueError as exc:  # read_weights' architecture mismatch report
            raise CheckpointError(f"checkpoint {self.path}: its weights do not fit the model "
                                  f"built from the config: {exc}") from None
        except (KeyError, OSError, RuntimeError, TypeError) as exc:
            raise self._fail("the model weights (/model_weights)", exc) from None


def open_checkpoint(path):
    """Open and validate a checkpoint file; raises CheckpointError naming the file."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint {path}: no such file")
    if os.path.isdir(path):
        raise CheckpointError(f"checkpoint {path}: is a directory, not a checkpoint file")
    try:
        h5 = h5py.File(path, "r")
    except Exception as exc:  # noqa: BLE001 - OSError for non-HDF5/truncated, others for junk
        reason = str(exc).split("(", 1)[-1].rstrip(")") if "(" in str(exc) else str(exc)
        raise CheckpointError(f"checkpoint {path}: not a readable HDF5 file ({reason}); it is "
                              "truncated, corrupt, or not a checkpoint") from None
    ckpt = Checkpoint(path, h5)
    try:
        fmt = ckpt.attr("format")
        if fmt != FORMAT:
            raise CheckpointError(
                f"checkpoint {path}: an HDF5 file but not a minitf training checkpoint "
                f"(format attribute {fmt!r}, expected {FORMAT!r}); a weights-only file "
                "can be loaded with model.load_weights")
        version = ckpt.attr("format_version")
        if not isinstance(version, int) or version < 1:
            raise CheckpointError(f"checkpoint {path}: invalid format_version {version!r}")
        if version > FORMAT_VERSION:
            raise CheckpointError(f"checkpoint {path}: format_version {version} is newer than "
                                  f"this minitf reads ({FORMAT_VERSION}); upgrade minitf")
        for part in ("model_weights", "state"):
            if part not in h5:
                raise CheckpointError(f"checkpoint {path}: the /{part} group is missing")
    except BaseException:
        h5.close()
        raise
    return ckpt


# --- directories -------------------------------------------------------------------------------

def checkpoint_name(step):
    """File name of the checkpoint taken after ``step`` training steps."""
    return f"ckpt-{step:08d}.h5"


def list_checkpoints(directory):
    """``[(step, path)]`` of the ckpt-<step>.h5 files in ``directory``, oldest first."""
    if not os.path.isdir(directory):
        return []
    found = []
    for name in os.listdir(directory):
        match = _NAME.match(name)
        if match:
            found.append((int(match.group(1)), os.path.join(directory, name)))
    return sorted(found)


def latest_checkpoint(directory):
    """Path of the checkpoint with the highest step in ``directory``, or None."""
    found = list_checkpoints(directory)
    return found[-1][1] if found else None


def prune_checkpoints(directory, keep_last):
    """Delete all but the ``keep_last`` newest ckpt-<step>.h5 files (best.h5 is never touched)."""
    found = list_checkpoints(directory)
    for _, path in found[:max(0, len(found) - keep_last)]:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
