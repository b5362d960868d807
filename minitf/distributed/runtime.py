"""Process-group state: ``init``, the rank queries, fault handling and start-up checks."""
import hashlib
import os
import sys
import threading
import time
import traceback

from .comm import DistributedError, MPIGroup, SingleProcess, launched_by_mpi

_lock = threading.Lock()
_group = None


def init(comm=None):
    """Join the job's process group (idempotent). Under an MPI launcher this opens
    ``MPI.COMM_WORLD`` (and, with the cupy backend, pins the rank to GPU ``local_rank`` and opens
    NCCL) and installs ``abort_on_exception``; otherwise the group is this one process."""
    global _group
    with _lock:
        if _group is None:
            if comm is not None:
                raise ValueError("init(comm=...): only MPI.COMM_WORLD is supported")
            _group = MPIGroup() if launched_by_mpi() else SingleProcess()
            if _group.size > 1:
                abort_on_exception()
    return _group


def group():
    """The process group (``init()`` on first use)."""
    return _group if _group is not None else init()


def is_initialized():
    return _group is not None


def rank():
    """This process's rank in the job (0 in one process)."""
    return group().rank


def size():
    """Number of processes in the job."""
    return group().size


def local_rank():
    """This process's rank among the processes of its node."""
    return group().local_rank


def local_size():
    """Number of processes on this node."""
    return group().local_size


def is_chief():
    return group().rank == 0


def bucket_bytes():
    from .collectives import DEFAULT_BUCKET_BYTES
    return int(os.environ.get("MINITF_FUSION_BYTES", DEFAULT_BUCKET_BYTES))


def abort_job(exc_type=None, exc=None, tb=None, code=1):
    """Print this rank's error and end every rank of the job (``MPI.COMM_WORLD.Abort``): the
    others may wait in a collective that this rank will never join."""
    if exc_type is not None:
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        sys.stderr.write(f"[rank {rank()}/{size()}] aborting the job: uncaught error\n{text}")
    sys.stdout.flush()
    sys.stderr.flush()
    time.sleep(0.2)  # the launcher forwards this rank's output before Abort tears the job down
    group().abort(code)


def abort_on_exception():
    """Make an uncaught exception on any rank abort the whole job (in the main thread and in
    threads started with ``threading``)."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        if issubclass(exc_type, KeyboardInterrupt) or group().size == 1:
            return previous(exc_type, exc, tb)
        abort_job(exc_type, exc, tb, code=1)

    sys.excepthook = hook
    threading.excepthook = lambda args: hook(args.exc_type, args.exc_value, args.exc_traceback)


def check_same(what, text):
    """Raise ``DistributedError`` unless every rank passes the same ``text`` (compared by
    digest; the message shows rank 0's and the first differing rank's text)."""
    g = group()
    if g.size == 1:
        return
    digest = hashlib.sha256(text.encode()).hexdigest()
    digests = [d.decode() for d in g.allgather_bytes(digest.encode())]
    odd = [r for r, d in enumerate(digests) if d != digests[0]]
    if not odd:
        return
    texts = [t.decode() for t in g.allgather_bytes(text.encode())]
    first, other = texts[0].splitlines(), texts[odd[0]].splitlines()
    line = next((i for i, (a, b) in enumerate(zip(first, other)) if a != b),
                min(len(first), len(other)))
    show = (lambda lines: lines[line] if line < len(lines) else "<end>")
    raise DistributedError(
        f"ranks disagree on {what}: rank {odd[0]} (and {len(odd) - 1} other rank(s)) differs "
        f"from rank 0 at line {line + 1}: rank 0 has {show(first)!r}, rank {odd[0]} has "
        f"{show(other)!r}")


def describe_variables(variables):
    """One line per variable (path, shape, dtype): the text ``check_same`` compares."""
    return "\n".join(f"{getattr(v, 'path', v.name)} {tuple(v.shape)} {v.dtype.name}"
                     for v in variables)


def _reset_for_tests(new_group=None):
    global _group
    _group = new_group
