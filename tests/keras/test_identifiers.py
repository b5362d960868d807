"""``keras.initializers.get``, ``regularizers.get`` and ``constraints.get`` read identifiers by
one rule (Keras 3's): None, a name, a config dict, a class, an instance or a callable."""
import numpy as np
import pytest

from minitf import keras


@pytest.mark.parametrize("module, name, cls", [
    (keras.initializers, "he_normal", keras.initializers.HeNormal),
    (keras.regularizers, "l2", keras.regularizers.L2),
    (keras.constraints, "non_neg", keras.constraints.NonNeg),
])
def test_every_kind_of_identifier(module, name, cls):
    assert module.get(None) is None
    assert isinstance(module.get(name), cls)
    assert isinstance(module.get(cls.__name__), cls)
    assert isinstance(module.get(cls), cls)                 # a class is instantiated
    instance = cls()
    assert module.get(instance) is instance
    assert isinstance(module.get(module.serialize(instance)), cls)

    def custom(*args, **kwargs):
        return 0.0
    assert module.get(custom) is custom
    with pytest.raises(ValueError, match="unknown"):
        module.get("no_such_name")
    with pytest.raises(ValueError, match="could not interpret 3"):
        module.get(3)


def test_a_regularizer_class_given_to_a_layer_is_instantiated():
    layer = keras.layers.Dense(2, kernel_regularizer=keras.regularizers.L2)
    layer(np.ones((1, 3), "float32"))
    assert isinstance(layer.kernel_regularizer, keras.regularizers.L2)
    assert float(layer.losses[0]) > 0.0
