"""Port of the tensorflow.org tutorial "Simple audio recognition: Recognizing keywords"
(https://www.tensorflow.org/tutorials/audio/simple_audio, tensorflow/docs
site/en/tutorials/audio/simple_audio.ipynb).

As written: `tf.keras.utils.audio_dataset_from_directory(directory=data_dir, batch_size=64,
validation_split=0.2, seed=0, output_sequence_length=16000, subset='both')`, `label_names`
from `class_names`, `squeeze`, `val_ds.shard` into test and validation halves,
`get_spectrogram` (`tf.signal.stft(waveform, frame_length=255, frame_step=128)`, `tf.abs`,
`[..., tf.newaxis]`), `make_spec_ds`, `cache().shuffle(10000).prefetch(AUTOTUNE)`, a
`Normalization` layer adapted on the spectrograms, the model (`Resizing(32, 32)`, the
normalization, `Conv2D(32)`, `Conv2D(64)`, `MaxPooling2D`, `Dropout(0.25)`, `Flatten`,
`Dense(128)`, `Dropout(0.5)`, `Dense(num_labels)`), Adam with
`SparseCategoricalCrossentropy(from_logits=True)`, `fit` with `EarlyStopping(patience=2)`,
`evaluate(return_dict=True)`, `predict` and `tf.math.confusion_matrix`, inference on one file
with `decode_wav(desired_channels=1, desired_samples=16000)`, and the `ExportModel`
`tf.Module` whose `tf.function` `__call__` has concrete functions for a filename and for a
`[None, 16000]` waveform batch.

Changed: instead of the mini Speech Commands download, a small synthetic directory with the
same eight command names, each command a tone of its own frequency plus noise (16 kHz mono
16-bit WAV, some clips shorter than one second as in the real data); `EPOCHS = 4` instead of
10; the EarlyStopping callback passed in a list (the tutorial passes it alone); the plots
and `tf.saved_model.save/load` of the export model are left out (minitf does not write
SavedModel directories). Printed values of the tutorial checked here: the "Found
384 files belonging to 8 classes." / "Using N files for ..." lines, the label names, the
`(64, 16000)` waveform and `(124, 129, 1)` spectrogram shapes.
"""
import os
import pathlib
import wave

import numpy as np
import pytest

import minitf as tf
from minitf.keras import layers, models

COMMANDS = ["down", "go", "left", "no", "right", "stop", "up", "yes"]
CLIPS_PER_COMMAND = 48
RATE = 16000


def synthetic_clip(rng, command_index):
    """A tone at a frequency of its own for the command, with some noise, 0.75 s to 1 s."""
    length = RATE if rng.random() < 0.75 else int(rng.integers(12000, RATE))
    t = np.arange(length) / RATE
    frequency = 400.0 + 450.0 * command_index
    tone = rng.uniform(0.3, 0.6) * np.sin(2 * np.pi * frequency * t + rng.uniform(0, 6.3))
    audio = tone + rng.normal(0, 0.05, length)
    return np.clip(np.round(audio * 32767), -32768, 32767).astype("<i2")


def write_wav(path, samples):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.tobytes())


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("data") / "mini_speech_commands"
    rng = np.random.default_rng(7)
    for index, command in enumerate(COMMANDS):
        os.makedirs(root / command)
        for i in range(CLIPS_PER_COMMAND):
            write_wav(root / command / f"{i:08x}_nohash_0.wav", synthetic_clip(rng, index))
    (root / "README.md").write_text("synthetic commands")
    return pathlib.Path(root)


def numpy_spectrogram(waveform):
    """|STFT| as tf.signal.stft computes it: frames of 255 samples every 128, a Hann window
    (TF's "periodic" flag only changes even lengths, so for 255 it is 0.5 - 0.5 cos(2 pi n /
    254), as TF 2.21 computes), a 256-point real FFT (fft_length: the next power of two)."""
    frames = np.lib.stride_tricks.sliding_window_view(waveform, 255)[::128]
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(255) / 254)
    return np.abs(np.fft.rfft(frames * window, n=256))


def get_spectrogram(waveform):
    # Convert the waveform to a spectrogram via a STFT.
    spectrogram = tf.signal.stft(
        waveform, frame_length=255, frame_step=128)
    # Obtain the magnitude of the STFT.
    spectrogram = tf.abs(spectrogram)
    # Add a `channels` dimension, so that the spectrogram can be used
    # as image-like input data with convolution layers (which expect
    # shape (`batch_size`, `height`, `width`, `channels`).
    spectrogram = spectrogram[..., tf.newaxis]
    return spectrogram


def squeeze(audio, labels):
    audio = tf.squeeze(audio, axis=-1)
    return audio, labels


def make_spec_ds(ds):
    return ds.map(
        map_func=lambda audio, label: (get_spectrogram(audio), label),
        num_parallel_calls=tf.data.AUTOTUNE)


def test_simple_audio_recognition(data_dir, capsys):
    tf.random.set_seed(42)
    np.random.seed(42)

    commands = np.array(tf.io.gfile.listdir(str(data_dir)))
    commands = commands[(commands != 'README.md') & (commands != '.DS_Store')]
    assert sorted(commands.tolist()) == COMMANDS

    train_ds, val_ds = tf.keras.utils.audio_dataset_from_directory(
        directory=data_dir,
        batch_size=64,
        validation_split=0.2,
        seed=0,
        output_sequence_length=16000,
        subset='both')
    label_names = np.array(train_ds.class_names)
    assert capsys.readouterr().out == ("Found 384 files belonging to 8 classes.\n"
                                       "Using 308 files for training.\n"
                                       "Using 76 files for validation.\n")
    assert label_names.tolist() == COMMANDS
    audio_spec, label_spec = train_ds.element_spec
    assert list(audio_spec.shape)[:2] == [None, 16000] and audio_spec.dtype == tf.float32
    assert label_spec.dtype == tf.int32

    train_ds = train_ds.map(squeeze, tf.data.AUTOTUNE)
    val_ds = val_ds.map(squeeze, tf.data.AUTOTUNE)

    test_ds = val_ds.shard(num_shards=2, index=0)
    val_ds = val_ds.shard(num_shards=2, index=1)

    for example_audio, example_labels in train_ds.take(1):
        assert example_audio.shape == (64, 16000)
        assert example_labels.shape == (64,)

    for i in range(3):
        label = label_names[example_labels[i]]
        waveform = example_audio[i]
        spectrogram = get_spectrogram(waveform)
        assert label in COMMANDS
        assert waveform.shape == (16000,)
        assert spectrogram.shape == (124, 129, 1)
        np.testing.assert_allclose(np.asarray(spectrogram)[:, :, 0],
                                   numpy_spectrogram(np.asarray(waveform, np.float64)),
                                   rtol=1e-3, atol=1e-3)

    train_spectrogram_ds = make_spec_ds(train_ds)
    val_spectrogram_ds = make_spec_ds(val_ds)
    test_spectrogram_ds = make_spec_ds(test_ds)

    for example_spectrograms, example_spect_labels in train_spectrogram_ds.take(1):
        break

    train_spectrogram_ds = train_spectrogram_ds.cache().shuffle(10000).prefetch(
        tf.data.AUTOTUNE)
    val_spectrogram_ds = val_spectrogram_ds.cache().prefetch(tf.data.AUTOTUNE)
    test_spectrogram_ds = test_spectrogram_ds.cache().prefetch(tf.data.AUTOTUNE)

    input_shape = example_spectrograms.shape[1:]
    assert tuple(input_shape) == (124, 129, 1)
    num_labels = len(label_names)

    # Instantiate the `tf.keras.layers.Normalization` layer.
    norm_layer = layers.Normalization()
    # Fit the state of the layer to the spectrograms
    # with `Normalization.adapt`.
    norm_layer.adapt(data=train_spectrogram_ds.map(map_func=lambda spec, label: spec))
    all_train = np.concatenate([np.asarray(s) for s, _ in train_spectrogram_ds])
    assert all_train.shape == (308, 124, 129, 1)
    np.testing.assert_allclose(np.asarray(norm_layer.mean).reshape(-1), [all_train.mean()],
                               rtol=1e-4)
    np.testing.assert_allclose(np.asarray(norm_layer.variance).reshape(-1),
                               [all_train.var()], rtol=1e-3)

    model = models.Sequential([
        layers.Input(shape=input_shape),
        # Downsample the input.
        layers.Resizing(32, 32),
        # Normalize.
        norm_layer,
        layers.Conv2D(32, 3, activation='relu'),
        layers.Conv2D(64, 3, activation='relu'),
        layers.MaxPooling2D(),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(128, activation='relu'),
        layers.Dropout(0.5),
        layers.Dense(num_labels),
    ])
    # (32*3*3 + 32) + (64*32*3*3 + 64) + (14*14*64*128 + 128) + (128*8 + 8) weights, plus the
    # normalization's mean, variance and count
    assert model.count_params() == 320 + 18496 + 1605760 + 1032 + 3

    model.compile(
        optimizer=tf.keras.optimizers.Adam(),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=['accuracy'],
    )

    EPOCHS = 4
    history = model.fit(
        train_spectrogram_ds,
        validation_data=val_spectrogram_ds,
        epochs=EPOCHS,
        callbacks=[tf.keras.callbacks.EarlyStopping(verbose=1, patience=2)],
        verbose=0,
    )
    metrics = history.history
    assert set(metrics) >= {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert metrics["loss"][-1] < metrics["loss"][0]

    result = model.evaluate(test_spectrogram_ds, return_dict=True, verbose=0)
    assert result["accuracy"] > 0.9

    y_pred = model.predict(test_spectrogram_ds, verbose=0)
    y_pred = tf.argmax(y_pred, axis=1)
    y_true = tf.concat(list(test_spectrogram_ds.map(lambda s, lab: lab)), axis=0)
    confusion_mtx = tf.math.confusion_matrix(y_true, y_pred)
    confusion = np.asarray(confusion_mtx)
    assert confusion.shape == (8, 8) and confusion.sum() == 64
    np.testing.assert_allclose(np.trace(confusion) / 64, result["accuracy"], atol=1e-6)

    x = data_dir/'no/00000001_nohash_0.wav'
    x = tf.io.read_file(str(x))
    x, sample_rate = tf.audio.decode_wav(x, desired_channels=1, desired_samples=16000,)
    x = tf.squeeze(x, axis=-1)
    waveform = x
    x = get_spectrogram(x)
    x = x[tf.newaxis, ...]

    prediction = model(x)
    assert int(sample_rate) == 16000 and prediction.shape == (1, 8)
    probabilities = np.asarray(tf.nn.softmax(prediction[0]))
    assert COMMANDS[int(np.argmax(probabilities))] == "no"

    class ExportModel(tf.Module):
        def __init__(self, model):
            self.model = model

            # Accept either a string-filename or a batch of waveforms.
            # YOu could add additional signatures for a single wave, or a ragged-batch.
            self.__call__.get_concrete_function(
                x=tf.TensorSpec(shape=(), dtype=tf.string))
            self.__call__.get_concrete_function(
                x=tf.TensorSpec(shape=[None, 16000], dtype=tf.float32))

        @tf.function
        def __call__(self, x):
            # If they pass a string, load the file and decode it.
            if x.dtype == tf.string:
                x = tf.io.read_file(x)
                x, _ = tf.audio.decode_wav(x, desired_channels=1, desired_samples=16000,)
                x = tf.squeeze(x, axis=-1)
                x = x[tf.newaxis, :]

            x = get_spectrogram(x)
            result = self.model(x, training=False)

            class_ids = tf.argmax(result, axis=-1)
            class_names = tf.gather(label_names, class_ids)
            return {'predictions': result,
                    'class_ids': class_ids,
                    'class_names': class_names}

    export = ExportModel(model)
    from_file = export(tf.constant(str(data_dir/'no/00000001_nohash_0.wav')))
    assert from_file['predictions'].shape == (1, 8)
    np.testing.assert_allclose(np.asarray(from_file['predictions']), np.asarray(prediction),
                               rtol=1e-4, atol=1e-4)
    assert np.asarray(from_file['class_names']).tolist() == [b"no"]
    assert np.asarray(from_file['class_ids']).tolist() == [COMMANDS.index("no")]

    from_batch = export(waveform[tf.newaxis, :])
    assert np.asarray(from_batch['class_names']).tolist() == [b"no"]
    np.testing.assert_allclose(np.asarray(from_batch['predictions']),
                               np.asarray(from_file['predictions']), rtol=1e-5, atol=1e-5)
