"""Training data kept on the device (cupy), batched there in a ``BatchIterator``'s exact order.

On a GPU, copying every batch from host memory costs a transfer per step and ties the step to
the host. ``DeviceBatches`` uploads the data set once (Fashion-MNIST: 47 MB as uint8) and
gathers each batch on the device. The order comes from a ``BatchIterator`` over sample indices
with the same seed and options, so the stream, its ``state_dict`` and an exact resume are the
same as the host iterator's; per step only the batch's indices (8 bytes per sample) go up.
"""
import numpy as np

from .. import backend as B

__all__ = ["DeviceBatches"]


class DeviceBatches:
    """``(x_batch, y_batch)`` backend arrays, in the order of ``BatchIterator(x, y, ...)``.

    Args: as ``datasets.BatchIterator`` (``normalize`` runs on the device batch; no prefetch
    thread: gathering on the device does not block the host).
    """

    def __init__(self, x, y, batch_size, shuffle=True, seed=0, drop_remainder=False,
                 normalize=None):
        from datasets import BatchIterator
        x, y = np.asarray(x), np.asarray(y)
        n = len(x)
        self._order = BatchIterator(np.arange(n, dtype=np.int64), np.zeros(n, np.uint8),
                                    batch_size, shuffle=shuffle, seed=seed,
                                    drop_remainder=drop_remainder)
        if len(y) != n:
            raise ValueError(f"x and y need the same number of samples, got shapes {x.shape} "
                             f"and {y.shape}")
        self._x, self._y = B.from_numpy(x), B.from_numpy(y)
        self._normalize = normalize

    def __next__(self):
        index, _ = next(self._order)
        key = B.from_numpy(index)
        xb, yb = self._x[key], self._y[key]
        if self._normalize is not None:
            xb = self._normalize(xb)
        return xb, yb

    def __iter__(self):
        return self

    def epoch_batches(self):
        """The remaining batches of the current epoch (see ``BatchIterator.epoch_batches``)."""
        start = self._order.epoch
        while self._order.epoch == start:
            yield next(self)

    def __len__(self):
        return len(self._order)

    epoch = property(lambda self: self._order.epoch)
    batch_index = property(lambda self: self._order.batch_index)
    seed = property(lambda self: self._order.seed)
    num_samples = property(lambda self: self._order.num_samples)

    def state_dict(self):
        return self._order.state_dict()

    def load_state_dict(self, state):
        self._order.load_state_dict(state)

    def close(self):
        self._order.close()
