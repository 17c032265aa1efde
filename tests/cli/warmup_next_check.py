#!/usr/bin/env python3
"""Checks CALIBER_WARMUP_NEXT in the cell receipts of a run, for the CLI tests.

  warmup_next_check.py ahead RUN_ROOT   every request names the next request of its cell
  warmup_next_check.py none RUN_ROOT    no request names one

`ahead`: a request of (task N, correctness) names (task N, round a, session
1); the last session of round a or b names (task N+1, correctness); earlier
sessions and the last task's rounds name nothing. What it names is exactly the request that cell then received (argv
and env, the latter less its own CALIBER_WARMUP_NEXT), so the warm-up
compiles what will be measured. Prints what it found and exits 1 on the
first thing that is wrong.
"""
import json
import os
import sys


def fail(msg):
    print(msg)
    sys.exit(1)


def receipts(root):
    """{(task, phase, cell, session): cell.json} of every cell the run wrote."""
    out = {}
    tasks = os.path.join(root, "tasks")
    for task in sorted(os.listdir(tasks)):
        cells = os.path.join(tasks, task, "cells")
        for name in sorted(os.listdir(cells)):
            with open(os.path.join(cells, name, "cell.json")) as f:
                r = json.load(f)
            out[(r["task"], r["phase"], r["cell"], r["session"])] = r
    return out


def sessions_of(root):
    """timer.sessions of the run's manifest (3 when it leaves it out)."""
    with open(os.path.join(root, "manifest.json")) as f:
        return json.load(f)["timer"].get("sessions", 3)


def expected_key(order, task, phase, session, sessions):
    """The key the request of (task, phase, session) must name, or None."""
    if phase == "correctness":
        return f"{task}/a"
    if session != sessions:
        return None
    i = order.index(task)
    return f"{order[i + 1]}/correctness" if i + 1 < len(order) else None


def check_ahead(root):
    """Every receipt's request names the next request of its cell, as sent."""
    with open(os.path.join(root, "task-matrix.json")) as f:
        order = [t["id"] for t in json.load(f)["tasks"]]
    cells = receipts(root)
    sessions = sessions_of(root)
    named = 0
    for (task, phase, cell, session), r in sorted(cells.items()):
        text = r["env"].get("CALIBER_WARMUP_NEXT")
        want = expected_key(order, task, phase, session, sessions)
        if want is None:
            if text is not None:
                fail(f"{task} {phase} {cell} session {session}: names {text[:80]}, want nothing")
            continue
        if text is None:
            fail(f"{task} {phase} {cell}: no CALIBER_WARMUP_NEXT (want {want})")
        ahead = json.loads(text)
        if sorted(ahead) != ["argv", "env", "key"] or ahead["key"] != want:
            fail(f"{task} {phase} {cell}: names {ahead.get('key')}, want {want}")
        if text != json.dumps(ahead, sort_keys=True, separators=(",", ":"), ensure_ascii=False):
            fail(f"{task} {phase} {cell}: CALIBER_WARMUP_NEXT is not compact JSON with sorted keys")
        next_task, next_phase = want.split("/")
        sent = cells[(next_task, next_phase, cell, 1)]
        sent_env = {k: v for k, v in sent["env"].items() if k != "CALIBER_WARMUP_NEXT"}
        if ahead["argv"] != sent["argv"] or ahead["env"] != sent_env:
            fail(f"{task} {phase} {cell}: names {want} other than the request the cell then received")
        named += 1
    if not named:
        fail("no request names a next one")
    print(f"{named} of {len(cells)} requests name the next request of their cell")


def check_none(root):
    """No receipt's request carries CALIBER_WARMUP_NEXT."""
    cells = receipts(root)
    for key, r in sorted(cells.items()):
        if "CALIBER_WARMUP_NEXT" in r["env"]:
            fail(f"{' '.join(map(str, key))}: carries CALIBER_WARMUP_NEXT")
    print(f"none of {len(cells)} requests names a next request")


def main():
    what, root = sys.argv[1], sys.argv[2]
    {"ahead": check_ahead, "none": check_none}[what](root)


if __name__ == "__main__":
    main()
