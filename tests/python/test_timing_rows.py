"""Timer settings and the assembly of timing.jsonl rows."""

import json

import pytest

from caliber_pytest import _timing_rows
from caliber_pytest._common import dumps_line


def test_timer_from_manifest_and_defaults():
    timer = _timing_rows.parse_timer('{"kind":"native-event","graph_capture":"auto","warmup_ms":10,'
                                     '"rep_ms":50,"repeats":5}')
    assert timer == {"graph_capture": "auto", "rep_ms": 50, "repeats": 5, "throttle_floor": 0.9, "warmup_ms": 10}
    assert _timing_rows.parse_timer("") == dict(_timing_rows.DEFAULT_TIMER, graph_capture="auto", throttle_floor=0.9)
    assert _timing_rows.parse_timer('{"throttle_floor": 0.75, "sessions": 4}')["throttle_floor"] == 0.75
    for floor in ("0", "1.5", "true", '"high"'):
        with pytest.raises(ValueError, match="throttle_floor"):
            _timing_rows.parse_timer('{"throttle_floor": %s}' % floor)
    with pytest.raises(ValueError):
        _timing_rows.parse_timer('{"repeats": 0}')
    with pytest.raises(ValueError):
        _timing_rows.parse_timer('{"rep_ms": 1.5}')


def test_graph_decision_says_why_not():
    assert _timing_rows.graph_decision("1", {"graph_capture": "auto"}) == (True, None)
    assert _timing_rows.graph_decision("0", {"graph_capture": "off"}) == (False, "timer.graph_capture is off")
    assert _timing_rows.graph_decision("0", {"graph_capture": "auto"}) == (False, "backend has no graph capture")


def test_calls_fill_the_budget():
    assert _timing_rows.choose_calls(0.02, 10) == 500
    assert _timing_rows.choose_calls(50.0, 10) == 1
    assert _timing_rows.choose_calls(0.0, 10) == _timing_rows.MAX_CALLS
    assert _timing_rows.choose_calls(1e-6, 10) == _timing_rows.MAX_CALLS


def test_samples_are_integer_nanoseconds_per_call():
    assert _timing_rows.samples_ns([1.0405, 1.0395], 50) == [20810, 20790]


def test_row_line_is_the_documented_object():
    before = {"mem_mhz": 3201, "sm_mhz": 1980}
    row = _timing_rows.make_row("benchmark/test_softmax_perf.py::test_perf_softmax_rows[float16]", "4096x4096",
                                [20811, 20790, 20805], "graph", "captured", 50, shape="4096x4096",
                                dtype="torch.float16", clocks_before=before, clocks_after=before,
                                clocks_during={"reasons": 0, "samples": 4, "sm_max_mhz": 1980, "sm_min_mhz": 1965},
                                throttle={"attempts": 1, "first_sm_min_mhz": 1965, "floor_mhz": 1782,
                                          "rested_cool": [True], "rested_ms": [0], "throttled": False})
    line = dumps_line(row)
    assert line.endswith("}\n") and line.count("\n") == 1
    assert list(json.loads(line)) == sorted(json.loads(line))
    assert json.loads(line) == {
        "clocks": {"after": before, "before": before,
                   "during": {"reasons": 0, "samples": 4, "sm_max_mhz": 1980, "sm_min_mhz": 1965}},
        "dtype": "float16", "n_calls": 50,
        "row": "benchmark/test_softmax_perf.py::test_perf_softmax_rows[float16]|4096x4096",
        "samples_ns": [20811, 20790, 20805], "shape": "4096x4096",
        "throttle": {"attempts": 1, "first_sm_min_mhz": 1965, "floor_mhz": 1782, "rested_cool": [True],
                     "rested_ms": [0], "throttled": False},
        "timer": "graph", "timer_reason": "captured"}


def test_rows_without_clocks_and_with_extra():
    row = _timing_rows.make_row("t.py::t", "do_bench#1", [5], "direct", "backend has no graph capture", 3,
                                extra={"latency_base_ns": 7})
    assert row["clocks"] == {"after": None, "before": None, "during": None} and row["extra"] == {"latency_base_ns": 7}
    assert "throttle" not in row


@pytest.mark.parametrize("kwargs", [{"samples": [1.5]}, {"samples": []}, {"timer": "wall"},
                                    {"extra": {"ratio": 0.5}}, {"label": "a\nb"}])
def test_bad_rows_are_refused(kwargs):
    args = dict(nodeid="t.py::t", label="r", samples=[1], timer="graph", timer_reason="captured", n_calls=1)
    args.update(kwargs)
    with pytest.raises(ValueError):
        _timing_rows.make_row(**args)
