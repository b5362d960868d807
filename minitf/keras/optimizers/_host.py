"""The runtime of the optimizers' host kernels: per-variable work plans (views prepared once,
split over two threads on numpy), a 0-d Variable mirrored on the host, numpy error-state
silencing and a guard that keeps user callables out of a function trace."""
import contextlib
import operator
import os

from ... import backend as B
from ... import openblas, thread_pool
from ...tensor import Variable

# Splitting pays from ~300k elements: parking and restarting OpenBLAS's workers costs ~80 us
# per step (measured: MLPs of 269k / 453k / 670k parameters, -20 / +74 / +118 us per step).
# A fused native update (minitf.native) is cheap enough that it pays only from ~1M elements
# (measured: 670k / 1.9M / 5.8M parameters, -12 / +90 / +468 us per step).
_PARALLEL_MIN = int(os.environ.get("MINITF_OPTIMIZER_PARALLEL_MIN", 5 << 16))
_PARALLEL_MIN_FUSED = int(os.environ.get("MINITF_OPTIMIZER_PARALLEL_MIN_FUSED", 1 << 20))
_SPLIT_MIN = 1 << 16
_POOL = None


def pool():
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor
        _POOL = ThreadPoolExecutor(max_workers=1,
                                   thread_name_prefix=openblas.THREAD_PREFIX + "optimizer")
    return _POOL


def wants_threads(opt):
    """``opt.parallel``, or when it is None (the default): numpy whose BLAS workers can be
    parked (a spinning worker would otherwise hold the second core)."""
    if opt.parallel is not None:
        return bool(opt.parallel)
    return B.get_backend() == "numpy" and openblas.available()


def _forget_pool():
    # A forked child has no worker thread: start a fresh pool there instead of waiting forever.
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def quiet():
    """Silence numpy's floating-point warnings: inf/NaN in an update is data, as in TF."""
    errstate = getattr(B.xp, "errstate", None)
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


class HostScalar(Variable):
    """A 0-d non-trainable Variable mirrored by a Python number.

    Host kernels read ``_host`` (no device sync on cupy) and write with ``_set``; ``assign*``
    from user code keeps the mirror in step.
    """
    __slots__ = ("_host",)

    def __init__(self, value, dtype, name):
        super().__init__(value, trainable=False, name=name, dtype=dtype)
        self._host = self._value.item() if B.get_backend() == "numpy" else B.scalar(self._value)

    def _set(self, value):
        value = self._value.dtype.type(value)
        self._value.fill(value)
        self._host = value.item()

    def _resync(self):
        self._host = B.scalar(self._value)
        return self

    def assign(self, value, read_value=True):
        super().assign(value)
        return self._resync()

    def assign_add(self, delta, read_value=True):
        super().assign_add(delta)
        return self._resync()

    def assign_sub(self, delta, read_value=True):
        super().assign_sub(delta)
        return self._resync()


FUSE_MAX = 1 << 15


class Arena:
    """Contiguous slot storage for the small variables of one param group created together,
    so one step updates all their slots with a few calls on flat arrays instead of a dozen
    calls per variable (small models are bound by per-call overhead)."""
    __slots__ = ("entries", "group", "flat", "gflat", "offsets", "native")

    def __init__(self, entries, group, slot_inits, dtype):
        xp = B.xp
        self.entries = entries
        self.group = group
        self.offsets = []
        n = 0
        for e in entries:
            self.offsets.append((n, n + e.w.size))
            n += e.w.size
        self.flat = {name: xp.full(n, init, dtype=dtype) for name, init in slot_inits}
        self.gflat = xp.empty(n, dtype=dtype)
        self.native = None      # the optimizer's one-call native update, False where none

    def view(self, flat, k):
        a, b = self.offsets[k]
        return flat[a:b].reshape(self.entries[k].w.shape)


class ArenaItems(list):
    """The per-variable views of an arena in a plan (a list of ``(index, w, gradient view,
    scratch view, slot views)``), with ``gradients(gs)``: the step's gradients in the arena's
    order, and ``decays(decay)``: each variable's weight-decay factor."""
    __slots__ = ("gradients", "_use_wd", "_decays")

    def __init__(self, items, members, use_wd):
        super().__init__(items)
        self.gradients = operator.itemgetter(*members) if len(members) > 1 else (
            lambda gs, i=members[0]: (gs[i],))
        self._use_wd = tuple(use_wd)
        self._decays = (None, None)

    def decays(self, decay):
        if decay != self._decays[0]:
            self._decays = (decay, tuple(decay if u else 1.0 for u in self._use_wd))
        return self._decays[1]


class Plan:
    """The work for one set of variables, prepared once: chunks of views, split between two
    workers for large models on numpy. A chunk is ``(index, slice, w, slots, scratch)`` for a
    whole variable (slice None) or a flat half of a large one, or ``(None, items, arena,
    slots, scratch)`` for the small variables of an arena, updated together."""
    __slots__ = ("entries", "groups", "work", "takeover", "version", "parallel", "split",
                 "native", "_decays", "constrained")

    def __init__(self, opt, entries):
        self.entries = entries
        # a variable's constraint is fixed when it is made (Variable / add_weight)
        self.constrained = [e for e in entries if getattr(e.var, "_constraint", None) is not None]
        self.native = None      # the optimizer's one-call native update, False where none
        self._decays = (None, None)
        self.groups = sorted({e.group for e in entries})
        self.version = opt._version
        self.parallel = opt.parallel
        total = sum(e.w.size for e in entries)
        fuses = opt._fuses()
        least = _PARALLEL_MIN_FUSED if fuses else _PARALLEL_MIN
        # With minitf's thread pool the fused native update splits over it by itself.
        threaded = (wants_threads(opt) and B.get_backend() == "numpy" and total >= least
                    and (os.cpu_count() or 1) > 1
                    and not (fuses and opt.parallel is None and thread_pool.active()))
        chunks = []     # (size, dtype, builder(scratch) -> chunk)
        arena_chunks = []
        split = set()
        position = {id(e): i for i, e in enumerate(entries)}
        fused = set()
        for arena in {id(e.arena): e.arena for e in entries if e.arena is not None}.values():
            members = [position.get(id(e)) for e in arena.entries]
            if None in members or any(e.arena is not arena for e in arena.entries):
                continue    # only part of the arena is here: update its variables one by one
            fused.update(members)
            arena_chunks.append((arena.gflat.size, arena.gflat.dtype,
                           lambda t, arena=arena, members=members: (
                               None, ArenaItems(
                                   [(i, entries[i].w, arena.view(arena.gflat, k),
                                     arena.view(t, k), {name: arena.view(f, k) for name, f
                                                        in arena.flat.items()})
                                    for k, i in enumerate(members)],
                                   members, [entries[i].use_wd for i in members]),
                               arena, arena.flat, t)))
        for i, e in enumerate(entries):
            if i in fused:
                continue
            n = e.w.size
            if not (threaded and n >= _SPLIT_MIN and e.w.flags.c_contiguous
                    and all(a.flags.c_contiguous for a in e.slots.values())):
                chunks.append((n, e.w.dtype, lambda t, i=i, e=e: (
                    i, None, e.w, dict(e.slots), t.reshape(e.w.shape))))
                continue
            split.add(i)
            wf = e.w.reshape(-1)
            sf = {name: a.reshape(-1) for name, a in e.slots.items()}
            for sl in (slice(0, n // 2), slice(n // 2, n)):
                chunks.append((sl.stop - sl.start, e.w.dtype, lambda t, i=i, sl=sl, wf=wf, sf=sf: (
                    i, sl, wf[sl], {name: a[sl] for name, a in sf.items()}, t)))
        # The calling thread starts with the arenas' many small calls, while the helper wakes up.
        lists = (list(arena_chunks), [])
        if threaded:
            loads = [sum(c[0] for c in arena_chunks), 0]
            for c in sorted(chunks, key=lambda c: -c[0]):
                k = 0 if loads[0] <= loads[1] else 1
                lists[k].append(c)
                loads[k] += c[0]
        else:
            lists[0].extend(chunks)
        # Chunks of one worker run one after the other: they share its scratch buffer.
        self.work = tuple([build(opt._scratch(worker, dtype, n)[:n]) for n, dtype, build in lst]
                          for worker, lst in enumerate(lists))
        # The helper's chunks again on the caller's scratch: on a busy machine the caller takes
        # over those the helper has not started when its own are done.
        self.takeover = [build(opt._scratch(0, dtype, n)[:n]) for n, dtype, build in lists[1]]
        self.split = tuple(sorted(split))

    def decays(self, decay):
        """Each variable's weight-decay factor: ``decay``, or 1.0 where it is excluded."""
        if decay != self._decays[0]:
            self._decays = (decay, tuple(decay if e.use_wd else 1.0 for e in self.entries))
        return self._decays[1]


def sumsq(g):
    """Sum of squares as a 0-d backend value (float32 or wider accumulation)."""
    flat = g.reshape(-1)
    if flat.dtype.itemsize < 4:
        flat = flat.astype("float32")
    return B.xp.vdot(flat, flat)
