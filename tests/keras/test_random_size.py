"""``keras.layers.RandomHeight`` / ``RandomWidth``. Expected values come from running TF 2.21's
``tf.keras.layers.RandomHeight`` / ``RandomWidth`` (Keras 3.15) on the same inputs, with a
degenerate ``factor=(f, f)`` range so the resized size is known."""
import numpy as np
import pytest

import minitf as tf
keras = tf.keras
layers = tf.keras.layers


def S(*shape):
    return np.sin(np.arange(int(np.prod(shape)))).reshape(shape).astype("float32")


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), atol=2e-5)


def test_random_height_values():
    y = layers.RandomHeight((0.5, 0.5))(S(1, 2, 3, 1))  # height int(2 * 1.5) = 3, bilinear
    assert y.shape == (1, 3, 3, 1) and y.dtype == tf.float32
    close(y[0, :, :, 0], [[0.0, 0.84147, 0.9093], [0.07056, 0.04233, -0.02481],
                          [0.14112, -0.7568, -0.95892]])
    y = layers.RandomHeight((1.0, 1.0), interpolation="nearest")(S(2, 3, 1))  # one image
    close(y[..., 0], [[0.0, 0.84147, 0.9093]] * 2 + [[0.14112, -0.7568, -0.95892]] * 2)


def test_random_width_values():
    y = layers.RandomWidth((1.0, 1.0), interpolation="nearest")(S(1, 2, 2, 1))
    close(y[0, :, :, 0], [[0.0, 0.0, 0.84147, 0.84147], [0.9093, 0.9093, 0.14112, 0.14112]])
    y = layers.RandomWidth((-0.5, -0.5))(S(1, 2, 4, 1))
    close(y[0, :, :, 0], [[0.42074, 0.52521], [-0.85786, 0.18879]])


def test_random_range_and_one_draw_per_batch():
    layer = layers.RandomHeight(0.5, seed=7)
    heights = set()
    for _ in range(30):
        y = layer(np.ones((3, 10, 4, 2), "float32"))
        assert y.shape[0] == 3 and y.shape[2:] == (4, 2)
        heights.add(y.shape[1])
    assert min(heights) >= 5 and max(heights) <= 15 and len(heights) > 3
    widths = {layers.RandomWidth((0.2, 0.4))(np.ones((10, 10, 1), "float32")).shape[1]
              for _ in range(20)}
    assert widths <= {12, 13, 14}


def test_identity_at_inference_and_integer_inputs():
    x = S(2, 4, 4, 3)
    np.testing.assert_array_equal(layers.RandomHeight(0.3)(x, training=False).numpy(), x)
    y = layers.RandomWidth((1.0, 1.0))(np.arange(6, dtype="int32").reshape(1, 2, 3, 1))
    assert y.dtype == tf.float32 and y.shape == (1, 2, 6, 1)


def test_in_a_sequential_model():
    model = keras.Sequential([keras.Input((8, 6, 3)), layers.RandomHeight(0.2),
                              layers.RandomWidth(0.3)])
    assert model.output_shape == (None, None, None, 3)
    x = np.ones((2, 8, 6, 3), "float32")
    assert model.predict(x, verbose=0).shape == (2, 8, 6, 3)  # inference: unchanged
    assert model(x, training=True).shape[0] == 2


def test_in_dataset_map():
    resize = layers.RandomWidth((1.0, 1.0))
    ds = tf.data.Dataset.from_tensor_slices(S(4, 2, 3, 1)).batch(2).map(lambda x: resize(x))
    batches = list(ds)
    assert [tuple(b.shape) for b in batches] == [(2, 2, 6, 1)] * 2


def test_config_round_trip():
    layer = layers.RandomWidth((0.1, 0.3), interpolation="nearest", seed=3, name="rw")
    config = layer.get_config()
    assert {k: config[k] for k in ("factor", "interpolation", "seed", "name")} == \
        {"factor": (0.1, 0.3), "interpolation": "nearest", "seed": 3, "name": "rw"}
    clone = layers.RandomWidth.from_config(config)
    assert (clone.factor, clone.interpolation, clone.seed) == ((0.1, 0.3), "nearest", 3)
    assert layers.RandomHeight(0.2).get_config()["factor"] == 0.2
    assert layers.experimental.preprocessing.RandomHeight is layers.RandomHeight


@pytest.mark.parametrize("make, error, match", [
    (lambda: layers.RandomHeight((0.5, 0.2)), ValueError,
     r"RandomHeight: `factor` argument cannot have an upper bound lesser than the lower bound. "
     r"Received: factor=\(0.5, 0.2\)"),
    (lambda: layers.RandomHeight(-1.5), ValueError, r"upper bound lesser.*factor=-1.5"),
    (lambda: layers.RandomWidth((-1.2, 0.1)), ValueError,
     r"RandomWidth: `factor` argument must have values larger than -1. Received: "
     r"factor=\(-1.2, 0.1\)"),
    (lambda: layers.RandomWidth((0.1, 0.2, 0.3)), ValueError,
     r"number or a \(lower, upper\) pair. Received: factor=\(0.1, 0.2, 0.3\)"),
    (lambda: layers.RandomWidth("big"), TypeError, r"Received: factor='big'"),
    (lambda: layers.RandomHeight(0.2, interpolation="area"), NotImplementedError,
     r"RandomHeight: interpolation 'area' is not supported"),
    (lambda: layers.RandomHeight(0.2, interpolation="cubic"), ValueError,
     r"unknown interpolation 'cubic'"),
    (lambda: layers.RandomHeight((-1.0, -1.0))(S(1, 2, 2, 1)), ValueError,
     r"RandomHeight: the random height is 0"),
    (lambda: layers.RandomWidth(0.1)(S(2, 2)), ValueError, r"rank 3.*got shape \(2, 2\)"),
])
def test_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()
