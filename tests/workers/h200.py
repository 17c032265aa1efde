"""Test worker that replays real H200 cells (see cellplay.py for the protocol).

    h200.py RUN_ROOT

Each request is answered with what the plugins left in the matching cell of a
sealed run (RUN_ROOT/tasks/<task>/cells/<phase>-<cell>/, or the session
folder <phase>-<cell>.s<k>/ for session k of a round: ir/, timing.jsonl,
autotune.jsonl, device.json, replay_miss.json when present) and the pytest
exit code that cell's receipt recorded, so `caliber run` on a CPU reaches
its verdicts from real GPU evidence. Requests are served from the cell's
private working directory, as the real session does (cellplay.serve)."""

import json
import os
import shutil
import sys

from cellplay import replay_record_readable, serve

KEEP = ("ir", "timing.jsonl", "autotune.jsonl", "device.json", "replay_miss.json", "parallel_warmup.json")


def answer(run_root, request):
    """Copy the recorded cell into the request's cell folder; its exit code."""
    env = request["env"]
    dst = env["CALIBER_CELL_DIR"]
    src = os.path.join(run_root, "tasks", env["CALIBER_TASK"], "cells", os.path.basename(dst))
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "cell.json")) as f:
        recorded = json.load(f)
    if not replay_record_readable(env):
        return 4
    for name in KEEP:
        path = os.path.join(src, name)
        if os.path.isdir(path):
            shutil.copytree(path, os.path.join(dst, name), dirs_exist_ok=True)
        elif os.path.exists(path):
            shutil.copyfile(path, os.path.join(dst, name))
    print(f"h200: {env['CALIBER_TASK']} {env['CALIBER_CELL']} {env['CALIBER_PHASE']} from {src}", flush=True)
    return recorded["exit"]["pytest_exit"]


def main():
    run_root = os.path.abspath(sys.argv[1])
    serve(lambda request: answer(run_root, request))
    return 0


sys.exit(main())
