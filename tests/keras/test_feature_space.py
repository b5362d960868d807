"""keras.utils.FeatureSpace, following the keras.io example "Structured data classification with
FeatureSpace" (examples/structured_data/structured_data_classification_with_feature_space.py)
on a synthetic dataset with the columns of its heart-disease CSV (there is no network here).

Expected widths and encoded values were obtained by running Keras 3.15 (TensorFlow 2.21) on
the same synthetic data (``make_rows`` below), batches of 32, no shuffling.
"""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
FeatureSpace = keras.utils.FeatureSpace

THAL = ["normal", "fixed", "reversible"]
COLUMNS = ["age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang",
           "oldpeak", "slope", "ca", "thal"]


def make_rows(n, seed=12345):
    """Heart-disease-like columns (dtypes as pandas reads the CSV) and a learnable target,
    from a xorshift generator on Python ints (the same numbers everywhere)."""
    state = [seed]

    def draw(m):
        x = state[0]
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        state[0] = x & 0xFFFFFFFF
        return state[0] % m

    cols = {k: [] for k in COLUMNS}
    target = []
    for _ in range(n):
        age, sex, cp = 29 + draw(49), draw(2), draw(5)
        trestbps, chol, fbs = 94 + draw(107), 126 + draw(300), int(draw(7) == 0)
        restecg, thalach, exang = draw(3), 71 + draw(131), draw(2)
        oldpeak, slope, ca, thal = draw(63) / 10.0, 1 + draw(3), draw(4), THAL[draw(3)]
        score = (2 * (thal == "reversible") + (cp >= 3) + exang + (oldpeak > 2.0)
                 + (ca >= 2) - (thalach > 150) - (sex == 0))
        for k, v in zip(COLUMNS, [age, sex, cp, trestbps, chol, fbs, restecg, thalach, exang,
                                  oldpeak, slope, ca, thal]):
            cols[k].append(v)
        target.append(int(score >= 2))
    out = {k: np.array(v, dtype=np.float64 if k == "oldpeak" else
                       (object if k == "thal" else np.int64)) for k, v in cols.items()}
    return out, np.array(target, np.int64)


DATA, TARGET = make_rows(300)
TRAIN = {k: v[:240] for k, v in DATA.items()}
VAL = {k: v[240:] for k, v in DATA.items()}


def datasets():
    train_ds = tf.data.Dataset.from_tensor_slices((TRAIN, TARGET[:240])).batch(32)
    val_ds = tf.data.Dataset.from_tensor_slices((VAL, TARGET[240:])).batch(32)
    return train_ds, val_ds


def shorthand_space():
    """The example's first FeatureSpace: feature types by name."""
    return FeatureSpace(
        features={"sex": "integer_categorical", "cp": "integer_categorical",
                  "fbs": "integer_categorical", "restecg": "integer_categorical",
                  "exang": "integer_categorical", "ca": "integer_categorical",
                  "thal": "string_categorical", "age": "float_discretized",
                  "trestbps": "float_normalized", "chol": "float_normalized",
                  "thalach": "float_normalized", "oldpeak": "float_normalized",
                  "slope": "float_normalized"},
        crosses=[("sex", "age"), ("thal", "ca")], crossing_dim=32, output_mode="concat")


def custom_space():
    """The example's second FeatureSpace: customized features and crosses."""
    return FeatureSpace(
        features={
            "sex": FeatureSpace.integer_categorical(num_oov_indices=0),
            "cp": FeatureSpace.integer_categorical(num_oov_indices=0),
            "fbs": FeatureSpace.integer_categorical(num_oov_indices=0),
            "restecg": FeatureSpace.integer_categorical(num_oov_indices=0),
            "exang": FeatureSpace.integer_categorical(num_oov_indices=0),
            "ca": FeatureSpace.integer_categorical(num_oov_indices=0),
            "thal": FeatureSpace.string_categorical(num_oov_indices=0),
            "age": FeatureSpace.float_discretized(num_bins=30),
            "trestbps": FeatureSpace.float_normalized(),
            "chol": FeatureSpace.float_normalized(),
            "thalach": FeatureSpace.float_normalized(),
            "oldpeak": FeatureSpace.float_normalized(),
            "slope": FeatureSpace.float_normalized(),
        },
        crosses=[FeatureSpace.cross(feature_names=("sex", "age"), crossing_dim=64),
                 FeatureSpace.cross(feature_names=("thal", "ca"), crossing_dim=16)],
        output_mode="concat")


# Keras 3.15: the non-zero entries {index: value} of the first four encoded training rows
KERAS_CUSTOM_ROWS = [
    {9: 1.0, 33: 1.0, 34: -1.33193, 39: 1.0, 40: 1.0, 42: 1.0, 44: 1.66505, 47: 1.0, 49: 1.0,
     50: -1.28694, 52: 1.0, 54: -0.10667, 55: -0.36041, 117: 1.0, 123: 1.0},
    {29: 1.0, 30: 1.0, 34: 0.90935, 38: 1.0, 41: 1.0, 42: 1.0, 44: 0.33338, 46: 1.0, 49: 1.0,
     50: 1.17414, 52: 1.0, 54: 1.13373, 55: 0.28679, 105: 1.0, 121: 1.0},
    {1: 1.0, 33: 1.0, 34: 0.9898, 35: 1.0, 41: 1.0, 43: 1.0, 44: 1.16568, 46: 1.0, 49: 1.0,
     50: 1.17414, 52: 1.0, 54: -1.47902, 55: -1.55771, 97: 1.0, 123: 1.0},
    {5: 1.0, 32: 1.0, 34: 1.04727, 39: 1.0, 40: 1.0, 43: 1.0, 44: -0.05502, 46: 1.0, 48: 1.0,
     50: 1.17414, 52: 1.0, 54: 1.39764, 55: -1.1694, 106: 1.0, 133: 1.0},
]
KERAS_SHORTHAND_ROWS = [
    {10: 1.0, 36: 1.0, 37: -1.33193, 43: 1.0, 45: 1.0, 48: 1.0, 50: 1.66505, 54: 1.0, 57: 1.0,
     58: -1.28694, 61: 1.0, 63: -0.10667, 64: -0.36041, 71: 1.0, 108: 1.0},
    {31: 1.0, 33: 1.0, 37: 0.90935, 42: 1.0, 46: 1.0, 48: 1.0, 50: 0.33338, 53: 1.0, 57: 1.0,
     58: 1.17414, 61: 1.0, 63: 1.13373, 64: 0.28679, 94: 1.0, 117: 1.0},
    {1: 1.0, 36: 1.0, 37: 0.9898, 39: 1.0, 46: 1.0, 49: 1.0, 50: 1.16568, 53: 1.0, 57: 1.0,
     58: 1.17414, 61: 1.0, 63: -1.47902, 64: -1.55771, 85: 1.0, 108: 1.0},
    {5: 1.0, 35: 1.0, 37: 1.04727, 43: 1.0, 45: 1.0, 49: 1.0, 50: -0.05502, 53: 1.0, 56: 1.0,
     58: 1.17414, 61: 1.0, 63: 1.39764, 64: -1.1694, 94: 1.0, 121: 1.0},
]


def dense_rows(rows, width):
    out = np.zeros((len(rows), width), np.float32)
    for r, row in enumerate(rows):
        for i, v in row.items():
            out[r, i] = v
    return out


def adapted(space):
    train_ds, _ = datasets()
    space.adapt(train_ds.map(lambda x, _: x))
    return space


@pytest.fixture(scope="module")
def custom():
    return adapted(custom_space())


def first_batch(space):
    train_ds, _ = datasets()
    for x, _ in train_ds.take(1):
        return space(x)


def test_custom_space_width_and_values_match_keras(custom):
    out = first_batch(custom)
    assert tuple(out.shape) == (32, 136) and out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy()[:4], dense_rows(KERAS_CUSTOM_ROWS, 136), atol=1e-4)
    # Keras 3.15's adapted vocabularies (most frequent first) and crossers
    assert custom.preprocessors["thal"].get_vocabulary() == ["reversible", "normal", "fixed"]
    assert custom.preprocessors["ca"].get_vocabulary() == [1, 2, 0, 3]
    assert {k: v.num_bins for k, v in custom.crossers.items()} == {"sex_X_age": 64,
                                                                   "thal_X_ca": 16}
    assert isinstance(custom.preprocessors["age"], keras.layers.Discretization)
    assert isinstance(custom.crossers["sex_X_age"], keras.layers.HashedCrossing)


def test_shorthand_space_width_values_and_single_sample():
    space = adapted(shorthand_space())
    out = first_batch(space).numpy()
    assert out.shape == (32, 129)
    np.testing.assert_allclose(out[:4], dense_rows(KERAS_SHORTHAND_ROWS, 129), atol=1e-4)
    single = space({k: v[0] for k, v in TRAIN.items()})     # one unbatched example
    assert tuple(single.shape) == (129,)
    np.testing.assert_allclose(single.numpy(), out[0], atol=1e-6)
    assert len(space.preprocessors["age"].bin_boundaries) == 31   # num_discretization_bins=32
    assert space.preprocessors["thal"].get_vocabulary() == ["[UNK]", "reversible", "normal",
                                                            "fixed"]


def test_inputs_and_encoded_features(custom):
    inputs = custom.get_inputs()
    assert sorted(inputs) == sorted(COLUMNS)
    assert {k: (tuple(v.shape), v.dtype.name) for k, v in inputs.items()} == {
        **{k: ((None, 1), "int32") for k in ["sex", "cp", "fbs", "restecg", "exang", "ca"]},
        "thal": ((None, 1), "string"),
        **{k: ((None, 1), "float32") for k in ["age", "trestbps", "chol", "thalach",
                                                "oldpeak", "slope"]}}
    encoded = custom.get_encoded_features()
    assert tuple(encoded.shape) == (None, 136)
    assert custom.get_encoded_features() is encoded


def _fit_and_infer(training_model, inference_model, space):
    train_ds, val_ds = datasets()
    preprocessed_train_ds = train_ds.map(lambda x, y: (space(x), y),
                                         num_parallel_calls=tf.data.AUTOTUNE)
    preprocessed_train_ds = preprocessed_train_ds.prefetch(tf.data.AUTOTUNE)
    preprocessed_val_ds = val_ds.map(lambda x, y: (space(x), y),
                                     num_parallel_calls=tf.data.AUTOTUNE)
    training_model.compile(optimizer="adam", loss="binary_crossentropy",
                           metrics=["accuracy"])
    history = training_model.fit(preprocessed_train_ds, epochs=20,
                                 validation_data=preprocessed_val_ds, verbose=0).history
    assert history["accuracy"][-1] >= history["accuracy"][0] + 0.15
    assert history["accuracy"][-1] >= 0.8 and history["val_accuracy"][-1] >= 0.7
    # the end-to-end model takes raw dicts (the example's sample, as (1,) tensors)
    sample = {"age": 60, "sex": 1, "cp": 1, "trestbps": 145, "chol": 233, "fbs": 1,
              "restecg": 2, "thalach": 150, "exang": 0, "oldpeak": 2.3, "slope": 3, "ca": 0,
              "thal": "fixed"}
    input_dict = {name: tf.convert_to_tensor([value]) for name, value in sample.items()}
    predictions = inference_model.predict(input_dict, verbose=0)
    expected = training_model.predict(space(input_dict), verbose=0)
    assert predictions.shape == (1, 1)
    np.testing.assert_allclose(predictions, expected, rtol=1e-5)
    raw = inference_model.predict({k: v[:5] for k, v in VAL.items()}, verbose=0)
    np.testing.assert_allclose(
        raw, training_model.predict(space({k: v[:5] for k, v in VAL.items()}), verbose=0),
        rtol=1e-5)


def test_training_and_inference_models():
    keras.utils.set_random_seed(1337)
    space = adapted(custom_space())
    dict_inputs = space.get_inputs()
    encoded_features = space.get_encoded_features()
    features = keras.Input(shape=(136,))
    x = keras.layers.Dense(32, activation="relu")(features)
    x = keras.layers.Dropout(0.5)(x)
    training_model = keras.Model(features, keras.layers.Dense(1, activation="sigmoid")(x))
    inference_model = keras.Model(inputs=dict_inputs, outputs=training_model(encoded_features))
    _fit_and_infer(training_model, inference_model, space)


def test_keras_io_example_model_on_encoded_features():
    keras.utils.set_random_seed(1337)
    space = adapted(custom_space())
    dict_inputs = space.get_inputs()
    encoded_features = space.get_encoded_features()
    x = keras.layers.Dense(32, activation="relu")(encoded_features)
    x = keras.layers.Dropout(0.5)(x)
    predictions = keras.layers.Dense(1, activation="sigmoid")(x)
    training_model = keras.Model(inputs=encoded_features, outputs=predictions)
    inference_model = keras.Model(inputs=dict_inputs, outputs=predictions)
    _fit_and_infer(training_model, inference_model, space)


def test_dict_mode_hashing_rescaling_and_int_outputs():
    space = FeatureSpace(
        features={"sex": "integer_categorical",
                  "thal": FeatureSpace.string_categorical(output_mode="int"),
                  "oldpeak": "float_rescaled", "cp": "integer_hashed",
                  "thal2": "string_hashed", "x": "float"},
        crosses=[FeatureSpace.cross(("sex", "thal"), crossing_dim=8, output_mode="int")],
        output_mode="dict", hashing_dim=8)
    data = {"sex": TRAIN["sex"][:5], "thal": TRAIN["thal"][:5],
            "oldpeak": TRAIN["oldpeak"][:5], "cp": TRAIN["cp"][:5],
            "thal2": TRAIN["thal"][:5], "x": TRAIN["oldpeak"][:5]}
    space.adapt(tf.data.Dataset.from_tensor_slices(data))     # unbatched elements
    out = space(data)
    assert sorted(out) == ["cp", "oldpeak", "sex", "sex_X_thal", "thal", "thal2", "x"]
    # Keras 3.15 on the same data
    np.testing.assert_array_equal(np.argmax(out["cp"].numpy(), -1), [7, 1, 7, 7, 7])
    np.testing.assert_array_equal(np.argmax(out["thal2"].numpy(), -1), [7] * 5)
    np.testing.assert_array_equal(out["sex"].numpy(), [[0, 1, 0]] * 3 + [[0, 0, 1]] * 2)
    np.testing.assert_array_equal(out["sex_X_thal"].numpy(), [[1], [1], [1], [4], [4]])
    assert out["sex_X_thal"].dtype == tf.int64 and out["thal"].dtype == tf.int64
    np.testing.assert_array_equal(out["thal"].numpy(), [[1]] * 5)
    np.testing.assert_allclose(out["oldpeak"].numpy()[:, 0], [6.1, 3.7, 5.2, 3.0, 0.1],
                               rtol=1e-6)
    np.testing.assert_allclose(out["x"].numpy()[:, 0], [6.1, 3.7, 5.2, 3.0, 0.1], rtol=1e-6)
    single = space({k: v[3] for k, v in data.items()})
    np.testing.assert_array_equal(single["sex"].numpy(), [0, 0, 1])
    np.testing.assert_array_equal(single["sex_X_thal"].numpy(), [4])


def test_custom_feature_with_vocabulary_needs_no_adapt():
    lookup = keras.layers.StringLookup(vocabulary=["a", "b", "c"])
    space = FeatureSpace({"s": FeatureSpace.feature(preprocessor=lookup, dtype="string",
                                                    output_mode="one_hot"),
                          "r": FeatureSpace.float_rescaled(scale=2.0, offset=1.0)})
    out = space({"s": ["c", "z", "a"], "r": [0.0, 1.0, 2.5]})
    # columns: "r" then "s" (sorted names); "s" one-hot over [UNK], a, b, c
    np.testing.assert_allclose(out.numpy(), [[1, 0, 0, 0, 1], [3, 1, 0, 0, 0],
                                             [6, 0, 1, 0, 0]])


def test_config_round_trip(custom):
    config = custom.get_config()
    assert config["output_mode"] == "concat" and config["crossing_dim"] == 32
    assert config["features"]["thal"]["class_name"] == "Feature"
    assert config["features"]["thal"]["config"]["dtype"] == "string"
    assert config["features"]["thal"]["config"]["preprocessor"]["class_name"] == "StringLookup"
    assert config["crosses"][1]["config"] == {"feature_names": ["thal", "ca"],
                                              "crossing_dim": 16, "output_mode": "one_hot"}
    clone = FeatureSpace.from_config(config)
    assert [c.name for c in clone.crosses] == ["sex_X_age", "thal_X_ca"]
    assert clone.features["age"].preprocessor.num_bins == 30
    assert clone.crosses_by_name["sex_X_age"].crossing_dim == 64


def test_save_and_load(custom, tmp_path):
    path = str(tmp_path / "myfeaturespace.keras")
    custom.save(path)
    reloaded = keras.saving.load_model(path)
    assert isinstance(reloaded, FeatureSpace)
    np.testing.assert_allclose(first_batch(reloaded).numpy(), first_batch(custom).numpy(),
                               atol=1e-6)
    assert reloaded.preprocessors["thal"].get_vocabulary() == ["reversible", "normal", "fixed"]


def test_bad_arguments():
    with pytest.raises(ValueError, match="invalid feature type 'floaty' for feature 'a'"):
        FeatureSpace({"a": "floaty"})
    with pytest.raises(ValueError, match="output_mode must be one of .*'dict', 'concat'.*"
                                         "got output_mode='vector'"):
        FeatureSpace({"a": "float"}, output_mode="vector")
    with pytest.raises(ValueError, match=r"features must be a non-empty dict"):
        FeatureSpace({})
    with pytest.raises(ValueError, match=r"the cross \('a', 'b'\).*not in `features`: \['b'\]"):
        FeatureSpace({"a": "integer_categorical"}, crosses=[("a", "b")])
    with pytest.raises(ValueError, match="FeatureSpace.cross: output_mode must be one of .*"
                                         "got output_mode='float'"):
        FeatureSpace.cross(("a", "b"), 8, output_mode="float")
    with pytest.raises(ValueError, match="FeatureSpace.feature: output_mode .*got "
                                         "output_mode='dense'"):
        FeatureSpace.feature("float32", keras.layers.Identity(), "dense")
    space = FeatureSpace({"a": "float_normalized"})
    with pytest.raises(ValueError, match=r"call .adapt\(dataset\)"):
        space({"a": [1.0]})
    with pytest.raises(ValueError, match="expected a tf.data.Dataset or a dict of arrays, "
                                         "got list"):
        space.adapt([1.0, 2.0])
    space.adapt({"a": np.array([1.0, 3.0])})
    with pytest.raises(ValueError, match="can only be called on a dict of features, got "
                                         r"data=\[1.0\]"):
        space([1.0])
    with pytest.raises(ValueError, match=r"the data lacks the features \['a'\]"):
        space({"b": [1.0]})


def test_features_that_cannot_be_encoded():
    ints = FeatureSpace({"a": FeatureSpace.integer_categorical(output_mode="int")})
    with pytest.raises(ValueError, match="cannot concatenate feature 'a'.*dtype int64.*"
                                         "output_mode='dict'"):
        ints.adapt({"a": np.array([1, 2, 2])})
    floats = FeatureSpace({"a": FeatureSpace.feature("float32", keras.layers.Identity(),
                                                     "one_hot")})
    with pytest.raises(ValueError, match="feature 'a' has output_mode='one_hot'.*must return "
                                         "integers; it returns float32"):
        floats({"a": [1.0]})
