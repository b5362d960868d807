"""Straight-line replay of a traced plan: the plan's steps written out as one generated Python
function, with every kernel, attribute dict, constant, variable buffer and planned buffer bound
as a global of that function.

The interpreted replay (``function._Plan._run``) pays, per step, a tuple unpack, a branch on
the step's mode, a list for the arguments and a loop over the slots to release. Generated code
does only the kernel call, and releases a slot with ``del`` where the interpreter would have set
it to None, so memory peaks stay the same. The kernels, their order and their arguments are
exactly the interpreter's, so results are bit for bit the same.
"""
from . import backend as B
from .tensor import Tensor

PLAIN, HOST, BUFFER, IN_PLACE = range(4)   # step modes, as in function._Plan


def release_trace_memory():
    """Give the memory the trace freed back to the OS (glibc only; once per plan, at its first
    replay).

    ``backend._keep_freed_host_memory`` keeps freed blocks on the heap so that steps of the same
    size reuse them. A trace runs the step eagerly while keeping every intermediate alive, so
    its peak is far above a replay's, and without a trim the process would hold that peak for
    good (measured on the shipped CNN: 364 MiB resident for the traced step against 178 MiB
    with the trim). Replays then fault in only what they use.
    """
    if not B._allocator_tuned:
        return
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):   # not glibc
        pass


def _to_array(arg):
    return arg._value if isinstance(arg, Tensor) else B.xp.asarray(arg)


def compile_steps(steps, table, buffers, input_slots, out_refs):
    """A function ``run(args) -> list of output values`` (one per ``out_refs`` entry: the slot's
    array, a copy of it for ``"copy"``, or the Python value for ``"py"``).

    ``steps``: ``(mode, fn, input slots, attrs, output slot, target, slots to release)``;
    ``table``: slot -> constant or variable array (None for temporaries and inputs).
    """
    namespace = {"_to_array": _to_array, "__name__": __name__}   # caller_line skips it
    lines = ["def run(args):"]
    step_at_line = {}
    for k, slot in enumerate(input_slots):
        lines.append(f"    s{slot} = _to_array(args[{k}])")
    for slot, value in enumerate(table):
        if value is not None:
            namespace[f"s{slot}"] = value
    for index, (mode, fn, ins, attrs, out, target, free) in enumerate(steps):
        namespace[f"f{index}"] = fn
        args = [f"s{i}" for i in ins]
        if mode == BUFFER:
            namespace[f"b{index}"] = buffers[target]
            args.insert(0, f"b{index}")
        elif mode == IN_PLACE:
            args.insert(0, f"s{target}")
        if attrs:
            namespace[f"a{index}"] = attrs
            args.append(f"**a{index}")
        call = f"f{index}({', '.join(args)})"
        step_at_line[len(lines) + 1] = index
        lines.append(f"    {call}" if mode == HOST else f"    s{out} = {call}")
        if free:
            lines.append(f"    del {', '.join(f's{i}' for i in free)}")
    results = []
    for k, (kind, ref) in enumerate(out_refs):
        if kind == "py":
            namespace[f"p{k}"] = ref
            results.append(f"p{k}")
        else:
            results.append(f"s{ref}.copy()" if kind == "copy" else f"s{ref}")
    lines.append(f"    return [{', '.join(results)}]")
    exec(compile("\n".join(lines), REPLAY_FILE, "exec"), namespace)  # noqa: S102
    run = namespace["run"]
    run.step_at_line = step_at_line
    return run


REPLAY_FILE = "<minitf replay>"


def failed_step(tb, step_at_line):
    """``(step index, the frame's local slots)`` of the replay line a traceback ends in, or
    ``(None, None)`` when the error came from outside the straight-line program."""
    found = (None, None)
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename == REPLAY_FILE:
            found = (step_at_line.get(tb.tb_lineno), frame.f_locals)
        tb = tb.tb_next
    return found


def kernel_error(exc, op_name, arrays):
    """The error eager execution would raise for a kernel that failed in a replay: TypeError
    stays TypeError, value problems (bad indices, a singular matrix...) become
    ``InvalidArgumentError`` naming the op and its inputs."""
    from .ops.registry import InvalidArgumentError
    shapes = " and ".join(f"{tuple(a.shape)} {a.dtype}" for a in arrays if hasattr(a, "shape"))
    message = (f"{op_name}: invalid inputs of shapes {shapes} (in a call of a traced "
               f"function): {exc}")
    if isinstance(exc, TypeError):
        return TypeError(message)
    return InvalidArgumentError(message, op=op_name)
