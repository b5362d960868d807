"""Writes ``tests/fixtures/keras/conv2d_transpose_cases.npz`` with a real Keras 3 (not needed to
run the tests; ``make_keras_fixtures.py`` makes such a venv)::

    KERAS_BACKEND=numpy <python with keras> tools/make_conv_transpose_fixture.py

For each ``(kernel, stride, padding, output_padding, dilation)`` of ``CASES``, Keras'
``Conv2DTranspose`` output for a random input, with its kernel and bias
(``<i>_x``, ``<i>_y``, ``<i>_kernel``, ``<i>_bias``; ``params`` holds the cases, -1 meaning
``output_padding=None``).
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                   "fixtures", "keras", "conv2d_transpose_cases.npz")
CASES = [(3, 2, "same", 1, 1), (3, 2, "valid", 1, 1), (3, 2, "same", 0, 1), (4, 3, "same", 2, 1),
         (2, 3, "valid", 0, 1), (3, 1, "same", None, 2), (3, 1, "valid", None, 2),
         (3, 2, "valid", None, 1), (5, 3, "same", None, 1), (1, 2, "same", 1, 1),
         (3, 3, "valid", 2, 1), (2, 3, "valid", None, 1)]


def main():
    import keras
    rng = np.random.default_rng(1)
    arrays = {"params": np.array([(k, s, p == "same", -1 if op is None else op, d)
                                  for k, s, p, op, d in CASES])}
    for i, (k, s, padding, op, d) in enumerate(CASES):
        layer = keras.layers.Conv2DTranspose(2, k, strides=s, padding=padding,
                                             output_padding=op, dilation_rate=d)
        x = rng.normal(size=(1, 4, 5, 3)).astype("float32")
        layer(x)
        layer.bias.assign(rng.normal(size=2).astype("float32"))
        arrays.update({f"{i}_x": x, f"{i}_y": np.asarray(layer(x)),
                       f"{i}_kernel": np.asarray(layer.kernel),
                       f"{i}_bias": np.asarray(layer.bias)})
    np.savez(OUT, **arrays)
    print(f"keras {keras.__version__}: wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
