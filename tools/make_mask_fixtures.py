"""Writes the ``mask_*`` fixtures of ``tests/fixtures/keras`` with a real Keras 3 (not needed to
run the tests; ``make_keras_fixtures.py`` makes such a venv)::

    KERAS_BACKEND=numpy <python with keras, h5py> tools/make_mask_fixtures.py

The models below are defined once for Keras 3 and minitf (``K`` is ``keras`` or
``minitf.keras``) and use masks: ``Embedding(mask_zero=True)`` or ``Masking`` in front of
recurrent layers. For each: seeded random weights, ``<name>.weights.h5`` (``save_weights``) and
``<name>.npz`` holding the zero-padded inputs ``x`` and Keras' inference outputs ``y``.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "keras")


def mask_tutorial(K):
    """TF's "Text classification with an RNN" model, smaller."""
    L = K.layers
    return K.Sequential([K.Input((None,), dtype="int32"), L.Embedding(30, 8, mask_zero=True),
                         L.Bidirectional(L.LSTM(6)), L.Dense(6, activation="relu"),
                         L.Dense(1)])


def mask_stacked(K):
    """Masks through stacked recurrent layers (a backwards one among them), a Bidirectional
    with return_sequences, Dense, and masked average pooling."""
    L = K.layers
    inputs = K.Input((None,), dtype="int32")
    x = L.Embedding(30, 5, mask_zero=True)(inputs)
    x = L.GRU(6, return_sequences=True)(x)
    x = L.SimpleRNN(5, return_sequences=True, go_backwards=True)(x)
    x = L.Bidirectional(L.GRU(3, return_sequences=True), merge_mode="sum")(x)
    x = L.Dense(4, activation="tanh")(x)
    x = L.LSTM(4, return_sequences=True)(x)
    x = L.GlobalAveragePooling1D()(x)
    return K.Model(inputs, L.Dense(2)(x))


def mask_masking(K):
    """``Masking`` on float features, LSTM states and sequences."""
    L = K.layers
    inputs = K.Input((7, 3))
    x = L.Masking(mask_value=0.0)(inputs)
    x = L.LSTM(5, return_sequences=True)(x)
    x = L.Bidirectional(L.SimpleRNN(3), merge_mode="concat")(x)
    return K.Model(inputs, L.Dense(2)(x))


MODELS = {f.__name__: f for f in (mask_tutorial, mask_stacked, mask_masking)}


def inputs(name):
    """Zero-padded inputs: post- and pre-padding, a full row (and, where the model allows it, a
    row that is all padding)."""
    rng = np.random.default_rng(5)
    if name == "mask_masking":
        x = rng.standard_normal((4, 7, 3)).astype("float32")
        x[0, 5:] = 0.0
        x[1, :2] = 0.0
        x[2, 3] = 0.0           # a masked step in the middle
        return x
    lengths = [7, 4, 2, 5, 1]
    x = np.zeros((len(lengths), 7), "int32")
    for row, n in enumerate(lengths):
        x[row, :n] = rng.integers(1, 30, n)
    x[3] = np.roll(x[3], 2)     # padding in front
    if name == "mask_tutorial":
        x = np.concatenate([x, np.zeros((1, 7), "int32")])
    return x


def randomize(variables, seed):
    """Seeded random values for every variable (so a weight in the wrong slot shows)."""
    rng = np.random.default_rng(seed)
    for v in variables:
        v.assign(rng.standard_normal(tuple(int(d) for d in v.shape)).astype("float32") * 0.5)


def main():
    import keras
    for i, (name, build) in enumerate(sorted(MODELS.items())):
        model = build(keras)
        randomize(model.weights, seed=300 + i)
        x = inputs(name)
        y = np.asarray(model(x, training=False))
        model.save_weights(os.path.join(OUT, f"{name}.weights.h5"))
        np.savez(os.path.join(OUT, f"{name}.npz"), x=x, y=y)
        print(f"keras {keras.__version__}: {name} -> output {y.shape}")


if __name__ == "__main__":
    sys.exit(main())
