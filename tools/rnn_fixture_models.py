"""Recurrent models defined once for Keras 3 and minitf (``K`` is ``keras`` or
``minitf.keras``); ``make_rnn_fixtures.py`` records Keras' weights and outputs for them."""
import numpy as np


def rnn_lstm(K):
    L = K.layers
    return K.Sequential([K.Input((6, 3)), L.LSTM(5, return_sequences=True),
                         L.LSTM(4, go_backwards=True), L.Dense(2)])


def rnn_gru(K):
    L = K.layers
    return K.Sequential([K.Input((6, 3)), L.GRU(4, return_sequences=True),
                         L.GRU(3, reset_after=False, go_backwards=True), L.Dense(2)])


def rnn_simple(K):
    L = K.layers
    return K.Sequential([K.Input((6, 3)), L.TimeDistributed(L.Dense(4, activation="tanh")),
                         L.SimpleRNN(5, return_sequences=True), L.SimpleRNN(3), L.Dense(1)])


def rnn_bidirectional(K):
    L = K.layers
    inputs = K.Input((6, 3))
    x = L.Bidirectional(L.LSTM(4, return_sequences=True))(inputs)
    x = L.Bidirectional(L.GRU(3), merge_mode="sum")(x)
    return K.Model(inputs, L.Dense(2)(x))


def rnn_seq2seq(K):
    """An encoder's final LSTM states start the decoder (``initial_state=``)."""
    L = K.layers
    source, target = K.Input((6, 3)), K.Input((4, 2))
    _, h, c = L.LSTM(4, return_state=True)(source)
    y = L.LSTM(4, return_sequences=True)(target, initial_state=[h, c])
    return K.Model([source, target], L.TimeDistributed(L.Dense(2))(y))


MODELS = {f.__name__: f for f in (rnn_lstm, rnn_gru, rnn_simple, rnn_bidirectional,
                                   rnn_seq2seq)}


def inputs(name):
    """The fixed inputs a model's outputs are recorded on (a list for two-input models)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 6, 3)).astype("float32")
    if name == "rnn_seq2seq":
        return [x, rng.standard_normal((3, 4, 2)).astype("float32")]
    return x


def randomize(variables, seed):
    """Seeded random values for every variable (so a weight in the wrong slot shows)."""
    rng = np.random.default_rng(seed)
    for v in variables:
        v.assign(rng.standard_normal(tuple(int(d) for d in v.shape)).astype("float32") * 0.5)
