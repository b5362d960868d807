"""scatter_nd and tensor_scatter_nd_*: values against numpy and TF's documented examples,
gradients in closed form (TF's rules), traced functions and errors. The registered ops' gradients
are also checked by test_gradcheck.py."""
import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf.ops import scatter_ops
from minitf.testing import check_grads

rng = np.random.default_rng(5)


def _flat_positions(indices, shape):
    depth = indices.shape[-1]
    return np.ravel_multi_index(tuple(indices.reshape(-1, depth).T), shape[:depth])


def _reference(mode, tensor, indices, updates):
    """numpy: the same scatter with ufunc.at on a view of rows."""
    out = tensor.copy()
    depth = indices.shape[-1]
    rows = out.reshape((-1,) + out.shape[depth:])
    pos = _flat_positions(indices, tensor.shape)
    vals = updates.reshape((-1,) + out.shape[depth:])
    if mode == "update":
        rows[pos] = vals
    else:
        ufunc = {"add": np.add, "sub": np.subtract, "min": np.minimum, "max": np.maximum}[mode]
        ufunc.at(rows, pos, vals)
    return out


# --- values ----------------------------------------------------------------------------------

def test_scatter_nd_tf_doc_examples():
    # tf.scatter_nd's documentation.
    out = tf.scatter_nd(tf.constant([[4], [3], [1], [7]]), tf.constant([9, 10, 11, 12]),
                        tf.constant([8]))
    np.testing.assert_array_equal(out.numpy(), [0, 11, 0, 10, 9, 0, 0, 12])
    assert out.dtype == tf.int32
    updates = np.array([[[5, 5, 5, 5], [6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8]]] * 2)
    out = tf.scatter_nd([[0], [2]], updates, [4, 4, 4]).numpy()
    np.testing.assert_array_equal(out[0], updates[0])
    np.testing.assert_array_equal(out[2], updates[1])
    np.testing.assert_array_equal(out[[1, 3]], 0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("shape,depth", [((7,), 1), ((4, 5), 1), ((4, 5), 2), ((3, 2, 4), 2)])
def test_scatter_nd_sums_duplicates_like_numpy(dtype, shape, depth):
    n = 9
    indices = np.stack([rng.integers(0, shape[d], n) for d in range(depth)], axis=-1)
    indices[1] = indices[0]                                       # a sure duplicate
    updates = rng.integers(-5, 5, (n,) + shape[depth:]).astype(dtype)
    out = tf.scatter_nd(indices, updates, shape)
    assert out.dtype.name == dtype
    np.testing.assert_array_equal(out.numpy(),
                                  _reference("add", np.zeros(shape, dtype), indices, updates))


def test_tensor_scatter_tf_doc_examples():
    # The examples of TF's tensor_scatter_nd_* documentation.
    base = tf.constant([1, 2, 3, 4, 5, 6, 7, 8])
    idx, upd = [[4], [3], [1], [7]], [9, 10, 11, 12]
    np.testing.assert_array_equal(tf.tensor_scatter_nd_update(base, idx, upd).numpy(),
                                  [1, 11, 3, 10, 9, 6, 7, 12])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_add(base, idx, upd).numpy(),
                                  [1, 13, 3, 14, 14, 6, 7, 20])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_sub(base, idx, upd).numpy(),
                                  [1, -9, 3, -6, -4, 6, 7, -4])
    zeros = tf.zeros([8], dtype=tf.int32)
    np.testing.assert_array_equal(
        tf.tensor_scatter_nd_max(zeros, [[1], [4], [5]], [1, -1, 1]).numpy(),
        [0, 1, 0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(
        tf.tensor_scatter_nd_min(zeros, [[1], [4], [5]], [1, -1, 1]).numpy(),
        [0, 0, 0, 0, -1, 0, 0, 0])


@pytest.mark.parametrize("mode", ["update", "add", "sub", "min", "max"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape,depth", [((6,), 1), ((5, 3), 1), ((4, 3, 2), 2)])
def test_tensor_scatter_matches_numpy(mode, dtype, shape, depth):
    n = 4
    indices = np.stack([rng.integers(0, shape[d], n) for d in range(depth)], axis=-1)
    if mode == "update":   # which repeat wins is unspecified: keep the indices distinct
        flat = rng.choice(int(np.prod(shape[:depth])), size=n, replace=False)
        indices = np.stack(np.unravel_index(flat, shape[:depth]), axis=-1)
    else:
        indices[2] = indices[0]
    tensor = rng.integers(-4, 4, shape).astype(dtype)
    updates = rng.integers(-4, 4, (n,) + shape[depth:]).astype(dtype)
    fn = getattr(tf, f"tensor_scatter_nd_{mode}")
    out = fn(tf.constant(tensor), tf.constant(indices, dtype=tf.int64), tf.constant(updates))
    assert out.dtype.name == dtype
    np.testing.assert_array_equal(out.numpy(), _reference(mode, tensor, indices, updates))
    assert fn(tensor, indices, updates).shape == shape      # the input is left unchanged
    np.testing.assert_array_equal(tf.constant(tensor).numpy(), tensor)


@pytest.mark.parametrize("reduce", ["mul", "max", "min"])
def test_sorted_scatter_path_matches_ufunc_at(reduce):
    # The kernel used where ufunc.at is missing (cupy), run here on numpy arrays.
    positions = rng.integers(0, 5, 40)
    values = rng.uniform(0.5, 1.5, (3, 40, 2))
    target = rng.uniform(0.5, 1.5, (3, 5, 2))
    expected = target.copy()
    {"mul": np.multiply, "max": np.maximum, "min": np.minimum}[reduce].at(
        expected, (slice(None), positions), values)
    on_backend = B.from_numpy(target)
    scatter_ops._scatter_reduce_sorted(on_backend, 1, B.from_numpy(positions),
                                       B.from_numpy(values), reduce)
    np.testing.assert_allclose(B.to_numpy(on_backend), expected, rtol=1e-12)


# --- gradients -------------------------------------------------------------------------------

def _grads(fn, tensor, updates, weights):
    tensor, updates = tf.Variable(tensor), tf.Variable(updates)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(fn(tensor, updates) * weights)
    return [g.numpy() for g in tape.gradient(loss, [tensor, updates])]


def test_update_gradient_zeroes_the_scattered_positions():
    w = np.arange(1.0, 7.0).reshape(3, 2)
    idx = [[2], [0]]
    gt, gu = _grads(lambda t, u: tf.tensor_scatter_nd_update(t, idx, u),
                    np.ones((3, 2)), np.ones((2, 2)), w)
    np.testing.assert_array_equal(gt, [[0, 0], [3, 4], [0, 0]])
    np.testing.assert_array_equal(gu, [[5, 6], [1, 2]])       # gather_nd(g, indices)


def test_add_sub_and_scatter_nd_gradients():
    w = np.array([1.0, 2.0, 3.0, 4.0])
    idx = [[3], [1], [3]]
    gt, gu = _grads(lambda t, u: tf.tensor_scatter_nd_add(t, idx, u), np.zeros(4), np.ones(3), w)
    np.testing.assert_array_equal(gt, w)
    np.testing.assert_array_equal(gu, [4, 2, 4])
    gt, gu = _grads(lambda t, u: tf.tensor_scatter_nd_sub(t, idx, u), np.zeros(4), np.ones(3), w)
    np.testing.assert_array_equal(gu, [-4, -2, -4])
    u = tf.Variable([1.0, 1.0, 1.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.scatter_nd(idx, u, [4]) * w)
    np.testing.assert_array_equal(tape.gradient(loss, u).numpy(), [4, 2, 4])


def test_min_max_gradients_go_to_the_winners_and_split_ties():
    ones = np.ones(3)
    # max: position 0 gets updates 3 and 3 (a tie) over tensor 1; position 1 keeps the
    # tensor's 5 over an update of 2; position 2 ties the tensor's 4 with an update of 4.
    tensor, idx, upd = np.array([1.0, 5.0, 4.0]), [[0], [0], [1], [2]], np.array([3.0, 3, 2, 4])
    gt, gu = _grads(lambda t, u: tf.tensor_scatter_nd_max(t, idx, u), tensor, upd, ones)
    np.testing.assert_array_equal(gt, [0, 1, 0.5])
    np.testing.assert_array_equal(gu, [0.5, 0.5, 0, 0.5])
    gt, gu = _grads(lambda t, u: tf.tensor_scatter_nd_min(t, idx, u), tensor, upd, ones)
    np.testing.assert_array_equal(gt, [1, 0, 0.5])        # min: 1 < 3 stays; 2 < 5 wins
    np.testing.assert_array_equal(gu, [0, 0, 1, 0.5])


def test_composite_gradients_with_depth_two_indices():
    idx = np.array([[0, 1], [2, 0], [0, 1]])
    check_grads(lambda t, u: tf.tensor_scatter_nd_add(t, idx, u) ** 2,
                [rng.uniform(-1, 1, (3, 2, 2)), rng.uniform(-1, 1, (3, 2))])
    check_grads(lambda u: tf.sin(tf.scatter_nd(idx, u, [3, 2, 2])), [rng.uniform(-1, 1, (3, 2))])
    check_grads(lambda t, u: tf.tensor_scatter_nd_max(t, idx, u) * t,
                [rng.uniform(-1, 1, (3, 2, 2)), rng.uniform(-1, 1, (3, 2))], order=1)


# --- traced functions ------------------------------------------------------------------------

def test_scatter_ops_in_a_function_replay_on_new_values():
    @tf.function
    def f(tensor, indices, updates):
        return (tf.scatter_nd(indices, updates, [5, 2]),
                tf.tensor_scatter_nd_max(tensor, indices, updates))

    for _ in range(2):
        tensor = rng.uniform(-1, 1, (5, 2))
        indices = rng.integers(0, 5, (4, 1))
        updates = rng.uniform(-1, 1, (4, 2))
        a, b = f(tf.constant(tensor), tf.constant(indices), tf.constant(updates))
        np.testing.assert_allclose(a.numpy(), _reference("add", np.zeros((5, 2)), indices,
                                                         updates))
        np.testing.assert_allclose(b.numpy(), _reference("max", tensor, indices, updates))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[2\] = \[7\]"):
        f(tf.constant(tensor), tf.constant([[0], [1], [7], [2]]), tf.constant(updates))


# --- errors ----------------------------------------------------------------------------------

def test_out_of_range_indices_raise_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"scatter_nd.*indices\[1\] = \[9\] does not index into shape \[8\]"):
        tf.scatter_nd([[4], [9]], [1.0, 2.0], [8])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"tensor_scatter_nd_update.*indices\[0\] = \[0, -1\]"):
        tf.tensor_scatter_nd_update(tf.zeros([2, 3]), [[0, -1]], [1.0])


def test_bad_shapes_and_dtypes():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"updates must have shape \(2,\)"):
        tf.scatter_nd([[1], [2]], [1.0, 2.0, 3.0], [4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="index depth 3"):
        tf.tensor_scatter_nd_add(tf.zeros([2, 2]), [[0, 0, 0]], [1.0])
    with pytest.raises(TypeError, match="indices must be int32 or int64"):
        tf.scatter_nd([[1.0]], [1.0], [3])
    with pytest.raises(TypeError, match="different dtypes"):
        tf.tensor_scatter_nd_add(tf.zeros([3]), [[1]], tf.constant([1], dtype=tf.int32))
