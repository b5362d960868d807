"""Zero-size tensors: forward values, gradients and Jacobians (with and without the vectorised
path) keep TF's shapes, and reductions over an empty axis give TF's identities."""
import numpy as np
import pytest

import minitf as tf

OPS = {
    "reduce_sum": tf.reduce_sum,
    "reduce_max_axis0": lambda x: tf.reduce_max(x, axis=0),
    "softmax": tf.nn.softmax,
    "log_softmax": tf.nn.log_softmax,
    "logsumexp": lambda x: tf.reduce_logsumexp(x, axis=1),
    "matmul": lambda x: tf.matmul(x, tf.ones((x.shape[1], 4))),
    "concat": lambda x: tf.concat([x, x], 0),
    "transpose": tf.transpose,
    "relu": tf.nn.relu,
    "slice": lambda x: x[:, :1],
    "gather_none": lambda x: tf.gather(x, tf.constant([], tf.int32)),
    "einsum": lambda x: tf.einsum("ij,ij->i", x, x),
    "pad": lambda x: tf.pad(x, [[1, 1], [1, 1]]),
    "reshape_flat": lambda x: tf.reshape(x, [-1]),
    "prod": lambda x: tf.reduce_prod(x, axis=1),
    "tensordot": lambda x: tf.tensordot(x, tf.ones((x.shape[1], 2)), 1),
    "batched_matmul": lambda x: tf.matmul(tf.stack([x, x]), tf.ones((x.shape[1], 2))),
    "boolean_mask": lambda x: tf.boolean_mask(x, tf.ones((x.shape[0],), tf.bool)),
    "softmax_cross_entropy": lambda x: tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.ones_like(x), logits=x),
    "sigmoid_cross_entropy": lambda x: tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.ones_like(x), logits=x),
    "clip_by_norm": lambda x: tf.clip_by_norm(x, 1.0),
    "leaky_relu": tf.nn.leaky_relu,
}


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("shape", [(0, 3), (2, 0)])
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_and_jacobians_of_zero_size_inputs(name, shape, use_pfor):
    x = tf.zeros(shape)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = OPS[name](x)
    g = tape.gradient(y, x)
    assert g.shape == shape
    np.testing.assert_array_equal(g.numpy(), np.zeros(shape))
    jac = tape.jacobian(y, x, experimental_use_pfor=use_pfor)
    assert jac.shape == tuple(y.shape) + shape
    assert not jac.numpy().any()


def test_empty_reductions_are_the_identities():
    empty = tf.zeros((2, 0))
    np.testing.assert_array_equal(tf.reduce_max(empty, axis=1).numpy(), [-np.inf, -np.inf])
    np.testing.assert_array_equal(tf.reduce_min(empty, axis=1).numpy(), [np.inf, np.inf])
    np.testing.assert_array_equal(tf.reduce_logsumexp(empty, axis=1).numpy(), [-np.inf] * 2)
    np.testing.assert_array_equal(tf.reduce_sum(empty, axis=1).numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(tf.reduce_prod(empty, axis=1).numpy(), [1.0, 1.0])
    assert tf.reduce_max(tf.zeros((0,), tf.int32)).numpy() == np.iinfo(np.int32).min
    assert tf.nn.softmax(empty).shape == (2, 0)


def test_batch_jacobian_of_empty_examples():
    for shape in ((0, 3), (3, 0), (1, 0)):
        x = tf.zeros(shape)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.concat([x, x], axis=1) * 2.0
        for use_pfor in (True, False):
            jb = tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor)
            assert jb.shape == (shape[0], 2 * shape[1], shape[1])
