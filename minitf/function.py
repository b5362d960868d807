"""``minitf.function``: trace a Python function once per input signature, then replay the
backend kernels it ran, with no Tensor objects, tape bookkeeping or per-op dispatch.

Tracing runs the function for real on the first call's arguments (so the first call returns
the true result) while a tracer notes every kernel: registered ops (forward and, because rules run
in the TENSOR namespace while tracing, the backward pass too), host kernels (optimizer steps,
metric updates) and variable assignments. The plan is a flat list of steps over a table of array
slots; constants and variable buffers sit in the table permanently (variables are updated in
place, so their buffers keep their identity). Dead steps are dropped and each temporary slot is
released right after its last use. Ops with an ``out_forward`` kernel write into buffers planned
once per trace (element-wise ops in place on inputs that die there), so a replay barely
allocates; see ``_plan_memory`` and docs/design.md.

Python side effects (printing, appending to a list, reading a global) run at trace time only. A
Python decision on a traced tensor's value (``if loss > 0``, ``float(t)``, ``t.numpy()``) cannot be
replayed: it raises ``TraceError`` naming the line, during tracing.

    @minitf.function
    def train_step(x, y):
        with minitf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
"""
import functools
import logging
import threading


from . import backend as B
from . import replay
from ._state import state
from .nest import flatten, pack_sequence_as
from .ops.registry import caller_line
from .tensor import Tensor, Variable

logger = logging.getLogger("minitf")

RETRACE_WARNING_THRESHOLD = 5


class TraceError(TypeError):
    """Raised when a traced function does something a replay could not reproduce."""


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_relax_shapes=None, **unused):
    """Compile ``func`` by tracing (TF's ``tf.function``); usable as ``@function`` or
    ``function(fn)``. One trace per input signature: tensors and arrays by shape and dtype,
    other Python values by value (or identity when unhashable)."""
    if func is None:
        return lambda f: Function(f)
    return Function(func)


class Function:
    """A traced callable; see ``function``."""

    def __init__(self, func):
        self._func = func
        self._plans = {}
        self.trace_count = 0
        functools.update_wrapper(self, func)

    def __get__(self, instance, owner):
        if instance is None:
            return self
        # One Function per bound instance, so each object keeps its own traces.
        bound = instance.__dict__.get(self._bound_name())
        if bound is None:
            bound = Function(self._func.__get__(instance, owner))
            try:
                instance.__dict__[self._bound_name()] = bound
            except (AttributeError, TypeError):
                pass
        return bound

    def _bound_name(self):
        return f"__minitf_function_{self._func.__name__}_{id(self)}"

    def __call__(self, *args, **kwargs):
        if state.tracer is not None:  # called while another function traces: inline it
            return self._func(*args, **kwargs)
        leaves = list(flatten([list(args), kwargs]))
        key = _signature(leaves)
        plan = self._plans.get(key)
        if plan is None:
            return self._trace(key, args, kwargs, leaves)
        return plan.run([leaves[i] for i in plan.arg_positions])

    def _trace(self, key, args, kwargs, leaves):
        self.trace_count += 1
        if self.trace_count > RETRACE_WARNING_THRESHOLD:
            logger.warning("%d traces of function %s: tracing is expensive; retracing comes "
                           "from new input shapes/dtypes or new Python argument values (pass "
                           "tensors instead of Python numbers that change every call)",
                           self.trace_count, getattr(self._func, "__qualname__", self._func))
        tracer = _Tracer()
        positions, placeholders = [], []
        new_leaves = list(leaves)
        for i, leaf in enumerate(leaves):
            if _is_tensor_arg(leaf):
                t = _placeholder(leaf)
                new_leaves[i] = t
                positions.append(i)
                placeholders.append(t)
        structure = [list(args), kwargs]
        new_args, new_kwargs = pack_sequence_as(structure, new_leaves)
        for t in placeholders:
            tracer.add_input(t)
        if state.tracer is not None:
            raise RuntimeError("nested traces are not supported")
        state.tracer = tracer
        state.refresh()
        try:
            result = self._func(*new_args, **new_kwargs)
        finally:
            state.tracer = None
            state.refresh()
        plan = tracer.build(result, positions)
        self._plans[key] = plan
        return pack_sequence_as(result, [Tensor(leaf._value.copy()) if isinstance(leaf, Variable)
                                         else leaf for leaf in flatten(result)])

    def experimental_get_tracing_count(self):
        return self.trace_count

    def resident_bytes(self):
        """Bytes of the buffers this function's traces keep between calls (the planned
        intermediates every replay writes into)."""
        return sum(plan.resident_bytes for plan in self._plans.values())


def _is_tensor_arg(value):
    """Tensors and arrays become placeholders; Variables are captured by identity instead."""
    if isinstance(value, Variable):
        return False
    return isinstance(value, Tensor) or B.is_array(value)


def _placeholder(value):
    if isinstance(value, Tensor):
        return Tensor(value._value)
    return Tensor(B.xp.asarray(value))


def _signature(leaves):
    parts = []
    for leaf in leaves:
        if isinstance(leaf, Variable):
            parts.append(("var", id(leaf)))
        elif isinstance(leaf, Tensor):
            parts.append(("t", leaf._value.shape, leaf._value.dtype))
        elif B.is_array(leaf):
            parts.append(("t", leaf.shape, leaf.dtype))
        else:
            try:
                hash(leaf)
                parts.append(("py", type(leaf), leaf))
            except TypeError:
                parts.append(("obj", id(leaf)))
    return tuple(parts)


class _Tracer:
    """Collects the steps of one trace (see the module docstring)."""

    def __init__(self):
        self.slot_of = {}         # tensor id -> slot index, for traced values
        self.values = []          # slot index -> array at trace time (constants stay)
        self.kind = []            # slot index -> "input" | "temp" | "const" | "var"
        self.input_slots = []
        self.steps = []           # (kind, fn, input slots, attrs, output slot or None)
        self._keep = []           # objects whose ids must stay unique during the trace
        self._const_slots = {}

    # --- slots ---------------------------------------------------------------------------------
    def _new_slot(self, array, kind):
        self.values.append(array)
        self.kind.append(kind)
        return len(self.values) - 1

    def add_input(self, t):
        slot = self._new_slot(t._value, "input")
        self.slot_of[t._id] = slot
        self.input_slots.append(slot)
        self._keep.append(t)

    def _ref(self, t):
        slot = self.slot_of.get(t._id)
        if slot is not None:
            return slot
        # A variable or a constant made outside the traced computation: keep its array.
        kind = "var" if isinstance(t, Variable) else "const"
        slot = self._new_slot(t._value, kind)
        self.slot_of[t._id] = slot
        self._keep.append(t)
        return slot

    def is_symbolic(self, t):
        return t._id in self.slot_of and self.kind[self.slot_of[t._id]] in ("input", "temp", "var") \
            or isinstance(t, Variable)

    def untraceable(self, what):
        raise TraceError(f"minitf.function cannot trace {what}: the value of a traced tensor is "
                         f"not known when the function is replayed. Compute it outside the "
                         f"function, or return the tensor and inspect it after the call "
                         f"(at {caller_line()})")

    # --- hooks called by the runtime -----------------------------------------------------------
    def record_op(self, op, inputs, attrs, y):
        ins = tuple(self._ref(t) for t in inputs)
        out = self._new_slot(y._value, "temp")
        self.slot_of[y._id] = out
        self._keep.append(y)
        self.steps.append(("op", op, ins, attrs, out))
        if not ins or any(self.kind[i] != "const" for i in ins):
            return
        # Constant folding: every input is a constant, so the trace-time value is the value.
        self.kind[out] = "const"
        self.steps.pop()

    def record_host(self, fn, tensors):
        ins = tuple(self._ref(t) for t in tensors)
        self.steps.append(("host", fn, ins, None, None))

    def record_assign(self, var, value, kind):
        target = self._ref(var)
        src = self._ref(value)
        self.steps.append(("assign", kind, (target, src), None, None))

    # --- plan ----------------------------------------------------------------------------------
    def build(self, result, arg_positions):
        leaves = list(flatten(result))
        out_refs = []
        for leaf in leaves:
            if isinstance(leaf, Variable):  # a snapshot, as eager code reading it would get
                out_refs.append(("copy", self._ref(leaf)))
            elif isinstance(leaf, Tensor):
                out_refs.append(("slot", self._ref(leaf)))
            else:
                out_refs.append(("py", leaf))
        return _Plan(self, result, out_refs, arg_positions)


_XP_ASSIGN = {"assign": lambda dst, src: B.xp.copyto(dst, src),
              "assign_add": lambda dst, src: B.xp.add(dst, src, out=dst),
              "assign_sub": lambda dst, src: B.xp.subtract(dst, src, out=dst)}


class _Plan:
    """The replayable program of one trace."""

    def __init__(self, tracer, result, out_refs, arg_positions):
        self.arg_positions = arg_positions
        self.structure = result
        self.input_slots = tracer.input_slots
        self.out_refs = out_refs
        kinds = tracer.kind
        # Dead-step elimination: keep steps with effects and what they (or outputs) need.
        needed = {ref for kind, ref in out_refs if kind != "py"}
        kept = []
        for step in reversed(tracer.steps):
            kind, fn, ins, attrs, out = step
            if kind == "op" and out not in needed:
                continue
            kept.append(step)
            needed.update(ins)
        kept.reverse()
        # Release each temporary right after its last use (outputs live to the end).
        last_use = {}
        for index, (kind, fn, ins, attrs, out) in enumerate(kept):
            for i in ins:
                if kinds[i] in ("temp", "input"):
                    last_use[i] = index
        for kind, ref in out_refs:
            if kind != "py":
                last_use.pop(ref, None)
        frees = [[] for _ in kept]
        for slot, index in last_use.items():
            frees[index].append(slot)
        writes = _plan_memory(kept, tracer.values, kinds, out_refs)
        sizes, views = writes.pop(None)
        blocks = [B.xp.empty(n, dtype="uint8") for n in sizes]
        # One fixed view per planned write: arrays of different shapes share a block when their
        # lifetimes do not overlap.
        self.buffers = [blocks[bid][:nbytes].view(dtype).reshape(shape)
                        for bid, nbytes, shape, dtype in views]
        self.steps = []
        self.unplanned_steps = []   # the same program without planned memory (see ``run``)
        for index, ((kind, fn, ins, attrs, out), free) in enumerate(zip(kept, frees)):
            mode, target = writes.get(index, (_PLAIN, None))
            attrs = attrs or _NO_ATTRS
            if kind == "op":
                self.steps.append((mode, fn.out_forward if mode != _PLAIN else fn.forward, ins,
                                   attrs, out, target, tuple(free)))
                self.unplanned_steps.append((_PLAIN, fn.forward, ins, attrs, out, None,
                                             tuple(free)))
            else:
                fn = _XP_ASSIGN[fn] if kind == "assign" else fn
                self.steps.append((_HOST, fn, ins, attrs, out, None, tuple(free)))
                self.unplanned_steps.append(self.steps[-1])
        self.table = [v if kinds[i] in ("const", "var") else None for i, v in enumerate(tracer.values)]
        self.n_steps = len(self.steps)
        self.resident_bytes = sum(b.nbytes for b in blocks)
        self._in_use = threading.Lock()
        self._replayed = False
        self._straight_line = replay.compile_steps(self.steps, self.table, self.buffers,
                                                   self.input_slots, out_refs)

    def run(self, args):
        # The planned buffers serve one run at a time: a concurrent or re-entrant call (another
        # thread, a host kernel calling the function) runs the unplanned program instead.
        if not self._in_use.acquire(blocking=False):
            return self._run(args, self.unplanned_steps)
        try:
            if not self._replayed:
                self._replayed = True
                replay.release_trace_memory()
            return self._pack(self._straight_line(args))
        finally:
            self._in_use.release()

    def _run(self, args, steps):
        v = list(self.table)
        buffers = self.buffers
        for slot, arg in zip(self.input_slots, args):
            v[slot] = arg._value if isinstance(arg, Tensor) else B.xp.asarray(arg)
        for mode, fn, ins, attrs, out, target, free in steps:
            if mode == _PLAIN:
                v[out] = fn(*[v[i] for i in ins], **attrs)
            elif mode == _HOST:
                fn(*[v[i] for i in ins])
            elif mode == _BUFFER:
                v[out] = fn(buffers[target], *[v[i] for i in ins], **attrs)
            else:   # _IN_PLACE: into an input whose last use this is
                v[out] = fn(v[target], *[v[i] for i in ins], **attrs)
            for i in free:
                v[i] = None
        return self._pack([ref if kind == "py" else v[ref] if kind == "slot" else v[ref].copy()
                           for kind, ref in self.out_refs])

    def _pack(self, values):
        leaves = [value if kind == "py" else Tensor(value)
                  for (kind, _), value in zip(self.out_refs, values)]
        return pack_sequence_as(self.structure, leaves)


_PLAIN, _HOST, _BUFFER, _IN_PLACE = replay.PLAIN, replay.HOST, replay.BUFFER, replay.IN_PLACE


def _plan_memory(steps, values, kinds, out_refs):
    """Where each op step writes. Returns ``{step index: (mode, target)}`` plus, under the key
    None, ``(sizes, views)``: the bytes of each block, and per ``_BUFFER`` target the
    ``(block, bytes, shape, dtype)`` of the array it writes.

    A step whose op has an ``out_forward`` writes into a buffer allocated once per plan, or,
    for an element-wise op, straight into an input temporary that dies at this step. A buffer
    is handed to a later step once every array that lives in it (the owner and its views) is
    dead; returned values never live in planned buffers (the caller keeps them).
    """
    xp = B.xp
    owner = {}           # slot -> slot whose memory it lives in (itself, or a view's base)
    for kind, op, ins, attrs, out in steps:
        if kind != "op":
            continue
        y = values[out]
        owner[out] = out
        for i in ins:
            x = values[i]
            if _array(x) and _array(y) and xp.may_share_memory(x, y):
                owner[out] = owner.get(i, i)
                break
    last = {}
    for index, (kind, op, ins, attrs, out) in enumerate(steps):
        for i in ins:
            last[owner.get(i, i)] = index
    pinned = {owner.get(ref, ref) for kind, ref in out_refs if kind != "py"}
    for kind, op, ins, attrs, out in steps:
        if kind == "op" and op.identity_cache:   # arrays a kernel cache may know by identity
            pinned.update(owner.get(i, i) for i in ins + (out,))
    sizes = []           # buffer id -> bytes (the most any array placed in it needs)
    spare = []           # ids of buffers nothing lives in now
    active = {}          # buffer id -> the slot that owns it now
    views = []           # (buffer id, bytes, shape, dtype) of each planned write
    writes = {None: (sizes, views)}
    for index, (kind, op, ins, attrs, out) in enumerate(steps):
        if (kind == "op" and op.out_forward is not None and kinds[out] == "temp"
                and owner[out] == out and out not in pinned and _array(values[out])
                and values[out].flags.c_contiguous):
            y = values[out]
            key = (tuple(y.shape), y.dtype)
            donor = None
            if op.elementwise:
                # The last candidate first: relu_grad(g, y) is cheapest in place on y.
                for i in reversed(ins):
                    x = values[i]
                    if (owner.get(i) == i and kinds[i] == "temp" and i not in pinned
                            and last.get(i) == index and _array(x) and x.flags.c_contiguous
                            and (tuple(x.shape), x.dtype) == key):
                        donor = i
                        break
            if donor is not None:
                writes[index] = (_IN_PLACE, donor)
                for bid, slot in active.items():
                    if slot == donor:   # the buffer passes on to the output
                        active[bid] = out
                        break
            else:
                # Best fit among the free buffers; else grow the largest free one; else a new one.
                fits = [b for b in spare if sizes[b] >= y.nbytes]
                if fits:
                    bid = min(fits, key=lambda b: sizes[b])
                elif spare:
                    bid = max(spare, key=lambda b: sizes[b])
                    sizes[bid] = y.nbytes
                else:
                    bid = len(sizes)
                    sizes.append(y.nbytes)
                if bid in spare:
                    spare.remove(bid)
                active[bid] = out
                writes[index] = (_BUFFER, len(views))
                views.append((bid, y.nbytes) + key)
        for bid, slot in list(active.items()):
            if last.get(slot, -1) <= index:   # every array in it is dead after this step
                del active[bid]
                spare.append(bid)
    return writes


def _array(value):
    return B.is_array(value) and value.ndim > 0


_NO_ATTRS = {}
