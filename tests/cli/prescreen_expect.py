"""prescreen_expect.py HISTORY MATRIX: the lines `caliber prepare --prescreen
--history HISTORY` is expected to print for the frozen task matrix MATRIX,
computed from HISTORY's receipts (tests/cli/t0310-prepare-prescreen.sh): each
task's row, the total row, and the four "prepare: prescreen:" lines. The
rules are docs/formats.md's ("Deadlines and expected times"): a task the
history holds with the same selections costs its task.json wall_ns (else its
cells') without the pre-screen; with it, one identical by construction
(identity.identical, or code identical-binaries) costs its correctness and
screen cells, a changed one its full time; a task the history does not hold
(changed_ms + screened_ms) / known, which is p x the changed mean + (1-p) x
the screened mean; every figure in whole ms, cells summed after dividing
each cell's ns by 10^6, as caliber does."""
import json
import os
import sys


def fmt(s):
    if s >= 3600:
        return "%dh%02dm%02ds" % (s // 3600, s // 60 % 60, s % 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


def fmt_ms(ms):
    return "-" if ms is None or ms < 0 else fmt(ms // 1000)


def history(root):
    run = json.load(open(os.path.join(root, "campaign.json")))
    matrix = {t["id"]: t for t in json.load(open(os.path.join(root, "task-matrix.json")))["tasks"]}
    tasks = {}
    for entry in run["tasks"]:
        tid = entry["id"]
        tdir = os.path.join(root, "tasks", tid)
        tj = json.load(open(os.path.join(tdir, "task.json")))
        phase = {}
        cells = os.path.join(tdir, "cells")
        for c in sorted(os.listdir(cells)) if os.path.isdir(cells) else []:
            cj = json.load(open(os.path.join(cells, c, "cell.json")))
            if "wall_ns" in cj:
                phase[cj["phase"]] = phase.get(cj["phase"], 0) + cj["wall_ns"] // 1000000
        ms = tj["wall_ns"] // 1000000 if "wall_ns" in tj else (sum(phase.values()) if phase else None)
        tasks[tid] = {
            "ms": ms, "from": "task.json wall_ns" if "wall_ns" in tj else "cells' wall_ns",
            "identical": tj.get("identity", {}).get("identical") is True or tj["code"] == "identical-binaries",
            "screened": phase.get("correctness", 0) + phase.get("screen", 0), "screen": "screen" in phase,
            "args": (matrix[tid].get("benchmark_args"), matrix[tid].get("correctness_args")),
        }
    return tasks


def main(hist_root, matrix_path):
    h = history(hist_root)
    known = [t for t in h.values() if t["ms"] is not None]
    changed = [t for t in known if not t["identical"]]
    ident = [t for t in known if t["identical"]]
    changed_ms = sum(t["ms"] for t in changed)
    screened_ms = sum(t["screened"] for t in ident)
    share_with = (changed_ms + screened_ms) // len(known) if known else None
    share_whole = sum(t["ms"] for t in known) // len(known) if known else None
    mx = json.load(open(matrix_path))
    count = {"identical": 0, "changed": 0, "share": 0, "none": 0}
    screened = expected = nexpected = whole = with_ = 0
    out = []
    for t in mx["tasks"]:
        ht = h.get(t["id"])
        if ht is None:
            miss = "not in the history run"
        elif ht["args"] != (t.get("benchmark_args"), t.get("correctness_args")):
            miss = "the history run selected it differently"
        elif ht["ms"] is None:
            miss = "no wall time in the history run"
        else:
            miss = None
        if miss is None:
            basis = "identical" if ht["identical"] else "changed"
            e, p = ht["ms"], ht["screened"] if ht["identical"] else ht["ms"]
            expected += e
            nexpected += 1
            whole += e
            words = ("identical: correctness + screen" if ht["screen"] else "identical: correctness") \
                if ht["identical"] else "changed: full time"
            screened += ht["identical"] and ht["screen"]
            from_, ecol = ht["from"], fmt_ms(e)
        elif known:
            basis, p, words, from_, ecol = "share", share_with, "estimated from the history's share", miss, "-"
            whole += share_whole
        else:
            basis, p, words, from_, ecol = "none", None, "nothing to estimate from", miss, "-"
        count[basis] += 1
        with_ += p or 0
        out.append("  %-28s %7ds %12s %12s %12s %14s  %s; %s" % (
            t["id"], t["timeout_s"], fmt(t["budget_s"]), ecol, fmt_ms(p), fmt(t["budget_worst_s"]), from_, words))
    out.append("  %-28s %8s %12s %12s %12s %14s" % (
        "total", "", fmt(sum(t["budget_s"] for t in mx["tasks"])), fmt(expected // 1000), fmt_ms(with_),
        fmt(sum(t["budget_worst_s"] for t in mx["tasks"]))))
    n = len(mx["tasks"])
    if known:
        out.append("prepare: prescreen: share of changed tasks in the history: %d of %d (%.1f%%)"
                   % (len(changed), len(known), 100.0 * len(changed) / len(known)))
    else:
        out.append("prepare: prescreen: share of changed tasks in the history: none of its %d tasks has a time" % len(h))
    out.append("prepare: prescreen: %d identical by construction (their correctness cells, and their screen cells for"
               " the %d of them the history screened), %d changed (full time), %d estimated from the history's share,"
               " %d with nothing to estimate from" % (count["identical"], screened, count["changed"], count["share"],
                                                     count["none"]))
    if known:
        out.append("prepare: prescreen: estimated from the history's share: %d/%d x %s + %d/%d x %s = %s a task"
                   " (without --prescreen %s)" % (
                       len(changed), len(known), fmt_ms(changed_ms // len(changed) if changed else -1),
                       len(ident), len(known), fmt_ms(screened_ms // len(ident) if ident else -1),
                       fmt_ms(share_with), fmt_ms(share_whole)))
    out.append("prepare: prescreen: expected without --prescreen %s, with --prescreen %s (%d of %d tasks)"
               % (fmt_ms(whole), fmt_ms(with_), n - count["none"], n))
    print("\n".join(out))


if __name__ == "__main__":
    main(*sys.argv[1:])
