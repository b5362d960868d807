"""``tf.config``: the devices minitf computes on, and whether ``tf.function`` traces.

    tf.config.list_physical_devices("GPU")   # [] on the numpy backend
    tf.config.run_functions_eagerly(True)    # debug: tf.function bodies run as plain Python

Device placement settings (``tf.device``, ``set_visible_devices``, soft placement) are
accepted and recorded for TF scripts, but change nothing: minitf runs every op on its one
backend (``minitf.set_backend("numpy")`` computes on the CPU, ``"cupy"`` on GPU 0).
"""
import contextlib
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


_settings = {"visible": {}, "soft_placement": True, "determinism": False,
             "intra_op": 0, "inter_op": 0, "blas_limiter": None}


@contextlib.contextmanager
def device(device_name):
    """TF's ``tf.device``: accepts any device name (``"/GPU:0"``, ``"/device:CPU:0"``,
    ``"cpu"``, None) and changes nothing: minitf runs every op on its backend's one device
    (``minitf.set_backend`` chooses numpy on the CPU or cupy on GPU 0)."""
    if device_name is not None and not isinstance(device_name, str):
        raise TypeError(f"tf.device: expected a device name string, got {device_name!r}")
    yield


def set_visible_devices(devices, device_type=None):
    """Record which physical devices (of ``device_type``, or of every type) TF code means to
    use; ``get_visible_devices`` returns them. It does not move computation: minitf runs on
    its backend's device (use ``minitf.set_backend("numpy")`` to compute on the CPU)."""
    _check_type(device_type)
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    known = list_physical_devices()
    for d in devices:
        if d not in known:
            raise ValueError(f"tf.config.set_visible_devices: unknown device {d!r}; pass "
                             f"devices from tf.config.list_physical_devices()")
    kinds = {k for k, _ in _device_types()} if device_type is None else {str(device_type).upper()}
    for kind in kinds:
        _settings["visible"][kind] = [d for d in devices if d.device_type == kind]


def get_visible_devices(device_type=None):
    """The physical devices (of ``device_type``) visible after ``set_visible_devices`` (all of
    them until it is called)."""
    visible = _settings["visible"]
    return [d for d in list_physical_devices(device_type)
            if d.device_type not in visible or d in visible[d.device_type]]


def set_soft_device_placement(enabled):
    """Recorded only: every minitf op runs on the backend's device, so there is no placement
    to fall back from."""
    _settings["soft_placement"] = bool(enabled)


def get_soft_device_placement():
    """The value given to ``set_soft_device_placement`` (True by default, as in TF 2)."""
    return _settings["soft_placement"]


def _enable_op_determinism():
    """Recorded only (``_op_determinism_enabled``): minitf has no alternative deterministic
    kernels to switch to. Seed random ops with ``tf.random.set_seed``."""
    _settings["determinism"] = True


def _op_determinism_enabled():
    return _settings["determinism"]


def _set_intra_op_parallelism_threads(num_threads):
    """Threads one op may use: on the numpy backend this sets numpy's BLAS thread count
    through ``threadpoolctl`` (when installed), which minitf's native kernels follow too
    (``minitf.kernel_threads``). 0 restores the system default."""
    n = int(num_threads)
    if n < 0:
        raise ValueError(f"set_intra_op_parallelism_threads: {n} is negative")
    limiter = _settings["blas_limiter"]
    if limiter is not None:
        limiter.restore_original_limits()
        _settings["blas_limiter"] = None
    _settings["intra_op"] = n
    if n > 0 and B.get_backend() != "cupy":     # numpy and strict run on numpy's BLAS
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            return
        _settings["blas_limiter"] = threadpool_limits(limits=n, user_api="blas")


def _get_intra_op_parallelism_threads():
    """The value last given to ``set_intra_op_parallelism_threads`` (0: system default)."""
    return _settings["intra_op"]


def _set_inter_op_parallelism_threads(num_threads):
    """Recorded only: minitf runs one op at a time."""
    n = int(num_threads)
    if n < 0:
        raise ValueError(f"set_inter_op_parallelism_threads: {n} is negative")
    _settings["inter_op"] = n


def _get_inter_op_parallelism_threads():
    """The value last given to ``set_inter_op_parallelism_threads`` (0: system default)."""
    return _settings["inter_op"]


threading = SimpleNamespace(
    set_intra_op_parallelism_threads=_set_intra_op_parallelism_threads,
    get_intra_op_parallelism_threads=_get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads=_set_inter_op_parallelism_threads,
    get_inter_op_parallelism_threads=_get_inter_op_parallelism_threads)

experimental = SimpleNamespace(set_memory_growth=_set_memory_growth,
                               get_memory_growth=_get_memory_growth,
                               list_physical_devices=list_physical_devices,
                               list_logical_devices=list_logical_devices,
                               set_visible_devices=set_visible_devices,
                               get_visible_devices=get_visible_devices,
                               enable_op_determinism=_enable_op_determinism)


def _is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """``tf.test.is_gpu_available``: True only on the cupy backend with a GPU."""
    return bool(list_physical_devices("GPU"))


def _gpu_device_name():
    """``tf.test.gpu_device_name``: ``"/device:GPU:0"`` on the cupy backend, else ``""``."""
    gpus = list_logical_devices("GPU")
    return gpus[0].name if gpus else ""
