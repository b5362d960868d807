"""Port of TensorFlow's tutorial "Classify structured data using Keras preprocessing layers"
(https://www.tensorflow.org/tutorials/structured_data/preprocessing_layers).

The tutorial's cells run in order: the target column from `AdoptionSpeed`, dropping unused
columns, the 80/10/10 split, `df_to_dataset`, `get_normalization_layer` (Normalization with
`axis=None` adapted on a mapped dataset), `get_category_encoding_layer` (StringLookup /
IntegerLookup with `max_tokens` followed by CategoryEncoding), the functional model over all
thirteen inputs joined with `tf.keras.layers.concatenate`, compile / fit / evaluate,
`model.save` + `tf.keras.models.load_model` of the `.keras` file, and inference on the raw
sample dict `{name: tf.convert_to_tensor([value])}`.

Changed: the PetFinder CSV (a download) is replaced by 2000 synthetic rows built in Python with
the same column names and types (strings for the categorical columns, int64 for Age, Fee,
PhotoAmt, AdoptionSpeed) and an adoption speed that depends on Type, PhotoAmt and Fee, so the
target is learnable. There is no pandas here: the data frame is a dict of numpy columns, the
shuffle-and-split `np.split(dataframe.sample(frac=1), ...)` is a permutation of those columns,
and `df_to_dataset` keeps the tutorial's logic (including its use of every column of the
original frame, so `target` also appears among the features) on that dict. `plot_model` is
skipped (it needs pydot/graphviz). The tutorial's 10 epochs are kept; the file runs in well
under 60 s on 2 CPU cores.
"""
import os

import numpy as np
import pytest

import minitf as tf
from minitf.keras import layers

_N_ROWS = 2000

_COLUMNS = ['Type', 'Age', 'Breed1', 'Gender', 'Color1', 'Color2', 'MaturitySize',
            'FurLength', 'Vaccinated', 'Sterilized', 'Health', 'Fee', 'Description',
            'PhotoAmt', 'AdoptionSpeed']


def _choice(rng, values, probabilities):
    return np.array(values, dtype=object)[rng.choice(len(values), size=_N_ROWS, p=probabilities)]


def make_petfinder_frame(seed=0):
    """A dict of columns shaped like petfinder-mini.csv (the tutorial's `dataframe`)."""
    rng = np.random.RandomState(seed)
    frame = {
        'Type': _choice(rng, ['Dog', 'Cat'], [0.55, 0.45]),
        'Age': rng.choice([1, 2, 3, 4, 6, 12, 24, 36], size=_N_ROWS).astype(np.int64),
        'Breed1': _choice(rng, ['Mixed Breed', 'Domestic Short Hair', 'Tabby',
                                'Domestic Medium Hair', 'Poodle', 'Terrier', 'Siamese'],
                          [0.35, 0.2, 0.15, 0.1, 0.08, 0.07, 0.05]),
        'Gender': _choice(rng, ['Female', 'Male', 'Mixed'], [0.5, 0.4, 0.1]),
        'Color1': _choice(rng, ['Black', 'Brown', 'Golden', 'Cream', 'Gray', 'White', 'Yellow'],
                          [0.3, 0.25, 0.12, 0.1, 0.1, 0.08, 0.05]),
        'Color2': _choice(rng, ['No Color', 'White', 'Brown', 'Cream', 'Gray', 'Golden'],
                          [0.3, 0.25, 0.18, 0.12, 0.1, 0.05]),
        'MaturitySize': _choice(rng, ['Medium', 'Small', 'Large'], [0.6, 0.3, 0.1]),
        'FurLength': _choice(rng, ['Short', 'Medium', 'Long'], [0.55, 0.35, 0.1]),
        'Vaccinated': _choice(rng, ['No', 'Yes', 'Not Sure'], [0.45, 0.4, 0.15]),
        'Sterilized': _choice(rng, ['No', 'Yes', 'Not Sure'], [0.6, 0.25, 0.15]),
        'Health': _choice(rng, ['Healthy', 'Minor Injury', 'Serious Injury'], [0.9, 0.08, 0.02]),
        'Fee': rng.choice([0, 0, 0, 50, 100, 150, 200, 300], size=_N_ROWS).astype(np.int64),
        'Description': np.array(['pet number %d' % i for i in range(_N_ROWS)], dtype=object),
        'PhotoAmt': rng.randint(0, 9, size=_N_ROWS).astype(np.int64),
    }
    # Cats and pets with many photos and a low fee get adopted (speed < 4); the rest mostly not.
    score = ((frame['Type'] == 'Cat') * 1.5 + frame['PhotoAmt'] * 0.5
             - frame['Fee'] / 100.0 + rng.normal(0.0, 0.5, size=_N_ROWS))
    frame['AdoptionSpeed'] = np.where(score > 2.0, rng.randint(0, 4, size=_N_ROWS), 4)
    frame['AdoptionSpeed'] = frame['AdoptionSpeed'].astype(np.int64)
    return frame


def _rows(frame, index):
    return {key: column[index] for key, column in frame.items()}


def df_to_dataset(dataframe, shuffle=True, batch_size=32):
    """The tutorial's `df_to_dataset`, on a dict of numpy columns instead of a DataFrame."""
    df = dict(dataframe)
    labels = df.pop('target')
    df = {key: value[:, tf.newaxis] for key, value in dataframe.items()}
    ds = tf.data.Dataset.from_tensor_slices((dict(df), labels))
    if shuffle:
        ds = ds.shuffle(buffer_size=len(labels))
    ds = ds.batch(batch_size)
    ds = ds.prefetch(batch_size)
    return ds


def get_normalization_layer(name, dataset):
    # Create a Normalization layer for the feature.
    normalizer = layers.Normalization(axis=None)
    # Prepare a Dataset that only yields the feature.
    feature_ds = dataset.map(lambda x, y: x[name])
    # Learn the statistics of the data.
    normalizer.adapt(feature_ds)
    return normalizer


def get_category_encoding_layer(name, dataset, dtype, max_tokens=None):
    # Create a layer that turns strings into integer indices.
    if dtype == 'string':
        index = layers.StringLookup(max_tokens=max_tokens)
    # Otherwise, create a layer that turns integer values into integer indices.
    else:
        index = layers.IntegerLookup(max_tokens=max_tokens)
    # Prepare a `tf.data.Dataset` that only yields the feature.
    feature_ds = dataset.map(lambda x, y: x[name])
    # Learn the set of possible values and assign them a fixed integer index.
    index.adapt(feature_ds)
    # Encode the integer indices.
    encoder = layers.CategoryEncoding(num_tokens=index.vocabulary_size())
    # Apply multi-hot encoding to the indices.
    return lambda feature: encoder(index(feature))


@pytest.fixture(scope="module")
def splits():
    dataframe = make_petfinder_frame()
    # In the original dataset, `'AdoptionSpeed'` of `4` indicates a pet was not adopted.
    dataframe['target'] = np.where(dataframe['AdoptionSpeed'] == 4, 0, 1)
    # Drop unused features.
    for column in ['AdoptionSpeed', 'Description']:
        dataframe.pop(column)
    order = np.random.RandomState(1).permutation(_N_ROWS)
    n = len(order)
    train, val, test = (_rows(dataframe, part) for part in
                        np.split(order, [int(0.8 * n), int(0.9 * n)]))
    return dataframe, train, val, test


def test_synthetic_frame_and_split(splits):
    dataframe, train, val, test = splits
    assert [len(part['target']) for part in (train, val, test)] == [1600, 200, 200]
    assert list(dataframe) == [c for c in _COLUMNS if c not in ('Description', 'AdoptionSpeed')] \
        + ['target']
    # Both classes are present in reasonable proportion.
    assert 0.3 < dataframe['target'].mean() < 0.7


def test_df_to_dataset_batch(splits):
    _, train, _, _ = splits
    train_ds = df_to_dataset(train, batch_size=5)
    [(train_features, label_batch)] = train_ds.take(1)
    # The tutorial prints every column, `target` included (df_to_dataset reads `dataframe`).
    assert list(train_features.keys()) == ['Type', 'Age', 'Breed1', 'Gender', 'Color1',
                                           'Color2', 'MaturitySize', 'FurLength', 'Vaccinated',
                                           'Sterilized', 'Health', 'Fee', 'PhotoAmt', 'target']
    assert tuple(train_features['Age'].shape) == (5, 1)
    assert train_features['Age'].dtype == tf.int64
    assert train_features['Type'].dtype == tf.string
    assert tuple(label_batch.shape) == (5,)
    np.testing.assert_array_equal(train_features['target'].numpy()[:, 0], label_batch.numpy())


def test_normalization_layer_on_photo_amt(splits):
    _, train, _, _ = splits
    train_ds = df_to_dataset(train, batch_size=5)
    [(train_features, _)] = train_ds.take(1)
    photo_count_col = train_features['PhotoAmt']
    layer = get_normalization_layer('PhotoAmt', train_ds)
    out = layer(photo_count_col)
    # axis=None: one mean and variance over the whole training column.
    values = train['PhotoAmt'].astype(np.float64)
    expected = (photo_count_col.numpy() - values.mean()) / np.sqrt(values.var())
    assert tuple(out.shape) == (5, 1) and out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_string_category_encoding_of_type(splits):
    _, train, _, _ = splits
    train_ds = df_to_dataset(train, batch_size=5)
    [(train_features, _)] = train_ds.take(1)
    test_type_col = train_features['Type']
    test_type_layer = get_category_encoding_layer(name='Type', dataset=train_ds, dtype='string')
    out = test_type_layer(test_type_col).numpy()
    # Vocabulary: [UNK], then by decreasing frequency: Dog (more frequent here), Cat.
    counts = {v: int((train['Type'] == v).sum()) for v in ('Dog', 'Cat')}
    assert counts['Dog'] > counts['Cat']
    index = {b'Dog': 1, b'Cat': 2}
    expected = np.zeros((5, 3), np.float32)
    for row, value in enumerate(test_type_col.numpy()[:, 0]):
        expected[row, index[value]] = 1.0
    np.testing.assert_array_equal(out, expected)


def test_integer_category_encoding_of_age_with_max_tokens(splits):
    _, train, _, _ = splits
    train_ds = df_to_dataset(train, batch_size=5)
    [(train_features, _)] = train_ds.take(1)
    test_age_col = train_features['Age']
    test_age_layer = get_category_encoding_layer(name='Age', dataset=train_ds, dtype='int64',
                                                 max_tokens=5)
    out = test_age_layer(test_age_col).numpy()
    assert out.shape == (5, 5)
    # max_tokens=5: the OOV index 0 plus the four most frequent ages.
    ages, counts = np.unique(train['Age'], return_counts=True)
    order = sorted(zip(-counts, -ages))  # Keras: by count, ties by larger value first
    top4 = [-a for _, a in order[:4]]
    expected = np.zeros((5, 5), np.float32)
    for row, age in enumerate(test_age_col.numpy()[:, 0]):
        expected[row, top4.index(age) + 1 if age in top4 else 0] = 1.0
    np.testing.assert_array_equal(out, expected)


def _build_model(train_ds):
    all_inputs = {}
    encoded_features = []

    # Numerical features.
    for header in ['PhotoAmt', 'Fee']:
        numeric_col = tf.keras.Input(shape=(1,), name=header)
        normalization_layer = get_normalization_layer(header, train_ds)
        encoded_numeric_col = normalization_layer(numeric_col)
        all_inputs[header] = numeric_col
        encoded_features.append(encoded_numeric_col)

    age_col = tf.keras.Input(shape=(1,), name='Age', dtype='int64')
    encoding_layer = get_category_encoding_layer(name='Age', dataset=train_ds, dtype='int64',
                                                 max_tokens=5)
    encoded_age_col = encoding_layer(age_col)
    all_inputs['Age'] = age_col
    encoded_features.append(encoded_age_col)

    categorical_cols = ['Type', 'Color1', 'Color2', 'Gender', 'MaturitySize',
                        'FurLength', 'Vaccinated', 'Sterilized', 'Health', 'Breed1']
    for header in categorical_cols:
        categorical_col = tf.keras.Input(shape=(1,), name=header, dtype='string')
        encoding_layer = get_category_encoding_layer(name=header, dataset=train_ds,
                                                     dtype='string', max_tokens=5)
        encoded_categorical_col = encoding_layer(categorical_col)
        all_inputs[header] = categorical_col
        encoded_features.append(encoded_categorical_col)

    all_features = tf.keras.layers.concatenate(encoded_features)
    x = tf.keras.layers.Dense(32, activation="relu")(all_features)
    x = tf.keras.layers.Dropout(0.5)(x)
    output = tf.keras.layers.Dense(1)(x)

    model = tf.keras.Model(all_inputs, output)
    return model, all_inputs, all_features


_SAMPLE = {
    'Type': 'Cat',
    'Age': 3,
    'Breed1': 'Tabby',
    'Gender': 'Male',
    'Color1': 'Black',
    'Color2': 'White',
    'MaturitySize': 'Small',
    'FurLength': 'Short',
    'Vaccinated': 'No',
    'Sterilized': 'No',
    'Health': 'Healthy',
    'Fee': 100,
    'PhotoAmt': 2,
}


def test_model_train_save_load_and_predict(splits, tmp_path):
    tf.keras.utils.set_random_seed(1)
    _, train, val, test = splits
    batch_size = 256
    train_ds = df_to_dataset(train, batch_size=batch_size)
    val_ds = df_to_dataset(val, shuffle=False, batch_size=batch_size)
    test_ds = df_to_dataset(test, shuffle=False, batch_size=batch_size)

    model, all_inputs, all_features = _build_model(train_ds)
    # 2 numeric + Age (5 tokens) + 10 string columns with at most 5 tokens each.
    widths = [5] + [min(5, len(set(train[c])) + 1) for c in
                    ['Type', 'Color1', 'Color2', 'Gender', 'MaturitySize', 'FurLength',
                     'Vaccinated', 'Sterilized', 'Health', 'Breed1']]
    assert tuple(all_features.shape) == (None, 2 + sum(widths)) == (None, 49)
    assert len(model.inputs) == 13

    model.compile(optimizer='adam',
                  loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(train_ds, epochs=10, validation_data=val_ds, verbose=0)
    losses = history.history['loss']
    assert losses[-1] < losses[0]
    result = model.evaluate(test_ds, return_dict=True, verbose=0)
    assert set(result) == {'loss', 'accuracy'}
    # TensorFlow 2.21 / Keras 3.15 on the same data (seeds 0-2): test accuracy 0.69-0.81, test
    # loss 0.45-0.48, training loss from 0.71-0.79 down to 0.50-0.54 (a guess scores 0.69).
    assert result['accuracy'] >= 0.65 and result['loss'] < 0.6, result

    path = os.path.join(str(tmp_path), 'my_pet_classifier.keras')
    model.save(path)
    reloaded_model = tf.keras.models.load_model(path)

    input_dict = {name: tf.convert_to_tensor([value]) for name, value in _SAMPLE.items()}
    predictions = reloaded_model.predict(input_dict, verbose=0)
    prob = tf.nn.sigmoid(predictions[0])
    assert predictions.shape == (1, 1)
    assert 0.0 < float(prob[0]) < 1.0
    message = ("This particular pet had a %.1f percent probability "
               "of getting adopted." % (100 * prob))
    assert message.startswith("This particular pet had a ")

    # The reloaded model gives the original model's output, on the raw sample and on test data.
    np.testing.assert_allclose(predictions, model.predict(input_dict, verbose=0), rtol=1e-5)
    np.testing.assert_allclose(reloaded_model.predict(test_ds, verbose=0),
                               model.predict(test_ds, verbose=0), rtol=1e-5, atol=1e-6)
    # Inference output equals a manual computation from the preprocessed features.
    dense1, dense2 = [layer for layer in model.layers
                      if isinstance(layer, tf.keras.layers.Dense)]
    feature_model = tf.keras.Model(all_inputs, all_features)
    features = feature_model.predict(input_dict, verbose=0).astype(np.float64)
    w1, b1 = dense1.get_weights()
    w2, b2 = dense2.get_weights()
    manual = np.maximum(features @ w1 + b1, 0.0) @ w2 + b2
    np.testing.assert_allclose(predictions, manual, rtol=1e-4, atol=1e-5)
    # TF's value for the sample's preprocessed features (same data): the two normalized
    # numbers, then the positions of the ones in the 47 encoded columns.
    np.testing.assert_allclose(features[0, :2], [-0.7645716667175293, -0.009188173338770866],
                               rtol=1e-5)
    assert np.flatnonzero(features[0, 2:]).tolist() == [0, 7, 9, 15, 20, 24, 27, 31, 35, 39, 45]
    # The sample's Fee and PhotoAmt are normalized with the training column's statistics.
    for column, position in (('PhotoAmt', 0), ('Fee', 1)):
        values = train[column].astype(np.float64)
        np.testing.assert_allclose(features[0, position],
                                   (_SAMPLE[column] - values.mean()) / values.std(), rtol=1e-5)
