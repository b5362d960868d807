"""Embedding(mask_zero=True): id 0 is padding, the output carries the mask ``ids != 0`` (the
masked recurrences themselves are tested in test_masking.py)."""
import numpy as np

from minitf import keras
from minitf.keras.layers.masking import get_mask


def test_mask_zero_attaches_the_padding_mask():
    ids = np.array([[5, 0, 2, 0]])
    out = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
    assert out.shape == (1, 4, 4)
    np.testing.assert_array_equal(get_mask(out).numpy(), [[True, False, True, False]])


def test_mask_zero_round_trips_and_false_still_works():
    layer = keras.layers.Embedding(10, 4, mask_zero=True)
    assert keras.layers.Embedding.from_config(layer.get_config()).mask_zero is True
    layer = keras.layers.Embedding(10, 4, mask_zero=False)
    assert keras.layers.Embedding.from_config(layer.get_config()).output_dim == 4
    assert get_mask(layer(np.array([[5, 0]]))) is None
