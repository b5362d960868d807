"""Port of keras.io's example "Structured data classification from scratch"
(https://keras.io/examples/structured_data/structured_data_classification_from_scratch/),
the Keras 3 version: one `keras.Input` per column, `IntegerLookup` / `StringLookup`
(`output_mode="binary"`) and `Normalization` encoders built by the example's
`encode_categorical_feature` / `encode_numerical_feature` helpers, `layers.concatenate`,
Dense/Dropout, `fit` with `validation_data`, and inference on one raw sample dict.

Changes: no download and no pandas. The Cleveland heart-disease CSV (303 rows, 14 columns) is
replaced by 303 synthetic rows with the same columns and dtypes (ints as int64, `oldpeak` as
float64, `thal` as strings) whose `target` depends on a few of the columns, held in a dict of
numpy arrays. The pandas lines are rewritten with numpy: `dataframe.sample(frac=0.2,
random_state=1337)` / `drop` become a seeded permutation split, and `dataframe.pop("target")` /
`dict(dataframe)` become dict operations. Training runs 15 epochs instead of 50 so the file
stays well under a minute on 2 CPU cores. `keras.utils.plot_model` is left out (it draws a
picture and needs pydot).
"""
import numpy as np

import minitf as tf
from minitf import keras
from minitf.keras import layers
from minitf.keras.layers import IntegerLookup, Normalization, StringLookup

_NUM_ROWS = 303
_INT_CATEGORICAL = ["sex", "cp", "fbs", "restecg", "exang", "ca"]
_NUMERICAL = ["age", "trestbps", "chol", "thalach", "oldpeak", "slope"]
# The order of the example's `layers.concatenate([...])` call.
_CONCAT_ORDER = ["sex", "cp", "fbs", "restecg", "exang", "slope", "ca", "thal", "age",
                 "trestbps", "chol", "thalach", "oldpeak"]


def _synthetic_heart_data():
    """A dict of numpy columns shaped like the heart-disease CSV, with a learnable target."""
    rng = np.random.default_rng(0)
    n = _NUM_ROWS
    data = {
        "age": rng.integers(29, 78, n),
        "sex": rng.integers(0, 2, n),
        "cp": rng.choice([0, 1, 2, 3, 4], n, p=[0.05, 0.1, 0.3, 0.15, 0.4]),
        "trestbps": rng.integers(94, 200, n),
        "chol": rng.integers(126, 400, n),
        "fbs": rng.choice([0, 1], n, p=[0.85, 0.15]),
        "restecg": rng.choice([0, 1, 2], n, p=[0.5, 0.05, 0.45]),
        "thalach": rng.integers(71, 202, n),
        "exang": rng.choice([0, 1], n, p=[0.65, 0.35]),
        "oldpeak": np.round(rng.uniform(0.0, 4.0, n), 1),
        "slope": rng.choice([1, 2, 3], n, p=[0.45, 0.45, 0.1]),
        "ca": rng.choice([0, 1, 2, 3], n, p=[0.55, 0.25, 0.12, 0.08]),
        "thal": rng.choice(np.array(["normal", "reversible", "fixed"], dtype=object), n,
                           p=[0.55, 0.38, 0.07]),
    }
    score = (1.5 * (data["thal"] == "reversible") + 1.2 * data["exang"] + 0.8 * data["ca"]
             + 0.7 * (data["oldpeak"] - 1.5) - 0.03 * (data["thalach"] - 140)
             + 0.6 * (data["cp"] == 4) - 1.4 + rng.normal(0.0, 0.5, n))
    data["target"] = (score > 0).astype(np.int64)
    for name in data:
        if name not in ("oldpeak", "thal"):
            data[name] = data[name].astype(np.int64)
    return data


dataframe = _synthetic_heart_data()


# --- The example's cells (pandas lines rewritten with numpy, see the module docstring) -------

def dataframe_to_dataset(dataframe):
    dataframe = dict(dataframe)  # pandas: dataframe.copy()
    labels = dataframe.pop("target")
    ds = tf.data.Dataset.from_tensor_slices((dict(dataframe), labels))
    ds = ds.shuffle(buffer_size=len(labels))
    return ds


def encode_numerical_feature(feature, name, dataset):
    # Create a Normalization layer for our feature
    normalizer = Normalization()

    # Prepare a Dataset that only yields our feature
    feature_ds = dataset.map(lambda x, y: x[name])
    feature_ds = feature_ds.map(lambda x: tf.expand_dims(x, -1))

    # Learn the statistics of the data
    normalizer.adapt(feature_ds)

    # Normalize the input feature
    encoded_feature = normalizer(feature)
    return encoded_feature


def encode_categorical_feature(feature, name, dataset, is_string):
    lookup_class = StringLookup if is_string else IntegerLookup
    # Create a lookup layer which will turn strings into integer indices
    lookup = lookup_class(output_mode="binary")

    # Prepare a Dataset that only yields our feature
    feature_ds = dataset.map(lambda x, y: x[name])
    feature_ds = feature_ds.map(lambda x: tf.expand_dims(x, -1))

    # Learn the set of possible string values and assign them a fixed integer index
    lookup.adapt(feature_ds)

    # Turn the string input into integer indices
    encoded_feature = lookup(feature)
    return encoded_feature


def _split(dataframe):
    """pandas: `val = dataframe.sample(frac=0.2, random_state=1337)`; `train = drop(val)`."""
    order = np.random.default_rng(1337).permutation(_NUM_ROWS)
    val_rows = np.sort(order[:int(round(0.2 * _NUM_ROWS))])
    train_rows = np.setdiff1d(np.arange(_NUM_ROWS), val_rows)
    return ({k: v[val_rows] for k, v in dataframe.items()},
            {k: v[train_rows] for k, v in dataframe.items()})


def _build_model(train_ds):
    # Categorical features encoded as integers
    sex = keras.Input(shape=(1,), name="sex", dtype="int64")
    cp = keras.Input(shape=(1,), name="cp", dtype="int64")
    fbs = keras.Input(shape=(1,), name="fbs", dtype="int64")
    restecg = keras.Input(shape=(1,), name="restecg", dtype="int64")
    exang = keras.Input(shape=(1,), name="exang", dtype="int64")
    ca = keras.Input(shape=(1,), name="ca", dtype="int64")

    # Categorical feature encoded as string
    thal = keras.Input(shape=(1,), name="thal", dtype="string")

    # Numerical features
    age = keras.Input(shape=(1,), name="age")
    trestbps = keras.Input(shape=(1,), name="trestbps")
    chol = keras.Input(shape=(1,), name="chol")
    thalach = keras.Input(shape=(1,), name="thalach")
    oldpeak = keras.Input(shape=(1,), name="oldpeak")
    slope = keras.Input(shape=(1,), name="slope")

    all_inputs = [
        sex, cp, fbs, restecg, exang, ca, thal, age, trestbps, chol, thalach, oldpeak, slope,
    ]

    # Integer categorical features
    sex_encoded = encode_categorical_feature(sex, "sex", train_ds, False)
    cp_encoded = encode_categorical_feature(cp, "cp", train_ds, False)
    fbs_encoded = encode_categorical_feature(fbs, "fbs", train_ds, False)
    restecg_encoded = encode_categorical_feature(restecg, "restecg", train_ds, False)
    exang_encoded = encode_categorical_feature(exang, "exang", train_ds, False)
    ca_encoded = encode_categorical_feature(ca, "ca", train_ds, False)

    # String categorical features
    thal_encoded = encode_categorical_feature(thal, "thal", train_ds, True)

    # Numerical features
    age_encoded = encode_numerical_feature(age, "age", train_ds)
    trestbps_encoded = encode_numerical_feature(trestbps, "trestbps", train_ds)
    chol_encoded = encode_numerical_feature(chol, "chol", train_ds)
    thalach_encoded = encode_numerical_feature(thalach, "thalach", train_ds)
    oldpeak_encoded = encode_numerical_feature(oldpeak, "oldpeak", train_ds)
    slope_encoded = encode_numerical_feature(slope, "slope", train_ds)

    all_features = layers.concatenate(
        [
            sex_encoded, cp_encoded, fbs_encoded, restecg_encoded, exang_encoded,
            slope_encoded, ca_encoded, thal_encoded, age_encoded, trestbps_encoded,
            chol_encoded, thalach_encoded, oldpeak_encoded,
        ]
    )
    x = layers.Dense(32, activation="relu")(all_features)
    x = layers.Dropout(0.5)(x)
    output = layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(all_inputs, output)
    model.compile("adam", "binary_crossentropy", metrics=["accuracy"])
    return model, all_features


sample = {
    "age": 60,
    "sex": 1,
    "cp": 1,
    "trestbps": 145,
    "chol": 233,
    "fbs": 1,
    "restecg": 2,
    "thalach": 150,
    "exang": 0,
    "oldpeak": 2.3,
    "slope": 3,
    "ca": 0,
    "thal": "fixed",
}


# --- Independent numpy reference of the preprocessing -----------------------------------------

def _adapted_vocabulary(column):
    """Keras' adapted vocabulary order: most frequent first, ties by the larger token."""
    values, counts = np.unique(column, return_counts=True)
    return sorted(values.tolist(), key=lambda v: (counts[values.tolist().index(v)], v),
                  reverse=True)


def _manual_features(train, row):
    """The concatenated encoding of one raw `row`, from the training columns in numpy."""
    parts = []
    for name in _CONCAT_ORDER:
        if name in _NUMERICAL:
            column = train[name].astype(np.float64)
            parts.append([(row[name] - column.mean()) / np.sqrt(column.var())])
        else:
            vocabulary = _adapted_vocabulary(train[name])
            encoded = np.zeros(len(vocabulary) + 1)  # index 0 is the OOV token
            encoded[1 + vocabulary.index(row[name]) if row[name] in vocabulary else 0] = 1.0
            parts.append(encoded)
    return np.concatenate(parts)


# --- Tests --------------------------------------------------------------------------------------

def test_data_preparation_cells():
    # The example shows `dataframe.shape` == (303, 14) for the real CSV.
    assert len(dataframe) == 14 and {len(v) for v in dataframe.values()} == {303}
    val_dataframe, train_dataframe = _split(dataframe)
    # "Using 242 samples for training and 61 for validation"
    assert (len(train_dataframe["target"]), len(val_dataframe["target"])) == (242, 61)

    train_ds = dataframe_to_dataset(train_dataframe)
    for x, y in train_ds.take(1):
        assert sorted(x) == sorted(k for k in dataframe if k != "target")
        assert x["thal"].dtype == tf.string and x["thal"].shape == ()
        assert x["age"].dtype == tf.int64 and x["oldpeak"].dtype == tf.float64
        assert y.shape == () and int(y) in (0, 1)

    batches = list(train_ds.batch(32))
    assert [int(b[1].shape[0]) for b in batches] == [32] * 7 + [18]
    assert tuple(batches[0][0]["thal"].shape) == (32,)


def test_encoders_match_numpy():
    _, train_dataframe = _split(dataframe)
    train_ds = dataframe_to_dataset(train_dataframe).batch(32)
    thal = keras.Input(shape=(1,), name="thal", dtype="string")
    lookup_output = encode_categorical_feature(thal, "thal", train_ds, True)
    # One OOV slot plus the 3 adapted strings.
    assert tuple(lookup_output.shape) == (None, 4)
    lookup_layer = keras.Model(thal, lookup_output).layers[-1]
    expected = ["[UNK]"] + _adapted_vocabulary(train_dataframe["thal"])
    assert lookup_layer.get_vocabulary() == expected

    age = keras.Input(shape=(1,), name="age")
    normalized = encode_numerical_feature(age, "age", train_ds)
    assert tuple(normalized.shape) == (None, 1)
    normalizer = keras.Model(age, normalized).layers[-1]
    ages = train_dataframe["age"].astype(np.float64)
    np.testing.assert_allclose(np.asarray(normalizer.mean).ravel(), [ages.mean()], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(normalizer.variance).ravel(), [ages.var()],
                               rtol=1e-4)


def test_train_and_infer_on_a_raw_sample():
    keras.utils.set_random_seed(42)
    val_dataframe, train_dataframe = _split(dataframe)
    train_ds = dataframe_to_dataset(train_dataframe)
    val_ds = dataframe_to_dataset(val_dataframe)
    train_ds = train_ds.batch(32)
    val_ds = val_ds.batch(32)

    model, all_features = _build_model(train_ds)
    # One OOV slot plus the distinct values for each categorical column (sex 2, cp 5, fbs 2,
    # restecg 3, exang 2, ca 4, thal 3), and the 6 numerical columns.
    assert tuple(all_features.shape) == (None, 3 + 6 + 3 + 4 + 3 + 5 + 4 + 6)
    assert tuple(model.output.shape) == (None, 1)

    history = model.fit(train_ds, epochs=15, validation_data=val_ds, verbose=0)
    val_loss = history.history["val_loss"]
    assert len(val_loss) == 15
    assert val_loss[-1] < 0.8 * val_loss[0]
    assert history.history["val_accuracy"][-1] >= 0.8

    input_dict = {name: keras.ops.convert_to_tensor([value]) for name, value in sample.items()}
    predictions = model.predict(input_dict, verbose=0)
    assert predictions.shape == (1, 1)
    message = (f"This particular patient had a {100 * predictions[0][0]:.1f} "
               "percent probability of having a heart disease, as evaluated by our model.")
    assert message.startswith("This particular patient had a ")

    dense_1, dense_2 = [layer for layer in model.layers if isinstance(layer, layers.Dense)]
    kernel_1, bias_1 = dense_1.get_weights()
    kernel_2, bias_2 = dense_2.get_weights()
    features = _manual_features(train_dataframe, sample)
    hidden = np.maximum(features @ kernel_1 + bias_1, 0.0)  # Dropout is inactive in predict
    expected = 1.0 / (1.0 + np.exp(-(hidden @ kernel_2 + bias_2)))
    np.testing.assert_allclose(predictions[0], expected, rtol=1e-4, atol=1e-6)

    # Values never seen in `adapt` go to the OOV slot of their lookup.
    unseen = dict(sample, thal="missing", ca=9)
    unseen_dict = {name: keras.ops.convert_to_tensor([value]) for name, value in unseen.items()}
    hidden = np.maximum(_manual_features(train_dataframe, unseen) @ kernel_1 + bias_1, 0.0)
    expected = 1.0 / (1.0 + np.exp(-(hidden @ kernel_2 + bias_2)))
    np.testing.assert_allclose(model.predict(unseen_dict, verbose=0)[0], expected, rtol=1e-4,
                               atol=1e-6)
