"""Port of the keras.io code example "OCR model for reading Captchas", Keras 3 version
(https://keras.io/examples/vision/captcha_ocr/, keras-team/keras-io
examples/vision/captcha_ocr.py, last modified 2024/03/13).

Kept from the example: the file listing and `characters`, `StringLookup(vocabulary=...,
mask_token=None)` and its inverse `num_to_char`, `split_data` (with `keras.random.shuffle`, whose
result the example discards), `encode_single_sample` (`tf.io.read_file`, `tf.io.decode_png`,
`tf.image.convert_image_dtype`, `ops.image.resize`, `ops.transpose`,
`tf.strings.unicode_split` + `char_to_num`), the `tf.data` pipeline, `ctc_batch_cost` /
`ctc_label_dense_to_sparse` (`tf.compat.v1.scan`, `boolean_mask`, `gather_nd`,
`tf.compat.v1.nn.ctc_loss` on a SparseTensor) and the `CTCLayer` endpoint layer, the functional
model (Conv2D / MaxPooling2D blocks, Reshape, Dense, Dropout, two Bidirectional LSTMs, Dense
softmax "dense2"), `EarlyStopping(monitor="val_loss", restore_best_weights=True)`, the prediction
model `keras.models.Model(model.input[0], model.get_layer(name="dense2").output)` and
`decode_batch_predictions` with `ops.ctc_decode(..., strategy="greedy")`.

Changed:
- No download: a synthetic captcha set is written to a temporary directory: 240 grayscale
  50x200 PNG files named by their 5-character label over the alphabet "abcd"; each character
  is a bright block whose height band depends on the character, in its own 40-pixel column
  slot, plus a little noise.
- Smaller model (Conv 8 / 16 filters, Dense 32, LSTMs 32 / 16 units), images resized to
  25x100 (`img_height`, `img_width`: 25 time steps instead of 50), learning rate 0.005 instead
  of Adam's default, 15 epochs at most and patience 3, so the file runs in about 20 s on 2 CPU
  cores; no plots or summaries.
- `decode_batch_predictions` is run as written (`ops.ctc_decode`'s default `mask_index=0`,
  which takes class 0 as the blank: TensorFlow 2.21 / Keras 3.15 then print the trained blank
  class as "[UNK]"), and once more with `mask_index=5`, the last class, the blank that
  `tf.compat.v1.nn.ctc_loss` trains, to check that the model reads the captchas.
- `decode_batch_predictions`: the example calls `tf.sparse.to_dense` on the result of
  `ops.ctc_decode`, which is a dense tensor, so with TensorFlow 2.21 / Keras 3.15 it raises
  `TypeError: Input must be a SparseTensor.` (checked below for minitf too); the port drops
  that call and iterates over the sliced dense result, as the example clearly intends.
"""
import os

import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers, ops

ALPHABET = "abcd"
NUM_IMAGES = 240
LABEL_LENGTH = 5

batch_size = 16
img_width = 100
img_height = 25
downsample_factor = 4


def _captcha_image(label, rng):
    """A 50x200 uint8 image: character k of the alphabet is a block in rows 4+10k..14+10k."""
    image = rng.integers(0, 40, size=(50, 200, 1)).astype(np.uint8)
    slot = 200 // LABEL_LENGTH
    for i, char in enumerate(label):
        k = ALPHABET.index(char)
        top = 4 + 10 * k
        image[top:top + 10, i * slot + 8:i * slot + 32, 0] = rng.integers(200, 256)
    return image


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("captcha_images_v2")
    rng = np.random.default_rng(7)
    seen = set()
    while len(seen) < NUM_IMAGES:
        label = "".join(rng.choice(list(ALPHABET), size=LABEL_LENGTH))
        if label in seen:
            continue
        seen.add(label)
        png = tf.io.encode_png(tf.constant(_captcha_image(label, rng)))
        tf.io.write_file(str(directory / f"{label}.png"), png)
    return directory


@pytest.fixture(scope="module")
def example(data_dir):
    """The example's cells up to the datasets, as a namespace dict."""
    images = sorted(list(map(str, list(data_dir.glob("*.png")))))
    labels = [img.split(os.path.sep)[-1].split(".png")[0] for img in images]
    characters = set(char for label in labels for char in label)
    characters = sorted(list(characters))
    max_length = max([len(label) for label in labels])

    char_to_num = layers.StringLookup(vocabulary=list(characters), mask_token=None)
    num_to_char = layers.StringLookup(
        vocabulary=char_to_num.get_vocabulary(), mask_token=None, invert=True
    )

    def split_data(images, labels, train_size=0.9, shuffle=True):
        size = len(images)
        indices = ops.arange(size)
        if shuffle:
            keras.random.shuffle(indices)
        train_samples = int(size * train_size)
        x_train, y_train = images[indices[:train_samples]], labels[indices[:train_samples]]
        x_valid, y_valid = images[indices[train_samples:]], labels[indices[train_samples:]]
        return x_train, x_valid, y_train, y_valid

    x_train, x_valid, y_train, y_valid = split_data(np.array(images), np.array(labels))

    def encode_single_sample(img_path, label):
        img = tf.io.read_file(img_path)
        img = tf.io.decode_png(img, channels=1)
        img = tf.image.convert_image_dtype(img, tf.float32)
        img = ops.image.resize(img, [img_height, img_width])
        img = ops.transpose(img, axes=[1, 0, 2])
        label = char_to_num(tf.strings.unicode_split(label, input_encoding="UTF-8"))
        return {"image": img, "label": label}

    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    train_dataset = (
        train_dataset.map(encode_single_sample, num_parallel_calls=tf.data.AUTOTUNE)
        .batch(batch_size)
        .prefetch(buffer_size=tf.data.AUTOTUNE)
    )
    validation_dataset = tf.data.Dataset.from_tensor_slices((x_valid, y_valid))
    validation_dataset = (
        validation_dataset.map(encode_single_sample, num_parallel_calls=tf.data.AUTOTUNE)
        .batch(batch_size)
        .prefetch(buffer_size=tf.data.AUTOTUNE)
    )
    return dict(images=images, labels=labels, characters=characters, max_length=max_length,
                char_to_num=char_to_num, num_to_char=num_to_char, x_train=x_train,
                x_valid=x_valid, y_train=y_train, y_valid=y_valid,
                encode_single_sample=encode_single_sample, train_dataset=train_dataset,
                validation_dataset=validation_dataset)


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    label_length = ops.cast(ops.squeeze(label_length, axis=-1), dtype="int32")
    input_length = ops.cast(ops.squeeze(input_length, axis=-1), dtype="int32")
    sparse_labels = ops.cast(
        ctc_label_dense_to_sparse(y_true, label_length), dtype="int32"
    )

    y_pred = ops.log(ops.transpose(y_pred, axes=[1, 0, 2]) + keras.backend.epsilon())

    return ops.expand_dims(
        tf.compat.v1.nn.ctc_loss(
            inputs=y_pred, labels=sparse_labels, sequence_length=input_length
        ),
        1,
    )


def ctc_label_dense_to_sparse(labels, label_lengths):
    label_shape = ops.shape(labels)
    num_batches_tns = ops.stack([label_shape[0]])
    max_num_labels_tns = ops.stack([label_shape[1]])

    def range_less_than(old_input, current_input):
        return ops.expand_dims(ops.arange(ops.shape(old_input)[1]), 0) < tf.fill(
            max_num_labels_tns, current_input
        )

    init = ops.cast(tf.fill([1, label_shape[1]], 0), dtype="bool")
    dense_mask = tf.compat.v1.scan(
        range_less_than, label_lengths, initializer=init, parallel_iterations=1
    )
    dense_mask = dense_mask[:, 0, :]

    label_array = ops.reshape(
        ops.tile(ops.arange(0, label_shape[1]), num_batches_tns), label_shape
    )
    label_ind = tf.compat.v1.boolean_mask(label_array, dense_mask)

    batch_array = ops.transpose(
        ops.reshape(
            ops.tile(ops.arange(0, label_shape[0]), max_num_labels_tns),
            tf.reverse(label_shape, [0]),
        )
    )
    batch_ind = tf.compat.v1.boolean_mask(batch_array, dense_mask)
    indices = ops.transpose(
        ops.reshape(ops.concatenate([batch_ind, label_ind], axis=0), [2, -1])
    )

    vals_sparse = tf.compat.v1.gather_nd(labels, indices)

    return tf.SparseTensor(
        ops.cast(indices, dtype="int64"),
        vals_sparse,
        ops.cast(label_shape, dtype="int64"),
    )


class CTCLayer(layers.Layer):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.loss_fn = ctc_batch_cost

    def call(self, y_true, y_pred):
        # Compute the training-time loss value and add it
        # to the layer using `self.add_loss()`.
        batch_len = ops.cast(ops.shape(y_true)[0], dtype="int64")
        input_length = ops.cast(ops.shape(y_pred)[1], dtype="int64")
        label_length = ops.cast(ops.shape(y_true)[1], dtype="int64")

        input_length = input_length * ops.ones(shape=(batch_len, 1), dtype="int64")
        label_length = label_length * ops.ones(shape=(batch_len, 1), dtype="int64")

        loss = self.loss_fn(y_true, y_pred, input_length, label_length)
        self.add_loss(loss)

        # At test time, just return the computed predictions
        return y_pred


def build_model(char_to_num):
    input_img = layers.Input(
        shape=(img_width, img_height, 1), name="image", dtype="float32"
    )
    labels = layers.Input(name="label", shape=(None,), dtype="float32")
    x = layers.Conv2D(
        8, (3, 3), activation="relu", kernel_initializer="he_normal", padding="same",
        name="Conv1",
    )(input_img)
    x = layers.MaxPooling2D((2, 2), name="pool1")(x)
    x = layers.Conv2D(
        16, (3, 3), activation="relu", kernel_initializer="he_normal", padding="same",
        name="Conv2",
    )(x)
    x = layers.MaxPooling2D((2, 2), name="pool2")(x)
    new_shape = ((img_width // 4), (img_height // 4) * 16)
    x = layers.Reshape(target_shape=new_shape, name="reshape")(x)
    x = layers.Dense(32, activation="relu", name="dense1")(x)
    x = layers.Dropout(0.2)(x)
    x = layers.Bidirectional(layers.LSTM(32, return_sequences=True, dropout=0.25))(x)
    x = layers.Bidirectional(layers.LSTM(16, return_sequences=True, dropout=0.25))(x)
    x = layers.Dense(
        len(char_to_num.get_vocabulary()) + 1, activation="softmax", name="dense2"
    )(x)
    output = CTCLayer(name="ctc_loss")(labels, x)
    model = keras.models.Model(
        inputs=[input_img, labels], outputs=output, name="ocr_model_v1"
    )
    opt = keras.optimizers.Adam(learning_rate=0.005)
    model.compile(optimizer=opt)
    return model


def make_decode_batch_predictions(num_to_char, max_length, mask_index=0):
    def decode_batch_predictions(pred):
        input_len = np.ones(pred.shape[0]) * pred.shape[1]
        # Use greedy search. For complex tasks, you can use beam search
        results = ops.ctc_decode(pred, sequence_lengths=input_len, strategy="greedy",
                                 mask_index=mask_index)[0][0]
        dense_results = results[:, :max_length]
        output_text = []
        for res in dense_results:
            res = tf.strings.reduce_join(num_to_char(res)).numpy().decode("utf-8")
            output_text.append(res)
        return output_text
    return decode_batch_predictions


def numpy_greedy_ctc(probs, blank):
    """Reference greedy CTC decoding: best class per frame, merge runs, drop blanks."""
    out = []
    for row in probs.argmax(-1):
        merged = [c for i, c in enumerate(row) if i == 0 or c != row[i - 1]]
        out.append([int(c) for c in merged if c != blank])
    return out


def _texts(sequences, num_to_char, max_length=5):
    """What decode_batch_predictions makes of label sequences: the first max_length ids, -1
    padding and ids outside the vocabulary read as the OOV token."""
    vocab = num_to_char.get_vocabulary()
    texts = []
    for ids in sequences:
        ids = (list(ids) + [-1] * max_length)[:max_length]
        texts.append("".join(vocab[i] if 0 <= i < len(vocab) else "[UNK]" for i in ids))
    return texts


@pytest.fixture(scope="module")
def trained(example):
    keras.utils.set_random_seed(1)
    model = build_model(example["char_to_num"])
    early_stopping = keras.callbacks.EarlyStopping(
        monitor="val_loss", patience=3, restore_best_weights=True
    )
    initial_loss = float(model.evaluate(example["train_dataset"].take(3), verbose=0))
    history = model.fit(
        example["train_dataset"],
        validation_data=example["validation_dataset"],
        epochs=15,
        callbacks=[early_stopping],
        verbose=0,
    )
    return dict(model=model, history=history, initial_loss=initial_loss)


def test_data_and_lookup(example):
    assert len(example["images"]) == NUM_IMAGES == len(example["labels"])
    assert example["characters"] == ["a", "b", "c", "d"]
    assert example["max_length"] == 5
    assert example["char_to_num"].get_vocabulary() == ["[UNK]", "a", "b", "c", "d"]
    assert example["num_to_char"].get_vocabulary() == ["[UNK]", "a", "b", "c", "d"]
    # keras.random.shuffle returns a new tensor and the example discards it: no shuffling.
    assert len(example["x_train"]) == 216 and len(example["x_valid"]) == 24
    assert list(example["x_train"]) == example["images"][:216]
    assert list(example["y_valid"]) == example["labels"][216:]


def test_encode_single_sample(example):
    path, label = example["x_train"][0], example["y_train"][0]
    sample = example["encode_single_sample"](tf.constant(path), tf.constant(label))
    assert sample["image"].shape == (img_width, img_height, 1)
    assert sample["image"].dtype == tf.float32
    pixels = tf.io.decode_png(tf.io.read_file(path), channels=1).numpy()
    assert pixels.shape == (50, 200, 1) and pixels.dtype == np.uint8
    # Bilinear (half-pixel centres, no antialiasing) halving is the mean of each 2x2 block.
    halved = pixels[:, :, 0].reshape(25, 2, 100, 2).mean(axis=(1, 3)) / 255.0
    np.testing.assert_allclose(sample["image"].numpy()[:, :, 0], halved.T, atol=1e-6)
    expected = [ALPHABET.index(c) + 1 for c in label]
    np.testing.assert_array_equal(sample["label"].numpy(), expected)


def test_dataset_batches(example):
    for batch in example["train_dataset"].take(1):
        images = batch["image"]
        labels = batch["label"]
        assert images.shape == (16, 100, 25, 1)
        assert labels.shape == (16, 5)
        texts = [tf.strings.reduce_join(example["num_to_char"](labels[i])).numpy()
                 .decode("utf-8") for i in range(16)]
        assert texts == list(example["y_train"][:16])


def test_ctc_label_dense_to_sparse():
    labels = tf.constant([[1, 2, 3], [4, 0, 0]])
    sparse = ctc_label_dense_to_sparse(labels, tf.constant([3, 1]))
    np.testing.assert_array_equal(sparse.indices.numpy(), [[0, 0], [0, 1], [0, 2], [1, 0]])
    np.testing.assert_array_equal(sparse.values.numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(sparse.dense_shape.numpy(), [2, 3])


def test_ctc_batch_cost_single_frame_path():
    # One frame, one label: the loss is -log p(label) (epsilon 1e-7 added before the log).
    y_pred = tf.constant([[[0.2, 0.5, 0.3]]])
    loss = ctc_batch_cost(tf.constant([[1]]), y_pred, tf.constant([[1]]), tf.constant([[1]]))
    np.testing.assert_allclose(loss.numpy(), [[-np.log(0.5 + 1e-7)]], rtol=1e-5)


def test_ctc_batch_cost_two_frames_hand_computed():
    # Label [0] over two frames (blank = class 2): paths 0 0, 0 -, - 0 all collapse to [0];
    # the label row's padding (the 2nd entry) is past label_length and ignored.
    p = np.array([[[0.6, 0.1, 0.3], [0.2, 0.5, 0.3]]], "float32")
    loss = ctc_batch_cost(tf.constant([[0, 1]]), tf.constant(p), tf.constant([[2]]),
                          tf.constant([[1]]))
    likelihood = 0.6 * 0.2 + 0.6 * 0.3 + 0.3 * 0.2
    np.testing.assert_allclose(loss.numpy(), [[-np.log(likelihood)]], rtol=1e-5)


def test_transpose_axes_keyword():
    x = tf.reshape(tf.range(6), [1, 2, 3])
    np.testing.assert_array_equal(ops.transpose(x, axes=[1, 0, 2]).numpy(),
                                  [[[0, 1, 2]], [[3, 4, 5]]])


def test_cast_of_sparse_tensor():
    # TF casts the values and keeps the indices and dense shape.
    sparse = tf.SparseTensor([[0, 1], [1, 0]], tf.constant([1.0, 2.0]), [2, 2])
    cast = ops.cast(sparse, dtype="int32")
    assert cast.values.dtype == tf.int32
    np.testing.assert_array_equal(cast.values.numpy(), [1, 2])
    np.testing.assert_array_equal(cast.indices.numpy(), [[0, 1], [1, 0]])


def test_sparse_to_dense_of_ctc_decode_raises():
    # The example's `tf.sparse.to_dense(results, ...)` fails the same way in TensorFlow 2.21.
    decoded = ops.ctc_decode(np.ones((1, 3, 3), "float32") / 3, sequence_lengths=[3])[0][0]
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.sparse.to_dense(decoded, default_value=-1)


def test_ctc_decode_default_blank_is_class_0():
    # Values from TensorFlow 2.21 / Keras 3.15: the default mask_index=0 keeps the last class.
    path = [5, 4, 4, 5, 3, 5, 5, 3, 0, 1]
    pred = np.full((1, len(path), 6), 0.01, "float32")
    pred[0, np.arange(len(path)), path] = 0.95
    lengths = np.ones(1) * len(path)
    decoded, scores = ops.ctc_decode(pred, sequence_lengths=lengths, strategy="greedy")
    np.testing.assert_array_equal(decoded.numpy(), [[[5, 4, 5, 3, 5, 3, 1, -1, -1, -1]]])
    np.testing.assert_allclose(scores.numpy(), [[-9.499999]], rtol=1e-6)
    decoded, _ = ops.ctc_decode(pred, sequence_lengths=lengths, strategy="greedy",
                                mask_index=5)
    np.testing.assert_array_equal(decoded.numpy(), [[[4, 3, 3, 0, 1, -1, -1, -1, -1, -1]]])
    num_to_char = layers.StringLookup(vocabulary=["a", "b", "c", "d"], mask_token=None,
                                      invert=True)
    joined = tf.strings.reduce_join(num_to_char(tf.constant([5, 4, 5, 3, -1]))).numpy()
    assert joined == b"[UNK]d[UNK]c[UNK]"


def test_training_and_inference(example, trained):
    model, history = trained["model"], trained["history"]
    assert model.get_layer("reshape").output.shape == (None, 25, 96)
    assert model.get_layer("dense2").output.shape == (None, 25, 6)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
    assert min(history.history["val_loss"]) < 0.5 * trained["initial_loss"]

    prediction_model = keras.models.Model(
        model.input[0], model.get_layer(name="dense2").output
    )
    assert prediction_model.output.shape == (None, 25, 6)
    decode_batch_predictions = make_decode_batch_predictions(example["num_to_char"],
                                                             example["max_length"])
    num_to_char = example["num_to_char"]
    for batch in example["validation_dataset"].take(1):
        batch_images = batch["image"]
        batch_labels = batch["label"]
        preds = prediction_model.predict(batch_images, verbose=0)
        pred_texts = decode_batch_predictions(preds)
        orig_texts = []
        for label in batch_labels:
            label = tf.strings.reduce_join(num_to_char(label)).numpy().decode("utf-8")
            orig_texts.append(label)

    assert preds.shape == (16, 25, 6)
    assert orig_texts == list(example["y_valid"][:16])
    # As written, the example decodes with ops.ctc_decode's default mask_index=0, so class 0
    # ([UNK]) is taken as the blank while the model learned the last class (5) as the blank
    # (tf.compat.v1.nn.ctc_loss's): the blanks come out as [UNK] (TensorFlow 2.21 / Keras
    # 3.15 do the same, see test_ctc_decode_default_blank_is_class_0).
    assert pred_texts == _texts(numpy_greedy_ctc(np.asarray(preds), blank=0), num_to_char)

    # Decoding with the blank the model was trained with reproduces the labels.
    decode_with_trained_blank = make_decode_batch_predictions(
        num_to_char, example["max_length"], mask_index=len(num_to_char.get_vocabulary()))
    pred_texts = decode_with_trained_blank(preds)
    assert pred_texts == _texts(numpy_greedy_ctc(np.asarray(preds), blank=5), num_to_char)
    correct = sum(p == o for p, o in zip(pred_texts, orig_texts))
    assert correct >= 12, (pred_texts, orig_texts)
