"""Keras 3's image preprocessing / augmentation layers against closed forms and independent
numpy computations (keras.io image augmentation pages: factor conventions, "a positive value
means rotating counter clock-wise", negative zoom zooms in, positive translation moves the
content down / right, RandomCrop's centred aspect-ratio crop at inference)."""
import math

import numpy as np
import pytest

import minitf as tf
from minitf.image_transform import affine_transform

L = tf.keras.layers
RNG = np.random.default_rng(5)
F32 = np.float32

RANDOM_LAYERS = [
    lambda: L.RandomCrop(5, 6), lambda: L.RandomFlip(), lambda: L.RandomRotation(0.3),
    lambda: L.RandomZoom(0.3, 0.2), lambda: L.RandomTranslation(0.3, 0.3),
    lambda: L.RandomContrast(0.5), lambda: L.RandomBrightness(0.3)]


def _images(n=4, h=8, w=8, c=3):
    return RNG.uniform(0, 255, (n, h, w, c)).astype(F32)


def _half_pixel_resize(img, out_h, out_w):
    """TF 2's half-pixel bilinear resize of one (H, W, C) image, as loops."""
    h, w = img.shape[:2]
    out = np.zeros((out_h, out_w, img.shape[2]))

    def taps(o, n_in, n_out):
        c = (o + 0.5) * n_in / n_out - 0.5
        lo = math.floor(c)
        return max(lo, 0), min(math.ceil(c), n_in - 1), c - lo

    for i in range(out_h):
        y0, y1, fy = taps(i, h, out_h)
        for j in range(out_w):
            x0, x1, fx = taps(j, w, out_w)
            top = img[y0, x0] * (1 - fx) + img[y0, x1] * fx
            bottom = img[y1, x0] * (1 - fx) + img[y1, x1] * fx
            out[i, j] = top * (1 - fy) + bottom * fy
    return out


# --- resizing and cropping -----------------------------------------------------------------

def test_resizing_matches_half_pixel_bilinear_and_crops_or_pads_to_aspect_ratio():
    x = _images(2, 6, 9)
    got = L.Resizing(4, 3)(x)
    assert got.shape == (2, 4, 3, 3) and got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy()[1], _half_pixel_resize(x[1], 4, 3), rtol=1e-5)
    # 6 x 9 to a square: the centred 6 x 6 window (columns 1..6), then resized
    cropped = L.Resizing(3, 3, crop_to_aspect_ratio=True)(x)
    np.testing.assert_allclose(cropped.numpy()[0], _half_pixel_resize(x[0, :, 1:7], 3, 3),
                               rtol=1e-5)
    # padded to 9 x 9 (rows 1..6 hold the image) with fill_value, then resized
    padded = L.Resizing(3, 3, pad_to_aspect_ratio=True, fill_value=7.0)(x)
    canvas = np.full((9, 9, 3), 7.0)
    canvas[1:7] = x[0]
    np.testing.assert_allclose(padded.numpy()[0], _half_pixel_resize(canvas, 3, 3), rtol=1e-5)
    nearest = L.Resizing(3, 3, interpolation="nearest")(x[0].astype(np.uint8))
    assert nearest.dtype == tf.float32      # integer images come out in the compute dtype
    np.testing.assert_array_equal(nearest.numpy(), x[0].astype(np.uint8)[[1, 3, 5]][:, [1, 4, 7]])


def test_center_crop_slices_or_resizes_small_images():
    x = _images(2, 8, 7)
    np.testing.assert_array_equal(L.CenterCrop(4, 3)(x).numpy(), x[:, 2:6, 2:5])
    np.testing.assert_array_equal(L.CenterCrop(5, 4)(x[0]).numpy(), x[0, 1:6, 1:5])
    # taller than the image: the centred 2:1 window (8 x 4, columns 1..4), resized to 10 x 5
    small = L.CenterCrop(10, 5)(x)
    assert small.shape == (2, 10, 5, 3)
    np.testing.assert_allclose(small.numpy()[1], _half_pixel_resize(x[1, :, 1:5], 10, 5),
                               rtol=1e-5)


def test_random_crop_is_a_window_when_training_and_a_centred_resize_at_inference():
    x = _images(3, 9, 10)
    tf.random.set_seed(0)
    offsets = set()
    layer = L.RandomCrop(5, 6)
    for _ in range(8):
        out = layer(x).numpy()
        assert out.shape == (3, 5, 6, 3)
        hits = [(i, j) for i in range(5) for j in range(5)
                if np.array_equal(out, x[:, i:i + 5, j:j + 6])]
        assert len(hits) == 1          # one location for the whole batch, as Keras documents
        offsets.add(hits[0])
    assert len(offsets) > 1
    # inference: the largest 5:6 window (9 x 10 -> 8 x 10 from row 0), resized to 5 x 6
    inference = layer(x, training=False).numpy()
    np.testing.assert_allclose(inference[2], _half_pixel_resize(x[2, 0:8], 5, 6), rtol=1e-5)
    # training on an image smaller than the target also resizes
    assert layer(x[:, :4, :4]).shape == (3, 5, 6, 3)


# --- geometric augmentations -------------------------------------------------------------

def test_random_flip_flips_each_image_independently():
    x = np.repeat(_images(1), 64, axis=0)
    tf.random.set_seed(1)
    out = L.RandomFlip()(x).numpy()
    variants = [x[0], x[0, :, ::-1], x[0, ::-1], x[0, ::-1, ::-1]]
    kinds = [next(k for k, v in enumerate(variants) if np.array_equal(img, v)) for img in out]
    assert set(kinds) == {0, 1, 2, 3}
    horizontal = L.RandomFlip("horizontal")(x).numpy()
    assert all(np.array_equal(img, x[0]) or np.array_equal(img, x[0, :, ::-1])
               for img in horizontal)
    vertical = L.RandomFlip("vertical")(x[0]).numpy()     # a single image
    assert np.array_equal(vertical, x[0]) or np.array_equal(vertical, x[0, ::-1])


@pytest.mark.parametrize("fill_mode", ["reflect", "constant"])
def test_rotation_by_a_quarter_turn_is_rot90_counter_clockwise(fill_mode):
    x = _images(2, 6, 6)
    left = L.RandomRotation((0.25, 0.25), fill_mode=fill_mode)(x).numpy()
    np.testing.assert_allclose(left, np.rot90(x, k=1, axes=(1, 2)), atol=1e-3)
    right = L.RandomRotation((-0.25, -0.25), interpolation="nearest")(x[0]).numpy()
    np.testing.assert_array_equal(right, np.rot90(x[0], k=-1))


def test_random_rotation_draws_one_angle_per_image_in_range():
    x = _images(5, 7, 9)
    tf.random.set_seed(3)
    out = L.RandomRotation(0.1, fill_mode="nearest")(x).numpy()
    tf.random.set_seed(3)
    angles = tf.random.uniform((5,), -0.1 * 2 * math.pi, 0.1 * 2 * math.pi).numpy()
    assert len(set(angles.tolist())) == 5
    for i, a in enumerate(angles):
        c, s = math.cos(a), math.sin(a)
        # rotate about the centre ((W - 1) / 2, (H - 1) / 2)
        t = [c, -s, 4 - (c * 4 - s * 3), s, c, 3 - (s * 4 + c * 3), 0, 0]
        want = affine_transform(x[i], np.array(t, F32), fill_mode="nearest").numpy()
        np.testing.assert_allclose(out[i], want, rtol=1e-4, atol=1e-2)


def test_zoom_in_and_out_match_scaling_about_the_centre():
    x = _images(2, 8, 6)
    # zoom in by half: output (x, y) samples input (x / 2 + 1.25, y / 2 + 1.75)
    zoomed_in = L.RandomZoom((-0.5, -0.5), fill_mode="constant")(x).numpy()
    want = affine_transform(x, np.array([0.5, 0, 1.25, 0, 0.5, 1.75, 0, 0], F32)).numpy()
    np.testing.assert_allclose(zoomed_in, want, rtol=1e-6)
    # pixel (0, 0) by hand: x = 1.25 between columns 1 and 2, y = 1.75 between rows 1 and 2
    corner = (0.25 * (0.75 * x[:, 1, 1] + 0.25 * x[:, 1, 2])
              + 0.75 * (0.75 * x[:, 2, 1] + 0.25 * x[:, 2, 2]))
    np.testing.assert_allclose(zoomed_in[:, 0, 0], corner, rtol=1e-5)
    # random per-image zooms, height and width drawn separately (height first)
    tf.random.set_seed(4)
    out = L.RandomZoom((0.1, 0.4), (-0.3, 0.2), fill_mode="wrap")(x).numpy()
    tf.random.set_seed(4)
    zh = tf.random.uniform((2,), 1.1, 1.4).numpy()
    zw = tf.random.uniform((2,), 0.7, 1.2).numpy()
    for i in range(2):
        t = [zw[i], 0, 2.5 * (1 - zw[i]), 0, zh[i], 3.5 * (1 - zh[i]), 0, 0]
        want = affine_transform(x[i], np.array(t, F32), fill_mode="wrap").numpy()
        np.testing.assert_allclose(out[i], want, rtol=1e-5, atol=1e-3)


def test_translation_moves_content_down_and_right_for_positive_factors():
    x = _images(2, 8, 8)
    out = L.RandomTranslation((0.25, 0.25), (-0.125, -0.125), fill_mode="constant",
                              fill_value=-1.0)(x).numpy()
    want = np.full_like(x, -1.0)
    want[:, 2:, :7] = x[:, :6, 1:]           # 2 rows down, 1 column left
    np.testing.assert_array_equal(out, want)
    out = L.RandomTranslation(0.0, (0.25, 0.25), fill_mode="nearest",
                              interpolation="nearest")(x[0]).numpy()
    want = np.concatenate([np.repeat(x[0, :, :1], 2, axis=1), x[0, :, :6]], axis=1)
    np.testing.assert_array_equal(out, want)


# --- colour ------------------------------------------------------------------------------

def test_random_contrast_and_brightness_match_their_formulas():
    x = _images(3, 4, 5)
    tf.random.set_seed(6)
    out = L.RandomContrast((0.5, 0.8))(x).numpy()
    tf.random.set_seed(6)
    factor = tf.random.uniform((3, 1, 1, 1), 0.5, 1.8).numpy()
    mean = x.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(out, np.clip((x - mean) * factor + mean, 0, 255), rtol=1e-5,
                               atol=1e-3)
    tf.random.set_seed(7)
    out = L.RandomBrightness(0.4, value_range=(0, 1))(x / 255).numpy()
    tf.random.set_seed(7)
    delta = tf.random.uniform((3, 1, 1, 1), -0.4, 0.4).numpy()
    np.testing.assert_allclose(out, np.clip(x / 255 + delta, 0, 1), rtol=1e-5, atol=1e-6)
    assert len(set(delta.ravel().tolist())) == 3


# --- training / inference behaviour ----------------------------------------------------------

@pytest.mark.parametrize("make", RANDOM_LAYERS)
def test_random_layers_are_the_identity_at_inference(make):
    layer = make()
    tf.random.set_seed(11)
    x = _images(4, 6, 7)
    out = layer(x, training=False).numpy()
    if isinstance(layer, L.RandomCrop):
        np.testing.assert_allclose(out, L.Resizing(5, 6, crop_to_aspect_ratio=True)(x).numpy())
    else:
        np.testing.assert_array_equal(out, x)
        assert not np.array_equal(layer(x).numpy(), x)     # a direct call augments


def test_model_predict_is_deterministic_and_fit_trains_with_augmentation():
    tf.random.set_seed(8)
    n = 64
    x = np.random.default_rng(8).uniform(0, 1, (n, 8, 8, 1)).astype(F32)
    labels = (x.mean(axis=(1, 2, 3)) > 0.5).astype(np.int32)   # invariant to the augmentation
    x += (labels * 0.4 - 0.2)[:, None, None, None]
    model = tf.keras.Sequential([
        tf.keras.Input((8, 8, 1)), L.RandomFlip("horizontal"), L.RandomRotation(0.05),
        L.RandomContrast(0.1, value_range=(-1, 2)), L.Flatten(), L.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x, labels, epochs=15, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    np.testing.assert_array_equal(model.predict(x, verbose=0), model.predict(x, verbose=0))
    assert model.evaluate(x, labels, verbose=0)[1] > 0.9


def test_traced_calls_draw_fresh_values_and_follow_the_global_seed():
    layer = L.RandomRotation(0.2)
    x = tf.constant(_images(2, 6, 6))

    @tf.function
    def augment(images):
        return layer(images, training=True)

    tf.random.set_seed(9)
    first, second = augment(x).numpy(), augment(x).numpy()
    assert not np.allclose(first, second)
    tf.random.set_seed(9)
    np.testing.assert_array_equal(augment(x).numpy(), first)
    np.testing.assert_array_equal(augment(x).numpy(), second)
    # the replayed step matches the eager layer for the same draws
    tf.random.set_seed(9)
    np.testing.assert_allclose(layer(x).numpy(), first, rtol=1e-6)


def test_layers_work_in_dataset_map_and_the_functional_api():
    x = _images(6, 8, 8)
    tf.random.set_seed(10)
    ds = tf.data.Dataset.from_tensor_slices(x).batch(3).map(L.RandomTranslation(0.3, 0.3))
    batches = [b.numpy() for b in ds]
    assert [b.shape for b in batches] == [(3, 8, 8, 3)] * 2
    assert not np.allclose(np.concatenate(batches), x)
    single = tf.data.Dataset.from_tensor_slices(x).map(L.CenterCrop(4, 4))
    np.testing.assert_array_equal(next(iter(single)).numpy(), x[0, 2:6, 2:6])
    inputs = tf.keras.Input((8, 8, 3))
    outputs = L.RandomFlip()(L.Resizing(4, 6)(inputs))
    model = tf.keras.Model(inputs, outputs)
    assert tuple(model.output_shape) == (None, 4, 6, 3)
    np.testing.assert_allclose(model.predict(x, verbose=0), L.Resizing(4, 6)(x).numpy())


def test_channels_first():
    x = _images(2, 6, 8)
    first = np.transpose(x, (0, 3, 1, 2))
    got = L.CenterCrop(4, 4, data_format="channels_first")(first).numpy()
    np.testing.assert_array_equal(got, np.transpose(x[:, 1:5, 2:6], (0, 3, 1, 2)))
    assert L.Resizing(3, 5, data_format="channels_first").compute_output_shape(
        (None, 3, 6, 8)) == (None, 3, 3, 5)
    rotated = L.RandomRotation((0.25, 0.25), data_format="channels_first")(first[:, :, :6, :6])
    np.testing.assert_allclose(rotated.numpy(), np.rot90(first[:, :, :6, :6], axes=(2, 3)),
                               atol=1e-3)


# --- configs and errors --------------------------------------------------------------------

def test_configs_round_trip_and_experimental_aliases():
    layers = [L.Resizing(3, 4, interpolation="nearest", crop_to_aspect_ratio=True),
              L.CenterCrop(2, 3), L.RandomCrop(4, 5, seed=3), L.RandomFlip("vertical", seed=1),
              L.RandomRotation((-0.1, 0.2), fill_mode="constant", fill_value=2.0),
              L.RandomZoom(0.2, (-0.1, 0.3), interpolation="nearest"),
              L.RandomTranslation(0.1, (0.0, 0.2), fill_mode="wrap"),
              L.RandomContrast((0.2, 0.4), value_range=(0, 1)),
              L.RandomBrightness(0.3, value_range=(-1, 1))]
    for layer in layers:
        config = layer.get_config()
        clone = type(layer).from_config(config)
        assert clone.get_config() == config
        restored = L.deserialize(L.serialize(layer))
        assert type(restored) is type(layer) and restored.get_config()["name"] == layer.name
    assert L.RandomRotation(0.2).get_config()["fill_mode"] == "reflect"
    assert L.RandomFlip().get_config()["mode"] == "horizontal_and_vertical"
    pre = L.experimental.preprocessing
    assert pre.RandomFlip is L.RandomFlip and pre.Resizing is L.Resizing
    assert pre.RandomZoom is L.RandomZoom and pre.RandomBrightness is L.RandomBrightness


@pytest.mark.parametrize("make, error, message", [
    (lambda: L.RandomFlip("diagonal"), ValueError, "mode must be one of"),
    (lambda: L.RandomRotation(-0.2), ValueError, "factor cannot be negative"),
    (lambda: L.RandomRotation(0.2, fill_mode="mirror"), ValueError, "fill_mode must be one of"),
    (lambda: L.RandomZoom((-1.5, 0.2)), ValueError, r"values must be in \[-1.0, inf\]"),
    (lambda: L.RandomZoom((0.3, 0.1)), ValueError, "lower bound 0.3 exceeds"),
    (lambda: L.RandomTranslation(1.2, 0.1), ValueError, r"height_factor values must be in"),
    (lambda: L.RandomContrast(1.5), ValueError, "factor cannot have negative values"),
    (lambda: L.RandomBrightness((-0.2, 1.5)), ValueError, r"must be in \[-1.0, 1.0\]"),
    (lambda: L.RandomBrightness(0.2, value_range=(1, 0)), ValueError, "min 1.0 exceeds"),
    (lambda: L.Resizing(4, 4, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True),
     ValueError, "only one of"),
    (lambda: L.Resizing(4, 4, interpolation="bicubic"), NotImplementedError, "not supported"),
    (lambda: L.CenterCrop(0, 4), ValueError, "must be positive"),
    (lambda: L.RandomCrop(4, 4, data_format="nhwc"), ValueError, "data_format must be"),
])
def test_bad_arguments_raise(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_bad_input_rank_raises():
    with pytest.raises(ValueError, match=r"RandomFlip: expected images of rank 3.*\(4, 5\)"):
        L.RandomFlip()(np.zeros((4, 5), F32))
