"""Port of the keras.io code example "Speaker Recognition"
(https://keras.io/examples/audio/speaker_recognition_using_cnn/, keras-team/keras-io
examples/audio/speaker_recognition_using_cnn.py).

Kept: the noise preparation (noise file paths gathered from the sub-folders of the noise
folder, `load_noise_sample` with `tf.audio.decode_wav`, `tf.split` into 1 s chunks, the
wrong-sampling-rate branch, `tf.stack`), `paths_and_labels_to_dataset`, `path_to_audio`,
`add_noise`, `audio_to_fft` (`tf.signal.fft` of `tf.cast(tf.complex(...), tf.complex64)`, the
magnitude of the first half), the class and path gathering with its seeded shuffle and
validation split, the tf.data pipelines (shuffle, batch, noise on the training set, FFT map,
prefetch), `residual_block` / `build_model` (Conv1D, Add, Activation, MaxPool1D,
AveragePooling1D, Flatten, Dense), compile, the EarlyStopping / ModelCheckpoint callbacks, fit,
evaluate and the demonstration cell that predicts on noisy validation samples.

Changed: the Kaggle dataset (a download) is replaced by synthetic 16 kHz mono WAV files written
with `tf.audio.encode_wav`: 3 speakers, each a distinct harmonic pattern on its own pitch, 40
one-second clips each, and a noise folder with 3 longer files in 2 sub-folders plus one 8 kHz
file (ignored by `load_noise_sample`, as in the example); the ffmpeg resampling cell and the
folder-sorting cell are left out (the files are written in place); the filters are 4-16
instead of 16-128, the dense layers 32 / 16 units instead of 256 / 128, BATCH_SIZE 16, 3
epochs, VALID_SPLIT 0.2, and the checkpoint is "model.keras" in a temporary folder instead of
"model.h5" (Keras 3 saves the .keras format). IPython's `display(Audio(...))` is replaced by
collecting the printed lines. The file runs in well under 60 s on 2 CPU cores.
"""
import os
from pathlib import Path

import numpy as np
import pytest

import minitf as tf
from minitf import keras

VALID_SPLIT = 0.2
SHUFFLE_SEED = 43
SAMPLING_RATE = 16000
SCALE = 0.5
BATCH_SIZE = 16
EPOCHS = 3

SPEAKERS = {  # folder name: (pitch in Hz, relative amplitudes of the harmonics)
    "speaker_a": (110.0, [1.0, 0.5, 0.25]),
    "speaker_b": (170.0, [0.3, 1.0, 0.6, 0.2]),
    "speaker_c": (240.0, [1.0, 0.0, 0.7, 0.0, 0.4]),
}
CLIPS_PER_SPEAKER = 40


def _write_wav(path, samples, rate=SAMPLING_RATE):
    audio = tf.constant(samples.astype(np.float32)[:, None])
    tf.io.write_file(str(path), tf.audio.encode_wav(audio, rate))


def _write_synthetic_dataset(root):
    rng = np.random.default_rng(0)
    t = np.arange(SAMPLING_RATE) / SAMPLING_RATE
    for name, (pitch, harmonics) in SPEAKERS.items():
        folder = root / "audio" / name
        folder.mkdir(parents=True)
        for i in range(CLIPS_PER_SPEAKER):
            f0 = pitch * rng.uniform(0.97, 1.03)
            wave = sum(a * np.sin(2 * np.pi * (k + 1) * f0 * t + rng.uniform(0, 2 * np.pi))
                       for k, a in enumerate(harmonics))
            wave = rng.uniform(0.02, 0.05) * wave / np.abs(wave).max()
            _write_wav(folder / f"{i}.wav", wave + 0.001 * rng.standard_normal(t.size))
    for sub, seconds in [("other", [2.5, 3.2]), ("_background_noise_", [2.0])]:
        folder = root / "noise" / sub
        folder.mkdir(parents=True)
        for i, length in enumerate(seconds):
            noise = 0.3 * rng.uniform(-1, 1, int(length * SAMPLING_RATE))
            _write_wav(folder / f"noise_{i}.wav", noise)
    _write_wav(root / "noise" / "other" / "low_rate.wav", 0.1 * rng.uniform(-1, 1, 20000),
               rate=8000)


# Split noise into chunks of 16,000 steps each
def load_noise_sample(path):
    sample, sampling_rate = tf.audio.decode_wav(
        tf.io.read_file(path), desired_channels=1
    )
    if sampling_rate == SAMPLING_RATE:
        # Number of slices of 16000 each that can be generated from the noise sample
        slices = int(sample.shape[0] / SAMPLING_RATE)
        sample = tf.split(sample[: slices * SAMPLING_RATE], slices)
        return sample
    else:
        print("Sampling rate for {} is incorrect. Ignoring it".format(path))
        return None


def paths_and_labels_to_dataset(audio_paths, labels):
    """Constructs a dataset of audios and labels."""
    path_ds = tf.data.Dataset.from_tensor_slices(audio_paths)
    audio_ds = path_ds.map(lambda x: path_to_audio(x))
    label_ds = tf.data.Dataset.from_tensor_slices(labels)
    return tf.data.Dataset.zip((audio_ds, label_ds))


def path_to_audio(path):
    """Reads and decodes an audio file."""
    audio = tf.io.read_file(path)
    audio, _ = tf.audio.decode_wav(audio, 1, SAMPLING_RATE)
    return audio


def add_noise(audio, noises=None, scale=0.5):
    if noises is not None:
        # Create a random tensor of the same size as audio ranging from
        # 0 to the number of noise stream samples that we have.
        tf_rnd = tf.random.uniform(
            (tf.shape(audio)[0],), 0, noises.shape[0], dtype=tf.int32
        )
        noise = tf.gather(noises, tf_rnd, axis=0)

        # Get the amplitude proportion between the audio and the noise
        prop = tf.math.reduce_max(audio, axis=1) / tf.math.reduce_max(noise, axis=1)
        prop = tf.repeat(tf.expand_dims(prop, axis=1), tf.shape(audio)[1], axis=1)

        # Adding the rescaled noise to audio
        audio = audio + noise * prop * scale

    return audio


def audio_to_fft(audio):
    # Since tf.signal.fft applies FFT on the innermost dimension,
    # we need to squeeze the dimensions and then expand them again
    # after FFT
    audio = tf.squeeze(audio, axis=-1)
    fft = tf.signal.fft(
        tf.cast(tf.complex(real=audio, imag=tf.zeros_like(audio)), tf.complex64)
    )
    fft = tf.expand_dims(fft, axis=-1)

    # Return the absolute value of the first half of the FFT
    # which represents the positive frequencies
    return tf.math.abs(fft[:, : (audio.shape[1] // 2), :])


def residual_block(x, filters, conv_num=3, activation="relu"):
    # Shortcut
    s = keras.layers.Conv1D(filters, 1, padding="same")(x)
    for i in range(conv_num - 1):
        x = keras.layers.Conv1D(filters, 3, padding="same")(x)
        x = keras.layers.Activation(activation)(x)
    x = keras.layers.Conv1D(filters, 3, padding="same")(x)
    x = keras.layers.Add()([x, s])
    x = keras.layers.Activation(activation)(x)
    return keras.layers.MaxPool1D(pool_size=2, strides=2)(x)


def build_model(input_shape, num_classes):
    inputs = keras.layers.Input(shape=input_shape, name="input")

    x = residual_block(inputs, 4, 2)
    x = residual_block(x, 8, 2)
    x = residual_block(x, 8, 3)
    x = residual_block(x, 16, 3)
    x = residual_block(x, 16, 3)

    x = keras.layers.AveragePooling1D(pool_size=3, strides=3)(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(32, activation="relu")(x)
    x = keras.layers.Dense(16, activation="relu")(x)

    outputs = keras.layers.Dense(num_classes, activation="softmax", name="output")(x)

    return keras.models.Model(inputs=inputs, outputs=outputs)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The example's data cells on the synthetic dataset."""
    DATASET_ROOT = str(tmp_path_factory.mktemp("16000_pcm_speeches"))
    _write_synthetic_dataset(Path(DATASET_ROOT))
    DATASET_AUDIO_PATH = os.path.join(DATASET_ROOT, "audio")
    DATASET_NOISE_PATH = os.path.join(DATASET_ROOT, "noise")

    # Get the list of all noise files
    noise_paths = []
    for subdir in os.listdir(DATASET_NOISE_PATH):
        subdir_path = Path(DATASET_NOISE_PATH) / subdir
        if os.path.isdir(subdir_path):
            noise_paths += [
                os.path.join(subdir_path, filepath)
                for filepath in os.listdir(subdir_path)
                if filepath.endswith(".wav")
            ]
    noises = []
    for path in noise_paths:
        sample = load_noise_sample(path)
        if sample:
            noises.extend(sample)
    noises = tf.stack(noises)

    class_names = os.listdir(DATASET_AUDIO_PATH)
    audio_paths = []
    labels = []
    for label, name in enumerate(class_names):
        dir_path = Path(DATASET_AUDIO_PATH) / name
        speaker_sample_paths = [
            os.path.join(dir_path, filepath)
            for filepath in os.listdir(dir_path)
            if filepath.endswith(".wav")
        ]
        audio_paths += speaker_sample_paths
        labels += [label] * len(speaker_sample_paths)

    # Shuffle
    rng = np.random.RandomState(SHUFFLE_SEED)
    rng.shuffle(audio_paths)
    rng = np.random.RandomState(SHUFFLE_SEED)
    rng.shuffle(labels)

    # Split into training and validation
    num_val_samples = int(VALID_SPLIT * len(audio_paths))
    train_audio_paths = audio_paths[:-num_val_samples]
    train_labels = labels[:-num_val_samples]
    valid_audio_paths = audio_paths[-num_val_samples:]
    valid_labels = labels[-num_val_samples:]

    # Create 2 datasets, one for training and the other for validation
    train_ds = paths_and_labels_to_dataset(train_audio_paths, train_labels)
    train_ds = train_ds.shuffle(buffer_size=BATCH_SIZE * 8, seed=SHUFFLE_SEED).batch(
        BATCH_SIZE
    )

    valid_ds = paths_and_labels_to_dataset(valid_audio_paths, valid_labels)
    valid_ds = valid_ds.shuffle(buffer_size=32 * 8, seed=SHUFFLE_SEED).batch(32)

    # Add noise to the training set
    train_ds = train_ds.map(
        lambda x, y: (add_noise(x, noises, scale=SCALE), y),
        num_parallel_calls=tf.data.AUTOTUNE,
    )

    # Transform audio wave to the frequency domain using `audio_to_fft`
    train_ds = train_ds.map(
        lambda x, y: (audio_to_fft(x), y), num_parallel_calls=tf.data.AUTOTUNE
    )
    train_ds = train_ds.prefetch(tf.data.AUTOTUNE)

    valid_ds = valid_ds.map(
        lambda x, y: (audio_to_fft(x), y), num_parallel_calls=tf.data.AUTOTUNE
    )
    valid_ds = valid_ds.prefetch(tf.data.AUTOTUNE)
    return dict(noise_paths=noise_paths, noises=noises, class_names=class_names,
                audio_paths=audio_paths, labels=labels, train_ds=train_ds,
                valid_ds=valid_ds, valid_audio_paths=valid_audio_paths,
                valid_labels=valid_labels)


def test_noise_preparation_and_paths(data):
    assert len(data["noise_paths"]) == 4
    # 2.5 s, 3.2 s and 2.0 s at 16 kHz give 2 + 3 + 2 one-second chunks; the 8 kHz file
    # is skipped.
    assert tuple(data["noises"].shape) == (7, SAMPLING_RATE, 1)
    assert data["noises"].dtype == tf.float32
    assert sorted(data["class_names"]) == sorted(SPEAKERS)
    assert len(data["audio_paths"]) == 120
    # the two seeded shuffles keep each path with its label
    for path, label in zip(data["audio_paths"], data["labels"]):
        assert Path(path).parent.name == data["class_names"][label]
    assert len(data["valid_audio_paths"]) == 24


def test_load_noise_sample_chunks_match_the_file(data):
    path = [p for p in data["noise_paths"] if p.endswith("noise_1.wav")][0]
    chunks = load_noise_sample(path)
    assert len(chunks) == 3
    raw, rate = tf.audio.decode_wav(tf.io.read_file(path))
    assert int(rate) == SAMPLING_RATE
    np.testing.assert_array_equal(np.concatenate([c.numpy() for c in chunks]),
                                  raw.numpy()[:3 * SAMPLING_RATE])
    low = [p for p in data["noise_paths"] if p.endswith("low_rate.wav")][0]
    assert load_noise_sample(low) is None


def test_add_noise_scales_the_noise_by_the_amplitude_ratio():
    audio = tf.constant([[[0.5], [-0.2], [0.1]], [[0.2], [0.4], [-0.1]]])
    noises = tf.constant([[[1.0], [-1.0], [0.5]]])    # one noise sample, maximum 1.0
    noisy = add_noise(audio, noises, scale=0.5)
    # audio + noise * (max(audio) / max(noise)) * scale, per example
    expected = np.array([[0.5 + 0.25, -0.2 - 0.25, 0.1 + 0.125],
                         [0.2 + 0.2, 0.4 - 0.2, -0.1 + 0.1]], np.float32)[..., None]
    np.testing.assert_allclose(noisy.numpy(), expected, rtol=1e-6, atol=1e-7)
    assert add_noise(audio) is audio


def test_audio_to_fft_matches_numpy(data):
    audios, labels = next(iter(paths_and_labels_to_dataset(
        data["valid_audio_paths"], data["valid_labels"]).batch(4)))
    assert tuple(audios.shape) == (4, SAMPLING_RATE, 1)
    assert tuple(labels.shape) == (4,)
    ffts = audio_to_fft(audios)
    assert tuple(ffts.shape) == (4, SAMPLING_RATE // 2, 1)
    assert ffts.dtype == tf.float32
    expected = np.abs(np.fft.fft(audios.numpy()[..., 0].astype(np.float64)))[:, :8000]
    np.testing.assert_allclose(ffts.numpy()[..., 0], expected, rtol=1e-3, atol=2e-3)
    # casting the real audio straight to complex64 gives the same spectrum
    direct = tf.math.abs(tf.signal.fft(tf.cast(tf.squeeze(audios, axis=-1), tf.complex64)))
    np.testing.assert_allclose(direct.numpy()[:, :8000], ffts.numpy()[..., 0], rtol=1e-6)
    # the strongest bin is the speaker's pitch harmonic (1 Hz per bin for 1 s clips)
    for row, label in zip(ffts.numpy()[..., 0], labels.numpy()):
        pitch, harmonics = SPEAKERS[data["class_names"][label]]
        peak_harmonic = int(np.argmax(harmonics)) + 1
        assert abs(np.argmax(row) - peak_harmonic * pitch) <= 0.04 * peak_harmonic * pitch


def test_pipeline_shapes(data):
    x, y = next(iter(data["train_ds"]))
    assert tuple(x.shape) == (BATCH_SIZE, SAMPLING_RATE // 2, 1)
    assert tuple(y.shape) == (BATCH_SIZE,)
    x, y = next(iter(data["valid_ds"]))
    assert tuple(x.shape) == (24, SAMPLING_RATE // 2, 1)


def test_model_structure(data):
    model = build_model((SAMPLING_RATE // 2, 1), len(data["class_names"]))
    assert tuple(model.output.shape) == (None, 3)

    def block(c_in, filters, conv_num):
        shortcut = c_in * filters + filters
        convs = 3 * c_in * filters + filters + (conv_num - 1) * (3 * filters * filters + filters)
        return shortcut + convs
    # 8000 steps halved five times: 250; AveragePooling1D(3, 3): 83 steps of 16 channels
    expected = (block(1, 4, 2) + block(4, 8, 2) + block(8, 8, 3) + block(8, 16, 3)
                + block(16, 16, 3) + (83 * 16 * 32 + 32) + (32 * 16 + 16) + (16 * 3 + 3))
    # 48935 is also what Keras 3.15 reports for this model
    assert model.count_params() == expected == 48935


def test_train_evaluate_checkpoint_and_demonstration(data, tmp_path):
    tf.random.set_seed(0)
    train_ds, valid_ds, noises = data["train_ds"], data["valid_ds"], data["noises"]
    class_names = data["class_names"]
    model = build_model((SAMPLING_RATE // 2, 1), len(class_names))

    # Compile the model using Adam's default learning rate
    model.compile(
        optimizer="Adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    model_save_filename = str(tmp_path / "model.keras")

    earlystopping_cb = keras.callbacks.EarlyStopping(patience=10, restore_best_weights=True)
    mdlcheckpoint_cb = keras.callbacks.ModelCheckpoint(
        model_save_filename, monitor="val_accuracy", save_best_only=True
    )
    # Predictions on a fixed batch after every epoch, to compare with the checkpoint.
    probe, _ = next(iter(valid_ds))
    per_epoch = []
    record_cb = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: per_epoch.append(model.predict(probe, verbose=0)))

    history = model.fit(
        train_ds,
        epochs=EPOCHS,
        validation_data=valid_ds,
        callbacks=[earlystopping_cb, mdlcheckpoint_cb, record_cb],
        verbose=0,
    )
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert len(history.history["loss"]) == EPOCHS
    # With tf.random.set_seed(0) .. (7) here the loss falls 0.76-1.21 -> 0.02-0.31 and the
    # validation accuracy reaches 1.0 by epoch 3.
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]

    loss, accuracy = model.evaluate(valid_ds, verbose=0)
    np.testing.assert_allclose([loss, accuracy], [history.history["val_loss"][-1],
                                                  history.history["val_accuracy"][-1]],
                               rtol=1e-5)
    assert accuracy >= 0.9     # chance is 1/3

    # The checkpoint holds the first epoch with the best val_accuracy.
    best = int(np.argmax(history.history["val_accuracy"]))
    reloaded = keras.models.load_model(model_save_filename)
    np.testing.assert_allclose(reloaded.predict(probe, verbose=0), per_epoch[best],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reloaded.evaluate(valid_ds, verbose=0)[1],
                               history.history["val_accuracy"][best], rtol=1e-6)

    # Demonstration
    SAMPLES_TO_DISPLAY = 10
    test_ds = paths_and_labels_to_dataset(data["valid_audio_paths"], data["valid_labels"])
    test_ds = test_ds.shuffle(buffer_size=BATCH_SIZE * 8, seed=SHUFFLE_SEED).batch(
        BATCH_SIZE
    )
    test_ds = test_ds.map(lambda x, y: (add_noise(x, noises, scale=SCALE), y))

    printed, displayed = [], []
    np.random.seed(0)
    for audios, labels in test_ds.take(1):
        # Get the signal FFT
        ffts = audio_to_fft(audios)
        # Predict
        y_pred = model.predict(ffts)
        # Take random samples
        rnd = np.random.randint(0, BATCH_SIZE, SAMPLES_TO_DISPLAY)
        audios = audios.numpy()[rnd, :, :]
        labels = labels.numpy()[rnd]
        y_pred = np.argmax(y_pred, axis=-1)[rnd]

        for index in range(SAMPLES_TO_DISPLAY):
            # For every sample, print the true and predicted label
            # as well as run the voice with the noise
            printed.append(
                "Speaker:\33{} {}\33[0m\tPredicted:\33{} {}\33[0m".format(
                    "[92m" if labels[index] == y_pred[index] else "[91m",
                    class_names[labels[index]],
                    "[92m" if labels[index] == y_pred[index] else "[91m",
                    class_names[y_pred[index]],
                )
            )
            displayed.append(audios[index, :, :].squeeze())
    assert len(printed) == len(displayed) == SAMPLES_TO_DISPLAY
    assert displayed[0].shape == (SAMPLING_RATE,)
    assert all(line.startswith("Speaker:\33[9") for line in printed)
    # The noisy samples are still mostly recognised.
    assert np.mean(labels == y_pred) >= 0.6
    assert sum("[92m" in line for line in printed) == int(np.sum(labels == y_pred))
