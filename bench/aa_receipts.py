#!/usr/bin/env python3
"""bench/aa_receipts.py RUN...: identical-code intervals from task receipts,
sealed or not (a run stopped by its deadline holds fixed task receipts for
the tasks it finished). For each timed order of each task: the control
against the baseline (an A/A in every campaign) and, with --all-aa (a run
whose three cells compiled the same code), the candidate against the
baseline too. Prints per run how many of those intervals exclude zero, the
share, its 95 % Wilson interval, and the median interval width."""

import glob
import json
import math
import os
import sys


def wilson(k, n, z=1.96):
    """The 95 % Wilson score interval of k successes in n, as shares."""
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def intervals(run, all_aa):
    """(name, lo_ppm, hi_ppm) of every identical-code interval of run's task receipts."""
    out = []
    for path in sorted(glob.glob(os.path.join(run, "tasks", "*", "task.json"))):
        task = json.load(open(path))
        for order, o in sorted(task.get("orders", {}).items()):
            if not isinstance(o, dict) or not o.get("present"):
                continue
            out.append((f"{task['task']} {order} control", o["aa_lo_ppm"], o["aa_hi_ppm"]))
            if all_aa:
                out.append((f"{task['task']} {order} candidate", o["lo_ppm"], o["hi_ppm"]))
    return out


def main(argv):
    all_aa = "--all-aa" in argv
    for run in [a for a in argv if a != "--all-aa"]:
        ivs = intervals(run, all_aa)
        k = sum(1 for _, lo, hi in ivs if lo > 0 or hi < 0)
        lo, hi = wilson(k, len(ivs))
        widths = sorted(hi_ - lo_ for _, lo_, hi_ in ivs)
        med = widths[len(widths) // 2] if widths else 0
        print(f"{run}: {k} of {len(ivs)} identical-code intervals exclude zero "
              f"({100 * k / max(1, len(ivs)):.1f} %, 95 % Wilson {100 * lo:.1f}-{100 * hi:.1f} %); "
              f"median width {med / 1e4:.2f} %")
        for name, lo_, hi_ in ivs:
            if lo_ > 0 or hi_ < 0:
                print(f"  excludes zero: {name} [{lo_ / 1e4:+.2f} %, {hi_ / 1e4:+.2f} %]")


if __name__ == "__main__":
    main(sys.argv[1:])
