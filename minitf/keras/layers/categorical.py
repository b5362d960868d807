"""Categorical preprocessing layers of Keras 3: CategoryEncoding, Discretization,
IntegerLookup (integer vocabularies) and Hashing (integer inputs).

The lookups are registered ops without gradients (integer outputs), so they run inside
``minitf.function`` traces like any other op. Vocabularies and bin boundaries are op
attributes: a function traced before ``adapt`` keeps the old ones (retrace it).
"""
import numpy as np

from ... import backend as B
from ... import dtypes
from ...ops import array_ops, math_ops, reduce_ops
from ...ops.registry import InvalidArgumentError, apply, defop
from ...tensor import Tensor
from .base import Layer
from .farmhash import fingerprint64_of_ints
from .preprocessing import _host_batches

_MODES = ("int", "one_hot", "multi_hot", "count")


# --- ops -----------------------------------------------------------------------------------------

def _token_check_forward(x, depth, layer):
    """``x`` unchanged, after checking ``0 <= x < depth``."""
    xp = B.xp
    if x.size and bool(((x < 0) | (x >= depth)).any()):
        bad = B.to_numpy(x[(x < 0) | (x >= depth)])
        raise InvalidArgumentError(
            f"{layer} (category_token_check): input values must be in the range 0 <= values < "
            f"{depth}, got "
            f"{bad[:5].tolist()}")
    return xp.asarray(x)


_token_check = defop("category_token_check", _token_check_forward, type="CheckNumerics",
                     samples=lambda: [((np.array([[0, 2], [1, 1]]),),
                                       {"depth": 3, "layer": "CategoryEncoding"})])


def _bucketize_forward(x, boundaries):
    xp = B.xp
    edges = xp.asarray(np.asarray(boundaries, dtype=np.float64))
    return xp.searchsorted(edges, x.astype(np.float64), side="right").astype(np.int64)


_bucketize = defop("bucketize", _bucketize_forward, type="Bucketize", samples=lambda: [
    ((np.array([[-1.5, 0.0, 0.5], [1.0, 2.0, 3.5]]),), {"boundaries": (0.0, 1.0, 2.0)})])


def _oov_index(values, num_oov, start):
    """The OOV index of each (host int64) value: ``value mod num_oov`` after the OOV start,
    as Keras does for integer vocabularies."""
    return np.mod(values, num_oov) + start


def _lookup_forward(x, keys, num_oov, oov_start, mask_token):
    """Index of each value of ``x`` in ``keys`` (vocabulary order, the first index after the
    special ones at ``len(special)``), an OOV index when absent, 0 for the mask token."""
    host = np.asarray(B.to_numpy(x)).astype(np.int64)
    keys_arr = np.asarray(keys, np.int64)
    first = oov_start + num_oov
    out = np.empty(host.shape, np.int64)
    if keys_arr.size:
        order = np.argsort(keys_arr, kind="stable")
        sorted_keys = keys_arr[order]
        pos = np.clip(np.searchsorted(sorted_keys, host), 0, sorted_keys.size - 1)
        found = sorted_keys[pos] == host
        out[...] = order[pos] + first
    else:
        found = np.zeros(host.shape, bool)
    missing = ~found
    if missing.any():
        if num_oov == 0:
            raise InvalidArgumentError(
                f"IntegerLookup: values {np.unique(host[missing])[:5].tolist()} are not in the "
                f"vocabulary and num_oov_indices is 0")
        out[missing] = _oov_index(host[missing], num_oov, oov_start)
    if mask_token is not None:
        out[host == mask_token] = 0
    return B.from_numpy(out)


_lookup = defop("integer_lookup", _lookup_forward, type="LookupTableFindV2", samples=lambda: [
    ((np.array([[12, 7, 42], [0, 36, 36]]),),
     {"keys": (12, 36, 42), "num_oov": 2, "oov_start": 1, "mask_token": 0})])


def _invert_forward(x, tokens, oov_token, dtype):
    """The token of each index of ``x`` (``oov_token`` for indices out of range)."""
    host = np.asarray(B.to_numpy(x)).astype(np.int64)
    table = np.asarray(tokens, np.int64)
    inside = (host >= 0) & (host < table.size)
    out = np.where(inside, table[np.clip(host, 0, max(table.size - 1, 0))] if table.size
                   else oov_token, oov_token)
    return B.from_numpy(out.astype(dtype))


_invert = defop("integer_lookup_invert", _invert_forward, type="LookupTableFindV2",
                samples=lambda: [((np.array([[0, 1, 2], [3, 4, -1]]),),
                                  {"tokens": (-1, 12, 36, 42), "oov_token": -1,
                                   "dtype": np.dtype("int64")})])


def _hash_forward(x, num_bins, mask_value):
    host = np.asarray(B.to_numpy(x)).astype(np.int64)
    hashed = fingerprint64_of_ints(host)
    if mask_value is None or num_bins == 1:
        out = (hashed % np.uint64(num_bins)).astype(np.int64)
    else:
        out = (hashed % np.uint64(num_bins - 1)).astype(np.int64) + 1
        out[host == mask_value] = 0
    return B.from_numpy(out)


_hash = defop("hash_bucket", _hash_forward, type="StringToHashBucketFast", samples=lambda: [
    ((np.array([[3, 12, -5], [0, 1000, 7]]),), {"num_bins": 5, "mask_value": 0})])


# --- shared helpers ------------------------------------------------------------------------------

def _check_mode(layer, output_mode, modes=_MODES):
    if output_mode not in modes:
        raise ValueError(f"{type(layer).__name__}: output_mode must be one of {modes}, got "
                         f"{output_mode!r}")
    return output_mode


def _check_sparse(layer, sparse):
    if sparse:
        raise NotImplementedError(f"{type(layer).__name__}: sparse=True outputs are not "
                                  f"supported")
    return False


def _as_tensor(inputs):
    if isinstance(inputs, Tensor):
        return inputs
    from ...ops.convert import convert_to_tensor
    return convert_to_tensor(inputs)


def encode_categorical(indices, depth, output_mode, dtype, count_weights=None, layer="encode"):
    """``indices`` (integers in ``[0, depth)``) encoded as Keras' ``one_hot``, ``multi_hot``
    (1 for every index in a sample) or ``count`` (occurrences, weighted by
    ``count_weights``); rank-1 inputs are one sample for ``multi_hot``/``count``."""
    if output_mode == "int":
        return indices
    indices = apply(_token_check.op, (indices,), {"depth": int(depth), "layer": layer})
    ndim = len(indices._value.shape)
    if ndim == 0:
        indices = array_ops.reshape(indices, (1,))
        ndim = 1
    if output_mode == "one_hot":
        if ndim > 1 and indices._value.shape[-1] == 1:
            indices = array_ops.reshape(indices, tuple(indices._value.shape[:-1]))
        return array_ops.one_hot(indices, depth, dtype=dtype)
    if ndim > 2:
        raise ValueError(f"{layer}: output_mode={output_mode!r} takes inputs of rank at most "
                         f"2, got shape {tuple(indices._value.shape)}")
    axis = 1 if ndim > 1 else 0
    if count_weights is not None:
        count_weights = _as_tensor(count_weights)
        if tuple(count_weights._value.shape) != tuple(indices._value.shape):
            raise InvalidArgumentError(f"{layer}: count_weights of shape "
                                       f"{tuple(count_weights._value.shape)} must have the "
                                       f"shape of the inputs {tuple(indices._value.shape)}")
        if output_mode != "count":
            raise ValueError(f"{layer}: count_weights is only for output_mode='count'")
        hot = array_ops.one_hot(indices, depth, dtype=count_weights.dtype)
        return reduce_ops.reduce_sum(hot * array_ops.expand_dims(count_weights, -1), axis=axis)
    hot = array_ops.one_hot(indices, depth, dtype=dtype)
    if output_mode == "multi_hot":
        return reduce_ops.reduce_max(hot, axis=axis)
    return reduce_ops.reduce_sum(hot, axis=axis)


def _int_inputs(layer, inputs):
    inputs = _as_tensor(inputs)
    if not inputs.dtype.is_integer:
        raise TypeError(f"{type(layer).__name__}: inputs must be integers, got "
                        f"{inputs.dtype.name}")
    return inputs


# --- CategoryEncoding ----------------------------------------------------------------------------

class CategoryEncoding(Layer):
    """Encode integer features in ``[0, num_tokens)`` as ``"multi_hot"`` (default),
    ``"one_hot"`` or ``"count"`` vectors of length ``num_tokens``.

        CategoryEncoding(num_tokens=4, output_mode="one_hot")([3, 2, 0, 1])
        # [[0, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
    """

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if num_tokens is None:
            raise ValueError("CategoryEncoding: num_tokens must be set")
        if int(num_tokens) != num_tokens or num_tokens < 1:
            raise ValueError(f"CategoryEncoding: num_tokens must be >= 1, got {num_tokens!r}")
        self.num_tokens = int(num_tokens)
        self.output_mode = _check_mode(self, output_mode, ("one_hot", "multi_hot", "count"))
        self.sparse = _check_sparse(self, sparse)

    def call(self, inputs, count_weights=None):
        return encode_categorical(inputs, self.num_tokens, self.output_mode,
                                  self._compute_dtype, count_weights, layer="CategoryEncoding")

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if not shape:
            return (self.num_tokens,)
        if self.output_mode == "one_hot":
            if len(shape) > 1 and shape[-1] == 1:
                shape = shape[:-1]
            return shape + (self.num_tokens,)
        return shape[:-1] + (self.num_tokens,)

    def compute_output_spec(self, inputs, *args, **kwargs):
        from ...tensor import TensorShape
        return TensorShape(self.compute_output_shape(inputs.shape)), self._compute_dtype

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode, "sparse": self.sparse}


# --- Discretization ------------------------------------------------------------------------------

def _summarize(values, epsilon):
    """An approximate quantile summary of ``values``: every ``n * epsilon``-th sorted value
    (all of them for small inputs) with the count each one stands for."""
    values = np.sort(np.reshape(values, -1))
    step = max(values.size * epsilon, 1)
    picked = values[int(step - 1)::int(step)]   # Keras 3 starts at the step's last value
    return np.stack([picked, np.full(picked.shape, step, picked.dtype)])


def _compress(summary, epsilon):
    """``summary`` re-sampled at cumulative-weight fractions ``epsilon, 2 epsilon, ... 1``
    (unchanged when it already has fewer than ``1 / epsilon`` entries)."""
    if summary.shape[1] * epsilon < 1:
        return summary
    fractions = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    at = cumulative / cumulative[-1]
    values = np.interp(fractions, at, summary[0])
    weights = np.diff(np.interp(fractions, at, cumulative), prepend=0.0)
    return np.stack((values, weights)).astype(np.float32)


def _merge(a, b, epsilon):
    merged = np.concatenate((a, b), axis=1)
    return _compress(merged[:, np.argsort(merged[0], kind="stable")], epsilon)


class Discretization(Layer):
    """Bucket numeric features by ``bin_boundaries``: ``x`` goes to bucket ``i`` when
    ``bin_boundaries[i-1] <= x < bin_boundaries[i]`` (int64 indices in ``"int"`` mode, else
    ``"one_hot"``/``"multi_hot"``/``"count"`` encodings of ``len(bin_boundaries) + 1`` bins).

    ``adapt(data)`` with ``num_bins`` sets the boundaries to approximate quantiles of ``data``
    (Keras' quantile summaries, accurate to ``epsilon``)::

        Discretization(bin_boundaries=[0., 1., 2.])([[-1.5, 1.0, 3.4, .5]])   # [[0, 2, 3, 1]]
    """

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None, **kwargs):
        output_mode = _check_mode(self, output_mode)
        if dtype is None:
            dtype = "int64" if output_mode == "int" else None
        super().__init__(dtype=dtype, name=name, **kwargs)
        self.output_mode = output_mode
        self.sparse = _check_sparse(self, sparse)
        if num_bins is not None and (int(num_bins) != num_bins or num_bins < 0):
            raise ValueError(f"Discretization: num_bins must be a non-negative integer, got "
                             f"{num_bins!r}")
        if bin_boundaries is not None:
            bin_boundaries = [float(b) for b in np.reshape(bin_boundaries, -1)]
            if any(b > c for b, c in zip(bin_boundaries, bin_boundaries[1:])):
                raise ValueError(f"Discretization: bin_boundaries must be sorted, got "
                                 f"{bin_boundaries}")
            if num_bins is not None and len(bin_boundaries) != num_bins - 1:
                raise ValueError(f"Discretization: with both num_bins and bin_boundaries, "
                                 f"len(bin_boundaries) must be num_bins - 1; got num_bins="
                                 f"{num_bins} and {len(bin_boundaries)} boundaries")
        self.bin_boundaries = bin_boundaries
        self.num_bins = None if num_bins is None else int(num_bins)
        self.epsilon = float(epsilon)
        object.__setattr__(self, "_summary", None)

    def adapt(self, data, batch_size=None, steps=None):
        """Set ``bin_boundaries`` to ``num_bins`` approximate quantiles of ``data`` (an array,
        or batches of one such as a dataset; ``steps`` batches at most)."""
        if self.num_bins is None:
            raise ValueError("Discretization: cannot adapt a layer made with bin_boundaries; "
                             "pass num_bins instead")
        batches = _host_batches(data)
        if steps is not None:
            batches = batches[:int(steps)]
        if not batches:
            raise ValueError("Discretization.adapt: no data")
        summary = np.zeros((2, 0), np.float32)
        for batch in batches:
            part = _summarize(np.asarray(batch, np.float32), self.epsilon)
            summary = _merge(part, summary, self.epsilon)
        object.__setattr__(self, "_summary", summary)
        self.bin_boundaries = _compress(summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("Discretization: pass bin_boundaries or call adapt(data) before "
                             "using the layer")
        if inputs._value.dtype.kind not in "iuf":
            raise TypeError(f"Discretization: inputs must be numbers, got {inputs.dtype.name}")
        buckets = apply(_bucketize.op, (inputs,),
                        {"boundaries": tuple(self.bin_boundaries)})
        if self.output_mode == "int":
            return buckets if self._compute_dtype == dtypes.int64 else \
                math_ops.cast(buckets, self._compute_dtype)
        return encode_categorical(buckets, len(self.bin_boundaries) + 1, self.output_mode,
                                  self._compute_dtype, layer="Discretization")

    def compute_output_spec(self, inputs, *args, **kwargs):
        from ...tensor import TensorShape
        shape = tuple(inputs.shape)
        if self.output_mode != "int":
            depth = None if self.bin_boundaries is None else len(self.bin_boundaries) + 1
            shape = (shape[:-1] if self.output_mode != "one_hot" or shape[-1:] == (1,)
                     else shape) + (depth,)
        return TensorShape(shape), self._compute_dtype

    def get_config(self):
        return {**super().get_config(), "bin_boundaries": self.bin_boundaries,
                "num_bins": self.num_bins, "epsilon": self.epsilon,
                "output_mode": self.output_mode, "sparse": self.sparse}


# --- IntegerLookup -------------------------------------------------------------------------------

class IntegerLookup(Layer):
    """Map integer features to contiguous indices of a vocabulary (or back, ``invert=True``).

    Index layout: the mask index 0 (when ``mask_token`` is set), then ``num_oov_indices`` OOV
    indices, then the vocabulary in order. A value outside the vocabulary gets the OOV index
    ``value mod num_oov_indices`` (as Keras does for integers). The
    vocabulary is given (a list/array) or learned by ``adapt`` (most frequent first, ties by the
    larger value; ``max_tokens`` bounds its size including the special indices).

        layer = IntegerLookup(vocabulary=[12, 36, 1138, 42])
        layer([[12, 1138, 42], [42, 1000, 36]])      # [[1, 3, 4], [4, 0, 2]]

    ``output_mode`` ``"one_hot"``, ``"multi_hot"`` and ``"count"`` encode the indices (depth
    ``vocabulary_size()``, or ``max_tokens`` with ``pad_to_max_tokens``); there the mask index
    0 never counts. ``"tf_idf"`` and ``sparse`` outputs are not supported.
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False, name=None,
                 **kwargs):
        kwargs.pop("dtype", None)
        super().__init__(dtype="int64", name=name, **kwargs)
        if output_mode == "tf_idf" or idf_weights is not None:
            raise NotImplementedError("IntegerLookup: output_mode='tf_idf' is not supported")
        self.output_mode = _check_mode(self, output_mode)
        if invert and output_mode != "int":
            raise ValueError("IntegerLookup: invert=True needs output_mode='int'")
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"IntegerLookup: max_tokens must be > 1 (or None), got "
                             f"{max_tokens!r}")
        if int(num_oov_indices) != num_oov_indices or num_oov_indices < 0:
            raise ValueError(f"IntegerLookup: num_oov_indices must be a non-negative integer, "
                             f"got {num_oov_indices!r}")
        if dtypes.as_dtype(vocabulary_dtype) not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"IntegerLookup: vocabulary_dtype must be int32 or int64, got "
                             f"{vocabulary_dtype!r}")
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = None if mask_token is None else int(mask_token)
        self.oov_token = None if oov_token is None else int(oov_token)
        self.vocabulary_dtype = dtypes.as_dtype(vocabulary_dtype).name
        self.invert = bool(invert)
        self.sparse = _check_sparse(self, sparse)
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        object.__setattr__(self, "_vocab", ())
        object.__setattr__(self, "_has_vocab", False)
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    def _special(self):
        return (([] if self.mask_token is None else [self.mask_token])
                + [self.oov_token] * self.num_oov_indices)

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Set the vocabulary (distinct integers; the special tokens may lead it)."""
        if idf_weights is not None:
            raise NotImplementedError("IntegerLookup: idf_weights (tf_idf) is not supported")
        if isinstance(vocabulary, str):
            raise NotImplementedError("IntegerLookup: vocabulary files are not supported; "
                                      "pass a list or array")
        tokens = np.asarray(B.to_numpy(vocabulary._value) if isinstance(vocabulary, Tensor)
                            else vocabulary)
        if tokens.size and tokens.dtype.kind not in "iu":
            raise ValueError(f"IntegerLookup: the vocabulary must hold integers, got dtype "
                             f"{tokens.dtype}")
        tokens = [int(t) for t in tokens.reshape(-1)]
        special = self._special()
        if special and tokens[:len(special)] == special:
            tokens = tokens[len(special):]
        if self.mask_token is not None and self.mask_token in tokens:
            raise ValueError(f"IntegerLookup: the mask token {self.mask_token} is in the "
                             f"vocabulary at index {tokens.index(self.mask_token)}; leave it out "
                             f"or put the special tokens {special} first")
        if self.invert and self.oov_token is not None and self.oov_token in tokens:
            raise ValueError(f"IntegerLookup: the OOV token {self.oov_token} is in the "
                             f"vocabulary; leave it out or put the special tokens {special} "
                             f"first")
        if len(set(tokens)) != len(tokens):
            repeated = sorted({t for t in tokens if tokens.count(t) > 1})
            raise ValueError(f"IntegerLookup: the vocabulary has repeated terms {repeated[:5]}")
        if self.max_tokens is not None and len(tokens) + len(special) > self.max_tokens:
            raise ValueError(f"IntegerLookup: a vocabulary of {len(tokens) + len(special)} "
                             f"entries (special tokens included) exceeds max_tokens="
                             f"{self.max_tokens}")
        object.__setattr__(self, "_vocab", tuple(tokens))
        object.__setattr__(self, "_has_vocab", True)

    def adapt(self, data, batch_size=None, steps=None):
        """Learn the vocabulary from ``data`` (an array, or batches of one such as a dataset):
        most frequent values first, ties broken by the larger value; the mask and OOV tokens
        are left out and ``max_tokens`` bounds the size."""
        batches = _host_batches(data)
        if steps is not None:
            batches = batches[:int(steps)]
        values = np.concatenate([np.reshape(b, -1) for b in batches]) if batches else \
            np.zeros(0)
        if values.size and not np.all(values == np.round(values)):
            raise ValueError("IntegerLookup.adapt: the data must hold integers")
        values = values.astype(np.int64)
        for token in (self.mask_token, self.oov_token):
            if token is not None:
                values = values[values != token]
        tokens, counts = np.unique(values, return_counts=True)
        order = np.lexsort((tokens, counts))[::-1]
        if self.max_tokens is not None:
            order = order[:max(self.max_tokens - len(self._special()), 0)]
        object.__setattr__(self, "_vocab", tuple(int(t) for t in tokens[order]))
        object.__setattr__(self, "_has_vocab", True)

    def get_vocabulary(self, include_special_tokens=True):
        """The vocabulary in index order (the special tokens first unless told not to)."""
        return (self._special() if include_special_tokens else []) + list(self._vocab)

    def vocabulary_size(self):
        """Number of indices: the vocabulary plus the mask and OOV indices."""
        return len(self._vocab) + len(self._special())

    def call(self, inputs):
        if not self._has_vocab:
            raise ValueError(f"IntegerLookup {self.name!r}: set a vocabulary (vocabulary=, "
                             f"set_vocabulary or adapt) before calling the layer")
        inputs = _int_inputs(self, inputs)
        if self.invert:
            return apply(_invert.op, (inputs,), {
                "tokens": tuple(self.get_vocabulary()), "oov_token": self.oov_token
                if self.oov_token is not None else -1,
                "dtype": dtypes.as_dtype(self.vocabulary_dtype).np})
        oov_start = 0 if self.mask_token is None else 1
        indices = apply(_lookup.op, (inputs,), {
            "keys": self._vocab, "num_oov": self.num_oov_indices, "oov_start": oov_start,
            "mask_token": self.mask_token})
        if self.output_mode == "int":
            return indices
        depth = (self.max_tokens if self.pad_to_max_tokens and self.max_tokens
                 else self.vocabulary_size())
        out = encode_categorical(indices, depth, self.output_mode, dtypes.float32,
                                 layer="IntegerLookup")
        if self.mask_token is not None:
            # the mask index never counts in the encodings
            keep = np.ones(depth, np.float32)
            keep[0] = 0.0
            out = out * B.from_numpy(keep)
        return out

    def compute_output_spec(self, inputs, *args, **kwargs):
        from ...tensor import TensorShape
        shape = tuple(inputs.shape)
        if self.output_mode == "int":
            dtype = dtypes.as_dtype(self.vocabulary_dtype) if self.invert else dtypes.int64
            return TensorShape(shape), dtype
        depth = (self.max_tokens if self.pad_to_max_tokens and self.max_tokens
                 else self.vocabulary_size())
        shape = (shape[:-1] if self.output_mode != "one_hot" or shape[-1:] == (1,)
                 else shape) + (depth,)
        return TensorShape(shape), dtypes.float32

    def get_config(self):
        return {**super().get_config(), "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "mask_token": self.mask_token,
                "oov_token": self.oov_token, "vocabulary": list(self._vocab) if self._has_vocab
                else None, "vocabulary_dtype": self.vocabulary_dtype, "idf_weights": None,
                "invert": self.invert, "output_mode": self.output_mode, "sparse": self.sparse,
                "pad_to_max_tokens": self.pad_to_max_tokens}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)


# --- Hashing -------------------------------------------------------------------------------------

class Hashing(Layer):
    """Hash integer features into ``num_bins`` bins: ``Fingerprint64(str(x)) % num_bins``,
    TF's ``to_hash_bucket_fast`` of the decimal string as Keras computes it, so bins match
    Keras (float inputs are truncated to int64 first, as Keras does). With ``mask_value``, that
    value goes to bin 0 and the others to ``1 + hash % (num_bins - 1)``. Output int64 indices
    (``"int"``) or their encodings (``"one_hot"``, ``"multi_hot"``, ``"count"`` of depth
    ``num_bins``). String inputs and ``salt`` (keyed SipHash) are not supported.

        Hashing(num_bins=3)([[12], [1000], [-5]])   # int64 bins in [0, 3)
    """

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False,
                 **kwargs):
        output_mode = _check_mode(self, output_mode)
        kwargs.setdefault("dtype", "int64" if output_mode == "int" else None)
        super().__init__(**kwargs)
        if num_bins is None or int(num_bins) != num_bins or num_bins <= 0:
            raise ValueError(f"Hashing: num_bins must be a positive integer, got {num_bins!r}")
        if mask_value is not None and int(mask_value) != mask_value:
            raise ValueError(f"Hashing: mask_value must be an integer, got {mask_value!r}")
        if salt is not None:
            raise NotImplementedError("Hashing: salt (keyed SipHash) is not supported")
        self.num_bins = int(num_bins)
        self.mask_value = None if mask_value is None else int(mask_value)
        self.salt = None
        self.output_mode = output_mode
        self.sparse = _check_sparse(self, sparse)

    def call(self, inputs):
        inputs = _as_tensor(inputs)
        if inputs.dtype.is_floating:
            inputs = math_ops.cast(inputs, dtypes.int64)
        inputs = _int_inputs(self, inputs)
        bins = apply(_hash.op, (inputs,), {"num_bins": self.num_bins,
                                           "mask_value": self.mask_value})
        if self.output_mode == "int":
            return bins
        return encode_categorical(bins, self.num_bins, self.output_mode, self._compute_dtype,
                                  layer="Hashing")

    def compute_output_spec(self, inputs, *args, **kwargs):
        from ...tensor import TensorShape
        shape = tuple(inputs.shape)
        if self.output_mode != "int":
            shape = (shape[:-1] if self.output_mode != "one_hot" or shape[-1:] == (1,)
                     else shape) + (self.num_bins,)
        return TensorShape(shape), self._compute_dtype

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt,
                "mask_value": self.mask_value, "output_mode": self.output_mode,
                "sparse": self.sparse}


__all__ = ["CategoryEncoding", "Discretization", "IntegerLookup", "Hashing"]
