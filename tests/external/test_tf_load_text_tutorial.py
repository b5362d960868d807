"""Port of the tensorflow.org tutorial "Load text"
(https://www.tensorflow.org/tutorials/load_data/text, tensorflow/docs
site/en/tutorials/load_data/text.ipynb).

Stack Overflow part, as written: `utils.text_dataset_from_directory` with
`validation_split=0.2`, `subset='training'/'validation'`, `seed=42`; `TextVectorization` in
`output_mode='binary'` (tf.keras 2's name for Keras 3's 'multi_hot') and `'int'` with
`output_sequence_length`; `adapt(train_text)`; the `map` / `cache().prefetch(AUTOTUNE)`
pipeline; the binary model (`Dense(4)`) and the int model (`Embedding(mask_zero=True)`,
`Conv1D`, `GlobalMaxPooling1D`, `Dense(4)`); fit, evaluate, and the export model predicting
labels for raw strings.

Iliad part: `tf.data.TextLineDataset` per file, `labeler`, `concatenate`,
`shuffle(reshuffle_each_iteration=False)`, `take`/`skip`, `padded_batch`, fit, evaluate and
inference on raw strings. The tutorial tokenizes there with tensorflow_text and a
`StaticVocabularyTable`: `test_iliad_vocabulary_table` follows that path with
`tf.strings.lower`/`split` in place of tensorflow_text; `test_iliad` trains with
`TextVectorization(standardize=tf.strings.lower, max_tokens=...)`. The tfds part is skipped.

Changed: small synthetic data written to `tmp_path` instead of downloads (class words among
shared words, so the classes are separable), a smaller `VALIDATION_SIZE`/`BATCH_SIZE` and
`VOCAB_SIZE` for the Iliad part; `test_iliad_export_model` checks the export model's
predictions against its layers applied one after the other. Printed values of the tutorial
checked here: the "Found N files belonging to 4 classes." / "Using N files for
training/validation." lines, the class names `csharp java javascript python`, the
`(1, vocabulary)` and `(1, 250)` shapes of the vectorized question, and the padding/OOV
tokens `''`, `'[UNK]'` at the head of the vocabulary.
"""
import collections
import re

import numpy as np
import pytest

import minitf as tf
from minitf.keras import layers, losses, utils
from minitf.keras.layers import TextVectorization

LABEL_NAMES = ["csharp", "java", "javascript", "python"]
CLASS_WORDS = {
    "csharp": ["linq", "dotnet", "nuget", "visualstudio", "wpf"],
    "java": ["maven", "spring", "jvm", "hibernate", "gradle"],
    "javascript": ["npm", "react", "dom", "nodejs", "jquery"],
    "python": ["pip", "django", "numpy", "pandas", "flask"],
}
SHARED_WORDS = ["how", "do", "i", "the", "a", "to", "get", "error", "list", "string", "in",
                "my", "code", "function", "when", "use"]


def keras_vocabulary(texts, standardize, max_tokens):
    """Keras' adapted vocabulary: '' and '[UNK]', then tokens by count, ties broken by the
    larger token first (keras/src/layers/preprocessing/index_lookup.py, `finalize_state`:
    `np.lexsort((tokens, counts))[::-1]`)."""
    counts = collections.Counter(tok for t in texts for tok in standardize(t).split())
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return ["", "[UNK]"] + [tok for tok, _ in ordered][:max_tokens - 2]


def strip_punctuation_lower(text):
    """Keras' default 'lower_and_strip_punctuation'."""
    return re.sub(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']', "", text.lower())


def write_questions(root, per_label, seed):
    """``root/<label>/<n>.txt`` questions of three to five class words among shared words;
    returns {path: (text, label index)}."""
    rng = np.random.default_rng(seed)
    written = {}
    for index, label in enumerate(LABEL_NAMES):
        (root / label).mkdir(parents=True)
        for n in range(per_label):
            words = list(rng.choice(CLASS_WORDS[label], int(rng.integers(3, 6)))) + \
                list(rng.choice(SHARED_WORDS, int(rng.integers(3, 6))))
            rng.shuffle(words)
            text = '"' + " ".join(words).capitalize() + '?"\n'
            path = root / label / f"{n}.txt"
            path.write_text(text)
            written[str(path)] = (text, index)
    return written


# Conv1D drops the Embedding's mask with Keras 3's warning (asserted once in each test).
CONV1D_DROPS_MASK = pytest.mark.filterwarnings(
    "ignore:Layer 'conv1d.*does not support masking:UserWarning")


@CONV1D_DROPS_MASK
def test_stack_overflow(tmp_path, capsys):
    tf.keras.utils.set_random_seed(0)
    train_dir, test_dir = tmp_path / "train", tmp_path / "test"
    train_files = write_questions(train_dir, 200, seed=1)
    test_files = write_questions(test_dir, 25, seed=2)
    by_text = {text.encode(): label for text, label in
               list(train_files.values()) + list(test_files.values())}

    batch_size = 32
    seed = 42
    raw_train_ds = utils.text_dataset_from_directory(
        train_dir, batch_size=batch_size, validation_split=0.2, subset='training', seed=seed)
    printed = capsys.readouterr().out
    assert "Found 800 files belonging to 4 classes." in printed
    assert "Using 640 files for training." in printed

    for text_batch, label_batch in raw_train_ds.take(1):
        assert text_batch.dtype == tf.string and text_batch.shape == (32,)
        assert label_batch.dtype == tf.int32
        for i in range(10):
            print("Question: ", text_batch.numpy()[i])
            print("Label:", label_batch.numpy()[i])
            assert by_text[text_batch.numpy()[i]] == label_batch.numpy()[i]
    for i, label in enumerate(raw_train_ds.class_names):
        print("Label", i, "corresponds to", label)
    assert raw_train_ds.class_names == LABEL_NAMES

    raw_val_ds = utils.text_dataset_from_directory(
        train_dir, batch_size=batch_size, validation_split=0.2, subset='validation', seed=seed)
    raw_test_ds = utils.text_dataset_from_directory(test_dir, batch_size=batch_size)
    printed = capsys.readouterr().out
    assert "Using 160 files for validation." in printed
    assert "Found 100 files belonging to 4 classes." in printed
    train_texts = [t.decode() for x, _ in raw_train_ds for t in x.numpy()]
    val_texts = [t.decode() for x, _ in raw_val_ds for t in x.numpy()]
    assert len(train_texts) == 640 and len(val_texts) == 160
    assert sorted(train_texts + val_texts) == sorted(t for t, _ in train_files.values())

    VOCAB_SIZE = 10000
    binary_vectorize_layer = TextVectorization(max_tokens=VOCAB_SIZE, output_mode='binary')
    MAX_SEQUENCE_LENGTH = 250
    int_vectorize_layer = TextVectorization(max_tokens=VOCAB_SIZE, output_mode='int',
                                            output_sequence_length=MAX_SEQUENCE_LENGTH)
    train_text = raw_train_ds.map(lambda text, labels: text)
    binary_vectorize_layer.adapt(train_text)
    int_vectorize_layer.adapt(train_text)
    vocabulary = keras_vocabulary(train_texts, strip_punctuation_lower, VOCAB_SIZE)
    assert int_vectorize_layer.get_vocabulary() == vocabulary
    # Keras' non-'int' modes have no padding index: the vocabulary starts at '[UNK]'.
    binary_vocabulary = vocabulary[1:]
    assert binary_vectorize_layer.get_vocabulary() == binary_vocabulary

    def binary_vectorize_text(text, label):
        text = tf.expand_dims(text, -1)
        return binary_vectorize_layer(text), label

    def int_vectorize_text(text, label):
        text = tf.expand_dims(text, -1)
        return int_vectorize_layer(text), label

    text_batch, label_batch = next(iter(raw_train_ds))
    first_question, first_label = text_batch[0], label_batch[0]
    print("Question", first_question)
    print("Label", first_label)
    binary = binary_vectorize_text(first_question, first_label)[0].numpy()
    ints = int_vectorize_text(first_question, first_label)[0].numpy()
    print("'binary' vectorized question:", list(binary))
    print("'int' vectorized question:", ints)
    tokens = strip_punctuation_lower(first_question.numpy().decode()).split()
    assert binary.shape == (1, len(binary_vocabulary)) and binary.dtype == np.float32
    np.testing.assert_array_equal(
        binary[0], [1.0 if tok in tokens else 0.0 for tok in binary_vocabulary])
    assert ints.shape == (1, MAX_SEQUENCE_LENGTH)
    expected_ids = [vocabulary.index(tok) for tok in tokens]
    np.testing.assert_array_equal(
        ints[0], expected_ids + [0] * (MAX_SEQUENCE_LENGTH - len(tokens)))
    print("Vocabulary size: {}".format(len(int_vectorize_layer.get_vocabulary())))
    assert int_vectorize_layer.get_vocabulary()[ints[0][0]] == tokens[0]

    binary_train_ds = raw_train_ds.map(binary_vectorize_text)
    binary_val_ds = raw_val_ds.map(binary_vectorize_text)
    binary_test_ds = raw_test_ds.map(binary_vectorize_text)
    int_train_ds = raw_train_ds.map(int_vectorize_text)
    int_val_ds = raw_val_ds.map(int_vectorize_text)
    int_test_ds = raw_test_ds.map(int_vectorize_text)

    AUTOTUNE = tf.data.AUTOTUNE

    def configure_dataset(dataset):
        return dataset.cache().prefetch(buffer_size=AUTOTUNE)

    binary_train_ds = configure_dataset(binary_train_ds)
    binary_val_ds = configure_dataset(binary_val_ds)
    binary_test_ds = configure_dataset(binary_test_ds)
    int_train_ds = configure_dataset(int_train_ds)
    int_val_ds = configure_dataset(int_val_ds)
    int_test_ds = configure_dataset(int_test_ds)
    x, y = next(iter(int_train_ds))
    assert x.shape == (32, MAX_SEQUENCE_LENGTH) and x.dtype == tf.int64

    binary_model = tf.keras.Sequential([layers.Dense(4)])
    binary_model.compile(loss=losses.SparseCategoricalCrossentropy(from_logits=True),
                         optimizer='adam', metrics=['accuracy'])
    bin_history = binary_model.fit(binary_train_ds, validation_data=binary_val_ds, epochs=10,
                                   verbose=0)
    bin_loss = bin_history.history['loss']
    assert all(b < a for a, b in zip(bin_loss, bin_loss[1:]))
    assert bin_history.history['val_accuracy'][-1] >= 0.85

    def create_model(vocab_size, num_labels, vectorizer=None):
        my_layers = []
        if vectorizer is not None:
            my_layers = [vectorizer]
        my_layers.extend([
            layers.Embedding(vocab_size, 64, mask_zero=True),
            layers.Dropout(0.5),
            layers.Conv1D(64, 5, padding="valid", activation="relu", strides=2),
            layers.GlobalMaxPooling1D(),
            layers.Dense(num_labels)
        ])
        model = tf.keras.Sequential(my_layers)
        return model

    int_model = create_model(vocab_size=VOCAB_SIZE + 1, num_labels=4)
    int_model.compile(loss=losses.SparseCategoricalCrossentropy(from_logits=True),
                      optimizer='adam', metrics=['accuracy'])
    with pytest.warns(UserWarning, match="Conv1D.*does not support masking"):
        int_history = int_model.fit(int_train_ds, validation_data=int_val_ds, epochs=10,
                                    verbose=0)
    int_loss_history = int_history.history['loss']
    assert int_loss_history[-1] < 0.5 * int_loss_history[0]

    binary_model.summary()
    int_model.summary()
    assert binary_model.layers[0].kernel.shape == (len(binary_vocabulary), 4)

    binary_loss, binary_accuracy = binary_model.evaluate(binary_test_ds, verbose=0)
    int_loss, int_accuracy = int_model.evaluate(int_test_ds, verbose=0)
    print("Binary model accuracy: {:2.2%}".format(binary_accuracy))
    print("Int model accuracy: {:2.2%}".format(int_accuracy))
    assert binary_accuracy >= 0.85 and int_accuracy >= 0.85

    export_model = tf.keras.Sequential(
        [binary_vectorize_layer, binary_model, layers.Activation('sigmoid')])
    export_model.compile(loss=losses.SparseCategoricalCrossentropy(from_logits=False),
                         optimizer='adam', metrics=['accuracy'])
    # Test it with `raw_test_ds`, which yields raw strings
    loss, accuracy = export_model.evaluate(raw_test_ds, verbose=0)
    print("Accuracy: {:2.2%}".format(accuracy))
    np.testing.assert_allclose(accuracy, binary_accuracy, atol=1e-6)

    def get_string_labels(predicted_scores_batch):
        predicted_int_labels = tf.math.argmax(predicted_scores_batch, axis=1)
        predicted_labels = tf.gather(raw_train_ds.class_names, predicted_int_labels)
        return predicted_labels

    inputs = [
        "how do I use linq with nuget in dotnet?",  # csharp
        "why does my jvm code fail with maven and spring?",  # java
        "how do I use numpy and pandas in django?",  # python
    ]
    # The tutorial passes the Python list itself: see test_predict_on_a_list_of_strings.
    predicted_scores = export_model.predict(tf.constant(inputs), verbose=0)
    assert predicted_scores.shape == (3, 4)
    assert ((predicted_scores > 0) & (predicted_scores < 1)).all()
    predicted_labels = get_string_labels(predicted_scores)
    for input, label in zip(inputs, predicted_labels):
        print("Question: ", input)
        print("Predicted label: ", label.numpy())
    assert [label.numpy() for label in predicted_labels] == [b"csharp", b"java", b"python"]


def test_predict_on_a_list_of_strings():
    """The tutorial's `export_model.predict(inputs)` with `inputs` a list of str: one batch
    of samples, as a string tensor of them gives."""
    vectorize = TextVectorization(output_mode='binary', vocabulary=["a", "b"])
    model = tf.keras.Sequential([vectorize, layers.Dense(2)])
    from_list = model.predict(["a b", "b"], verbose=0)
    assert from_list.shape == (2, 2)
    np.testing.assert_array_equal(from_list, model.predict(tf.constant(["a b", "b"]), verbose=0))


FILE_NAMES = ['cowper.txt', 'derby.txt', 'butler.txt']
TRANSLATOR_WORDS = [["thee", "thy", "hath", "doth", "whence"],
                    ["wherefore", "yon", "ere", "anon", "oft"],
                    ["said", "then", "upon", "would", "went"]]
ILIAD_SHARED = ["achilles", "hector", "troy", "the", "and", "of", "his", "spear", "ships"]


def write_translations(parent_dir, lines_per_file, seed):
    """Three files of lines of 5 to 7 words (every tenth line: 13), each with three
    translator-specific words."""
    rng = np.random.default_rng(seed)
    lines = []
    for words, name in zip(TRANSLATOR_WORDS, FILE_NAMES):
        text = []
        for n in range(lines_per_file):
            n_shared = 10 if n % 10 == 9 else int(rng.integers(2, 5))
            line = list(rng.choice(words, 3)) + list(rng.choice(ILIAD_SHARED, n_shared))
            rng.shuffle(line)
            text.append(" ".join(line).capitalize() + ",")
        (parent_dir / name).write_text("\n".join(text) + "\n")
        lines.append(text)
    return lines


def test_labeler_in_a_loop_captures_each_index(tmp_path):
    """The tutorial's `lines_dataset.map(lambda ex: labeler(ex, i))` in a `for i` loop: TF
    traces the lambda inside `map`, so each file keeps its own index."""
    write_translations(tmp_path, 2, seed=0)

    def labeler(example, index):
        return example, tf.cast(index, tf.int64)

    labeled_data_sets = []
    for i, file_name in enumerate(FILE_NAMES):
        lines_dataset = tf.data.TextLineDataset(str(tmp_path / file_name))
        labeled_dataset = lines_dataset.map(lambda ex: labeler(ex, i))
        labeled_data_sets.append(labeled_dataset)
    labels = [int(label.numpy()) for ds in labeled_data_sets for _, label in ds]
    assert labels == [0, 0, 1, 1, 2, 2]


@CONV1D_DROPS_MASK
def test_iliad(tmp_path, capsys):
    tf.keras.utils.set_random_seed(0)
    parent_dir = tmp_path
    written = write_translations(parent_dir, 100, seed=1)

    def labeler(example, index):
        return example, tf.cast(index, tf.int64)

    labeled_data_sets = []
    for i, file_name in enumerate(FILE_NAMES):
        lines_dataset = tf.data.TextLineDataset(str(parent_dir/file_name))
        labeled_dataset = lines_dataset.map(lambda ex: labeler(ex, i))
        labeled_data_sets.append(labeled_dataset)

    BUFFER_SIZE = 50000
    BATCH_SIZE = 16
    VALIDATION_SIZE = 60

    all_labeled_data = labeled_data_sets[0]
    for labeled_dataset in labeled_data_sets[1:]:
        all_labeled_data = all_labeled_data.concatenate(labeled_dataset)
    unshuffled = [(t.numpy().decode(), int(l.numpy())) for t, l in all_labeled_data]
    assert unshuffled == [(line, label) for label, lines in enumerate(written)
                          for line in lines]
    all_labeled_data = all_labeled_data.shuffle(
        BUFFER_SIZE, reshuffle_each_iteration=False)

    for text, label in all_labeled_data.take(10):
        print("Sentence: ", text.numpy())
        print("Label:", label.numpy())
        assert text.dtype == tf.string and label.dtype == tf.int64 and text.shape == ()
    shuffled = [(t.numpy().decode(), int(l.numpy())) for t, l in all_labeled_data]
    assert shuffled != unshuffled and sorted(shuffled) == sorted(unshuffled)
    assert [(t.numpy().decode(), int(l.numpy())) for t, l in all_labeled_data] == shuffled

    VOCAB_SIZE = 30
    vectorize_layer = TextVectorization(max_tokens=VOCAB_SIZE, standardize=tf.strings.lower)
    vectorize_layer.adapt(all_labeled_data.map(lambda text, label: text))
    vocab = vectorize_layer.get_vocabulary()
    print("Vocab size: ", len(vocab))
    print("First five vocab entries:", vocab[:5])
    expected_vocab = keras_vocabulary([t for t, _ in unshuffled], str.lower, VOCAB_SIZE)
    assert vocab == expected_vocab and len(vocab) == VOCAB_SIZE

    def preprocess_text(text, label):
        return vectorize_layer(text), label

    example_text, example_label = next(iter(all_labeled_data))
    vectorized_text, _ = preprocess_text(example_text, example_label)
    print("Sentence: ", example_text.numpy())
    print("Vectorized sentence: ", vectorized_text.numpy())
    ids = [vocab.index(tok) if tok in vocab else 1 for tok in shuffled[0][0].lower().split()]
    np.testing.assert_array_equal(vectorized_text.numpy(), ids)

    all_encoded_data = all_labeled_data.map(preprocess_text)
    train_data = all_encoded_data.skip(VALIDATION_SIZE).shuffle(BUFFER_SIZE)
    validation_data = all_encoded_data.take(VALIDATION_SIZE)
    train_data = train_data.padded_batch(BATCH_SIZE)
    validation_data = validation_data.padded_batch(BATCH_SIZE)

    sample_text, sample_labels = next(iter(validation_data))
    print("Text batch shape: ", sample_text.shape)
    print("Label batch shape: ", sample_labels.shape)
    print("First text example: ", sample_text[0])
    print("First label example: ", sample_labels[0])
    first_batch = [line.lower().split() for line, _ in shuffled[:BATCH_SIZE]]
    width = max(len(tokens) for tokens in first_batch)
    assert sample_text.shape == (BATCH_SIZE, width) and sample_labels.shape == (BATCH_SIZE,)
    np.testing.assert_array_equal(sample_text[0].numpy(), ids + [0] * (width - len(ids)))
    np.testing.assert_array_equal(sample_labels.numpy(),
                                  [label for _, label in shuffled[:BATCH_SIZE]])
    widths = {x.shape[1] for x, _ in train_data}
    assert len(widths) > 1   # padded to each batch's longest line

    def configure_dataset(dataset):
        return dataset.cache().prefetch(buffer_size=tf.data.AUTOTUNE)

    train_data = configure_dataset(train_data)
    validation_data = configure_dataset(validation_data)

    def create_model(vocab_size, num_labels):
        return tf.keras.Sequential([
            layers.Embedding(vocab_size, 64, mask_zero=True),
            layers.Dropout(0.5),
            layers.Conv1D(64, 5, padding="valid", activation="relu", strides=2),
            layers.GlobalMaxPooling1D(),
            layers.Dense(num_labels)
        ])

    vocab_size = len(vocab)
    model = create_model(vocab_size=vocab_size, num_labels=3)
    model.compile(optimizer='adam',
                  loss=losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=['accuracy'])
    with pytest.warns(UserWarning, match="Conv1D.*does not support masking"):
        history = model.fit(train_data, validation_data=validation_data, epochs=3, verbose=0)
    loss_history = history.history['loss']
    assert all(b < a for a, b in zip(loss_history, loss_history[1:]))
    loss, accuracy = model.evaluate(validation_data, verbose=0)
    print("Loss: ", loss)
    print("Accuracy: {:2.2%}".format(accuracy))
    assert accuracy >= 0.9

    preprocess_layer = TextVectorization(max_tokens=vocab_size,
                                         standardize=tf.strings.lower, vocabulary=vocab)
    assert preprocess_layer.get_vocabulary() == vocab

    export_model = tf.keras.Sequential(
        [preprocess_layer, model,
         layers.Activation('sigmoid')])

    export_model.compile(
        loss=losses.SparseCategoricalCrossentropy(from_logits=False),
        optimizer='adam',
        metrics=['accuracy'])

    inputs = [
        "Yon hector ere the ships oft,",  # Label: 1
        "Then achilles said upon his spear,",  # Label: 2
        "Thee and thy spear hath troy,",  # Label: 0
    ]
    predicted_scores = export_model.predict(inputs, verbose=0)
    predicted_labels = tf.math.argmax(predicted_scores, axis=1)
    for input, label in zip(inputs, predicted_labels):
        print("Question: ", input)
        print("Predicted label: ", label.numpy())
    assert predicted_labels.numpy().tolist() == [1, 2, 0]
    assert [name.numpy() for name in tf.gather(FILE_NAMES, predicted_labels)] == \
        [b"derby.txt", b"butler.txt", b"cowper.txt"]


@CONV1D_DROPS_MASK
def test_iliad_export_model():
    """The tutorial's `export_model` wrapping the trained Conv1D model, evaluated on a raw
    string batch."""
    vocab = ["", "[UNK]", "thee", "yon", "then"]
    model = tf.keras.Sequential([
        layers.Embedding(len(vocab), 64, mask_zero=True),
        layers.Conv1D(64, 5, padding="valid", activation="relu", strides=2),
        layers.GlobalMaxPooling1D(),
        layers.Dense(3)
    ])
    model(tf.zeros((2, 7), tf.int64))
    preprocess_layer = TextVectorization(max_tokens=len(vocab),
                                         standardize=tf.strings.lower, vocabulary=vocab)
    export_model = tf.keras.Sequential(
        [preprocess_layer, model, layers.Activation('sigmoid')])
    export_model.compile(loss=losses.SparseCategoricalCrossentropy(from_logits=False),
                         optimizer='adam', metrics=['accuracy'])
    texts = tf.constant(["Thee thee yon then thee yon then", "Yon then thee yon then"])
    expected = tf.sigmoid(model(preprocess_layer(texts)))
    np.testing.assert_allclose(export_model.predict(texts, verbose=0), expected.numpy(),
                               rtol=1e-5)


def test_iliad_vocabulary_table(tmp_path):
    """The tutorial's own Iliad preprocessing: a vocabulary counted over the tokenized lines,
    `tf.lookup.KeyValueTensorInitializer(keys, range(2, len(vocab) + 2))` and a
    `StaticVocabularyTable` with one OOV bucket, looked up inside `Dataset.map`. The tutorial
    tokenizes with tensorflow_text (`case_fold_utf8`, `UnicodeScriptTokenizer`); here
    `tf.strings.lower` and `tf.strings.split` stand in for them."""
    written = write_translations(tmp_path, 40, seed=3)

    def labeler(example, index):
        return example, tf.cast(index, tf.int64)

    labeled_data_sets = []
    for i, file_name in enumerate(FILE_NAMES):
        lines_dataset = tf.data.TextLineDataset(str(tmp_path/file_name))
        labeled_data_sets.append(lines_dataset.map(lambda ex: labeler(ex, i)))
    all_labeled_data = labeled_data_sets[0]
    for labeled_dataset in labeled_data_sets[1:]:
        all_labeled_data = all_labeled_data.concatenate(labeled_dataset)

    def tokenize(text, unused_label):
        return tf.strings.split(tf.strings.lower(text))

    tokenized_ds = all_labeled_data.map(tokenize)
    vocab_dict = collections.defaultdict(lambda: 0)
    for toks in tokenized_ds.as_numpy_iterator():
        for tok in toks:
            vocab_dict[tok] += 1
    vocab = sorted(vocab_dict.items(), key=lambda x: x[1], reverse=True)
    vocab = [token for token, count in vocab]
    VOCAB_SIZE = 12
    vocab = vocab[:VOCAB_SIZE]
    vocab_size = len(vocab)

    keys = vocab
    values = range(2, len(vocab) + 2)  # Reserve `0` for padding, `1` for OOV tokens.
    init = tf.lookup.KeyValueTensorInitializer(
        keys, values, key_dtype=tf.string, value_dtype=tf.int64)
    num_oov_buckets = 1
    vocab_table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets)
    assert int(vocab_table.size()) == vocab_size + 1

    def preprocess_text(text, label):
        standardized = tf.strings.lower(text)
        tokenized = tf.strings.split(standardized)
        vectorized = vocab_table.lookup(tokenized)
        return vectorized, label

    all_encoded_data = all_labeled_data.map(preprocess_text)
    lines = [line for lines in written for line in lines]
    for (ids, label), line, want_label in zip(all_encoded_data, lines,
                                              [k for k, ls in enumerate(written) for _ in ls]):
        # Known tokens: 2 + their rank. The OOV bucket's id is the number of keys plus the
        # bucket (TF's rule), here vocab_size: the same id as the last-but-one token, which is
        # why the tutorial then sizes its embedding with `vocab_size += 2`.
        want = [2 + vocab.index(t.encode()) if t.encode() in vocab else vocab_size
                for t in line.lower().split()]
        assert ids.numpy().tolist() == want and int(label) == want_label
    batch, _ = next(iter(all_encoded_data.padded_batch(8)))
    assert batch.dtype == tf.int64 and batch.shape[0] == 8
