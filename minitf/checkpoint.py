"""Object-based checkpoints: ``tf.train.Checkpoint`` and ``tf.train.CheckpointManager``.

A Checkpoint is built from named objects (``Checkpoint(step=v, model=model, optimizer=opt)``):
Variables, ``tf.Module``s, Keras layers and models, optimizers, and other Checkpoints. Each
variable is stored under its *object path*: the keyword, then attribute names down to it
(``model/dense_1/kernel``, ``net/l1/w``), so a checkpoint restores into any program that builds
the same objects, whatever their Keras names. Optimizer slots are stored under the path of the
variable they belong to.

Files are HDF5 (h5py, no pickle): ``<prefix>.h5`` holds ``/variables/<path>`` datasets and
``/optimizers/<path>`` state trees; it is written to a temporary file and renamed into place.
A text file ``checkpoint`` in the directory lists the saved prefixes, newest last (TF's layout,
so ``tf.train.latest_checkpoint(directory)`` finds the newest).

    ckpt = tf.train.Checkpoint(step=tf.Variable(0), optimizer=opt, net=net)
    manager = tf.train.CheckpointManager(ckpt, "./tf_ckpts", max_to_keep=3)
    ckpt.restore(manager.latest_checkpoint)     # a no-op when there is none yet
    ...
    manager.save()                              # ./tf_ckpts/ckpt-1

Restoring into a Keras model that is not built yet is deferred: the values are assigned
when the model is first called (and its optimizer slots when they are created). Likewise a
``tf.Module`` that creates a variable (or sub-module) after the restore gets its saved value
when it attaches it (``self.w = tf.Variable(...)``).
"""
import os
import re

import numpy as np

from . import backend as B
from .atomic_file import atomic_path
from .tensor import Variable

_FORMAT = "minitf.train.Checkpoint"
_STATE_FILE = "checkpoint"
_SUFFIX = ".h5"


def _is_layer(obj):
    from .keras.layers.base import Layer
    return isinstance(obj, Layer)


def _is_optimizer(obj):
    from .keras.optimizers.base import Optimizer
    from .keras.optimizers.loss_scale import LossScaleOptimizer
    return isinstance(obj, (Optimizer, LossScaleOptimizer))


def _check_trackable(name, obj):
    """Checkpointable: a Variable, tf.Module, Keras layer or model, optimizer, Checkpoint, or a
    list, tuple or dict of them (saved under ``name/0``, ``name/key``...)."""
    from .module import Module
    if isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            _check_trackable(f"{name}[{i}]", item)
    elif isinstance(obj, dict):
        for key, item in obj.items():
            _check_trackable(f"{name}[{key!r}]", item)
    elif not (isinstance(obj, (Variable, Module, Checkpoint)) or _is_layer(obj)
              or _is_optimizer(obj)):
        raise TypeError(f"tf.train.Checkpoint: {name}={type(obj).__name__} cannot be "
                        f"checkpointed; expected a Variable, tf.Module, Keras layer or model, "
                        f"optimizer or Checkpoint, or a list or dict of them")


def _layer_paths(layer, prefix, out, seen):
    """Variables of a Keras layer tree by attribute path (the model-tree keys)."""
    own, kids = layer._members()
    for key, v in own:
        if id(v) not in seen:
            seen.add(id(v))
            out[f"{prefix}/{key}"] = v
    for key, kid in kids:
        if id(kid) not in seen:
            seen.add(id(kid))
            _layer_paths(kid, f"{prefix}/{key}", out, seen)


def _collect(obj, prefix, variables, optimizers, layers, seen):
    from .module import Module
    if isinstance(obj, Variable):
        if id(obj) not in seen:
            seen.add(id(obj))
            variables[prefix] = obj
    elif isinstance(obj, Checkpoint):
        for key, child in obj._objects.items():
            _collect(child, f"{prefix}/{key}" if prefix else key, variables, optimizers, layers,
                     seen)
    elif _is_layer(obj):
        if id(obj) not in seen:
            seen.add(id(obj))
            layers[prefix] = obj
            _layer_paths(obj, prefix, variables, seen)
    elif _is_optimizer(obj):
        if id(obj) not in seen:
            seen.add(id(obj))
            optimizers[prefix] = obj
    elif isinstance(obj, Module):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        d = vars(obj)
        for key in sorted(d):
            if key not in _MODULE_INTERNALS:
                _collect(d[key], f"{prefix}/{key}", variables, optimizers, layers, seen)
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            _collect(obj[key], f"{prefix}/{key}", variables, optimizers, layers, seen)
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            _collect(item, f"{prefix}/{i}", variables, optimizers, layers, seen)


_MODULE_INTERNALS = ("_name", "_scope_name", "_pending_restore")


def _modules(obj, prefix, out, seen):
    """``(path prefix, tf.Module)`` for the Modules reachable from ``obj``, as ``_collect``
    walks them."""
    from .module import Module
    if isinstance(obj, Checkpoint):
        for key, child in obj._objects.items():
            _modules(child, f"{prefix}/{key}" if prefix else key, out, seen)
    elif isinstance(obj, Module) and not _is_layer(obj):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        out.append((prefix, obj))
        d = vars(obj)
        for key in sorted(d):
            if key not in _MODULE_INTERNALS:
                _modules(d[key], f"{prefix}/{key}", out, seen)
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            _modules(obj[key], f"{prefix}/{key}", out, seen)
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            _modules(item, f"{prefix}/{i}", out, seen)


def _defer_to_modules(modules, values):
    """Give each saved value with no variable yet to the deepest Module whose path holds it;
    it is assigned when that Module gets the variable (``restore_on_attach``). Returns the
    paths given."""
    given = set()
    for prefix, module in sorted(modules, key=lambda entry: -len(entry[0])):
        mine = {p: values[p] for p in values if p not in given and p.startswith(prefix + "/")}
        if mine:
            held = module.__dict__.get("_pending_restore")
            merged = dict(held[1]) if held else {}
            merged.update(mine)
            object.__setattr__(module, "_pending_restore", (prefix, merged))
            given.update(mine)
    return given


def restore_on_attach(module, name, value):
    """``module.name = value`` on a Module restored before it had these objects (TF's deferred
    restoration): assign the saved values of the variables now reachable through ``name``;
    Modules and unbuilt Keras layers inside take over the values of their own paths."""
    prefix, pending = module.__dict__["_pending_restore"]
    base = f"{prefix}/{name}"
    variables, layers = {}, {}
    _collect(value, base, variables, {}, layers, set())
    for path, var in variables.items():
        if path in pending:
            _assign(var, pending.pop(path), path)
    for layer_prefix, layer in layers.items():
        mine = {p: pending.pop(p) for p in list(pending) if p.startswith(layer_prefix + "/")}
        if mine and not layer.built:
            object.__setattr__(layer, "_deferred_restore", _deferred(layer_prefix, mine, {}, {}))
            _register_pending(layer, layer_prefix, mine)
    subs = []
    _modules(value, base, subs, set())
    for path in _defer_to_modules(subs, pending):
        del pending[path]
    if not pending:
        del module.__dict__["_pending_restore"]


def _inner(opt):
    return getattr(opt, "inner_optimizer", opt)  # LossScaleOptimizer keeps the slots inside


def _optimizer_state(opt, path_of_id):
    """The optimizer's state with slot keys rewritten from the optimizer's own variable keys to
    the object paths of the variables (matched by identity, not by name)."""
    key_to_path = {e.key: path_of_id[id(e.var)] for e in _inner(opt)._entry_list
                   if id(e.var) in path_of_id}
    out = {}
    for key, value in opt.get_state().items():
        for kind in ("slots/", "accumulators/"):
            if key.startswith(kind):
                rest = key[len(kind):]
                var_key, slot = rest.rsplit("/", 1) if kind == "slots/" else (rest, None)
                target = key_to_path.get(var_key)
                if target is None:  # a variable outside this checkpoint: not saved
                    break
                out[kind + target + ("" if slot is None else "/" + slot)] = value
                break
        else:
            out[key] = value
    return out


def _to_optimizer_keys(opt, state, var_of):
    """Inverse of ``_optimizer_state`` for the variables in ``var_of`` (object path ->
    Variable). The optimizer's entries for them are created first (``build``), so each saved
    slot lands on its own variable even when variable names repeat."""
    slot_vars = []
    for key in state:
        for kind in ("slots/", "accumulators/"):
            if key.startswith(kind):
                rest = key[len(kind):]
                obj_path = rest.rsplit("/", 1)[0] if kind == "slots/" else rest
                if obj_path in var_of:
                    slot_vars.append(var_of[obj_path])
    inner = _inner(opt)
    new = {id(v): v for v in slot_vars if id(v) not in inner._entries}
    if new:
        inner.build(list(new.values()))
    out, missing = {}, []
    for key, value in state.items():
        for kind in ("slots/", "accumulators/"):
            if key.startswith(kind):
                rest = key[len(kind):]
                obj_path, slot = rest.rsplit("/", 1) if kind == "slots/" else (rest, None)
                var = var_of.get(obj_path)
                if var is None:
                    missing.append(key)
                    break
                var_key = inner._entries[id(var)].key
                out[kind + var_key + ("" if slot is None else "/" + slot)] = value
                break
        else:
            out[key] = value
    return out, missing


class CheckpointLoadStatus:
    """What ``Checkpoint.restore`` matched: ``assert_consumed`` raises unless every saved value
    found its object and every object its value; ``expect_partial`` silences nothing (minitf
    never warns about partial restores) and returns the status."""

    def __init__(self, path, unused, unmatched, deferred, modules=()):
        self.path = path
        self._unused = sorted(unused)
        self._unmatched = sorted(unmatched)
        self._deferred = deferred
        self._modules = list(modules)

    def assert_consumed(self):
        pending = [p for p, layer in self._deferred if "_deferred_restore" in vars(layer)]
        waiting = sorted(p for m in self._modules
                         for p in (m.__dict__.get("_pending_restore") or ("", {}))[1])
        if self._unused or self._unmatched or pending or waiting:
            raise AssertionError(
                f"checkpoint {self.path!r} was not fully consumed: saved values with no object: "
                f"{self._unused[:10]}; objects with no saved value: {self._unmatched[:10]}; "
                f"layers not built yet (restored on first call): {pending[:10]}; values "
                f"waiting for their module to create the variable: {waiting[:10]}")
        return self

    def assert_existing_objects_matched(self):
        if self._unmatched:
            raise AssertionError(f"checkpoint {self.path!r} has no values for "
                                 f"{self._unmatched[:10]}")
        return self

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        return None

    def initialize_or_restore(self, session=None):
        return None


def _data_file(path):
    path = os.fspath(path)
    return path if path.endswith(_SUFFIX) else path + _SUFFIX


class Checkpoint:
    """Groups objects to save and restore together; keyword names become path roots.

    ``save(prefix)`` numbers the files (``prefix-1``, ``prefix-2``... from ``save_counter``) and
    records them in the directory's ``checkpoint`` file; ``write(prefix)`` writes exactly
    ``prefix`` without either. ``restore(path)``/``read(path)`` load one (``restore(None)`` does
    nothing, for ``ckpt.restore(manager.latest_checkpoint)`` on a fresh start).
    """

    def __init__(self, root=None, **kwargs):
        if root is not None:
            kwargs["root"] = root
        objects = {}
        for name, obj in kwargs.items():
            _check_trackable(name, obj)
            objects[name] = obj
        object.__setattr__(self, "_objects", objects)
        object.__setattr__(self, "_save_counter", Variable(0, trainable=False, dtype="int64",
                                                           name="save_counter"))

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(f"Checkpoint has no object {name!r}")

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        _check_trackable(name, value)
        self._objects[name] = value

    @property
    def save_counter(self):
        """How many times ``save`` has run (restored with the checkpoint)."""
        return self._save_counter

    def _gather(self):
        variables, optimizers, layers = {}, {}, {}
        seen = set()
        for key, obj in self._objects.items():
            _collect(obj, key, variables, optimizers, layers, seen)
        variables["save_counter"] = self._save_counter
        return variables, optimizers, layers

    def write(self, file_prefix, options=None):
        """Write every object's state to ``file_prefix`` (+ ``.h5``); returns the prefix."""
        from .training.checkpoint import atomic_write, write_tree
        variables, optimizers, _ = self._gather()
        path_of_id = {id(v): p for p, v in variables.items()}
        tree = {"variables": {p: B.to_numpy(v._value).copy() for p, v in variables.items()},
                "optimizers": {p: _optimizer_state(o, path_of_id)
                               for p, o in optimizers.items()}}

        def fill(f):
            f.attrs["format"] = _FORMAT
            f.attrs["format_version"] = 1
            write_tree(f, tree)

        atomic_write(_data_file(file_prefix), fill)
        if options is not None:
            from .checkpoint_reader import run_write_callbacks
            run_write_callbacks(options, os.fspath(file_prefix))
        return os.fspath(file_prefix)

    def save(self, file_prefix, options=None):
        """Write ``<file_prefix>-<n>`` with ``n = save_counter + 1`` and list it in the
        directory's ``checkpoint`` file; returns that path."""
        self._save_counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(self._save_counter.numpy())}",
                          options)
        directory = os.path.dirname(path) or "."
        same = os.path.normpath(path)
        existing = [p for p in _read_state(directory) if os.path.normpath(p) != same]
        _write_state(directory, existing + [path])
        return path

    def read(self, save_path, options=None):
        """Restore from ``save_path`` (same as ``restore``)."""
        return self.restore(save_path)

    def restore(self, save_path, options=None):
        """Assign the saved values to the objects by path; see ``CheckpointLoadStatus``."""
        if save_path is None:
            return CheckpointLoadStatus(None, (), (), [])
        from .training.checkpoint import read_tree
        import h5py
        data_path = _data_file(save_path)
        if not os.path.exists(data_path):
            raise FileNotFoundError(f"tf.train.Checkpoint.restore: no checkpoint at "
                                    f"{os.fspath(save_path)!r} (looked for {data_path!r})")
        try:
            with h5py.File(data_path, "r") as f:
                if f.attrs.get("format") not in (_FORMAT, _FORMAT.encode()):
                    raise ValueError(f"{data_path!r} is not a tf.train.Checkpoint file")
                tree = read_tree(f)
        except OSError as exc:
            raise ValueError(f"cannot read checkpoint {data_path!r}: {exc}") from None
        saved, saved_opt = tree["variables"], tree["optimizers"]
        variables, optimizers, layers = self._gather()
        unmatched = [p for p in variables if p not in saved]
        used = set()
        for path, var in variables.items():
            if path in saved:
                _assign(var, saved[path], path)
                used.add(path)
        deferred = []
        for prefix, layer in layers.items():
            if not layer.built:
                mine = {p: v for p, v in saved.items() if p.startswith(prefix + "/")}
                used.update(mine)
                object.__setattr__(layer, "_deferred_restore", _deferred(
                    prefix, mine, saved_opt, optimizers))
                _register_pending(layer, prefix, mine)
                deferred.append((prefix, layer))
        var_of = dict(variables)
        for prefix, opt in optimizers.items():
            if prefix in saved_opt:
                state, _ = _to_optimizer_keys(opt, saved_opt[prefix], var_of)
                opt.set_state(state)
                used.add("optimizers/" + prefix)
            else:
                unmatched.append(prefix)
        modules = []
        for key, obj in self._objects.items():
            _modules(obj, key, modules, set())
        used.update(_defer_to_modules(modules, {p: v for p, v in saved.items() if p not in used}))
        unused = [p for p in saved if p not in used] + [
            p for p in saved_opt if "optimizers/" + p not in used]
        return CheckpointLoadStatus(os.fspath(save_path), unused, unmatched, deferred,
                                    [m for _, m in modules])


def _assign(var, value, path):
    value = np.asarray(value)
    if tuple(value.shape) != tuple(var._value.shape):
        raise ValueError(f"checkpoint value {path!r} has shape {tuple(value.shape)}, the "
                         f"variable has shape {tuple(var._value.shape)}")
    var.assign(B.from_numpy(value, dtype=var._value.dtype))


_PENDING = []  # [(layer, prefix, saved values)] of layers restored before they were built


def _on_new_weight(var):
    """Assign a restored value to a weight as it is created inside a pending layer, so that
    even the first call computes with the restored values."""
    for layer, prefix, saved in _PENDING:
        paths = {}
        _layer_paths(layer, prefix, paths, set())
        for path, v in paths.items():
            if v is var and path in saved:
                _assign(var, saved[path], path)
                return


def _register_pending(layer, prefix, saved):
    from .keras.layers.base import WEIGHT_HOOKS
    _PENDING[:] = [p for p in _PENDING if p[0] is not layer] + [(layer, prefix, saved)]
    if _on_new_weight not in WEIGHT_HOOKS:
        WEIGHT_HOOKS.append(_on_new_weight)


def _unregister_pending(layer):
    from .keras.layers.base import WEIGHT_HOOKS
    _PENDING[:] = [p for p in _PENDING if p[0] is not layer]
    if not _PENDING and _on_new_weight in WEIGHT_HOOKS:
        WEIGHT_HOOKS.remove(_on_new_weight)


def _deferred(prefix, saved, saved_opt, optimizers):
    """What an unbuilt layer runs after its first call: assign its saved values (weights
    created in that call already got theirs), then hand the optimizers the slots of its
    variables."""
    def restore(layer):
        _unregister_pending(layer)
        variables = {}
        _layer_paths(layer, prefix, variables, set())
        missing = [p for p in variables if p not in saved]
        for path, var in variables.items():
            if path in saved:
                _assign(var, saved[path], path)
        for opt_prefix, opt in optimizers.items():
            if opt_prefix in saved_opt:
                mine = {k: v for k, v in saved_opt[opt_prefix].items()
                        if k.startswith(("slots/" + prefix + "/",
                                         "accumulators/" + prefix + "/"))}
                state, _ = _to_optimizer_keys(opt, mine, variables)
                inner = _inner(opt)
                for key, value in state.items():
                    kind, rest = key.split("/", 1)
                    if kind == "slots":
                        var_key, slot = rest.rsplit("/", 1)
                        inner._restore(var_key, slot, value)
                    else:
                        inner._restore(rest, None, value)
        if missing:
            raise ValueError(f"checkpoint has no values for {missing[:10]} of layer "
                             f"{layer.name!r} (restored on its first call)")
    return restore


# --- the directory's "checkpoint" state file -----------------------------------------------------

_LINE = re.compile(r'^(model_checkpoint_path|all_model_checkpoint_paths):\s*"(.*)"\s*$')


def _read_state(directory):
    """Absolute prefixes listed in ``directory/checkpoint``, oldest first (newest last)."""
    path = os.path.join(directory, _STATE_FILE)
    if not os.path.exists(path):
        return []
    latest, listed = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _LINE.match(line.strip())
            if not m:
                continue
            p = m.group(2)
            p = p if os.path.isabs(p) else os.path.join(directory, p)
            if m.group(1) == "model_checkpoint_path":
                latest = p
            else:
                listed.append(p)
    if latest is not None and latest not in listed:
        listed.append(latest)
    elif latest is not None:
        listed.remove(latest)
        listed.append(latest)
    return listed


def _write_state(directory, prefixes):
    """Write the state file (relative names, newest last) atomically."""
    os.makedirs(directory, exist_ok=True)
    rel = [os.path.relpath(p, directory) for p in prefixes]
    lines = []
    if rel:
        lines.append(f'model_checkpoint_path: "{rel[-1]}"')
    lines.extend(f'all_model_checkpoint_paths: "{r}"' for r in rel)
    with atomic_path(os.path.join(directory, _STATE_FILE), prefix=".tmp-checkpoint.") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


def newest_checkpoint(checkpoint_dir):
    """The newest checkpoint prefix recorded in ``checkpoint_dir`` whose file exists, or None
    (``tf.train.latest_checkpoint``, in ``minitf.checkpoint_reader``, builds on it)."""
    for prefix in reversed(_read_state(os.fspath(checkpoint_dir))):
        if os.path.exists(_data_file(prefix)):
            return prefix
    return None


class CheckpointManager:
    """Numbered saves of one Checkpoint in ``directory``, keeping the newest ``max_to_keep``
    (None: all).

    ``save()`` writes ``<directory>/<checkpoint_name>-<n>`` (``n``: ``checkpoint_number`` or
    the checkpoint's ``save_counter``), deletes the oldest beyond ``max_to_keep`` and updates
    the directory's ``checkpoint`` file; ``latest_checkpoint`` and ``checkpoints`` list them.
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager: expected a tf.train.Checkpoint, got "
                            f"{type(checkpoint).__name__}")
        if max_to_keep is not None and max_to_keep < 1:
            raise ValueError(f"CheckpointManager: max_to_keep must be >= 1 or None, got "
                             f"{max_to_keep}")
        if keep_checkpoint_every_n_hours is not None:
            raise ValueError("CheckpointManager: keep_checkpoint_every_n_hours is not supported")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._name = checkpoint_name
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._last_step = None
        self._init_fn = init_fn
        prefix = os.path.join(self._directory, checkpoint_name) + "-"
        self._checkpoints = [p for p in _read_state(self._directory)
                             if p.startswith(prefix) and os.path.exists(_data_file(p))]

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoints(self):
        """The kept checkpoint prefixes, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self):
        return self._checkpoints[-1] if self._checkpoints else None

    def restore_or_initialize(self):
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Save now; returns the new prefix (None when ``checkpoint_interval`` skips it)."""
        if self._interval is not None and check_interval:
            step = int(self._step_counter.numpy())
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        counter = self._checkpoint._save_counter
        counter.assign_add(1)
        if checkpoint_number is None:
            checkpoint_number = int(counter.numpy())
        elif isinstance(checkpoint_number, Variable):
            checkpoint_number = int(checkpoint_number.numpy())
        path = os.path.join(self._directory, f"{self._name}-{int(checkpoint_number)}")
        self._checkpoint.write(path)
        self._checkpoints = [p for p in self._checkpoints if p != path] + [path]
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                old = self._checkpoints.pop(0)
                try:
                    os.unlink(_data_file(old))
                except FileNotFoundError:
                    pass
        others = [p for p in _read_state(self._directory) if p not in self._checkpoints
                  and not p.startswith(os.path.join(self._directory, self._name) + "-")]
        _write_state(self._directory, others + self._checkpoints)
        return path


__all__ = ["Checkpoint", "CheckpointManager", "CheckpointLoadStatus", "newest_checkpoint"]
