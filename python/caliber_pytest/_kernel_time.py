"""Per-kernel GPU time of a timed row: one profiled replay of the row, after its
timed samples (docs/formats.md, kernels.jsonl).

timing.measure calls profile_row once a row's samples are written. Only the
first timed session of round a profiles (CALIBER_PHASE a, CALIBER_SESSION 1,
or neither set: a benchmark run by hand): the cell's topology is that
session's IR. The profiler's first session in a process costs seconds
(CUPTI starts; 4-6 s on the H200), which the cuda backend's workers pay
while they wait for their turn (prepare_ahead). The row's
calls are made again, min(n_calls, MAX_CALLS) of them: captured into a fresh
CUDA graph and replayed once when the row was graph-timed, made directly when
it was timed directly. The replay runs under torch.profiler with CUDA
activities only (CUPTI activity records), so each kernel's GPU start and end
are the device's; the timed samples themselves are never taken under it.
The device is rested before the replay as before a timed row (_clocks.pace)
and its SM clock sampled during it: right after a row's timed samples a
dense kernel ran at a clock the power cap had lowered (the H200's G
candidates profiled 3-9 % slower than their timed median), and the replay
must show the kernel at the clocks the timer saw.

Each profiler record is joined to its variant by the launch identity the IR
join uses: Triton's launch_enter_hook gives, in launch order, the function of
every Triton launch (at capture for a graph, at the call for direct calls),
and ir_meta knows which variant each function is. A replay runs its kernels
in that order, so the k-th record bearing a Triton kernel's name is the k-th
launch. A record whose name no Triton launch has is another library's kernel
(torch's own, a copy) and keeps its name with no variant. When the order does
not hold (a record missing, one too many), the row's kernels keep their names
only and the line says why.

Launches made while a row is profiled are not counted in the launch index
(ir_meta asks profiling()): the index is the same with the profiler as
without. Nothing here fails a row: a profiler that cannot run leaves a line
with the error."""

import os
import time

from . import _clocks, _hooks
from ._common import append_line, check_integers, dumps_line

KERNELS_FILE = "kernels.jsonl"
MAX_CALLS = 200  # calls profiled per row at most: enough records, bounded cost

_active = False  # True while a row is being profiled (process-wide: one row at a time)
# Who started the profiler in this process (process-wide by design): None (not
# started), "ahead" (the worker, before its first request: prepare_ahead), or
# "row" (the first row profiled: prepare).
_started = None


def profiling():
    """True while a row is being profiled: its launches are not the benchmark's."""
    return _active


class _Launches:
    """Triton launches in order while attached: (variant or None, kernel name) each."""

    def __init__(self):
        self.seen = []

    def on_launch(self, metadata):
        from . import ir_meta

        fields = metadata.get()
        self.seen.append((ir_meta.variant_of(fields.get("function")), str(fields.get("name"))))


def _triton_runtime():
    """triton.knobs.runtime, or None when this process has no Triton."""
    try:
        from triton import knobs
    except ImportError:
        return None
    return knobs.runtime if hasattr(knobs.runtime, "launch_enter_hook") else None


def _gpu_records(prof):
    """(start_ns, end_ns, name) of every activity the device ran during prof, in start order."""
    out = []
    for e in prof.profiler.kineto_results.events():
        kind = e.device_type()
        if getattr(kind, "name", str(kind).rsplit(".", 1)[-1]) == "CUDA":
            out.append((int(e.start_ns()), int(e.end_ns()), str(e.name())))
    out.sort()
    return out


def prepare(torch, by="row"):
    """Start the profiler in this process once, with an empty session of CUDA
    activities; by says who ("ahead" or "row", kept in _started). A process's
    first session starts CUPTI (4-6 s on the H200, later ones about 1 ms),
    which is better paid before a request's rows than between two of them;
    profile_row calls it, and the cuda backend's worker calls it before its
    first request arrives (prepare_ahead)."""
    global _started
    if _started:
        return
    from torch import profiler

    with profiler.profile(activities=[profiler.ProfilerActivity.CUDA]):
        torch.cuda.synchronize()
    _started = by


def prepare_ahead(torch):
    """Start the profiler in a worker that waits for its request (the cuda
    backend's preload, _device_init), so that the first timed session of a
    round, which profiles its rows, does not pay for CUPTI's start on the
    campaign's critical path. Every worker does it, so every process times
    its rows in the same state. It holds no device lock: it launches nothing
    on the device and needs no context of its own beyond the one
    _device_init made. A profiler that cannot start is said on stderr and
    left to the row, which records why."""
    try:
        prepare(torch, "ahead")
    except Exception as e:  # said, not fatal: profile_row tries again and records its error
        import sys

        print(f"caliber_pytest._kernel_time: the profiler did not start ahead: {type(e).__name__}: {e}",
              file=sys.stderr)


def _profiled(torch, prepare_calls, calls):
    """Run prepare_calls(calls) and the body it returns with the Triton launches
    recorded, the body under the profiler (started first: prepare); returns
    (GPU records, launches)."""
    global _active
    from torch import profiler

    prepare(torch)
    runtime = _triton_runtime()
    launches = _Launches()
    token = _hooks.attach(runtime, "launch_enter_hook", launches.on_launch) if runtime else None
    _active = True
    try:
        body = prepare_calls(calls)
        torch.cuda.synchronize()
        with profiler.profile(activities=[profiler.ProfilerActivity.CUDA]) as prof:
            body()
            torch.cuda.synchronize()
    finally:
        _active = False
        if runtime:
            _hooks.detach(runtime, "launch_enter_hook", launches.on_launch, token)
    return _gpu_records(prof), launches.seen


def join(records, launches):
    """Per kernel of the replay: {"kernel", "variant", "launches", "total_ns", "min_ns",
    "max_ns"}, sorted by kernel and variant, and the reason the launch order did
    not hold (None when it did: every Triton record has its variant)."""
    triton_names = {name for _, name in launches}
    error, at, joined = None, 0, []
    for start, end, name in records:
        variant = None
        if name in triton_names:
            if at < len(launches) and launches[at][1] == name:
                variant = launches[at][0]
                at += 1
            elif error is None:
                expected = launches[at][1] if at < len(launches) else "no more Triton launches"
                error = (f"profiler record {len(joined) + 1} is {name}, launch {at + 1} of {len(launches)} "
                         f"is {expected}")
        joined.append((name, variant, end - start))
    if error is None and at < len(launches):
        error = f"{len(launches) - at} of {len(launches)} Triton launches have no profiler record"
    kernels = {}
    for name, variant, ns in joined:
        key = (name, None if error else variant)
        k = kernels.setdefault(key, {"kernel": name, "variant": key[1], "launches": 0, "total_ns": 0,
                                     "min_ns": ns, "max_ns": ns})
        k["launches"] += 1
        k["total_ns"] += ns
        k["min_ns"], k["max_ns"] = min(k["min_ns"], ns), max(k["max_ns"], ns)
    return [kernels[k] for k in sorted(kernels, key=lambda k: (k[0], k[1] or ""))], error


def wanted():
    """Whether this request profiles its rows: the first timed session of round a."""
    return os.environ.get("CALIBER_PHASE", "a") == "a" and os.environ.get("CALIBER_SESSION", "1") == "1"


def profile_row(torch, cell_dir, row, timer, n_calls, prepare_calls, nvml=None):
    """Profile one timed row and append its line to <cell_dir>/kernels.jsonl; returns it,
    or None when this request does not profile (wanted). The device (NVML
    handle nvml, or None) is rested first and its clocks sampled during the
    replay, as for a timed row.

    prepare_calls(calls) makes the row's calls ready and returns what runs
    them: a graph's replay (the capture happening in prepare_calls) or the
    direct calls."""
    if not wanted():
        return None
    calls = max(1, min(int(n_calls), MAX_CALLS))
    line = {"calls": calls, "clocks": None, "error": None, "kernels": [], "launches": 0, "profiler_start": None,
            "row": row, "span_ns": 0, "timer": timer, "wall_ns": 0}
    before = _started
    start = time.perf_counter_ns()
    rest = _clocks.pace(nvml)
    sampler = _clocks.Sampler(nvml).start()
    try:
        records, launches = _profiled(torch, prepare_calls, calls)
        line["kernels"], line["error"] = join(records, launches)
        line["launches"] = len(launches)
        if records:
            line["span_ns"] = max(end for _, end, _ in records) - records[0][0]
        elif launches:
            line["error"] = f"the profiler recorded no kernel of the {len(launches)} Triton launches"
    except Exception as e:  # the row is timed already: its profile only says what went wrong
        line["error"] = f"{type(e).__name__}: {e}".replace("\n", " ")
    line["clocks"] = {"during": sampler.stop(), "rested_cool": rest["cool"], "rested_ms": rest["ms"]}
    line["wall_ns"] = time.perf_counter_ns() - start
    line["profiler_start"] = {"ahead": "ahead", "row": "earlier-row"}.get(before) or ("this-row" if _started else None)
    check_integers(line, "kernels line")
    append_line(os.path.join(cell_dir, KERNELS_FILE), dumps_line(line))
    return line
