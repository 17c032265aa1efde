#!/usr/bin/env python3
"""bench/power.py AA_RUN: the power curve of a campaign's statistics, from
an A/A run (every cell compiles the same code, scripts/device/aa_manifest.py).

For each task and order, a real effect e injected into the candidate (every
candidate sample divided by 1 + e) multiplies every bootstrap resample's
1 + speedup by exactly 1 + e (row medians scale with the samples, and the
geometric mean with them), so with the same seed the interval becomes
[(1 + lo)(1 + e) - 1, (1 + hi)(1 + e) - 1] (tests/unit/test_stats.c,
injected_effect_shifts_the_interval, checks this against cb_speedup's own
resampling), and the A/A band (control vs
baseline) stays as measured. The effect is called a stable gain when that
interval's lower end clears both the gain threshold and the band's upper
end (docs/design.md section 10). Prints, per threshold and effect, the share of the
run's timed orders that would be called stable, and the same with the
effect's sign reversed (a regression) against -threshold; then per
threshold the false calls (no effect called stable) and the smallest effect
called stable in at least 80 % of the orders, both ways.

It reads only the task receipts' intervals, so it reads runs of any worker
mode and any number of sessions; it says first what the intervals rest on
(the campaign receipt's worker mode and the sessions of each timed order).
In a run whose sessions adapted (timer.max_sessions), the figures are for
the sessions this A/A run had: a real effect near a threshold would have
been given more sessions than the A/A gave it, so they are, if anything,
short of what such a campaign calls."""

import glob
import json
import os
import sys

EFFECTS = (0.005, 0.01, 0.02, 0.05)
THRESHOLDS = (0.0, 0.0025, 0.005, 0.01)
# The effects searched for the smallest one called stable in POWER of the
# orders: 0.1 % to 5 % in steps of 0.1 %.
SEARCH = tuple(k / 1000 for k in range(1, 51))
POWER = 0.8


def orders(root):
    """(lo, hi, aa_lo, aa_hi) of every timed order of every task."""
    out = []
    for path in sorted(glob.glob(os.path.join(root, "tasks", "*", "task.json"))):
        with open(path) as f:
            task = json.load(f)
        for o in task["orders"].values():
            if o["present"]:
                out.append(tuple(o[k] / 1e6 for k in ("lo_ppm", "hi_ppm", "aa_lo_ppm", "aa_hi_ppm")))
    return out


def sampled(root):
    """What the intervals rest on: the worker mode and the fewest and most
    sessions a cell had in a timed order (1 in runs sealed before sessions)."""
    with open(os.path.join(root, "campaign.json")) as f:
        worker = json.load(f).get("worker", {})
    seen = set()
    for path in glob.glob(os.path.join(root, "tasks", "*", "task.json")):
        with open(path) as f:
            for o in json.load(f)["orders"].values():
                if o["present"]:
                    seen.update(o.get("sessions", {"baseline": 1}).values())
    unit = worker.get("session_unit") or {"isolate": "worker-process"}.get(worker.get("mode"),
                                                                          "session-in-persistent-process")
    span = "-" if not seen else str(min(seen)) if len(seen) == 1 else f"{min(seen)}-{max(seen)}"
    return f"workers {worker.get('mode', '?')} (outer level: {unit}), {span} sessions a cell and order"


def called(order, effect, threshold):
    """Whether effect injected into order is called stable (gain for
    effect > 0, regression for effect < 0) at +-threshold."""
    lo, hi, aa_lo, aa_hi = order
    lo, hi = (1 + lo) * (1 + effect) - 1, (1 + hi) * (1 + effect) - 1
    if effect > 0:
        return lo >= threshold and lo > aa_hi
    return hi <= -threshold and hi < aa_lo


def main():
    data = orders(sys.argv[1])
    print(f"{sys.argv[1]}: {len(data)} timed orders; {sampled(sys.argv[1])}")
    print("threshold  " + "  ".join(f"effect {100 * e:.1f}% gain/regr" for e in EFFECTS))
    for t in THRESHOLDS:
        cells = []
        for e in EFFECTS:
            g = sum(called(o, e, t) for o in data) / len(data)
            r = sum(called(o, -e / (1 + e), t) for o in data) / len(data)
            cells.append(f"{100 * g:10.0f}% / {100 * r:3.0f}%")
        print(f"{100 * t:8.2f}%  " + "  ".join(cells))
    print("no effect (false calls, gain or regression): " + ", ".join(
        f"{sum(called(o, 1e-12, t) or called(o, -1e-12, t) for o in data)} of {len(data)} at {100 * t:.2f}%"
        for t in THRESHOLDS))
    for t in THRESHOLDS:
        smallest = []
        for sign in (1, -1):
            hit = [e for e in SEARCH
                   if sum(called(o, e if sign > 0 else -e / (1 + e), t) for o in data) >= POWER * len(data)]
            smallest.append(f"{100 * hit[0]:.1f}%" if hit else f"above {100 * SEARCH[-1]:.0f}%")
        false = sum(called(o, 1e-12, t) or called(o, -1e-12, t) for o in data)
        print(f"threshold {100 * t:.2f}%: {false} false call{'' if false == 1 else 's'} in {len(data)} orders; "
              f"the smallest effect called stable in >= {100 * POWER:.0f}% of them: {smallest[0]} gain, "
              f"{smallest[1]} regression")


if __name__ == "__main__":
    main()
