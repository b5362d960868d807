"""``tf.data``: ``Dataset`` input pipelines (see ``dataset.py`` and ``transforms.py``).

    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000).batch(32)
    model.fit(ds, epochs=5)
"""
from types import SimpleNamespace as _NS

from .dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset,  # noqa: F401
                      TensorSpec)
from .transforms import (DatasetSpec, choose_from_datasets, experimental_scan,
                         sample_from_datasets)
from .grouping import bucket_by_sequence_length, group_by_window
from .options import (AutoShardPolicy, AutotuneOptions, DistributeOptions,  # noqa: F401
                      OptimizationOptions, Options, ThreadingOptions)
from .sources import Counter
from .readers import TextLineDataset
from .csv import CsvDataset, make_csv_dataset
from . import resampling as _resampling, persistence as _persistence
from . import batching_more as _batching_more, snapshot as _snapshot
from . import experimental_more as _more
from .iterator import Iterator, NumpyIterator  # noqa: F401
from .optional import IteratorSpec, Optional as _Optional  # noqa: F401


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
                   enumerate_dataset=lambda start=0: lambda ds: ds.enumerate(start),
                   Counter=Counter, AutoShardPolicy=AutoShardPolicy,
                   DistributeOptions=DistributeOptions, OptimizationOptions=OptimizationOptions,
                   ThreadingOptions=ThreadingOptions, AutotuneOptions=AutotuneOptions,
                   ignore_errors=lambda log_warning=False: lambda ds: ds.ignore_errors(
                       log_warning),
                   unique=lambda: lambda ds: ds.unique(),
                   group_by_window=lambda key_func, reduce_func, window_size=None,
                   window_size_func=None: lambda ds: group_by_window(
                       ds, key_func, reduce_func, window_size, window_size_func),
                   bucket_by_sequence_length=lambda *args, **kwargs: lambda ds:
                   bucket_by_sequence_length(ds, *args, **kwargs),
                   rejection_resample=_resampling.experimental_rejection_resample,
                   assert_cardinality=_resampling.assert_cardinality,
                   shuffle_and_repeat=_resampling.shuffle_and_repeat,
                   map_and_batch=_resampling.map_and_batch,
                   pad_to_cardinality=_resampling.pad_to_cardinality,
                   save=_persistence.experimental_save, load=_persistence.experimental_load,
                   CsvDataset=CsvDataset, make_csv_dataset=make_csv_dataset,
                   Optional=_Optional, get_next_as_optional=lambda iterator:
                   iterator.get_next_as_optional(),
                   dense_to_ragged_batch=_batching_more.dense_to_ragged_batch,
                   dense_to_sparse_batch=_batching_more.dense_to_sparse_batch,
                   **{name: getattr(_more, name) for name in _more.__all__})

del _snapshot  # imported for the Dataset methods it adds

__all__ = ["Dataset", "DatasetSpec", "TensorSpec", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY", "Options", "ThreadingOptions", "TextLineDataset",
           "Iterator", "IteratorSpec", "NumpyIterator", "experimental"]
