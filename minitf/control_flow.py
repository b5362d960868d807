"""``tf.cond``, ``tf.case``, ``tf.switch_case`` and ``tf.while_loop`` as TF 2 runs them eagerly:
the predicate is read and only the chosen branch (or the needed iterations) run.

Inside ``minitf.function`` the predicate read is recorded as a check on the trace (see
``docs/design.md``), so each call still takes the branch its own values select; gradients flow
through the branch that ran, as in TF.
"""
from .nest import flatten


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``."""
    if true_fn is None or false_fn is None:
        raise TypeError("cond: true_fn and false_fn must both be given (callables)")
    return true_fn() if bool(pred) else false_fn()


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """Run the function of the first true predicate (all must be checked with ``exclusive``);
    ``default()`` when none holds."""
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else \
        list(pred_fn_pairs)
    chosen = [fn for pred, fn in pairs if bool(pred)] if exclusive else None
    if exclusive:
        if len(chosen) > 1:
            raise _invalid(f"case: more than one predicate is true ({len(chosen)} of "
                           f"{len(pairs)}) with exclusive=True")
        fn = chosen[0] if chosen else None
    else:
        fn = next((fn for pred, fn in pairs if bool(pred)), None)
    if fn is None:
        if default is None:
            raise _invalid("case: no predicate is true and no default was given")
        fn = default
    return fn()


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """``branch_fns[branch_index]()``; an index out of range runs ``default`` (the last branch
    when no default is given, as TF does)."""
    fns = dict(branch_fns) if isinstance(branch_fns, dict) else dict(enumerate(branch_fns))
    if not fns:
        raise ValueError("switch_case: branch_fns must not be empty")
    index = int(branch_index)
    fn = fns.get(index)
    if fn is None:
        fn = default if default is not None else fns[max(fns)]
    return fn()


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``; returns the final
    ``loop_vars`` in their structure. A single tensor (not a list/tuple) is passed as one
    argument, as in TF."""
    single = not isinstance(loop_vars, (list, tuple))
    values = [loop_vars] if single else list(loop_vars)
    structure = loop_vars
    iterations = 0
    while maximum_iterations is None or iterations < int(maximum_iterations):
        if not bool(cond(*values)):
            break
        out = body(*values)
        out = [out] if single or not isinstance(out, (list, tuple)) else list(out)
        if len(out) != len(values):
            raise ValueError(f"while_loop: body returned {len(out)} values for "
                             f"{len(values)} loop variables")
        if [len(list(flatten(o))) for o in out] != [len(list(flatten(v))) for v in values]:
            raise ValueError("while_loop: body must return the structure of loop_vars")
        values = out
        iterations += 1
    if single:
        return values[0]
    return list(values) if isinstance(structure, list) else type(structure)(values) \
        if not hasattr(structure, "_fields") else type(structure)(*values)


def _invalid(message):
    from .errors import InvalidArgumentError
    return InvalidArgumentError(message)
