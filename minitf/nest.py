"""Flattening and rebuilding nests (lists, tuples, namedtuples, dicts) of tensors, as ``tf.nest``
does. Dicts are visited in sorted key order and rebuilt in their own key order."""


def is_nested(seq):
    """True for the containers a nest descends into: lists, tuples (namedtuples) and dicts."""
    return isinstance(seq, (list, tuple, dict))


def flatten(structure, expand_composites=False):
    """The leaves of a nest as a list, in order; dicts are visited in sorted key order, as in TF.
    A non-nested value is its own single leaf: ``flatten(None) == [None]``."""
    leaves = []
    _flatten_into(structure, leaves)
    return leaves


def _flatten_into(structure, leaves):
    if isinstance(structure, dict):
        for key in sorted(structure):
            _flatten_into(structure[key], leaves)
    elif isinstance(structure, (list, tuple)):
        for item in structure:
            _flatten_into(item, leaves)
    else:
        leaves.append(structure)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raise ValueError unless the two nests have the same structure (leaves may differ).

    With ``check_types`` the sequence types must match too (TypeError otherwise; a list and a
    tuple differ, namedtuples of the same name and fields match), and dicts the same keys.
    """
    if is_nested(nest1) != is_nested(nest2):
        raise ValueError(f"The two structures don't have the same nested structure: "
                         f"{nest1!r:.100} and {nest2!r:.100}")
    if not is_nested(nest1):
        return
    if check_types:
        if not _same_type(nest1, nest2):
            raise TypeError(f"The two structures don't have the same sequence type: "
                            f"{type(nest1).__name__} {nest1!r:.100} and "
                            f"{type(nest2).__name__} {nest2!r:.100}")
        if isinstance(nest1, dict) and set(nest1) != set(nest2):
            raise ValueError(f"The two dictionaries don't have the same set of keys: "
                             f"{sorted(nest1)} and {sorted(nest2)}")
    if len(nest1) != len(nest2):
        raise ValueError(f"The two structures don't have the same number of elements: "
                         f"{nest1!r:.100} has {len(nest1)}, {nest2!r:.100} has {len(nest2)}")
    for a, b in zip(_children(nest1), _children(nest2)):
        assert_same_structure(a, b, check_types)


def _same_type(a, b):
    if type(a) is type(b) or (isinstance(a, list) and isinstance(b, list)) or (
            isinstance(a, dict) and isinstance(b, dict)):
        return True
    fields = getattr(a, "_fields", None)  # namedtuples: same name and fields count as one type
    return (fields is not None and fields == getattr(b, "_fields", None)
            and type(a).__name__ == type(b).__name__)


def _children(structure):
    if isinstance(structure, dict):
        return [structure[key] for key in sorted(structure)]
    return list(structure)


def pack_sequence_as(structure, flat):
    """Rebuild ``structure`` with the leaves taken in order from ``flat``."""
    it = iter(flat)
    result = _build(structure, it)
    for extra in it:
        raise ValueError(f"pack_sequence_as: more leaves than the structure holds "
                         f"(first extra: {extra!r:.60})")
    return result


def _build(s, it):
    # A module-level function, not a closure: a self-referencing closure would be a reference
    # cycle keeping the leaves (gradients) alive until the garbage collector runs.
    if isinstance(s, dict):
        built = {k: _build(s[k], it) for k in sorted(s)}
        if type(s) is dict:
            return {k: built[k] for k in s}
        return type(s)((k, built[k]) for k in s)
    if isinstance(s, (list, tuple)):
        items = [_build(x, it) for x in s]
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*items)
        return type(s)(items)
    try:
        return next(it)
    except StopIteration:
        raise ValueError("pack_sequence_as: fewer leaves than the structure holds") from None


def map_structure(fn, structure):
    """Apply ``fn`` to every leaf of ``structure``, rebuilding the same structure."""
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])
