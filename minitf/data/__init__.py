"""``tf.data``: ``Dataset`` input pipelines (see ``dataset.py`` and ``transforms.py``).

    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000).batch(32)
    model.fit(ds, epochs=5)
"""
from types import SimpleNamespace as _NS

from .dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset,  # noqa: F401
                      TensorSpec)
from .transforms import (DatasetSpec, choose_from_datasets, experimental_scan,
                         sample_from_datasets)


def _cardinality(dataset):
    return dataset.cardinality()


def _get_single_element(dataset):
    return dataset.get_single_element()


experimental = _NS(AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY,
                   UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY, cardinality=_cardinality,
                   scan=experimental_scan, choose_from_datasets=choose_from_datasets,
                   sample_from_datasets=sample_from_datasets,
                   get_single_element=_get_single_element,
                   take_while=lambda predicate: lambda ds: ds.take_while(predicate),
                   unbatch=lambda: lambda ds: ds.unbatch(),
                   enumerate_dataset=lambda start=0: lambda ds: ds.enumerate(start))

__all__ = ["Dataset", "DatasetSpec", "TensorSpec", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY", "experimental"]
