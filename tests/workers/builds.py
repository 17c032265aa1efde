"""Test worker for a campaign of two compiler builds (tests/data/campaign-builds/):
what a cell compiles comes from the build its process imports, not from its role.

    builds.py DATA [SHARED_CACHE]

The stand-in compiler `fakecompiler` on the cell's PYTHONPATH (the cell's
compiler root, put there by caliber) says which RemoveLayoutConversions runs
its make_ttgir keeps: all three (stock) or only the first (the patched copy).
The worker compiles each variant of a task as that build would: the
candidate's TTGIR of DATA/cells.json for stock, the baseline's for the patched
copy, with that build's correctness and timing centre (the control's centre
of cells.json when the control runs the patched copy: a second measurement of
the same code). With every cell on its own build, the campaign reads as the
campaign of switches of tests/data/campaign-cpu/.

Compiled variants go through a cache like Triton's: TRITON_CACHE_DIR/<variant>/
holds <kernel>.ttgir and <kernel>.json (with the build that wrote it). The
folder names are the same for both builds, as when a cache key does not see
what differs between them, and a variant found in the cache is used as found,
whoever compiled it. With SHARED_CACHE every cell uses that folder instead,
so a cell can run what another build compiled: what caliber's private caches
prevent.

Everything else (protocol, autotune record and replay, the working directory)
is cellplay.py's.
"""

import glob
import json
import os
import shutil
import sys

import fakecompiler

from cellplay import TTGIR, autotune, begin, serve, write_timing

BUILD = "candidate" if tuple(fakecompiler.REMOVE_LAYOUT_CONVERSIONS_RUNS) == (1, 2, 3) else "baseline"


def compiled(cache, v):
    """The cache entry of variant v, compiled by this build when absent; its
    kernel name and the build that compiled it."""
    d = os.path.join(cache, v["variant"])
    found = glob.glob(os.path.join(d, "*.json"))
    if found:
        with open(found[0]) as f:
            meta = json.load(f)
        return d, meta["name"], meta["build"]
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(os.path.join(TTGIR, v["ttgir"]), os.path.join(d, v["kernel"] + ".ttgir"))
    with open(os.path.join(d, v["kernel"] + ".json"), "w") as f:
        json.dump({"name": v["kernel"], "hash": v["variant"].lower(), "build": BUILD}, f)
    return d, v["kernel"], BUILD


def write_cell(cell_dir, spec, role, repeats, rows, session, cache):
    """The outputs of one benchmark cell, as the plugins write them from the
    cache: ir/ and its index, and timing rows centred on what the most
    launched variant's compiler makes of the task."""
    ir = os.path.join(cell_dir, "ir")
    os.makedirs(ir, exist_ok=True)
    lines = ["variant\tkernel\tlaunches\ttuning_launches"]
    ran, most = BUILD, -1
    for v in sorted(spec[BUILD], key=lambda v: v["variant"]):
        d, kernel, build = compiled(cache, v)
        lines.append(f"{v['variant']}\t{kernel}\t{v['launches']}\t0")
        if v["launches"] > most:
            ran, most = build, v["launches"]
        if session == 1:
            shutil.copytree(d, os.path.join(ir, v["variant"]))
    with open(os.path.join(ir, "index.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    write_timing(cell_dir, spec["ns"]["control" if role == "control" and ran == "baseline" else ran], repeats, rows,
                 session)


def handle(request, data, cache):
    """Serve one request; returns the pytest exit code to reply."""
    env, task, role, phase, cell_dir, spec = begin(request, data)
    print(f"builds: {task} {role} {phase} runs {fakecompiler.__file__} ({BUILD} build)", flush=True)
    if not autotune(env, task):
        return 4
    if phase == "correctness":
        return 1 if BUILD in spec.get("correctness_fails", []) else 0
    timer = json.loads(env["CALIBER_TIMER"])
    write_cell(cell_dir, spec, role, timer["repeats"], data["rows"], int(env["CALIBER_SESSION"]), cache)
    return 0


def main():
    """Serve requests until EOF. argv: DATA [SHARED_CACHE]."""
    with open(os.path.join(sys.argv[1], "cells.json")) as f:
        data = json.load(f)
    cache = sys.argv[2] if len(sys.argv) > 2 else os.environ["TRITON_CACHE_DIR"]
    serve(lambda request: handle(request, data, cache))
    return 0


if __name__ == "__main__":
    sys.exit(main())
