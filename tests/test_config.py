"""``tf.config``: the device lists on the numpy backend and ``run_functions_eagerly`` (TF's
documented debugging switch: a ``tf.function`` body then runs as plain Python on every call)."""
import numpy as np
import pytest

import minitf as tf


def test_device_lists():
    cpus = tf.config.list_physical_devices("CPU")
    assert [d.name for d in cpus] == ["/physical_device:CPU:0"]
    assert cpus[0].device_type == "CPU"
    assert [d.name for d in tf.config.list_logical_devices("cpu")] == ["/device:CPU:0"]
    gpus = tf.config.list_physical_devices("GPU")
    assert (len(gpus) > 0) == (tf.get_backend() == "cupy")
    with pytest.raises(ValueError, match="device_type"):
        tf.config.list_physical_devices("TPU")
    for gpu in gpus:  # pragma: no cover - GPU only
        tf.config.experimental.set_memory_growth(gpu, True)
    with pytest.raises(ValueError, match="grow on demand"):
        tf.config.experimental.set_memory_growth(cpus[0], False)


def test_run_functions_eagerly_runs_the_python_body_each_call():
    calls = []

    @tf.function
    def f(x):
        calls.append(float(x.numpy()))  # .numpy() inside: only possible when run eagerly
        return x * 2.0

    assert not tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly()
        assert float(f(tf.constant(1.5))) == 3.0
        assert float(f(tf.constant(2.5))) == 5.0
        assert calls == [1.5, 2.5]
        assert f.experimental_get_tracing_count() == 0
    finally:
        tf.config.run_functions_eagerly(False)

    @tf.function
    def g(x):
        return x * 3.0

    np.testing.assert_allclose(g(tf.constant([1.0, 2.0])).numpy(), [3.0, 6.0])
    assert g.experimental_get_tracing_count() == 1


def test_tensors_name_their_device():
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    if tf.get_backend() != "cupy":
        assert tf.constant(1.0).device == cpu and tf.Variable([1.0]).device == cpu
