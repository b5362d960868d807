"""Port of TensorFlow's tutorial "Data augmentation"
(https://www.tensorflow.org/tutorials/images/data_augmentation).

The cells run in order, unchanged except:
- the tf_flowers dataset (`tfds.load`, downloaded) is replaced by 20 synthetic random RGB
  images of 64x48 pixels (uint8) with labels 0..4, split 16/2/2 with `take`/`skip` as the
  tutorial's `train[:80%]`, `train[80%:90%]`, `train[90%:]`; `num_classes` is 5 as for
  tf_flowers, and `get_label_name` looks the name up in tf_flowers' label list (the tutorial
  uses `metadata.features['label'].int2str`). To keep the test fast `IMG_SIZE` is 30 (180 in the tutorial), `batch_size` is 8
  (32), the models train for 2 and 1 epochs (5), the crop size is [40, 30, 3] ([210, 300, 3]
  for the 333x500 flower photo) and `fit`/`evaluate` run with `verbose=0`;
- plotting (`plt.imshow`, `visualize`) is replaced by assertions: random results are checked for
  their properties (shape, dtype, range, determinism for equal seeds, what the op does, checked
  against numpy), deterministic results against TensorFlow 2.21's values ("TF's value");
- the tutorial redefines `resize_and_rescale` as a function in its last part; here that function
  is `resize_and_rescale_fn`, so that the Keras model of the same name stays usable.

The cell that puts the already-called `resize_and_rescale` and `data_augmentation` models into
a new `Sequential` runs in minitf; in TF 2.21 (Keras 3) it raises, because calling
`resize_and_rescale` on the unbatched image built it for shape (64, 48, 3) and
`data_augmentation` for (1, 64, 48, 3), so the new model's layers no longer fit together.
"""
import numpy as np

import minitf as tf
from minitf.keras import layers


# --- the data (tf_flowers stand-in) --------------------------------------------------------

_IMAGES = np.random.RandomState(0).randint(0, 256, (20, 64, 48, 3)).astype(np.uint8)
_LABELS = (np.arange(20) % 5).astype(np.int64)
_LABEL_NAMES = ['dandelion', 'daisy', 'tulips', 'sunflowers', 'roses']


def _load():
    """``(train_ds, val_ds, test_ds)`` as ``tfds.load(..., as_supervised=True)`` returns them."""
    full = tf.data.Dataset.from_tensor_slices((_IMAGES, _LABELS))
    return full.take(16), full.skip(16).take(2), full.skip(18)


num_classes = 5
get_label_name = _LABEL_NAMES.__getitem__
IMG_SIZE = 30
batch_size = 8
AUTOTUNE = tf.data.AUTOTUNE

resize_and_rescale = tf.keras.Sequential([
    layers.Resizing(IMG_SIZE, IMG_SIZE),
    layers.Rescaling(1./255)
])

data_augmentation = tf.keras.Sequential([
    layers.RandomFlip("horizontal_and_vertical"),
    layers.RandomRotation(0.2),
])


def _first_image():
    train_ds, _, _ = _load()
    image, label = next(iter(train_ds))
    return image, label


# --- "Use Keras preprocessing layers" ------------------------------------------------------

def test_dataset_and_first_image():
    image, label = _first_image()
    assert image.dtype == tf.uint8 and image.shape == (64, 48, 3)
    assert label.dtype == tf.int64 and get_label_name(label) == 'dandelion'
    np.testing.assert_array_equal(image.numpy(), _IMAGES[0])
    train_ds, val_ds, test_ds = _load()
    assert [sum(1 for _ in ds) for ds in (train_ds, val_ds, test_ds)] == [16, 2, 2]


def test_resize_and_rescale():
    image, _ = _first_image()
    result = resize_and_rescale(image)
    assert result.dtype == tf.float32 and result.shape == (IMG_SIZE, IMG_SIZE, 3)
    # TF's values: "Min and max pixel values: 0.032078788 0.9563397", sum 1354.5192.
    np.testing.assert_allclose([result.numpy().min(), result.numpy().max()],
                               [0.032078788, 0.9563397], atol=1e-6)
    np.testing.assert_allclose(result.numpy().sum(), 1354.5192, rtol=1e-5)
    np.testing.assert_allclose(result.numpy()[0, :3, 0], [0.720706, 0.363974, 0.283203],
                               atol=2e-6)
    np.testing.assert_allclose(result.numpy()[17, 11], [0.265294, 0.84425, 0.377123],
                               atol=2e-6)


def _is_dihedral_flip(out, image):
    return any(np.array_equal(out, f) for f in
               (image, image[::-1], image[:, ::-1], image[::-1, ::-1]))


def test_data_augmentation_layers():
    image, _ = _first_image()
    # Add the image to a batch.
    image = tf.cast(tf.expand_dims(image, 0), tf.float32)
    outputs = []
    for i in range(9):
        augmented_image = data_augmentation(image)
        assert augmented_image.shape == (1, 64, 48, 3)
        assert augmented_image.dtype == tf.float32
        outputs.append(augmented_image.numpy())
    # Bilinear resampling with reflected borders stays in the image's range.
    assert all(o.min() >= 0.0 and o.max() <= 255.0 for o in outputs)
    assert len({o.tobytes() for o in outputs}) == 9
    # Outside training the layers pass the image through.
    np.testing.assert_array_equal(data_augmentation(image, training=False).numpy(),
                                  image.numpy())
    # RandomFlip alone: one of the four flips of the image.
    flip = layers.RandomFlip("horizontal_and_vertical")
    for _ in range(4):
        assert _is_dihedral_flip(flip(image).numpy()[0], image.numpy()[0])


def test_preprocessing_layers_inside_the_model():
    image, _ = _first_image()
    image = tf.cast(tf.expand_dims(image, 0), tf.float32)
    resize_and_rescale(image[0])    # called on one image first, as in the tutorial
    model = tf.keras.Sequential([
        # Add the preprocessing layers you created earlier.
        resize_and_rescale,
        data_augmentation,
        layers.Conv2D(16, 3, padding='same', activation='relu'),
        layers.MaxPooling2D(),
        # Rest of your model.
    ])
    out = model(image)
    assert out.shape == (1, IMG_SIZE // 2, IMG_SIZE // 2, 16)
    assert out.numpy().min() >= 0.0


def prepare(ds, shuffle=False, augment=False):
    # Resize and rescale all datasets.
    ds = ds.map(lambda x, y: (resize_and_rescale(x), y),
                num_parallel_calls=AUTOTUNE)

    if shuffle:
        ds = ds.shuffle(1000)

    # Batch all datasets.
    ds = ds.batch(batch_size)

    # Use data augmentation only on the training set.
    if augment:
        ds = ds.map(lambda x, y: (data_augmentation(x, training=True), y),
                    num_parallel_calls=AUTOTUNE)

    # Use buffered prefetching on all datasets.
    return ds.prefetch(buffer_size=AUTOTUNE)


def _small_model():
    model = tf.keras.Sequential([
        layers.Conv2D(16, 3, padding='same', activation='relu'),
        layers.MaxPooling2D(),
        layers.Conv2D(32, 3, padding='same', activation='relu'),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, padding='same', activation='relu'),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(128, activation='relu'),
        layers.Dense(num_classes)
    ])
    model.compile(optimizer='adam',
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=['accuracy'])
    return model


def test_preprocessing_layers_in_dataset_map_and_training():
    train_ds, val_ds, test_ds = _load()
    aug_ds = train_ds.map(
        lambda x, y: (resize_and_rescale(x, training=True), y))
    assert aug_ds.element_spec == (tf.TensorSpec((IMG_SIZE, IMG_SIZE, 3), tf.float32),
                                   tf.TensorSpec((), tf.int64))

    train_ds = prepare(train_ds, shuffle=True, augment=True)
    val_ds = prepare(val_ds)
    test_ds = prepare(test_ds)
    batched_spec = (tf.TensorSpec((None, IMG_SIZE, IMG_SIZE, 3), tf.float32),
                    tf.TensorSpec((None,), tf.int64))
    assert train_ds.element_spec == batched_spec and val_ds.element_spec == batched_spec
    batches = list(train_ds)
    assert [tuple(x.shape) for x, _ in batches] == [(8, IMG_SIZE, IMG_SIZE, 3)] * 2
    assert all(0.0 <= x.numpy().min() and x.numpy().max() <= 1.0 for x, _ in batches)
    assert sorted(np.concatenate([y.numpy() for _, y in batches]).tolist()) == \
        sorted(_LABELS[:16].tolist())

    model = _small_model()
    epochs = 2
    history = model.fit(
        train_ds,
        validation_data=val_ds,
        epochs=epochs,
        verbose=0,
    )
    assert sorted(history.history) == ['accuracy', 'loss', 'val_accuracy', 'val_loss']
    assert len(history.history['loss']) == epochs
    # Five classes, logits near zero at the start: a loss near log(5).
    assert abs(history.history['loss'][0] - np.log(5)) < 0.5
    loss, acc = model.evaluate(test_ds, verbose=0)
    assert np.isfinite(loss) and acc in (0.0, 0.5, 1.0)


# --- "Custom data augmentation" ------------------------------------------------------------

def random_invert_img(x, p=0.5):
    if tf.random.uniform([]) < p:
        x = (255-x)
    else:
        x
    return x


def random_invert(factor=0.5):
    return layers.Lambda(lambda x: random_invert_img(x, factor))


class RandomInvert(layers.Layer):
    def __init__(self, factor=0.5, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return random_invert_img(x)


def test_custom_augmentation_layers():
    image, _ = _first_image()
    image = tf.cast(tf.expand_dims(image, 0), tf.float32)
    tf.random.set_seed(7)
    invert_layer = random_invert()
    inverted = 0
    for i in range(20):
        augmented_image = invert_layer(image).numpy()
        assert augmented_image.shape == (1, 64, 48, 3)
        if np.array_equal(augmented_image, 255 - image.numpy()):
            inverted += 1
        else:
            np.testing.assert_array_equal(augmented_image, image.numpy())
    assert 0 < inverted < 20
    out = RandomInvert()(image)[0].numpy()
    assert out.shape == (64, 48, 3)
    assert np.array_equal(out, image.numpy()[0]) or np.array_equal(out, 255 - image.numpy()[0])
    # p=1 always inverts, p=0 never does.
    np.testing.assert_array_equal(random_invert(1.0)(image).numpy(), 255 - image.numpy())
    np.testing.assert_array_equal(random_invert(0.0)(image).numpy(), image.numpy())


# --- "Using tf.image" ----------------------------------------------------------------------

def _to_uint8(x):
    """TF's float -> uint8 `convert_image_dtype`: scale by 255.5 and saturate-cast."""
    return np.clip(np.floor(x * np.float32(255.5)), 0, 255).astype(np.uint8)


def test_tf_image_deterministic_ops():
    image, label = _first_image()
    pixels = image.numpy()

    flipped = tf.image.flip_left_right(image)
    np.testing.assert_array_equal(flipped.numpy(), pixels[:, ::-1])

    grayscaled = tf.image.rgb_to_grayscale(image)
    assert grayscaled.dtype == tf.uint8 and grayscaled.shape == (64, 48, 1)
    gray = tf.squeeze(grayscaled)
    assert gray.shape == (64, 48)
    # TF's values.
    np.testing.assert_array_equal(gray.numpy()[:2, :6], [[92, 125, 120, 103, 69, 132],
                                                         [153, 177, 94, 136, 131, 100]])
    assert int(gray.numpy().astype(np.int64).sum()) == 392589
    weights = np.float32([0.2989, 0.5870, 0.1140])
    np.testing.assert_array_equal(
        gray.numpy(), _to_uint8((pixels.astype(np.float32) / np.float32(255)) @ weights))

    saturated = tf.image.adjust_saturation(image, 3)
    assert saturated.dtype == tf.uint8 and saturated.shape == (64, 48, 3)
    # TF's values.
    assert saturated.numpy()[0, :3].tolist() == [[172, 0, 96], [170, 0, 251], [195, 98, 0]]
    assert int(saturated.numpy().astype(np.int64).sum()) == 907374

    bright = tf.image.adjust_brightness(image, 0.4)
    assert bright.dtype == tf.uint8
    # TF's values.
    assert bright.numpy()[0, :3].tolist() == [[255, 149, 219], [255, 169, 255],
                                              [255, 205, 111]]
    assert int(bright.numpy().astype(np.int64).sum()) == 1926266
    np.testing.assert_array_equal(
        bright.numpy(), _to_uint8(pixels.astype(np.float32) / np.float32(255) + np.float32(0.4)))

    cropped = tf.image.central_crop(image, central_fraction=0.5)
    assert cropped.shape == (32, 24, 3)
    np.testing.assert_array_equal(cropped.numpy(), pixels[16:48, 12:36])

    rotated = tf.image.rot90(image)
    assert rotated.shape == (48, 64, 3)
    np.testing.assert_array_equal(rotated.numpy(), np.rot90(pixels))


def _window_offsets(window, pixels):
    """The (row, column) offsets at which ``window`` is a crop of ``pixels``."""
    h, w = window.shape[:2]
    return [(i, j) for i in range(pixels.shape[0] - h + 1) for j in range(pixels.shape[1] - w + 1)
            if np.array_equal(pixels[i:i + h, j:j + w], window)]


def test_tf_image_stateless_random_ops():
    image, label = _first_image()
    pixels = image.numpy().astype(np.int64)

    deltas = []
    for i in range(3):
        seed = (i, 0)  # tuple of size (2,)
        stateless_random_brightness = tf.image.stateless_random_brightness(
            image, max_delta=0.95, seed=seed)
        out = stateless_random_brightness.numpy()
        assert stateless_random_brightness.dtype == tf.uint8 and out.shape == (64, 48, 3)
        again = tf.image.stateless_random_brightness(image, max_delta=0.95, seed=seed)
        np.testing.assert_array_equal(again.numpy(), out)
        # One delta for the whole image: away from 0 and 255 every pixel moves alike
        # (up to the rounding of the uint8 conversion).
        inside = (out > 0) & (out < 255)
        shift = out.astype(np.int64)[inside] - pixels[inside]
        assert inside.any() and shift.max() - shift.min() <= 1
        assert abs(shift.mean()) <= 0.95 * 255 + 1
        deltas.append(shift.mean())
    assert len(set(np.round(deltas, 3))) == 3

    for i in range(3):
        seed = (i, 0)  # tuple of size (2,)
        stateless_random_contrast = tf.image.stateless_random_contrast(
            image, lower=0.1, upper=0.9, seed=seed)
        out = stateless_random_contrast.numpy().astype(np.float64)
        assert stateless_random_contrast.dtype == tf.uint8 and out.shape == (64, 48, 3)
        # (x - mean) * factor + mean per channel: every channel's spread scales by the
        # same factor in [0.1, 0.9).
        ratios = out.std(axis=(0, 1)) / pixels.std(axis=(0, 1))
        assert ratios.max() - ratios.min() < 0.01
        assert 0.1 - 0.01 <= ratios.mean() <= 0.9 + 0.01
        np.testing.assert_allclose(out.mean(axis=(0, 1)), pixels.mean(axis=(0, 1)), atol=1.0)

    offsets = []
    for i in range(3):
        seed = (i, 0)  # tuple of size (2,)
        stateless_random_crop = tf.image.stateless_random_crop(
            image, size=[40, 30, 3], seed=seed)
        assert stateless_random_crop.dtype == tf.uint8
        assert stateless_random_crop.shape == (40, 30, 3)
        found = _window_offsets(stateless_random_crop.numpy(), image.numpy())
        assert len(found) == 1
        offsets.append(found[0])
        again = tf.image.stateless_random_crop(image, size=[40, 30, 3], seed=seed)
        np.testing.assert_array_equal(again.numpy(), stateless_random_crop.numpy())
    assert len(set(offsets)) > 1


# --- "Apply augmentation to a dataset" -----------------------------------------------------

def resize_and_rescale_fn(image, label):
    image = tf.cast(image, tf.float32)
    image = tf.image.resize(image, [IMG_SIZE, IMG_SIZE])
    image = (image / 255.0)
    return image, label


def augment(image_label, seed):
    image, label = image_label
    image, label = resize_and_rescale_fn(image, label)
    image = tf.image.resize_with_crop_or_pad(image, IMG_SIZE + 6, IMG_SIZE + 6)
    # Make a new seed.
    new_seed = tf.random.experimental.stateless_split(seed, num=1)[0, :]
    # Random crop back to the original size.
    image = tf.image.stateless_random_crop(
        image, size=[IMG_SIZE, IMG_SIZE, 3], seed=seed)
    # Random brightness.
    image = tf.image.stateless_random_brightness(
        image, max_delta=0.5, seed=new_seed)
    image = tf.clip_by_value(image, 0, 1)
    return image, label


def test_augment_function():
    image, label = _first_image()
    seed = tf.constant([3, 0], tf.int64)
    new_seed = tf.random.experimental.stateless_split(seed, num=1)
    assert new_seed.shape == (1, 2) and new_seed.dtype == tf.int64
    out, out_label = augment((image, label), seed)
    assert out.shape == (IMG_SIZE, IMG_SIZE, 3) and out.dtype == tf.float32
    assert int(out_label) == 0
    assert 0.0 <= out.numpy().min() and out.numpy().max() <= 1.0
    np.testing.assert_array_equal(augment((image, label), seed)[0].numpy(), out.numpy())
    assert not np.array_equal(augment((image, label), tf.constant([4, 0], tf.int64))[0].numpy(),
                              out.numpy())


def test_augmentation_with_counter_and_generator():
    (train_datasets, val_ds, test_ds) = _load()

    # Create a `Counter` object and `Dataset.zip` it together with the training set.
    counter = tf.data.experimental.Counter()
    train_ds = tf.data.Dataset.zip((train_datasets, (counter, counter)))
    assert train_ds.element_spec == (
        (tf.TensorSpec((64, 48, 3), tf.uint8), tf.TensorSpec((), tf.int64)),
        (tf.TensorSpec((), tf.int64), tf.TensorSpec((), tf.int64)))

    train_ds = (
        train_ds
        .shuffle(1000)
        .map(augment, num_parallel_calls=AUTOTUNE)
        .batch(batch_size)
        .prefetch(AUTOTUNE)
    )
    val_ds = (
        val_ds
        .map(resize_and_rescale_fn, num_parallel_calls=AUTOTUNE)
        .batch(batch_size)
        .prefetch(AUTOTUNE)
    )
    test_ds = (
        test_ds
        .map(resize_and_rescale_fn, num_parallel_calls=AUTOTUNE)
        .batch(batch_size)
        .prefetch(AUTOTUNE)
    )
    batched_spec = (tf.TensorSpec((None, IMG_SIZE, IMG_SIZE, 3), tf.float32),
                    tf.TensorSpec((None,), tf.int64))
    assert train_ds.element_spec == batched_spec and test_ds.element_spec == batched_spec
    x, y = next(iter(train_ds))
    assert x.shape == (batch_size, IMG_SIZE, IMG_SIZE, 3)
    assert 0.0 <= x.numpy().min() and x.numpy().max() <= 1.0
    x_val, _ = next(iter(val_ds))
    np.testing.assert_allclose(x_val.numpy()[0], resize_and_rescale(_IMAGES[16]).numpy(),
                               atol=1e-6)

    # Create a generator.
    rng = tf.random.Generator.from_seed(123, alg='philox')

    # Create a wrapper function for updating seeds.
    def f(x, y):
        seed = rng.make_seeds(1)[:, 0]
        image, label = augment((x, y), seed)
        return image, label

    assert rng.make_seeds(1).shape == (2, 1)
    train_ds = (
        train_datasets
        .shuffle(1000)
        .map(f, num_parallel_calls=AUTOTUNE)
        .batch(batch_size)
        .prefetch(AUTOTUNE)
    )
    assert train_ds.element_spec == batched_spec
    first, second = (np.concatenate([x.numpy() for x, _ in train_ds]) for _ in range(2))
    assert first.shape == (16, IMG_SIZE, IMG_SIZE, 3)
    assert not np.array_equal(first, second)     # new seeds on every pass

    model = _small_model()
    history = model.fit(train_ds, validation_data=val_ds, epochs=1, verbose=0)
    assert np.isfinite(history.history['loss'][0])
    loss, acc = model.evaluate(test_ds, verbose=0)
    assert np.isfinite(loss) and 0.0 <= acc <= 1.0
