"""Writes the ``misc_*`` fixtures of ``tests/fixtures/keras`` with a real Keras 3 (not needed to
run the tests)::

    KERAS_BACKEND=numpy <python with keras, h5py> tools/make_misc_fixtures.py

``misc_norm_einsum``: a model of GroupNormalization, UnitNormalization and EinsumDense layers
(which ``tests/keras/test_layers_dropout_norm.py`` builds with minitf), weights drawn
``normal(0, 0.5)``, saved with ``save_weights``; ``misc_norm_einsum.npz`` holds the input ``x0``,
Keras' inference outputs ``y0, y1...`` and single-layer results (``unit_tiny``: UnitNormalization
of a vector of tiny norm; ``cat_*``: CategoryEncoding).
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "keras")


def misc_norm_einsum(K):
    L = K.layers
    x = K.Input((5, 8))
    g1 = L.GroupNormalization(groups=4, epsilon=1e-3)(x)
    g2 = L.GroupNormalization(groups=5, axis=1, center=False)(x)
    u = L.UnitNormalization(axis=(1, 2))(x)
    e1 = L.EinsumDense("abc,cd->abd", output_shape=(None, 6), bias_axes="d")(x)
    e2 = L.EinsumDense("...b,bc->...c", output_shape=4, activation="relu", bias_axes="c")(x)
    e3 = L.EinsumDense("ab...,bc->ac...", output_shape=3, bias_axes="c")(x)
    e4 = L.EinsumDense("abc,cde->abde", output_shape=(5, 2, 3), bias_axes="be")(x)
    return K.Model(x, [g1, g2, u, e1, e2, e3, e4])


def main():
    import keras
    model = misc_norm_einsum(keras)
    rng = np.random.default_rng(600)
    for w in model.weights:
        w.assign(rng.normal(scale=0.5, size=tuple(w.shape)).astype("float32"))
    x = np.random.default_rng(7).normal(size=(3, 5, 8)).astype("float32")
    arrays = {"x0": x}
    for j, y in enumerate(model(x, training=False)):
        arrays[f"y{j}"] = np.asarray(y)
    tiny = np.array([[1e-7] * 4, [1e-8] * 4, [1e-14] * 4], "float32")
    arrays["unit_tiny_in"] = tiny
    arrays["unit_tiny"] = np.asarray(keras.layers.UnitNormalization()(tiny))
    tokens = np.array([[0, 1, 3, 3], [2, 2, 2, 0]])
    arrays["cat_in"] = tokens
    for mode in ("multi_hot", "count"):
        arrays[f"cat_{mode}"] = np.asarray(
            keras.layers.CategoryEncoding(num_tokens=5, output_mode=mode)(tokens))
    model.save_weights(os.path.join(OUT, "misc_norm_einsum.weights.h5"))
    np.savez(os.path.join(OUT, "misc_norm_einsum.npz"), **arrays)
    print("weights", [(w.path, tuple(w.shape)) for w in model.weights])
    print({k: np.shape(a) for k, a in arrays.items()})


if __name__ == "__main__":
    main()
