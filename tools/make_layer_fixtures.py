"""Writes the ``attn_*`` and ``dwconv_*`` fixtures of ``tests/fixtures/keras`` with a real
Keras 3 (not needed to run the tests; ``make_keras_fixtures.py`` makes such a venv)::

    KERAS_BACKEND=numpy <python with keras, h5py> tools/make_layer_fixtures.py

For each model of ``layer_fixture_models.py``: weights drawn ``normal(0, 0.5)``,
``<name>.weights.h5`` (``save_weights``) and ``<name>.npz`` with the inputs ``x0, x1...``, Keras'
inference outputs ``y0, y1...`` and, for the attention models, calls of single layers with masks.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "keras")
sys.path.insert(0, HERE)
import layer_fixture_models as fm  # noqa: E402


def main():
    import keras
    rng = np.random.default_rng(11)
    for i, (name, build) in enumerate(sorted(fm.MODELS.items())):
        model = build(keras)
        fm.randomize(model.weights, seed=500 + i)
        x = fm.inputs(name)
        ys = model(x, training=False)
        ys = ys if isinstance(ys, (list, tuple)) else [ys]
        arrays = {f"x{j}": a for j, a in enumerate(x if isinstance(x, list) else [x])}
        arrays.update({f"y{j}": np.asarray(y) for j, y in enumerate(ys)})
        if name == "attn_mha":
            q, v, k, _ = x
            cross = model.layers[4]
            assert isinstance(cross, keras.layers.MultiHeadAttention), model.layers
            mask = rng.random((2, 4, 5)) > 0.4
            mask[1, 2] = False          # a query row with every key masked
            arrays["mask"] = mask
            arrays["masked"] = np.asarray(cross(q, v, k, attention_mask=mask))
            out, sc = cross(q, v, k, attention_mask=mask, use_causal_mask=True,
                            return_attention_scores=True)
            arrays["masked_causal"], arrays["masked_causal_scores"] = np.asarray(out), np.asarray(sc)
        if name == "attn_luong":
            q, v, k = x
            qm = np.array([[True, True, False, True], [True, True, True, True]])
            vm = np.array([[True, True, True, False, False], [True, False, True, True, True]])
            arrays["qmask"], arrays["vmask"] = qm, vm
            for j, layer in enumerate(model.layers[3:]):
                out, sc = layer([q, v, k], mask=[qm, vm], return_attention_scores=True,
                                use_causal_mask=True)
                arrays[f"masked{j}"], arrays[f"masked_scores{j}"] = np.asarray(out), np.asarray(sc)
                arrays[f"layer{j}"] = np.array(type(layer).__name__)
        model.save_weights(os.path.join(OUT, f"{name}.weights.h5"))
        np.savez(os.path.join(OUT, f"{name}.npz"), **arrays)
        print("wrote", name, {k: np.shape(a) for k, a in arrays.items()},
              [w.path for w in model.weights][:3])


if __name__ == "__main__":
    main()
