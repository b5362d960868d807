"""Callbacks that write files beside training: ``TensorBoard`` and ``BackupAndRestore``.

``TensorBoard`` writes event files with tensorboardX (a maintained writer of TensorBoard's
format): ``<log_dir>/train`` gets ``epoch_<metric>`` scalars (and ``batch_<metric>`` every
``update_freq`` batches), ``<log_dir>/validation`` the ``val_`` ones under the same names, as
Keras does, so TensorBoard overlays training and validation curves. View them with
``tensorboard --logdir <log_dir>``.
"""
import itertools
import json
import os

from .. import backend as B
from .callbacks import Callback, _scalar

__all__ = ["TensorBoard", "BackupAndRestore"]

_FILE_COUNTER = itertools.count()

#: Log keys that are positions, not measurements (train.py's runner puts them in its logs).
_NOT_SCALARS = frozenset({"epoch", "step", "batch", "size"})


class TensorBoard(Callback):
    """Scalars (and optionally weight histograms) for TensorBoard.

    Args:
        log_dir: directory of the event files (``train/`` and ``validation/`` below it).
        histogram_freq: every this many epochs, a histogram of each weight (0: never).
        update_freq: ``"epoch"``, or an integer: also write ``batch_<metric>`` every that many
            training batches (at the global batch count).
        write_steps_per_second: also write ``epoch_steps_per_second``.

    Graphs, images, profiling and embeddings (Keras' other options) are not written; their
    arguments are accepted only at their "off" values.
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None):
        if write_images or profile_batch or embeddings_freq or embeddings_metadata:
            raise NotImplementedError("TensorBoard: write_images, profile_batch and "
                                      "embeddings are not supported (scalars and weight "
                                      "histograms are)")
        if update_freq == "batch":
            update_freq = 1
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(f"TensorBoard: update_freq must be 'epoch', 'batch' or a positive "
                             f"integer, got {update_freq!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = int(histogram_freq)
        self.write_graph = write_graph  # no graph to write: minitf runs eagerly or traced
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = update_freq
        self._writers = {}
        self._train_batches = 0
        self._epoch_start = None
        self._epoch_batches = 0
        self._purge_step = None
        self._in_fit = False

    def _writer(self, kind):
        writer = self._writers.get(kind)
        if writer is None:
            from tensorboardX import SummaryWriter
            # A unique suffix: two writers opened in the same second get different files.
            suffix = f".{os.getpid()}.{next(_FILE_COUNTER)}.v2"
            writer = SummaryWriter(os.path.join(self.log_dir, kind), flush_secs=30,
                                   purge_step=self._purge_step, filename_suffix=suffix)
            self._writers[kind] = writer
        return writer

    def on_train_begin(self, logs=None):
        self._in_fit = True
        initial = int((self.params or {}).get("initial_epoch") or 0)
        # A resumed run hides what an interrupted one wrote from this epoch on.
        self._purge_step = initial if initial > 0 else None
        self._train_batches = int((self.params or {}).get("initial_step") or 0)

    def on_epoch_begin(self, epoch, logs=None):
        import time
        self._epoch_start = time.perf_counter()
        self._epoch_batches = 0

    def on_train_batch_end(self, batch, logs=None):
        self._train_batches += 1
        self._epoch_batches += 1
        if self.update_freq != "epoch" and self._train_batches % self.update_freq == 0:
            writer = self._writer("train")
            for name, value in _scalars(logs):
                writer.add_scalar(f"batch_{name}", value, self._train_batches)

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        opt = getattr(self.model, "optimizer", None)
        if opt is not None and hasattr(opt, "learning_rate") and "learning_rate" not in logs:
            try:
                logs["learning_rate"] = float(opt.learning_rate)
            except (TypeError, ValueError):
                pass
        if self.write_steps_per_second and self._epoch_start is not None:
            import time
            seconds = time.perf_counter() - self._epoch_start
            logs["steps_per_second"] = self._epoch_batches / max(seconds, 1e-9)
        train, val = self._writer("train"), None
        for name, value in _scalars(logs):
            if name.startswith("val_"):
                val = val or self._writer("validation")
                val.add_scalar(f"epoch_{name[4:]}", value, epoch)
            else:
                train.add_scalar(f"epoch_{name}", value, epoch)
        if self.histogram_freq and (epoch + 1) % self.histogram_freq == 0 and self.model:
            for v in getattr(self.model, "weights", []):
                train.add_histogram(v.name.replace(":", "_"), B.to_numpy(v._value), epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_test_end(self, logs=None):
        if self._in_fit:
            return
        opt = getattr(self.model, "optimizer", None)
        step = int(opt.iterations.numpy()) if opt is not None else 0
        writer = self._writer("validation")
        for name, value in _scalars(logs):
            writer.add_scalar(f"evaluation_{name}_vs_iterations", value, step)
        self.close()  # a later evaluate or fit opens a new file

    def on_train_end(self, logs=None):
        self._in_fit = False
        self.close()

    def close(self):
        """Flush and close the event files (also safe to call twice)."""
        for writer in self._writers.values():
            writer.close()
        self._writers = {}


def _scalars(logs):
    for name, value in (logs or {}).items():
        if name in _NOT_SCALARS:
            continue
        value = _scalar(value)
        if value is not None:
            yield name, value


class BackupAndRestore(Callback):
    """Fault tolerance for ``fit``: after every epoch, the model weights, the optimizer state
    and the epoch go to ``backup_dir``; a ``fit`` started again with the same callback (after
    a crash or kill) restores them and continues with the next epoch. The backup is deleted
    when training finishes (unless ``delete_checkpoint=False``).

    Every file is written to a temporary name and renamed, and the epoch record goes last, so
    a kill at any moment leaves the previous complete backup (``double_checkpoint`` is
    therefore not needed and has no effect). Only ``save_freq="epoch"`` is supported.
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False,
                 delete_checkpoint=True):
        if not backup_dir:
            raise ValueError("BackupAndRestore: backup_dir is required")
        if save_freq != "epoch":
            raise NotImplementedError(f"BackupAndRestore: only save_freq='epoch' is "
                                      f"supported, got {save_freq!r}")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint = double_checkpoint
        self.delete_checkpoint = delete_checkpoint
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._optimizer_path = os.path.join(self.backup_dir, "optimizer.h5")
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")

    def on_train_begin(self, logs=None):
        if not os.path.exists(self._metadata_path):
            return
        if not getattr(self.model, "built", True):
            raise ValueError("BackupAndRestore: the model must be built before fit() to "
                             "restore a backup (call it on a batch or use keras.Input)")
        with open(self._metadata_path, encoding="utf-8") as fh:
            metadata = json.load(fh)
        self.model.load_weights(self._weights_path)
        opt = getattr(self.model, "optimizer", None)
        if opt is not None and hasattr(opt, "set_state") and os.path.exists(
                self._optimizer_path):
            opt.set_state(_read_state(self._optimizer_path))
        object.__setattr__(self.model, "_initial_epoch", int(metadata["epoch"]))

    def on_epoch_end(self, epoch, logs=None):
        os.makedirs(self.backup_dir, exist_ok=True)
        tmp = os.path.join(self.backup_dir, "tmp-latest.weights.h5")
        self.model.save_weights(tmp, overwrite=True)
        os.replace(tmp, self._weights_path)
        opt = getattr(self.model, "optimizer", None)
        if opt is not None and hasattr(opt, "get_state"):
            _write_state(self._optimizer_path, opt.get_state())
        text = json.dumps({"epoch": epoch + 1})
        tmp = self._metadata_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, self._metadata_path)

    def on_train_end(self, logs=None):
        if not self.delete_checkpoint:
            return
        for path in (self._metadata_path, self._weights_path, self._optimizer_path):
            if os.path.exists(path):
                os.unlink(path)
        try:
            os.rmdir(self.backup_dir)
        except OSError:  # other files in it: leave the directory
            pass


def _write_state(path, state):
    """An optimizer's ``get_state()`` dict (arrays, numbers, strings) as HDF5, atomically."""
    import h5py
    import numpy as np
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as f:
        for i, (key, value) in enumerate(state.items()):
            if isinstance(value, (str, int, float, bool)):
                f.attrs[f"{i}:{key}"] = value
            else:
                ds = f.create_dataset(str(i), data=np.asarray(value))
                ds.attrs["key"] = key
    os.replace(tmp, path)


def _read_state(path):
    import h5py
    out = {}
    with h5py.File(path, "r") as f:
        entries = []
        for name, value in f.attrs.items():
            index, key = name.split(":", 1)
            if isinstance(value, bytes):
                value = value.decode()
            elif hasattr(value, "item"):
                value = value.item()
            entries.append((int(index), key, value))
        for name, ds in f.items():
            entries.append((int(name), str(ds.attrs["key"]), ds[()]))
    for _, key, value in sorted(entries, key=lambda e: e[0]):
        out[key] = value
    return out
