"""Timer settings and timing rows (docs/formats.md, timing.jsonl), without torch."""

import json

from ._common import check_integers, dtype_name

# Used when CALIBER_TIMER is absent (a benchmark run by hand, outside caliber).
DEFAULT_TIMER = {"warmup_ms": 25, "rep_ms": 100, "repeats": 10}
DEFAULT_THROTTLE_FLOOR = 0.9  # the manifest's timer.throttle_floor when it leaves it out
MAX_CALLS = 5000  # bound on calls per repetition, so a graph never holds more launches
WARMUP_CALLS = 3  # direct calls before anything is timed: compile, then warm


def parse_timer(text):
    """warmup_ms, rep_ms and repeats from CALIBER_TIMER (the manifest's timer object)."""
    timer = json.loads(text) if text and text.strip() else {}
    if not isinstance(timer, dict):
        raise ValueError("CALIBER_TIMER must be a JSON object")
    out = {}
    for key, default in DEFAULT_TIMER.items():
        value = timer.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if key == "warmup_ms" else 1):
            raise ValueError(f"CALIBER_TIMER.{key}: {value!r} is not a valid integer")
        out[key] = value
    out["graph_capture"] = timer.get("graph_capture", "auto")
    floor = timer.get("throttle_floor", DEFAULT_THROTTLE_FLOOR)
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 < floor <= 1:
        raise ValueError(f"CALIBER_TIMER.throttle_floor: {floor!r} is not a share in (0, 1]")
    out["throttle_floor"] = float(floor)
    return out


def graph_decision(env_value, timer):
    """(use_graph, reason when not): CALIBER_GRAPH_CAPTURE=1 asks for graphs; else the
    reason names what turned them off."""
    if env_value == "1":
        return True, None
    if timer.get("graph_capture") == "off":
        return False, "timer.graph_capture is off"
    if env_value == "0":
        return False, "backend has no graph capture"
    return False, "CALIBER_GRAPH_CAPTURE is not set"


def load_plan(path):
    """{row: (timer, timer_reason)} of the timing.jsonl at path (the cell's first
    session), or None when path is empty; raises OSError or ValueError."""
    if not path:
        return None
    plan = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            row = json.loads(line)
            if not isinstance(row, dict) or row.get("timer") not in ("graph", "direct") or "row" not in row:
                raise ValueError(f"{path}:{n}: not a timing row")
            plan[row["row"]] = (row["timer"], row.get("timer_reason"))
    return plan


def planned(plan, key):
    """The (timer, reason) the plan gives row key; None without a plan. A row
    the first session did not time has no plan and is timed as usual."""
    return plan.get(key) if plan is not None else None


def choose_calls(per_call_ms, budget_ms):
    """How many calls fill budget_ms at per_call_ms each: at least 1, at most MAX_CALLS."""
    if per_call_ms <= 0:
        return MAX_CALLS
    return max(1, min(MAX_CALLS, int(round(budget_ms / per_call_ms))))


def samples_ns(elapsed_ms, n_calls):
    """Per-call mean of each repetition in integer nanoseconds, from event times in ms."""
    return [int(round(ms * 1e6 / n_calls)) for ms in elapsed_ms]


def row_id(nodeid, label):
    """The row key shared by all cells: pytest node id, '|', the test's row label."""
    if "|" in nodeid or "\n" in label or not label:
        raise ValueError(f"row label {label!r} of {nodeid} cannot form a row key")
    return f"{nodeid}|{label}"


def make_row(nodeid, label, samples, timer, timer_reason, n_calls, shape=None, dtype=None,
             clocks_before=None, clocks_after=None, clocks_during=None, throttle=None, extra=None):
    """One timing.jsonl object; raises ValueError if anything but integers would be written.
    clocks_during is what the clock sampler saw while the row ran, throttle
    how the row was paced and whether it ran throttled (docs/formats.md)."""
    if timer not in ("graph", "direct"):
        raise ValueError(f"timer must be graph or direct, not {timer!r}")
    if not samples or not all(isinstance(s, int) and s >= 0 for s in samples):
        raise ValueError(f"samples_ns must be non-negative integers: {samples!r}")
    row = {
        "clocks": {"after": clocks_after, "before": clocks_before, "during": clocks_during},
        "dtype": dtype_name(dtype),
        "n_calls": int(n_calls),
        "row": row_id(nodeid, label),
        "samples_ns": list(samples),
        "shape": shape,
        "timer": timer,
        "timer_reason": timer_reason,
    }
    if throttle is not None:
        row["throttle"] = throttle
    if extra is not None:
        row["extra"] = extra
    check_integers(row, "timing row")
    return row
