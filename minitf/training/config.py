"""Run configuration: schema, strict validation, YAML loading and ``--set`` overrides.

A config is a nested dict read from YAML (only ``yaml.safe_load``). Every key is declared in
``SCHEMA``; what a file leaves out takes the schema default, so the *resolved* config (written to
``<run dir>/config.yaml``) always names every setting. Validation is strict:

* an unknown key raises ``ConfigError`` with a "did you mean ..." suggestion (difflib);
* a wrong type or an out-of-range value raises ``ConfigError`` naming the dotted key, the value
  and what is allowed.

PyYAML follows YAML 1.1, where ``1e-3`` (no dot) is a *string*; float fields accept such strings
and convert them, and so do free-form mappings (``model.kwargs``, ``optimizer.kwargs``) for strings
that are plainly numbers in exponent notation.

    cfg = load_config("configs/fashion_mnist.yaml", overrides=["optimizer.learning_rate=3e-4"])
    cfg["optimizer"]["learning_rate"]   # 0.0003
"""
import copy
import difflib
import math
import os
import re

import yaml

__all__ = ["ConfigError", "SCHEMA", "METRIC_NAMES", "defaults", "validate", "load_config",
           "parse_override", "apply_override", "read_yaml", "dump_config", "describe_schema",
           "find_config", "diff_configs"]

#: Names of the metrics a run logs per epoch (usable as checkpoint.best_metric and
#: early_stopping.metric). ``val_*`` are computed on the evaluation split.
METRIC_NAMES = ("loss", "accuracy", "val_loss", "val_accuracy")


class ConfigError(ValueError):
    """An invalid configuration; the message names the dotted key, the value and what is allowed."""


# --- schema -----------------------------------------------------------------------------------

class Field:
    """One leaf of the schema.

    kind: "int", "float", "bool", "str", "choice", "mapping" (free-form dict of keyword
    arguments), "list" (of ``item`` kind) or "sections" (a list of dicts, each checked against
    ``schema``). ``low``/``high`` bound numbers (``open_low``: strictly above ``low``).
    """

    def __init__(self, kind, default, doc, *, choices=None, low=None, high=None, open_low=False,
                 nullable=False, item=None, schema=None):
        self.kind, self.default, self.doc = kind, default, doc
        self.choices, self.low, self.high, self.open_low = choices, low, high, open_low
        self.nullable, self.item, self.schema = nullable, item, schema

    def allowed(self):
        """What the field accepts, in words (for error messages and --help)."""
        if self.kind == "choice":
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind in ("int", "float"):
            text = "an integer" if self.kind == "int" else "a number"
            if self.low is not None and self.high is not None:
                text += f" in {'(' if self.open_low else '['}{self.low}, {self.high}]"
            elif self.low is not None:
                text += f" {'>' if self.open_low else '>='} {self.low}"
            elif self.high is not None:
                text += f" <= {self.high}"
        elif self.kind == "bool":
            text = "true or false"
        elif self.kind == "str":
            text = "a string"
        elif self.kind == "mapping":
            text = "a mapping of keyword arguments"
        elif self.kind == "list":
            text = f"a list of {Field(self.item, None, '').allowed()}s"
        else:
            text = "a list of mappings with keys " + ", ".join(self.schema)
        return text + (" or null" if self.nullable else "")


def _section(doc, **fields):
    fields["__doc__"] = doc
    return fields


SCHEMA = {
    "name": Field("str", None, "run name: the run directory is <output_dir>/<name>; "
                  "defaults to the config file's name", nullable=True),
    "output_dir": Field("str", "runs", "directory holding run directories"),
    "seed": Field("int", 0, "seeds weight initialisation, dropout and data shuffling",
                  low=0, high=2 ** 63 - 1),
    "data": _section(
        "what to train and evaluate on",
        dataset=Field("choice", "fashion_mnist", "dataset name",
                      choices=("fashion_mnist", "mnist")),
        data_dir=Field("str", None, "directory with the four IDX files; null: the embedded "
                       "Fashion-MNIST copy / the MNIST download cache", nullable=True),
        validation_split=Field("float", 0.1, "fraction of the training set held out (a random "
                               "subset drawn with `seed`) for validation; 0: no validation "
                               "set", low=0.0, high=0.9),
        eval_on=Field("choice", "auto", "split evaluated after every epoch (logged as val_*); "
                      "auto: validation when validation_split > 0, else test",
                      choices=("auto", "validation", "test")),
        test_at_end=Field("bool", True, "evaluate the test set once training ends "
                          "(written to results.json)"),
        train_limit=Field("int", None, "use only the first N training samples", low=1,
                          nullable=True),
        eval_limit=Field("int", None, "use only the first N evaluation samples", low=1,
                         nullable=True),
        normalization=Field("choice", "standardize", "scale: x/255; standardize: (x/255 - "
                            "mean)/std with the training set's statistics; none: raw 0..255",
                            choices=("scale", "standardize", "none")),
        shuffle=Field("bool", True, "reshuffle the training set every epoch"),
        drop_remainder=Field("bool", True, "drop the last incomplete training batch of an "
                             "epoch (keeps one batch shape)"),
        prefetch=Field("int", 2, "batches prepared ahead by a background thread (0: off)",
                       low=0),
    ),
    "model": _section(
        "the network (see models/)",
        name=Field("str", "mlp", "registered model name (models.build_model)"),
        kwargs=Field("mapping", {}, "keyword arguments of the model's constructor"),
    ),
    "optimizer": _section(
        "optimizer, schedule, clipping, accumulation and parameter groups",
        name=Field("choice", "adam", "optimizer class",
                   choices=("sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax",
                            "nadam", "lion", "ftrl")),
        learning_rate=Field("float", 1e-3, "initial learning rate", low=0.0, open_low=True),
        kwargs=Field("mapping", {}, "other constructor arguments (momentum, beta_1, "
                     "weight_decay, epsilon, ...)"),
        gradient_accumulation_steps=Field("int", 1, "batches whose gradients are averaged "
                                          "into one update", low=1),
        schedule=_section(
            "learning-rate schedule (keras.optimizers.schedules)",
            name=Field("choice", "constant", "schedule",
                       choices=("constant", "cosine", "exponential", "piecewise")),
            decay_steps=Field("int", None, "cosine/exponential: decay length in optimizer "
                              "iterations; null: the whole run (epochs x steps per epoch)",
                              low=1, nullable=True),
            alpha=Field("float", 0.0, "cosine: final learning rate as a fraction of the "
                        "initial one", low=0.0, high=1.0),
            decay_rate=Field("float", 0.96, "exponential: factor per decay_steps", low=0.0,
                             open_low=True),
            staircase=Field("bool", False, "exponential: decay in steps"),
            boundaries=Field("list", [], "piecewise: iteration boundaries", item="int"),
            values=Field("list", [], "piecewise: learning rates (one more than boundaries)",
                         item="float"),
        ),
        clip=_section(
            "gradient clipping (at most one)",
            global_norm=Field("float", None, "global_clipnorm", low=0.0, open_low=True,
                              nullable=True),
            norm=Field("float", None, "clipnorm (per variable)", low=0.0, open_low=True,
                       nullable=True),
            value=Field("float", None, "clipvalue", low=0.0, open_low=True, nullable=True),
        ),
        param_groups=Field("sections", [], "variable groups with their own hyperparameters; "
                           "each takes the trainable variables of the top-level layers whose "
                           "name starts with `prefix` (first match wins); the rest form the "
                           "default group", schema={
                               "prefix": Field("str", None, "layer-name prefix"),
                               "learning_rate": Field("float", None, "learning rate of the "
                                                      "group", low=0.0, open_low=True,
                                                      nullable=True),
                               "weight_decay": Field("float", None, "weight decay of the group",
                                                     low=0.0, nullable=True)}),
    ),
    "precision": _section(
        "numeric precision policy",
        policy=Field("choice", "float32", "keras.mixed_precision global policy",
                     choices=("float32", "mixed_float16")),
        initial_scale=Field("float", 2.0 ** 15, "mixed_float16: initial loss scale", low=1.0),
        dynamic_growth_steps=Field("int", 2000, "mixed_float16: good steps before the loss "
                                   "scale doubles", low=1),
    ),
    "train": _section(
        "the training loop",
        epochs=Field("int", 20, "number of epochs", low=1),
        batch_size=Field("int", 128, "training batch size", low=1),
        eval_batch_size=Field("int", 1000, "evaluation batch size", low=1),
        use_function=Field("bool", True, "trace the training step with minitf.function when "
                           "available (else eager)"),
    ),
    "checkpoint": _section(
        "HDF5 checkpoints (full training state, exact resume)",
        dir=Field("str", None, "checkpoint directory; null: <run dir>/checkpoints; relative "
                  "paths are relative to the run directory", nullable=True),
        every_steps=Field("int", 0, "save every N training steps (0: off)", low=0),
        every_epoch=Field("bool", True, "save at the end of every epoch"),
        keep_last=Field("int", 3, "number of ckpt-<step>.h5 files kept", low=1),
        best_metric=Field("str", "val_accuracy", "keep best.h5 for the best value of this "
                          "metric (null: off)", nullable=True),
        best_mode=Field("choice", "auto", "max, min, or auto (min for losses)",
                        choices=("auto", "max", "min")),
    ),
    "early_stopping": _section(
        "stop when a metric stops improving",
        metric=Field("str", None, "metric to watch (null: off)", nullable=True),
        patience=Field("int", 5, "epochs without improvement before stopping", low=1),
        min_delta=Field("float", 0.0, "smallest change that counts as improvement", low=0.0),
        mode=Field("choice", "auto", "max, min, or auto (min for losses)",
                   choices=("auto", "max", "min")),
    ),
    "logging": _section(
        "progress display and metric logs",
        progress=Field("choice", "auto", "auto: a tqdm bar per epoch on a terminal, else one "
                       "line per epoch", choices=("auto", "bar", "line", "none")),
        every_steps=Field("int", 100, "write a step record (loss, accuracy, learning rate) "
                          "to metrics.jsonl every N steps (0: off)", low=0),
        csv=Field("bool", True, "write metrics.csv (one row per epoch)"),
        jsonl=Field("bool", True, "write metrics.jsonl (step and epoch records)"),
        plot=Field("bool", True, "write curves.png after every epoch (needs matplotlib)"),
        tensorboard=Field("bool", True, "write TensorBoard scalars (loss, accuracy, "
                          "validation, learning rate, samples/s) to <run dir>/tensorboard"),
    ),
}


def _fields(schema):
    return {k: v for k, v in schema.items() if k != "__doc__"}


def defaults(schema=SCHEMA):
    """The resolved config of an empty file."""
    out = {}
    for key, spec in _fields(schema).items():
        out[key] = defaults(spec) if isinstance(spec, dict) else copy.deepcopy(spec.default)
    return out


# --- validation -------------------------------------------------------------------------------

# A YAML 1.1 float that PyYAML leaves as a string: exponent without a dot ("1e-3", "5E4").
_EXPONENT_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


# Names users type from other tools; suggested when difflib finds nothing close.
_ALIASES = {"lr": "learning_rate", "bs": "batch_size", "epoch": "epochs",
            "policy": "precision", "optim": "optimizer", "dataset": "data"}


def _unknown(path, key, known):
    where = f"{path}.{key}" if path else key
    match = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    if not match and _ALIASES.get(key) in known:
        match = [_ALIASES[key]]
    hint = f"; did you mean {((path + '.') if path else '') + match[0]!r}?" if match else ""
    return ConfigError(f"unknown config key {where!r}{hint} (valid keys"
                       f"{' in ' + repr(path) if path else ''}: {', '.join(known)})")


def _bad(path, value, spec, reason=None):
    return ConfigError(f"{path} = {value!r} is not valid: {reason or 'expected ' + spec.allowed()}")


def _coerce_scalar(value):
    """Exponent-notation strings in free-form mappings become floats (the YAML 1.1 gap)."""
    if isinstance(value, str) and _EXPONENT_FLOAT.match(value.strip()):
        return float(value)
    if isinstance(value, dict):
        return {k: _coerce_scalar(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_coerce_scalar(v) for v in value]
    return value


def _check_number(path, value, spec):
    if spec.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(path, value, spec)
    else:
        value = _coerce_scalar(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _bad(path, value, spec)
        value = float(value)
        if not math.isfinite(value):
            raise _bad(path, value, spec, "expected a finite number")
    low_fail = spec.low is not None and (value <= spec.low if spec.open_low else value < spec.low)
    if low_fail or (spec.high is not None and value > spec.high):
        raise _bad(path, value, spec)
    return value


def _check_field(path, value, spec):
    if value is None:
        if spec.nullable:
            return None
        raise _bad(path, value, spec)
    kind = spec.kind
    if kind in ("int", "float"):
        return _check_number(path, value, spec)
    if kind == "bool":
        if not isinstance(value, bool):
            raise _bad(path, value, spec)
        return value
    if kind == "str":
        if not isinstance(value, str) or not value:
            raise _bad(path, value, spec, "expected a non-empty string")
        return value
    if kind == "choice":
        if value not in spec.choices:
            match = difflib.get_close_matches(str(value), spec.choices, n=1)
            hint = f" (did you mean {match[0]!r}?)" if match else ""
            raise _bad(path, value, spec, f"expected {spec.allowed()}{hint}")
        return value
    if kind == "mapping":
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise _bad(path, value, spec)
        return _coerce_scalar(value)
    if kind == "list":
        if not isinstance(value, list):
            raise _bad(path, value, spec)
        item = Field(spec.item, None, "")
        return [_check_field(f"{path}[{i}]", v, item) for i, v in enumerate(value)]
    if kind == "sections":
        if not isinstance(value, list):
            raise _bad(path, value, spec)
        out = []
        for i, entry in enumerate(value):
            where = f"{path}[{i}]"
            if not isinstance(entry, dict):
                raise _bad(where, entry, spec, "expected a mapping with keys "
                           + ", ".join(spec.schema))
            for key in entry:
                if key not in spec.schema:
                    raise _unknown(where, key, list(spec.schema))
            checked = {}
            for key, sub in spec.schema.items():
                if key not in entry and sub.default is None and not sub.nullable:
                    raise ConfigError(f"{where}.{key} is missing: expected {sub.allowed()}")
                checked[key] = _check_field(f"{where}.{key}", entry.get(key, sub.default), sub)
            out.append(checked)
        return out
    raise AssertionError(kind)


def _validate_section(raw, schema, path):
    if not isinstance(raw, dict):
        raise ConfigError(f"{path or 'the config'} = {raw!r} is not valid: expected a mapping "
                          f"with keys {', '.join(_fields(schema))}")
    fields = _fields(schema)
    for key in raw:
        if key not in fields:
            raise _unknown(path, key, list(fields))
    out = {}
    for key, spec in fields.items():
        where = f"{path}.{key}" if path else key
        if isinstance(spec, dict):
            sub = raw.get(key)
            out[key] = _validate_section({} if sub is None else sub, spec, where)
        else:
            out[key] = _check_field(where, raw.get(key, copy.deepcopy(spec.default)), spec)
    return out


def _metric(path, value):
    if value is not None and value not in METRIC_NAMES:
        match = difflib.get_close_matches(value, METRIC_NAMES, n=1)
        hint = f" (did you mean {match[0]!r}?)" if match else ""
        raise ConfigError(f"{path} = {value!r} is not valid: expected one of "
                          f"{', '.join(METRIC_NAMES)} or null{hint}")


def _cross_checks(cfg):
    data, opt = cfg["data"], cfg["optimizer"]
    if data["eval_on"] == "validation" and data["validation_split"] == 0:
        raise ConfigError("data.eval_on = 'validation' is not valid with data.validation_split"
                          " = 0: set a validation_split > 0 or eval_on: test")
    clips = [k for k, v in opt["clip"].items() if v is not None]
    if len(clips) > 1:
        raise ConfigError(f"optimizer.clip sets {', '.join(clips)}: at most one of "
                          "global_norm, norm, value is allowed")
    sched = opt["schedule"]
    if sched["name"] == "piecewise":
        if not sched["values"] or len(sched["values"]) != len(sched["boundaries"]) + 1:
            raise ConfigError(
                f"optimizer.schedule.values = {sched['values']!r} is not valid: piecewise "
                f"needs one more value than boundaries ({sched['boundaries']!r})")
        if sched["boundaries"] != sorted(set(sched["boundaries"])):
            raise ConfigError(f"optimizer.schedule.boundaries = {sched['boundaries']!r} is not "
                              "valid: expected strictly increasing integers")
    _metric("checkpoint.best_metric", cfg["checkpoint"]["best_metric"])
    _metric("early_stopping.metric", cfg["early_stopping"]["metric"])


def validate(raw):
    """Check a raw config dict against ``SCHEMA``; return the resolved config (defaults filled)."""
    cfg = _validate_section({} if raw is None else raw, SCHEMA, "")
    _cross_checks(cfg)
    return cfg


# --- loading and overrides --------------------------------------------------------------------

def read_yaml(path):
    """``yaml.safe_load`` of a file, with YAML errors turned into ConfigError naming the file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text (byte {data[exc.start]:#04x} at offset "
                              f"{exc.start}); a config is a YAML text file") from None
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def find_config(name, config_dir):
    """Path of config ``name``: an existing file, else ``<config_dir>/<name>[.yaml|.yml]``."""
    if os.path.isfile(name):
        return name
    base = os.path.basename(name)
    for candidate in (base, base + ".yaml", base + ".yml"):
        path = os.path.join(config_dir, candidate)
        if os.path.isfile(path):
            return path
    known = sorted(os.path.splitext(f)[0] for f in os.listdir(config_dir)
                   if f.endswith((".yaml", ".yml"))) if os.path.isdir(config_dir) else []
    stem = os.path.splitext(base)[0]
    match = difflib.get_close_matches(stem, known, n=1)
    hint = f"; did you mean {match[0]!r}?" if match else ""
    raise ConfigError(f"no config {name!r}: not a file, and not in {config_dir}{hint} "
                      f"(available: {', '.join(known) or 'none'})")


def parse_override(text):
    """``"key.sub=value"`` -> (["key", "sub"], value parsed as YAML)."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {text!r}: expected KEY.SUB=VALUE (for example "
                          "--set optimizer.learning_rate=3e-4)")
    try:
        parsed = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError as exc:
        raise ConfigError(f"--set {text!r}: the value is not valid YAML: {exc}") from None
    return key.split("."), parsed


def apply_override(raw, parts, value):
    """Set ``raw[parts[0]][parts[1]]... = value``, creating mappings on the way.

    A numeric part indexes a list (``optimizer.param_groups.0.learning_rate``). Keys are not
    checked here: ``validate`` reports unknown ones with the same message as in files.
    """
    node, path = raw, ""
    for depth, part in enumerate(parts):
        where = f"{path}.{part}" if path else part
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(f"--set {where}: {path} is a list of {len(node)} entries; "
                                  f"use an index below {len(node)}")
            part = int(part)
        elif not isinstance(node, dict):
            raise ConfigError(f"--set {where}: {path} = {node!r} is not a mapping")
        if depth == len(parts) - 1:
            node[part] = value
        else:
            if isinstance(node, dict) and not isinstance(node.get(part), (dict, list)):
                node[part] = {}
            node, path = node[part], where
    return raw


def load_config(path=None, overrides=(), base=None):
    """Resolved config from a YAML file (or ``base`` dict), then ``--set`` style overrides.

    ``name`` defaults to the file's stem. Raises ConfigError.
    """
    if base is not None:
        raw = copy.deepcopy(base)
    elif path is not None:
        raw = read_yaml(path)
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: expected a mapping at the top level, got "
                              f"{type(raw).__name__}")
        if raw.get("name") is None:
            raw["name"] = os.path.splitext(os.path.basename(path))[0]
    else:
        raw = {}
    for text in overrides:
        parts, value = parse_override(text)
        apply_override(raw, parts, value)
    return validate(raw)


def dump_config(cfg):
    """The resolved config as YAML text (``yaml.safe_dump``, schema order)."""
    return yaml.safe_dump(cfg, sort_keys=False, default_flow_style=False)


def diff_configs(old, new, path=""):
    """Dotted keys whose values differ: ``[(key, old, new)]``."""
    out = []
    for key in list(old) + [k for k in new if k not in old]:
        where = f"{path}.{key}" if path else key
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(diff_configs(a, b, where))
        elif a != b:
            out.append((where, a, b))
    return out


def describe_schema(schema=SCHEMA, path="", indent=2):
    """The config reference as text (for ``train.py --help`` and docs)."""
    lines = []
    for key, spec in _fields(schema).items():
        where = f"{path}.{key}" if path else key
        if isinstance(spec, dict):
            lines.append(f"{' ' * indent}{where}:  ({spec['__doc__']})")
            lines.extend(describe_schema(spec, where, indent + 2))
        else:
            default = "null" if spec.default is None else yaml.safe_dump(
                spec.default, default_flow_style=True).strip().removesuffix("...").strip()
            lines.append(f"{' ' * indent}{where} = {default}  [{spec.allowed()}]")
            lines.append(f"{' ' * (indent + 4)}{spec.doc}")
    return lines if path else "\n".join(lines)
