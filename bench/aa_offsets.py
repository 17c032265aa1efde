#!/usr/bin/env python3
"""bench/aa_offsets.py: how often identical code looks different when every
worker process carries an offset of its own, per worker mode, on a CPU.

    bench/aa_offsets.py [--seeds N] [--first-seed K] [--modes session,persistent]
                        [--proc-ppm P] [--rep-ppm R] [--max-sessions M]
                        [--gain G --regression R] [--keep DIR]

Runs N seeded A/A campaigns of the CPU test campaign (tests/data/campaign-cpu,
selection all: 8 tasks) in each worker mode with the stand-in worker
tests/workers/offsets.py, whose processes each carry an offset ~ N(0, P ppm)
fixed for their life (like the H200's; a persistent process's sessions share
it, the default mode's fresh processes each draw one) and whose samples
scatter by R ppm. Every cell is identical code, so each control-vs-baseline
interval is an A/A; the script reads caliber's own count of those that exclude
zero (the A/A line of each run's matrix.csv) and prints, per mode, the share
over all seeds with a 95 % Wilson interval, against the nominal 5 %. The
defaults are the H200's figures: a between-process component of about 600 ppm
(issue 23's re-analysis of runs/aa) and repeats scattering by about 1000 ppm.

Nothing depends on the machine's speed: the offsets and samples come from the
seeds. With --max-sessions M (and thresholds at which it matters, e.g.
--gain 0.0025 --regression -0.0025) a round whose A/A band is wider than the
smaller threshold gets up to M sessions (timer.max_sessions), and the line
says how many the orders had. It takes a while (every request of the default mode starts a Python
process): about 100 cells per campaign. caliber is ./caliber, else
build/normal/caliber (make first); python3 must have pytest (the targets
preflight collects the corpus).
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "campaign-cpu")
WORKERS = os.path.join(ROOT, "tests", "workers")
AA_LINE = re.compile(r"A/A: (\d+) of (\d+) control-vs-baseline intervals exclude zero")


def caliber_binary():
    for path in (os.path.join(ROOT, "caliber"), os.path.join(ROOT, "build", "normal", "caliber")):
        if os.access(path, os.X_OK):
            return path
    sys.exit("aa_offsets: no caliber binary (run make)")


def python_with_pytest():
    for p in ("python3", "/usr/bin/python3"):
        if subprocess.run([p, "-c", "import pytest"], capture_output=True).returncode == 0:
            return p
    sys.exit("aa_offsets: no python3 with pytest")


class Campaign:
    """The CPU campaign frozen for selection all, in a scratch folder."""

    def __init__(self, caliber, python, work, max_sessions=None, gain=None, regression=None):
        self.caliber, self.python, self.work = caliber, python, work
        version = subprocess.run([caliber, "--version"], capture_output=True, text=True, check=True).stdout
        self.commit = re.search(r"commit ([0-9a-f]+)", version).group(1)
        self.dirty = ["--allow-dirty-harness"] if ("dirty" in version or "unknown" in version) else []
        digest = {d: subprocess.run([caliber, "digest", os.path.join(DATA, d)], capture_output=True, text=True,
                                    check=True).stdout.strip() for d in ("compiler", "corpus")}
        with open(os.path.join(DATA, "manifest.in.json")) as f:
            text = f.read()
        text = (text.replace("@COMPILER_TREE@", digest["compiler"]).replace("@CORPUS_TREE@", digest["corpus"])
                .replace("@HARNESS_COMMIT@", self.commit))
        if max_sessions:
            text = text.replace('"repeats": 7', f'"repeats": 7, "max_sessions": {max_sessions}')
        if gain:
            text = text.replace('"gain": 0.05', f'"gain": {gain}')
        if regression:
            text = text.replace('"regression": -0.03', f'"regression": {regression}')
        self.manifest = os.path.join(work, "manifest.json")
        with open(self.manifest, "w") as f:
            f.write(text)
        self.frozen = os.path.join(work, "frozen")
        self.prepare("canary")
        self.run("canary", os.path.join(work, "canary"), f"{python} {WORKERS}/replay.py {DATA}", "persistent")
        self.prepare("all", "--canary-receipt", os.path.join(work, "canary", "campaign.json"))

    def prepare(self, selection, *extra):
        subprocess.run([self.caliber, "prepare", self.manifest, "--inventory-dir", os.path.join(DATA, "corpus"),
                        "--output-root", self.frozen, "--selection", selection, *extra], check=True,
                       capture_output=True)

    def run(self, selection, out, worker, mode):
        frozen = os.path.join(self.frozen, f"cpu-test-{selection}")
        env = dict(os.environ, TMPDIR=self.work, CALIBER_HOME=ROOT)
        done = subprocess.run([self.caliber, "run", "--manifest", os.path.join(frozen, "manifest.json"),
                               "--task-matrix", os.path.join(frozen, "task-matrix.json"),
                               "--build-root", os.path.join(DATA, "compiler"), "--corpus", os.path.join(DATA, "corpus"),
                               "--output-root", out, "--backends", os.path.join(ROOT, "tests", "backends"),
                               "--python", self.python, "--worker", worker, "--workers", mode, "--quiet", *self.dirty],
                              env=env, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"aa_offsets: caliber run into {out} exited {done.returncode}:\n{done.stdout}{done.stderr}")


def aa_count(run):
    """caliber's own A/A count of a run: the summary row of its matrix.csv."""
    with open(os.path.join(run, "matrix.csv"), newline="") as f:
        for line in f:
            m = AA_LINE.search(line)
            if m and line.startswith(",,,aa-summary,"):
                return int(m.group(1)), int(m.group(2))
    sys.exit(f"aa_offsets: {run}/matrix.csv has no A/A line")


def sessions_of(run):
    """The fewest and most sessions a cell had in a timed order of run."""
    seen = set()
    for task in os.listdir(os.path.join(run, "tasks")):
        with open(os.path.join(run, "tasks", task, "task.json")) as f:
            for order in json.load(f)["orders"].values():
                if order["present"]:
                    seen.update(order["sessions"].values())
    return min(seen), max(seen)


def wilson(k, n, z=1.96):
    """The 95 % Wilson score interval of a share k / n."""
    if not n:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--modes", default="session,persistent")
    ap.add_argument("--proc-ppm", type=float, default=600)
    ap.add_argument("--rep-ppm", type=float, default=1000)
    ap.add_argument("--max-sessions", type=int, help="timer.max_sessions (default: timer.sessions, 3)")
    ap.add_argument("--gain", help="thresholds.gain (default 0.05)")
    ap.add_argument("--regression", help="thresholds.regression (default -0.03)")
    ap.add_argument("--caliber", help="the binary (default ./caliber, else build/normal/caliber); its harness is "
                    "this repository (CALIBER_HOME)")
    ap.add_argument("--keep", help="keep the runs in this folder")
    args = ap.parse_args()
    caliber, python = args.caliber or caliber_binary(), python_with_pytest()
    work = tempfile.mkdtemp(prefix="caliber-aa-offsets.")
    try:
        campaign = Campaign(caliber, python, work, args.max_sessions, args.gain, args.regression)
        print(f"aa_offsets: {args.seeds} seeds from {args.first_seed}, process offset sd {args.proc_ppm:g} ppm, "
              f"repeat sd {args.rep_ppm:g} ppm, campaign cpu-test-all (8 tasks, 3 sessions"
              f"{f' up to {args.max_sessions}' if args.max_sessions else ''}, 7 repeats, gain {args.gain or 0.05}, "
              f"regression {args.regression or -0.03})")
        for mode in args.modes.split(","):
            k = n = 0
            per_seed, smin, smax = [], 64, 0
            t0 = time.monotonic()
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                out = os.path.join(work, f"{mode}-{seed}")
                campaign.run("all", out, f"{python} {WORKERS}/offsets.py {DATA} {seed} {args.proc_ppm:g} "
                             f"{args.rep_ppm:g}", mode)
                ks, ns = aa_count(out)
                k, n = k + ks, n + ns
                lo_s, hi_s = sessions_of(out)
                smin, smax = min(smin, lo_s), max(smax, hi_s)
                per_seed.append(f"{ks}/{ns}")
            lo, hi = wilson(k, n)
            print(f"{mode:>10}: {k} of {n} control-vs-baseline intervals exclude zero, {100 * k / n:.1f} % "
                  f"(95 % {100 * lo:.1f}-{100 * hi:.1f} %; nominal 5 %), {smin}-{smax} sessions a cell; "
                  f"per seed {' '.join(per_seed)}; {time.monotonic() - t0:.0f} s")
            sys.stdout.flush()
        if args.keep:
            shutil.copytree(work, args.keep, symlinks=True)
    finally:
        subprocess.run(["chmod", "-R", "u+w", work])
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
