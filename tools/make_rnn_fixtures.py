"""Writes the ``rnn_*`` fixtures of ``tests/fixtures/keras`` with a real Keras 3 (not needed to
run the tests; ``make_keras_fixtures.py`` makes such a venv)::

    KERAS_BACKEND=numpy <python with keras, h5py> tools/make_rnn_fixtures.py

For each model of ``rnn_fixture_models.py``: seeded random weights, ``<name>.weights.h5``
(``save_weights``), ``<name>.keras`` (``model.save``) and ``<name>.npz`` holding the inputs
(``x``, and ``x2`` for two-input models) and Keras' inference outputs ``y``.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "keras")
sys.path.insert(0, HERE)
import rnn_fixture_models as rnn_models  # noqa: E402


def main():
    import keras
    for i, (name, build) in enumerate(sorted(rnn_models.MODELS.items())):
        model = build(keras)
        rnn_models.randomize(model.weights, seed=200 + i)
        x = rnn_models.inputs(name)
        y = np.asarray(model(x, training=False))
        model.save_weights(os.path.join(OUT, f"{name}.weights.h5"))
        model.save(os.path.join(OUT, f"{name}.keras"))
        arrays = {"x": x[0], "x2": x[1]} if isinstance(x, list) else {"x": x}
        np.savez(os.path.join(OUT, f"{name}.npz"), y=y, **arrays)
        print(f"keras {keras.__version__}: {name} -> output {y.shape}")


if __name__ == "__main__":
    main()
