"""Port of keras.io's guide "The Functional API" (https://keras.io/guides/functional_api/),
model-building parts with small random data.

Numbers from the guide: the MNIST model's 55,050 parameters, the convolutional autoencoder's
18,672 (encoder) and 28,241 (autoencoder) parameters with its (None, 28, 28, 1) output, the toy
ResNet's 223,242 parameters. The ticket-classification model is the guide's (Embedding then
LSTM(128) for the title and LSTM(32) for the body) with a 1,000-word vocabulary (the guide:
10,000); everything else is as written.
"""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers


def _summary_lines(model):
    lines = []
    model.summary(print_fn=lines.append)
    return lines


def test_mnist_model_parameters_and_forward():
    inputs = keras.Input(shape=(784,))
    assert tuple(inputs.shape) == (None, 784) and inputs.dtype == tf.float32
    dense = layers.Dense(64, activation="relu")
    x = dense(inputs)
    x = layers.Dense(64, activation="relu")(x)
    outputs = layers.Dense(10)(x)
    model = keras.Model(inputs=inputs, outputs=outputs, name="mnist_model")
    assert model.count_params() == 55050
    assert any("Total params: 55,050" in line for line in _summary_lines(model))
    x = np.random.default_rng(0).uniform(0, 1, (5, 784)).astype("float32")
    y = x
    for layer in model.layers[1:]:
        y = np.maximum(y @ layer.kernel.numpy() + layer.bias.numpy(), 0) \
            if layer is not model.layers[-1] else y @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(model(x).numpy(), y, rtol=1e-4, atol=1e-5)


def test_uint8_pixels_into_dense_are_cast():
    inputs = keras.Input(shape=(4,), dtype="uint8")
    outputs = layers.Dense(2, kernel_initializer="ones")(inputs)
    model = keras.Model(inputs, outputs)
    y = model(np.array([[1, 2, 3, 250]], np.uint8))
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy(), [[256.0, 256.0]])


def _encoder_decoder():
    encoder_input = keras.Input(shape=(28, 28, 1), name="img")
    x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.MaxPooling2D(3)(x)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.Conv2D(16, 3, activation="relu")(x)
    encoder_output = layers.GlobalMaxPooling2D()(x)
    encoder = keras.Model(encoder_input, encoder_output, name="encoder")

    decoder_input = keras.Input(shape=(16,), name="encoded_img")
    x = layers.Reshape((4, 4, 1))(decoder_input)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
    x = layers.UpSampling2D(3)(x)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)
    decoder = keras.Model(decoder_input, decoder_output, name="decoder")
    return encoder, decoder


def test_autoencoder_and_nested_models():
    encoder, decoder = _encoder_decoder()
    assert encoder.count_params() == 18672
    assert tuple(encoder.output.shape) == (None, 16)
    assert decoder.count_params() == 9569
    autoencoder_input = keras.Input(shape=(28, 28, 1), name="img")
    encoded_img = encoder(autoencoder_input)
    decoded_img = decoder(encoded_img)
    autoencoder = keras.Model(autoencoder_input, decoded_img, name="autoencoder")
    assert autoencoder.count_params() == 28241
    assert tuple(autoencoder.output.shape) == (None, 28, 28, 1)
    assert [type(layer).__name__ for layer in autoencoder.layers] == [
        "InputLayer", "Functional", "Functional"]
    x = np.random.default_rng(1).uniform(0, 1, (2, 28, 28, 1)).astype("float32")
    np.testing.assert_allclose(autoencoder(x).numpy(), decoder(encoder(x)).numpy(), rtol=1e-6)
    # Nested models share weights with the originals: one gradient per variable.
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(autoencoder(x) - x))
    grads = tape.gradient(loss, autoencoder.trainable_variables)
    assert len(grads) == len(encoder.trainable_variables) + len(decoder.trainable_variables)
    assert all(g is not None for g in grads)


def test_ensemble_average_of_models():
    def get_model():
        inputs = keras.Input(shape=(128,))
        outputs = layers.Dense(1)(inputs)
        return keras.Model(inputs, outputs)

    model1, model2, model3 = get_model(), get_model(), get_model()
    inputs = keras.Input(shape=(128,))
    outputs = layers.average([model1(inputs), model2(inputs), model3(inputs)])
    ensemble_model = keras.Model(inputs=inputs, outputs=outputs)
    x = np.random.default_rng(2).normal(size=(3, 128)).astype("float32")
    expected = (model1(x).numpy() + model2(x).numpy() + model3(x).numpy()) / 3
    np.testing.assert_allclose(ensemble_model(x).numpy(), expected, rtol=1e-5, atol=1e-6)


def _ticket_model(num_tags=12, num_words=1000, num_departments=4):
    title_input = keras.Input(shape=(None,), name="title")
    body_input = keras.Input(shape=(None,), name="body")
    tags_input = keras.Input(shape=(num_tags,), name="tags")
    title_features = layers.Embedding(num_words, 64)(title_input)
    body_features = layers.Embedding(num_words, 64)(body_input)
    # Reduce sequence of embedded words in the title into a single 128-dimensional vector
    title_features = layers.LSTM(128)(title_features)
    # Reduce sequence of embedded words in the body into a single 32-dimensional vector
    body_features = layers.LSTM(32)(body_features)
    x = layers.concatenate([title_features, body_features, tags_input])
    priority_pred = layers.Dense(1, name="priority")(x)
    department_pred = layers.Dense(num_departments, name="department")(x)
    return keras.Model(inputs=[title_input, body_input, tags_input],
                       outputs={"priority": priority_pred, "department": department_pred})


def test_multi_input_multi_output_model_in_a_custom_loop():
    model = _ticket_model()
    rng = np.random.default_rng(3)
    title = rng.integers(0, 1000, (8, 10))
    body = rng.integers(0, 1000, (8, 20))
    tags = rng.integers(0, 2, (8, 12)).astype("float32")
    priority = rng.uniform(size=(8, 1)).astype("float32")
    department = rng.integers(0, 2, (8, 4)).astype("float32")
    out_list = model([title, body, tags])
    out_dict = model({"title": title, "body": body, "tags": tags})
    assert set(out_list) == {"priority", "department"}
    np.testing.assert_allclose(out_list["priority"].numpy(), out_dict["priority"].numpy())
    assert tuple(out_dict["department"].shape) == (8, 4)
    assert sorted(model.output_names) == ["department", "priority"]
    assert model.input_names == ["title", "body", "tags"]
    assert model.get_layer("priority").units == 1

    bce = keras.losses.BinaryCrossentropy(from_logits=True)
    cce = keras.losses.CategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.RMSprop(1e-3)
    losses = []
    for _ in range(15):
        with tf.GradientTape() as tape:
            out = model({"title": title, "body": body, "tags": tags})
            loss = bce(priority, out["priority"]) + 0.2 * cce(department, out["department"])
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("form", ["dict", "list"])
def test_multi_input_multi_output_model_through_compile_and_fit(form):
    """The guide's ``compile(loss=[...], loss_weights=[1.0, 0.2])`` (or the same as dicts keyed
    by output name) and ``fit({"title": ..., "body": ..., "tags": ...}, {"priority": ...,
    "department": ...})``: one SGD step equals the same step written with GradientTape."""
    tf.random.set_seed(4)
    model, reference = _ticket_model(), _ticket_model()
    reference.set_weights(model.get_weights())
    rng = np.random.default_rng(4)
    inputs = {"title": rng.integers(0, 1000, (16, 10)), "body": rng.integers(0, 1000, (16, 20)),
              "tags": rng.integers(0, 2, (16, 12)).astype("float32")}
    targets = {"priority": rng.uniform(size=(16, 1)).astype("float32"),
               "department": rng.integers(0, 2, (16, 4)).astype("float32")}
    bce = keras.losses.BinaryCrossentropy(from_logits=True)
    cce = keras.losses.CategoricalCrossentropy(from_logits=True)
    if form == "dict":
        model.compile(optimizer=keras.optimizers.SGD(0.1),
                      loss={"priority": bce, "department": cce},
                      loss_weights={"priority": 1.0, "department": 0.2})
    else:  # a list follows the order in which the outputs dict was written, as in the guide
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss=[bce, cce],
                      loss_weights=[1.0, 0.2])
    history = model.fit(inputs, targets, epochs=1, batch_size=16, verbose=0).history

    out = reference(inputs)
    p_loss = float(bce(targets["priority"], out["priority"]))
    d_loss = float(cce(targets["department"], out["department"]))
    # independent float64 check of the weighted sum at the initial weights
    logits = out["priority"].numpy().astype(np.float64)
    y = targets["priority"].astype(np.float64)
    np.testing.assert_allclose(p_loss, np.mean(np.maximum(logits, 0) - logits * y
                                               + np.log1p(np.exp(-np.abs(logits)))), rtol=1e-5)
    assert history["loss"][0] == pytest.approx(p_loss + 0.2 * d_loss, rel=1e-5)
    assert history["priority_loss"][0] == pytest.approx(p_loss, rel=1e-5)
    assert history["department_loss"][0] == pytest.approx(d_loss, rel=1e-5)

    with tf.GradientTape() as tape:
        out = reference(inputs)
        loss = bce(targets["priority"], out["priority"]) + 0.2 * cce(targets["department"],
                                                                     out["department"])
    grads = tape.gradient(loss, reference.trainable_variables)
    keras.optimizers.SGD(0.1).apply_gradients(zip(grads, reference.trainable_variables))
    for a, b in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_toy_resnet_parameters():
    inputs = keras.Input(shape=(32, 32, 3), name="img")
    x = layers.Conv2D(32, 3, activation="relu")(inputs)
    x = layers.Conv2D(64, 3, activation="relu")(x)
    block_1_output = layers.MaxPooling2D(3)(x)
    x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_1_output)
    x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
    block_2_output = layers.add([x, block_1_output])
    x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_2_output)
    x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
    block_3_output = layers.add([x, block_2_output])
    x = layers.Conv2D(64, 3, activation="relu")(block_3_output)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(256, activation="relu")(x)
    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(10)(x)
    model = keras.Model(inputs, outputs, name="toy_resnet")
    assert model.count_params() == 223242
    assert tuple(block_1_output.shape) == (None, 9, 9, 64)
    y = model(np.zeros((2, 32, 32, 3), np.float32))
    assert tuple(y.shape) == (2, 10)


def test_shared_embedding_layer():
    shared_embedding = layers.Embedding(1000, 128)
    text_input_a = keras.Input(shape=(None,), dtype="int32")
    text_input_b = keras.Input(shape=(None,), dtype="int32")
    encoded_input_a = shared_embedding(text_input_a)
    encoded_input_b = shared_embedding(text_input_b)
    model = keras.Model([text_input_a, text_input_b], [encoded_input_a, encoded_input_b])
    assert len(model.trainable_variables) == 1
    a, b = model([np.array([[1, 2]]), np.array([[2, 3, 4]])])
    np.testing.assert_array_equal(a.numpy()[0, 1], b.numpy()[0, 0])


def test_feature_extraction_from_intermediate_outputs():
    initial_model = keras.Sequential([
        keras.Input(shape=(50, 50, 3)),
        layers.Conv2D(8, 5, strides=2, activation="relu"),
        layers.Conv2D(8, 3, activation="relu", name="my_intermediate_layer"),
        layers.Conv2D(8, 3, activation="relu"),
    ])
    feature_extractor = keras.Model(inputs=initial_model.inputs,
                                    outputs=[layer.output for layer in initial_model.layers])
    x = np.ones((1, 50, 50, 3), np.float32)
    features = feature_extractor(x)
    assert [tuple(f.shape) for f in features] == [(1, 23, 23, 8), (1, 21, 21, 8), (1, 19, 19, 8)]
    np.testing.assert_allclose(features[-1].numpy(), initial_model(x).numpy(), rtol=1e-6)
    only_mid = keras.Model(inputs=initial_model.inputs,
                           outputs=initial_model.get_layer(name="my_intermediate_layer").output)
    np.testing.assert_allclose(only_mid(x).numpy(), features[1].numpy(), rtol=1e-6)


class CustomDense(layers.Layer):
    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                 initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal",
                                 trainable=True)

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b

    def get_config(self):
        return {"units": self.units}


def test_custom_layer_in_functional_model():
    inputs = keras.Input((4,))
    outputs = CustomDense(10)(inputs)
    model = keras.Model(inputs, outputs)
    assert tuple(model.output.shape) == (None, 10)
    assert model.count_params() == 50
    assert model.layers[1].get_config() == {"units": 10}


def test_graph_errors_are_clear():
    a = keras.Input((3,))
    b = keras.Input((3,))
    out = layers.add([a, b])
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(a, out)
    with pytest.raises(ValueError, match="broadcast"):
        layers.add([keras.Input((3,)), keras.Input((4,))])
    with pytest.raises(ValueError, match="expects 2 inputs"):
        keras.Model([a, b], out)([np.ones((1, 3), np.float32)] * 3)


def test_functional_config_round_trip_with_custom_objects():
    inputs = keras.Input((4,))
    outputs = CustomDense(10)(inputs)
    model = keras.Model(inputs, outputs)
    config = model.get_config()
    with pytest.raises(ValueError, match="custom_objects"):
        keras.Model.from_config(config)
    new_model = keras.Model.from_config(config, custom_objects={"CustomDense": CustomDense})
    assert isinstance(new_model.layers[1], CustomDense)
    assert new_model.count_params() == 50
    new_model.set_weights(model.get_weights())
    x = np.random.default_rng(4).normal(size=(2, 4)).astype("float32")
    np.testing.assert_allclose(new_model(x).numpy(), model(x).numpy(), rtol=1e-6)
