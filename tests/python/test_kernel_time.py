"""Per-kernel GPU time of a timed row (_kernel_time) and resources per
variant (ir_meta, resources.tsv).

The join is run on real records of an H200 (tests/data/kernels/h200, from
scripts/device/kernel_probe.py): a graph replay's and direct calls' kineto
events against the launches Triton's hook saw. Then timing.measure over the
fake GPU (its torch.profiler records as the H200's do), and a request
through the real worker session with the fake triton: kernels.jsonl joined
to the launch index's variants, the index unchanged by the profiled replay,
and resources.tsv from the CompiledKernel the load hook is called for."""

import json
import os
import sys
import textwrap
import types

import pytest

from caliber_pytest import _clocks, _kernel_time, _resources, timing
from fake_gpu import FakeCuda, SITE
from repo_paths import PYTHON_DIR, REPO
from worker_session import request, serve

H200 = os.path.join(REPO, "tests", "data", "kernels", "h200")


def _load(name):
    with open(os.path.join(H200, name)) as f:
        return json.load(f)


class _Recorded:
    """A _KinetoEvent as the probe recorded its fields."""

    def __init__(self, fields):
        self._fields = fields

    def __getattr__(self, name):
        value = self._fields[name]
        if name == "device_type":
            value = types.SimpleNamespace(name=value.split(".")[-1])
        return lambda: value


def _profile(events):
    """A finished torch.profiler profile holding the recorded events."""
    results = types.SimpleNamespace(events=lambda: [_Recorded(e) for e in events])
    return types.SimpleNamespace(profiler=types.SimpleNamespace(kineto_results=results))


def _launches(recorded):
    """(variant, kernel) of each recorded launch, the variant found as ir_meta finds it: by function."""
    by_function = {load["function"]: load["variant"] for load in _load("loads.json")}
    return [(by_function[la["function"]], la["name"]) for la in recorded]


def _kernel_sums(events):
    """Per kernel name of the device events: (launches, total ns), from start and end."""
    out = {}
    for e in events:
        if e["device_type"] == "DeviceType.CUDA":
            n, ns = out.get(e["name"], (0, 0))
            out[e["name"]] = (n + 1, ns + e["end_ns"] - e["start_ns"])
    return out


@pytest.mark.parametrize("case", ["graph", "direct"])
def test_real_records_join_to_the_launched_variants(case):
    events = _load(f"{case}.kineto.json")
    recorded = _load("graph.capture-launches.json" if case == "graph" else "direct.launches.json")
    records = _kernel_time._gpu_records(_profile(events))
    kernels, error = _kernel_time.join(records, _launches(recorded))
    assert error is None
    sums = _kernel_sums(events)
    by_name = {k["kernel"]: k for k in kernels}
    assert set(by_name) == set(sums)
    for name, (n, ns) in sums.items():
        assert (by_name[name]["launches"], by_name[name]["total_ns"]) == (n, ns)
    variants = {la["name"]: la for la in recorded}
    loads = {load["function"]: load["variant"] for load in _load("loads.json")}
    assert by_name["_matmul_kernel"]["variant"] == loads[variants["_matmul_kernel"]["function"]]
    assert by_name["_softmax_rows_kernel"]["variant"] == loads[variants["_softmax_rows_kernel"]["function"]]
    (aten, ) = [k for k in kernels if k["kernel"].startswith("void at::native::")]
    assert aten["variant"] is None and aten["launches"] == 3
    # the records are the device's: start order, the graph's all carrying its launch's correlation id
    assert [r[2] for r in records] == [e["name"] for e in sorted(
        (e for e in events if e["device_type"] == "DeviceType.CUDA"), key=lambda e: e["start_ns"])]


def test_a_missing_record_unjoins_the_row():
    events = _load("graph.kineto.json")
    last_softmax = max(i for i, e in enumerate(events) if e["name"] == "_softmax_rows_kernel")
    records = _kernel_time._gpu_records(_profile(events[:last_softmax] + events[last_softmax + 1:]))
    kernels, error = _kernel_time.join(records, _launches(_load("graph.capture-launches.json")))
    assert error == "1 of 6 Triton launches have no profiler record"
    assert all(k["variant"] is None for k in kernels)
    assert {k["kernel"]: k["launches"] for k in kernels}["_softmax_rows_kernel"] == 2


def test_records_out_of_launch_order_unjoin_the_row():
    launches = _launches(_load("graph.capture-launches.json"))
    records = _kernel_time._gpu_records(_profile(_load("graph.kineto.json")))
    kernels, error = _kernel_time.join(records, [launches[1], launches[0]] + launches[2:])
    assert error == "profiler record 1 is _matmul_kernel, launch 1 of 6 is _softmax_rows_kernel"
    assert all(k["variant"] is None for k in kernels)


def test_resources_of_the_real_compiled_kernels():
    for load in _load("loads.json"):
        c = load["compiled"]
        kernel = types.SimpleNamespace(n_regs=c["n_regs"], n_spills=c["n_spills"],
                                       metadata=types.SimpleNamespace(**c["metadata"]))
        res = _resources.resources(kernel)
        assert res == {"n_regs": c["n_regs"], "n_spills": c["n_spills"], "shared": c["metadata"]["shared"],
                       "num_stages": c["metadata"]["num_stages"], "num_warps": c["metadata"]["num_warps"]}
    # the profiler's registers per thread and shared memory are the CompiledKernel's
    by_regs = {(load["compiled"]["n_regs"], load["compiled"]["metadata"]["shared"]) for load in _load("loads.json")}
    for e in _load("graph.trace-kernels.json"):
        if not e["name"].startswith("void "):
            assert (e["args"]["registers per thread"], e["args"]["shared memory"]) in by_regs


def test_resources_text():
    text = _resources.format_resources([("B", "_b", {"n_regs": 96, "n_spills": 0, "shared": 0, "num_stages": 3,
                                                      "num_warps": 4}),
                                        ("A", "_a", _resources.resources(None, {"shared": 16, "num_warps": 8}))])
    assert text == ("variant\tkernel\tn_regs\tn_spills\tshared\tnum_stages\tnum_warps\n"
                    "A\t_a\t-\t-\t16\t-\t8\nB\t_b\t96\t0\t0\t3\t4\n")
    with pytest.raises(ValueError):
        _resources.format_resources([("A\tB", "_a", {})])


# --- timing.measure over the fake GPU ---------------------------------------------------------------

CALL_MS = 0.02


def _fake_profiler():
    """_fake_cuda.profiler_module, loaded as the fake site's torch.profiler loads it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("_fake_cuda_p", os.path.join(SITE, "torch", "_fake_cuda.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def measured(tmp_path, monkeypatch):
    """measure(use_graph, profiler=True) over a fake torch whose cuda has a profiler
    (or none): (the row, its kernels.jsonl line, fn's calls)."""
    configs = []

    def run(use_graph, profiler=True):
        fake = _fake_profiler()
        cuda = fake.FakeCuda()
        torch = types.SimpleNamespace(cuda=cuda)
        if profiler:
            torch.profiler = fake.profiler_module(cuda)
        monkeypatch.setitem(sys.modules, "torch", torch)
        monkeypatch.setattr(_kernel_time, "_started", None)
        calls = []

        def fn():
            calls.append(1)
            cuda.run(CALL_MS)

        monkeypatch.setenv("CALIBER_CELL_DIR", str(tmp_path))
        monkeypatch.setenv("CALIBER_TIMER", json.dumps({"rep_ms": 3, "repeats": 3, "warmup_ms": 1}))
        if use_graph:
            monkeypatch.setenv("CALIBER_GRAPH_CAPTURE", "1")
        config = types.SimpleNamespace(stash=pytest.Stash())
        timing.pytest_configure(config)
        configs.append(config)
        row = timing.measure(config, "t.py::t", fn, "r")
        (line, ) = [json.loads(x) for x in (tmp_path / "kernels.jsonl").read_text().splitlines()]
        return row, line, len(calls), fake

    yield run
    for config in configs:
        timing.pytest_unconfigure(config)


def test_a_graph_row_is_replayed_once_under_the_profiler(measured):
    row, line, calls, fake = measured(use_graph=True)
    assert row["timer"] == "graph" and row["n_calls"] == 50
    # 3 + 5 + 50 calls to warm, size and time (capture); 50 more captured for the profiled replay
    assert calls == 3 + 5 + 50 + 50 + 50
    assert line == {"calls": 50, "clocks": {"during": None, "rested_cool": True, "rested_ms": 0}, "error": None,
                    "launches": 0, "profiler_start": "this-row", "row": "t.py::t|r",
                    "span_ns": 1000000, "timer": "graph", "wall_ns": line["wall_ns"],
                    "kernels": [{"kernel": fake.NON_TRITON_KERNEL, "launches": 50, "max_ns": 20000, "min_ns": 20000,
                                 "total_ns": 1000000, "variant": None}]}
    assert not _kernel_time.profiling()


def test_a_direct_row_is_called_again_under_the_profiler(measured):
    row, line, calls, _ = measured(use_graph=False)
    assert row["timer"] == "direct" and row["n_calls"] == 50
    assert calls == 3 + 5 + 50 + 50 * 3 + 50
    assert (line["calls"], line["timer"], line["error"], line["kernels"][0]["launches"]) == (50, "direct", None, 50)


def test_profiled_calls_are_bounded(measured, monkeypatch):
    monkeypatch.setattr(_kernel_time, "MAX_CALLS", 7)
    row, line, calls, _ = measured(use_graph=True)
    assert row["n_calls"] == 50 and line["calls"] == 7 and line["span_ns"] == 7 * 20000


@pytest.mark.parametrize("phase, session", [("a", "2"), ("b", "1"), ("b", "3")])
def test_only_the_first_session_of_round_a_profiles(measured, monkeypatch, tmp_path, phase, session):
    monkeypatch.setenv("CALIBER_PHASE", phase)
    monkeypatch.setenv("CALIBER_SESSION", session)
    with pytest.raises(FileNotFoundError):
        measured(use_graph=True)
    assert (tmp_path / "timing.jsonl").exists() and not (tmp_path / "kernels.jsonl").exists()


def test_the_first_session_of_round_a_profiles(measured, monkeypatch):
    monkeypatch.setenv("CALIBER_PHASE", "a")
    monkeypatch.setenv("CALIBER_SESSION", "1")
    row, line, calls, _ = measured(use_graph=True)
    assert line["calls"] == 50 and calls == 3 + 5 + 50 + 50 + 50


def _counted_torch(monkeypatch):
    """A fake torch, installed as sys.modules["torch"], whose profiler records the
    activities of every session it starts: (torch, those sessions). The process's
    profiler is not started yet."""
    fake = _fake_profiler()
    cuda = fake.FakeCuda()
    module = fake.profiler_module(cuda)
    sessions = []

    class Counted(module.profile):
        def __enter__(self):
            sessions.append(self.activities)
            return super().__enter__()

    module.profile = Counted
    torch = types.SimpleNamespace(cuda=cuda, profiler=module)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(_kernel_time, "_started", None)
    return torch, sessions


def test_the_profiler_is_started_once_per_process(monkeypatch):
    torch, sessions = _counted_torch(monkeypatch)
    _kernel_time.prepare(torch)
    _kernel_time.prepare(torch)
    assert sessions == [[torch.profiler.ProfilerActivity.CUDA]]
    _kernel_time._profiled(torch, lambda calls: lambda: None, 1)
    assert len(sessions) == 2


def test_a_profiler_started_ahead_is_not_started_again_and_the_row_says_so(monkeypatch):
    torch, sessions = _counted_torch(monkeypatch)
    _kernel_time.prepare_ahead(torch)
    assert (_kernel_time._started, len(sessions)) == ("ahead", 1)
    _kernel_time.prepare(torch)
    assert len(sessions) == 1


def test_profiler_start_names_who_paid_for_it(tmp_path, monkeypatch):
    fake = _fake_profiler()
    cuda = fake.FakeCuda()
    torch = types.SimpleNamespace(cuda=cuda, profiler=fake.profiler_module(cuda))
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.delenv("CALIBER_PHASE", raising=False)
    monkeypatch.delenv("CALIBER_SESSION", raising=False)

    def starts(before):
        monkeypatch.setattr(_kernel_time, "_started", before)
        out = []
        for row in ("r1", "r2"):
            out.append(_kernel_time.profile_row(torch, str(tmp_path), row, "direct", 1,
                                                lambda calls: lambda: cuda.run(CALL_MS))["profiler_start"])
        return out

    assert starts("ahead") == ["ahead", "ahead"]
    assert starts(None) == ["this-row", "earlier-row"]


def test_a_profiler_that_cannot_start_ahead_is_said_and_left_to_the_row(monkeypatch, capsys):
    class Broken:
        def profile(self, activities):
            raise RuntimeError("CUPTI_ERROR_NOT_INITIALIZED")

    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: None),
                                  profiler=types.SimpleNamespace(profile=Broken().profile,
                                                                 ProfilerActivity=types.SimpleNamespace(CUDA=1)))
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.profiler", torch.profiler)
    monkeypatch.setattr(_kernel_time, "_started", None)
    _kernel_time.prepare_ahead(torch)
    assert _kernel_time._started is None
    assert capsys.readouterr().err == ("caliber_pytest._kernel_time: the profiler did not start ahead: "
                                       "RuntimeError: CUPTI_ERROR_NOT_INITIALIZED\n")


def test_no_profiler_leaves_the_row_timed_and_says_why(measured):
    row, line, calls, _ = measured(use_graph=True, profiler=False)
    assert row["samples_ns"] == [20000, 20000, 20000]
    assert calls == 3 + 5 + 50 + 50
    assert line["error"].startswith("ImportError: cannot import name 'profiler'")
    assert line["kernels"] == [] and line["calls"] == 50


# --- through the worker session, fake triton -----------------------------------------------------------

SCALE_TEST = """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scale_kernel(X, Y, N, BLOCK: tl.constexpr):
        pass


    def test_perf_scale(caliber_bench):
        x = torch.empty((4096, ), dtype=torch.float16, device="cuda")
        y = torch.empty_like(x)
        caliber_bench(lambda: _scale_kernel[(4, )](x, y, 4096, BLOCK=1024), "4096", shape="4096", dtype="float16")
"""


def test_a_session_joins_the_profile_to_the_index_and_leaves_the_index_as_it_was(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "test_scale.py").write_text(textwrap.dedent(SCALE_TEST))
    cell = tmp_path / "cell"
    timer = {"graph_capture": "auto", "kind": "native-event", "rep_ms": 3, "repeats": 3, "warmup_ms": 0}
    plugins = ["caliber_pytest.ir_meta", "caliber_pytest.timing"]
    argv = ["-q", "-p", "no:cacheprovider", *[a for p in plugins for a in ("-p", p)], "test_scale.py"]
    env = {"PYTHONPATH": os.pathsep.join([PYTHON_DIR, SITE]), "TRITON_CACHE_DIR": str(tmp_path / "cache"),
           "CALIBER_GRAPH_CAPTURE": "1"}
    status, replies, out = serve(corpus, [request("scale", argv, {"CALIBER_CELL_DIR": str(cell),
                                                                  "CALIBER_TIMER": json.dumps(timer)})], env)
    assert status == 0 and [r["exit"] for r in replies] == [0], out
    (row, ) = [json.loads(x) for x in (cell / "timing.jsonl").read_text().splitlines()]
    (line, ) = [json.loads(x) for x in (cell / "kernels.jsonl").read_text().splitlines()]
    header, index = (cell / "ir" / "index.tsv").read_text().splitlines()[0], (cell / "ir" / "index.tsv").read_text().splitlines()[1:]
    (variant, kernel, launches, tuning) = index[0].split("\t")
    # warm-up and sizing (3 + 5) and the timed graph's capture; the profiled replay's capture is not counted
    assert (kernel, int(launches), int(tuning)) == ("_scale_kernel", 3 + 5 + row["n_calls"], 0)
    assert line["error"] is None and line["launches"] == line["calls"] == min(row["n_calls"], _kernel_time.MAX_CALLS)
    assert [(k["kernel"], k["variant"], k["launches"]) for k in line["kernels"]] == [
        ("_scale_kernel", variant, line["calls"])]
    assert line["span_ns"] > 0 and line["kernels"][0]["total_ns"] == line["span_ns"]
    # registers from the fake CompiledKernel: 40 + 8 per warp, no converts; no dots, no shared memory
    assert (cell / "ir" / "resources.tsv").read_text().splitlines() == [
        "variant\tkernel\tn_regs\tn_spills\tshared\tnum_stages\tnum_warps", f"{variant}\t_scale_kernel\t72\t0\t0\t3\t4"]


def test_the_replay_is_rested_and_its_clocks_sampled_as_a_timed_row(measured, monkeypatch):
    """Right after a row's timed samples a dense kernel runs at a clock the
    power cap lowered: the replay rests the device first, as the row did,
    and its line says how long and what the clocks were during it."""
    rests = []

    def pace(h, least_s=0.0):
        rests.append(least_s)
        return {"cool": True, "ms": 100 + len(rests)}

    monkeypatch.setattr(_clocks, "pace", pace)
    monkeypatch.setattr(_clocks.Sampler, "stop", lambda self: {"reasons": 0, "samples": 2, "sm_max_mhz": 1980,
                                                               "sm_min_mhz": 1965})
    row, line, calls, _ = measured(use_graph=True)
    assert rests == [0.0, 0.0]  # before the row, then before its replay
    assert row["throttle"]["rested_ms"] == [101]
    assert line["clocks"] == {"during": {"reasons": 0, "samples": 2, "sm_max_mhz": 1980, "sm_min_mhz": 1965},
                              "rested_cool": True, "rested_ms": 102}
