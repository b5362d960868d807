"""Replaying a traced function as CUDA graphs (cupy backend only; optional).

A small model's training step is launch-bound on a GPU: hundreds of tiny kernels, each costing
microseconds of Python and driver time. A traced plan (``minitf.function``) already fixes every
step and most buffers, so its op steps can be captured once with cupy's stream capture and
replayed as graphs: one launch per run of consecutive op steps. Host steps (optimizer updates,
metrics: Python code whose scalars change every call, such as Adam's bias correction) are not
captured; they run between the graphs, on the same stream.

How a replay works: the first call of a plan runs normally (kernels compile, the memory pool
warms up). The second captures: arguments are copied into fixed input buffers, every op step is
recorded, and every array made during capture comes from a memory pool of the replay's own,
kept as long as the graphs (they refer to that memory: a temporary freed during capture must
never be handed to an array outside the graphs). Each later call copies the arguments in, launches the graphs and host steps in order,
and copies the outputs out. Plans that draw random numbers are not captured (a captured draw
would repeat the same numbers); anything failing during capture (an op that reads a value back
to the host) makes the plan fall back to ordinary replay for good.

``MINITF_CUDA_GRAPHS=0`` turns this off. Nothing here runs on numpy or strict.
"""
import logging
import os

from . import backend as B

logger = logging.getLogger("minitf")

__all__ = ["enabled", "replayer", "GraphReplay"]


def enabled():
    """Whether traced plans are replayed as CUDA graphs: cupy backend, not turned off."""
    return B.get_backend() == "cupy" and os.environ.get("MINITF_CUDA_GRAPHS", "1") != "0"


def _random_kernels():
    from .ops import random_ops
    return {random_ops._normal_forward, random_ops._uniform_forward,
            random_ops._bernoulli_forward}


def capturable(plan):
    """Whether a plan can be captured: it has op steps and none of them draws random numbers."""
    from .function import _HOST
    random = _random_kernels()
    ops = [fn for mode, fn, *_ in plan.steps if mode != _HOST]
    return bool(ops) and not any(getattr(fn, "__func__", fn) in random for fn in ops)


def replayer(plan):
    """The graph replay for ``plan`` (``_Plan.graph_replay``), or None where it does not
    apply."""
    if not enabled() or not capturable(plan):
        return None
    return GraphReplay(plan)


class GraphReplay:
    """Runs one plan as captured CUDA graphs (see module doc)."""

    def __init__(self, plan):
        self.plan = plan
        self.calls = 0
        self.failed = False
        self.segments = None      # [("graph", cupy Graph) | ("host", fn, input slots)]
        self.values = None        # the captured value table, kept alive with the graphs
        self.inputs = None        # fixed buffers the arguments are copied into

    def __call__(self, args):
        plan = self.plan
        self.calls += 1
        if self.failed or self.calls == 1:
            return plan._run(args, plan.steps)
        if self.segments is None:
            try:
                self._capture(args)
            except Exception as exc:   # noqa: BLE001 - any capture failure: ordinary replay
                logger.info("minitf: CUDA graph capture failed (%s); replaying without graphs",
                            exc)
                self.failed, self.segments, self.values = True, None, None
                return plan._run(args, plan.steps)
        return self._launch(args)

    def _capture(self, args):
        cupy = B.xp     # enabled(): the cupy module
        from .function import _BUFFER, _HOST, _PLAIN
        plan = self.plan
        self.stream = cupy.cuda.Stream(non_blocking=True)
        v = list(plan.table)
        self.inputs = []
        for slot, arg in zip(plan.input_slots, args):
            buf = B.xp.array(_value(arg), copy=True)
            v[slot] = buf
            self.inputs.append(buf)
        segments = []
        capturing = False
        self.pool = cupy.cuda.MemoryPool()
        with self.stream, cupy.cuda.using_allocator(self.pool.malloc):
            try:
                for mode, fn, ins, attrs, out, target, _ in plan.steps:
                    if mode == _HOST:
                        if capturing:
                            segments.append(("graph", self.stream.end_capture()))
                            capturing = False
                        segments.append(("host", fn, ins))
                        continue
                    if not capturing:
                        self.stream.begin_capture()
                        capturing = True
                    if mode == _PLAIN:
                        v[out] = fn(*[v[i] for i in ins], **attrs)
                    elif mode == _BUFFER:
                        v[out] = fn(plan.buffers[target], *[v[i] for i in ins], **attrs)
                    else:
                        v[out] = fn(v[target], *[v[i] for i in ins], **attrs)
                if capturing:
                    segments.append(("graph", self.stream.end_capture()))
                    capturing = False
            finally:
                if capturing:    # leave the stream usable after a failure
                    try:
                        self.stream.end_capture()
                    except Exception:   # noqa: BLE001
                        pass
        self.segments, self.values = segments, v

    def _launch(self, args):
        from .function import pack_sequence_as
        from .tensor import Tensor
        plan, v = self.plan, self.values
        # The replay's stream does not wait for the caller's by itself (it is non-blocking):
        # order it after the work that made the arguments, and the caller's after the replay.
        caller = B.xp.cuda.get_current_stream()
        self.stream.wait_event(caller.record())
        with self.stream:
            for buf, arg in zip(self.inputs, args):
                B.xp.copyto(buf, _value(arg))
            for segment in self.segments:
                if segment[0] == "graph":
                    segment[1].launch(self.stream)
                else:
                    _, fn, ins = segment
                    fn(*[v[i] for i in ins])
            leaves = [ref if kind == "py" else Tensor(v[ref].copy())
                      for kind, ref in plan.out_refs]
        caller.wait_event(self.stream.record())
        return pack_sequence_as(plan.structure, leaves)


def _value(arg):
    from .tensor import Tensor
    return arg._value if isinstance(arg, Tensor) else B.xp.asarray(arg)
