"""Port of the keras.io guide "Transfer learning & fine-tuning"
(https://keras.io/guides/transfer_learning/, keras-team/keras-io guides/transfer_learning.py).

Imports changed only (``import minitf as tf``, ``from minitf import keras``). The guide's base
model is an ImageNet-pretrained Xception and its data the cats-vs-dogs set from
tensorflow_datasets; both need downloads, so the port uses a small randomly initialised
convolutional base built with the functional API (two Conv2D + BatchNormalization + ReLU
blocks) and a synthetic two-class image task (red- or blue-dominated 16x16 images, which flips
and rotations do not change). Everything else follows the guide: the ``weights`` /
``trainable_weights`` / ``non_trainable_weights`` of ``Dense`` and ``BatchNormalization``,
``trainable = False`` moving weights to the non-trainable list, ``trainable`` being recursive,
frozen weights not changing during ``fit``, the freeze / compile / fit workflow with
``base_model(inputs, training=False)`` keeping ``BatchNormalization`` in inference mode (also
after unfreezing), fine-tuning with a low learning rate after recompiling, the data
augmentation and ``Rescaling`` layers in front, and the custom training loop variant. Parameter
counts are those of the small base (computed by hand in the comments).

Note: the guide (and tf.keras 2) says a base model called with ``training=False`` stays in
inference mode after ``base_model.trainable = True``. Keras 3.15 itself does not do this: its
Functional models pass the outer ``training=True`` of ``fit`` down to the nested model, so the
BatchNormalization statistics move during fine-tuning (keras-team/keras#20285). The tests
assert the guide's documented behaviour: ``test_freeze_compile_fit_then_fine_tune`` (its last
part) and ``test_base_called_with_training_false_stays_in_inference_mode`` fail on Keras 3.15.
"""
import numpy as np

import minitf as tf
from minitf import keras
from minitf.keras import layers


def _weight_counts(layer):
    return len(layer.weights), len(layer.trainable_weights), len(layer.non_trainable_weights)


def _summary_text(model):
    lines = []
    model.summary(show_trainable=True, print_fn=lines.append)
    return "\n".join(lines)


def make_base_model():
    """A small stand-in for Xception(include_top=False): 872 parameters, 32 of them the
    batch-norm moving statistics."""
    inputs = keras.Input(shape=(16, 16, 3))
    x = layers.Conv2D(8, 3, padding="same")(inputs)      # 3*3*3*8 + 8 = 224
    x = layers.BatchNormalization()(x)                   # 4 * 8 = 32 (16 non-trainable)
    x = layers.Activation("relu")(x)
    x = layers.Conv2D(8, 3, strides=2, padding="same")(x)  # 3*3*8*8 + 8 = 584
    x = layers.BatchNormalization()(x)                   # 32 (16 non-trainable)
    x = layers.Activation("relu")(x)
    return keras.Model(inputs, x, name="base")


def make_images(n, seed):
    """uint8-range float images; label 1 when the red channel dominates, 0 when blue does."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    images = rng.uniform(0, 80, (n, 16, 16, 3))
    strong = rng.uniform(150, 255, (n, 16, 16))
    images[labels == 1, :, :, 0] = strong[labels == 1]
    images[labels == 0, :, :, 2] = strong[labels == 0]
    return images.astype("float32"), labels.astype("float32").reshape(-1, 1)


def _bn_layers(model):
    return [la for la in model.layers if isinstance(la, layers.BatchNormalization)]


# ---------------------------------------------------------------- trainable / non-trainable

def test_dense_and_batchnorm_weight_lists():
    layer = keras.layers.Dense(3)
    layer.build((None, 4))
    assert _weight_counts(layer) == (2, 2, 0)
    assert [tuple(w.shape) for w in layer.trainable_weights] == [(4, 3), (3,)]

    layer = keras.layers.BatchNormalization()
    layer.build((None, 4))
    assert _weight_counts(layer) == (4, 2, 2)
    # gamma and beta are trained; the moving mean and variance are not
    assert [w is layer.gamma or w is layer.beta for w in layer.trainable_weights] == [True] * 2
    assert {id(w) for w in layer.non_trainable_weights} == {id(layer.moving_mean),
                                                            id(layer.moving_variance)}


def test_trainable_false_moves_weights_to_non_trainable():
    layer = keras.layers.Dense(3)
    layer.build((None, 4))
    layer.trainable = False
    assert _weight_counts(layer) == (2, 0, 2)
    layer.trainable = True
    assert _weight_counts(layer) == (2, 2, 0)


def test_frozen_layer_weights_do_not_change_during_fit():
    layer1 = keras.layers.Dense(3, activation="relu")
    layer2 = keras.layers.Dense(3, activation="sigmoid")
    model = keras.Sequential([keras.Input(shape=(3,)), layer1, layer2])
    layer1.trainable = False
    initial_layer1_weights_values = layer1.get_weights()
    initial_layer2_weights_values = layer2.get_weights()
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(0)
    model.fit(rng.random((2, 3)), rng.random((2, 3)), verbose=0)
    final_layer1_weights_values = layer1.get_weights()
    np.testing.assert_allclose(initial_layer1_weights_values[0], final_layer1_weights_values[0])
    np.testing.assert_allclose(initial_layer1_weights_values[1], final_layer1_weights_values[1])
    # the trainable layer did move (Adam's first step changes every weight by about 1e-3)
    changed = layer2.get_weights()
    assert np.abs(changed[0] - initial_layer2_weights_values[0]).max() > 5e-4
    assert len(model.trainable_weights) == 2 and len(model.non_trainable_weights) == 2


def test_trainable_is_recursive():
    inner_model = keras.Sequential([
        keras.Input(shape=(3,)),
        keras.layers.Dense(3, activation="relu"),
        keras.layers.Dense(3, activation="relu"),
    ])
    model = keras.Sequential([
        keras.Input(shape=(3,)),
        inner_model,
        keras.layers.Dense(3, activation="sigmoid"),
    ])
    model.trainable = False
    assert inner_model.trainable is False
    assert inner_model.layers[0].trainable is False
    assert model.trainable_weights == [] and len(model.non_trainable_weights) == 6
    model.trainable = True
    assert inner_model.layers[1].trainable is True and len(model.trainable_weights) == 6


def test_frozen_batchnorm_runs_in_inference_mode():
    """Keras 3: a BatchNormalization layer with trainable=False normalises with its moving
    statistics and does not update them, even when called with training=True."""
    bn = keras.layers.BatchNormalization(epsilon=1e-3)
    bn.build((None, 3))
    gamma, beta = np.array([1.5, 0.5, 2.0]), np.array([0.1, -0.2, 0.3])
    mean, var = np.array([0.5, -1.0, 2.0]), np.array([4.0, 0.25, 1.0])
    bn.set_weights([gamma, beta, mean, var])
    x = np.random.default_rng(1).normal(size=(8, 3)).astype("float32")
    inference = gamma * (x - mean) / np.sqrt(var + 1e-3) + beta

    bn.trainable = False
    np.testing.assert_allclose(bn(x, training=True).numpy(), inference, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_mean.numpy(), mean)
    np.testing.assert_allclose(bn.moving_variance.numpy(), var)

    bn.trainable = True  # training mode again: batch statistics, and the moving ones move
    batch = gamma * (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3) + beta
    np.testing.assert_allclose(bn(x, training=True).numpy(), batch, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.99 * mean + 0.01 * x.mean(0),
                               rtol=1e-5)


# ---------------------------------------------------------------- the typical workflow

def _build_classifier(base_model):
    data_augmentation = keras.Sequential(
        [layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)])
    scale_layer = keras.layers.Rescaling(scale=1 / 127.5, offset=-1)
    inputs = keras.Input(shape=(16, 16, 3))
    x = data_augmentation(inputs)
    x = scale_layer(x)
    # the base model runs in inference mode, whatever the outer call's training flag
    x = base_model(x, training=False)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    outputs = keras.layers.Dense(1)(x)
    return keras.Model(inputs, outputs)


def test_rescaling_and_augmentation_layers():
    scale_layer = keras.layers.Rescaling(scale=1 / 127.5, offset=-1)
    pixels = np.array([[0.0, 63.75, 127.5, 255.0]], "float32")
    np.testing.assert_allclose(scale_layer(pixels).numpy(), [[-1.0, -0.5, 0.0, 1.0]],
                               atol=1e-6)

    tf.random.set_seed(0)
    flip = layers.RandomFlip("horizontal")
    images = np.random.default_rng(2).uniform(0, 255, (16, 5, 6, 3)).astype("float32")
    flipped = flip(images, training=True).numpy()
    same = [np.array_equal(a, b) for a, b in zip(flipped, images)]
    mirrored = [np.array_equal(a, b[:, ::-1]) for a, b in zip(flipped, images)]
    assert all(s or m for s, m in zip(same, mirrored))  # each image kept or mirrored left-right
    assert any(mirrored) and any(same)

    data_augmentation = keras.Sequential(
        [layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)])
    np.testing.assert_array_equal(data_augmentation(images, training=False).numpy(), images)
    augmented = data_augmentation(images, training=True).numpy()
    assert augmented.shape == images.shape and not np.allclose(augmented, images)


def test_freeze_compile_fit_then_fine_tune():
    tf.random.set_seed(1)
    base_model = make_base_model()
    assert base_model.count_params() == 872
    bn1, bn2 = _bn_layers(base_model)
    # non-default moving statistics, so that inference and training modes differ clearly
    for bn in (bn1, bn2):
        bn.moving_mean.assign(np.full((8,), 0.0, "float32"))
        bn.moving_variance.assign(np.full((8,), 0.25, "float32"))
    base_model.trainable = False

    model = _build_classifier(base_model)
    text = _summary_text(model)
    assert "Total params: 881" in text            # 872 + Dense(8 -> 1) = 9
    assert "Trainable params: 9" in text
    assert "Non-trainable params: 872" in text
    assert len(model.trainable_weights) == 2

    x_train, y_train = make_images(256, seed=3)
    x_val, y_val = make_images(64, seed=4)
    base_before = [w.numpy().copy() for w in base_model.weights]

    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.1),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy()])
    history = model.fit(x_train, y_train, epochs=12, batch_size=32,
                        validation_data=(x_val, y_val), verbose=0)
    assert set(history.history) == {"loss", "binary_accuracy", "val_loss",
                                    "val_binary_accuracy"}
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    assert history.history["val_binary_accuracy"][-1] >= 0.9
    # the frozen base did not change at all: neither its kernels nor its BN statistics
    for before, w in zip(base_before, base_model.weights):
        np.testing.assert_array_equal(before, w.numpy())

    # fine-tuning: unfreeze, recompile with a very low learning rate, train a little
    base_model.trainable = True
    model.compile(optimizer=keras.optimizers.Adam(1e-5),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy()])
    text = _summary_text(model)
    assert "Trainable params: 849" in text        # 224 + 16 + 584 + 16 + 9
    assert "Non-trainable params: 32" in text     # the BN moving statistics
    val_loss_before = model.evaluate(x_val, y_val, verbose=0)[0]
    history = model.fit(x_train, y_train, epochs=1, batch_size=32, verbose=0)
    steps = 256 // 32
    conv_kernel = base_model.layers[1].kernel.numpy()
    delta = np.abs(conv_kernel - base_before[0]).max()
    # Adam moves each weight by at most about lr per step
    assert 0 < delta <= steps * 1e-5 * 1.01
    # base_model was called with training=False: the BN statistics still do not move
    for bn in (bn1, bn2):
        np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros((8,), "float32"))
        np.testing.assert_array_equal(bn.moving_variance.numpy(), np.full((8,), 0.25, "float32"))
    val_loss_after = model.evaluate(x_val, y_val, verbose=0)[0]
    assert abs(val_loss_after - val_loss_before) < 0.05  # a gentle change, not a reset


def test_base_called_with_training_false_stays_in_inference_mode():
    base_model = make_base_model()
    for bn in _bn_layers(base_model):
        bn.moving_mean.assign(np.full((8,), 0.3, "float32"))
        bn.moving_variance.assign(np.full((8,), 2.0, "float32"))
    inputs = keras.Input(shape=(16, 16, 3))
    features = keras.Model(inputs, base_model(inputs, training=False))
    x, _ = make_images(4, seed=5)
    x = x / 127.5 - 1
    inference = base_model(x, training=False).numpy()
    batch_stats = base_model(x, training=True).numpy()
    assert np.abs(inference - batch_stats).max() > 1e-2  # the two modes differ here
    for bn in _bn_layers(base_model):   # (the training call moved them: put them back)
        bn.moving_mean.assign(np.full((8,), 0.3, "float32"))
        bn.moving_variance.assign(np.full((8,), 2.0, "float32"))

    for trainable in (False, True):     # frozen, then unfrozen for fine-tuning
        base_model.trainable = trainable
        np.testing.assert_allclose(features(x, training=True).numpy(), inference,
                                   rtol=1e-5, atol=1e-6)
        for bn in _bn_layers(base_model):
            np.testing.assert_array_equal(bn.moving_mean.numpy(), np.full((8,), 0.3, "float32"))


def test_custom_training_loop_updates_only_the_head():
    tf.random.set_seed(2)
    base_model = make_base_model()
    for bn in _bn_layers(base_model):
        bn.moving_variance.assign(np.full((8,), 0.25, "float32"))
    base_model.trainable = False
    inputs = keras.Input(shape=(16, 16, 3))
    x = keras.layers.Rescaling(scale=1 / 127.5, offset=-1)(inputs)
    x = base_model(x, training=False)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)

    loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)
    optimizer = keras.optimizers.Adam(learning_rate=0.1)
    x_train, y_train = make_images(128, seed=6)
    base_before = [w.numpy().copy() for w in base_model.weights]
    assert len(model.trainable_weights) == 2

    losses = []
    for epoch in range(10):
        for start in range(0, 128, 32):
            inputs_b, targets = x_train[start:start + 32], y_train[start:start + 32]
            with tf.GradientTape() as tape:
                predictions = model(inputs_b)
                loss_value = loss_fn(targets, predictions)
            gradients = tape.gradient(loss_value, model.trainable_weights)
            optimizer.apply_gradients(zip(gradients, model.trainable_weights))
            losses.append(float(loss_value))
    assert np.mean(losses[-4:]) < 0.6 * np.mean(losses[:4])
    for before, w in zip(base_before, base_model.weights):
        np.testing.assert_array_equal(before, w.numpy())
