"""Backward kernels reuse arrays their forward built (patches, window maxima) only for
activations, never for a Variable's buffer, which assignments change in place."""
import numpy as np

import minitf as tf


def _one_per_window(grad):
    windows = grad.reshape(1, 2, 2, 2, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(4, 4)
    return windows.sum(axis=1)


def test_pool_gradient_after_assigning_the_pooled_variable():
    first = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    second = first[:, ::-1, ::-1, :].copy()  # maxima move to other window positions
    v = tf.Variable(first)
    with tf.GradientTape() as tape:
        y = tf.nn.max_pool2d(v, 2, 2, "VALID")
    v.assign(second)
    grad = tape.gradient(y, v).numpy()
    # As in TF, the gradient is taken at the value the pool read (the tape's records get a
    # snapshot before the write): each window routes its gradient to exactly the maximum it
    # had then, neither to the new one nor through argmax positions cached for another array.
    np.testing.assert_array_equal(_one_per_window(grad), np.ones(4))
    expected = np.zeros_like(first)
    for i in (0, 2):
        for j in (0, 2):
            block = first[0, i:i + 2, j:j + 2, 0]
            a, b = np.unravel_index(np.argmax(block), block.shape)
            expected[0, i + a, j + b, 0] = 1
    np.testing.assert_array_equal(grad, expected)


def test_pool_and_conv_gradients_of_activations_match_the_uncached_path():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((2, 6, 6, 3)).astype(np.float32))
    w = tf.Variable(rng.standard_normal((3, 3, 3, 4)).astype(np.float32))

    def grads():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.nn.max_pool2d(tf.nn.conv2d(x, w, 1, "SAME"), 2, 2, "VALID") ** 2)
        return [g.numpy() for g in tape.gradient(y, [x, w])]

    cached = grads()
    from minitf.ops import conv_ops
    saved_put = conv_ops._derived.put
    conv_ops._derived.put = lambda *args: None   # nothing cached: everything recomputed
    try:
        uncached = grads()
    finally:
        conv_ops._derived.put = saved_put
    for a, b in zip(cached, uncached):
        np.testing.assert_array_equal(a, b)


def test_a_derived_array_is_freed_when_its_input_dies():
    """Not at the next ``put``: a traced step would otherwise allocate its next derivation
    while the last step's is still held (two copies of a layer's Winograd transform)."""
    import gc
    import weakref
    from minitf.ops.derived import DerivedCache
    gc.disable()                                   # freed by reference counts alone
    try:
        cache = DerivedCache()
        x, kept = np.zeros(4), np.ones(3)
        value, kept_value = np.arange(5.0), np.arange(6.0)
        cache.put(x, "key", value)
        cache.put(kept, "key", kept_value)
        value_ref = weakref.ref(value)
        del value
        assert cache.get(x, "key") is value_ref()
        del x
        assert value_ref() is None
        assert cache.get(kept, "key") is kept_value  # the other entry stays
        assert cache.take(kept, "key") is kept_value and cache.get(kept, "key") is None
    finally:
        gc.enable()
