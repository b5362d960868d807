"""Dataset iterators read inside ``minitf.function``: every call reads the next element.

The pattern is TF's custom-training-loop one ("Custom training with tf.distribute.Strategy",
tensorflow.org: ``train_step(iterator)`` calling ``next(iterator)`` inside ``tf.function``);
the expected values come from the data themselves.
"""
import warnings

import numpy as np
import pytest

import minitf as tf


def _xy(n=10):
    x = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    return tf.data.Dataset.from_tensor_slices((x, np.arange(n)))


def test_next_on_an_iterator_argument_reads_a_new_element_every_call():
    iterator = iter(_xy().batch(2).repeat())

    @tf.function
    def first(iterator):
        x, y = next(iterator)
        return x[0, 0], y[1]

    got = [tuple(float(t) for t in first(iterator)) for _ in range(6)]
    assert got == [(0, 1), (4, 3), (8, 5), (12, 7), (16, 9), (0, 1)]
    assert first.experimental_get_tracing_count() == 1


def test_a_closure_iterator_a_partial_last_batch_and_the_end_of_the_data():
    iterator = iter(tf.data.Dataset.from_tensor_slices(np.arange(5.0, dtype=np.float32))
                    .batch(2))

    @tf.function
    def total():
        return tf.reduce_sum(next(iterator))

    assert [float(total()) for _ in range(3)] == [1.0, 5.0, 4.0]   # (1,) traces its own plan
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        total()
    with pytest.raises(StopIteration):      # outside a function: Python's protocol
        next(iterator)
    with pytest.raises(tf.errors.OutOfRangeError):
        iterator.get_next()


def test_a_training_step_on_an_iterator_matches_the_eager_loop():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32))[:, None]
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(4).repeat()

    def run(step_fn):
        w = tf.Variable(np.zeros((3, 1), np.float32))
        opt = tf.keras.optimizers.SGD(0.1)

        def step(iterator):
            xb, yb = next(iterator)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((xb @ w - yb) ** 2)
            opt.apply_gradients([(tape.gradient(loss, w), w)])
            return loss

        step = step_fn(step)
        iterator = iter(data)
        losses = [float(step(iterator)) for _ in range(7)]
        return losses, w.numpy()

    eager_losses, eager_w = run(lambda f: f)
    traced_losses, traced_w = run(tf.function)
    assert traced_losses == eager_losses
    np.testing.assert_array_equal(traced_w, eager_w)
    assert len(set(eager_losses[:3])) == 3      # three different batches were read


def test_elements_go_back_when_a_guard_sends_the_call_to_another_plan():
    iterator = iter(tf.data.Dataset.from_tensor_slices(
        np.array([1.0, -1.0, 2.0, -3.0, 5.0], np.float32)))

    @tf.function
    def signed(iterator):
        x = next(iterator)
        if x > 0:             # a Python decision on the element: one plan per path
            return x * 10
        return x

    assert [float(signed(iterator)) for _ in range(5)] == [10.0, -1.0, 20.0, -3.0, 50.0]


def test_iterating_a_dataset_inside_the_function_runs_eagerly_and_stays_right():
    data = tf.data.Dataset.range(6).shuffle(6, seed=1)

    @tf.function
    def epoch_order():
        return tf.stack([x for x in data])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        orders = [epoch_order().numpy().tolist() for _ in range(3)]
    same = tf.data.Dataset.range(6).shuffle(6, seed=1)   # a new epoch each iteration
    assert orders == [[int(x) for x in same] for _ in range(3)]
    assert len({tuple(o) for o in orders}) > 1
    assert any(issubclass(w.category, tf.EagerFallbackWarning)
               and "dataset made during the call" in str(w.message) for w in caught)


def test_map_returning_a_list_gives_a_tuple_element():
    # TF's structured_function packs a returned list as a tuple (tf.data guide, `map`).
    data = tf.data.Dataset.from_tensor_slices((np.zeros((3, 2), np.float32),
                                               np.array([0, 1, 0])))
    a, b = next(iter(data.map(lambda x, y: [x + 1, tf.cast(y, tf.float32)])))
    np.testing.assert_array_equal(a.numpy(), [1.0, 1.0])
    assert (b.dtype, float(b)) == (tf.float32, 0.0)


def test_from_generator_converts_to_the_declared_signature():
    # tf.data guide, "Consuming Python generators": values take the signature's dtypes.
    def gen():
        for i in range(3):
            yield np.arange(3, dtype=np.float64) * i, i

    data = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec((3,), tf.float32), tf.TensorSpec((), tf.int64)))
    elements = list(data)
    assert [(x.dtype, y.dtype) for x, y in elements] == [(tf.float32, tf.int64)] * 3
    np.testing.assert_array_equal(elements[2][0].numpy(), [0.0, 2.0, 4.0])
    legacy = tf.data.Dataset.from_generator(lambda: iter([[1, 2], [3]]),
                                            output_types=tf.float32, output_shapes=(None,))
    assert [t.numpy().tolist() for t in legacy] == [[1.0, 2.0], [3.0]]
    assert legacy.element_spec.shape.as_list() == [None]
    wrong = tf.data.Dataset.from_generator(
        lambda: iter([np.zeros(2)]), output_signature=tf.TensorSpec((3,), tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \(2,\).*\(3,\)"):
        list(wrong)
