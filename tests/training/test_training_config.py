"""Config schema: defaults, strict validation messages, YAML 1.1 floats, overrides, lookup."""
import os

import pytest
import yaml

from minitf.training import config as C
from minitf.training.config import ConfigError, load_config, validate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = os.path.join(ROOT, "configs")


def _error(raw):
    with pytest.raises(ConfigError) as info:
        validate(raw)
    return str(info.value)


def test_defaults_fill_every_key_and_validate():
    cfg = validate({})
    assert cfg == C.defaults()
    assert cfg["optimizer"]["learning_rate"] == 1e-3
    assert cfg["train"]["use_function"] is True
    assert cfg["precision"]["policy"] == "float32"


@pytest.mark.parametrize("name", ["fashion_mnist", "fashion_mnist_cnn", "mnist"])
def test_shipped_configs_are_valid(name):
    cfg = load_config(C.find_config(name, CONFIGS))
    assert cfg["name"] == name
    assert isinstance(cfg["optimizer"]["learning_rate"], float)
    assert cfg["optimizer"]["learning_rate"] == 1e-3  # written as 1e-3: a string to PyYAML


def test_pyyaml_exponent_floats_are_read_as_floats(tmp_path):
    assert yaml.safe_load("lr: 1e-3")["lr"] == "1e-3"  # the YAML 1.1 gap being fixed
    path = tmp_path / "c.yaml"
    path.write_text("optimizer:\n  learning_rate: 1e-3\n  kwargs: {epsilon: 1E-7, beta_1: 0.8}\n"
                    "precision:\n  initial_scale: 5e4\n")
    cfg = load_config(str(path))
    assert cfg["optimizer"]["learning_rate"] == 0.001
    assert cfg["optimizer"]["kwargs"] == {"epsilon": 1e-7, "beta_1": 0.8}
    assert cfg["precision"]["initial_scale"] == 50000.0
    assert cfg["name"] == "c"


def test_unknown_keys_suggest_the_closest():
    msg = _error({"optimizer": {"learing_rate": 0.1}})
    assert "optimizer.learing_rate" in msg
    assert "did you mean 'optimizer.learning_rate'?" in msg
    msg = _error({"trian": {}})
    assert "'trian'" in msg and "did you mean 'train'?" in msg
    msg = _error({"optimizer": {"param_groups": [{"prefix": "a", "lr": 0.1}]}})
    assert "optimizer.param_groups[0].lr" in msg


@pytest.mark.parametrize("raw, key, value, allowed", [
    ({"train": {"epochs": 0}}, "train.epochs", "0", "an integer >= 1"),
    ({"train": {"epochs": 2.5}}, "train.epochs", "2.5", "an integer"),
    ({"train": {"batch_size": True}}, "train.batch_size", "True", "an integer"),
    ({"optimizer": {"learning_rate": -1}}, "optimizer.learning_rate", "-1.0", "a number > 0"),
    ({"optimizer": {"learning_rate": "fast"}}, "optimizer.learning_rate", "'fast'", "a number"),
    ({"data": {"validation_split": 1.5}}, "data.validation_split", "1.5", "[0.0, 0.9]"),
    ({"precision": {"policy": "mixed_float32"}}, "precision.policy", "'mixed_float32'",
     "did you mean 'mixed_float16'?"),
    ({"data": {"prefetch": -1}}, "data.prefetch", "-1", ">= 0"),
    ({"logging": {"csv": "yes please"}}, "logging.csv", "'yes please'", "true or false"),
    ({"optimizer": {"schedule": {"boundaries": [1, "x"]}}}, "optimizer.schedule.boundaries[1]",
     "'x'", "an integer"),
    ({"checkpoint": {"best_metric": "val_acc"}}, "checkpoint.best_metric", "'val_acc'",
     "did you mean 'val_accuracy'?"),
    ({"seed": -3}, "seed", "-3", "an integer in [0,"),
])
def test_wrong_types_and_ranges_name_key_value_and_allowed(raw, key, value, allowed):
    msg = _error(raw)
    assert f"{key} = {value}" in msg
    assert allowed in msg


def test_cross_field_checks():
    assert "at most one" in _error({"optimizer": {"clip": {"norm": 1.0, "value": 1.0}}})
    assert "validation_split" in _error({"data": {"eval_on": "validation",
                                                          "validation_split": 0.0}})
    assert "one more value" in _error({"optimizer": {"schedule": {
        "name": "piecewise", "boundaries": [10], "values": [0.1]}}})


def test_sections_must_be_mappings():
    assert "expected a mapping" in _error({"data": [1, 2]})


def test_overrides_parse_yaml_and_are_validated():
    cfg = load_config(overrides=["optimizer.learning_rate=3e-4", "model.kwargs.hidden_units=[16]",
                                 "data.data_dir=null", "train.use_function=false",
                                 "optimizer.schedule.name=cosine"])
    assert cfg["optimizer"]["learning_rate"] == 3e-4
    assert cfg["model"]["kwargs"] == {"hidden_units": [16]}
    assert cfg["train"]["use_function"] is False
    assert cfg["optimizer"]["schedule"]["name"] == "cosine"
    with pytest.raises(ConfigError, match="did you mean 'train.epochs'"):
        load_config(overrides=["train.epoch=3"])
    with pytest.raises(ConfigError, match=r"train.batch_size = 'big'"):
        load_config(overrides=["train.batch_size=big"])
    with pytest.raises(ConfigError, match="KEY.SUB=VALUE"):
        load_config(overrides=["train.epochs"])


def test_override_into_a_list_of_groups():
    base = {"optimizer": {"param_groups": [{"prefix": "hidden", "learning_rate": 0.1}]}}
    cfg = load_config(base=base, overrides=["optimizer.param_groups.0.learning_rate=1e-2"])
    assert cfg["optimizer"]["param_groups"] == [
        {"prefix": "hidden", "learning_rate": 0.01, "weight_decay": None}]
    with pytest.raises(ConfigError, match="index below 1"):
        load_config(base=base, overrides=["optimizer.param_groups.3.learning_rate=1"])


def test_find_config_by_bare_name(tmp_path):
    assert C.find_config("fashion_mnist", CONFIGS).endswith("fashion_mnist.yaml")
    assert C.find_config("fashion_mnist.yaml", CONFIGS).endswith("fashion_mnist.yaml")
    with pytest.raises(ConfigError, match="did you mean 'fashion_mnist'"):
        C.find_config("fashoin_mnist", CONFIGS)


def test_bad_yaml_names_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a: [1, 2\n")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        load_config(str(path))


def test_dump_round_trips():
    cfg = load_config(overrides=["optimizer.learning_rate=1e-5", "name=x"])
    assert validate(yaml.safe_load(C.dump_config(cfg))) == cfg


def test_describe_schema_lists_every_key():
    text = C.describe_schema()
    for key in ("data.validation_split", "optimizer.schedule.decay_steps",
                "optimizer.param_groups", "checkpoint.keep_last", "train.use_function"):
        assert key in text
