"""Test workers for the runner (no GPU, no torch, no pytest run).

They speak caliber's worker session protocol (docs/formats.md): one JSON
request per line on stdin, one JSON reply per request on fd CALIBER_REPLY_FD,
EOF ends the session. Instead of running pytest they write what the plugins
would have written for that cell, from DATA/cells.json and the real TTGIR
fixtures in tests/data/ttgir/: ir/<variant>/<kernel>.ttgir and .json,
ir/index.tsv, timing.jsonl and autotune.jsonl. Each named worker in this
folder misbehaves in one way on one task (argument TASK), to exercise one
path of the runner:

    replay.py DATA                 every cell as recorded
    hang.py DATA TASK              hangs in the candidate's round a of TASK
    crash.py DATA TASK             dies by SIGSEGV in the control's round a of TASK
    unjoinable.py DATA TASK        leaves a variant without index row in the candidate's round a
    replay_miss.py DATA TASK       the candidate's round a finds no recorded autotune config
"""

import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TTGIR = os.path.join(os.path.dirname(HERE), "data", "ttgir")


def samples(ns, n, row):
    """n deterministic samples spread +-0.1% around ns (row shifts them)."""
    return [ns * (1 + row) + ns * (2 * k - (n - 1)) // (1000 * max(n - 1, 1)) for k in range(n)]


def write_cell(cell_dir, spec, role, phase, repeats, rows):
    """The outputs of one benchmark cell, as the plugins write them."""
    variants = spec["candidate" if role == "candidate" else "baseline"]
    ir = os.path.join(cell_dir, "ir")
    os.makedirs(ir, exist_ok=True)
    lines = ["variant\tkernel\tlaunches\ttuning_launches"]
    for v in sorted(variants, key=lambda v: v["variant"]):
        d = os.path.join(ir, v["variant"])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(TTGIR, v["ttgir"])) as src, open(os.path.join(d, v["kernel"] + ".ttgir"), "w") as dst:
            dst.write(src.read())
        with open(os.path.join(d, v["kernel"] + ".json"), "w") as f:
            json.dump({"name": v["kernel"], "hash": v["variant"].lower()}, f)
        lines.append(f"{v['variant']}\t{v['kernel']}\t{v['launches']}\t0")
    with open(os.path.join(ir, "index.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(cell_dir, "timing.jsonl"), "w") as f:
        for r in range(rows):
            f.write(json.dumps({"row": f"benchmark/test_ops.py::test_perf[float16]|r{r}",
                                "samples_ns": samples(spec["ns"][role], repeats, r), "timer": "direct",
                                "timer_reason": "backend has no graph capture", "n_calls": 10,
                                "clocks": {"before": None, "after": None}}, sort_keys=True) + "\n")


def handle(request, data, misbehave):
    """Serve one request; returns the pytest exit code to reply."""
    env = request["env"]
    task, role, phase = env["CALIBER_TASK"], env["CALIBER_ROLE"], env["CALIBER_PHASE"]
    cell_dir = env["CALIBER_CELL_DIR"]
    os.makedirs(cell_dir, exist_ok=True)
    spec = data["tasks"][task]
    here = (task, phase, role)
    print(f"cellplay: {task} {role} {phase} pid {os.getpid()}", flush=True)
    if misbehave.get("hang") == here:
        time.sleep(3600)
    if misbehave.get("crash") == here:
        os.kill(os.getpid(), signal.SIGSEGV)
    if env["CALIBER_AUTOTUNE_MODE"] == "record":
        with open(env["CALIBER_AUTOTUNE_FILE"], "w") as f:
            f.write(json.dumps({"kernel": f"ops:{task}", "key": "(4096,)", "config": {"kwargs": {"BLOCK": 128},
                                "num_warps": 4, "num_stages": 2, "num_ctas": 1, "maxnreg": None}}) + "\n")
    if misbehave.get("replay_miss") == here:
        with open(os.path.join(cell_dir, "replay_miss.json"), "w") as f:
            json.dump({"kernel": f"ops:{task}", "key": "(8192,)"}, f)
        return 1
    if phase == "correctness":
        return 1 if role in spec.get("correctness_fails", []) else 0
    timer = json.loads(env["CALIBER_TIMER"])
    write_cell(cell_dir, spec, role, phase, timer["repeats"], data["rows"])
    if misbehave.get("unjoinable") == here:
        os.makedirs(os.path.join(cell_dir, "ir", "STRAYVARIANT"), exist_ok=True)
        with open(os.path.join(cell_dir, "ir", "STRAYVARIANT", "stray.ttgir"), "w") as f:
            f.write("module {\n}\n")
    return 0


def main(misbehave_kind=None):
    """Serve requests until EOF. argv: DATA [TASK]."""
    data_dir = sys.argv[1]
    with open(os.path.join(data_dir, "cells.json")) as f:
        data = json.load(f)
    misbehave = {}
    if misbehave_kind:
        task = sys.argv[2]
        role = {"crash": "control"}.get(misbehave_kind, "candidate")
        misbehave[misbehave_kind] = (task, "a", role)
    reply = os.fdopen(int(os.environ.get("CALIBER_REPLY_FD", "3")), "w", buffering=1)
    for line in sys.stdin:
        request = json.loads(line)
        code = handle(request, data, misbehave)
        reply.write(json.dumps({"exit": code, "phase": request["phase"], "task": request["task"]}) + "\n")
    return 0
