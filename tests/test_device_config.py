"""TF 2 device and runtime settings that scripts call: ``tf.device``, visible devices, soft
placement, determinism, threading, logger, autograph verbosity and ``tf.test`` GPU queries.
On minitf they are accepted and recorded; only the intra-op thread count acts (numpy's BLAS)."""
import logging

import numpy as np
import pytest

import minitf as tf

ON_GPU = tf.get_backend() == "cupy"


@pytest.mark.parametrize("name", ["/CPU:0", "/GPU:0", "cpu", "/device:GPU:1",
                                  "/job:localhost/replica:0/task:0/device:CPU:0", None])
def test_device_scope_changes_nothing(name):
    x = tf.constant([1.0, 2.0])
    with tf.device(name):
        y = x * 3.0
        assert tf.executing_eagerly()
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])
    assert y.device == x.device


def test_device_scope_inside_a_function_and_bad_names():
    @tf.function
    def f(x):
        with tf.device("/GPU:0"):
            assert not tf.executing_eagerly()
            return x + 1.0

    np.testing.assert_array_equal(f(tf.constant([1.0])).numpy(), [2.0])
    with pytest.raises(TypeError, match="device name"):
        with tf.device(0):
            pass


def test_experimental_device_aliases():
    exp = tf.config.experimental
    assert exp.list_physical_devices is tf.config.list_physical_devices
    assert exp.list_logical_devices is tf.config.list_logical_devices
    assert exp.set_visible_devices is tf.config.set_visible_devices
    assert [d.name for d in exp.list_physical_devices("CPU")] == ["/physical_device:CPU:0"]


def test_visible_devices_are_recorded_and_returned():
    everything = tf.config.list_physical_devices()
    cpus = tf.config.list_physical_devices("CPU")
    assert tf.config.get_visible_devices() == everything
    try:
        tf.config.set_visible_devices([], "GPU")   # the usual "hide the GPUs" call
        assert tf.config.get_visible_devices("GPU") == []
        assert tf.config.get_visible_devices() == cpus
        tf.config.set_visible_devices(cpus[0])     # one device, every type
        assert tf.config.get_visible_devices() == cpus
        with pytest.raises(ValueError, match="unknown device"):
            tf.config.set_visible_devices([tf.config.PhysicalDevice("/physical_device:GPU:7",
                                                                    "GPU")])
        with pytest.raises(ValueError, match="device_type"):
            tf.config.set_visible_devices([], "TPU")
        # Recorded only: ops still run, on the same device as before.
        assert tf.constant(1.0).device.endswith("GPU:0" if ON_GPU else "CPU:0")
    finally:
        tf.config.set_visible_devices(everything)
    assert tf.config.get_visible_devices() == everything


def test_soft_placement_and_determinism_are_recorded():
    assert tf.config.get_soft_device_placement() is True
    try:
        tf.config.set_soft_device_placement(False)
        assert tf.config.get_soft_device_placement() is False
    finally:
        tf.config.set_soft_device_placement(True)
    tf.config.experimental.enable_op_determinism()
    assert tf.config._op_determinism_enabled()
    tf.config.experimental.set_memory_growth(tf.config.list_physical_devices("CPU")[0], True)
    assert tf.config.experimental.get_memory_growth(None) is True


def test_threading_settings():
    th = tf.config.threading
    assert th.get_intra_op_parallelism_threads() == 0
    assert th.get_inter_op_parallelism_threads() == 0
    try:
        th.set_inter_op_parallelism_threads(2)
        assert th.get_inter_op_parallelism_threads() == 2
        th.set_intra_op_parallelism_threads(1)
        assert th.get_intra_op_parallelism_threads() == 1
        with pytest.raises(ValueError, match="negative"):
            th.set_intra_op_parallelism_threads(-1)
    finally:
        th.set_intra_op_parallelism_threads(0)
        th.set_inter_op_parallelism_threads(0)
    assert th.get_intra_op_parallelism_threads() == 0


@pytest.mark.skipif(ON_GPU, reason="BLAS threads matter on the numpy backend only")
def test_intra_op_threads_set_the_blas_and_kernel_thread_count():
    pytest.importorskip("threadpoolctl")
    from minitf import kernel_threads, openblas
    before = openblas.threads()
    if before is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS minitf can read")
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        assert openblas.threads() == 1 and kernel_threads.count() == 1
        x = tf.constant(np.arange(6.0).reshape(2, 3))
        np.testing.assert_allclose(tf.matmul(x, x, transpose_b=True).numpy(),
                                   [[5.0, 14.0], [14.0, 50.0]])
    finally:
        tf.config.threading.set_intra_op_parallelism_threads(0)
    assert openblas.threads() == before


def test_logger_autograph_and_log_device_placement():
    logger = tf.get_logger()
    assert logger is logging.getLogger("minitf")
    level = logger.level
    try:
        logger.setLevel("ERROR")
        assert logging.getLogger("minitf").getEffectiveLevel() == logging.ERROR
    finally:
        logger.setLevel(level)
    assert tf.autograph.set_verbosity(0) is None
    assert tf.autograph.set_verbosity(10, alsologtostdout=True) is None
    assert tf.debugging.set_log_device_placement(True) is None

    def f(x):
        return x + 1
    assert tf.autograph.experimental.do_not_convert(f) is f
    assert tf.autograph.experimental.do_not_convert()(f) is f


def test_gpu_queries():
    assert tf.test.is_gpu_available() is ON_GPU
    assert tf.test.is_gpu_available(cuda_only=True) is ON_GPU
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if ON_GPU else "")
