"""``affine_transform`` / ``tf.raw_ops.ImageProjectiveTransformV3`` against a per-pixel loop
reference of TF's kernel (tensorflow/core/kernels/image/image_ops.h: the projective map,
``MapCoordinate`` for each fill mode, ``std::round`` for nearest, bilinear corner reads that
return ``fill_value`` outside the image)."""
import math

import numpy as np
import pytest

import minitf as tf
from minitf.image_transform import affine_transform, image_projective_transform_v3
from minitf.testing import check_grads

RNG = np.random.default_rng(11)
F32 = np.float32


def _map(coord, size, mode):
    """TF's ``MapCoordinate`` for one float32 coordinate (``int()`` truncates like the C++
    ``static_cast``)."""
    c = F32(coord)
    if mode == "constant":
        return c
    if mode in ("reflect", "wrap") and size > 1:
        if mode == "reflect":
            period = F32(2 * size)
            if c < 0:
                c = period * F32(int(-c / period)) + c
                c = c + period if c < -size else -c - F32(1)
            elif c > size - 1:
                c = c - period * F32(int(c / period))
                if c >= size:
                    c = period - c - F32(1)
        else:
            span = F32(size - 1)
            if c < 0:
                c = c + F32(size) * F32(int(-c / span) + 1)
            elif c > size - 1:
                c = c - F32(size) * F32(int(c / span))
    elif mode in ("reflect", "wrap"):
        c = F32(0)
    return F32(min(max(c, F32(0)), F32(size - 1)))


def _reference(images, transforms, interpolation, fill_mode, fill_value=0.0, out_hw=None):
    """Loops over every output pixel of every image."""
    n, h, w, ch = images.shape
    oh, ow = out_hw or (h, w)
    transforms = np.broadcast_to(np.asarray(transforms, F32).reshape(-1, 8), (n, 8))
    out = np.zeros((n, oh, ow, ch), np.float64)

    def read(b, y, x):
        if 0 <= y < h and 0 <= x < w:
            return images[b, int(y), int(x)].astype(np.float64)
        return np.full(ch, fill_value, np.float64)

    for b in range(n):
        a0, a1, a2, b0, b1, b2, c0, c1 = transforms[b]
        for oy in range(oh):
            for ox in range(ow):
                x_, y_ = F32(ox), F32(oy)
                k = c0 * x_ + c1 * y_ + F32(1)
                if k == 0:
                    out[b, oy, ox] = fill_value
                    continue
                x = _map((a0 * x_ + a1 * y_ + a2) / k, w, fill_mode)
                y = _map((b0 * x_ + b1 * y_ + b2) / k, h, fill_mode)
                if interpolation == "nearest":
                    def std_round(v):
                        v = float(v)
                        return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)
                    out[b, oy, ox] = read(b, std_round(y), std_round(x))
                else:
                    x0, y0 = math.floor(x), math.floor(y)
                    x1, y1 = x0 + 1, y0 + 1
                    top = (x1 - x) * read(b, y0, x0) + (x - x0) * read(b, y0, x1)
                    bottom = (x1 - x) * read(b, y1, x0) + (x - x0) * read(b, y1, x1)
                    out[b, oy, ox] = (y1 - y) * top + (y - y0) * bottom
    return out


def _random_transforms(n, projective=True):
    angle = RNG.uniform(-1.2, 1.2, n)
    scale = RNG.uniform(0.6, 1.7, (n, 2))
    t = np.stack([np.cos(angle) * scale[:, 0], -np.sin(angle), RNG.uniform(-6, 6, n),
                  np.sin(angle), np.cos(angle) * scale[:, 1], RNG.uniform(-6, 6, n),
                  RNG.uniform(-0.03, 0.03, n) * projective,
                  RNG.uniform(-0.03, 0.03, n) * projective], axis=1)
    return t.astype(F32)


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("fill_mode", ["constant", "reflect", "wrap", "nearest"])
def test_matches_the_per_pixel_reference(interpolation, fill_mode):
    images = RNG.uniform(0, 10, (3, 7, 9, 2)).astype(F32)
    transforms = _random_transforms(3)
    got = affine_transform(images, transforms, interpolation=interpolation,
                           fill_mode=fill_mode, fill_value=-2.5)
    assert got.dtype == tf.float32 and got.shape == images.shape
    want = _reference(images, transforms, interpolation, fill_mode, fill_value=-2.5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)


def test_out_of_image_points_follow_each_fill_mode():
    # one row [a b c d] shifted 5 pixels right: output x reads input x - 5
    row = np.array([1.0, 2.0, 3.0, 4.0], F32).reshape(1, 1, 4, 1)
    shift = [1, 0, -5, 0, 1, 0, 0, 0]
    expected = {"constant": [9, 9, 9, 9], "nearest": [1, 1, 1, 1],
                # reflect extends a b c d as ... a b c d | d c b a | a b c d: x = -5..-2
                # read d d c b
                "reflect": [4, 4, 3, 2],
                # TF's wrap adds len * (trunc(-x / (len - 1)) + 1) and clamps to [0, 3]:
                # -5 -> 3, -4 -> 4 -> 3, -3 -> 5 -> 3, -2 -> 2
                "wrap": [4, 4, 4, 3]}
    for mode, want in expected.items():
        got = affine_transform(row, shift, interpolation="nearest", fill_mode=mode,
                               fill_value=9.0)
        np.testing.assert_array_equal(got.numpy().ravel(), want, err_msg=mode)


def test_identity_and_quarter_turn():
    images = RNG.uniform(size=(2, 5, 5, 3)).astype(F32)
    identity = affine_transform(images, [1, 0, 0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(identity.numpy(), images)
    # output (x, y) reads input (4 - y, x): numpy.rot90 (counter-clockwise)
    quarter = affine_transform(images, [0, -1, 4, 1, 0, 0, 0, 0], interpolation="nearest")
    np.testing.assert_array_equal(quarter.numpy(), np.rot90(images, axes=(1, 2)))


def test_single_image_integer_dtype_and_channels_first():
    image = RNG.integers(0, 255, (6, 5, 3)).astype(np.uint8)
    t = np.array([1, 0, 0.5, 0, 1, 0.25, 0, 0], F32)
    got = affine_transform(image, t, fill_mode="nearest")
    assert got.dtype == tf.uint8 and got.shape == (6, 5, 3)
    want = _reference(image[None], t, "bilinear", "nearest")[0]
    np.testing.assert_array_equal(got.numpy(), np.trunc(want).astype(np.uint8))
    first = affine_transform(np.transpose(image, (2, 0, 1)), t, fill_mode="nearest",
                             data_format="channels_first")
    np.testing.assert_array_equal(first.numpy(), np.transpose(got.numpy(), (2, 0, 1)))


def test_raw_op_output_shape_and_degenerate_projection():
    images = RNG.uniform(size=(2, 4, 6, 1)).astype(F32)
    t = _random_transforms(2)
    got = tf.raw_ops.ImageProjectiveTransformV3(images=images, transforms=t,
                                                output_shape=[3, 8], fill_value=1.5,
                                                interpolation="BILINEAR",
                                                fill_mode="REFLECT")
    assert got.shape == (2, 3, 8, 1)
    np.testing.assert_allclose(got.numpy(), _reference(images, t, "bilinear", "reflect",
                                                       1.5, (3, 8)), rtol=1e-5, atol=1e-5)
    # k = 1 - x vanishes at output column 1: TF returns fill_value there
    degenerate = image_projective_transform_v3(images[:1], [[1, 0, 0, 0, 1, 0, -1, 0]],
                                               (4, 6), 7.0, "NEAREST")
    np.testing.assert_array_equal(degenerate.numpy()[0, :, 1, 0], [7.0] * 4)


def test_gradient_with_respect_to_the_image_matches_central_differences():
    images = tf.constant(RNG.uniform(size=(2, 4, 5, 2)))
    t = _random_transforms(2, projective=False)
    for mode in ("constant", "reflect"):
        check_grads(lambda x: affine_transform(x, t, fill_mode=mode, fill_value=0.5), [images],
                    order=1)
    # the output is linear in the image: d sum(out * w) / d image by hand, for one pixel
    x = tf.Variable(images)
    weights = RNG.uniform(size=(2, 4, 5, 2))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(affine_transform(x, t, fill_mode="wrap") * weights)
    grad = tape.gradient(loss, x).numpy()
    bump = np.zeros((2, 4, 5, 2))
    bump[1, 2, 3, 1] = 1e-6
    base = images.numpy()
    numeric = (np.sum(affine_transform(base + bump, t, fill_mode="wrap").numpy() * weights)
               - np.sum(affine_transform(base - bump, t, fill_mode="wrap").numpy() * weights)
               ) / 2e-6
    np.testing.assert_allclose(grad[1, 2, 3, 1], numeric, rtol=1e-6)


def test_traced_function_replays_with_new_transforms():
    images = RNG.uniform(size=(2, 6, 6, 1)).astype(F32)

    @tf.function
    def warp(x, t):
        return affine_transform(x, t, fill_mode="reflect")

    for _ in range(2):
        t = _random_transforms(2)
        np.testing.assert_allclose(warp(tf.constant(images), tf.constant(t)).numpy(),
                                   _reference(images, t, "bilinear", "reflect"),
                                   rtol=1e-5, atol=1e-5)


def test_bad_arguments_raise():
    images = np.zeros((1, 4, 4, 1), F32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"transforms must have shape.*"
                                                             r"got \(1, 6\)"):
        affine_transform(images, np.zeros((1, 6)))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\(batch, 8\) = \(1, 8\).*\(3, 8\)"):
        affine_transform(images, np.zeros((3, 8)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="fill_mode must be one of"):
        affine_transform(images, np.eye(3).ravel()[:8], fill_mode="mirror")
    with pytest.raises(tf.errors.InvalidArgumentError, match="interpolation must be one of"):
        affine_transform(images, np.eye(3).ravel()[:8], interpolation="cubic")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"rank 3.*got shape \(4, 4\)"):
        affine_transform(np.zeros((4, 4)), np.eye(3).ravel()[:8])
