#!/usr/bin/env python3
"""bench/aa_table.py [RUN...]: the A/A table of bench/RESULTS.md.

For each run (by default every campaigns/*/runs/*/ of the repository), what
identical code gave: of the orders that have an interval, how many
control-vs-baseline intervals exclude zero (aa_lo_ppm > 0 or aa_hi_ppm < 0 in
its task receipts; docs/formats.md, "Statistics"), against the nominal share,
1 - confidence, with how the run sampled the process level (the campaign
receipt's worker mode, the sessions of its task receipts). Prints a Markdown
table, to be pasted into bench/RESULTS.md whenever a run is committed.

    bench/aa_table.py --line RUN   only RUN's A/A line, as `caliber report` and
                                   the verdict matrix write it
"""

import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    with open(path) as f:
        return json.load(f)


def share(ppm):
    """"5 %", "2.5 %": a share in ppm as the A/A line writes it."""
    h = (ppm + 50) // 100
    if h % 100 == 0:
        return f"{h // 100} %"
    if h % 10 == 0:
        return f"{h // 100}.{h // 10 % 10} %"
    return f"{h // 100}.{h % 100:02d} %"


def facts(run):
    """What the table says of one run, from its receipts."""
    camp = load(os.path.join(run, "campaign.json"))
    excluding = intervals = 0
    sessions = set()
    confidence = None
    for entry in camp["tasks"]:
        task = load(os.path.join(run, "tasks", entry["id"], "task.json"))
        if confidence is None:
            confidence = task["thresholds"]["confidence_ppm"]
        for order in task["orders"].values():
            if not order["present"]:
                continue
            intervals += 1
            excluding += order["aa_lo_ppm"] > 0 or order["aa_hi_ppm"] < 0
            sessions.update(order.get("sessions", {"baseline": 1}).values())
    worker = camp.get("worker", {})
    th = camp.get("thresholds", {})
    return {
        "run": os.path.relpath(run, ROOT) if run.startswith(ROOT) else run,
        "workers": worker.get("mode", "?"),
        "sessions": "-" if not sessions else f"{min(sessions)}" if len(sessions) == 1
        else f"{min(sessions)}-{max(sessions)}",
        "thresholds": f"{th.get('gain_ppm', 0) / 1e4:+.2f} / {th.get('regression_ppm', 0) / 1e4:+.2f} %",
        "excluding": excluding, "intervals": intervals,
        "nominal": share(1000000 - (confidence or 0)),
    }


def line(f):
    return (f"A/A: {f['excluding']} of {f['intervals']} control-vs-baseline intervals exclude zero "
            f"(nominal {f['nominal']})")


def main(argv):
    if argv[:1] == ["--line"]:
        print(line(facts(os.path.abspath(argv[1]))))
        return 0
    runs = [os.path.abspath(r) for r in argv] or sorted(
        p.rstrip("/") for p in glob.glob(os.path.join(ROOT, "campaigns", "*", "runs", "*", "")))
    print("| run | workers | sessions per cell and order | gain / regression | "
          "A/A: control-vs-baseline intervals excluding zero | share (nominal) |")
    print("|---|---|---|---|---|---|")
    for run in runs:
        f = facts(run)
        rate = f"{100 * f['excluding'] / f['intervals']:.0f} %" if f["intervals"] else "-"
        print(f"| `{f['run']}` | {f['workers']} | {f['sessions']} | {f['thresholds']} | "
              f"{f['excluding']} of {f['intervals']} | {rate} ({f['nominal']}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
