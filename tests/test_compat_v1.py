"""``tf.compat.v1``'s logging and eager switches and ``tf.saved_model``: what TF 2 scripts call
first works, graph-mode and SavedModel calls say what to use instead."""
import logging

import pytest

import minitf as tf


def test_logging_verbosity_sets_minitfs_logger():
    logger = logging.getLogger("minitf")
    before = logger.level
    try:
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
        assert logger.level == logging.ERROR
        assert tf.compat.v1.logging.get_verbosity() == logging.ERROR
    finally:
        logger.setLevel(before)


def test_eager_switches_and_seed():
    tf.compat.v1.enable_eager_execution()
    tf.compat.v1.enable_v2_behavior()
    assert tf.compat.v1.executing_eagerly()
    tf.compat.v1.set_random_seed(4)
    a = tf.random.uniform((3,)).numpy()
    tf.random.set_seed(4)
    assert a.tolist() == tf.random.uniform((3,)).numpy().tolist()
    assert tf.compat.v2 is tf


@pytest.mark.parametrize("call, what", [
    (lambda: tf.compat.v1.disable_eager_execution(), "disable_eager_execution"),
    (lambda: tf.compat.v1.Session(), "Session"),
    (lambda: tf.saved_model.save(object(), "/tmp/x"), "model.keras"),
])
def test_graph_mode_and_saved_model_are_refused_with_directions(call, what):
    with pytest.raises(NotImplementedError, match=what):
        call()
