"""``keras.utils.FeatureSpace`` (Keras 3): preprocess and encode a dict of structured-data
features (numbers, integer and string categories, hashed values, feature crosses) into one
vector per sample (``output_mode="concat"``) or a dict of encoded features (``"dict"``).

    feature_space = FeatureSpace(
        features={"age": "float_discretized", "sex": "integer_categorical",
                  "thal": "string_categorical", "chol": "float_normalized"},
        crosses=[("sex", "age")], crossing_dim=32, output_mode="concat")
    feature_space.adapt(dataset_of_dicts)            # vocabularies, means, bin boundaries
    vectors = dataset.map(lambda x, y: (feature_space(x), y))

Each feature's preprocessing layer turns the raw value into floats or integer indices;
crosses hash the preprocessed indices of several features together (``HashedCrossing``);
``one_hot`` features and crosses are then multi-hot encoded with ``CategoryEncoding``, and in
concat mode everything is concatenated: the features sorted by name, then the crosses sorted
by name, as Keras orders them. ``get_inputs()`` / ``get_encoded_features()`` give the same
computation on ``keras.Input`` placeholders for functional models.
"""
import numpy as np

from .. import dtypes
from ..ops import array_ops
from ..ops.convert import convert_to_tensor
from ..tensor import Tensor
from . import layers
from .layers.base import KerasTensor, Layer
from .layers.tracking import unique_name

__all__ = ["FeatureSpace", "Feature", "Cross"]

# where Keras 3 writes these classes in a config
_KERAS_MODULE = "keras.src.layers.preprocessing.feature_space"
_SHORTHANDS = ("float", "float_normalized", "float_rescaled", "float_discretized",
               "integer_categorical", "string_categorical", "integer_hashed", "string_hashed")


def _entry(obj):
    return {"module": _KERAS_MODULE, "class_name": type(obj).__name__,
            "config": obj.get_config(), "registered_name": type(obj).__name__}


def _from_entry(entry, cls, where):
    if entry.get("class_name") != cls.__name__:
        raise ValueError(f"{where}: expected a {cls.__name__!r} entry, got class_name="
                         f"{entry.get('class_name')!r}")
    return cls.from_config(entry.get("config") or {})


class Cross:
    """A feature cross: the named features hashed together into ``crossing_dim`` bins."""

    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        if output_mode not in ("int", "one_hot"):
            raise ValueError(f"FeatureSpace.cross: output_mode must be one of ('int', "
                             f"'one_hot'), got output_mode={output_mode!r}")
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self):
        return "_X_".join(self.feature_names)

    def get_config(self):
        return {"feature_names": list(self.feature_names), "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _int_bins(entry):
    """A preprocessor entry, where a Discretization in ``"int"`` mode drops the float dtype
    policy Keras writes for it (Keras' bins stay int64 whatever that policy; minitf's layer
    would cast them to it)."""
    config = entry.get("config") or {}
    if entry.get("class_name") == "Discretization" and config.get("output_mode") == "int" \
            and config.get("dtype") not in (None, "int64"):
        entry = {**entry, "config": {k: v for k, v in config.items() if k != "dtype"}}
    return entry


class Feature:
    """A feature: its input ``dtype``, its preprocessing layer and how its output is encoded
    (``"float"``: as it is, ``"int"``: indices left as they are, ``"one_hot"``: multi-hot
    encoded over the preprocessor's output space)."""

    def __init__(self, dtype, preprocessor, output_mode):
        if output_mode not in ("int", "one_hot", "float"):
            raise ValueError(f"FeatureSpace.feature: output_mode must be one of ('int', "
                             f"'one_hot', 'float'), got output_mode={output_mode!r}")
        if isinstance(preprocessor, dict):
            from .serialization import deserialize_keras_object
            preprocessor = deserialize_keras_object(_int_bins(preprocessor))
        self.dtype = dtypes.as_dtype(dtype).name
        self.preprocessor = preprocessor
        self.output_mode = output_mode

    def get_config(self):
        from .serialization import serialize_keras_object
        entry = serialize_keras_object(self.preprocessor)
        if entry.get("class_name") == "Discretization":
            # Keras' Discretization config has no "trainable" (its constructor refuses it)
            entry["config"] = {k: v for k, v in entry["config"].items() if k != "trainable"}
        return {"dtype": self.dtype, "preprocessor": entry, "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _cardinality(layer):
    """The size of the index space of a preprocessing or crossing layer's integer output."""
    if isinstance(layer, (layers.IntegerLookup, layers.StringLookup)):
        return layer.vocabulary_size()
    if isinstance(layer, layers.CategoryEncoding):
        return layer.num_tokens
    if isinstance(layer, (layers.Discretization, layers.Hashing, layers.HashedCrossing)):
        return layer.num_bins
    return None


def _as_tensor(value):
    if isinstance(value, (Tensor, KerasTensor)):
        return value
    return convert_to_tensor(value if isinstance(value, (list, tuple, int, float, str, bytes))
                             else np.asarray(value))


class FeatureSpace(Layer):
    """One-stop preprocessing and encoding of structured data (Keras 3's
    ``keras.utils.FeatureSpace``).

    ``features`` maps each input name to a feature made by the static constructors below or
    to one of their names (``"float"``, ``"float_normalized"``, ``"float_rescaled"``,
    ``"float_discretized"``, ``"integer_categorical"``, ``"string_categorical"``,
    ``"integer_hashed"``, ``"string_hashed"``: default arguments, with ``hashing_dim`` and
    ``num_discretization_bins``). ``crosses``: tuples of feature names (hashed into
    ``crossing_dim`` bins) or ``FeatureSpace.cross(...)``. Call ``adapt(dataset)`` first, then
    the space on a dict of batched (or single) feature values.
    """

    # --- feature constructors ------------------------------------------------------------------
    @staticmethod
    def cross(feature_names, crossing_dim, output_mode="one_hot"):
        """A cross of ``feature_names`` hashed into ``crossing_dim`` bins."""
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @staticmethod
    def feature(dtype, preprocessor, output_mode):
        """A feature with your own preprocessing layer."""
        return Feature(dtype, preprocessor, output_mode)

    @staticmethod
    def float(name=None):
        """Float values passed through as they are."""
        name = name or unique_name("float")
        return Feature("float32", layers.Identity(dtype="float32",
                                                  name=f"{name}_preprocessor"), "float")

    @staticmethod
    def float_rescaled(scale=1.0, offset=0.0, name=None):
        """Float values mapped to ``x * scale + offset``."""
        name = name or unique_name("float_rescaled")
        return Feature("float32", layers.Rescaling(scale=scale, offset=offset,
                                                   name=f"{name}_preprocessor"), "float")

    @staticmethod
    def float_normalized(name=None):
        """Float values standardized with the mean and variance ``adapt`` finds."""
        name = name or unique_name("float_normalized")
        return Feature("float32", layers.Normalization(axis=-1, name=f"{name}_preprocessor"),
                       "float")

    @staticmethod
    def float_discretized(num_bins, bin_boundaries=None, output_mode="one_hot", name=None):
        """Float values bucketed into ``num_bins`` bins (quantiles found by ``adapt`` unless
        ``bin_boundaries`` are given)."""
        name = name or unique_name("float_discretized")
        return Feature("float32", layers.Discretization(
            num_bins=num_bins, bin_boundaries=bin_boundaries, name=f"{name}_preprocessor"),
            output_mode)

    @staticmethod
    def integer_categorical(max_tokens=None, num_oov_indices=1, output_mode="one_hot",
                            name=None):
        """Integer categories indexed by a vocabulary ``adapt`` learns."""
        name = name or unique_name("integer_categorical")
        return Feature("int32", layers.IntegerLookup(
            name=f"{name}_preprocessor", max_tokens=max_tokens,
            num_oov_indices=num_oov_indices), output_mode)

    @staticmethod
    def string_categorical(max_tokens=None, num_oov_indices=1, output_mode="one_hot",
                           name=None):
        """String categories indexed by a vocabulary ``adapt`` learns."""
        name = name or unique_name("string_categorical")
        return Feature("string", layers.StringLookup(
            name=f"{name}_preprocessor", max_tokens=max_tokens,
            num_oov_indices=num_oov_indices), output_mode)

    @staticmethod
    def string_hashed(num_bins, output_mode="one_hot", name=None):
        """Strings hashed into ``num_bins`` bins."""
        name = name or unique_name("string_hashed")
        return Feature("string", layers.Hashing(name=f"{name}_preprocessor",
                                                num_bins=num_bins), output_mode)

    @staticmethod
    def integer_hashed(num_bins, output_mode="one_hot", name=None):
        """Integers hashed into ``num_bins`` bins."""
        name = name or unique_name("integer_hashed")
        return Feature("int32", layers.Hashing(name=f"{name}_preprocessor",
                                               num_bins=num_bins), output_mode)

    # --- construction --------------------------------------------------------------------------
    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32,
                 hashing_dim=32, num_discretization_bins=32, name=None):
        super().__init__(name=name)
        if not features or not isinstance(features, dict):
            raise ValueError(f"FeatureSpace: features must be a non-empty dict of feature "
                             f"name -> feature, got features={features!r}")
        if output_mode not in ("dict", "concat"):
            raise ValueError(f"FeatureSpace: output_mode must be one of ('dict', 'concat'), "
                             f"got output_mode={output_mode!r}")
        s = object.__setattr__   # plain state, out of the layer tree that is saved
        s(self, "output_mode", output_mode)
        s(self, "crossing_dim", crossing_dim)
        s(self, "hashing_dim", hashing_dim)
        s(self, "num_discretization_bins", num_discretization_bins)
        s(self, "features", {key: self._standardize_feature(key, value)
                             for key, value in features.items()})
        s(self, "crosses", [self._standardize_cross(c, features) for c in crosses or ()])
        s(self, "crosses_by_name", {c.name: c for c in self.crosses})
        s(self, "inputs", {key: layers.Input(shape=(1,), dtype=f.dtype, name=key)
                           for key, f in self.features.items()})
        self.preprocessors = {key: f.preprocessor for key, f in self.features.items()}
        self.crossers = {c.name: layers.HashedCrossing(c.crossing_dim, name=c.name)
                         for c in self.crosses}
        s(self, "one_hot_encoders", {})
        s(self, "concat", None)
        s(self, "encoded_features", None)
        s(self, "_is_adapted", False)
        s(self, "_sublayers_built", False)
        s(self, "_encoders_made", False)

    def _standardize_feature(self, key, feature):
        if isinstance(feature, Feature):
            return feature
        if isinstance(feature, dict):
            return _from_entry(feature, Feature, f"FeatureSpace feature {key!r}")
        if feature in ("float", "float_normalized", "float_rescaled"):
            return getattr(self, feature)(name=key)
        if feature == "float_discretized":
            return self.float_discretized(self.num_discretization_bins, name=key)
        if feature in ("integer_categorical", "string_categorical"):
            return getattr(self, feature)(name=key)
        if feature in ("integer_hashed", "string_hashed"):
            return getattr(self, feature)(self.hashing_dim, name=key)
        raise ValueError(f"FeatureSpace: invalid feature type {feature!r} for feature "
                         f"{key!r}; expected a FeatureSpace.<type>(...) feature or one of "
                         f"{_SHORTHANDS}")

    def _standardize_cross(self, cross, features):
        if isinstance(cross, dict):
            cross = _from_entry(cross, Cross, "FeatureSpace crosses")
        if isinstance(cross, Cross):
            return cross
        if not self.crossing_dim:
            raise ValueError(f"FeatureSpace: crosses={cross!r} needs crossing_dim (the size of "
                             f"the crossing space), got crossing_dim={self.crossing_dim!r}")
        unknown = [key for key in cross if key not in features]
        if unknown:
            raise ValueError(f"FeatureSpace: the cross {tuple(cross)!r} names features that "
                             f"are not in `features`: {unknown}")
        return Cross(cross, crossing_dim=self.crossing_dim)

    # --- adapt ---------------------------------------------------------------------------------
    def _adaptable(self):
        names = []
        for key, layer in self.preprocessors.items():
            if isinstance(layer, layers.Normalization) and layer.input_mean is not None:
                continue     # given mean and variance
            if getattr(layer, "_has_input_vocabulary", False):
                continue     # a lookup made with its vocabulary
            if isinstance(layer, layers.Discretization) and layer.num_bins is None:
                continue     # made with bin_boundaries only
            if hasattr(layer, "adapt"):
                names.append(key)
        return names

    def adapt(self, dataset):
        """Fit every adaptable preprocessor (vocabularies, means and variances, bin
        boundaries) on ``dataset``: a ``tf.data.Dataset`` of feature dicts (batched or not)
        or a dict of arrays."""
        from ..data.dataset import Dataset
        if isinstance(dataset, dict):
            dataset = Dataset.from_tensor_slices(dataset)
        elif not isinstance(dataset, Dataset):
            raise ValueError(f"FeatureSpace.adapt: expected a tf.data.Dataset or a dict of "
                             f"arrays, got {type(dataset).__name__}: {dataset!r}")
        for key in self._adaptable():
            column = dataset.map(lambda x, key=key: x[key])
            first = next(iter(column))
            if len(first.shape) == 0:
                column = column.batch(32)
            if len(first.shape) <= 1:
                column = column.map(lambda x: array_ops.expand_dims(x, -1))
            self.preprocessors[key].adapt(column)
        object.__setattr__(self, "_is_adapted", True)
        self.get_encoded_features()
        object.__setattr__(self, "_sublayers_built", True)
        self._mark_built()

    def _check_if_adapted(self):
        if not self._is_adapted:
            if self._adaptable():
                raise ValueError("FeatureSpace: call .adapt(dataset) on the FeatureSpace "
                                 "before using it")
            object.__setattr__(self, "_is_adapted", True)

    def _check_if_built(self):
        if not self._sublayers_built:
            self._check_if_adapted()
            self.get_encoded_features()
            object.__setattr__(self, "_sublayers_built", True)
            self._mark_built()

    # --- the computation -----------------------------------------------------------------------
    def get_inputs(self):
        """The dict of ``keras.Input`` placeholders (shape ``(None, 1)``), one per feature."""
        self._check_if_built()
        return self.inputs

    def get_encoded_features(self):
        """The encoded features of ``get_inputs()`` as KerasTensors (one concatenated tensor
        or a dict), to build functional models on."""
        self._check_if_adapted()
        if self.encoded_features is None:
            preprocessed = self._preprocess(self.inputs)
            object.__setattr__(self, "encoded_features",
                               self._merge(preprocessed, self._cross(preprocessed)))
        return self.encoded_features

    def _preprocess(self, data):
        return {key: self.preprocessors[key](data[key]) for key in data}

    def _cross(self, preprocessed):
        return {c.name: self.crossers[c.name]([preprocessed[key] for key in c.feature_names])
                for c in self.crosses}

    def _merge(self, preprocessed, crossed):
        names = sorted(preprocessed) + sorted(crossed)
        values = {**preprocessed, **crossed}
        if not self._encoders_made:
            self._make_encoders(values)
        encoded = {}
        for key in names:
            encoder = self.one_hot_encoders.get(key)
            encoded[key] = encoder(values[key]) if encoder is not None else values[key]
        if self.output_mode == "dict":
            return encoded
        return self.concat([encoded[key] for key in names])

    def _make_encoders(self, values):
        """The one-hot encoders and the concatenation, made once from the first (symbolic)
        outputs of the preprocessors, checking that every feature can be encoded."""
        encoders = {}
        for key, value in values.items():
            spec = self.features.get(key) or self.crosses_by_name[key]
            dtype = dtypes.as_dtype(value.dtype)
            if spec.output_mode == "one_hot":
                if not dtype.is_integer:
                    raise ValueError(f"FeatureSpace: feature {key!r} has output_mode="
                                     f"'one_hot', so its preprocessor must return integers; it "
                                     f"returns {dtype.name}")
                layer = self.preprocessors.get(key) or self.crossers.get(key)
                depth = _cardinality(layer)
                if depth is None:
                    raise ValueError(f"FeatureSpace: feature {key!r} has output_mode="
                                     f"'one_hot', but the size of its preprocessor's output "
                                     f"space is unknown ({type(layer).__name__}); use "
                                     f"output_mode='int'")
                encoders[key] = layers.CategoryEncoding(num_tokens=depth,
                                                        output_mode="multi_hot")
            elif self.output_mode == "concat" and (dtype.is_integer or dtype == dtypes.string):
                raise ValueError(f"FeatureSpace: cannot concatenate feature {key!r}: it is not "
                                 f"encoded (dtype {dtype.name}); use output_mode='dict'")
        self.one_hot_encoders.update(encoders)
        if self.output_mode == "concat":
            object.__setattr__(self, "concat", layers.Concatenate(axis=-1))
        object.__setattr__(self, "_encoders_made", True)

    def __call__(self, data):
        """Encode a dict of feature values: batched (``(batch,)`` or ``(batch, 1)``) or one
        sample (scalars, giving unbatched outputs)."""
        self._check_if_built()
        if not isinstance(data, dict):
            raise ValueError(f"FeatureSpace: can only be called on a dict of features, got "
                             f"data={data!r} (of type {type(data).__name__})")
        missing = [key for key in self.features if key not in data]
        if missing:
            raise ValueError(f"FeatureSpace: the data lacks the features {missing}; it has "
                             f"the keys {sorted(data)}")
        inputs, single = {}, False
        for key in self.features:
            x = _as_tensor(data[key])
            if len(x.shape) == 0:
                x, single = array_ops.reshape(x, (1, 1)), True
            elif len(x.shape) == 1:
                x = array_ops.expand_dims(x, -1)
            inputs[key] = x
        preprocessed = self._preprocess(inputs)
        merged = self._merge(preprocessed, self._cross(preprocessed))
        if not single:
            return merged
        if self.output_mode == "concat":
            return array_ops.squeeze(merged, 0)
        return {key: array_ops.squeeze(x, 0) if len(x.shape) == 2 and x.shape[0] == 1 else x
                for key, x in merged.items()}

    # --- config and saving ---------------------------------------------------------------------
    def get_config(self):
        return {"features": {key: _entry(f) for key, f in self.features.items()},
                "output_mode": self.output_mode,
                "crosses": [_entry(c) for c in self.crosses],
                "crossing_dim": self.crossing_dim, "hashing_dim": self.hashing_dim,
                "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        return {key: layer.get_build_config() or {}
                for key, layer in self.preprocessors.items()}

    def build_from_config(self, config):
        for key, layer_config in (config or {}).items():
            layer = self.preprocessors.get(key)
            if layer is not None and not layer.built and layer_config:
                layer.build_from_config(layer_config)
        object.__setattr__(self, "_is_adapted", True)
        self._mark_built()

    def save(self, filepath):
        """Write the FeatureSpace (its configuration, statistics and vocabularies) to a
        ``.keras`` file; ``keras.saving.load_model`` reads it back."""
        from .archive import save_model
        save_model(self, filepath)
