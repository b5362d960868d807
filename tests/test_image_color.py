"""tf.image colour spaces, hue/saturation, Sobel edges, SSIM and resize_with_pad.

Expected values were produced by TensorFlow 2.21 on the same inputs (rounded to 4-6 digits).
"""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads


IMG = np.array([[[0.2, 0.4, 0.6], [0.9, 0.1, 0.3], [0.5, 0.5, 0.5]],
                [[1.0, 0.0, 0.0], [0.3, 0.8, 0.2], [0.0, 0.0, 0.0]]], np.float32)
HSV = np.array([[[0.1, 0.5, 0.8], [0.45, 1.0, 0.6], [0.7, 0.3, 0.9]],
                [[0.95, 0.6, 0.4], [0.0, 0.0, 0.7], [0.3, 0.8, 0.0]]], np.float32)
# Pixels without ties between channels, away from the branch points of the HSV formulas.
SMOOTH_RGB = np.array([[[0.2, 0.45, 0.7], [0.85, 0.1, 0.35]],
                       [[0.3, 0.75, 0.15], [0.62, 0.55, 0.12]]])


def close(actual, expected, atol=2e-5):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=0, atol=atol)


def test_rgb_to_hsv_matches_tf():
    close(tf.image.rgb_to_hsv(IMG),
          [[[0.583333, 0.666667, 0.6], [0.958333, 0.888889, 0.9], [0.0, 0.0, 0.5]],
           [[0.0, 1.0, 1.0], [0.305556, 0.75, 0.8], [0.0, 0.0, 0.0]]])


def test_rgb_to_hsv_casts_integers_without_rescaling():
    out = tf.image.rgb_to_hsv(np.ones((1, 1, 3), np.int32))
    assert out.dtype == tf.float32
    close(out, [[[0.0, 0.0, 1.0]]])


def test_hsv_to_rgb_matches_tf():
    close(tf.image.hsv_to_rgb(HSV),
          [[[0.8, 0.64, 0.4], [0.0, 0.6, 0.42], [0.684, 0.63, 0.9]],
           [[0.4, 0.16, 0.232], [0.7, 0.7, 0.7], [0.0, 0.0, 0.0]]])


def test_hsv_to_rgb_hues_outside_unit_interval_act_like_red():
    hsv = np.array([[h, 0.5, 0.8] for h in (1.0, -0.1, 1.2, -0.5, 1.5, 2.3)], np.float32)
    close(tf.image.hsv_to_rgb(hsv), [[0.8, 0.4, 0.4]] * 6)


def test_hsv_round_trip():
    out = tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(IMG))
    close(out, IMG, atol=1e-6)


def test_yiq_and_yuv_match_tf():
    close(tf.image.rgb_to_yiq(IMG),
          [[[0.363, -0.183449, 0.019925], [0.362, 0.412452, 0.231436], [0.5, 0.0, -1.8e-05]],
           [[0.299, 0.595901, 0.2115], [0.5821, -0.105144, -0.292499], [0.0, 0.0, 0.0]]])
    close(tf.image.yiq_to_rgb(IMG),
          [[[0.954889, -0.297128, 0.779842], [1.181846, 0.678637, 1.300595],
            [1.288406, 0.040391, 0.798745]],
           [[1.0, 1.0, 1.0], [1.188954, -0.047051, -0.244546], [0.0, 0.0, 0.0]]])
    close(tf.image.rgb_to_yuv(IMG),
          [[[0.363, 0.11663, -0.142997], [0.362, -0.030511, 0.471978], [0.5, 0.0, 0.0]],
           [[0.299, -0.147141, 0.614975], [0.5821, -0.188036, -0.247482], [0.0, 0.0, 0.0]]])
    close(tf.image.yuv_to_rgb(IMG),
          [[[0.88393, -0.30623, 1.012825], [1.241965, 0.686349, 1.103206],
            [1.069942, 0.012368, 1.516031]],
           [[1.0, 1.0, 1.0], [0.527977, -0.131838, 1.92565], [0.0, 0.0, 0.0]]])
    # TF's matrices are inverses to about 4 digits only.
    close(tf.image.yiq_to_rgb(tf.image.rgb_to_yiq(IMG)), IMG, atol=1e-4)
    close(tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(IMG)), IMG, atol=1e-4)


def test_adjust_hue_matches_tf():
    close(tf.image.adjust_hue(IMG, 0.2),
          [[[0.48, 0.2, 0.6], [0.9, 0.86, 0.1], [0.5, 0.5, 0.5]],
           [[0.8, 1.0, 0.0], [0.2, 0.78, 0.8], [0.0, 0.0, 0.0]]])
    close(tf.image.adjust_hue(IMG, -0.7),
          [[[0.6, 0.2, 0.48], [0.46, 0.9, 0.1], [0.5, 0.5, 0.5]],
           [[0.2, 1.0, 0.0], [0.2, 0.42, 0.8], [0.0, 0.0, 0.0]]])


def test_adjust_hue_integer_images():
    u8 = (IMG * 255).astype(np.uint8)
    out = tf.image.adjust_hue(u8, 0.3)
    assert out.dtype == tf.uint8
    np.testing.assert_array_equal(out.numpy(), [[[153, 51, 122], [117, 229, 25], [127, 127, 127]],
                                                [[51, 255, 0], [51, 106, 204], [0, 0, 0]]])
    # The example of TF's tf.image.adjust_hue docstring.
    image = tf.constant([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]],
                         [[13, 14, 15], [16, 17, 18]]])
    np.testing.assert_array_equal(tf.image.adjust_hue(image, 0.2).numpy(),
                                  [[[2, 1, 3], [5, 4, 6]], [[8, 7, 9], [11, 10, 12]],
                                   [[14, 13, 15], [17, 16, 18]]])


def test_adjust_saturation_matches_tf():
    close(tf.image.adjust_saturation(IMG, 0.5),
          [[[0.4, 0.5, 0.6], [0.9, 0.5, 0.6], [0.5, 0.5, 0.5]],
           [[1.0, 0.5, 0.5], [0.55, 0.8, 0.5], [0.0, 0.0, 0.0]]])
    close(tf.image.adjust_saturation(IMG, 3.0),
          [[[0.0, 0.3, 0.6], [0.9, 0.0, 0.225], [0.5, 0.5, 0.5]],
           [[1.0, 0.0, 0.0], [0.133333, 0.8, 0.0], [0.0, 0.0, 0.0]]])
    out = tf.image.adjust_saturation((IMG * 255).astype(np.uint8), 1.7)
    np.testing.assert_array_equal(out.numpy(), [[[0, 76, 153], [229, 0, 57], [127, 127, 127]],
                                                [[255, 0, 0], [33, 204, 0], [0, 0, 0]]])


def test_random_hue_and_saturation_stay_in_range():
    tf.random.set_seed(3)
    hue = tf.image.rgb_to_hsv(SMOOTH_RGB.astype(np.float32)).numpy()
    shifts, factors = [], []
    for _ in range(20):
        out = tf.image.rgb_to_hsv(tf.image.random_hue(SMOOTH_RGB.astype(np.float32), 0.1))
        shift = (out.numpy()[..., 0] - hue[..., 0] + 0.5) % 1.0 - 0.5
        np.testing.assert_allclose(shift, shift.flat[0], atol=1e-5)   # one delta per call
        shifts.append(shift.flat[0])
        sat = tf.image.rgb_to_hsv(tf.image.random_saturation(SMOOTH_RGB.astype(np.float32),
                                                             0.5, 0.9)).numpy()
        factors.append(sat[0, 0, 1] / hue[0, 0, 1])
    assert -0.1 - 1e-6 <= min(shifts) < 0 < max(shifts) < 0.1 + 1e-6
    assert 0.5 - 1e-5 <= min(factors) < 0.7 < max(factors) < 0.9 + 1e-5


SOBEL_INPUT = (np.arange(2 * 4 * 5 * 2, dtype=np.float32).reshape(2, 4, 5, 2) ** 1.5 % 7)


def test_sobel_edges_matches_tf():
    out = tf.image.sobel_edges(SOBEL_INPUT[:1, :, :, :1])
    assert out.shape == (1, 4, 5, 1, 2)
    close(out[0, :, :, 0, 0], [[0.0] * 5,
                               [15.6069, 14.7397, 17.3893, 15.8653, 10.8244],
                               [-1.7118, -2.5366, 2.1884, 5.7494, 3.7604], [0.0] * 5], atol=2e-4)
    close(out[0, :, :, 0, 1], [[0.0, 1.5209, -15.4014, 7.2235, 0.0],
                               [0.0, 0.6536, -11.8846, 2.1826, 0.0],
                               [0.0, -1.0384, -2.8178, -4.8472, 0.0],
                               [0.0, -1.8632, 2.7321, -6.8361, 0.0]], atol=2e-4)
    full = tf.image.sobel_edges(SOBEL_INPUT)
    assert full.shape == (2, 4, 5, 2, 2)
    close(full[1, 1, 2], [[-8.52921, 0.97067], [13.63519, 2.60706]], atol=1e-4)


def _ssim_images(h, w, c):
    i = np.arange(h)[:, None, None]
    j = np.arange(w)[None, :, None]
    k = np.arange(c)[None, None, :]
    a = 0.5 + 0.4 * np.sin(0.3 * i + 0.7 * j + k)
    b = 0.8 * a + 0.1 + 0.08 * np.sin(1.7 * i - 0.9 * j + 2.1 * k)
    return a.astype(np.float32), b.astype(np.float32)


def test_ssim_matches_tf():
    a, b = _ssim_images(16, 14, 3)
    close(tf.image.ssim(a, b, 1.0), 0.9421428, atol=1e-5)
    close(tf.image.ssim(a, b, 1.0, filter_size=5, filter_sigma=1.0, k1=0.02, k2=0.05),
          0.9089305, atol=1e-5)
    close(tf.image.ssim(np.stack([a, b]), np.stack([b, b]), 1.0, filter_size=7),
          [0.9388396, 1.0], atol=1e-5)
    close(tf.image.ssim((a * 255).astype(np.uint8), (b * 255).astype(np.uint8), 255),
          0.9420140, atol=1e-5)
    index_map = tf.image.ssim(a, b, 1.0, filter_size=7, return_index_map=True)
    assert index_map.shape == (10, 8)
    close(index_map[0], [0.936605, 0.936025, 0.936762, 0.939158, 0.940003, 0.939926, 0.940097,
                         0.9402], atol=1e-5)
    close(index_map[5, 3], 0.9399009, atol=1e-5)


def test_ssim_multiscale_matches_tf():
    a, b = _ssim_images(21, 19, 2)
    close(tf.image.ssim_multiscale(a, b, 1.0, power_factors=(0.2, 0.3, 0.5), filter_size=3,
                                   filter_sigma=0.8), 0.9486237, atol=1e-5)
    a, b = _ssim_images(180, 177, 1)
    close(tf.image.ssim_multiscale(a, b, 1.0), 0.9766806, atol=1e-5)


def test_resize_with_pad_matches_tf():
    x = np.arange(2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3, 1)
    out = tf.image.resize_with_pad(x, 4, 6)
    assert out.shape == (2, 4, 6, 1)
    close(out[0, ..., 0], [[0.0, 0.625, 2.125, 0.0, 0.0, 0.0], [0.0, 4.375, 5.875, 0.0, 0.0, 0.0],
                           [0.0, 8.125, 9.625, 0.0, 0.0, 0.0],
                           [0.0, 11.875, 13.375, 0.0, 0.0, 0.0]])
    close(out[1, 3, :, 0], [0.0, 26.875, 28.375, 0.0, 0.0, 0.0])
    out = tf.image.resize_with_pad(x[0], 7, 2, method="nearest")
    close(out[..., 0], [[0, 0], [0, 2], [6, 8], [12, 14], [0, 0], [0, 0], [0, 0]])


@pytest.mark.parametrize("fn", [
    tf.image.rgb_to_hsv, tf.image.hsv_to_rgb, tf.image.rgb_to_yiq, tf.image.yiq_to_rgb,
    tf.image.rgb_to_yuv, tf.image.yuv_to_rgb,
    lambda x: tf.image.adjust_hue(x, 0.15), lambda x: tf.image.adjust_saturation(x, 0.6),
], ids=["rgb_to_hsv", "hsv_to_rgb", "rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb",
        "adjust_hue", "adjust_saturation"])
def test_colour_gradients_match_finite_differences(fn):
    check_grads(fn, [SMOOTH_RGB], order=1)


def test_sobel_and_ssim_gradients_match_finite_differences():
    x = SOBEL_INPUT[:1].astype(np.float64) / 7.0
    check_grads(tf.image.sobel_edges, [x], order=1)
    a, b = _ssim_images(6, 7, 2)
    check_grads(lambda p, q: tf.image.ssim(p, q, 1.0, filter_size=3),
                [a.astype(np.float64), b.astype(np.float64)], order=1, jacobian=False)


def test_errors_name_the_function_and_value():
    with pytest.raises(ValueError, match=r"adjust_hue: delta must be in the interval \[-1, 1\], "
                                         r"got 1.5"):
        tf.image.adjust_hue(IMG, 1.5)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"rgb_to_hsv: images must have 3 channels.*\(2, 2, 4\)"):
        tf.image.rgb_to_hsv(np.zeros((2, 2, 4), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"adjust_saturation: images must have 3 channels"):
        tf.image.adjust_saturation(np.zeros((2, 2, 4), np.float32), 2.0)
    with pytest.raises(TypeError, match=r"rgb_to_yiq: images must be a floating-point.*int32"):
        tf.image.rgb_to_yiq(np.zeros((2, 2, 3), np.int32))
    with pytest.raises(ValueError, match=r"random_hue: max_delta must be <= 0.5, got 0.6"):
        tf.image.random_hue(IMG, 0.6)
    with pytest.raises(ValueError, match=r"random_hue: max_delta must be non-negative, got -0.1"):
        tf.image.random_hue(IMG, -0.1)
    with pytest.raises(ValueError, match=r"random_saturation: upper must be > lower, got "
                                         r"lower=0.5, upper=0.5"):
        tf.image.random_saturation(IMG, 0.5, 0.5)
    with pytest.raises(ValueError, match=r"random_saturation: lower must be non-negative, got -1"):
        tf.image.random_saturation(IMG, -1, 0.5)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"sobel_edges: image must be a 4-D batch.*\(4, 4, 1\)"):
        tf.image.sobel_edges(np.zeros((4, 4, 1), np.float32))
    a, b = _ssim_images(16, 14, 3)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"ssim: height and width must be at least filter_size=11.*\(8, 14, 3\)"):
        tf.image.ssim(a[:8], b[:8], 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"ssim: images must have .* \(16, 14, 3\) and \(16, 10, 3\)"):
        tf.image.ssim(a, b[:, :10], 1.0)
    with pytest.raises(ValueError, match=r"resize_with_pad: target_height and target_width "
                                         r"must be > 0, got 0 and 3"):
        tf.image.resize_with_pad(a, 0, 3)
