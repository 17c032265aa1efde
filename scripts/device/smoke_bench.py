"""Run one op's benchmark test through all caliber plugins with a quick timer,
then check what a campaign relies on:

    python3 scripts/device/smoke_bench.py OP CELL_DIR

- every row of the test (inventory dtypes x default shapes) has a timing row;
- the launch index joins: every variant has its .ttgir and .json under ir/;
- the launch floor of 1 separates input building from the operator: every
  _fill_random variant is launched exactly once, every other launched variant
  more than once.
Runs pytest in a child process from ops/, as a worker would (cwd = corpus)."""

import csv
import json
import os
import subprocess
import sys

from worker import OPS, PLUGINS, REPO

TIMER = {"graph_capture": "auto", "kind": "native-event", "rep_ms": 2, "repeats": 2, "warmup_ms": 0}


def _inventory_row(op):
    with open(os.path.join(OPS, "inventory_main.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if row["op"] == op:
                return row
    sys.exit(f"smoke_bench: {op} is not in the inventory")


def main(op, cell_dir):
    row = _inventory_row(op)
    os.makedirs(cell_dir, exist_ok=True)
    env = dict(os.environ, CALIBER_CELL_DIR=cell_dir, CALIBER_TASK=op, CALIBER_CELL="smoke", CALIBER_ROLE="baseline",
               CALIBER_PHASE="a", CALIBER_AUTOTUNE_MODE="record",
               CALIBER_AUTOTUNE_FILE=os.path.join(cell_dir, "autotune.jsonl"), CALIBER_DTYPES=row["dtypes"],
               CALIBER_SHAPES="{}", CALIBER_TIMER=json.dumps(TIMER), CALIBER_GRAPH_CAPTURE="1", CALIBER_CORPUS=OPS,
               PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), OPS]))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    argv += [a for p in PLUGINS for a in ("-p", p)]
    argv.append(f"{row['benchmark_file']}::{row['benchmark_test']}")
    if subprocess.run(argv, cwd=OPS, env=env).returncode != 0:
        sys.exit(f"smoke_bench: {op}: pytest failed")

    problems = []
    with open(os.path.join(cell_dir, "timing.jsonl")) as f:
        timings = [json.loads(line) for line in f]
    dtypes = {t["dtype"] for t in timings}
    if dtypes != set(row["dtypes"].split(";")):
        problems.append(f"timed dtypes {sorted(dtypes)} are not the inventory's {row['dtypes']}")
    for t in timings:
        print(f"{t['row']}: {t['timer']} ({t['timer_reason']}) n_calls={t['n_calls']} "
              f"median_ns={sorted(t['samples_ns'])[len(t['samples_ns']) // 2]}")
    with open(os.path.join(cell_dir, "ir", "index.tsv"), newline="") as f:
        index = list(csv.DictReader(f, delimiter="\t"))
    for r in index:
        launches = int(r["launches"])
        for suffix in (".ttgir", ".json"):
            if not os.path.isfile(os.path.join(cell_dir, "ir", r["variant"], r["kernel"] + suffix)):
                problems.append(f"{r['variant']}/{r['kernel']}{suffix} is missing")
        if r["kernel"] == "_fill_random" and launches != 1:
            problems.append(f"input build {r['variant']} launched {launches} times")
        if r["kernel"] != "_fill_random" and launches == 1:
            problems.append(f"{r['kernel']} {r['variant']} launched once: the floor would drop it")
    fills = sum(r["kernel"] == "_fill_random" for r in index)
    if fills != len(timings):
        problems.append(f"{fills} input builds for {len(timings)} rows")
    print(f"{op}: {len(timings)} rows, {len(index)} variants, {fills} input builds")
    if problems:
        sys.exit(f"smoke_bench: {op}: " + "; ".join(problems))


if __name__ == "__main__":
    main(*sys.argv[1:])
