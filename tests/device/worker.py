"""Helpers for the GPU tests: run caliber_pytest.session the way the C runner
does (fresh environment, private Triton cache, requests on stdin, replies on
fd 3) and read back what the plugins left in each cell folder."""

import csv
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPS = os.path.join(REPO, "ops")
DEMO = os.path.join(REPO, "examples", "demo-compiler")
# The plan comes from caliber itself (built before the device check runs), as
# in the runner: a list spelled out here would drift from the backend's.
PLUGINS = subprocess.run([os.path.join(REPO, "caliber"), "plan", "--backend", "cuda"], check=True,
                         capture_output=True, text=True).stdout.split()
# A timer that keeps the tests quick; warmup_ms=0 makes launch counts exact.
QUICK_TIMER = {"graph_capture": "auto", "kind": "native-event", "rep_ms": 4, "repeats": 3, "warmup_ms": 0}
PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "HOME", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
                  "CUDA_VISIBLE_DEVICES")


def worker_env(cache_dir, demo=False):
    """A worker's environment as formats.md lists it (built from nothing)."""
    env = {k: os.environ[k] for k in PASSED_THROUGH if k in os.environ}
    work = f"{cache_dir}.work"  # the private working directory, beside the private cache
    os.makedirs(work, exist_ok=True)
    paths = [os.path.join(REPO, "python"), OPS] + ([DEMO] if demo else [])
    env.update(PYTHONPATH=":".join(paths), TRITON_CACHE_DIR=str(cache_dir), PYTHONDONTWRITEBYTECODE="1",
               CALIBER_REPLY_FD="3", CALIBER_CORPUS=OPS, CALIBER_WORK_DIR=work, CALIBER_BACKEND="cuda",
               CALIBER_GRAPH_CAPTURE="1")
    return env


def request(cell_dir, target, mode="record", autotune_file=None, shapes=None, dtypes="float16", timer=None,
            phase="a", extra_env=None):
    """One request line: all planned plugins, the target, and the per-request env."""
    os.makedirs(cell_dir, exist_ok=True)
    argv = [a for p in PLUGINS for a in ("-p", p)] + ["-q", "-p", "no:cacheprovider", target]
    env = {"CALIBER_CELL_DIR": str(cell_dir), "CALIBER_TASK": "t", "CALIBER_CELL": "cell", "CALIBER_ROLE": "baseline",
           "CALIBER_PHASE": phase, "CALIBER_AUTOTUNE_MODE": mode,
           "CALIBER_AUTOTUNE_FILE": str(autotune_file or os.path.join(cell_dir, "autotune.jsonl")),
           "CALIBER_DTYPES": dtypes, "CALIBER_SHAPES": json.dumps(shapes or {}),
           "CALIBER_TIMER": json.dumps(timer or QUICK_TIMER)}
    env.update(extra_env or {})
    return json.dumps({"argv": argv, "cell": "cell", "dir": str(cell_dir), "env": env, "phase": phase,
                       "task": "t"}) + "\n"


def run_session(requests, cache_dir, demo=False, timeout=300):
    """Serve requests in one worker process; returns (replies, output)."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "caliber_pytest.session"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=worker_env(cache_dir, demo), close_fds=False,
                            preexec_fn=lambda: os.dup2(write_fd, 3))
    os.close(write_fd)
    out, _ = proc.communicate("".join(requests), timeout=timeout)
    with os.fdopen(read_fd) as replies:
        lines = [json.loads(line) for line in replies]
    print(out)
    assert proc.returncode == 0, out[-4000:]
    return lines, out


def read_index(cell_dir):
    """ir/index.tsv rows as dicts with integer counts."""
    with open(os.path.join(cell_dir, "ir", "index.tsv"), newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for row in rows:
        row["launches"] = int(row["launches"])
        row["tuning_launches"] = int(row["tuning_launches"])
    return rows


def read_jsonl(path):
    """The objects of a JSON Lines file."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]
