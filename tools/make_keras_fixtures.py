"""Keras 3 interchange fixtures and the reverse check, run against a real Keras install.

    PYTHONPATH=. python tools/make_keras_fixtures.py            # both steps
    PYTHONPATH=. python tools/make_keras_fixtures.py --check-only

Keras is kept out of the project: the script creates a virtual environment under /tmp
(``keras h5py numpy scipy jax``; Keras' numpy backend imports jax) and runs its Keras half
there with ``KERAS_BACKEND=numpy``.

1. generate: Keras builds the models of ``keras_fixture_models.py`` with seeded random weights
   and writes ``tests/fixtures/keras/<name>.weights.h5``, ``<name>.npz`` (the inputs ``x``
   and Keras' inference outputs ``y``) and, for the Sequential and Functional models,
   ``<name>.keras`` (``model.save``); ``tests/keras/test_keras_interop.py`` loads them into
   minitf.
2. check: minitf builds the same models with other random weights, writes its
   ``.weights.h5`` files (and ``.keras`` archives, legacy ``.h5`` model files) and outputs to a
   temporary directory; Keras loads each weights file into its own model, and each archive and
   ``.h5`` file with ``keras.models.load_model``, and compares outputs. The result is printed, one line per
   file.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "keras")
VENV = os.path.join(tempfile.gettempdir(), "minitf-keras-fixtures-venv")
PACKAGES = ["keras", "h5py", "numpy", "scipy", "jax"]
TOLERANCE = 1e-5

sys.path.insert(0, HERE)
import keras_fixture_models as fm  # noqa: E402


def _venv_python():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        print(f"creating {VENV} with {' '.join(PACKAGES)}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGES], check=True)
    return python


def _run_keras_side(*args):
    env = dict(os.environ, KERAS_BACKEND="numpy", PYTHONPATH=HERE)
    result = subprocess.run([_venv_python(), os.path.abspath(__file__), *args], env=env)
    if result.returncode:
        raise SystemExit(f"the Keras side failed with exit status {result.returncode}")


# --- the Keras side (inside the venv) ------------------------------------------------------------

def keras_generate(out_dir):
    import keras
    os.makedirs(out_dir, exist_ok=True)
    for i, (name, build) in enumerate(sorted(fm.MODELS.items())):
        model = build(keras)
        fm.randomize(model.weights, seed=100 + i)
        x = fm.inputs(name)
        y = np.asarray(model(x, training=False))
        extra = _optimizer_arrays(model, i)
        model.save_weights(os.path.join(out_dir, f"{name}.weights.h5"))
        if name in fm.ARCHIVED:
            model.save(os.path.join(out_dir, f"{name}.keras"))
            model.save(os.path.join(out_dir, f"{name}.h5"))       # the legacy HDF5 format
        np.savez(os.path.join(out_dir, f"{name}.npz"), x=x, y=y, **extra)
        print(f"keras {keras.__version__}: wrote {name}.weights.h5, {name}.npz"
              f"{f', {name}.keras and {name}.h5' if name in fm.ARCHIVED else ''} "
              f"(output {y.shape})")


def _optimizer_arrays(model, seed):
    if getattr(model, "optimizer", None) is None:
        return {}
    values = fm.randomize_optimizer(model.optimizer, seed=300 + seed)
    return {f"optimizer_{i}": v for i, v in enumerate(values)}


def keras_check(in_dir):
    import keras
    failures = 0
    for name, build in sorted(fm.MODELS.items()):
        model = build(keras)
        model.load_weights(os.path.join(in_dir, f"{name}.weights.h5"))
        data = np.load(os.path.join(in_dir, f"{name}.npz"))
        y = np.asarray(model(data["x"], training=False))
        results = [(f"{name}.weights.h5", y)]
        if name in fm.ARCHIVED:
            loaded = keras.models.load_model(os.path.join(in_dir, f"{name}.keras"))
            results.append((f"{name}.keras (load_model)",
                            np.asarray(loaded(data["x"], training=False))))
            legacy = keras.models.load_model(os.path.join(in_dir, f"{name}.h5"), compile=False)
            results.append((f"{name}.h5 (load_model)",
                            np.asarray(legacy(data["x"], training=False))))
        if getattr(model, "optimizer", None) is not None:
            mine = [np.asarray(v.numpy()) for v in model.optimizer.variables]
            theirs = [data[f"optimizer_{i}"] for i in range(len(mine))]
            diff = max(float(np.max(np.abs(a.astype("float64") - b))) for a, b in
                       zip(mine, theirs))
            ok = len(data.files) - 2 == len(mine) and diff == 0
            failures += not ok
            print(f"keras {keras.__version__} loaded minitf's {name}.weights.h5 optimizer "
                  f"group: {len(mine)} variables, max difference {diff:.2e} -> "
                  f"{'OK' if ok else 'MISMATCH'}")
        for what, out in results:
            diff = float(np.max(np.abs(out - data["y"])))
            ok = diff <= TOLERANCE
            failures += not ok
            print(f"keras {keras.__version__} loaded minitf's {what}: outputs {out.shape}, "
                  f"max |keras - minitf| = {diff:.2e} -> {'OK' if ok else 'MISMATCH'}")
    if failures:
        raise SystemExit(1)


# --- the minitf side -----------------------------------------------------------------------------

def minitf_write(out_dir):
    from minitf import keras
    for i, (name, build) in enumerate(sorted(fm.MODELS.items())):
        model = build(keras)
        fm.randomize(model.weights, seed=200 + i)
        x = fm.inputs(name)
        y = model(x, training=False).numpy()
        extra = _optimizer_arrays(model, 10 + i)
        model.save_weights(os.path.join(out_dir, f"{name}.weights.h5"))
        if name in fm.ARCHIVED:
            model.save(os.path.join(out_dir, f"{name}.keras"))
            model.save(os.path.join(out_dir, f"{name}.h5"))
        np.savez(os.path.join(out_dir, f"{name}.npz"), x=x, y=y, **extra)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-only", action="store_true",
                        help="skip regenerating the fixtures")
    parser.add_argument("--keras-generate", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--keras-check", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.keras_generate:
        return keras_generate(args.keras_generate)
    if args.keras_check:
        return keras_check(args.keras_check)
    if not args.check_only:
        _run_keras_side("--keras-generate", FIXTURES)
    with tempfile.TemporaryDirectory() as tmp:
        minitf_write(tmp)
        _run_keras_side("--keras-check", tmp)


if __name__ == "__main__":
    main()
