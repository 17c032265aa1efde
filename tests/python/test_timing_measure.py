"""timing.measure driven by a fake torch whose events read a simulated clock:
warm-up and timed call counts, graph vs direct, and the fall-back when capture
fails. The plugin is configured for a request (a fake config with a real
pytest.Stash) and measure times the rows of that request. No GPU; the real
thing runs in tests/device/test_timing.py."""

import importlib.util
import json
import os
import sys
import types

import pytest

from caliber_pytest import _clocks, _nvml, _timing_rows, timing
from fake_gpu import SITE, FakeCuda

CALL_MS = 0.02


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """configure(use_graph, graph_capture="auto", capture_error=None): timing's
    pytest_configure for one request over the fake cuda; returns (fake cuda, the
    request's config, the function to time, its call counter). Unconfigured at the end."""
    cuda = FakeCuda()
    calls = []
    configured = []
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))

    def fn():
        calls.append(1)
        cuda.run(CALL_MS)

    def configure(use_graph, graph_capture="auto", capture_error=None):
        cuda.capture_error = capture_error
        timer = {"graph_capture": graph_capture, "rep_ms": 3, "repeats": 3, "warmup_ms": 1}
        monkeypatch.setenv("CALIBER_CELL_DIR", str(tmp_path))
        monkeypatch.setenv("CALIBER_TIMER", json.dumps(timer))
        if use_graph:
            monkeypatch.setenv("CALIBER_GRAPH_CAPTURE", "1")
        else:
            monkeypatch.delenv("CALIBER_GRAPH_CAPTURE", raising=False)
        config = types.SimpleNamespace(stash=pytest.Stash())
        timing.pytest_configure(config)
        configured.append(config)
        return cuda, config, fn, calls

    yield configure
    for config in configured:
        timing.pytest_unconfigure(config)
        assert timing.STATE not in config.stash


def _rows(tmp_path):
    return [json.loads(line) for line in (tmp_path / "timing.jsonl").read_text().splitlines()]


def test_graph_row(setup, tmp_path):
    cuda, config, fn, calls = setup(use_graph=True)
    row = timing.measure(config, "t.py::t[float16]", fn, "8x8", shape="8x8", dtype="float16")
    # 1 ms of rep per repetition at 0.02 ms a call: 50 calls captured once
    assert row["n_calls"] == 50 and row["timer"] == "graph" and row["timer_reason"] == "captured"
    assert row["samples_ns"] == [20000, 20000, 20000]
    warmup = round(1 / CALL_MS)
    assert len(calls) == _timing_rows.WARMUP_CALLS + timing.ESTIMATE_CALLS + warmup + 50
    assert _rows(tmp_path) == [row] and row["row"] == "t.py::t[float16]|8x8"


def test_direct_row(setup, tmp_path):
    cuda, config, fn, calls = setup(use_graph=False, graph_capture="off")
    row = timing.measure(config, "t.py::t", fn, "r")
    assert row["timer"] == "direct" and row["timer_reason"] == "timer.graph_capture is off"
    assert row["samples_ns"] == [20000, 20000, 20000]
    assert len(calls) == 3 + 5 + 50 + 50 * 3


def test_failed_capture_falls_back_to_direct(setup, tmp_path):
    cuda, config, fn, calls = setup(use_graph=True,
                                    capture_error=RuntimeError("operation not permitted\nwhen capturing"))
    row = timing.measure(config, "t.py::t", fn, "r")
    assert row["timer"] == "direct"
    assert row["timer_reason"] == "capture failed: RuntimeError: operation not permitted when capturing"
    assert row["samples_ns"] == [20000, 20000, 20000]


def test_failed_capture_leaves_the_generator_usable(setup):
    """The fake generator behaves as torch's: after a failed capture, a random
    draw outside a capture raises, unless timing put the state back."""
    cuda, config, fn, calls = setup(use_graph=True, capture_error=RuntimeError("capture invalidated"))
    generator = cuda.default_generators[0]
    generator.draw()
    with pytest.raises(RuntimeError, match="capture invalidated"):
        with cuda.graph(cuda.CUDAGraph()):
            pass
    with pytest.raises(RuntimeError, match="Offset increment outside graph capture"):
        generator.draw()
    generator.state.capturing = False
    row = timing.measure(config, "t.py::t", fn, "r")
    assert row["timer"] == "direct" and row["timer_reason"] == "capture failed: RuntimeError: capture invalidated"
    generator.draw()


def test_a_row_is_timed_once_per_request(setup):
    cuda, config, fn, calls = setup(use_graph=False)
    timing.measure(config, "t.py::t", fn, "r")
    with pytest.raises(ValueError, match="timed twice"):
        timing.measure(config, "t.py::t", fn, "r")


def test_measure_needs_its_request_configured(setup, tmp_path):
    """A request's rows are its own: once it is unconfigured, measure refuses its
    config, and the next request may time the same row again."""
    cuda, first, fn, calls = setup(use_graph=False)
    timing.measure(first, "t.py::t", fn, "r")
    timing.pytest_unconfigure(first)
    with pytest.raises(RuntimeError, match="not configured"):
        timing.measure(first, "t.py::t", fn, "r")
    with pytest.raises(RuntimeError, match="not configured"):
        timing.measure(types.SimpleNamespace(stash=pytest.Stash()), "t.py::t", fn, "r")
    cuda, second, fn, calls = setup(use_graph=False)
    row = timing.measure(second, "t.py::t", fn, "r")
    assert _rows(tmp_path) == [row]  # the second request started its own timing.jsonl


@pytest.fixture
def nvml(monkeypatch):
    """nvml(mode=None): NVML for the plugin, the fake GPU's pynvml
    (tests/fakegpu/site/pynvml.py), with FAKEGPU_THROTTLE=mode."""
    def use(mode=None):
        spec = importlib.util.spec_from_file_location("pynvml", os.path.join(SITE, "pynvml.py"))
        fake = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fake)
        monkeypatch.setattr(_nvml, "_nvml", fake)
        if mode:
            monkeypatch.setenv("FAKEGPU_THROTTLE", mode)
        else:
            monkeypatch.delenv("FAKEGPU_THROTTLE", raising=False)
        return fake
    return use


def test_without_nvml_clocks_are_unknown_and_nothing_is_throttled(setup, monkeypatch):
    monkeypatch.setattr(_nvml, "_nvml", False)
    cuda, config, fn, calls = setup(use_graph=True)
    row = timing.measure(config, "t.py::t", fn, "r")
    assert row["clocks"] == {"after": None, "before": None, "during": None}
    assert row["throttle"] == {"attempts": 1, "first_sm_min_mhz": None, "floor_mhz": None, "rested_cool": [True],
                               "rested_ms": [0], "throttled": False}


def test_a_cool_device_is_sampled_during_the_row_and_not_throttled(setup, nvml):
    nvml()
    cuda, config, fn, calls = setup(use_graph=True)
    row = timing.measure(config, "t.py::t", fn, "r")
    during = row["clocks"]["during"]
    assert during["samples"] >= 2 and during["sm_min_mhz"] == during["sm_max_mhz"] == 1980
    assert row["clocks"]["before"] == {"mem_mhz": 2619, "sm_mhz": 1980}
    assert row["throttle"]["floor_mhz"] == 1782 and row["throttle"]["attempts"] == 1
    assert row["throttle"]["throttled"] is False and row["throttle"]["rested_cool"] == [True]


def test_a_throttled_row_is_measured_again_after_a_rest(setup, nvml):
    """first-row: the sampler's first sample is 1300 MHz (SwPowerCap): the row
    is measured again after at least RETRY_REST_S, and that attempt is kept."""
    nvml("first-row")
    cuda, config, fn, calls = setup(use_graph=False)
    row = timing.measure(config, "t.py::t", fn, "r")
    t = row["throttle"]
    assert t["attempts"] == 2 and t["first_sm_min_mhz"] == 1300 and t["throttled"] is False
    assert len(t["rested_ms"]) == 2 and t["rested_ms"][1] >= 1000 * _clocks.RETRY_REST_S
    assert row["clocks"]["during"]["sm_min_mhz"] == 1980
    assert len(calls) == 2 * (3 + 5 + 50 + 50 * 3)  # warmed, sized and timed twice


def test_a_row_still_throttled_is_marked(setup, nvml):
    nvml("always")
    cuda, config, fn, calls = setup(use_graph=True)
    row = timing.measure(config, "t.py::t", fn, "r")
    assert row["throttle"]["attempts"] == 2 and row["throttle"]["throttled"] is True
    assert row["clocks"]["during"]["sm_min_mhz"] == 1200


def test_a_hot_device_is_rested_before_the_row(setup, nvml):
    """hot: SwPowerCap and 690 W for the first 5 power reads: the rest before
    the row polls until they pass, and says so."""
    nvml("hot")
    cuda, config, fn, calls = setup(use_graph=False)
    row = timing.measure(config, "t.py::t", fn, "r")
    t = row["throttle"]
    assert t["attempts"] == 1 and t["rested_cool"] == [True]
    assert t["rested_ms"][0] >= 4 * 1000 * _clocks.PACE_POLL_S


def test_compile_only_pass_calls_each_row_as_its_warm_up_and_writes_nothing(setup, tmp_path, monkeypatch):
    """run --prescreen's screen phase: every row compiles and launches what it
    would time (the warm-up's calls, and one more through events for a caller
    that computes from the row), no row is rested, timed or written."""
    monkeypatch.setenv("CALIBER_PHASE", "screen")
    monkeypatch.setattr(_clocks, "pace", lambda *a, **k: pytest.fail("a compile-only row is not rested"))
    cuda, config, fn, calls = setup(use_graph=True)
    row = timing.measure(config, "t.py::t[float16]", fn, "8x8", shape="8x8", dtype="float16")
    assert len(calls) == _timing_rows.WARMUP_CALLS + 1
    assert row["samples_ns"] == [20000] and row["n_calls"] == 1 and row["timer"] == "direct"
    assert row["timer_reason"] == "compile-only pass: not timed"
    assert (tmp_path / "timing.jsonl").read_text() == ""
    with pytest.raises(ValueError):
        timing.measure(config, "t.py::t[float16]", fn, "8x8")
