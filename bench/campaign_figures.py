#!/usr/bin/env python3
"""bench/campaign_figures.py RUN [RUN...]: the figures bench/RESULTS.md reports,
read from a run root's receipts (sealed or stopped): device wall time and how
it splits by phase, the first request of each worker process (process start,
imports and first compiles) apart; per task the topology and the speedup with
its interval in each order, with the A/A band (control against baseline)
where the run has one; the verdict counts, the median interval half-width
and, for an A/A run, how many intervals of identical cells exclude zero."""

import glob
import json
import os
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def request_costs(root):
    """Per request (cell receipt) the medians of its wall time, of its reply
    time (reply_ns: request sent to reply; absent in runs made before it),
    of what followed the reply (the worker's exit, the cell's check) and of
    the time pytest itself reported in worker.log ("in 1.00s"), by phase;
    a line each."""
    rows = {}
    for path in glob.glob(os.path.join(root, "tasks", "*", "cells", "*", "cell.json")):
        c = load(path)
        with open(os.path.join(os.path.dirname(path), "worker.log"), errors="replace") as f:
            said = re.findall(r" in ([0-9.]+)s", f.read())
        kind = c["phase"] + (" s1" if c.get("session", 1) == 1 else " s2+")
        rows.setdefault(kind, []).append((c["wall_ns"] / 1e9, c.get("reply_ns"), float(said[-1]) if said else None))
    for kind in sorted(rows):
        r = rows[kind]
        med = lambda xs: f"{statistics.median(xs):.2f} s" if xs else "-"
        replies = [x[1] / 1e9 for x in r if x[1] is not None]
        after = [x[0] - x[1] / 1e9 for x in r if x[1] is not None]
        print(f"  {kind:16} {len(r):4} requests: wall {med([x[0] for x in r])}, reply {med(replies)},"
              f" after the reply {med(after)}, pytest said {med([x[2] for x in r if x[2] is not None])}")


def figures(root):
    cells = [load(p) for p in glob.glob(os.path.join(root, "tasks", "*", "cells", "*", "cell.json"))]
    run = load(os.path.join(root, "run.json"))
    by_phase, first, rest = {}, 0, 0
    for c in cells:
        s = c["wall_ns"] / 1e9
        by_phase[c["phase"]] = by_phase.get(c["phase"], 0) + s
        if c["worker"]["fresh"]:
            first += s
        else:
            rest += s
    total = sum(by_phase.values())
    print(f"{root}: {len(cells)} cells, {len(glob.glob(os.path.join(root, 'tasks', '*', 'task.json')))} tasks"
          f" with receipts, {len(run['invocations'])} invocation(s), worker mode {cells[0]['worker']['mode']}")
    print(f"  cell wall {total:.1f} s: " + ", ".join(f"{p} {by_phase[p]:.1f} s" for p in sorted(by_phase)))
    print(f"  requests that started a worker process: {first:.1f} s (process start, imports, first compiles);"
          f" the others: {rest:.1f} s")
    request_costs(root)
    tasks = sorted((load(p) for p in glob.glob(os.path.join(root, "tasks", "*", "task.json"))), key=lambda t: t["index"])
    widths, apart, aa_apart, orders = [], 0, 0, 0
    for t in tasks:
        topo = t["topology"]
        tb = "/".join(str(topo[r].get("scoped")) for r in ("baseline", "control", "candidate"))
        parts = []
        for o in ("a", "b"):
            x = t["orders"][o]
            if x["present"]:
                if "aa_lo_ppm" in x:
                    aa = (f"A/A {x['aa_speedup_ppm'] / 1e4:+.2f}% [{x['aa_lo_ppm'] / 1e4:+.2f},"
                          f" {x['aa_hi_ppm'] / 1e4:+.2f}]")
                    aa_apart += x["aa_lo_ppm"] > 0 or x["aa_hi_ppm"] < 0
                else:
                    aa = f"A/A {x['aa_ppm'] / 1e4:.2f}%"
                parts.append(f"{o} {x['speedup_ppm'] / 1e4:+.2f}% [{x['lo_ppm'] / 1e4:+.2f}, {x['hi_ppm'] / 1e4:+.2f}]"
                             f" {aa} ({x['timer']})")
                widths.append((x["hi_ppm"] - x["lo_ppm"]) / 2e4)
                apart += x["lo_ppm"] > 0 or x["hi_ppm"] < 0
                orders += 1
        print(f"  {t['task']:18} {t['verdict']} {tb:8} " + "; ".join(parts))
    verdicts = [t["verdict"] for t in tasks]
    print(f"  verdicts: " + ", ".join(f"{v} {verdicts.count(v)}" for v in "GCBRKX" if verdicts.count(v)))
    if widths:
        print(f"  interval half-width: median {statistics.median(widths):.3f}%, max {max(widths):.3f}%")
        print(f"  intervals excluding zero: candidate vs baseline {apart} of {orders},"
              f" control vs baseline (A/A band) {aa_apart} of {orders}")


for r in sys.argv[1:]:
    figures(r)
