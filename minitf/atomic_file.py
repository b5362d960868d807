"""Write a file so that it is either whole or absent: into a temporary sibling, fsync, rename.

    with atomic_path("model.weights.h5", suffix=".weights.h5") as tmp:
        with h5py.File(tmp, "w") as f:
            ...

On any exception (or a kill) before the rename the target is untouched; the temporary file is
removed when Python gets the chance.
"""
import contextlib
import os
import tempfile


def fsync_dir(directory):
    """Flush a directory entry (a rename) to disk where the platform allows it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path, prefix=".tmp-", suffix=".tmp"):
    """Yield a temporary path beside ``path``; when the block ends without an exception, its
    contents are flushed to disk and renamed to ``path``."""
    path = os.path.abspath(os.fspath(path))
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    os.close(fd)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(directory)
