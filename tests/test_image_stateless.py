"""tf.image.stateless_random_* and tf.random.split / fold_in.

minitf's stateless generator is not TF's Philox stream, so instead of TF's numbers these tests
check TF's recipe exactly: each function's draw is ``tf.random.stateless_uniform`` with the
same seed, applied the way TF's image_ops_impl.py applies it.
"""
import numpy as np
import pytest

import minitf as tf


BATCH = (np.arange(4 * 3 * 5 * 3, dtype=np.float32).reshape(4, 3, 5, 3) % 17) / 17.0
IMAGE = BATCH[1]
SEEDS = [(i, 7 * i + 1) for i in range(24)]


def draw(seed, low=0.0, high=1.0, shape=()):
    return tf.random.stateless_uniform(shape, seed, minval=low, maxval=high).numpy()


def test_same_seed_same_result_and_seeds_differ():
    fns = [lambda s: tf.image.stateless_random_brightness(IMAGE, 0.3, s),
           lambda s: tf.image.stateless_random_contrast(IMAGE, 0.2, 1.8, s),
           lambda s: tf.image.stateless_random_hue(IMAGE, 0.4, s),
           lambda s: tf.image.stateless_random_saturation(IMAGE, 0.2, 1.8, s),
           lambda s: tf.image.stateless_random_crop(BATCH, [2, 2, 3, 3], s),
           lambda s: tf.image.stateless_random_flip_left_right(BATCH, s),
           lambda s: tf.image.stateless_random_flip_up_down(BATCH, s)]
    for fn in fns:
        first = fn((3, 4)).numpy()
        np.testing.assert_array_equal(fn(tf.constant([3, 4])).numpy(), first)
        np.testing.assert_array_equal(fn(np.array([3, 4], np.int64)).numpy(), first)
        others = [fn(s).numpy() for s in SEEDS[:6]]
        assert any(not np.array_equal(o, first) for o in others)


@pytest.mark.parametrize("seed", SEEDS[:5])
def test_brightness_adds_the_seeded_delta(seed):
    out = tf.image.stateless_random_brightness(IMAGE, 0.3, seed)
    np.testing.assert_allclose(out.numpy(), IMAGE + draw(seed, -0.3, 0.3), atol=1e-6)


def test_brightness_deltas_cover_the_range_and_integers_saturate():
    deltas = [float((tf.image.stateless_random_brightness(IMAGE, 0.25, s) - IMAGE)[0, 0, 0])
              for s in SEEDS]
    assert -0.25 <= min(deltas) < -0.05 and 0.05 < max(deltas) < 0.25
    u8 = np.full((2, 2, 3), 250, np.uint8)
    seed = next(s for s in SEEDS if draw(s, -0.5, 0.5) > 0.05)
    out = tf.image.stateless_random_brightness(u8, 0.5, seed)
    assert out.dtype == tf.uint8
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2, 3), 255))


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_contrast_saturation_and_hue_use_the_seeded_factor(seed):
    factor = draw(seed, 0.2, 1.8)
    mean = IMAGE.mean(axis=(0, 1), keepdims=True)
    np.testing.assert_allclose(tf.image.stateless_random_contrast(IMAGE, 0.2, 1.8, seed).numpy(),
                               (IMAGE - mean) * factor + mean, atol=1e-5)
    np.testing.assert_allclose(
        tf.image.stateless_random_saturation(IMAGE, 0.2, 1.8, seed).numpy(),
        tf.image.adjust_saturation(IMAGE, float(factor)).numpy(), atol=1e-6)
    np.testing.assert_allclose(tf.image.stateless_random_hue(IMAGE, 0.4, seed).numpy(),
                               tf.image.adjust_hue(IMAGE, float(draw(seed, -0.4, 0.4))).numpy(),
                               atol=1e-6)


@pytest.mark.parametrize("seed", SEEDS[:5])
def test_crop_offsets_are_the_seeded_int32_draws_modulo_the_room(seed):
    out = tf.image.stateless_random_crop(BATCH, [2, 2, 3, 3], seed)
    draws = tf.random.stateless_uniform([4], seed, minval=0, maxval=2 ** 31 - 1,
                                        dtype=tf.int32).numpy()
    b, h, w, _ = draws % np.array([3, 2, 3, 1])
    np.testing.assert_array_equal(out.numpy(), BATCH[b:b + 2, h:h + 2, w:w + 3, :])


def test_crop_reaches_every_offset_and_works_in_a_traced_function():
    seen = set()
    for seed in SEEDS:
        out = tf.image.stateless_random_crop(IMAGE, [2, 4, 3], seed).numpy()
        seen.add(next((h, w) for h in range(2) for w in range(2)
                      if np.array_equal(IMAGE[h:h + 2, w:w + 4], out)))
    assert seen == {(0, 0), (0, 1), (1, 0), (1, 1)}
    crop = tf.function(lambda x, s: tf.image.stateless_random_crop(x, [2, 4, 3], s))
    for seed in SEEDS[:3]:
        np.testing.assert_array_equal(
            crop(IMAGE, tf.constant(seed)).numpy(),
            tf.image.stateless_random_crop(IMAGE, [2, 4, 3], seed).numpy())


@pytest.mark.parametrize("name,axis", [("stateless_random_flip_left_right", 1),
                                       ("stateless_random_flip_up_down", 0)])
def test_flips_follow_tf_rules(name, axis):
    fn = getattr(tf.image, name)
    flipped_any = set()
    for seed in SEEDS[:12]:
        # One image: flipped when its draw is below 1/2.
        expected = np.flip(IMAGE, axis) if draw(seed) < 0.5 else IMAGE
        np.testing.assert_array_equal(fn(IMAGE, seed).numpy(), expected)
        # A batch: image i flipped when draw i of shape [batch] rounds to 1.
        flips = draw(seed, shape=[4]) > 0.5
        expected = np.where(flips[:, None, None, None], np.flip(BATCH, axis + 1), BATCH)
        np.testing.assert_array_equal(fn(BATCH, seed).numpy(), expected)
        flipped_any.add(tuple(flips))
    assert len(flipped_any) > 3        # images of a batch flip independently


def test_errors_name_the_function_and_the_bad_value():
    with pytest.raises(ValueError, match=r"stateless_random_brightness: max_delta must be "
                                         r"non-negative, got -0.1"):
        tf.image.stateless_random_brightness(IMAGE, -0.1, (1, 2))
    with pytest.raises(ValueError, match=r"stateless_random_hue: max_delta must be <= 0.5, "
                                         r"got 0.7"):
        tf.image.stateless_random_hue(IMAGE, 0.7, (1, 2))
    with pytest.raises(ValueError, match=r"stateless_random_contrast: upper must be > lower, "
                                         r"got lower=1.0, upper=0.5"):
        tf.image.stateless_random_contrast(IMAGE, 1.0, 0.5, (1, 2))
    with pytest.raises(ValueError, match=r"stateless_random_saturation: lower must be "
                                         r"non-negative, got -0.5"):
        tf.image.stateless_random_saturation(IMAGE, -0.5, 0.5, (1, 2))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"stateless_random_crop: need value.shape >= size >= 0, got shape "
                             r"\(3, 5, 3\) and size \[4, 2, 3\]"):
        tf.image.stateless_random_crop(IMAGE, [4, 2, 3], (1, 2))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"stateless_random_crop: size \[2, 2\] must have one entry per"):
        tf.image.stateless_random_crop(IMAGE, [2, 2], (1, 2))
    with pytest.raises(ValueError, match=r"stateless_random_flip_left_right: 'image' must have "
                                         r"either 3 or 4 dimensions.*\(3, 5\)"):
        tf.image.stateless_random_flip_left_right(IMAGE[..., 0], (1, 2))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"stateless_random_flip_up_down: seed must be an integer tensor of "
                             r"shape \[2\], got shape \(3,\)"):
        tf.image.stateless_random_flip_up_down(IMAGE, (1, 2, 3))


def test_random_split_and_fold_in():
    seeds = tf.random.split(tf.constant([1, 2]), num=3)
    assert seeds.shape == (3, 2)
    np.testing.assert_array_equal(seeds.numpy(),
                                  tf.random.experimental.stateless_split([1, 2], num=3).numpy())
    assert len({tuple(row) for row in seeds.numpy().tolist()}) == 3
    assert tf.random.split([1, 2], num=1)[0, :].shape == (2,)
    np.testing.assert_array_equal(tf.random.fold_in([1, 2], 5).numpy(),
                                  tf.random.experimental.stateless_fold_in([1, 2], 5).numpy())
    assert tf.random.fold_in([1, 2], 5).numpy().tolist() != tf.random.fold_in([1, 2],
                                                                               6).numpy().tolist()


def test_data_augmentation_tutorial_pipeline():
    # The augment function of TF's "Data augmentation" tutorial (stateless ops, split seeds).
    size = 4

    def augment(image_label, seed):
        image, label = image_label
        image = tf.image.resize(tf.cast(image, tf.float32), [size, size]) / 255.0
        image = tf.image.resize_with_crop_or_pad(image, size + 2, size + 2)
        new_seed = tf.random.split(seed, num=1)[0, :]
        image = tf.image.stateless_random_crop(image, size=[size, size, 3], seed=seed)
        image = tf.image.stateless_random_brightness(image, max_delta=0.5, seed=new_seed)
        return tf.clip_by_value(image, 0, 1), label

    images = (np.arange(3 * 6 * 6 * 3) % 256).reshape(3, 6, 6, 3).astype(np.uint8)
    labels = np.array([0, 1, 2])
    counter = tf.data.experimental.Counter()
    ds = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices((images, labels)),
                              (counter, counter)))
    first = [(x.numpy(), int(y)) for x, y in ds.map(augment)]
    again = [(x.numpy(), int(y)) for x, y in ds.map(augment)]
    assert [y for _, y in first] == [0, 1, 2]
    for (x, _), (x2, _) in zip(first, again):
        assert x.shape == (size, size, 3) and 0 <= x.min() and x.max() <= 1
        np.testing.assert_array_equal(x, x2)
    # Element i uses seed (i, i): rebuild element 1 eagerly.
    expected, _ = augment((images[1], labels[1]), tf.constant([1, 1], tf.int64))
    np.testing.assert_allclose(first[1][0], expected.numpy(), atol=1e-6)
