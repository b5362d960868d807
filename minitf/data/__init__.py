"""``tf.data``: ``Dataset`` input pipelines (see ``dataset.py``).

    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000).batch(32)
    model.fit(ds, epochs=5)
"""
from types import SimpleNamespace as _NS

from .dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset,  # noqa: F401
                      TensorSpec)


def _cardinality(dataset):
    return dataset.cardinality()


experimental = _NS(AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY,
                   UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY, cardinality=_cardinality)

__all__ = ["Dataset", "TensorSpec", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY",
           "experimental"]
