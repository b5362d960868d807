"""Reading checkpoints without restoring them: ``tf.train.load_checkpoint``, ``list_variables``,
``load_variable``, ``get_checkpoint_state``, ``checkpoints_iterator``, ``CheckpointOptions``,
``TrackableView`` and ``CheckpointView``.

A minitf checkpoint (``minitf/checkpoint.py``) stores each variable under its object path
(``model/dense_1/kernel``, ``step``, ``save_counter``) and each optimizer's state under the
optimizer's path (``optimizer/iterations``, ``optimizer/slots/model/dense_1/kernel/m``). Those
paths are the tensor names here. TF names the value of a variable
``<path>/.ATTRIBUTES/VARIABLE_VALUE``; that spelling is accepted too wherever a name is looked
up, so ``reader.get_tensor("step/.ATTRIBUTES/VARIABLE_VALUE")`` reads ``step``.

    reader = tf.train.load_checkpoint("./tf_ckpts")           # the newest checkpoint there
    kernel = reader.get_tensor("net/l1/kernel")                # a numpy array
    for path in tf.train.checkpoints_iterator("./tf_ckpts", timeout=600):
        evaluate(path)                                         # each new checkpoint, as written
"""
import codecs
import inspect
import logging
import os
import re
import time

import numpy as np

from . import dtypes
from .checkpoint import (_FORMAT, _MODULE_INTERNALS, _STATE_FILE, _SUFFIX, Checkpoint, _is_layer,
                         _is_optimizer)
from .checkpoint import newest_checkpoint as _latest_existing
from .errors import DataLossError, NotFoundError
from .tensor import Variable

TF_VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
_POLL_SECONDS = 0.1   # how often checkpoints_iterator looks for a new checkpoint
_log = logging.getLogger("minitf")


# --- reading one checkpoint -------------------------------------------------------------------

def _checkpoint_filename(ckpt_dir_or_file, where):
    """A checkpoint prefix: the argument itself, or a directory's newest checkpoint."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = _latest_existing(path)
        if latest is None:
            raise ValueError(f"{where}: Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {path}")
        return latest
    return path


def _flatten_state(prefix, tree, out):
    """Numeric leaves of an optimizer's saved state as ``prefix/key`` -> numpy array; Python
    numbers get the dtypes of TF's optimizer variables (int64 counters, float32 values)."""
    for key, value in tree.items():
        name = f"{prefix}/{key}"
        if isinstance(value, dict):
            _flatten_state(name, value, out)
        elif isinstance(value, np.ndarray):
            out[name] = value
        elif isinstance(value, (bool, np.bool_)):
            out[name] = np.asarray(value, dtype=bool)
        elif isinstance(value, (int, np.integer)):
            out[name] = np.asarray(value, dtype=np.int64)
        elif isinstance(value, (float, np.floating)):
            out[name] = np.asarray(value, dtype=np.float32)
        # strings (the optimizer's class name) and None are not tensors


def _read_tensors(prefix, where):
    """All tensors of the checkpoint at ``prefix`` as a dict name -> numpy array."""
    import h5py
    from .training.checkpoint import read_tree
    data = prefix if prefix.endswith(_SUFFIX) else prefix + _SUFFIX
    if not os.path.isfile(data):
        raise NotFoundError(None, None, f"{where}: Unsuccessful TensorSliceReader constructor: "
                                        f"Failed to find any matching files for {prefix} "
                                        f"(expected the checkpoint file {data})")
    try:
        with h5py.File(data, "r") as f:
            fmt = f.attrs.get("format")
            if fmt not in (_FORMAT, _FORMAT.encode()):
                raise DataLossError(None, None, f"{where}: {data} is not a tf.train.Checkpoint "
                                                f"file (format attribute {fmt!r}, expected "
                                                f"{_FORMAT!r})")
            tree = read_tree(f)
    except OSError as exc:
        raise DataLossError(None, None, f"{where}: cannot read checkpoint file {data}: "
                                        f"{exc}") from None
    tensors = {name: np.asarray(value) for name, value in tree["variables"].items()}
    for opt_prefix, state in tree["optimizers"].items():
        _flatten_state(opt_prefix, state, tensors)
    return tensors, list(tree["variables"]), list(tree["optimizers"])


_TF_DTYPE_ENUM = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}


class CheckpointReader:
    """The tensors of one checkpoint, by name (``tf.train.load_checkpoint`` returns one)."""

    def __init__(self, prefix, where="tf.train.load_checkpoint"):
        self._prefix = prefix
        self._tensors, self._variable_paths, self._optimizer_paths = _read_tensors(prefix, where)

    def _resolve(self, name):
        if isinstance(name, bytes):
            name = name.decode("utf-8")
        if name in self._tensors:
            return name
        if isinstance(name, str) and name.endswith(TF_VALUE_SUFFIX):
            short = name[:-len(TF_VALUE_SUFFIX)]
            if short in self._tensors:
                return short
        return None

    def has_tensor(self, name):
        """Whether the checkpoint holds ``name`` (TF's ``.ATTRIBUTES/VARIABLE_VALUE`` spelling
        included)."""
        return self._resolve(name) is not None

    def get_tensor(self, name):
        """The saved value of ``name`` as a numpy array (a numpy scalar for shape ``[]``, as
        TF); ``tf.errors.NotFoundError`` when there is none."""
        key = self._resolve(name)
        if key is None:
            raise NotFoundError(None, None, f"Key {name} not found in checkpoint "
                                            f"{self._prefix}")
        value = self._tensors[key]
        return value[()] if value.ndim == 0 else value.copy()

    def get_variable_to_shape_map(self):
        """``{name: shape as a list}`` of every tensor."""
        return {name: list(v.shape) for name, v in self._tensors.items()}

    def get_variable_to_dtype_map(self):
        """``{name: tf dtype}`` of every tensor."""
        return {name: dtypes.as_dtype(v.dtype) for name, v in self._tensors.items()}

    def debug_string(self):
        """``name (DT_FLOAT) [3,2]`` per tensor, sorted by name, as bytes (as TF)."""
        lines = []
        for name in sorted(self._tensors):
            value = self._tensors[name]
            name_of_dtype = dtypes.as_dtype(value.dtype).name
            kind = "DT_" + _TF_DTYPE_ENUM.get(name_of_dtype, name_of_dtype.upper())
            shape = ",".join(str(d) for d in value.shape)
            lines.append(f"{name} ({kind}) [{shape}]\n")
        return "".join(lines).encode("utf-8")


def load_checkpoint(ckpt_dir_or_file):
    """A ``CheckpointReader`` for a checkpoint prefix, or for a directory's newest checkpoint."""
    where = "tf.train.load_checkpoint"
    return CheckpointReader(_checkpoint_filename(ckpt_dir_or_file, where), where)


def list_variables(ckpt_dir_or_file):
    """``[(name, shape)]`` of every tensor of a checkpoint (or a directory's newest), sorted by
    name."""
    where = "tf.train.list_variables"
    reader = CheckpointReader(_checkpoint_filename(ckpt_dir_or_file, where), where)
    return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """The saved value of tensor ``name`` (a trailing ``:0`` is dropped, as in TF)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


# --- the directory's "checkpoint" state file --------------------------------------------------

class CheckpointState:
    """What a directory's ``checkpoint`` file records (TF's ``CheckpointState`` fields); paths
    are absolute, or relative to the current directory when the directory was given so."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=(),
                 all_model_checkpoint_timestamps=(), last_preserved_timestamp=0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def __eq__(self, other):
        return isinstance(other, CheckpointState) and vars(self) == vars(other)

    def __str__(self):
        lines = [f'model_checkpoint_path: "{self.model_checkpoint_path}"']
        lines += [f'all_model_checkpoint_paths: "{p}"' for p in self.all_model_checkpoint_paths]
        lines += [f"all_model_checkpoint_timestamps: {t!r}"
                  for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append(f"last_preserved_timestamp: {self.last_preserved_timestamp!r}")
        return "\n".join(lines) + "\n"

    __repr__ = __str__


_FIELD = re.compile(r'^(\w+)\s*:\s*(?:"((?:[^"\\]|\\.)*)"|([-+0-9.eE]+|inf|nan))\s*$')
_STRING_FIELDS = ("model_checkpoint_path", "all_model_checkpoint_paths")
_NUMBER_FIELDS = ("all_model_checkpoint_timestamps", "last_preserved_timestamp")


def _parse_state(text):
    """The fields of a ``checkpoint`` file (protobuf text format); ValueError when a line is not
    one of CheckpointState's fields."""
    fields = {"all_model_checkpoint_paths": [], "all_model_checkpoint_timestamps": []}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _FIELD.match(line)
        if m is None or m.group(1) not in _STRING_FIELDS + _NUMBER_FIELDS:
            raise ValueError(f"line {number}: cannot parse {line!r}")
        key, text_value, number_value = m.groups()
        if key in _STRING_FIELDS:
            if text_value is None:
                raise ValueError(f"line {number}: {key} needs a quoted string, got {line!r}")
            value = text_value
            if "\\" in value:  # protobuf's C escapes, e.g. octal UTF-8 bytes
                value = codecs.escape_decode(value.encode("utf-8"))[0].decode("utf-8")
        else:
            if number_value is None:
                raise ValueError(f"line {number}: {key} needs a number, got {line!r}")
            value = float(number_value)
        if key.startswith("all_"):
            fields[key].append(value)
        else:
            fields[key] = value
    return fields


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The ``CheckpointState`` of ``checkpoint_dir/checkpoint`` (or ``latest_filename``), or
    None when that file is missing or cannot be parsed (logged, as TF)."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    state_path = os.path.join(checkpoint_dir, latest_filename or _STATE_FILE)
    if not os.path.isfile(state_path):
        return None
    try:
        with open(state_path, encoding="utf-8") as f:
            fields = _parse_state(f.read())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _log.warning("%s: %s; checkpoint state ignored", state_path, exc)
        return None
    if not fields.get("model_checkpoint_path"):
        raise ValueError(f"tf.train.get_checkpoint_state: Invalid checkpoint state loaded from "
                         f"{checkpoint_dir}: {state_path} has no model_checkpoint_path")

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    fields["model_checkpoint_path"] = absolute(fields["model_checkpoint_path"])
    fields["all_model_checkpoint_paths"] = [absolute(p)
                                            for p in fields["all_model_checkpoint_paths"]]
    return CheckpointState(**fields)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint prefix recorded in ``checkpoint_dir`` whose file exists, or None;
    with ``latest_filename``, the ``model_checkpoint_path`` of that state file (if its file
    exists)."""
    if latest_filename is None:
        return _latest_existing(checkpoint_dir)
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    prefix = state.model_checkpoint_path
    return prefix if os.path.isfile(prefix + _SUFFIX) else None


def _wait_for_new_checkpoint(checkpoint_dir, last_checkpoint, timeout):
    """The newest checkpoint once it differs from ``last_checkpoint``; None after ``timeout``
    seconds without one."""
    stop_time = None if timeout is None else time.time() + timeout
    while True:
        path = _latest_existing(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            return path
        if stop_time is not None and time.time() + _POLL_SECONDS > stop_time:
            return None
        time.sleep(_POLL_SECONDS)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yield each new newest checkpoint of ``checkpoint_dir`` as it appears (polling); end
    after ``timeout`` seconds without one, unless ``timeout_fn()`` returns False (keep
    waiting). At least ``min_interval_secs`` pass between the start of consecutive yields."""
    if timeout_fn is not None and not callable(timeout_fn):
        raise TypeError(f"tf.train.checkpoints_iterator: timeout_fn must be callable or None, "
                        f"got {type(timeout_fn).__name__}")
    checkpoint_dir = os.fspath(checkpoint_dir)

    def generate():
        checkpoint_path = None
        while True:
            new_path = _wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout)
            if new_path is None:
                if timeout_fn is None or timeout_fn():
                    return
                continue
            start = time.time()
            checkpoint_path = new_path
            yield checkpoint_path
            remaining = start + min_interval_secs - time.time()
            if remaining > 0:
                time.sleep(remaining)

    return generate()


# --- options and views ------------------------------------------------------------------------

class CheckpointOptions:
    """Options for ``Checkpoint.save``/``write``/``read``/``restore`` (TF's arguments).

    minitf writes checkpoints synchronously on the host, so ``enable_async`` and
    ``experimental_io_device`` change nothing; ``experimental_sharding_callback`` is not
    supported (one file per checkpoint).
    """

    __slots__ = ("experimental_io_device", "experimental_enable_async_checkpoint",
                 "experimental_write_callbacks", "enable_async",
                 "experimental_sharding_callback", "experimental_skip_slot_variables")

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False,
                 experimental_skip_slot_variables=False, experimental_sharding_callback=None):
        self.experimental_io_device = experimental_io_device
        self.enable_async = bool(experimental_enable_async_checkpoint or enable_async)
        self.experimental_enable_async_checkpoint = self.enable_async
        if experimental_write_callbacks is not None:
            for callback in experimental_write_callbacks:
                if not callable(callback) or len(inspect.signature(callback).parameters) > 1:
                    raise ValueError(f"tf.train.CheckpointOptions: each of "
                                     f"experimental_write_callbacks must be a callable taking "
                                     f"at most one argument (the save path), got {callback!r}")
            experimental_write_callbacks = list(experimental_write_callbacks)
        self.experimental_write_callbacks = experimental_write_callbacks
        if experimental_sharding_callback is not None:
            raise ValueError(f"tf.train.CheckpointOptions: experimental_sharding_callback is not "
                             f"supported (minitf writes one file per checkpoint), got "
                             f"{experimental_sharding_callback!r}")
        self.experimental_sharding_callback = None
        self.experimental_skip_slot_variables = experimental_skip_slot_variables


def run_write_callbacks(options, save_path):
    """Call ``options.experimental_write_callbacks`` after a save or write of ``save_path``,
    passing the path to those that take an argument."""
    for callback in (getattr(options, "experimental_write_callbacks", None) or ()):
        if len(inspect.signature(callback).parameters) == 1:
            callback(save_path)
        else:
            callback()


def _is_trackable(value):
    from .module import Module
    if isinstance(value, (Variable, Module, Checkpoint)) or _is_layer(value) or \
            _is_optimizer(value):
        return True
    if isinstance(value, dict):
        return any(_is_trackable(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_is_trackable(v) for v in value)
    return False


class TrackableView:
    """The object graph a Checkpoint saves, from ``root``: ``children(obj)`` names the objects
    ``obj`` holds (the path components of checkpoint names); ``descendants()`` lists every
    object reachable from ``root``, breadth first, ``root`` included."""

    def __init__(self, root):
        self._root = root

    @property
    def root(self):
        return self._root

    @classmethod
    def children(cls, obj, save_type=None, **kwargs):
        """``{name: child}`` of ``obj``: a Checkpoint's objects and ``save_counter``, a Keras
        layer's weights and sub-layers, a ``tf.Module``'s checkpointable attributes, the items
        of a list or dict. Variables and optimizers have none here."""
        from .module import Module
        if isinstance(obj, Checkpoint):
            out = dict(obj._objects)
            out["save_counter"] = obj._save_counter
            return out
        if _is_layer(obj):
            own, kids = obj._members()
            return dict(list(own) + list(kids))
        if isinstance(obj, Module):
            return {key: value for key, value in vars(obj).items()
                    if key not in _MODULE_INTERNALS and _is_trackable(value)}
        if isinstance(obj, dict):
            return {str(key): value for key, value in obj.items() if _is_trackable(value)}
        if isinstance(obj, (list, tuple)):
            return {str(i): value for i, value in enumerate(obj) if _is_trackable(value)}
        return {}

    def descendants(self):
        """Every object reachable from ``root`` (each once), breadth first."""
        order, seen, queue = [], {id(self._root)}, [self._root]
        while queue:
            obj = queue.pop(0)
            order.append(obj)
            for child in self.children(obj).values():
                if id(child) not in seen:
                    seen.add(id(child))
                    queue.append(child)
        return order


class CheckpointView:
    """The object graph of a saved checkpoint, by node id (0: the Checkpoint itself), built
    from its object paths: ``children(node_id)`` -> ``{name: node_id}``, ``descendants()``,
    ``match(obj)`` and ``diff(obj)`` against a live object graph (``TrackableView``)."""

    def __init__(self, save_path):
        where = "tf.train.CheckpointView"
        reader = CheckpointReader(_checkpoint_filename(save_path, where), where)
        tree = {}
        for path in reader._variable_paths + reader._optimizer_paths:
            node = tree
            for part in path.split("/"):
                node = node.setdefault(part, {})
        self._children = []     # node id -> {name: child id}, numbered breadth first
        queue = [tree]
        while queue:
            node = queue.pop(0)
            ids = {}
            for name, child in node.items():
                ids[name] = len(self._children) + len(queue) + 1
                queue.append(child)
            self._children.append(ids)

    def children(self, node_id):
        """``{name: node_id}`` of the objects saved under node ``node_id``."""
        if not 0 <= node_id < len(self._children):
            raise ValueError(f"tf.train.CheckpointView.children: no node {node_id!r}; node ids "
                             f"are 0..{len(self._children) - 1}")
        return dict(self._children[node_id])

    def descendants(self):
        """Every node id, breadth first from the root (0)."""
        return list(range(len(self._children)))

    def match(self, obj):
        """``{node_id: object}`` for the objects of ``obj``'s graph at the same name path as a
        saved node (node 0: ``obj``)."""
        if not _is_trackable(obj):
            raise ValueError(f"tf.train.CheckpointView.match: expected a Checkpoint, Module, "
                             f"Keras layer, optimizer or Variable, got {type(obj).__name__}")
        matched, queue = {0: obj}, [(0, obj)]
        while queue:
            node_id, current = queue.pop(0)
            live = TrackableView.children(current)
            for name, child_id in self._children[node_id].items():
                if name in live and child_id not in matched:
                    matched[child_id] = live[name]
                    queue.append((child_id, live[name]))
        return matched

    def diff(self, obj):
        """``(match(obj), node ids with no object, objects with no node)``."""
        matched = self.match(obj)
        only_saved = [i for i in self.descendants() if i not in matched]
        found = {id(o) for o in matched.values()}
        only_live = [o for o in TrackableView(obj).descendants() if id(o) not in found]
        return matched, only_saved, only_live


def install(tf):
    """Set this module's public names on ``tf.train`` (idempotent)."""
    for name in ("load_checkpoint", "list_variables", "load_variable", "get_checkpoint_state",
                 "latest_checkpoint", "checkpoints_iterator", "CheckpointOptions",
                 "TrackableView", "CheckpointView"):
        setattr(tf.train, name, globals()[name])


__all__ = ["CheckpointReader", "CheckpointState", "CheckpointOptions", "TrackableView",
           "CheckpointView",
           "load_checkpoint", "list_variables", "load_variable", "get_checkpoint_state",
           "latest_checkpoint", "checkpoints_iterator", "run_write_callbacks", "install"]
