"""Port of tensorflow.org's tutorial "Time series forecasting"
(https://www.tensorflow.org/tutorials/structured_data/time_series).

Changes from the tutorial:
- A synthetic 5-feature hourly series (numpy only, 1000 steps) replaces the Jena weather CSV:
  ``p (mbar)`` (an AR(1) process), ``T (degC)`` (a daily cycle plus a share of the previous
  step's ``p``),
  ``rh (%)`` (follows ``T``), ``Day sin`` and ``Day cos`` (the tutorial's time-of-day
  signals). The next temperature is a linear function of the current features plus a little
  noise, so the linear and dense models must beat the persistence baseline. There is no
  pandas: the splits are numpy arrays and the column names a list.
- The 70/20/10 split and train-statistics normalization are as in the tutorial.
- ``compile_and_fit`` takes the epoch limit as an argument (``MAX_EPOCHS`` = 20 in the
  tutorial) so that the recurrent models train for a few epochs only; the plots are left out.

What the tests check: the ``WindowGenerator`` indices the tutorial prints, the contents of
every window of ``timeseries_dataset_from_array`` + ``split_window`` against numpy slicing,
``element_spec``, the baselines' ``evaluate`` results against numpy, the output shapes the
tutorial prints for each model (including the error of the multi-step dense model on wide
windows), forward passes of the Conv1D, LSTM and autoregressive ``FeedBack`` models against
float64 numpy from their weights, zero-initialized outputs, early stopping, and that training
lowers the loss.
"""
import numpy as np
import pytest

import minitf as tf

COLUMNS = ["p (mbar)", "T (degC)", "rh (%)", "Day sin", "Day cos"]
N_STEPS = 1000


def _make_series():
    rng = np.random.default_rng(0)
    t = np.arange(N_STEPS)
    day = 2 * np.pi * t / 24.0
    dp = np.zeros(N_STEPS)
    for i in range(1, N_STEPS):
        dp[i] = 0.5 * dp[i - 1] + rng.normal(0.0, 1.0)
    p = 990.0 + dp
    # The temperature follows the pressure of the step before.
    temp = (10.0 + 5.0 * np.sin(day - 0.8) + 1.5 * np.concatenate([[0.0], dp[:-1]])
            + rng.normal(0.0, 0.05, N_STEPS))
    rh = 80.0 - 2.0 * temp + rng.normal(0.0, 0.5, N_STEPS)
    return np.stack([p, temp, rh, np.sin(day), np.cos(day)], axis=-1)


_series = _make_series()
column_indices = {name: i for i, name in enumerate(COLUMNS)}
n = len(_series)
train_df = _series[0:int(n * 0.7)]
val_df = _series[int(n * 0.7):int(n * 0.9)]
test_df = _series[int(n * 0.9):]
num_features = _series.shape[1]

train_mean = train_df.mean(axis=0)
train_std = train_df.std(axis=0, ddof=1)
train_df = (train_df - train_mean) / train_std
val_df = (val_df - train_mean) / train_std
test_df = (test_df - train_mean) / train_std


class WindowGenerator():
    def __init__(self, input_width, label_width, shift,
                 train_df=train_df, val_df=val_df, test_df=test_df,
                 label_columns=None):
        self.train_df = train_df
        self.val_df = val_df
        self.test_df = test_df

        self.label_columns = label_columns
        if label_columns is not None:
            self.label_columns_indices = {name: i for i, name in enumerate(label_columns)}
        self.column_indices = {name: i for i, name in enumerate(COLUMNS)}

        self.input_width = input_width
        self.label_width = label_width
        self.shift = shift

        self.total_window_size = input_width + shift

        self.input_slice = slice(0, input_width)
        self.input_indices = np.arange(self.total_window_size)[self.input_slice]

        self.label_start = self.total_window_size - self.label_width
        self.labels_slice = slice(self.label_start, None)
        self.label_indices = np.arange(self.total_window_size)[self.labels_slice]

    def __repr__(self):
        return '\n'.join([
            f'Total window size: {self.total_window_size}',
            f'Input indices: {self.input_indices}',
            f'Label indices: {self.label_indices}',
            f'Label column name(s): {self.label_columns}'])

    def split_window(self, features):
        inputs = features[:, self.input_slice, :]
        labels = features[:, self.labels_slice, :]
        if self.label_columns is not None:
            labels = tf.stack(
                [labels[:, :, self.column_indices[name]] for name in self.label_columns],
                axis=-1)

        # Slicing doesn't preserve static shape information, so set the shapes
        # manually. This way the `tf.data.Datasets` are easier to inspect.
        inputs.set_shape([None, self.input_width, None])
        labels.set_shape([None, self.label_width, None])

        return inputs, labels

    def make_dataset(self, data):
        data = np.array(data, dtype=np.float32)
        ds = tf.keras.utils.timeseries_dataset_from_array(
            data=data,
            targets=None,
            sequence_length=self.total_window_size,
            sequence_stride=1,
            shuffle=True,
            batch_size=32,)

        ds = ds.map(self.split_window)

        return ds

    @property
    def train(self):
        return self.make_dataset(self.train_df)

    @property
    def val(self):
        return self.make_dataset(self.val_df)

    @property
    def test(self):
        return self.make_dataset(self.test_df)

    @property
    def example(self):
        """Get and cache an example batch of `inputs, labels` for plotting."""
        result = getattr(self, '_example', None)
        if result is None:
            # No example batch was found, so get one from the `.train` dataset
            result = next(iter(self.train))
            # And cache it for next time
            self._example = result
        return result


class Baseline(tf.keras.Model):
    def __init__(self, label_index=None):
        super().__init__()
        self.label_index = label_index

    def call(self, inputs):
        if self.label_index is None:
            return inputs
        result = inputs[:, :, self.label_index]
        return result[:, :, tf.newaxis]


class ResidualWrapper(tf.keras.Model):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def call(self, inputs, *args, **kwargs):
        delta = self.model(inputs, *args, **kwargs)

        # The prediction for each time step is the input
        # from the previous time step plus the delta
        # calculated by the model.
        return inputs + delta


OUT_STEPS = 24


class MultiStepLastBaseline(tf.keras.Model):
    def call(self, inputs):
        return tf.tile(inputs[:, -1:, :], [1, OUT_STEPS, 1])


class RepeatBaseline(tf.keras.Model):
    def call(self, inputs):
        return inputs


class FeedBack(tf.keras.Model):
    def __init__(self, units, out_steps):
        super().__init__()
        self.out_steps = out_steps
        self.units = units
        self.lstm_cell = tf.keras.layers.LSTMCell(units)
        # Also wrap the LSTMCell in an RNN to simplify the `warmup` method.
        self.lstm_rnn = tf.keras.layers.RNN(self.lstm_cell, return_state=True)
        self.dense = tf.keras.layers.Dense(num_features)

    def warmup(self, inputs):
        # inputs.shape => (batch, time, features)
        # x.shape => (batch, lstm_units)
        x, *state = self.lstm_rnn(inputs)

        # predictions.shape => (batch, features)
        prediction = self.dense(x)
        return prediction, state

    def call(self, inputs, training=None):
        # Use a TensorArray to capture dynamically unrolled outputs.
        predictions = []
        # Initialize the LSTM state.
        prediction, state = self.warmup(inputs)

        # Insert the first prediction.
        predictions.append(prediction)

        # Run the rest of the prediction steps.
        for n in range(1, self.out_steps):
            # Use the last prediction as input.
            x = prediction
            # Execute one lstm step.
            x, state = self.lstm_cell(x, states=state, training=training)
            # Convert the lstm output to a prediction.
            prediction = self.dense(x)
            # Add the prediction to the output.
            predictions.append(prediction)

        # predictions.shape => (time, batch, features)
        predictions = tf.stack(predictions)
        # predictions.shape => (batch, time, features)
        predictions = tf.transpose(predictions, [1, 0, 2])
        return predictions


MAX_EPOCHS = 20


def compile_and_fit(model, window, patience=2, max_epochs=MAX_EPOCHS):
    early_stopping = tf.keras.callbacks.EarlyStopping(monitor='val_loss',
                                                      patience=patience,
                                                      mode='min')

    model.compile(loss=tf.keras.losses.MeanSquaredError(),
                  optimizer=tf.keras.optimizers.Adam(),
                  metrics=[tf.keras.metrics.MeanAbsoluteError()])

    history = model.fit(window.train, epochs=max_epochs,
                        validation_data=window.val,
                        callbacks=[early_stopping], verbose=0)
    return history


# --- numpy references (float64) -------------------------------------------------------------

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_lstm_step(x, h, c, kernel, recurrent_kernel, bias):
    z = x @ kernel + h @ recurrent_kernel + bias
    i, f, g, o = np.split(z, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    h = _sigmoid(o) * np.tanh(c)
    return h, c


def _np_lstm_sequence(x, kernel, recurrent_kernel, bias):
    units = recurrent_kernel.shape[0]
    h = np.zeros((x.shape[0], units))
    c = np.zeros((x.shape[0], units))
    outputs = []
    for t in range(x.shape[1]):
        h, c = _np_lstm_step(x[:, t], h, c, kernel, recurrent_kernel, bias)
        outputs.append(h)
    return np.stack(outputs, axis=1), h, c


def _f64(weights):
    return [np.asarray(w, np.float64) for w in weights]


def _collect(ds):
    inputs, labels = [], []
    for x, y in ds:
        inputs.append(x.numpy())
        labels.append(y.numpy())
    return inputs, labels


def _window_starts(windows_first_rows, data):
    """Row index in ``data`` of each window's first row (rows of the series are unique)."""
    index = {data[i].tobytes(): i for i in range(len(data))}
    return np.array([index[row.tobytes()] for row in windows_first_rows])


# --- windows --------------------------------------------------------------------------------

def test_window_generator_indices():
    w1 = WindowGenerator(input_width=24, label_width=1, shift=24,
                         label_columns=['T (degC)'])
    assert w1.total_window_size == 48
    np.testing.assert_array_equal(w1.input_indices, np.arange(24))
    np.testing.assert_array_equal(w1.label_indices, [47])

    w2 = WindowGenerator(input_width=6, label_width=1, shift=1,
                         label_columns=['T (degC)'])
    assert w2.total_window_size == 7
    np.testing.assert_array_equal(w2.input_indices, [0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(w2.label_indices, [6])
    assert repr(w2).splitlines()[0] == "Total window size: 7"


def test_split_window_on_stacked_example():
    w2 = WindowGenerator(input_width=6, label_width=1, shift=1,
                         label_columns=['T (degC)'])
    # Stack three slices, the length of the total window.
    example_window = tf.stack([np.array(train_df[:w2.total_window_size]),
                               np.array(train_df[100:100 + w2.total_window_size]),
                               np.array(train_df[200:200 + w2.total_window_size])])
    example_inputs, example_labels = w2.split_window(example_window)
    assert tuple(example_window.shape) == (3, 7, num_features)
    assert tuple(example_inputs.shape) == (3, 6, num_features)
    assert tuple(example_labels.shape) == (3, 1, 1)
    t = column_indices['T (degC)']
    for k, s in enumerate([0, 100, 200]):
        np.testing.assert_array_equal(example_inputs.numpy()[k], train_df[s:s + 6])
        np.testing.assert_array_equal(example_labels.numpy()[k, :, 0], train_df[s + 6:s + 7, t])


def test_make_dataset_windows_match_numpy_slicing():
    w2 = WindowGenerator(input_width=6, label_width=1, shift=1,
                         label_columns=['T (degC)'])
    spec_inputs, spec_labels = w2.train.element_spec
    assert tuple(spec_inputs.shape) == (None, 6, num_features)
    assert tuple(spec_labels.shape) == (None, 1, 1)
    assert spec_inputs.dtype == tf.float32

    for example_inputs, example_labels in w2.train.take(1):
        assert tuple(example_inputs.shape) == (32, 6, num_features)
        assert tuple(example_labels.shape) == (32, 1, 1)

    data = np.array(train_df, dtype=np.float32)
    inputs, labels = _collect(w2.train)
    n_windows = len(data) - w2.total_window_size + 1
    assert [len(b) for b in inputs] == [32] * (n_windows // 32) + [n_windows % 32]
    inputs = np.concatenate(inputs)
    labels = np.concatenate(labels)
    starts = _window_starts(inputs[:, 0, :], data)
    # Every window appears exactly once, in shuffled order.
    np.testing.assert_array_equal(np.sort(starts), np.arange(n_windows))
    assert not np.array_equal(starts, np.arange(n_windows))
    t = column_indices['T (degC)']
    for k, s in enumerate(starts):
        np.testing.assert_array_equal(inputs[k], data[s:s + 6])
        np.testing.assert_array_equal(labels[k, :, 0], data[s + 6:s + 7, t])


def test_multi_output_multi_step_window_contents():
    multi_window = WindowGenerator(input_width=24, label_width=OUT_STEPS, shift=OUT_STEPS)
    assert multi_window.total_window_size == 48
    np.testing.assert_array_equal(multi_window.label_indices, np.arange(24, 48))
    data = np.array(val_df, dtype=np.float32)
    inputs, labels = _collect(multi_window.val)
    inputs, labels = np.concatenate(inputs), np.concatenate(labels)
    assert labels.shape == (len(data) - 47, OUT_STEPS, num_features)
    starts = _window_starts(inputs[:, 0, :], data)
    np.testing.assert_array_equal(np.sort(starts), np.arange(len(data) - 47))
    for k, s in enumerate(starts):
        np.testing.assert_array_equal(inputs[k], data[s:s + 24])
        np.testing.assert_array_equal(labels[k], data[s + 24:s + 48])


# --- single-step models ---------------------------------------------------------------------

def _single_step_window():
    return WindowGenerator(input_width=1, label_width=1, shift=1, label_columns=['T (degC)'])


def _wide_window(label_columns=('T (degC)',)):
    return WindowGenerator(input_width=24, label_width=24, shift=1,
                           label_columns=list(label_columns) if label_columns else None)


def _np_baseline_mse_mae(data, t=column_indices['T (degC)']):
    data = np.asarray(data, np.float32).astype(np.float64)
    err = data[1:, t] - data[:-1, t]
    return np.mean(err ** 2), np.mean(np.abs(err))


def test_baseline_evaluate_matches_numpy():
    single_step_window = _single_step_window()
    baseline = Baseline(label_index=column_indices['T (degC)'])
    baseline.compile(loss=tf.keras.losses.MeanSquaredError(),
                     metrics=[tf.keras.metrics.MeanAbsoluteError()])
    val_performance = baseline.evaluate(single_step_window.val, return_dict=True, verbose=0)
    performance = baseline.evaluate(single_step_window.test, verbose=0, return_dict=True)
    assert set(val_performance) == {"loss", "mean_absolute_error"}
    mse, mae = _np_baseline_mse_mae(val_df)
    np.testing.assert_allclose(val_performance["loss"], mse, rtol=1e-5)
    np.testing.assert_allclose(val_performance["mean_absolute_error"], mae, rtol=1e-5)
    mse, mae = _np_baseline_mse_mae(test_df)
    np.testing.assert_allclose(performance["loss"], mse, rtol=1e-5)

    wide_window = _wide_window()
    assert tuple(wide_window.example[0].shape) == (32, 24, num_features)
    out = baseline(wide_window.example[0])
    assert tuple(out.shape) == (32, 24, 1)
    np.testing.assert_array_equal(out.numpy()[..., 0],
                                  wide_window.example[0].numpy()[..., 1])


def _check_early_stopping(history, max_epochs, patience=2):
    """The epochs run are those Keras' EarlyStopping(patience, mode='min') allows."""
    val_loss = history.history["val_loss"]
    assert len(history.epoch) == len(val_loss)
    best, wait, expected = np.inf, 0, max_epochs
    for epoch, current in enumerate(val_loss):
        if current < best:
            best, wait = current, 0
        else:
            wait += 1
            if wait >= patience:
                expected = epoch + 1
                break
    assert len(val_loss) == expected


def test_linear_model():
    single_step_window = _single_step_window()
    wide_window = _wide_window()
    tf.keras.utils.set_random_seed(1)
    linear = tf.keras.Sequential([
        tf.keras.layers.Dense(units=1)
    ])
    out = linear(single_step_window.example[0])
    assert tuple(out.shape) == (32, 1, 1)

    history = compile_and_fit(linear, single_step_window)
    assert set(history.history) == {"loss", "mean_absolute_error",
                                    "val_loss", "val_mean_absolute_error"}
    _check_early_stopping(history, MAX_EPOCHS)
    # 20 short epochs do not converge (the tutorial has 1,500 steps per epoch); the loss
    # still falls steadily.
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    val = linear.evaluate(single_step_window.val, return_dict=True, verbose=0)
    np.testing.assert_allclose(val["loss"], history.history["val_loss"][-1], rtol=1e-4)

    # The same model applies to every time step of a wide window.
    assert tuple(linear(wide_window.example[0]).shape) == (32, 24, 1)
    assert tuple(linear.layers[0].kernel.shape) == (num_features, 1)
    x = wide_window.example[0].numpy().astype(np.float64)
    kernel, bias = _f64(linear.layers[0].get_weights())
    np.testing.assert_allclose(linear(wide_window.example[0]).numpy(), x @ kernel + bias,
                               rtol=1e-5, atol=1e-5)


def test_dense_model_beats_baseline():
    single_step_window = _single_step_window()
    tf.keras.utils.set_random_seed(2)
    dense = tf.keras.Sequential([
        tf.keras.layers.Dense(units=64, activation='relu'),
        tf.keras.layers.Dense(units=64, activation='relu'),
        tf.keras.layers.Dense(units=1)
    ])
    history = compile_and_fit(dense, single_step_window)
    _check_early_stopping(history, MAX_EPOCHS)
    val = dense.evaluate(single_step_window.val, return_dict=True, verbose=0)
    base_mse, base_mae = _np_baseline_mse_mae(val_df)
    # The next temperature is (nearly) a function of the current features.
    assert val["loss"] < 0.1 * base_mse
    assert val["mean_absolute_error"] < 0.3 * base_mae


CONV_WIDTH = 3


def test_multi_step_dense_shapes_and_wide_window_error():
    conv_window = WindowGenerator(input_width=CONV_WIDTH, label_width=1, shift=1,
                                  label_columns=['T (degC)'])
    np.testing.assert_array_equal(conv_window.input_indices, [0, 1, 2])
    np.testing.assert_array_equal(conv_window.label_indices, [3])
    multi_step_dense = tf.keras.Sequential([
        # Shape: (time, features) => (time*features)
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(units=32, activation='relu'),
        tf.keras.layers.Dense(units=32, activation='relu'),
        tf.keras.layers.Dense(units=1),
        # Add back the time dimension.
        # Shape: (outputs) => (1, outputs)
        tf.keras.layers.Reshape([1, -1]),
    ])
    out = multi_step_dense(conv_window.example[0])
    assert tuple(out.shape) == (32, 1, 1)
    assert multi_step_dense.layers[1].kernel.shape[0] == CONV_WIDTH * num_features

    history = compile_and_fit(multi_step_dense, conv_window, max_epochs=4)
    assert history.history["loss"][-1] < history.history["loss"][0]

    wide_window = _wide_window()
    # The tutorial: "Input 0 of layer dense is incompatible with the layer".
    with pytest.raises(ValueError):
        multi_step_dense(wide_window.example[0])


def test_conv_model_matches_numpy_and_shapes():
    conv_window = WindowGenerator(input_width=CONV_WIDTH, label_width=1, shift=1,
                                  label_columns=['T (degC)'])
    tf.keras.utils.set_random_seed(3)
    conv_model = tf.keras.Sequential([
        tf.keras.layers.Conv1D(filters=32,
                               kernel_size=(CONV_WIDTH,),
                               activation='relu'),
        tf.keras.layers.Dense(units=32, activation='relu'),
        tf.keras.layers.Dense(units=1),
    ])
    x = conv_window.example[0]
    assert tuple(conv_model(x).shape) == (32, 1, 1)

    wide_window = _wide_window()
    xw = wide_window.example[0]
    out = conv_model(xw)
    # The convolution drops CONV_WIDTH - 1 steps.
    assert tuple(out.shape) == (32, 24 - (CONV_WIDTH - 1), 1)

    k, b, k1, b1, k2, b2 = _f64(conv_model.get_weights())
    assert k.shape == (CONV_WIDTH, num_features, 32)
    xn = xw.numpy().astype(np.float64)
    steps = xn.shape[1] - CONV_WIDTH + 1
    h = np.stack([np.einsum("btc,tcf->bf", xn[:, s:s + CONV_WIDTH], k) for s in range(steps)],
                 axis=1) + b
    h = np.maximum(h, 0)
    h = np.maximum(h @ k1 + b1, 0)
    np.testing.assert_allclose(out.numpy(), h @ k2 + b2, rtol=1e-4, atol=1e-5)

    LABEL_WIDTH = 24
    INPUT_WIDTH = LABEL_WIDTH + (CONV_WIDTH - 1)
    wide_conv_window = WindowGenerator(input_width=INPUT_WIDTH, label_width=LABEL_WIDTH,
                                       shift=1, label_columns=['T (degC)'])
    np.testing.assert_array_equal(wide_conv_window.input_indices, np.arange(26))
    np.testing.assert_array_equal(wide_conv_window.label_indices, np.arange(3, 27))
    assert tuple(wide_conv_window.example[1].shape) == (32, LABEL_WIDTH, 1)
    assert tuple(conv_model(wide_conv_window.example[0]).shape) == (32, LABEL_WIDTH, 1)

    history = compile_and_fit(conv_model, conv_window, max_epochs=4)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


def test_lstm_model_matches_numpy_and_trains():
    wide_window = _wide_window()
    tf.keras.utils.set_random_seed(4)
    lstm_model = tf.keras.models.Sequential([
        # Shape [batch, time, features] => [batch, time, lstm_units]
        tf.keras.layers.LSTM(32, return_sequences=True),
        # Shape => [batch, time, features]
        tf.keras.layers.Dense(units=1)
    ])
    x = wide_window.example[0]
    out = lstm_model(x)
    assert tuple(out.shape) == (32, 24, 1)
    kernel, recurrent_kernel, bias, dk, db = _f64(lstm_model.get_weights())
    assert kernel.shape == (num_features, 128) and recurrent_kernel.shape == (32, 128)
    seq, _, _ = _np_lstm_sequence(x.numpy().astype(np.float64), kernel, recurrent_kernel, bias)
    np.testing.assert_allclose(out.numpy(), seq @ dk + db, rtol=1e-4, atol=1e-5)

    history = compile_and_fit(lstm_model, wide_window, max_epochs=3)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


def test_multi_output_baseline_and_residual_lstm():
    wide_window = _wide_window(label_columns=None)
    assert tuple(wide_window.example[1].shape) == (32, 24, num_features)

    baseline = Baseline()
    baseline.compile(loss=tf.keras.losses.MeanSquaredError(),
                     metrics=[tf.keras.metrics.MeanAbsoluteError()])
    val = baseline.evaluate(wide_window.val, return_dict=True, verbose=0)
    # Each label is the next row: the error of repeating the last row, over all features
    # (every step of every window counts once per window).
    data = np.asarray(val_df, np.float32).astype(np.float64)
    n_windows = len(data) - 25 + 1
    err = np.stack([data[s + 1:s + 25] - data[s:s + 24] for s in range(n_windows)])
    np.testing.assert_allclose(val["loss"], np.mean(err ** 2), rtol=1e-5)
    np.testing.assert_allclose(val["mean_absolute_error"], np.mean(np.abs(err)), rtol=1e-5)

    tf.keras.utils.set_random_seed(5)
    residual_lstm = ResidualWrapper(
        tf.keras.Sequential([
            tf.keras.layers.LSTM(32, return_sequences=True),
            tf.keras.layers.Dense(
                num_features,
                # The predicted deltas should start small.
                # Therefore, initialize the output layer with zeros.
                kernel_initializer=tf.initializers.zeros())
        ]))
    x = wide_window.example[0]
    # Zero kernel and bias: the model starts as the baseline.
    np.testing.assert_array_equal(residual_lstm(x).numpy(), x.numpy())
    history = compile_and_fit(residual_lstm, wide_window, max_epochs=2)
    assert history.history["val_loss"][-1] < val["loss"]


# --- multi-step models ----------------------------------------------------------------------

def _multi_window():
    return WindowGenerator(input_width=24, label_width=OUT_STEPS, shift=OUT_STEPS)


def test_multi_step_baselines_evaluate_matches_numpy():
    multi_window = _multi_window()
    data = np.asarray(val_df, np.float32).astype(np.float64)
    n_windows = len(data) - 48 + 1

    last_baseline = MultiStepLastBaseline()
    last_baseline.compile(loss=tf.keras.losses.MeanSquaredError(),
                          metrics=[tf.keras.metrics.MeanAbsoluteError()])
    val = last_baseline.evaluate(multi_window.val, return_dict=True, verbose=0)
    err = np.stack([data[s + 24:s + 48] - data[s + 23] for s in range(n_windows)])
    np.testing.assert_allclose(val["loss"], np.mean(err ** 2), rtol=1e-5)
    np.testing.assert_allclose(val["mean_absolute_error"], np.mean(np.abs(err)), rtol=1e-5)

    repeat_baseline = RepeatBaseline()
    repeat_baseline.compile(loss=tf.keras.losses.MeanSquaredError(),
                            metrics=[tf.keras.metrics.MeanAbsoluteError()])
    val = repeat_baseline.evaluate(multi_window.val, return_dict=True, verbose=0)
    err = np.stack([data[s + 24:s + 48] - data[s:s + 24] for s in range(n_windows)])
    np.testing.assert_allclose(val["loss"], np.mean(err ** 2), rtol=1e-5)


def test_multi_linear_and_conv_models():
    multi_window = _multi_window()
    x = multi_window.example[0]
    multi_linear_model = tf.keras.Sequential([
        # Take the last time-step.
        # Shape [batch, time, features] => [batch, 1, features]
        tf.keras.layers.Lambda(lambda x: x[:, -1:, :]),
        # Shape => [batch, 1, out_steps*features]
        tf.keras.layers.Dense(OUT_STEPS * num_features,
                              kernel_initializer=tf.initializers.zeros()),
        # Shape => [batch, out_steps, features]
        tf.keras.layers.Reshape([OUT_STEPS, num_features])
    ])
    out = multi_linear_model(x)
    assert tuple(out.shape) == (32, OUT_STEPS, num_features)
    np.testing.assert_array_equal(out.numpy(), 0.0)
    history = compile_and_fit(multi_linear_model, multi_window, max_epochs=3)
    assert history.history["loss"][-1] < history.history["loss"][0]

    tf.keras.utils.set_random_seed(6)
    multi_conv_model = tf.keras.Sequential([
        # Shape [batch, time, features] => [batch, CONV_WIDTH, features]
        tf.keras.layers.Lambda(lambda x: x[:, -CONV_WIDTH:, :]),
        # Shape => [batch, 1, conv_units]
        tf.keras.layers.Conv1D(256, activation='relu', kernel_size=(CONV_WIDTH)),
        # Shape => [batch, 1,  out_steps*features]
        tf.keras.layers.Dense(OUT_STEPS * num_features,
                              kernel_initializer=tf.initializers.zeros()),
        # Shape => [batch, out_steps, features]
        tf.keras.layers.Reshape([OUT_STEPS, num_features])
    ])
    out = multi_conv_model(x)
    assert tuple(out.shape) == (32, OUT_STEPS, num_features)
    np.testing.assert_array_equal(out.numpy(), 0.0)
    history = compile_and_fit(multi_conv_model, multi_window, max_epochs=3)
    assert history.history["loss"][-1] < history.history["loss"][0]
    # After training, the model reads only the last CONV_WIDTH steps.
    k, b, dk, db = _f64(multi_conv_model.get_weights())
    xn = x.numpy().astype(np.float64)
    h = np.maximum(np.einsum("btc,tcf->bf", xn[:, -CONV_WIDTH:], k) + b, 0)
    np.testing.assert_allclose(multi_conv_model(x).numpy(),
                               (h @ dk + db).reshape(-1, OUT_STEPS, num_features),
                               rtol=1e-4, atol=1e-5)


def test_multi_lstm_model():
    multi_window = _multi_window()
    tf.keras.utils.set_random_seed(7)
    multi_lstm_model = tf.keras.Sequential([
        # Shape [batch, time, features] => [batch, lstm_units].
        tf.keras.layers.LSTM(32, return_sequences=False),
        # Shape => [batch, out_steps*features].
        tf.keras.layers.Dense(OUT_STEPS * num_features,
                              kernel_initializer=tf.initializers.zeros()),
        # Shape => [batch, out_steps, features].
        tf.keras.layers.Reshape([OUT_STEPS, num_features])
    ])
    out = multi_lstm_model(multi_window.example[0])
    assert tuple(out.shape) == (32, OUT_STEPS, num_features)
    np.testing.assert_array_equal(out.numpy(), 0.0)
    history = compile_and_fit(multi_lstm_model, multi_window, max_epochs=2)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_autoregressive_feedback_model():
    multi_window = _multi_window()
    tf.keras.utils.set_random_seed(8)
    feedback_model = FeedBack(units=32, out_steps=OUT_STEPS)
    x = multi_window.example[0]
    prediction, state = feedback_model.warmup(x)
    assert tuple(prediction.shape) == (32, num_features)
    assert len(state) == 2 and all(tuple(s.shape) == (32, 32) for s in state)

    out = feedback_model(x)
    assert tuple(out.shape) == (32, OUT_STEPS, num_features)

    # numpy: run the LSTM over the inputs, then feed each prediction back in.
    kernel, recurrent_kernel, bias = _f64(feedback_model.lstm_cell.get_weights())
    dk, db = _f64(feedback_model.dense.get_weights())
    xn = x.numpy().astype(np.float64)
    _, h, c = _np_lstm_sequence(xn, kernel, recurrent_kernel, bias)
    pred = h @ dk + db
    np.testing.assert_allclose(prediction.numpy(), pred, rtol=1e-4, atol=1e-5)
    preds = [pred]
    for _ in range(1, OUT_STEPS):
        h, c = _np_lstm_step(pred, h, c, kernel, recurrent_kernel, bias)
        pred = h @ dk + db
        preds.append(pred)
    np.testing.assert_allclose(out.numpy(), np.stack(preds, axis=1), rtol=1e-4, atol=1e-4)

    history = compile_and_fit(feedback_model, multi_window, max_epochs=2)
    assert history.history["loss"][-1] < history.history["loss"][0]
    val = feedback_model.evaluate(multi_window.val, return_dict=True, verbose=0)
    assert set(val) == {"loss", "mean_absolute_error"}
    np.testing.assert_allclose(val["loss"], history.history["val_loss"][-1], rtol=1e-4)
