"""keras.models.clone_model on Functional and Sequential models: clone_function,
call_function, recursive, input_tensors, shared layers and compiled models. The behaviour
follows Keras 3's ``keras/src/models/cloning.py`` and its tests (the cases, not the code)."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers


def _numpy_dense(x, layer, relu=False):
    y = x @ layer.kernel.numpy().astype(np.float64) + layer.bias.numpy()
    return np.maximum(y, 0) if relu else y


def _mlp():
    inputs = keras.Input((3,), name="features")
    x = layers.Dense(4, activation="relu", name="hidden")(inputs)
    x = layers.Dropout(0.5, name="drop")(x)
    return keras.Model(inputs, layers.Dense(2, name="head")(x), name="mlp")


def test_clone_function_on_a_functional_model_changes_the_copies_only():
    model = _mlp()

    def no_dropout(layer):
        config = layer.get_config()
        if isinstance(layer, layers.Dropout):
            config["rate"] = 0.0
        return layer.__class__.from_config(config)

    clone = keras.models.clone_model(model, clone_function=no_dropout)
    assert type(clone) is type(model) and clone.name == "mlp"
    assert [la.name for la in clone.layers] == ["features", "hidden", "drop", "head"]
    assert clone.get_layer("drop").rate == 0.0 and model.get_layer("drop").rate == 0.5
    assert all(a is not b for a, b in zip(clone.layers, model.layers))
    assert clone.input_names == ["features"]

    clone.set_weights(model.get_weights())
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    # with rate 0 the training-mode output is the plain MLP's
    expected = _numpy_dense(_numpy_dense(x, model.get_layer("hidden"), relu=True),
                            model.get_layer("head"))
    np.testing.assert_allclose(clone(x, training=True).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_call_function_inserts_layers_around_the_calls():
    # keras.io's clone_model example: a Dropout after every Dense, the layers reused.
    model = _mlp()

    def call_function(layer, *args, **kwargs):
        out = layer(*args, **kwargs)
        if isinstance(layer, layers.Dense):
            out = layers.Dropout(0.5)(out)
        return out

    clone = keras.models.clone_model(model, clone_function=lambda layer: layer,
                                     call_function=call_function)
    kinds = [type(la).__name__ for la in clone.layers]
    assert kinds == ["InputLayer", "Dense", "Dropout", "Dropout", "Dense", "Dropout"]
    assert clone.get_layer("hidden") is model.get_layer("hidden")   # shared, not copied
    x = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    expected = _numpy_dense(_numpy_dense(x, model.get_layer("hidden"), relu=True),
                            model.get_layer("head"))
    np.testing.assert_allclose(clone(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert clone.layers[-1].rate == 0.5 and clone.layers[2].rate == 0.5


def test_a_shared_layer_is_cloned_once_and_stays_shared():
    inputs = keras.Input((3,))
    shared = layers.Dense(3, name="shared")
    outputs = shared(shared(inputs))
    model = keras.Model(inputs, outputs)
    clone = keras.models.clone_model(model)
    assert len(clone.layers) == 2 and len(clone.weights) == 2
    copy = clone.get_layer("shared")
    assert copy is not shared
    clone.set_weights(model.get_weights())
    x = np.random.default_rng(2).normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(clone(x).numpy(), _numpy_dense(_numpy_dense(x, shared), shared),
                               rtol=1e-5, atol=1e-6)


def _flag(layer):
    copy = layer.__class__.from_config(layer.get_config())
    copy.flag = True
    return copy


def test_recursive_clones_nested_models_layer_by_layer():
    inner = keras.Sequential([keras.Input((4,)), layers.Dense(3, name="inner_a"),
                              layers.Dense(3, name="inner_b")], name="inner")
    inputs = keras.Input((4,))
    model = keras.Model(inputs, layers.Dense(2, name="outer")(inner(inputs)))

    deep = keras.models.clone_model(model, clone_function=_flag, recursive=True)
    deep_inner = deep.layers[1]
    assert isinstance(deep_inner, keras.Sequential) and deep_inner is not inner
    assert not hasattr(deep_inner, "flag")                     # rebuilt, not clone_function'd
    assert all(getattr(la, "flag", False) for la in deep_inner.layers)
    assert getattr(deep.get_layer("outer"), "flag", False)

    shallow = keras.models.clone_model(model, clone_function=_flag)
    assert getattr(shallow.layers[1], "flag", False)          # the nested model as one layer
    assert not any(hasattr(la, "flag") for la in shallow.layers[1].layers)

    for clone in (deep, shallow):
        clone.set_weights(model.get_weights())
        x = np.random.default_rng(3).normal(size=(2, 4)).astype(np.float32)
        h = _numpy_dense(_numpy_dense(x, inner.layers[0]), inner.layers[1])
        np.testing.assert_allclose(clone(x).numpy(), _numpy_dense(h, model.get_layer("outer")),
                                   rtol=1e-5, atol=1e-6)


def test_recursive_with_call_function_reaches_nested_functional_models():
    a = keras.Input((4,))
    inner = keras.Model(a, layers.Dense(4, name="d1")(layers.Dense(4, name="d0")(a)))
    inputs = keras.Input((4,))
    model = keras.Model(inputs, layers.Dense(1, name="d2")(inner(inputs)))

    def call_function(layer, *args, **kwargs):
        out = layer(*args, **kwargs)
        return layers.Dropout(0.5)(out) if isinstance(layer, layers.Dense) else out

    clone = keras.models.clone_model(model, clone_function=lambda la: la,
                                     call_function=call_function, recursive=True)
    inner_kinds = [type(la).__name__ for la in clone.layers[1].layers]
    assert inner_kinds == ["InputLayer", "Dense", "Dropout", "Dense", "Dropout"]
    x = np.random.default_rng(4).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(clone(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_input_tensors_become_the_clones_inputs():
    x, y = keras.Input((3,), name="x"), keras.Input((3,), name="y")
    z = layers.Dense(2, name="d")(layers.Add()([x, y]))
    model = keras.Model({"x": x, "y": y}, {"z": z})

    new_inputs = {"x": keras.Input((3,), name="x"), "y": keras.Input((3,), name="y")}
    clone = keras.models.clone_model(model, input_tensors=new_inputs)
    assert clone.input["x"] is new_inputs["x"] and clone.input["y"] is new_inputs["y"]
    assert set(clone.output) == {"z"}
    clone.set_weights(model.get_weights())
    a, b = np.ones((2, 3), np.float32), np.full((2, 3), 2.0, np.float32)
    np.testing.assert_allclose(clone({"x": a, "y": b})["z"].numpy(),
                               _numpy_dense(a + b, model.get_layer("d")), rtol=1e-5, atol=1e-6)

    with pytest.raises(ValueError, match="structure of model.input"):
        keras.models.clone_model(model, input_tensors=(new_inputs["x"], new_inputs["y"]))
    with pytest.raises(ValueError, match="must be KerasTensors"):
        keras.models.clone_model(model, input_tensors={"x": a, "y": b})


def test_sequential_clones_keep_the_declared_input():
    seq = keras.Sequential([layers.Dense(4, input_shape=(3,)), layers.Dense(2)])
    clone = keras.models.clone_model(seq)
    assert clone.built and [w.shape for w in clone.weights] == [w.shape for w in seq.weights]
    unbuilt = keras.models.clone_model(keras.Sequential([layers.Dense(4), layers.Dense(2)]))
    assert not unbuilt.built and not unbuilt.weights

    new_input = keras.Input((3,), name="fresh")
    placed = keras.models.clone_model(seq, input_tensors=new_input)
    assert placed.inputs[0] is new_input
    with pytest.raises(ValueError, match="keras.Input tensor"):
        keras.models.clone_model(seq, input_tensors=layers.Dense(3)(new_input))
    with pytest.raises(ValueError, match="call_function is not supported for Sequential"):
        keras.models.clone_model(seq, call_function=lambda layer, *a, **k: layer(*a, **k))


def test_a_compiled_model_gives_a_compiled_clone_with_its_own_optimizer():
    model = keras.Sequential([keras.Input((3,)), layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse", metrics=["mae"])
    for clone in (keras.models.clone_model(model),
                  keras.models.clone_model(model, clone_function=_flag)):
        assert clone.compiled and clone.optimizer is not model.optimizer
        assert clone.optimizer.learning_rate.numpy() == pytest.approx(0.05)
        x = np.random.default_rng(5).normal(size=(16, 3)).astype(np.float32)
        history = clone.fit(x, x.sum(1, keepdims=True), epochs=2, verbose=0)
        assert set(history.history) == {"loss", "mae"}
        assert int(model.optimizer.iterations.numpy()) == 0


def test_a_functional_subclass_keeps_its_class_and_methods():
    class MarkedModel(keras.Model):
        def train_step(self, data):
            logs = super().train_step(data)
            logs["marker"] = tf.constant(7.0)
            return logs

    inputs = keras.Input((2,))
    model = MarkedModel(inputs, layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    clone = keras.models.clone_model(model)
    assert isinstance(clone, MarkedModel)
    history = clone.fit(np.ones((8, 2), np.float32), np.ones((8, 1), np.float32), batch_size=4,
                        verbose=0)
    assert history.history["marker"] == [7.0]


def test_subclassed_models_refuse_clone_function_and_call_function():
    class Net(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    with pytest.raises(ValueError, match="Sequential and Functional models only; got a Net"):
        keras.models.clone_model(Net(), clone_function=lambda layer: layer)
    with pytest.raises(ValueError, match="Functional models only; got a Net"):
        keras.models.clone_model(Net(), call_function=lambda layer, *a, **k: layer(*a, **k))
    with pytest.raises(ValueError, match="clone_function must be callable"):
        keras.models.clone_model(_mlp(), clone_function="copy")
    assert tf.is_tensor(keras.models.clone_model(_mlp())(np.ones((1, 3), np.float32)))
