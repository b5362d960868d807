"""Independent numpy implementations of Keras 3's recurrent cells (the equations of
``keras/src/layers/rnn/{simple_rnn,lstm,gru}.py``), used as references by the recurrent tests.

Each returns ``(outputs, final_states)``: ``outputs`` ``(batch, steps, units)`` in processing
order (reversed time for ``backwards=True``, as Keras returns it).
"""
import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _steps(x, backwards):
    order = range(x.shape[1])
    return [x[:, t] for t in (reversed(order) if backwards else order)]


def simple_rnn(x, kernel, recurrent, bias=None, h0=None, backwards=False, activation=np.tanh):
    h = np.zeros((x.shape[0], kernel.shape[1])) if h0 is None else h0
    outputs = []
    for x_t in _steps(x, backwards):
        z = x_t @ kernel + h @ recurrent
        h = activation(z if bias is None else z + bias)
        outputs.append(h)
    return np.stack(outputs, axis=1), [h]


def lstm(x, kernel, recurrent, bias=None, h0=None, c0=None, backwards=False):
    units = recurrent.shape[0]
    h = np.zeros((x.shape[0], units)) if h0 is None else h0
    c = np.zeros((x.shape[0], units)) if c0 is None else c0
    outputs = []
    for x_t in _steps(x, backwards):
        z = x_t @ kernel + h @ recurrent + (0 if bias is None else bias)
        i = sigmoid(z[:, :units])
        f = sigmoid(z[:, units:2 * units])
        g = np.tanh(z[:, 2 * units:3 * units])
        o = sigmoid(z[:, 3 * units:])
        c = f * c + i * g
        h = o * np.tanh(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), [h, c]


def gru(x, kernel, recurrent, bias=None, h0=None, reset_after=True, backwards=False):
    units = recurrent.shape[0]
    h = np.zeros((x.shape[0], units)) if h0 is None else h0
    if bias is None:
        b_in = b_rec = np.zeros(3 * units)
    elif reset_after:
        b_in, b_rec = bias[0], bias[1]
    else:
        b_in, b_rec = bias, np.zeros(3 * units)
    cols = [slice(0, units), slice(units, 2 * units), slice(2 * units, 3 * units)]
    outputs = []
    for x_t in _steps(x, backwards):
        xz, xr, xh = (x_t @ kernel[:, s] + b_in[s] for s in cols)
        z = sigmoid(xz + h @ recurrent[:, cols[0]] + b_rec[cols[0]])
        r = sigmoid(xr + h @ recurrent[:, cols[1]] + b_rec[cols[1]])
        if reset_after:
            candidate = np.tanh(xh + r * (h @ recurrent[:, cols[2]] + b_rec[cols[2]]))
        else:
            candidate = np.tanh(xh + (r * h) @ recurrent[:, cols[2]])
        h = z * h + (1 - z) * candidate
        outputs.append(h)
    return np.stack(outputs, axis=1), [h]
