#!/usr/bin/env python3
"""Checks what a `caliber run --stop-after` started and what it did not
against the times the run itself recorded, for the CLI tests: never against
a clock, so that the check holds on a machine of any speed.

  plan_check.py STDOUT RUN_ROOT TASK_MATRIX

Every line of STDOUT that is a planning decision must agree with the
receipts under RUN_ROOT (a stopped run, not sealed):

  not started: task T needs about X by the N tasks measured so far in this
  run, scaled by budget (W for B of budget), L are left before the deadline
      N, W and B are the count, the summed task.json wall_ns and the summed
      budget_s of the tasks done before T (matrix order: one invocation runs
      them in that order); X is W scaled to T's budget_s; L < X.
  not started: task T has no expected time yet (nothing measured yet), and
  no time is left before the deadline
      no task before T is done.
  not finished: cell C of task T (...) needs about X by the time this task's
  earlier cells of that phase took, L are left before the deadline; ...
      X is the longest cell.json wall_ns of that phase in T's folder (of
      round a for "cells of round a"); L < X. Or the cell is the first of
      its phase, and no time is left.
  stopped after K of N tasks: M not done before the deadline; ...
      K task receipts exist, M = N - K.

Any other line that speaks of the deadline is an error. Prints what it
found and exits 1 on the first disagreement.
"""
import json
import os
import re
import sys

DUR = r"(?:(\d+)h(\d\d)m|(\d+)m(\d\d)s|(\d+)s)"


def fail(msg):
    print(msg)
    sys.exit(1)


def fmt(ms):
    """A duration as caliber's run messages write it (expect.c, cb_fmt_elapsed)."""
    s = ms // 1000
    if s >= 3600:
        return f"{s // 3600}h{s // 60 % 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def seconds(text):
    """The least number of seconds that fmt writes as text."""
    m = re.fullmatch(DUR, text)
    if not m:
        fail(f"not a duration: {text}")
    h, hm, m_, ms, s = m.groups()
    if h is not None:
        return int(h) * 3600 + int(hm) * 60
    if m_ is not None:
        return int(m_) * 60 + int(ms)
    return int(s)


def less(left, need):
    """Whether a time left may be less than a need, both as written (each
    rounded down, hours to the minute)."""
    return seconds(left) <= seconds(need) + (59 if "h" in need else 0)


def main():
    out_path, root, matrix_path = sys.argv[1:4]
    with open(matrix_path) as f:
        tasks = json.load(f)["tasks"]
    order = [t["id"] for t in tasks]
    budget = {t["id"]: t["budget_s"] for t in tasks}
    wall = {}
    for t in order:
        p = os.path.join(root, "tasks", t, "task.json")
        if os.path.exists(p):
            with open(p) as f:
                wall[t] = json.load(f)["wall_ns"] // 1000000

    def before(task):
        return [t for t in order[:order.index(task)] if t in wall]

    def cell_ms(task, phase):
        cells = os.path.join(root, "tasks", task, "cells")
        found = []
        for name in os.listdir(cells):
            p = os.path.join(cells, name, "cell.json")
            if os.path.exists(p):
                with open(p) as f:
                    c = json.load(f)
                if c["phase"] == phase:
                    found.append(c["wall_ns"] // 1000000)
        return max(found) if found else None

    decisions = 0
    for line in open(out_path).read().splitlines():
        m = re.fullmatch(r"not started: task (\S+) needs about (\S+) by the (\d+) tasks? measured so far in this "
                         r"run, scaled by budget \((\S+) for (\S+) of budget\), (\S+) (?:are|is) left before the "
                         r"deadline", line)
        if m:
            task, need, n, w, b, left = m.groups()
            done = before(task)
            sum_w = sum(wall[t] for t in done)
            sum_b = sum(budget[t] for t in done)
            want = (str(len(done)), fmt(sum_w), fmt(sum_b * 1000), fmt(int(sum_w * budget[task] / sum_b)))
            if (n, w, b, need) != want:
                fail(f"{line}\n  the receipts give: {want} (tasks done before {task}: {done})")
            if not less(left, need):
                fail(f"{line}\n  {left} left is not less than {need}")
            decisions += 1
            continue
        m = re.fullmatch(r"not started: task (\S+) has no expected time yet \(nothing measured yet\), and no time "
                         r"is left before the deadline", line)
        if m:
            if before(m.group(1)):
                fail(f"{line}\n  but {before(m.group(1))} were done before it")
            decisions += 1
            continue
        m = re.fullmatch(r"not finished: cell \S+ of task (\S+) \((?:correctness|round (a|b), session \d+ of \d+)\) "
                         r"needs about (\S+) by the time this task's (earlier cells of that phase|cells of round a) "
                         r"took, (\S+) (?:are|is) left before the deadline; --resume redoes the task", line)
        if m:
            task, rnd, need, basis, left = m.groups()
            phase = "a" if basis == "cells of round a" else (rnd or "correctness")
            longest = cell_ms(task, phase)
            if longest is None or fmt(longest) != need:
                fail(f"{line}\n  the longest recorded cell of phase {phase} took {longest} ms")
            if not less(left, need):
                fail(f"{line}\n  {left} left is not less than {need}")
            decisions += 1
            continue
        if re.fullmatch(r"not finished: cell \S+ of task \S+ \(.*\) has no expected time yet \(nothing of this "
                        r"task's phase measured yet\), and no time is left before the deadline; --resume redoes "
                        r"the task", line):
            decisions += 1
            continue
        m = re.fullmatch(r"stopped after (\d+) of (\d+) tasks: (\d+) not done before the deadline; continue with "
                         r"--resume", line)
        if m:
            k, n, rest = map(int, m.groups())
            if k != len(wall) or n != len(order) or rest != n - k:
                fail(f"{line}\n  but {len(wall)} of {len(order)} task receipts exist")
            decisions += 1
            continue
        if "deadline" in line:
            fail(f"a line this check does not know: {line}")
    if not decisions:
        fail("no planning decision in the output")
    print(f"{decisions} decisions agree with the receipts ({len(wall)} tasks done: {sorted(wall)})")


main()
