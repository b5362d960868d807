"""Writes the ``conv3d_*`` fixtures of ``tests/fixtures/keras`` with a real Keras 3 (not needed
to run the tests; ``make_keras_fixtures.py`` makes such a venv)::

    KERAS_BACKEND=numpy <python with keras, h5py> tools/make_conv3d_fixtures.py

For each model below (which ``tests/keras/test_conv3d_layers.py`` builds with minitf): weights drawn
``normal(0, 0.5)``, ``<name>.weights.h5`` (``save_weights``) and ``<name>.npz`` with the input
``x0``, Keras' inference output ``y0`` and ``config_keys``: for each layer, its class name and
the sorted keys of its ``get_config()`` (JSON).
"""
import json
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                   "fixtures", "keras")


def conv3d_net(K):
    L = K.layers
    return K.Sequential([
        K.Input((5, 6, 7, 2)),
        L.Conv3D(3, (3, 2, 3), strides=(2, 1, 2), padding="same", activation="relu"),
        L.Conv3D(4, 2, dilation_rate=(1, 2, 1)),
        L.MaxPooling3D((2, 2, 1), strides=1, padding="same"),
        L.ZeroPadding3D(((1, 0), (0, 1), (1, 1))),
        L.AveragePooling3D((2, 3, 2), strides=(1, 2, 1), padding="same"),
        L.Cropping3D(((0, 1), (1, 0), (0, 0))),
        L.UpSampling3D((1, 2, 1)),
        L.Conv3DTranspose(2, (2, 3, 3), strides=(2, 1, 2), padding="same"),
        L.Conv3DTranspose(3, 2, strides=(1, 3, 1), padding="valid", use_bias=False)])


def conv3d_pool_global(K):
    L = K.layers
    x = K.Input((4, 5, 6, 3))
    avg = L.GlobalAveragePooling3D()(x)
    top = L.GlobalMaxPooling3D(keepdims=True)(x)
    pooled = L.MaxPooling3D(3, strides=2, padding="same")(x)
    mean = L.AveragePooling3D(2, padding="valid")(x)
    return K.Model(x, [avg, top, pooled, mean])


def conv3d_transpose_1d(K):
    L = K.layers
    return K.Sequential([
        K.Input((7, 3)),
        L.Conv1DTranspose(4, 3, strides=2, padding="same", activation="tanh"),
        L.Conv1DTranspose(3, 2, strides=3, padding="valid"),
        L.Conv1DTranspose(2, 3, strides=2, padding="same", output_padding=1),
        L.Conv1DTranspose(2, 3, dilation_rate=2)])


MODELS = {"conv3d_net": conv3d_net, "conv3d_pool_global": conv3d_pool_global,
          "conv3d_transpose_1d": conv3d_transpose_1d}
SHAPES = {"conv3d_net": (2, 5, 6, 7, 2), "conv3d_pool_global": (2, 4, 5, 6, 3),
          "conv3d_transpose_1d": (2, 7, 3)}


def main():
    import keras
    for i, (name, build) in enumerate(sorted(MODELS.items())):
        model = build(keras)
        rng = np.random.default_rng(700 + i)
        for w in model.weights:
            w.assign(rng.normal(scale=0.5, size=tuple(w.shape)).astype("float32"))
        x = np.random.default_rng(7).normal(size=SHAPES[name]).astype("float32")
        ys = model(x, training=False)
        ys = ys if isinstance(ys, (list, tuple)) else [ys]
        arrays = {"x0": x}
        arrays.update({f"y{j}": np.asarray(y) for j, y in enumerate(ys)})
        keys = [[type(layer).__name__, sorted(layer.get_config())] for layer in model.layers]
        arrays["config_keys"] = np.array(json.dumps(keys))
        model.save_weights(os.path.join(OUT, f"{name}.weights.h5"))
        np.savez(os.path.join(OUT, f"{name}.npz"), **arrays)
        print("wrote", name, {k: np.shape(a) for k, a in arrays.items()})


if __name__ == "__main__":
    main()
