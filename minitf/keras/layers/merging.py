"""Merge layers: combine a list of tensors into one.

``Add``, ``Subtract``, ``Multiply``, ``Average``, ``Maximum``, ``Minimum`` (element-wise, with
broadcasting), ``Concatenate`` (along ``axis``) and ``Dot`` (per-example dot products), and the
functional forms ``add([a, b])``, ``concatenate([a, b], axis=-1)``...

    x = keras.layers.concatenate([title_features, body_features])
"""
from ... import dtypes
from ...ops import array_ops, linalg_ops, math_ops, reduce_ops
from . import masking
from .base import Layer


def _broadcast_shapes(shapes, what):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(f"{what}: input shapes {[tuple(s) for s in shapes]} do not "
                             f"broadcast (axis {i}: sizes {sorted(known)})")
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


class _Merge(Layer):
    """Base of the merge layers: ``call`` receives a list of at least two tensors. The output
    is masked where all masked inputs are (Keras: the masks' OR, none if an input has none)."""
    _cast_integers = True
    _min_inputs = 2
    supports_masking = True

    def compute_mask(self, inputs, mask=None):
        if mask is None or not isinstance(mask, (list, tuple)):
            return None
        if any(m is None for m in mask):
            return None
        out = masking.bool_mask(mask[0])
        for m in mask[1:]:
            out = math_ops.logical_or(out, masking.bool_mask(m))
        return out

    def _check(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < self._min_inputs:
            raise ValueError(f"{type(self).__name__} {self.name!r} expects a list of at least "
                             f"{self._min_inputs} inputs, got {inputs!r:.80}")
        return list(inputs)

    def call(self, inputs):
        inputs = self._check(inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return self._finish(out, len(inputs))

    def _finish(self, out, n):
        return out

    def compute_output_shape(self, input_shape):
        shapes = self._check(input_shape)
        return _broadcast_shapes([tuple(s) for s in shapes], type(self).__name__)


class Add(_Merge):
    """Element-wise sum of the inputs."""

    def _merge(self, a, b):
        return math_ops.add(a, b)


class Subtract(_Merge):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""

    def call(self, inputs):
        inputs = self._check(inputs)
        if len(inputs) != 2:
            raise ValueError(f"Subtract {self.name!r} expects exactly 2 inputs, got "
                             f"{len(inputs)}")
        return math_ops.subtract(inputs[0], inputs[1])


class Multiply(_Merge):
    """Element-wise product of the inputs."""

    def _merge(self, a, b):
        return math_ops.multiply(a, b)


class Average(_Merge):
    """Element-wise mean of the inputs."""

    def _merge(self, a, b):
        return math_ops.add(a, b)

    def _finish(self, out, n):
        return out * (1.0 / n)


class Maximum(_Merge):
    """Element-wise maximum of the inputs."""

    def _merge(self, a, b):
        return math_ops.maximum(a, b)


class Minimum(_Merge):
    """Element-wise minimum of the inputs."""

    def _merge(self, a, b):
        return math_ops.minimum(a, b)


class Concatenate(_Merge):
    """Join the inputs along ``axis`` (the last by default); the other sizes must match."""
    _min_inputs = 1

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        return array_ops.concat(self._check(inputs), axis=self.axis)

    def compute_mask(self, inputs, mask=None):
        """Keras: the inputs' masks (all-True for an unmasked input) joined along ``axis``;
        a position is kept where any joined element is."""
        if mask is None or not isinstance(mask, (list, tuple)) or all(m is None for m in mask):
            return None
        full = []
        for x, m in zip(inputs, mask):
            if m is None:
                full.append(array_ops.ones_like(x, dtype=dtypes.bool))
            elif len(m.shape) < len(x.shape):
                full.append(math_ops.logical_or(array_ops.expand_dims(masking.bool_mask(m), -1),
                                                array_ops.zeros_like(x, dtype=dtypes.bool)))
            else:
                full.append(masking.bool_mask(m))
        return reduce_ops.reduce_any(array_ops.concat(full, axis=self.axis), axis=-1)

    def compute_output_shape(self, input_shape):
        shapes = [tuple(s) for s in self._check(input_shape)]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            raise ValueError(f"Concatenate {self.name!r}: inputs must have the same rank, got "
                             f"shapes {shapes}")
        axis = self.axis % rank
        out = list(shapes[0])
        for i in range(rank):
            if i == axis:
                sizes = [s[i] for s in shapes]
                out[i] = None if None in sizes else sum(sizes)
                continue
            known = {s[i] for s in shapes if s[i] is not None}
            if len(known) > 1:
                raise ValueError(f"Concatenate {self.name!r} along axis {self.axis}: the "
                                 f"other dimensions must match, got shapes {shapes}")
            out[i] = known.pop() if known else None
        return tuple(out)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class Dot(_Merge):
    """Dot products of two batches of tensors along ``axes`` (``normalize=True``: cosine
    similarity, each input L2-normalised along its axis first)."""

    def compute_mask(self, inputs, mask=None):
        return None   # the summed axes are gone (Keras)

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axes, int):
            axes = (axes, axes)
        self.axes = tuple(int(a) for a in axes)
        if len(self.axes) != 2:
            raise ValueError(f"Dot: axes must be an int or a pair of ints, got {axes!r}")
        self.normalize = bool(normalize)

    def _resolved(self, ranks):
        return tuple(a % r for a, r in zip(self.axes, ranks))

    def call(self, inputs):
        a, b = self._check(inputs)
        if len(inputs) != 2:
            raise ValueError(f"Dot {self.name!r} expects exactly 2 inputs")
        ax, bx = self._resolved((len(a.shape), len(b.shape)))
        if 0 in (ax, bx):
            raise ValueError(f"Dot {self.name!r}: cannot take the dot product over the batch "
                             f"axis (axes={self.axes})")
        if self.normalize:
            a = a * math_ops.rsqrt(math_ops.maximum(
                reduce_ops.reduce_sum(math_ops.square(a), axis=ax, keepdims=True), 1e-12))
            b = b * math_ops.rsqrt(math_ops.maximum(
                reduce_ops.reduce_sum(math_ops.square(b), axis=bx, keepdims=True), 1e-12))
        # Move the contracted axis last in a and second in b, then a batched matmul.
        ra, rb = len(a.shape), len(b.shape)
        a = array_ops.transpose(a, [i for i in range(ra) if i != ax] + [ax])
        b = array_ops.transpose(b, [0, bx] + [i for i in range(1, rb) if i != bx])
        a_rest, b_rest = tuple(a.shape[1:-1]), tuple(b.shape[2:])
        n = a.shape[0]
        a3 = array_ops.reshape(a, (n, -1, a.shape[-1]))
        b3 = array_ops.reshape(b, (n, b.shape[1], -1))
        out = linalg_ops.matmul(a3, b3)
        shape = (n,) + a_rest + b_rest
        return array_ops.reshape(out, shape if len(shape) > 1 else (n, 1))

    def compute_output_shape(self, input_shape):
        sa, sb = [tuple(s) for s in self._check(input_shape)]
        ax, bx = self._resolved((len(sa), len(sb)))
        shape = (sa[0],) + tuple(d for i, d in enumerate(sa) if i not in (0, ax)) + \
            tuple(d for i, d in enumerate(sb) if i not in (0, bx))
        return shape if len(shape) > 1 else (sa[0], 1)

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def _functional(cls):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)
    merge.__name__ = cls.__name__.lower()
    merge.__doc__ = f"``{cls.__name__}(**kwargs)(inputs)``."
    return merge


add, subtract, multiply, average = (_functional(Add), _functional(Subtract),
                                    _functional(Multiply), _functional(Average))
maximum, minimum = _functional(Maximum), _functional(Minimum)


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis=axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, normalize=False, **kwargs):
    """``Dot(axes, normalize, **kwargs)(inputs)``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot",
           "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "dot"]
