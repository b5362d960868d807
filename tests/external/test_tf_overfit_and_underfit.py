"""Port of the tensorflow.org tutorial "Overfit and underfit"
(https://www.tensorflow.org/tutorials/keras/overfit_and_underfit).

Changes from the tutorial:
- Synthetic data replaces the Higgs CSV (no downloads): 28 standard-normal features and a 0/1
  label from a noisy non-linear rule, stored as 29 float32 columns. The tutorial's
  `tf.data.experimental.CsvDataset` (string parsing, out of scope) is replaced by
  `Dataset.from_tensor_slices` over the same 29 columns, so `pack_row(*row)`, `batch(10000)
  .map(pack_row).unbatch()`, `take`/`skip`/`cache` and `shuffle().repeat().batch()` are as written.
- Far fewer examples and epochs (N_TRAIN=1000, N_VALIDATION=500, BATCH_SIZE=100, a handful of
  epochs instead of up to 10000); `tfdocs.modeling.EpochDots` and the plots are left out
  (tensorflow_docs is not TensorFlow). The large 512-unit models are built and counted as in the
  tutorial; training runs use them for a few epochs only.
- Assertions replace the plots: InverseTimeDecay values against its formula, the tutorial's
  parameter counts (481, 753, 10,241, 803,329), history keys, the loss object used as a metric
  against numpy, the L2 penalty in `model.losses` against numpy, TensorBoard event files.
"""
import glob
import os
import pathlib
import struct

import numpy as np
import pytest

import minitf as tf
from minitf.keras import layers
from minitf.keras import regularizers

FEATURES = 28
N_VALIDATION = 500
N_TRAIN = 1000
BUFFER_SIZE = 1000
BATCH_SIZE = 100
STEPS_PER_EPOCH = N_TRAIN // BATCH_SIZE


def _columns():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(N_VALIDATION + N_TRAIN + 100, FEATURES))
    score = x[:, 0] * x[:, 1] + np.sin(2 * x[:, 2]) + 0.7 * x[:, 3] - 0.5 * x[:, 4] ** 2 + 0.5
    label = (score + 0.5 * rng.normal(size=len(x)) > 0).astype(np.float64)
    table = np.concatenate([label[:, None], x], axis=1).astype(np.float32)
    return table


def pack_row(*row):
    label = row[0]
    features = tf.stack(row[1:], 1)
    return features, label


def make_datasets():
    table = _columns()
    ds = tf.data.Dataset.from_tensor_slices(tuple(table[:, i] for i in range(FEATURES + 1)))
    packed_ds = ds.batch(10000).map(pack_row).unbatch()
    validate_ds = packed_ds.take(N_VALIDATION).cache()
    train_ds = packed_ds.skip(N_VALIDATION).take(N_TRAIN).cache()
    return table, packed_ds, validate_ds, train_ds


def batched():
    _, _, validate_ds, train_ds = make_datasets()
    validate_ds = validate_ds.batch(BATCH_SIZE)
    train_ds = train_ds.shuffle(BUFFER_SIZE).repeat().batch(BATCH_SIZE)
    return train_ds, validate_ds


lr_schedule = tf.keras.optimizers.schedules.InverseTimeDecay(
    0.001,
    decay_steps=STEPS_PER_EPOCH * 1000,
    decay_rate=1,
    staircase=False)


def get_optimizer():
    return tf.keras.optimizers.Adam(lr_schedule)


def get_callbacks(logdir, name, patience=200):
    return [
        tf.keras.callbacks.EarlyStopping(monitor='val_binary_crossentropy', patience=patience),
        tf.keras.callbacks.TensorBoard(logdir / name),
    ]


def compile_and_fit(model, name, logdir, optimizer=None, max_epochs=10000, patience=200):
    train_ds, validate_ds = batched()
    if optimizer is None:
        optimizer = get_optimizer()
    model.compile(optimizer=optimizer,
                  loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[
                      tf.keras.losses.BinaryCrossentropy(
                          from_logits=True, name='binary_crossentropy'),
                      'accuracy'])
    callbacks = get_callbacks(logdir, name, patience)
    history = model.fit(
        train_ds,
        steps_per_epoch=STEPS_PER_EPOCH,
        epochs=max_epochs,
        validation_data=validate_ds,
        callbacks=callbacks,
        verbose=0)
    return history, callbacks


def tiny():
    return tf.keras.Sequential([
        layers.Dense(16, activation='elu', input_shape=(FEATURES,)),
        layers.Dense(1)
    ])


def small():
    return tf.keras.Sequential([
        layers.Dense(16, activation='elu', input_shape=(FEATURES,)),
        layers.Dense(16, activation='elu'),
        layers.Dense(1)
    ])


def medium():
    return tf.keras.Sequential([
        layers.Dense(64, activation='elu', input_shape=(FEATURES,)),
        layers.Dense(64, activation='elu'),
        layers.Dense(64, activation='elu'),
        layers.Dense(1)
    ])


def large():
    return tf.keras.Sequential([
        layers.Dense(512, activation='elu', input_shape=(FEATURES,)),
        layers.Dense(512, activation='elu'),
        layers.Dense(512, activation='elu'),
        layers.Dense(512, activation='elu'),
        layers.Dense(1)
    ])


def l2_model():
    return tf.keras.Sequential([
        layers.Dense(512, activation='elu',
                     kernel_regularizer=regularizers.l2(0.001),
                     input_shape=(FEATURES,)),
        layers.Dense(512, activation='elu',
                     kernel_regularizer=regularizers.l2(0.001)),
        layers.Dense(512, activation='elu',
                     kernel_regularizer=regularizers.l2(0.001)),
        layers.Dense(512, activation='elu',
                     kernel_regularizer=regularizers.l2(0.001)),
        layers.Dense(1)
    ])


def dropout_model():
    return tf.keras.Sequential([
        layers.Dense(512, activation='elu', input_shape=(FEATURES,)),
        layers.Dropout(0.5),
        layers.Dense(512, activation='elu'),
        layers.Dropout(0.5),
        layers.Dense(512, activation='elu'),
        layers.Dropout(0.5),
        layers.Dense(512, activation='elu'),
        layers.Dropout(0.5),
        layers.Dense(1)
    ])


def combined_model():
    return tf.keras.Sequential([
        layers.Dense(512, kernel_regularizer=regularizers.l2(0.0001),
                     activation='elu', input_shape=(FEATURES,)),
        layers.Dropout(0.5),
        layers.Dense(512, kernel_regularizer=regularizers.l2(0.0001),
                     activation='elu'),
        layers.Dropout(0.5),
        layers.Dense(512, kernel_regularizer=regularizers.l2(0.0001),
                     activation='elu'),
        layers.Dropout(0.5),
        layers.Dense(512, kernel_regularizer=regularizers.l2(0.0001),
                     activation='elu'),
        layers.Dropout(0.5),
        layers.Dense(1)
    ])


def _bce_logits(z, y):
    z = z.reshape(-1).astype(np.float64)
    y = y.reshape(-1).astype(np.float64)
    return float(np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))))


def _read_scalars(directory):
    """Tags and values of the scalar summaries in the TFRecord event files of `directory`."""
    event_pb2 = pytest.importorskip("tensorboardX.proto.event_pb2")
    out = {}
    for path in glob.glob(os.path.join(directory, "events.out.tfevents.*")):
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos < len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            record = data[pos + 12:pos + 12 + length]
            pos += 12 + length + 4
            event = event_pb2.Event.FromString(record)
            for value in event.summary.value:
                v = value.simple_value
                if value.HasField("tensor") and value.tensor.float_val:
                    v = value.tensor.float_val[0]
                out.setdefault(value.tag, []).append((event.step, v))
    return out


# ---- tests ------------------------------------------------------------------------------------

def test_pack_row_pipeline_take_skip_cache():
    table, packed_ds, validate_ds, train_ds = make_datasets()
    for features, label in packed_ds.batch(1000).take(1):
        assert tuple(features.shape) == (1000, FEATURES)
        assert tuple(label.shape) == (1000,)
        np.testing.assert_array_equal(features.numpy(), table[:1000, 1:])
        np.testing.assert_array_equal(label.numpy(), table[:1000, 0])
    val = list(validate_ds)
    assert len(val) == N_VALIDATION
    np.testing.assert_array_equal(val[0][0].numpy(), table[0, 1:])
    first_train = next(iter(train_ds))
    np.testing.assert_array_equal(first_train[0].numpy(), table[N_VALIDATION, 1:])
    assert first_train[1].numpy() == table[N_VALIDATION, 0]
    assert sum(1 for _ in train_ds) == N_TRAIN
    # cached: a second pass gives the same elements
    np.testing.assert_array_equal(np.stack([f.numpy() for f, _ in validate_ds]),
                                  table[:N_VALIDATION, 1:])

    train_batches, validate_batches = batched()
    assert [tuple(f.shape) for f, _ in validate_batches] == [(BATCH_SIZE, FEATURES)] * 5
    # repeat(): more than one epoch's worth of batches can be taken
    batches = list(train_batches.take(2 * STEPS_PER_EPOCH + 3))
    assert len(batches) == 2 * STEPS_PER_EPOCH + 3
    assert all(tuple(f.shape) == (BATCH_SIZE, FEATURES) for f, _ in batches)
    labels = np.concatenate([l.numpy() for _, l in batches[:STEPS_PER_EPOCH]])
    assert labels.sum() == table[N_VALIDATION:N_VALIDATION + N_TRAIN, 0].sum()  # a permutation


def test_inverse_time_decay_schedule():
    step = np.linspace(0, 100000)
    lr = lr_schedule(step)
    expected = 0.001 / (1 + step / (STEPS_PER_EPOCH * 1000))
    np.testing.assert_allclose(np.asarray(lr), expected, rtol=1e-6)
    assert float(lr_schedule(STEPS_PER_EPOCH * 1000)) == pytest.approx(0.0005)
    staircase = tf.keras.optimizers.schedules.InverseTimeDecay(
        0.001, decay_steps=STEPS_PER_EPOCH * 1000, decay_rate=1, staircase=True)
    assert float(staircase(STEPS_PER_EPOCH * 1000 - 1)) == pytest.approx(0.001)
    assert float(staircase(STEPS_PER_EPOCH * 2500)) == pytest.approx(0.001 / 3)
    assert lr_schedule.get_config() == {
        'initial_learning_rate': 0.001, 'decay_steps': STEPS_PER_EPOCH * 1000,
        'decay_rate': 1, 'staircase': False, 'name': 'InverseTimeDecay'}
    opt = get_optimizer()
    assert float(opt.learning_rate) == pytest.approx(0.001)


@pytest.mark.parametrize("build,params", [(tiny, 481), (small, 753), (medium, 10241),
                                          (large, 803329), (l2_model, 803329),
                                          (dropout_model, 803329), (combined_model, 803329)])
def test_model_sizes(build, params):
    model = build()
    assert model.count_params() == params
    lines = []
    model.summary(print_fn=lines.append)
    assert any(f"Total params: {params:,}" in line for line in lines)


def test_tiny_model_fit_callbacks_and_tensorboard(tmp_path):
    tf.keras.utils.set_random_seed(0)
    logdir = pathlib.Path(tmp_path) / "tensorboard_logs"
    model = tiny()
    history, callbacks = compile_and_fit(model, 'sizes/Tiny', logdir, max_epochs=6)
    h = history.history
    assert set(h) == {'loss', 'binary_crossentropy', 'accuracy',
                      'val_loss', 'val_binary_crossentropy', 'val_accuracy'}
    assert len(h['loss']) == 6
    # no regularization: the loss object used as a metric reports the loss
    np.testing.assert_allclose(h['binary_crossentropy'], h['loss'], rtol=1e-5)
    assert h['binary_crossentropy'][-1] < 0.9 * h['binary_crossentropy'][0]
    assert callbacks[0].best == pytest.approx(min(h['val_binary_crossentropy']))
    assert int(model.optimizer.iterations) == 6 * STEPS_PER_EPOCH
    assert float(model.optimizer.learning_rate) == pytest.approx(
        0.001 / (1 + 6 * STEPS_PER_EPOCH / (STEPS_PER_EPOCH * 1000)), rel=1e-5)

    # the metric against numpy on the validation arrays
    table = _columns()
    x_val, y_val = table[:N_VALIDATION, 1:], table[:N_VALIDATION, 0]
    results = model.evaluate(x_val, y_val, batch_size=BATCH_SIZE, verbose=0, return_dict=True)
    z = model.predict(x_val, batch_size=BATCH_SIZE, verbose=0)
    assert z.shape == (N_VALIDATION, 1)
    assert results['binary_crossentropy'] == pytest.approx(_bce_logits(z, y_val), rel=1e-5)
    assert results['loss'] == pytest.approx(_bce_logits(z, y_val), rel=1e-5)
    # 'accuracy' resolves to binary accuracy, thresholded at 0.5 (on the logits, as written)
    assert results['accuracy'] == pytest.approx(np.mean((z[:, 0] > 0.5) == y_val), abs=1e-6)

    # TensorBoard(logdir/name): train/ and validation/ event files with epoch scalars
    run_dir = logdir / 'sizes' / 'Tiny'
    assert glob.glob(str(run_dir / 'train' / 'events.out.tfevents.*'))
    assert glob.glob(str(run_dir / 'validation' / 'events.out.tfevents.*'))
    train_scalars = _read_scalars(str(run_dir / 'train'))
    val_scalars = _read_scalars(str(run_dir / 'validation'))
    assert [s for s, _ in train_scalars['epoch_loss']] == list(range(6))
    np.testing.assert_allclose([v for _, v in train_scalars['epoch_loss']], h['loss'], rtol=1e-5)
    np.testing.assert_allclose([v for _, v in val_scalars['epoch_binary_crossentropy']],
                               h['val_binary_crossentropy'], rtol=1e-5)


def test_early_stopping_on_val_binary_crossentropy(tmp_path):
    tf.keras.utils.set_random_seed(1)
    model = medium()
    # a large constant rate: the validation cross-entropy stops improving quickly
    history, callbacks = compile_and_fit(model, 'sizes/Medium', pathlib.Path(tmp_path),
                                         optimizer=tf.keras.optimizers.Adam(0.05),
                                         max_epochs=40, patience=2)
    val = history.history['val_binary_crossentropy']
    assert len(val) < 40
    best = int(np.argmin(val))
    assert len(val) == best + 3  # stopped after `patience` epochs without improvement
    assert callbacks[0].stopped_epoch == len(val) - 1


def test_l2_regularization_adds_to_model_losses():
    tf.keras.utils.set_random_seed(2)
    model = l2_model()
    assert len(model.losses) == 4
    kernels = [layer.kernel.numpy().astype(np.float64) for layer in model.layers[:4]]
    expected = [0.001 * np.sum(k ** 2) for k in kernels]
    np.testing.assert_allclose([float(l) for l in model.losses], expected, rtol=1e-5)

    model.compile(optimizer=get_optimizer(),
                  loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[tf.keras.losses.BinaryCrossentropy(from_logits=True,
                                                              name='binary_crossentropy'),
                           'accuracy'])
    table = _columns()
    x, y = table[:200, 1:], table[:200, 0]
    results = model.evaluate(x, y, batch_size=BATCH_SIZE, verbose=0, return_dict=True)
    # the loss is the cross-entropy plus the regularization penalty, the metric is not
    assert results['loss'] == pytest.approx(results['binary_crossentropy'] + sum(expected),
                                            rel=1e-5)
    assert results['binary_crossentropy'] == pytest.approx(
        _bce_logits(model.predict(x, verbose=0), y), rel=1e-5)


def test_dropout_only_in_training():
    tf.keras.utils.set_random_seed(3)
    model = dropout_model()
    x = _columns()[:64, 1:]
    inference = model(x, training=False).numpy()
    np.testing.assert_allclose(model(x, training=False).numpy(), inference)
    np.testing.assert_allclose(model.predict(x, verbose=0), inference, rtol=1e-5, atol=1e-6)
    trained_a = model(x, training=True).numpy()
    trained_b = model(x, training=True).numpy()
    assert not np.allclose(trained_a, inference) and not np.allclose(trained_a, trained_b)
    # half of the first layer's units are zeroed, the rest scaled by 2
    first = tf.keras.Sequential(model.layers[:2])
    dense_out = model.layers[0](x).numpy()
    dropped = first(x, training=True).numpy()
    kept = dropped != 0
    assert 0.4 < kept.mean() < 0.6
    np.testing.assert_allclose(dropped[kept], 2 * dense_out[kept], rtol=1e-5, atol=1e-6)


def test_regularized_models_overfit_less(tmp_path):
    """The tutorial's comparison, shortened to its two ends (the unregularized "Large" model and
    the "combined" L2 + dropout model, 8 epochs each): the large model has the larger gap between
    training and validation cross-entropy (measured with `evaluate` on the training and
    validation rows, so without dropout)."""
    logdir = pathlib.Path(tmp_path)
    table = _columns()
    x_val, y_val = table[:N_VALIDATION, 1:], table[:N_VALIDATION, 0]
    x_train = table[N_VALIDATION:N_VALIDATION + N_TRAIN, 1:]
    y_train = table[N_VALIDATION:N_VALIDATION + N_TRAIN, 0]
    gaps, train_bce, histories = {}, {}, {}
    for name, build in [('Large', large), ('combined', combined_model)]:
        tf.keras.utils.set_random_seed(4)
        model = build()
        history, _ = compile_and_fit(model, 'regularizers/' + name, logdir,
                                     optimizer=tf.keras.optimizers.Adam(0.003), max_epochs=8)
        histories[name] = history.history
        # the cross-entropy metric (not the loss, which includes the penalty)
        train_bce[name] = model.evaluate(x_train, y_train, batch_size=BATCH_SIZE, verbose=0,
                                         return_dict=True)['binary_crossentropy']
        val_bce = model.evaluate(x_val, y_val, batch_size=BATCH_SIZE, verbose=0,
                                 return_dict=True)['binary_crossentropy']
        gaps[name] = val_bce - train_bce[name]
    # TF 2.21 on this data: Large train 0.32, gap 0.31; combined gap 0.09
    assert train_bce['Large'] < 0.4
    assert gaps['Large'] > 0.2
    assert gaps['combined'] < 0.5 * gaps['Large'], gaps
    # with L2 the reported loss is above the cross-entropy by the penalty
    h = histories['combined']
    assert all(l > b for l, b in zip(h['loss'], h['binary_crossentropy']))
