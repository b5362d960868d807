"""More of tf.keras 2's ``keras.backend`` (``K``): ``K.batch_dot``, ``K.rnn``, the focal
losses, ``K.batch_normalization``, variable updates, functional helpers (``K.map_fn``,
``K.foldl``...) and random variables, plus (from ``backend_legacy_conv``) its convolution,
pooling, padding and resizing functions. Each follows tf.keras 2's arguments, defaults and shape
rules, and is composed of minitf ops, so gradients flow where they do in tf.keras 2.

    last, outputs, states = K.rnn(step, inputs, [h0], mask=mask)
    scores = K.batch_dot(queries, keys, axes=(2, 2))
"""
import numpy as np

import minitf as tf
from .. import backend as B
from .backend_legacy_conv import (  # re-exported: K.conv1d, K.pool2d, ...
    conv1d, conv2d_transpose, conv3d, depthwise_conv2d, pool2d, pool3d, resize_images,
    resize_volumes, separable_conv2d, spatial_2d_padding, spatial_3d_padding, temporal_padding)

__all__ = [
    "batch_dot", "batch_get_value", "batch_normalization", "batch_set_value",
    "binary_focal_crossentropy", "cast_to_floatx", "categorical_focal_crossentropy", "dropout",
    "eval", "foldl", "foldr", "gradients", "in_top_k", "is_sparse", "map_fn",
    "moving_average_update", "name_scope", "random_bernoulli", "random_normal_variable",
    "random_uniform_variable", "reverse", "rnn", "to_dense", "update", "update_add",
    "update_sub",
    # from backend_legacy_conv
    "conv1d", "conv2d_transpose", "conv3d", "depthwise_conv2d", "pool2d", "pool3d",
    "resize_images", "resize_volumes", "separable_conv2d", "spatial_2d_padding",
    "spatial_3d_padding", "temporal_padding",
]


def _floatx():
    from .keras_backend import floatx
    return floatx()


def _epsilon():
    from .keras_backend import epsilon
    return epsilon()


# --- batch_dot ---------------------------------------------------------------------------------
def _batch_dot_axes(x_shape, y_shape, axes):
    """tf.keras 2's checks and defaults: the two contracted axes as non-negative ints."""
    x_ndim, y_ndim = len(x_shape), len(y_shape)
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError(f"keras.backend.batch_dot: Cannot do batch_dot on inputs with rank < 2. "
                         f"Received inputs with shapes {x_shape} and {y_shape}.")
    if x_shape[0] is not None and y_shape[0] is not None and x_shape[0] != y_shape[0]:
        raise ValueError(f"keras.backend.batch_dot: Cannot do batch_dot on inputs with "
                         f"different batch sizes. Received inputs with shapes {x_shape} and "
                         f"{y_shape}.")
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [x_ndim - 1, y_ndim - 1] if y_ndim == 2 else [x_ndim - 1, y_ndim - 2]
    if len(axes) != 2 or any(not isinstance(a, (int, np.integer)) for a in axes):
        raise ValueError(f"keras.backend.batch_dot: Multiple target dimensions are not "
                         f"supported. Expected: None, int, (int, int), Provided: {axes}")
    a0 = int(axes[0]) + (x_ndim if axes[0] < 0 else 0)
    a1 = int(axes[1]) + (y_ndim if axes[1] < 0 else 0)
    if a0 == 0 or a1 == 0:
        raise ValueError("keras.backend.batch_dot: Cannot perform batch_dot over axis 0 "
                         f"(axes={list(axes)}). If your inputs are not batched, add a dummy "
                         "batch dimension to your inputs using K.expand_dims(x, 0)")
    d1, d2 = x_shape[a0], y_shape[a1]
    if d1 is not None and d2 is not None and d1 != d2:
        raise ValueError(f"keras.backend.batch_dot: Cannot do batch_dot on inputs with shapes "
                         f"{x_shape} and {y_shape} with axes={[a0, a1]}. x.shape[{a0}] != "
                         f"y.shape[{a1}] ({d1} != {d2}).")
    return a0, a1


def batch_dot(x, y, axes=None):
    """Per-example dot product of two batches: contracts ``x``'s axis ``axes[0]`` with ``y``'s
    ``axes[1]``; the result has ``x``'s other axes then ``y``'s (without its batch axis), and a
    rank-1 result becomes ``(batch, 1)``."""
    x, y = tf.convert_to_tensor(x), tf.convert_to_tensor(y)
    x_shape, y_shape = tuple(x.shape.as_list()), tuple(y.shape.as_list())
    a0, a1 = _batch_dot_axes(x_shape, y_shape, axes)
    orig_x_ndim, orig_y_ndim = len(x_shape), len(y_shape)
    if orig_x_ndim == 2:
        x, a0 = tf.expand_dims(x, 1), a0 + 1
    if orig_y_ndim == 2:
        y = tf.expand_dims(y, 2)
    x_ndim, y_ndim = len(x.shape), len(y.shape)
    if a0 != x_ndim - 1:  # contracted axis of x last
        x = tf.transpose(x, [d for d in range(x_ndim) if d != a0] + [a0])
    if a1 != 1:  # contracted axis of y second
        y = tf.transpose(y, [0, a1] + [d for d in range(1, y_ndim) if d != a1])
    x_mid, y_trail = None, None
    if x_ndim > 3:
        x_dims = tf.shape(x)
        x_mid = x_dims[1:-1]
        x = tf.reshape(x, tf.stack([x_dims[0], -1, x_dims[-1]]))
    if y_ndim > 3:
        y_dims = tf.shape(y)
        y_trail = y_dims[2:]
        y = tf.reshape(y, tf.stack([y_dims[0], y_dims[1], -1]))
    result = tf.matmul(x, y)
    if x_mid is not None or y_trail is not None:
        out = tf.shape(result)
        parts = [out[:1], x_mid if x_mid is not None else out[1:2],
                 y_trail if y_trail is not None else out[2:]]
        result = tf.reshape(result, tf.concat(parts, 0))
    if orig_x_ndim == 2:
        result = tf.squeeze(result, [1])
    elif orig_y_ndim == 2:
        result = tf.squeeze(result, [-1])
    return result


# --- normalization and losses ------------------------------------------------------------------
def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta``. For 4D ``x`` with ``axis`` 1 (or
    -3) the per-channel statistics apply to axis 1 (channels-first), with ``axis`` 3 (or -1) to
    the last axis; otherwise they broadcast against ``x`` as given. ``beta``/``gamma`` may be
    None."""
    x = tf.convert_to_tensor(x)
    mean, var = tf.convert_to_tensor(mean, x.dtype), tf.convert_to_tensor(var, x.dtype)
    beta = None if beta is None else tf.convert_to_tensor(beta, x.dtype)
    gamma = None if gamma is None else tf.convert_to_tensor(gamma, x.dtype)
    if len(x.shape) == 4 and axis in (1, -3, 3, -1):
        per_channel = [1, -1, 1, 1] if axis in (1, -3) else [-1]
        mean, var = tf.reshape(mean, per_channel), tf.reshape(var, per_channel)
        beta = tf.zeros_like(mean) if beta is None else tf.reshape(beta, per_channel)
        gamma = tf.ones_like(mean) if gamma is None else tf.reshape(gamma, per_channel)
    return tf.nn.batch_normalization(x, mean, var, beta, gamma, epsilon)


def binary_focal_crossentropy(target, output, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False):
    """Element-wise focal loss ``(1 - p_t) ** gamma * binary_crossentropy``, weighted by
    ``alpha`` (class 1) / ``1 - alpha`` (class 0) when ``apply_class_balancing``."""
    from .backend_functions import binary_crossentropy
    output = tf.convert_to_tensor(output)
    if not output.dtype.is_floating:
        output = tf.cast(output, _floatx())
    target = tf.cast(target, output.dtype)
    probabilities = tf.sigmoid(output) if from_logits else output
    p_t = target * probabilities + (1 - target) * (1 - probabilities)
    focal_bce = tf.pow(1.0 - p_t, gamma) * binary_crossentropy(target, output,
                                                               from_logits=from_logits)
    if apply_class_balancing:
        focal_bce = (target * alpha + (1 - target) * (1 - alpha)) * focal_bce
    return focal_bce


def categorical_focal_crossentropy(target, output, alpha=0.25, gamma=2.0, from_logits=False,
                                   axis=-1):
    """Per-example ``sum(alpha * (1 - p) ** gamma * -target * log(p))`` over ``axis``, with the
    probabilities renormalized and clipped to ``[epsilon, 1 - epsilon]``; ``alpha`` may be a
    per-class list."""
    output = tf.convert_to_tensor(output)
    if not output.dtype.is_floating:
        output = tf.cast(output, _floatx())
    target = tf.cast(target, output.dtype)
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError(f"keras.backend.categorical_focal_crossentropy: target and output must "
                         f"have the same shape, got {tuple(target.shape)} and "
                         f"{tuple(output.shape)}")
    if from_logits:
        output = tf.nn.softmax(output, axis=axis)
    output = output / tf.reduce_sum(output, axis=axis, keepdims=True)
    eps = _epsilon()
    output = tf.clip_by_value(output, tf.constant(eps, output.dtype),
                              tf.constant(1.0 - eps, output.dtype))
    cce = -target * tf.math.log(output)
    weighting = tf.pow(1.0 - output, gamma) * tf.convert_to_tensor(alpha, output.dtype)
    return tf.reduce_sum(weighting * cce, axis=axis)


# --- values and variables ----------------------------------------------------------------------
def cast_to_floatx(x):
    """``x`` cast to ``floatx()``: tensors, Variables and SparseTensors become tensors of it,
    anything else a numpy array of it."""
    if isinstance(x, tf.SparseTensor):
        return tf.SparseTensor(x.indices, tf.cast(x.values, _floatx()), x.dense_shape)
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return tf.cast(x, _floatx())
    if B.is_array(x) and not isinstance(x, np.ndarray):  # a device array stays on the device
        return x.astype(_floatx())
    return np.asarray(x, dtype=_floatx())


def is_sparse(tensor):
    """Whether ``tensor`` is a ``tf.SparseTensor``."""
    return isinstance(tensor, tf.SparseTensor)


def to_dense(tensor):
    """A SparseTensor as a dense tensor; anything else as it is."""
    return tf.sparse.to_dense(tensor) if is_sparse(tensor) else tensor


def eval(x):  # noqa: A001 - tf.keras 2's name
    """The value of a tensor, Variable or SparseTensor as a numpy array."""
    from .keras_backend import get_value
    return get_value(to_dense(x))


def batch_get_value(tensors):
    """The values of a list of tensors/Variables as numpy arrays."""
    if not tf.executing_eagerly():
        raise RuntimeError("keras.backend.batch_get_value: Cannot get value inside Tensorflow "
                           "graph function.")
    return [x.numpy() for x in tensors]


def batch_set_value(tuples):
    """Assign each ``(variable, value)`` pair; values are converted to the variable's dtype."""
    for variable, value in tuples:
        variable.assign(tf.cast(tf.convert_to_tensor(value), variable.dtype))


def _check_variable(x, where):
    if not isinstance(x, tf.Variable):
        raise TypeError(f"keras.backend.{where}: expected a tf.Variable to update, got "
                        f"{type(x).__name__}")


def update(x, new_x):
    """Assign ``new_x`` to the Variable ``x``; returns the updated Variable."""
    _check_variable(x, "update")
    return x.assign(new_x)


def update_add(x, increment):
    """``x += increment`` for the Variable ``x``; returns the updated Variable."""
    _check_variable(x, "update_add")
    return x.assign_add(increment)


def update_sub(x, decrement):
    """``x -= decrement`` for the Variable ``x``; returns the updated Variable."""
    _check_variable(x, "update_sub")
    return x.assign_sub(decrement)


def moving_average_update(x, value, momentum):
    """``x = x * momentum + value * (1 - momentum)`` for the Variable ``x`` (no debiasing, as in
    TF 2); returns the updated Variable."""
    _check_variable(x, "moving_average_update")
    momentum = tf.cast(momentum, x.dtype)
    value = tf.cast(value, x.dtype)
    return x.assign(x * momentum + value * (1 - momentum))


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """A Variable of values drawn uniformly from ``[low, high)``."""
    dtype = dtype or _floatx()
    value = tf.random.uniform(shape, low, high, dtype=dtype, seed=seed)
    return tf.Variable(value, dtype=dtype, name=name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """A Variable of values drawn from a normal distribution ``N(mean, scale**2)``."""
    dtype = dtype or _floatx()
    value = tf.random.normal(shape, mean, scale, dtype=dtype, seed=seed)
    return tf.Variable(value, dtype=dtype, name=name)


def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    """Ones with probability ``p`` and zeros otherwise."""
    dtype = dtype or _floatx()
    draw = tf.random.uniform(shape, dtype=dtype, seed=seed)
    return tf.where(draw <= p, tf.ones(shape, dtype=dtype), tf.zeros(shape, dtype=dtype))


def dropout(x, level, noise_shape=None, seed=None):
    """Zero entries of ``x`` with probability ``level`` and scale the rest by
    ``1 / (1 - level)``."""
    return tf.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


# --- functional helpers ------------------------------------------------------------------------
def in_top_k(predictions, targets, k):
    """Whether each ``targets[i]`` is among the ``k`` largest ``predictions[i]`` (ties count)."""
    return tf.math.in_top_k(targets, predictions, k)


def reverse(x, axes):
    """``x`` reversed along ``axes`` (an int or a list of ints)."""
    return tf.reverse(x, [axes] if isinstance(axes, int) else list(axes))


def map_fn(fn, elems, name=None, dtype=None):
    """``fn`` applied to each slice of ``elems`` along axis 0, results stacked."""
    return tf.map_fn(fn, elems, dtype=dtype)


def foldl(fn, elems, initializer=None, name=None):
    """Reduce ``elems`` along axis 0 from the left with ``fn(accumulator, element)``."""
    return tf.foldl(fn, elems, initializer=initializer)


def foldr(fn, elems, initializer=None, name=None):
    """Reduce ``elems`` along axis 0 from the right with ``fn(accumulator, element)``."""
    return tf.foldr(fn, elems, initializer=initializer)


def name_scope(name):
    """A context manager that prefixes the names of what is created inside it."""
    return tf.name_scope(name)


def gradients(loss, variables):
    """Symbolic gradients (graph mode only in tf.keras 2); minitf has no graph mode, so this
    always raises: compute gradients with ``tf.GradientTape`` instead."""
    raise RuntimeError("keras.backend.gradients: tf.gradients is not supported when eager "
                       "execution is enabled (and minitf's tf.function traces have no graph to "
                       "differentiate). Use tf.GradientTape instead.")



# --- rnn ---------------------------------------------------------------------------------------
def _time_major(t):
    return tf.transpose(t, [1, 0] + list(range(2, len(t.shape))))


def _masked(mask_t, new, old):
    """``new`` where the ``(batch, ...)`` step mask holds, else ``old`` (mask broadcast along
    the trailing axes)."""
    while len(mask_t.shape) < len(new.shape):
        mask_t = tf.expand_dims(mask_t, -1)
    return tf.where(mask_t, new, old)


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None,
        unroll=False, input_length=None, time_major=False, zero_output_for_mask=False):
    """Run ``step_function(inputs_t, states + constants) -> (output_t, new_states)`` over the
    time axis of ``inputs`` (``(batch, time, ...)``, or ``(time, batch, ...)`` when
    ``time_major``; may be a nest). Returns ``(last_output, outputs, new_states)`` with
    ``outputs`` stacked along the time axis. Where the boolean ``mask`` (``(batch, time)``) is
    False, the states are carried over and the output repeats the previous one (zeros with
    ``zero_output_for_mask``). ``unroll`` and ``input_length`` are accepted; the steps always
    run as a Python loop, so gradients flow through every step."""
    flat_inputs = [tf.convert_to_tensor(t) for t in tf.nest.flatten(inputs)]
    for t in flat_inputs:
        if len(t.shape) < 3:
            raise ValueError(f"keras.backend.rnn: inputs must have rank >= 3 ((batch, time, "
                             f"features)), got shape {tuple(t.shape)}")
    if not time_major:
        flat_inputs = [_time_major(t) for t in flat_inputs]
    time_steps = int(flat_inputs[0].shape[0])
    if mask is not None:
        mask = tf.convert_to_tensor(mask)
        if mask.dtype != tf.bool:
            mask = tf.cast(mask, tf.bool)
        if not time_major:
            mask = _time_major(mask)
    constants = tuple(constants or ())
    states = tuple(initial_states)
    order = range(time_steps - 1, -1, -1) if go_backwards else range(time_steps)
    step_outputs, previous = [], None
    for time in order:
        step_input = tf.nest.pack_sequence_as(inputs, [t[time] for t in flat_inputs])
        output, new_states = step_function(step_input, states + constants)
        flat_output = tf.nest.flatten(output)
        flat_new = tf.nest.flatten(new_states)
        if mask is not None:
            mask_t = mask[time]
            if previous is None or zero_output_for_mask:
                previous = [tf.zeros_like(o) for o in flat_output]
            flat_output = [_masked(mask_t, o, p) for o, p in zip(flat_output, previous)]
            flat_new = [_masked(mask_t, n, s)
                        for n, s in zip(flat_new, tf.nest.flatten(list(states)))]
        previous = flat_output
        states = tuple(tf.nest.pack_sequence_as(list(initial_states), flat_new))
        step_outputs.append(flat_output)
    if not step_outputs:
        raise ValueError("keras.backend.rnn: inputs have no time steps (time axis of size 0)")
    stacked = [tf.stack(list(parts), axis=0) for parts in zip(*step_outputs)]
    if not time_major:
        stacked = [_time_major(o) for o in stacked]
    structure = output
    last_output = tf.nest.pack_sequence_as(structure, step_outputs[-1])
    outputs = tf.nest.pack_sequence_as(structure, stacked)
    return last_output, outputs, states
