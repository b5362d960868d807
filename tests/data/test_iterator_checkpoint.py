"""``tf.train.Checkpoint`` of a dataset iterator: saves how many elements were read and
restores that position (as in the tf.data guide, https://www.tensorflow.org/guide/data,
"Iterator checkpointing"); expected values come from the data themselves."""
import numpy as np
import pytest

import minitf as tf


def test_restore_returns_to_the_saved_position_of_a_mapped_pipeline(tmp_path):
    iterator = iter(tf.data.Dataset.range(10).map(lambda x: x * 3))
    ckpt = tf.train.Checkpoint(iterator=iterator)
    assert [int(next(iterator)) for _ in range(3)] == [0, 3, 6]
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert [int(next(iterator)) for _ in range(4)] == [9, 12, 15, 18]
    ckpt.restore(path)
    assert [int(x) for x in iterator] == [9, 12, 15, 18, 21, 24, 27]


def test_position_is_saved_as_an_int64_variable_and_restores_into_a_fresh_iterator(tmp_path):
    dataset = tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(6, 2)).batch(2)
    iterator = iter(dataset)
    next(iterator)
    next(iterator)
    assert iterator._position.dtype == tf.int64 and iterator._position.numpy() == 2
    path = tf.train.Checkpoint(it=iterator).write(str(tmp_path / "it"))
    reader = tf.train.load_checkpoint(path)
    assert reader.get_variable_to_shape_map()["it/_position"] == []
    assert reader.get_variable_to_dtype_map()["it/_position"] == tf.int64
    assert int(reader.get_tensor("it/_position")) == 2
    fresh = iter(dataset)
    tf.train.Checkpoint(it=fresh).read(path)
    np.testing.assert_array_equal(next(fresh).numpy(), [[8, 9], [10, 11]])
    with pytest.raises(StopIteration):
        next(fresh)


def test_elements_read_by_a_traced_step_and_pushed_back_are_counted_once(tmp_path):
    iterator = iter(tf.data.Dataset.range(10).batch(4))

    @tf.function
    def total(iterator):
        return tf.reduce_sum(next(iterator))

    assert [int(total(iterator)) for _ in range(2)] == [6, 22]
    ckpt = tf.train.Checkpoint(iterator=iterator)
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert int(total(iterator)) == 17     # the partial batch [8, 9]: pushed back, retraced
    ckpt.restore(path)
    assert int(total(iterator)) == 17
    assert iterator._position.numpy() == 3


def test_iterator_position_is_not_a_trainable_variable():
    module = tf.Module()
    module.iterator = iter(tf.data.Dataset.range(3))
    assert module.trainable_variables == ()


def test_moving_to_a_negative_position_is_refused():
    iterator = iter(tf.data.Dataset.range(3))
    with pytest.raises(ValueError, match="Iterator position: cannot move to -1; expected a "
                                         "non-negative"):
        iterator._position.assign(-1)
