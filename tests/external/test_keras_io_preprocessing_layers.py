"""Port of keras.io's guide "Working with preprocessing layers"
(https://keras.io/guides/preprocessing_layers/), numeric and integer-categorical parts.

What is covered: `Normalization` (adapt on an array and on a `tf.data` dataset, the learned
mean/variance, given mean/variance, `invert=True`), `Discretization` (`bin_boundaries`, adapt
with `num_bins`), `CategoryEncoding` (`one_hot`, `multi_hot`, `count`), `IntegerLookup` (the
guide's adapt + one-hot example, `vocabulary`, `num_oov_indices`, `mask_token`, `invert`,
`multi_hot`/`count`), `Hashing` followed by `CategoryEncoding` (the hashing trick), preprocessing
inside the model versus in `tf.data` through `dataset.map`, the end-to-end inference model, and
the image data-augmentation `Sequential` (`RandomFlip`, `RandomRotation`) with
`training=True/False`.

Changes: the guide's CIFAR-10 data (numeric-feature normalization and the ResNet50 augmentation
example) is replaced by small synthetic arrays and a small convolutional model (no downloads, no
ResNet50). The string layers (`StringLookup`, `TextVectorization`) and the text examples are
left out: minitf has no string tensors. Expected values that are not computed in numpy here are
TensorFlow 2.21 / Keras 3.15's outputs for the same inputs (marked "TF's value").
"""
import numpy as np

import minitf as tf
from minitf import keras
from minitf.keras import layers


# --- Normalization -------------------------------------------------------------------------

_GUIDE_DATA = np.array([[0.1, 0.2, 0.3], [0.8, 0.9, 1.0], [1.5, 1.6, 1.7]])


def test_normalization_adapt_on_array():
    layer = layers.Normalization()
    layer.adapt(_GUIDE_DATA)
    normalized_data = layer(_GUIDE_DATA)
    # The guide prints "Features mean: -0.00" and "Features std: 1.00".
    assert "%.2f" % normalized_data.numpy().mean() in ("0.00", "-0.00")
    assert "%.2f" % normalized_data.numpy().std() == "1.00"
    assert normalized_data.dtype == tf.float32
    mean = _GUIDE_DATA.mean(axis=0)
    var = _GUIDE_DATA.var(axis=0)
    np.testing.assert_allclose(np.asarray(layer.mean).ravel(), mean, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(layer.variance).ravel(), var, rtol=1e-6)
    np.testing.assert_allclose(normalized_data.numpy(), (_GUIDE_DATA - mean) / np.sqrt(var),
                               rtol=1e-5, atol=1e-6)
    # TF's value: [[-1.2247449]*3, [0]*3, [1.2247449]*3].
    np.testing.assert_allclose(normalized_data.numpy()[0], [-1.2247449] * 3, rtol=1e-6)
    # Keras 3 exposes `mean`/`variance` broadcast to the input's rank: shape (1, 3).
    assert tuple(layer.mean.shape) == (1, 3)
    assert tuple(layer.variance.shape) == (1, 3)


def test_normalization_state_weights():
    layer = layers.Normalization()
    layer.adapt(_GUIDE_DATA)
    # TF's weights: mean (3,) float32, variance (3,) float32, count () int64, none trainable.
    assert [tuple(w.shape) for w in layer.weights] == [(3,), (3,), ()]
    assert [w.dtype for w in layer.weights] == [tf.float32, tf.float32, tf.int64]
    assert layer.trainable_weights == []
    mean, variance, _ = layer.get_weights()
    np.testing.assert_allclose(mean, [0.8, 0.9, 1.0], rtol=1e-6)
    np.testing.assert_allclose(variance, [0.32666665] * 3, rtol=1e-6)


def test_normalization_adapt_on_dataset():
    dataset = tf.data.Dataset.from_tensor_slices(_GUIDE_DATA.astype("float32")).batch(2)
    layer = layers.Normalization()
    layer.adapt(dataset)
    np.testing.assert_allclose(np.asarray(layer.mean).ravel(), [0.8, 0.9, 1.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(layer.variance).ravel(), [0.32666665] * 3,
                               rtol=1e-5)
    out = layer(_GUIDE_DATA.astype("float32")).numpy()
    np.testing.assert_allclose(out.mean(axis=0), 0.0, atol=1e-6)
    np.testing.assert_allclose(out.std(axis=0), 1.0, rtol=1e-5)


def test_normalization_given_mean_variance_and_invert():
    x = np.array([[1.0], [2.0], [3.0]], "float32")
    forward = layers.Normalization(mean=3.0, variance=2.0)
    # TF's value: [[-1.4142135], [-0.70710677], [0.]]
    np.testing.assert_allclose(forward(x).numpy(), [[-1.4142135], [-0.70710677], [0.0]],
                               rtol=1e-6)
    inverse = layers.Normalization(mean=3.0, variance=2.0, invert=True)
    # TF's value: [[4.4142137], [5.8284273], [7.2426405]]
    np.testing.assert_allclose(inverse(x).numpy(), [[4.4142137], [5.8284273], [7.2426405]],
                               rtol=1e-6)
    # invert undoes the forward normalization of the adapted layer.
    adapted = layers.Normalization()
    adapted.adapt(_GUIDE_DATA)
    undo = layers.Normalization(mean=[0.8, 0.9, 1.0], variance=_GUIDE_DATA.var(axis=0),
                                invert=True)
    np.testing.assert_allclose(undo(adapted(_GUIDE_DATA)).numpy(), _GUIDE_DATA, rtol=1e-5,
                               atol=1e-6)


def test_normalization_inside_model_for_numeric_features():
    # The guide's "Normalizing numerical features" (CIFAR-10 flattened pixels) with a small
    # synthetic table whose features have very different offsets and scales.
    rng = np.random.default_rng(0)
    n, d, classes = 600, 12, 3
    scales = rng.uniform(1, 500, d)
    offsets = rng.uniform(-1000, 1000, d)
    z = rng.normal(size=(n, d))
    x_train = (z * scales + offsets).astype("float32")
    w = rng.normal(size=(d, classes))
    y_train = np.argmax(z @ w, axis=1)

    normalizer = layers.Normalization()
    normalizer.adapt(x_train)
    np.testing.assert_allclose(np.asarray(normalizer.mean).ravel(),
                               x_train.mean(0, dtype=np.float64), rtol=1e-4)
    inputs = keras.Input(shape=x_train.shape[1:])
    x = normalizer(inputs)
    outputs = layers.Dense(classes, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    first = model.evaluate(x_train, y_train, verbose=0)[0]
    history = model.fit(x_train, y_train, epochs=10, batch_size=64, verbose=0)
    assert set(history.history) == {"loss", "accuracy"}
    assert history.history["loss"][-1] < first / 3
    assert history.history["accuracy"][-1] > 0.9
    # Normalization's statistics are not trained.
    np.testing.assert_allclose(np.asarray(normalizer.mean).ravel(),
                               x_train.mean(0, dtype=np.float64), rtol=1e-4)


# --- Discretization -----------------------------------------------------------------------

def test_discretization_bin_boundaries():
    x = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])
    layer = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    out = layer(x)
    # TF's value: the index of the bin, each bin closed on the left (as np.digitize).
    np.testing.assert_array_equal(out.numpy(), [[0, 2, 3, 1], [1, 3, 2, 1]])
    np.testing.assert_array_equal(out.numpy(), np.digitize(x, [0.0, 1.0, 2.0]))
    assert out.dtype.is_integer


def test_discretization_adapt_num_bins():
    x = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])
    layer = layers.Discretization(num_bins=4, epsilon=0.01)
    layer.adapt(x)
    # TF's values: boundaries [0.0, 0.5, 1.3], output [[0, 2, 3, 2], [1, 3, 3, 1]].
    np.testing.assert_allclose(layer.bin_boundaries, [0.0, 0.5, 1.3], rtol=1e-6)
    np.testing.assert_array_equal(layer(x).numpy(), [[0, 2, 3, 2], [1, 3, 3, 1]])

    quartiles = layers.Discretization(num_bins=4)
    quartiles.adapt(np.arange(100, dtype="float32"))
    # TF's values: [23.999983, 48.99998, 73.999985]; bins of [0, 24, 25, 49.5, 50, 99].
    np.testing.assert_allclose(quartiles.bin_boundaries, [24.0, 49.0, 74.0], atol=1e-3)
    np.testing.assert_array_equal(
        quartiles(np.array([0.0, 24.0, 25.0, 49.5, 50.0, 99.0])).numpy(), [0, 1, 1, 2, 2, 3])


# --- CategoryEncoding ---------------------------------------------------------------------

def test_category_encoding_modes():
    one_hot = layers.CategoryEncoding(num_tokens=4, output_mode="one_hot")
    out = one_hot([3, 2, 0, 1])
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), np.eye(4)[[3, 2, 0, 1]])

    tokens = [[0, 1], [0, 0], [1, 2], [3, 1]]
    multi_hot = layers.CategoryEncoding(num_tokens=4, output_mode="multi_hot")
    np.testing.assert_array_equal(multi_hot(tokens).numpy(),
                                  [[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]])

    count = layers.CategoryEncoding(num_tokens=4, output_mode="count")
    np.testing.assert_array_equal(count(tokens).numpy(),
                                  [[1, 1, 0, 0], [2, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]])
    weights = np.array([[0.1, 0.2], [0.1, 0.1], [0.2, 0.3], [0.4, 0.2]])
    # TF's value.
    np.testing.assert_allclose(count(tokens, count_weights=weights).numpy(),
                               [[0.1, 0.2, 0, 0], [0.2, 0, 0, 0], [0, 0.2, 0.3, 0],
                                [0, 0.2, 0, 0.4]], rtol=1e-6)


# --- IntegerLookup ------------------------------------------------------------------------

def test_integer_lookup_guide_one_hot_example():
    data = tf.constant([[10], [20], [20], [10], [30], [0]])
    lookup = layers.IntegerLookup(output_mode="one_hot")
    lookup.adapt(data)
    # Sorted by frequency; TF breaks the 10/20 tie as [20, 10]; -1 is the OOV token.
    assert [int(v) for v in lookup.get_vocabulary()] == [-1, 20, 10, 30, 0]
    assert lookup.vocabulary_size() == 5
    test_data = tf.constant([[10], [10], [20], [50], [60], [0]])
    encoded_data = lookup(test_data)
    # The guide's printed tensor.
    np.testing.assert_array_equal(encoded_data.numpy(),
                                  [[0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0],
                                   [1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 1]])

    as_int = layers.IntegerLookup()
    as_int.adapt(data)
    np.testing.assert_array_equal(as_int(test_data).numpy().ravel(), [2, 2, 1, 0, 0, 4])


def test_integer_lookup_vocabulary_oov_mask_and_invert():
    vocab = [12, 36, 1138, 42]
    data = tf.constant([[12, 1138, 42], [42, 1000, 36]])
    layer = layers.IntegerLookup(vocabulary=vocab)
    assert [int(v) for v in layer.get_vocabulary()] == [-1, 12, 36, 1138, 42]
    np.testing.assert_array_equal(layer(data).numpy(), [[1, 3, 4], [4, 0, 2]])

    two_oov = layers.IntegerLookup(vocabulary=vocab, num_oov_indices=2)
    np.testing.assert_array_equal(two_oov(data).numpy(), [[2, 4, 5], [5, 0, 3]])
    # TF's value: an unknown value goes to value mod num_oov_indices.
    np.testing.assert_array_equal(two_oov(tf.constant([1000, 1001, 7, 36])).numpy(),
                                  [0, 1, 1, 3])

    masked = layers.IntegerLookup(vocabulary=vocab, mask_token=0)
    assert [int(v) for v in masked.get_vocabulary()] == [0, -1, 12, 36, 1138, 42]
    np.testing.assert_array_equal(masked(tf.constant([[12, 1138, 42], [42, 1000, 0]])).numpy(),
                                  [[2, 4, 5], [5, 1, 0]])

    inverse = layers.IntegerLookup(vocabulary=vocab, invert=True)
    np.testing.assert_array_equal(inverse(tf.constant([[1, 3, 4], [4, 0, 2]])).numpy(),
                                  [[12, 1138, 42], [42, -1, 36]])


def test_integer_lookup_multi_hot_and_count():
    vocab = [12, 36, 1138, 42]
    multi_hot = layers.IntegerLookup(vocabulary=vocab, output_mode="multi_hot")
    np.testing.assert_array_equal(
        multi_hot(tf.constant([[12, 1138, 42], [42, 1000, 36]])).numpy(),
        [[0, 1, 0, 1, 1], [1, 0, 1, 0, 1]])
    count = layers.IntegerLookup(vocabulary=vocab, output_mode="count")
    np.testing.assert_array_equal(
        count(tf.constant([[12, 1138, 42, 42], [42, 7, 36, 7]])).numpy(),
        [[0, 1, 0, 1, 2], [2, 0, 1, 0, 1]])


# --- Hashing ------------------------------------------------------------------------------

def test_hashing_num_bins():
    layer = layers.Hashing(num_bins=3)
    # TF's value (FarmHash Fingerprint64 of the decimal string, mod 3).
    np.testing.assert_array_equal(layer([[1], [2], [3], [4], [5]]).numpy().ravel(),
                                  [0, 1, 0, 2, 1])
    hasher = layers.Hashing(num_bins=64)
    np.testing.assert_array_equal(
        hasher(np.array([[0], [1], [99999], [12345], [777]])).numpy().ravel(),
        [63, 33, 0, 56, 14])  # TF's value


def test_hashing_trick_for_integer_categorical_feature():
    # The guide: 10,000 random integers in [0, 100000) hashed into 64 bins, multi-hot encoded.
    data = np.random.default_rng(0).integers(0, 100000, size=(10000, 1))
    hasher = layers.Hashing(num_bins=64)
    encoder = layers.CategoryEncoding(num_tokens=64, output_mode="multi_hot")
    hashed = hasher(data)
    encoded_data = encoder(hashed)
    assert tuple(encoded_data.shape) == (10000, 64)  # the guide prints (10000, 64)
    assert encoded_data.dtype == tf.float32
    np.testing.assert_array_equal(encoded_data.numpy().sum(axis=1), 1.0)
    np.testing.assert_array_equal(np.argmax(encoded_data.numpy(), axis=1),
                                  hashed.numpy().ravel())
    # Equal values hash to equal bins; bins are all used for uniform data.
    assert len(np.unique(hashed.numpy())) == 64
    # TF's value: the first ten column sums for this data.
    np.testing.assert_array_equal(encoded_data.numpy().sum(axis=0)[:10],
                                  [161, 166, 150, 140, 152, 155, 157, 164, 173, 126])


# --- Preprocessing inside the model vs in tf.data ----------------------------------------

def _numeric_task(seed=1, n=256, d=4):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, d))
    x = (z * [1.0, 10.0, 100.0, 1000.0] + [5.0, -50.0, 500.0, 3000.0]).astype("float32")
    y = (z @ np.array([1.0, -2.0, 0.5, 1.5]) > 0).astype("float32")
    return x, y


def test_preprocessing_in_tf_data_with_dataset_map():
    x, y = _numeric_task()
    preprocessing_layer = layers.Normalization()
    preprocessing_layer.adapt(x)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)
    dataset = dataset.map(lambda x, y: (preprocessing_layer(x), y))
    dataset = dataset.prefetch(tf.data.AUTOTUNE)
    mean, var = x.astype(np.float64).mean(0), x.astype(np.float64).var(0)
    batches = list(dataset)
    assert len(batches) == 8
    xb, yb = batches[0]
    assert tuple(xb.shape) == (32, 4)
    np.testing.assert_allclose(xb.numpy(), (x[:32] - mean) / np.sqrt(var), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_array_equal(yb.numpy(), y[:32])

    model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy",
                  metrics=["accuracy"])
    first = model.evaluate(dataset, verbose=0)[0]
    history = model.fit(dataset, epochs=10, verbose=0)
    assert history.history["loss"][-1] < first / 2
    assert history.history["accuracy"][-1] > 0.9


def test_end_to_end_inference_model_includes_preprocessing():
    x, y = _numeric_task(seed=2)
    preprocessing_layer = layers.Normalization()
    preprocessing_layer.adapt(x)
    training_model = keras.Sequential([keras.Input(shape=(4,)), layers.Dense(8, "relu"),
                                       layers.Dense(1, activation="sigmoid")])
    training_model.compile(optimizer="adam", loss="binary_crossentropy")
    training_model.fit(preprocessing_layer(x), y, epochs=2, batch_size=64, verbose=0)

    inputs = keras.Input(shape=(4,))
    x_in = preprocessing_layer(inputs)
    outputs = training_model(x_in)
    inference_model = keras.Model(inputs, outputs)
    raw = x[:16]
    np.testing.assert_allclose(inference_model.predict(raw, verbose=0),
                               training_model.predict(preprocessing_layer(raw), verbose=0),
                               rtol=1e-5, atol=1e-6)
    # The inference model owns the normalization's state plus the trained weights.
    assert inference_model.count_params() == 4 + 4 + 1 + (4 * 8 + 8) + (8 + 1)


# --- Image data augmentation --------------------------------------------------------------

def _images(n=4, size=16, seed=0):
    return np.random.default_rng(seed).uniform(0, 255, (n, size, size, 3)).astype("float32")


def test_data_augmentation_training_flag():
    tf.random.set_seed(0)
    data_augmentation = keras.Sequential([
        layers.RandomFlip("horizontal"),
        layers.RandomRotation(0.1),
    ])
    images = _images()
    # Inference: the identity.
    np.testing.assert_array_equal(data_augmentation(images, training=False).numpy(), images)
    augmented = data_augmentation(images, training=True).numpy()
    assert augmented.shape == images.shape
    assert not np.allclose(augmented, images)
    # Rotations keep the values within the input's range (bilinear interpolation, reflect).
    assert augmented.min() >= -1e-3 and augmented.max() <= 255 + 1e-3


def test_random_flip_horizontal_flips_whole_images():
    tf.random.set_seed(1)
    flip = layers.RandomFlip("horizontal")
    images = _images(n=16)
    out = flip(images, training=True).numpy()
    mirrored = images[:, :, ::-1, :]
    flipped = [np.array_equal(o, m) for o, m in zip(out, mirrored)]
    kept = [np.array_equal(o, i) for o, i in zip(out, images)]
    assert all(f or k for f, k in zip(flipped, kept))
    assert any(flipped) and any(kept)  # 16 fair coins: both outcomes occur
    np.testing.assert_array_equal(flip(images, training=False).numpy(), images)


def test_random_rotation_keeps_center_pixel():
    tf.random.set_seed(2)
    rotation = layers.RandomRotation(0.1)
    # An odd-sized image rotates about the center of its middle pixel.
    image = np.zeros((1, 9, 9, 1), "float32")
    image[0, 4, 4, 0] = 1.0
    image[0, 4, :, 0] += 0.5
    out = rotation(image, training=True).numpy()
    np.testing.assert_allclose(out[0, 4, 4, 0], 1.5, atol=1e-5)
    assert not np.allclose(out, image)


def test_augmentation_in_model_is_inactive_at_inference():
    # The guide's model: augmentation, Rescaling(1/255), then a classifier (a small convnet in
    # place of ResNet50 trained on CIFAR-10).
    tf.random.set_seed(3)
    input_shape, classes = (16, 16, 3), 3
    data_augmentation = keras.Sequential([
        layers.RandomFlip("horizontal"),
        layers.RandomRotation(0.1),
    ])
    inputs = keras.Input(shape=input_shape)
    x = data_augmentation(inputs)
    x = layers.Rescaling(1.0 / 255)(x)
    x = layers.Conv2D(8, 3, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(classes)(x)
    model = keras.Model(inputs, outputs)
    images = _images(n=8, seed=4)
    p1 = model.predict(images, verbose=0)
    p2 = model.predict(images, verbose=0)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_allclose(model(images, training=False).numpy(), p1, rtol=1e-5,
                               atol=1e-6)
    # training=True draws new augmentations on each call.
    t1 = model(images, training=True).numpy()
    t2 = model(images, training=True).numpy()
    assert not np.allclose(t1, t2)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(images, np.arange(8) % classes, epochs=2, batch_size=4, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()
