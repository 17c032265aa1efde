"""The device lock of a run (docs/formats.md, "Worker lifetime").

A worker started ahead of its turn initialises its device while another
worker may be timing a row on it, and on the H200 a process creating its
CUDA context beside a timed one moved that one's samples (bench/RESULTS.md,
"Where the per-process offset comes from"). So CALIBER_GPU_LOCK names a file
of the runner's: a timed row holds it exclusively, a worker initialising
its device ahead of its turn holds it shared. Without the variable (a worker
run by hand, persistent workers) nothing is locked. The file is opened
read-only: flock needs no write access, and a confined worker has none
outside its own folders."""

import contextlib
import fcntl
import os


@contextlib.contextmanager
def _held(kind):
    path = os.environ.get("CALIBER_GPU_LOCK")
    if not path:
        yield
        return
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, kind)
        yield
    finally:
        os.close(fd)


def shared():
    """Held while a worker initialises its device ahead of its turn."""
    return _held(fcntl.LOCK_SH)


def exclusive():
    """Held while a row is timed."""
    return _held(fcntl.LOCK_EX)
