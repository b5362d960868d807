"""What is listening to op execution: active tapes, forward accumulators, a function trace and
numeric checks. Ops consult ``state.active`` (one attribute read) and call ``state.record`` only
when something listens, which keeps eager code outside any tape at numpy speed.

This module sits below the ops: GradientTape and friends register themselves here.
"""


import weakref


class _State:
    __slots__ = ("tapes", "accumulators", "tracer", "check_numerics", "active", "_entries",
                 "holding_tapes")

    def __init__(self):
        self.tapes = []          # recording GradientTapes, outermost first
        # every tape entered and not yet collected: one may still hold records that read a
        # variable (a persistent tape after its context), see ``before_variable_write``
        self.holding_tapes = weakref.WeakSet()
        self.accumulators = []   # ForwardAccumulators
        self.tracer = None       # the function trace being built, if any
        self.check_numerics = False
        self.active = False
        self._entries = 0

    def next_order(self):
        """A number increasing with each tape/accumulator entry: tells which one is outside."""
        self._entries += 1
        return self._entries

    def refresh(self):
        self.active = bool(self.tapes or self.accumulators or self.tracer is not None
                           or self.check_numerics)

    def before_variable_write(self, variable):
        """Called before ``variable`` is written in place (assign, scatter updates)."""
        if self.holding_tapes:
            from .tape import keep_read_values
            keep_read_values(variable)

    def needs_tensor_rules(self, exclude=None):
        """True when gradient rules must run as recorded minitf ops (higher order, tracing)."""
        if self.tracer is not None or self.accumulators:
            return True
        return any(t is not exclude for t in self.tapes)


state = _State()


class PauseRecording:
    """Context in which no tape or accumulator records (a trace still does)."""

    __slots__ = ("_saved",)

    def __enter__(self):
        self._saved = (state.tapes, state.accumulators)
        state.tapes, state.accumulators = [], []
        state.refresh()

    def __exit__(self, *exc):
        state.tapes, state.accumulators = self._saved
        state.refresh()


class NoTrace:
    """Context in which no ``minitf.function`` trace records: user callables (schedules,
    ``py_function`` bodies, constraints) run as plain eager code (tapes still record)."""

    __slots__ = ("_saved",)

    def __enter__(self):
        self._saved = state.tracer
        state.tracer = None
        state.refresh()

    def __exit__(self, *exc):
        state.tracer = self._saved
        state.refresh()
