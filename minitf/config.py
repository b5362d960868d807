"""``tf.config``: the devices minitf computes on, and whether ``tf.function`` traces.

    tf.config.list_physical_devices("GPU")   # [] on the numpy backend
    tf.config.run_functions_eagerly(True)    # debug: tf.function bodies run as plain Python
"""
from collections import namedtuple
from types import SimpleNamespace

from . import backend as B

PhysicalDevice = namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = namedtuple("LogicalDevice", ["name", "device_type"])

_run_eagerly = [False]


def _device_types():
    types = [("CPU", 0)]
    if B.get_backend() == "cupy":  # pragma: no cover - GPU only
        import cupy
        types += [("GPU", i) for i in range(cupy.cuda.runtime.getDeviceCount())]
    return types


def _check_type(device_type):
    if device_type is not None and str(device_type).upper() not in ("CPU", "GPU"):
        raise ValueError(f"tf.config: unknown device_type {device_type!r}; minitf has 'CPU' "
                         "and, on the cupy backend, 'GPU'")


def list_physical_devices(device_type=None):
    """The CPU, and the GPUs when the cupy backend is active (``device_type`` filters)."""
    _check_type(device_type)
    return [PhysicalDevice(f"/physical_device:{kind}:{i}", kind) for kind, i in _device_types()
            if device_type is None or kind == str(device_type).upper()]


def list_logical_devices(device_type=None):
    """The devices ops can run on, named as TF names them (``/device:GPU:0``)."""
    _check_type(device_type)
    return [LogicalDevice(f"/device:{kind}:{i}", kind) for kind, i in _device_types()
            if device_type is None or kind == str(device_type).upper()]


def run_functions_eagerly(run_eagerly):
    """With True, every ``tf.function`` runs its Python body on each call (no tracing, no
    replay), so prints and ``.numpy()`` work inside it: a debugging switch, as in TF."""
    _run_eagerly[0] = bool(run_eagerly)


def functions_run_eagerly():
    """Whether ``run_functions_eagerly(True)`` is in effect."""
    return _run_eagerly[0]


def _set_memory_growth(device, enable):
    if not enable:
        raise ValueError("tf.config.experimental.set_memory_growth: minitf's memory pools "
                         "always grow on demand; preallocating all device memory is not "
                         "supported")


def _get_memory_growth(device):
    return True


experimental = SimpleNamespace(set_memory_growth=_set_memory_growth,
                               get_memory_growth=_get_memory_growth)
