"""minitf has no masking: Embedding(mask_zero=True) must fail loudly, not average padding."""
import pytest

from minitf import keras


def test_mask_zero_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="Embedding.*mask_zero=True is not supported"
                       ".*multiply"):
        keras.layers.Embedding(10, 4, mask_zero=True)


def test_mask_zero_false_still_works_and_round_trips():
    layer = keras.layers.Embedding(10, 4, mask_zero=False)
    assert keras.layers.Embedding.from_config(layer.get_config()).output_dim == 4
