#!/usr/bin/env python3
"""bench/kernel_time.py RUN [RUN...]: what the profiled replays of a run
(kernels.jsonl, issue 28) cost and how well they agree with the timing, read
from a run root's files (the figures bench/RESULTS.md reports).

- Cost: the host time of every profiled replay (kernels.jsonl wall_ns)
  against the cells' wall time (cell.json wall_ns, the device's time), in
  all, for the first replay of each session (the first profile session of
  a process also starts CUPTI) and for the others.
- Agreement: per task and cell, the profiled GPU time per call against the
  timed median over the same rows, as `caliber diff --format json` gives
  them (CALIBER names the binary, default ./caliber), and per kernel of
  matmul_bias_gelu and attention_fwd their share and time change.
- Joins: rows whose replay could not be joined to its variants."""

import glob
import json
import os
import statistics
import subprocess
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def cost(root):
    """Seconds of cell wall time, of profiled replays (all, first of each session, the rest), rows and unjoined."""
    cells = glob.glob(os.path.join(root, "tasks", "*", "cells", "*", "cell.json"))
    wall = sum(load(p).get("wall_ns", 0) for p in cells) / 1e9
    first, rest, rows, unjoined, errors = [], [], 0, 0, {}
    for path in sorted(glob.glob(os.path.join(root, "tasks", "*", "cells", "*", "kernels.jsonl"))):
        for i, line in enumerate(lines(path)):
            (first if i == 0 else rest).append(line["wall_ns"] / 1e9)
            rows += 1
            if line["error"]:
                unjoined += 1
                errors[line["error"].split(":")[0]] = errors.get(line["error"].split(":")[0], 0) + 1
    return len(cells), wall, first, rest, rows, unjoined, errors


def agreement(root, caliber):
    """(task, cell, profiled / timed) for every profiled cell, and the diff's tasks."""
    out = subprocess.run([caliber, "diff", root, "--format", "json"], check=True, capture_output=True, text=True)
    tasks = json.loads(out.stdout)["tasks"]
    ratios = []
    for t in tasks:
        time = t.get("time") or {}
        for role, c in (time.get("cells") or {}).items():
            if c and c["timed_ns"]:
                ratios.append((t["task"], role, c["gpu_ns"] / c["timed_ns"]))
    return ratios, tasks


def show_kernels(task):
    """Per measured kernel of a task: its share in each cell and its time change."""
    for k in task["kernels"]:
        time = k.get("time") or {}
        b, c = time.get("baseline"), time.get("candidate")
        res = k.get("resources") or {}
        rb, rc = res.get("baseline") or {}, res.get("candidate") or {}
        change = f"{100 * (c['ns'] / b['ns'] - 1):+.1f} %" if b and c and b["ns"] else "?"
        print(f"    {task['task']} {k['kernel']}: share {b and b['share_ppm'] / 1e4}% -> {c and c['share_ppm'] / 1e4}%,"
              f" {b and b['ns'] / 1e3} -> {c and c['ns'] / 1e3} us ({change}), converts {k['cells']['baseline'] and k['cells']['baseline']['count']}"
              f" -> {k['cells']['candidate'] and k['cells']['candidate']['count']}, regs {rb.get('n_regs')} -> {rc.get('n_regs')},"
              f" stages {rb.get('num_stages')} -> {rc.get('num_stages')}")


def main(roots):
    caliber = os.environ.get("CALIBER", "./caliber")
    for root in roots:
        ncells, wall, first, rest, rows, unjoined, errors = cost(root)
        spent = sum(first) + sum(rest)
        print(f"{root}: {ncells} cells, {wall:.1f} s of cell wall time; {rows} profiled replays, {spent:.1f} s"
              f" ({100 * spent / wall if wall else 0:.2f} % of the cell wall time)")
        if first:
            print(f"  first replay of each of {len(first)} sessions: {sum(first):.1f} s, median {statistics.median(first):.3f} s,"
                  f" max {max(first):.3f} s")
        if rest:
            print(f"  the other {len(rest)} replays: {sum(rest):.1f} s, median {1000 * statistics.median(rest):.1f} ms")
        print(f"  unjoined replays: {unjoined}" + (f" ({errors})" if errors else ""))
        ratios, tasks = agreement(root, caliber)
        if ratios:
            values = [r for _, _, r in ratios]
            print(f"  profiled GPU time / timed median, per task and cell: min {100 * min(values):.1f} %,"
                  f" median {100 * statistics.median(values):.1f} %, max {100 * max(values):.1f} % over {len(values)}")
            for task, role, r in sorted(ratios, key=lambda x: abs(1 - x[2]), reverse=True)[:5]:
                print(f"    farthest: {task} {role} {100 * r:.1f} %")
        for t in tasks:
            if t["task"] in ("matmul_bias_gelu", "attention_fwd"):
                show_kernels(t)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
