"""``tf.config``: ``run_functions_eagerly`` as the tensorflow.org tf.function guide uses it
("Debugging": the Python body, and so its ``print``, runs on every call), device listing."""
import numpy as np

import minitf as tf


def test_run_functions_eagerly_runs_the_python_body_every_call():
    calls = []

    @tf.function
    def mse(y_true, y_pred):
        calls.append(1)                       # a Python side effect: only at trace time
        return tf.reduce_mean(tf.square(y_pred - y_true))

    y_true = tf.constant([1.0, 2.0, 4.0])
    y_pred = tf.constant([1.5, 2.0, 3.0])
    expected = np.mean((np.array([1.5, 2.0, 3.0]) - [1.0, 2.0, 4.0]) ** 2)
    for _ in range(3):
        np.testing.assert_allclose(float(mse(y_true, y_pred)), expected, rtol=1e-6)
    assert len(calls) == 1
    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly()
        for _ in range(3):
            np.testing.assert_allclose(float(mse(y_true, y_pred)), expected, rtol=1e-6)
        assert len(calls) == 4
    finally:
        tf.config.run_functions_eagerly(False)
    assert not tf.config.functions_run_eagerly()
    mse(y_true, y_pred)
    assert len(calls) == 4                     # traced again: the plan replays


def test_device_listing_on_the_cpu_backends():
    cpus = tf.config.list_physical_devices("CPU")
    assert [d.name for d in cpus] == ["/physical_device:CPU:0"]
    if tf.get_backend() != "cupy":
        assert tf.config.list_physical_devices("GPU") == []


def test_tensors_name_their_device():
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    if tf.get_backend() != "cupy":
        assert tf.constant(1.0).device == cpu and tf.Variable([1.0]).device == cpu
