"""Imported by a worker ahead of its turn (the cuda backend's preload,
CALIBER_PRELOAD): creates the CUDA context of the one visible device, under
the run's device lock (shared: never while a row is timed), so that the
request the worker will serve does not pay for it. Importing it fails, as
torch does, where no GPU is visible; the session then says so on stderr and
the request fails on its own."""

from . import _gpu_lock


def _init():
    import torch

    with _gpu_lock.shared():
        torch.cuda.init()
        torch.empty(1, device="cuda")
        torch.cuda.synchronize()


_init()
