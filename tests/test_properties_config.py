"""Property tests of train.py's config handling: whatever the config file or ``--set`` value,
the command line exits 0 or gives a clear error with exit status 2, never a traceback.

``main`` runs in-process with ``--print-config`` (nothing is trained or written).
"""
import contextlib
import io

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

import train
from minitf.training import config as config_lib

_SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


def _dotted(cfg, prefix=""):
    for key, value in cfg.items():
        path = f"{prefix}{key}"
        yield path
        if isinstance(value, dict):
            yield from _dotted(value, path + ".")


KEYS = sorted(_dotted(config_lib.defaults()))
SECTIONS = sorted(k for k, v in config_lib.defaults().items() if isinstance(v, dict))

scalars = (st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
keys = st.sampled_from(KEYS) | st.text(max_size=10)


def _run(argv):
    """(exit status, stderr) of ``train.main(argv)``."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = train.main(argv)
        except SystemExit as exc:  # argparse's own usage errors
            status = exc.code
    return status, err.getvalue()


def _assert_clean(status, stderr):
    assert status in (0, 2), (status, stderr)
    assert "Traceback" not in stderr
    if status == 2:
        assert "error:" in stderr and len(stderr.strip()) > len("train.py: error:")


@st.composite
def raw_configs(draw):
    """A config mapping: known sections and keys with random values, and unknown keys."""
    cfg = {}
    for _ in range(draw(st.integers(0, 4))):
        key = draw(keys)
        parts = key.split(".")
        node = cfg
        for part in parts[:-1]:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
        node[parts[-1]] = draw(values)
    if draw(st.booleans()):
        cfg[draw(st.sampled_from(SECTIONS))] = draw(values)
    return cfg


@_SETTINGS
@given(cfg=raw_configs())
def test_random_config_files(tmp_path, cfg):
    path = tmp_path / "random.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    _assert_clean(*_run(["--config", str(path), "--print-config"]))


@_SETTINGS
@given(key=keys, value=values | st.text(max_size=20))
def test_random_set_values(key, value):
    text = value if isinstance(value, str) and not value.startswith("!") else yaml.safe_dump(
        value, default_flow_style=True, allow_unicode=True).strip()
    _assert_clean(*_run(["--config", "fashion_mnist", "--print-config", "--set",
                         f"{key}={text}"]))


@_SETTINGS
@given(data=st.binary(min_size=1, max_size=64))
def test_random_bytes_as_config_file(tmp_path, data):
    path = tmp_path / "bytes.yaml"
    path.write_bytes(data)
    _assert_clean(*_run(["--config", str(path), "--print-config"]))


def test_binary_config_names_the_file_and_the_byte(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"seed: 1\n\xff\xfe\x00\x01")
    status, stderr = _run(["--config", str(path), "--print-config"])
    assert status == 2
    assert f"{path}: not UTF-8 text (byte 0xff at offset 8)" in stderr


@pytest.mark.parametrize("value, fragment", [
    ("optimizer.learning_rate=.nan", "optimizer.learning_rate"),
    ("train.epochs=1e400", "train.epochs"),
    ("seed=-1", "seed"),
    ("data.validation_split=0.95", "[0.0, 0.9]"),
])
def test_out_of_range_set_values_name_the_key(value, fragment):
    status, stderr = _run(["--config", "fashion_mnist", "--print-config", "--set", value])
    assert status == 2 and fragment in stderr, stderr


def test_valid_values_pass():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = train.main(["--config", "fashion_mnist", "--print-config", "--set",
                             "optimizer.learning_rate=3e-4", "--set", "train.epochs=2"])
    assert status == 0
    cfg = yaml.safe_load(out.getvalue())
    assert cfg["optimizer"]["learning_rate"] == 3e-4 and cfg["train"]["epochs"] == 2
    assert cfg["data"]["validation_split"] == 0.1
