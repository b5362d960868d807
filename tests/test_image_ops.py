"""``tf.image`` against independent numpy computations of TF's definitions (tensorflow.org
tf.image API pages: half-pixel sampling in ``resize``, ``convert_image_dtype``'s scaling,
``central_crop``'s and ``resize_with_crop_or_pad``'s offsets, luma weights)."""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads

RNG = np.random.default_rng(7)


def _bilinear_reference(img, out_h, out_w):
    """Per output pixel, TF's half-pixel bilinear rule written as loops."""
    h, w = img.shape[:2]
    out = np.zeros((out_h, out_w) + img.shape[2:])

    def taps(o, size_in, size_out):
        c = (o + 0.5) * size_in / size_out - 0.5
        lo = int(np.floor(c))
        return max(lo, 0), min(int(np.ceil(c)), size_in - 1), c - lo

    for i in range(out_h):
        y0, y1, fy = taps(i, h, out_h)
        for j in range(out_w):
            x0, x1, fx = taps(j, w, out_w)
            top = img[y0, x0] + (img[y0, x1] - img[y0, x0]) * fx
            bottom = img[y1, x0] + (img[y1, x1] - img[y1, x0]) * fx
            out[i, j] = top + (bottom - top) * fy
    return out


def test_bilinear_upsampling_of_two_pixels_is_the_half_pixel_ramp():
    x = tf.constant([[[0.0], [1.0]]])
    np.testing.assert_allclose(tf.image.resize(x, (1, 4)).numpy().ravel(), [0, 0.25, 0.75, 1])


@pytest.mark.parametrize("shape, size", [((5, 7, 2), (9, 4)), ((6, 6, 1), (3, 3)),
                                         ((4, 3, 3), (4, 8))])
def test_bilinear_resize_matches_the_reference(shape, size):
    img = RNG.uniform(size=shape)
    got = tf.image.resize(tf.constant(img), size).numpy()
    np.testing.assert_allclose(got, _bilinear_reference(img, *size), rtol=1e-12)
    batch = np.stack([img, img[::-1]])
    got = tf.image.resize(tf.constant(batch.astype(np.float32)), size).numpy()
    assert got.dtype == np.float32 and got.shape == (2,) + size + shape[2:]
    np.testing.assert_allclose(got[1], _bilinear_reference(img[::-1], *size), rtol=1e-5)


def test_resize_of_integers_is_float32_and_nearest_keeps_the_dtype():
    img = np.arange(4, dtype=np.uint8).reshape(2, 2, 1)
    assert tf.image.resize(img, (3, 3)).dtype == tf.float32
    nearest = tf.image.resize(img, (4, 4), method="nearest")
    assert nearest.dtype == tf.uint8
    np.testing.assert_array_equal(nearest.numpy()[..., 0], np.repeat(np.repeat(
        [[0, 1], [2, 3]], 2, axis=0), 2, axis=1))
    # preserve_aspect_ratio fits a 4x8 image into 4x4 as 2x4
    assert tf.image.resize(tf.zeros((4, 8, 1)), (4, 4), preserve_aspect_ratio=True).shape == \
        [2, 4, 1]
    with pytest.raises(NotImplementedError, match="bicubic"):
        tf.image.resize(img, (3, 3), method="bicubic")
    with pytest.raises(ValueError, match="rank 3 or 4"):
        tf.image.resize(tf.zeros((2, 2)), (3, 3))


def test_bilinear_resize_is_differentiable():
    img = tf.constant(RNG.uniform(size=(1, 3, 4, 2)))
    check_grads(lambda x: tf.image.resize(x, (5, 3)), [img], order=1)


def test_flips_rotations_and_transpose_match_numpy():
    img = RNG.uniform(size=(3, 4, 2))
    np.testing.assert_array_equal(tf.image.flip_left_right(img).numpy(), img[:, ::-1])
    np.testing.assert_array_equal(tf.image.flip_up_down(img).numpy(), img[::-1])
    np.testing.assert_array_equal(tf.image.transpose(img).numpy(), img.transpose(1, 0, 2))
    for k in range(5):
        np.testing.assert_array_equal(tf.image.rot90(img, k).numpy(),
                                      np.rot90(img, k, axes=(0, 1)))
    batch = np.stack([img, 2 * img])
    np.testing.assert_array_equal(tf.image.rot90(batch).numpy(), np.rot90(batch, 1, axes=(1, 2)))


def test_crops_and_pads_follow_tfs_offsets():
    img = np.arange(4 * 6, dtype=np.float32).reshape(4, 6, 1)
    np.testing.assert_array_equal(tf.image.crop_to_bounding_box(img, 1, 2, 2, 3).numpy(),
                                  img[1:3, 2:5])
    padded = tf.image.pad_to_bounding_box(img, 1, 0, 6, 7).numpy()
    want = np.zeros((6, 7, 1), np.float32)
    want[1:5, 0:6] = img
    np.testing.assert_array_equal(padded, want)
    # crop centrally 4 -> 2 rows (offset 1), pad 6 -> 9 columns (offset 1, two on the right)
    out = tf.image.resize_with_crop_or_pad(img, 2, 9).numpy()
    want = np.zeros((2, 9, 1), np.float32)
    want[:, 1:7] = img[1:3]
    np.testing.assert_array_equal(out, want)
    # central_crop(0.5) of 4x4 keeps rows and columns 1..2
    square = np.arange(16.0).reshape(4, 4, 1)
    np.testing.assert_array_equal(tf.image.central_crop(square, 0.5).numpy(), square[1:3, 1:3])
    with pytest.raises(ValueError, match="does not fit"):
        tf.image.crop_to_bounding_box(img, 3, 0, 2, 2)
    with pytest.raises(ValueError, match="central_fraction"):
        tf.image.central_crop(img, 0.0)


def test_random_crop_and_flip_draw_anew_on_every_call_of_a_function():
    tf.random.set_seed(3)
    values = np.arange(8.0).reshape(1, 8, 1)
    starts, flipped = set(), set()

    @tf.function
    def augment(x):
        return tf.image.random_crop(x, (1, 3, 1)), tf.image.random_flip_left_right(x)

    for _ in range(40):
        crop, flip = augment(tf.constant(values))
        window = crop.numpy().ravel()
        np.testing.assert_array_equal(np.diff(window), [1.0, 1.0])     # a contiguous window
        starts.add(window[0])
        f = flip.numpy()
        assert np.array_equal(f, values) or np.array_equal(f, values[:, ::-1])
        flipped.add(np.array_equal(f, values[:, ::-1]))
    assert starts == {0.0, 1.0, 2.0, 3.0, 4.0, 5.0} and flipped == {True, False}
    with pytest.raises(ValueError, match="one entry in"):
        tf.image.random_crop(values, (1, 9, 1))


def test_convert_image_dtype_scales_as_tf():
    img = np.array([[[0, 128, 255]]], np.uint8)
    as_float = tf.image.convert_image_dtype(img, tf.float32)
    np.testing.assert_allclose(as_float.numpy(), img / 255.0, rtol=1e-6)
    back = tf.image.convert_image_dtype(as_float, tf.uint8)
    np.testing.assert_array_equal(back.numpy(), img)
    # float -> int multiplies by MAX + 0.5 and truncates; saturate clips first
    np.testing.assert_array_equal(
        tf.image.convert_image_dtype(tf.constant([0.5, 1.2]), tf.uint8, saturate=True).numpy(),
        [127, 255])
    # int -> wider int: times (2^31 / 2^8); narrower: integer division by the ratio
    np.testing.assert_array_equal(tf.image.convert_image_dtype(img, tf.int32).numpy(),
                                  img.astype(np.int64) * 2 ** 23)
    np.testing.assert_array_equal(
        tf.image.convert_image_dtype(tf.constant([[[2 ** 30]]], tf.int32), tf.uint8).numpy(),
        [[[128]]])                                    # 2^30 / 2^23


def test_colour_adjustments_and_standardization_match_numpy():
    img = RNG.uniform(size=(2, 3, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(tf.image.adjust_brightness(img, 0.1).numpy(), img + 0.1,
                               rtol=1e-6)
    mean = img.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(tf.image.adjust_contrast(img, 1.7).numpy(),
                               (img - mean) * 1.7 + mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tf.image.adjust_gamma(img, 2.0, 0.5).numpy(), 0.5 * img ** 2,
                               rtol=1e-6)
    flat = img.reshape(2, -1)
    std = np.maximum(flat.std(axis=1), 1 / np.sqrt(flat.shape[1]))
    want = (flat - flat.mean(axis=1, keepdims=True)) / std[:, None]
    np.testing.assert_allclose(tf.image.per_image_standardization(img).numpy().reshape(2, -1),
                               want, rtol=1e-4, atol=1e-5)
    gray = tf.image.rgb_to_grayscale(img).numpy()
    np.testing.assert_allclose(gray[..., 0], img @ np.array([0.2989, 0.5870, 0.1140]),
                               rtol=1e-5)
    assert tf.image.grayscale_to_rgb(gray).shape == [2, 3, 4, 3]
    u8 = (img * 255).astype(np.uint8)
    bright = tf.image.adjust_brightness(u8, 0.5)
    assert bright.dtype == tf.uint8
    np.testing.assert_array_equal(bright.numpy(), np.minimum(
        (u8 / 255.0 + 0.5) * 255.5, 255).astype(np.uint8))


def test_psnr_total_variation_and_image_gradients():
    a = RNG.uniform(size=(2, 4, 5, 1))
    b = a + RNG.normal(scale=0.1, size=a.shape)
    mse = ((a - b) ** 2).mean(axis=(1, 2, 3))
    np.testing.assert_allclose(tf.image.psnr(a, b, 1.0).numpy(), 10 * np.log10(1 / mse))
    tv = (np.abs(np.diff(a, axis=1)).sum(axis=(1, 2, 3))
          + np.abs(np.diff(a, axis=2)).sum(axis=(1, 2, 3)))
    np.testing.assert_allclose(tf.image.total_variation(a).numpy(), tv)
    dy, dx = tf.image.image_gradients(a)
    assert dy.shape == dx.shape == [2, 4, 5, 1]
    np.testing.assert_allclose(dy.numpy()[:, :-1], np.diff(a, axis=1))
    np.testing.assert_allclose(dx.numpy()[:, :, :-1], np.diff(a, axis=2))
    assert not dy.numpy()[:, -1].any() and not dx.numpy()[:, :, -1].any()
