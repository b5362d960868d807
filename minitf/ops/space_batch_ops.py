"""Moving blocks of spatial positions into the batch and back (``space_to_batch_nd``,
``batch_to_space``, ``required_space_to_batch_paddings``) and ``reverse_sequence``.

``space_to_batch_nd`` and ``batch_to_space`` are linear and each is the other's adjoint, so
each one's gradient is the other; ``reverse_sequence`` is its own adjoint.
"""
import math

import numpy

from .. import backend as B
from ..tensor import Tensor, host_value
from ._samples import u
from .convert import convert_to_tensor
from .registry import InvalidArgumentError, apply, defop


def _host_ints(value, what):
    """A host int64 array from a list, numpy array or Tensor."""
    if isinstance(value, Tensor):
        if not value.dtype.is_integer:
            raise TypeError(f"{what} must be integers, got dtype {value.dtype.name}")
        return numpy.asarray(host_value(value, what), dtype=numpy.int64)
    array = numpy.asarray(value)
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers, got {value!r}")
    return array.astype(numpy.int64)


# --- kernels -----------------------------------------------------------------------------------

def _space_to_batch(x, block_shape, paddings):
    """Pad the spatial axes, split each into (size / block, block) and move the block factors
    in front of the batch axis."""
    xp = B.xp
    m = len(block_shape)
    widths = [(0, 0)] + [tuple(p) for p in paddings] + [(0, 0)] * (x.ndim - 1 - m)
    padded = xp.pad(x, widths) if any(w != (0, 0) for w in widths) else x
    batch, spatial, rest = padded.shape[0], padded.shape[1:1 + m], padded.shape[1 + m:]
    split = [batch]
    for size, block in zip(spatial, block_shape):
        split += [size // block, block]
    y = padded.reshape(tuple(split) + tuple(rest))
    perm = ([2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
            + [1 + 2 * m + j for j in range(len(rest))])
    out_shape = ((batch * math.prod(block_shape),)
                 + tuple(s // b for s, b in zip(spatial, block_shape)) + tuple(rest))
    return xp.ascontiguousarray(y.transpose(perm)).reshape(out_shape)


def _batch_to_space(x, block_shape, crops):
    """Split the batch axis into the block factors and the new batch, interleave the factors
    with the spatial axes, then crop."""
    xp = B.xp
    m = len(block_shape)
    spatial, rest = x.shape[1:1 + m], x.shape[1 + m:]
    batch = x.shape[0] // math.prod(block_shape)
    y = x.reshape(tuple(block_shape) + (batch,) + tuple(x.shape[1:]))
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += [2 * m + 1 + j for j in range(len(rest))]
    full = xp.ascontiguousarray(y.transpose(perm)).reshape(
        (batch,) + tuple(s * b for s, b in zip(spatial, block_shape)) + tuple(rest))
    keep = (slice(None),) + tuple(slice(lo, s * b - hi) for (lo, hi), s, b
                                  in zip(crops, spatial, block_shape))
    return xp.ascontiguousarray(full[keep])


def _s2b_vjp(F, g, x, y, block_shape, paddings):
    return (F.batch_to_space_nd(g, block_shape=block_shape, crops=paddings),)


def _b2s_vjp(F, g, x, y, block_shape, crops):
    return (F.space_to_batch_nd(g, block_shape=block_shape, paddings=crops),)


_s2b = defop("space_to_batch_nd", _space_to_batch, vjp=_s2b_vjp, jvp="linear",
             type="SpaceToBatchND", batch_unaware=True,
             samples=lambda: [((u(2, 3, 4, 2),), {"block_shape": (2, 3),
                                                  "paddings": ((1, 0), (1, 1))}),
                              ((u(3, 4),), {"block_shape": (2,), "paddings": ((0, 0),)})])
_b2s = defop("batch_to_space_nd", _batch_to_space, vjp=_b2s_vjp, jvp="linear",
             type="BatchToSpaceND", batch_unaware=True,
             samples=lambda: [((u(8, 2, 3, 2),), {"block_shape": (2, 4),
                                                  "crops": ((1, 0), (2, 3))}),
                              ((u(6, 2),), {"block_shape": (3,), "crops": ((1, 2),)})])


# --- public functions --------------------------------------------------------------------------

def _block_and_pairs(fn, x, block_shape, pairs, pairs_name):
    block = _host_ints(block_shape, f"{fn}: block_shape").reshape(-1)
    pairs = _host_ints(pairs, f"{fn}: {pairs_name}")
    m = block.size
    if m == 0 or (block < 1).any():
        raise InvalidArgumentError(f"{fn}: block_shape must be a non-empty list of integers "
                                   f">= 1, got {block.tolist()}")
    if pairs.shape != (m, 2) or (pairs < 0).any():
        raise InvalidArgumentError(f"{fn}: {pairs_name} must be a list of {m} non-negative "
                                   f"[start, end] pairs (one per block dimension), got "
                                   f"{pairs.tolist()}")
    if x.ndim < m + 1:
        raise InvalidArgumentError(f"{fn}: input of shape {tuple(x.shape)} must have rank at "
                                   f"least {m + 1} (batch plus {m} block dimension(s))")
    return tuple(int(b) for b in block), tuple((int(a), int(b)) for a, b in pairs)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002 - TF's name
    """Zero-pad the spatial axes 1..M of ``input`` by ``paddings`` ([M, 2]), cut them into
    blocks of ``block_shape`` and move each position within a block into the batch axis:
    shape ``[batch * prod(block_shape)] + [padded / block] + remaining``."""
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    block, pads = _block_and_pairs("space_to_batch_nd", x, block_shape, paddings, "paddings")
    for i, (b, (lo, hi)) in enumerate(zip(block, pads)):
        size = int(x.shape[1 + i]) + lo + hi
        if size % b:
            raise InvalidArgumentError(
                f"space_to_batch_nd: padded size {size} of input dimension {1 + i} (shape "
                f"{tuple(x.shape)}, paddings {list(pads[i])}) is not divisible by block size "
                f"{b}")
    return apply(_s2b.op, (x,), {"block_shape": block, "paddings": pads})


def space_to_batch(input, block_shape, paddings, name=None):  # noqa: A002
    """TF 2's ``tf.space_to_batch``: ``space_to_batch_nd``."""
    return space_to_batch_nd(input, block_shape, paddings, name=name)


def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of ``space_to_batch_nd``: the batch axis (a multiple of
    ``prod(block_shape)``) is spread over the spatial axes 1..M, then ``crops`` ([M, 2]) is cut
    from their ends."""
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    block, crops = _block_and_pairs("batch_to_space", x, block_shape, crops, "crops")
    if int(x.shape[0]) % math.prod(block):
        raise InvalidArgumentError(f"batch_to_space: batch size {int(x.shape[0])} of input "
                                   f"shape {tuple(x.shape)} is not divisible by the product of "
                                   f"block_shape {list(block)}")
    for i, (b, (lo, hi)) in enumerate(zip(block, crops)):
        size = int(x.shape[1 + i]) * b
        if lo + hi > size:
            raise InvalidArgumentError(f"batch_to_space: crops {list(crops[i])} exceed the "
                                       f"size {size} of output dimension {1 + i}")
    return apply(_b2s.op, (x,), {"block_shape": block, "crops": crops})


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """``(paddings, crops)`` making ``input_shape`` plus ``base_paddings`` divisible by
    ``block_shape``: the extra padding goes at the end and is what ``crops`` removes."""
    shape = _host_ints(input_shape, "required_space_to_batch_paddings: input_shape")
    block = _host_ints(block_shape, "required_space_to_batch_paddings: block_shape")
    m = block.size
    if shape.shape != (m,) or (block < 1).any():
        raise InvalidArgumentError(f"required_space_to_batch_paddings: input_shape "
                                   f"{shape.tolist()} and block_shape {block.tolist()} must "
                                   f"be vectors of the same length, block sizes >= 1")
    base = (numpy.zeros((m, 2), numpy.int64) if base_paddings is None else
            _host_ints(base_paddings, "required_space_to_batch_paddings: base_paddings"))
    if base.shape != (m, 2):
        raise InvalidArgumentError(f"required_space_to_batch_paddings: base_paddings must "
                                   f"have shape [{m}, 2], got {base.tolist()}")
    extra = (block - (shape + base[:, 0] + base[:, 1]) % block) % block
    paddings = numpy.stack([base[:, 0], base[:, 1] + extra], axis=1)
    crops = numpy.stack([numpy.zeros_like(extra), extra], axis=1)
    dtype = input_shape.dtype if isinstance(input_shape, Tensor) else "int32"
    return (convert_to_tensor(paddings, dtype=dtype), convert_to_tensor(crops, dtype=dtype))


# --- reverse_sequence --------------------------------------------------------------------------

def _reverse_sequence(x, seq_lengths, seq_axis, batch_axis):
    """Reverse the first ``seq_lengths[b]`` entries along ``seq_axis`` of each slice ``b`` of
    ``batch_axis``."""
    xp = B.xp
    n = x.shape[seq_axis]
    lengths = seq_lengths.astype(xp.int64)
    if bool((lengths > n).any()) or bool((lengths < 0).any()):
        raise InvalidArgumentError(f"reverse_sequence: seq_lengths must be in [0, {n}] (the "
                                   f"size of seq_axis {seq_axis})")
    pos_shape, len_shape = [1] * x.ndim, [1] * x.ndim
    pos_shape[seq_axis], len_shape[batch_axis] = n, x.shape[batch_axis]
    pos = xp.arange(n, dtype=xp.int64).reshape(pos_shape)
    lengths = lengths.reshape(len_shape)
    index = xp.broadcast_to(xp.where(pos < lengths, lengths - 1 - pos, pos), x.shape)
    return xp.take_along_axis(x, index, axis=seq_axis)


def _reverse_sequence_vjp(F, g, x, y, seq_axis, batch_axis):
    return (F.reverse_sequence(g, x[1], seq_axis=seq_axis, batch_axis=batch_axis), None)


_revseq = defop("reverse_sequence", _reverse_sequence, arity=2, vjp=_reverse_sequence_vjp,
                jvp="linear", save=(1,), type="ReverseSequence", batch_unaware=True,
                samples=lambda: [((u(3, 4, 2), numpy.array([2, 4, 0])),
                                  {"seq_axis": 1, "batch_axis": 0}),
                                 ((u(5, 2), numpy.array([3, 5])),
                                  {"seq_axis": 0, "batch_axis": 1})])


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """Reverse the first ``seq_lengths[i]`` elements along ``seq_axis`` of each slice ``i``
    along ``batch_axis`` (default 0); the rest stays in place."""
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    lengths = (seq_lengths if isinstance(seq_lengths, Tensor)
               else convert_to_tensor(_host_ints(seq_lengths, "reverse_sequence: seq_lengths")))
    if not lengths.dtype.is_integer or lengths.ndim != 1:
        raise InvalidArgumentError(f"reverse_sequence: seq_lengths must be a 1-D integer "
                                   f"tensor, got shape {tuple(lengths.shape)} dtype "
                                   f"{lengths.dtype.name}")
    if seq_axis is None:
        raise InvalidArgumentError("reverse_sequence: seq_axis is required")
    batch_axis = 0 if batch_axis is None else int(batch_axis)
    seq_axis = int(seq_axis)
    rank = x.ndim
    if not (-rank <= seq_axis < rank and -rank <= batch_axis < rank) or \
            seq_axis % rank == batch_axis % rank:
        raise InvalidArgumentError(f"reverse_sequence: seq_axis ({seq_axis}) and batch_axis "
                                   f"({batch_axis}) must be different axes of the input of "
                                   f"rank {rank}")
    seq_axis, batch_axis = seq_axis % rank, batch_axis % rank
    if int(lengths.shape[0]) != int(x.shape[batch_axis]):
        raise InvalidArgumentError(f"reverse_sequence: seq_lengths has {int(lengths.shape[0])} "
                                   f"entries; input dimension {batch_axis} (batch_axis) is "
                                   f"{int(x.shape[batch_axis])}")
    return apply(_revseq.op, (x, lengths), {"seq_axis": seq_axis, "batch_axis": batch_axis})


def install(tf):
    """Set this module's public functions on ``tf`` (the top-level namespace)."""
    for name in __all__:
        setattr(tf, name, globals()[name])
    tf.compat.v1.space_to_batch_nd = space_to_batch_nd
    tf.compat.v1.batch_to_space_nd = batch_to_space


__all__ = ["space_to_batch_nd", "space_to_batch", "batch_to_space",
           "required_space_to_batch_paddings", "reverse_sequence"]
