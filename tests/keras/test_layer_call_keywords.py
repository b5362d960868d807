"""Keras behaviours of a layer call and of tensors that Keras code relies on: inputs passed
by the name of `call`'s first parameter, `del tensor._keras_mask`, and a `tf.Module` subclass
that never calls `Module.__init__` (TF's Transformer tutorial has all three)."""
import numpy as np
import pytest

import minitf as tf
from minitf.keras import layers


class Scale(layers.Layer):
    def call(self, x, factor=2.0):
        return x * factor


def test_inputs_by_the_name_of_calls_first_parameter():
    x = tf.constant([1.0, 2.0])
    np.testing.assert_allclose(Scale()(x=x, factor=3.0).numpy(), [3.0, 6.0])
    np.testing.assert_allclose(Scale()(inputs=x).numpy(), [2.0, 4.0])
    with pytest.raises(TypeError, match="Scale.__call__ needs the inputs"):
        Scale()(factor=3.0)


def test_deleting_a_keras_mask_removes_it():
    x = layers.Embedding(5, 4, mask_zero=True)(tf.constant([[3, 0]]))
    assert x._keras_mask.numpy().tolist() == [[True, False]]
    del x._keras_mask
    assert x._keras_mask is None


def test_a_module_subclass_without_module_init():
    class Export(tf.Module):
        def __init__(self, scale):      # no super().__init__(), as in TF's tutorials
            self.scale = scale

        @tf.function(input_signature=[tf.TensorSpec(shape=[], dtype=tf.float32)])
        def __call__(self, x):
            return x * self.scale

    export = Export(3.0)
    assert "Export" in repr(export)
    assert float(export(tf.constant(2.0))) == 6.0
