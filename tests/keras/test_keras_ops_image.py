"""``keras.ops.image``: Keras' argument names over ``tf.image.resize`` and the affine
transform (the identity transform keeps the image; resizing matches ``tf.image``)."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras


def test_resize_and_affine_transform():
    x = np.random.default_rng(2).uniform(size=(2, 4, 5, 3)).astype("float32")
    np.testing.assert_array_equal(keras.ops.image.resize(x, (7, 3)).numpy(),
                                  tf.image.resize(x, (7, 3)).numpy())
    np.testing.assert_array_equal(
        keras.ops.image.resize(x, (8, 10), interpolation="nearest").numpy(),
        np.repeat(np.repeat(x, 2, axis=1), 2, axis=2))
    identity = np.array([[1, 0, 0, 0, 1, 0, 0, 0]] * 2, "float32")
    np.testing.assert_allclose(keras.ops.image.affine_transform(x, identity).numpy(), x,
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match="crop_to_aspect_ratio"):
        keras.ops.image.resize(x, (3, 3), crop_to_aspect_ratio=True)
