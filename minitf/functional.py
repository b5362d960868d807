"""``map_fn`` and ``vectorized_map``: apply a function to each slice of a tensor (or nest of
tensors) along the first axis and stack the results.

Both run the function once per slice, as Python; inside a ``minitf.function`` each call is
traced like any other code. ``vectorized_map`` gives the same results as TF's (which vectorises
the function instead of looping).
"""
from .nest import flatten, pack_sequence_as
from .ops.array_ops import stack, unstack
from .ops.convert import convert_to_tensor


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """``stack([fn(e) for e in elems])`` over the first axis; ``elems`` may be a nest of tensors
    with the same first dimension, and ``fn`` may return a nest."""
    flat = [convert_to_tensor(e) for e in flatten(elems)]
    if not flat:
        raise ValueError("map_fn: elems must contain at least one tensor")
    sizes = {int(e.shape[0]) if e.ndim else None for e in flat}
    if None in sizes or len(sizes) != 1:
        raise ValueError(f"map_fn: every tensor in elems needs the same first dimension, got "
                         f"shapes {[tuple(e.shape) for e in flat]}")
    n = sizes.pop()
    if n == 0:
        raise ValueError("map_fn: elems have a first dimension of 0; the shape of fn's result "
                         "is unknown without calling it")
    columns = [unstack(e) for e in flat]
    results = [fn(pack_sequence_as(elems, [c[i] for c in columns])) for i in range(n)]
    first = results[0]
    flat_results = [list(flatten(r)) for r in results]
    stacked = [stack([convert_to_tensor(r[k]) for r in flat_results])
               for k in range(len(flat_results[0]))]
    return pack_sequence_as(first, stacked)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """TF's ``vectorized_map``: the same values as ``map_fn(fn, elems)``."""
    return map_fn(fn, elems)

