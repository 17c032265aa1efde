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
holds <kernel>.ttgir, <kernel>.cubin and <kernel>.json (with the build that
wrote it), as cellplay.compile_variant writes them; ir/ and ir/binaries.tsv
come from there. The
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
import sys

import fakecompiler

from cellplay import autotune, begin, compile_variant, serve, write_index, write_ir, write_timing

BUILD = "candidate" if tuple(fakecompiler.REMOVE_LAYOUT_CONVERSIONS_RUNS) == (1, 2, 3) else "baseline"


def compiled(cache, v):
    """The cache entry of variant v, compiled by this build when absent: its
    group (file name -> path), kernel name and the build that compiled it."""
    d = os.path.join(cache, v["variant"])
    found = glob.glob(os.path.join(d, "*.json"))
    if found:
        with open(found[0]) as f:
            meta = json.load(f)
        return {name: os.path.join(d, name) for name in sorted(os.listdir(d))}, meta["name"], meta["build"]
    return compile_variant(cache, v, {"build": BUILD}), v["kernel"], BUILD


def write_cell(cell_dir, spec, role, repeats, rows, session, cache, phase):
    """The outputs of one benchmark cell, as the plugins write them from the
    cache: ir/ with its index and binaries, and timing rows centred on what
    the most launched variant's compiler makes of the task (none in the
    screen)."""
    lines, used, groups = [], [], {}
    ran, most = BUILD, -1
    for v in sorted(spec[BUILD], key=lambda v: v["variant"]):
        group, kernel, build = compiled(cache, v)
        lines.append(f"{v['variant']}\t{kernel}\t{v['launches']}\t0")
        used.append({"variant": v["variant"], "kernel": kernel})
        groups[v["variant"]] = group
        if v["launches"] > most:
            ran, most = build, v["launches"]
    write_index(cell_dir, lines)
    if session == 1:
        write_ir(cell_dir, used, groups)
    if phase == "screen":
        open(os.path.join(cell_dir, "timing.jsonl"), "w").close()
        return
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
    write_cell(cell_dir, spec, role, timer["repeats"], data["rows"], int(env["CALIBER_SESSION"]), cache, phase)
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
