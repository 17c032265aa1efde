"""Imported by a worker ahead of its turn (the cuda backend's preload,
CALIBER_PRELOAD), so that the request it will serve does not pay for it:
creates the CUDA context of the one visible device under the run's device
lock (shared: never while a row is timed) and, under the same lock, runs
one tiny kernel and captures and replays one tiny CUDA graph (what a first
timed row would otherwise pay for: torch's lazy kernel loading and its graph
machinery), then initialises NVML (the
clocks of the timing and device_setup plugins) and Triton's driver (its
compiled helper comes from the cell's warm cache), and last starts the
profiler (_kernel_time.prepare_ahead: CUPTI's start-up, seconds of host
work that the first timed session of a round would otherwise pay before
profiling its rows), outside the lock, as it launches nothing. Importing it fails, as
torch does, where no GPU is visible; the session then says so on stderr and
the request fails on its own."""

from . import _gpu_lock, _kernel_time, _nvml


def _init():
    import torch

    with _gpu_lock.shared():
        torch.cuda.init()
        x = torch.zeros(1, device="cuda")
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            x.add_(1)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                x.add_(1)
            graph.replay()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        del graph
    _nvml.handle(_nvml.device_uuid(torch.cuda.get_device_properties(0)))
    try:
        from triton.runtime import driver

        driver.active.get_current_device()
    except Exception:  # a Triton without this driver API: its first launch initialises it instead
        pass
    _kernel_time.prepare_ahead(torch)


_init()
