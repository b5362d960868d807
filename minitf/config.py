"""``tf.config``: the parts TF 2 code commonly calls (eager debugging of ``function``, device
listing).

    tf.config.run_functions_eagerly(True)     # every tf.function runs as plain Python
    tf.config.list_physical_devices("GPU")     # [] unless the cupy backend sees a GPU
"""
from collections import namedtuple
from types import SimpleNamespace

from . import backend as B
from .function import functions_run_eagerly, run_functions_eagerly  # noqa: F401

PhysicalDevice = namedtuple("PhysicalDevice", ["name", "device_type"])


def list_physical_devices(device_type=None):
    """The CPU, plus one entry per GPU when the cupy backend is active (TF's names:
    ``/physical_device:GPU:0``)."""
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    if B.get_backend() == "cupy":
        count = B.xp.cuda.runtime.getDeviceCount()
        devices += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(count)]
    if device_type is None:
        return devices
    return [d for d in devices if d.device_type == str(device_type).upper()]


def set_memory_growth(device, enable):
    """Accepted for compatibility: cupy's memory pool already grows on demand."""


list_logical_devices = list_physical_devices
experimental = SimpleNamespace(list_physical_devices=list_physical_devices,
                               set_memory_growth=set_memory_growth)
