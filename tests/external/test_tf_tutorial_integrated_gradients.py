"""The tensorflow.org tutorial "Integrated gradients"
(https://www.tensorflow.org/tutorials/interpretability/integrated_gradients): interpolated
images between a baseline and an input, gradients of the target class probability (in a
``minitf.function``, batched into a TensorArray with ``scatter``), the trapezoidal Riemann
approximation, attributions ``(image - baseline) * average gradient``, the attribution mask,
and the completeness axiom. The Inception model is replaced by a small softmax-linear model
whose gradients have a closed form, computed in float64 numpy.
"""
import numpy as np
import pytest

import minitf as tf

H, W, C, CLASSES = 4, 4, 3, 5
rng = np.random.default_rng(0)
KERNEL = (rng.standard_normal((H * W * C, CLASSES)) * 0.3).astype(np.float32)
BIAS = (rng.standard_normal(CLASSES) * 0.1).astype(np.float32)
kernel, bias = tf.Variable(KERNEL), tf.Variable(BIAS)


def model(images):
    flat = tf.reshape(images, (-1, H * W * C))
    return tf.matmul(flat, kernel) + bias


def interpolate_images(baseline, image, alphas):
    alphas_x = alphas[:, tf.newaxis, tf.newaxis, tf.newaxis]
    baseline_x = tf.expand_dims(baseline, axis=0)
    input_x = tf.expand_dims(image, axis=0)
    delta = input_x - baseline_x
    return baseline_x + alphas_x * delta


def compute_gradients(images, target_class_idx):
    with tf.GradientTape() as tape:
        tape.watch(images)
        logits = model(images)
        probs = tf.nn.softmax(logits, axis=-1)[:, target_class_idx]
    return tape.gradient(probs, images)


def integral_approximation(gradients):
    grads = (gradients[:-1] + gradients[1:]) / tf.constant(2.0)
    return tf.math.reduce_mean(grads, axis=0)


@tf.function
def one_batch(baseline, image, alpha_batch, target_class_idx):
    interpolated = interpolate_images(baseline, image, alpha_batch)
    return compute_gradients(interpolated, target_class_idx)


def integrated_gradients(baseline, image, target_class_idx, m_steps=50, batch_size=32):
    alphas = tf.linspace(start=0.0, stop=1.0, num=m_steps + 1)
    gradient_batches = tf.TensorArray(tf.float32, size=m_steps + 1)
    for alpha in tf.range(0, len(alphas), batch_size):
        from_ = alpha
        to = tf.minimum(from_ + batch_size, len(alphas))
        alpha_batch = alphas[from_:to]
        gradient_batch = one_batch(baseline, image, alpha_batch, target_class_idx)
        gradient_batches = gradient_batches.scatter(tf.range(from_, to), gradient_batch)
    avg_gradients = integral_approximation(gradient_batches.stack())
    return (image - baseline) * avg_gradients


# --- float64 numpy reference ---------------------------------------------------------------
def _probs(images):
    z = images.reshape(len(images), -1) @ KERNEL.astype(np.float64) + BIAS
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _grad_prob(images, t):
    p = _probs(images)
    dz = p[:, t:t + 1] * (np.eye(CLASSES)[t] - p)          # d p_t / d logits
    return (dz @ KERNEL.T.astype(np.float64)).reshape(images.shape)


def _reference_ig(baseline, image, t, m_steps):
    alphas = np.linspace(0.0, 1.0, m_steps + 1)
    images = baseline[None] + alphas[:, None, None, None] * (image - baseline)[None]
    g = _grad_prob(images, t)
    return (image - baseline) * ((g[:-1] + g[1:]) / 2).mean(axis=0)


IMAGE = rng.uniform(size=(H, W, C)).astype(np.float32)
BASELINE = np.zeros((H, W, C), np.float32)


def test_interpolated_images_and_gradients():
    alphas = tf.linspace(0.0, 1.0, 5)
    images = interpolate_images(tf.constant(BASELINE), tf.constant(IMAGE), alphas)
    assert tuple(images.shape) == (5, H, W, C)
    np.testing.assert_allclose(images.numpy()[2], 0.5 * IMAGE, rtol=1e-6)
    grads = compute_gradients(images, 1)
    np.testing.assert_allclose(grads.numpy(), _grad_prob(images.numpy().astype(np.float64), 1),
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("target", [0, 3])
def test_integrated_gradients_match_numpy(target):
    attributions = integrated_gradients(tf.constant(BASELINE), tf.constant(IMAGE), target)
    expected = _reference_ig(BASELINE.astype(np.float64), IMAGE.astype(np.float64), target, 50)
    np.testing.assert_allclose(attributions.numpy(), expected, rtol=1e-4, atol=1e-7)
    mask = tf.reduce_sum(tf.math.abs(attributions), axis=-1)
    np.testing.assert_allclose(mask.numpy(), np.abs(expected).sum(axis=-1), rtol=1e-4,
                               atol=1e-7)


def test_completeness_axiom():
    # Attributions sum to F(image) - F(baseline), up to the Riemann approximation error.
    attributions = integrated_gradients(tf.constant(BASELINE), tf.constant(IMAGE), 2,
                                        m_steps=240)
    p = _probs(np.stack([BASELINE, IMAGE]).astype(np.float64))[:, 2]
    assert float(tf.reduce_sum(attributions)) == pytest.approx(p[1] - p[0], abs=1e-4)


def test_traced_gradient_batches_are_reused():
    one_batch_count = one_batch.experimental_get_tracing_count()
    integrated_gradients(tf.constant(BASELINE), tf.constant(IMAGE), 4)
    # Batches of 32 and 19 interpolations for 51 alphas, and a Python class index: at most
    # two new traces for a new target, none for a repeated one.
    after_first = one_batch.experimental_get_tracing_count()
    assert after_first - one_batch_count <= 2
    integrated_gradients(tf.constant(BASELINE), tf.constant(IMAGE), 4)
    assert one_batch.experimental_get_tracing_count() == after_first
