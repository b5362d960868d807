"""``tf.random.split`` and ``tf.random.fold_in``: TF's short names of
``tf.random.experimental.stateless_split`` and ``stateless_fold_in``.

Both derive new shape-[2] seeds from a seed with minitf's stateless generator, so they are
deterministic (the same seed and arguments always give the same seeds) but not TF's numbers.
"""
from .misc_ops import stateless_fold_in, stateless_split

__all__ = ["split", "fold_in"]

split = stateless_split
fold_in = stateless_fold_in


def install(tf):
    """Put ``split``/``fold_in`` in ``tf.random`` and make sure ``tf.random.experimental`` has
    the long names (idempotent)."""
    tf.random.split = split
    tf.random.fold_in = fold_in
    tf.random.experimental.stateless_split = stateless_split
    tf.random.experimental.stateless_fold_in = stateless_fold_in
