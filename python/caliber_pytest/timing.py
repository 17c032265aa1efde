"""caliber_pytest.timing: device-event timing of benchmark rows.

A benchmark test calls the fixture caliber_bench(fn, row, shape=None,
dtype=None) once per row. fn is called directly a few times first (compile and
warm-up, so the measured kernels have more than one launch), then for the
warm-up time. With CALIBER_GRAPH_CAPTURE=1, n_calls calls are captured in one
CUDA graph and `repeats` replays are timed with CUDA events; otherwise (or when
capture fails) `repeats` loops of n_calls direct calls are timed the same way.
n_calls is chosen so one repetition lasts about rep_ms / repeats. Before
each row the device is rested until it is cool (_clocks.pace), and the SM
clock is sampled while the row runs; a row that ran below throttle_floor of
the maximum SM clock is measured again after a rest, and marked throttled
when it still is (the runner's accounting leaves it out). Each row, with the
timer used, why, the clocks around and during it and how it was paced, is
appended to <cell dir>/timing.jsonl. Once its samples are written, the row
is replayed once under the profiler for its per-kernel GPU time
(_kernel_time, <cell dir>/kernels.jsonl). Other plugins time a row with
measure(config, ...), config being the request's pytest config (compat
does).

In a timed phase every test runs on a stream of the request's own (waiting
for the work before it, and waited for after it), and graphs are captured on
that same stream. A capture on any other stream fails for code whose work
was queued before the timer was called: FlagGems' backward benchmarks run
the forward (`out = fn()`) themselves, and autograd then runs the backward
on the forward's stream, outside the capture. So a row is timed the same
way in every session and every process, whatever ran before it (on the
H200, gelu_backward's first row failed its capture in session 1 of each
cell and captured in session 2, where a failed capture had left torch's
capture stream current).

A row's timer is decided once per cell, in its first session: with
CALIBER_TIMER_PLAN (the path of that session's timing.jsonl) a later
session times each row as the plan says, never trying a capture that the
first session could not make, and a row the plan captured that cannot be
captured now is timed directly with the reason saying both.

In the compile-only pass of run --prescreen (CALIBER_PHASE=screen) a row
is only called as its warm-up calls it, so that it compiles and launches
what it would time, and nothing is timed or written."""

import os

import pytest

from . import _clocks, _gpu_lock, _kernel_time, _nvml, _timing_rows
from ._common import (append_line, drop_request_state, dtype_name, dumps_line, request_state, require_env,
                      usage_error)

PLUGIN = "timing"
ESTIMATE_CALLS = 5


class _State:
    """This request's timer settings, output file and the rows already written."""

    def __init__(self, cell_dir, timer, use_graph, reason, torch, stream, plan):
        self.path = os.path.join(cell_dir, "timing.jsonl")
        self.timer = timer
        self.use_graph = use_graph
        self.reason = reason
        self.torch = torch
        self.stream = stream  # the stream every test of a timed phase runs on; None in correctness
        self.plan = plan      # {row: (timer, reason)} of the cell's first session, or None
        self.rows = set()
        self.compile_only = os.environ.get("CALIBER_PHASE") == "screen"
        self.nvml = _nvml.handle(_nvml.device_uuid(torch.cuda.get_device_properties(0)))
        top = _nvml.max_sm_mhz(self.nvml)
        self.floor_mhz = int(top * timer["throttle_floor"]) if top else None


# This request's _State lives in its config.stash under STATE, from pytest_configure to pytest_unconfigure.
STATE = pytest.StashKey[_State]()


def pytest_configure(config):
    """Read CALIBER_TIMER and CALIBER_GRAPH_CAPTURE; start an empty timing.jsonl."""
    cell_dir = require_env(PLUGIN, "CALIBER_CELL_DIR")
    try:
        timer = _timing_rows.parse_timer(os.environ.get("CALIBER_TIMER", ""))
    except ValueError as e:
        raise usage_error(PLUGIN, str(e))
    try:
        import torch
    except ImportError as e:
        raise usage_error(PLUGIN, f"torch cannot be imported: {e}")
    if not torch.cuda.is_available():
        raise usage_error(PLUGIN, "no GPU is visible: device events cannot be timed")
    use_graph, reason = _timing_rows.graph_decision(os.environ.get("CALIBER_GRAPH_CAPTURE"), timer)
    try:
        plan = _timing_rows.load_plan(os.environ.get("CALIBER_TIMER_PLAN"))
    except (OSError, ValueError) as e:
        raise usage_error(PLUGIN, f"CALIBER_TIMER_PLAN: {e}")
    timed = os.environ.get("CALIBER_PHASE") in ("a", "b")
    os.makedirs(cell_dir, exist_ok=True)
    open(os.path.join(cell_dir, "timing.jsonl"), "w").close()
    config.stash[STATE] = _State(cell_dir, timer, use_graph, reason, torch,
                                 torch.cuda.Stream() if timed else None, plan)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Run a test of a timed phase on the request's stream (module docstring)."""
    state = request_state(item.config, STATE)
    if state is None or state.stream is None:
        yield
        return
    cuda = state.torch.cuda
    state.stream.wait_stream(cuda.current_stream())
    with cuda.stream(state.stream):
        yield
    cuda.current_stream().wait_stream(state.stream)


def pytest_unconfigure(config):
    """Forget this request."""
    drop_request_state(config, STATE)


def _event_times(torch, repeats, body):
    """Event times (ms) of `repeats` runs of body, recorded back to back, one sync at the end."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeats)]
    for start, end in events:
        start.record()
        body()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in events]


def _calls(fn, n_calls):
    """A body that calls fn n_calls times directly."""
    def body():
        for _ in range(n_calls):
            fn()
    return body


def _capture(torch, fn, n_calls, stream):
    """A CUDA graph holding n_calls calls of fn, replayed once untimed.

    A capture that fails never reaches the CUDA generator's capture epilogue,
    and torch then refuses every later random draw outside a capture ("Offset
    increment outside graph capture encountered unexpectedly": FlagGems'
    gelu_backward benchmark, whose next input comes from torch.randn). So the
    generator's state from before the capture is put back when it fails, and
    the row falls back to direct timing with the operator's RNG intact.
    The capture runs on stream (the one the test runs on; None: torch's own
    capture stream)."""
    torch.cuda.synchronize()
    generator = torch.cuda.default_generators[torch.cuda.current_device()]
    before = generator.clone_state()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph, stream=stream):
            _calls(fn, n_calls)()
    except BaseException:
        generator.graphsafe_set_state(before)
        raise
    graph.replay()
    torch.cuda.synchronize()
    return graph


def _attempt(state, fn, planned):
    """One pass over a row: warm-up and sizing, then timed with the clock
    sampled; a dict of kind, reason, elapsed (ms), n_calls and the clocks
    before, after and during. planned is the (timer, reason) of the row in
    the cell's first session, or None there."""
    torch, timer = state.torch, state.timer
    n_calls = _warm(state, fn)
    clocks_before = _nvml.clocks(state.nvml)
    sampler = _clocks.Sampler(state.nvml).start()
    kind, reason, elapsed = "direct", state.reason, None
    if planned is not None and planned[0] == "direct":
        reason = f"timed direct as in the cell's first session ({planned[1]})"
    elif state.use_graph:
        try:
            graph = _capture(torch, fn, n_calls, state.stream)
            elapsed = _event_times(torch, timer["repeats"], graph.replay)
            del graph
            kind, reason = "graph", "captured"
        except Exception as e:  # the row falls back to direct timing and says why
            torch.cuda.synchronize()
            reason = f"capture failed: {type(e).__name__}: {e}".replace("\n", " ")
            if planned is not None:
                reason += " (the cell's first session captured this row)"
    if elapsed is None:
        elapsed = _event_times(torch, timer["repeats"], _calls(fn, n_calls))
    during = sampler.stop()
    return {"after": _nvml.clocks(state.nvml), "before": clocks_before, "during": during, "elapsed": elapsed,
            "kind": kind, "n_calls": n_calls, "reason": reason}


def _warm(state, fn):
    """Compile and warm fn, then size it: calls per repetition."""
    torch, timer = state.torch, state.timer
    for _ in range(_timing_rows.WARMUP_CALLS):
        fn()
    torch.cuda.synchronize()
    estimate_ms = _event_times(torch, 1, _calls(fn, ESTIMATE_CALLS))[0] / ESTIMATE_CALLS
    if timer["warmup_ms"]:
        for _ in range(_timing_rows.choose_calls(estimate_ms, timer["warmup_ms"])):
            fn()
    return _timing_rows.choose_calls(estimate_ms, timer["rep_ms"] / timer["repeats"])


def _compile_only(state, fn, nodeid, label, shape, dtype, extra):
    """A row of the compile-only pass: fn called as many times as a timed row's
    warm-up starts with (compile, then warm: its kernels launch as often as in
    that warm-up, against the same launch floor), and once more through device
    events, so that a caller computing from the row gets a number. Neither
    rested nor written: the row is not a measurement."""
    for _ in range(_timing_rows.WARMUP_CALLS):
        fn()
    elapsed = _event_times(state.torch, 1, fn)
    return _timing_rows.make_row(nodeid, label, _timing_rows.samples_ns(elapsed, 1), "direct",
                                 "compile-only pass: not timed", 1, shape=shape, dtype=dtype_name(dtype), extra=extra)


def measure(config, nodeid, fn, label, shape=None, dtype=None, extra=None):
    """Time fn as one benchmark row of the request whose pytest config is config,
    append the row to its timing.jsonl and return it: rested first, measured
    again after a longer rest when it ran throttled, the run's device lock held
    throughout (_gpu_lock)."""
    state = request_state(config, STATE)
    if state is None:
        raise RuntimeError(f"caliber_pytest.{PLUGIN} is not configured in this session")
    key = _timing_rows.row_id(nodeid, label)
    if key in state.rows:
        raise ValueError(f"caliber_pytest.{PLUGIN}: row {key} is timed twice in one request")
    state.rows.add(key)
    if state.compile_only:
        return _compile_only(state, fn, nodeid, label, shape, dtype, extra)

    planned = _timing_rows.planned(state.plan, key)
    with _gpu_lock.exclusive():
        rests = [_clocks.pace(state.nvml)]
        attempts = [_attempt(state, fn, planned)]
        if _clocks.throttled(attempts[-1]["during"], state.floor_mhz):
            rests.append(_clocks.pace(state.nvml, _clocks.RETRY_REST_S))
            attempts.append(_attempt(state, fn, planned))
    last = attempts[-1]
    throttle = {"attempts": len(attempts), "floor_mhz": state.floor_mhz,
                "first_sm_min_mhz": attempts[0]["during"]["sm_min_mhz"] if attempts[0]["during"] else None,
                "rested_ms": [r["ms"] for r in rests], "rested_cool": [r["cool"] for r in rests],
                "throttled": _clocks.throttled(last["during"], state.floor_mhz)}
    row = _timing_rows.make_row(nodeid, label, _timing_rows.samples_ns(last["elapsed"], last["n_calls"]),
                                last["kind"], last["reason"], last["n_calls"], shape=shape, dtype=dtype_name(dtype),
                                clocks_before=last["before"], clocks_after=last["after"],
                                clocks_during=last["during"], throttle=throttle, extra=extra)
    append_line(state.path, dumps_line(row))
    with _gpu_lock.exclusive():
        _kernel_time.profile_row(state.torch, os.path.dirname(state.path), key, last["kind"], last["n_calls"],
                                 _replayable(state, fn, last["kind"]), state.nvml)
    return row


def _replayable(state, fn, kind):
    """What _kernel_time replays a row with: calls -> a graph of them (captured
    now, on the request's stream as the timed one was) or the direct calls."""
    if kind == "graph":
        return lambda calls: _capture(state.torch, fn, calls, state.stream).replay
    return lambda calls: _calls(fn, calls)


@pytest.fixture
def caliber_bench(request):
    """caliber_bench(fn, row, shape=None, dtype=None) times one benchmark row."""

    def bench(fn, row, shape=None, dtype=None):
        return measure(request.config, request.node.nodeid, fn, row, shape=shape, dtype=dtype)

    return bench
