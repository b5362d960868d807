"""A second scratch buffer for optimizer kernels whose update needs two temporaries."""
import threading

from ... import backend as B


def second_scratch(opt, t):
    """A buffer shaped like the kernel scratch ``t``, owned by the calling thread (the two
    update workers run kernels at the same time) and reused from step to step."""
    key = ("second", threading.get_ident(), t.dtype.str)
    buf = opt._scratch_bufs.get(key)
    if buf is None or buf.size < t.size:
        buf = opt._scratch_bufs[key] = B.xp.empty(t.size, dtype=t.dtype)
    return buf[:t.size].reshape(t.shape)
