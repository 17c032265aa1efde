"""caliber_pytest.parallel_warmup: precompile on other GPUs before measuring.

Inert unless PARALLEL_WARMUP_GPUS names device ids other than the measured
one. Then, once this request's tests are collected, one pytest process per
listed GPU runs a share of the same tests with the same caliber plugins, the
same CALIBER_* settings and the same TRITON_CACHE_DIR (the cell's private
cache), pinned to that GPU with CUDA_VISIBLE_DEVICES and timing as little as
possible. The measured process waits for them and then finds the variants in
the disk cache (a GPU of the same architecture gives the same cache key). The
warm-up processes write their own cell outputs to a scratch folder, removed
afterwards; what they did goes to <cell dir>/parallel_warmup.json. A failed
warm-up is recorded, not fatal: the measured process then compiles itself."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

from . import _warmup_plan
from ._common import atomic_write_text, dumps_json, require_env, usage_error

PLUGIN = "parallel_warmup"

_state = None


class _State:
    """The GPUs to warm up on and the cell folder to report to."""

    def __init__(self, gpus, cell_dir):
        self.gpus = gpus
        self.cell_dir = cell_dir


def pytest_configure(config):
    """Stay inert without PARALLEL_WARMUP_GPUS; else check what the warm-up needs."""
    global _state
    _state = None
    text = os.environ.get("PARALLEL_WARMUP_GPUS", "")
    if not text.strip():
        return
    try:
        gpus = _warmup_plan.parse_gpus(text, os.environ.get("CUDA_VISIBLE_DEVICES"))
    except ValueError as e:
        raise usage_error(PLUGIN, str(e))
    if not os.environ.get("TRITON_CACHE_DIR"):
        raise usage_error(PLUGIN, "TRITON_CACHE_DIR is not set: the warm-up would compile into another cache")
    _state = _State(gpus, require_env(PLUGIN, "CALIBER_CELL_DIR"))


def pytest_unconfigure(config):
    """Forget this request."""
    global _state
    _state = None


def _run_share(config, gpu, node_ids, scratch):
    """Start the warm-up pytest on gpu for node_ids; returns (process, log path)."""
    cell = os.path.join(scratch, f"gpu{gpu}")
    os.makedirs(cell)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            *_warmup_plan.plugin_args(config.invocation_params.args), *node_ids]
    log_path = os.path.join(scratch, f"gpu{gpu}.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, cwd=str(config.rootpath), stdout=log, stderr=subprocess.STDOUT,
                                env=_warmup_plan.child_env(os.environ, gpu, cell))
    return proc, log_path


def pytest_collection_finish(session):
    """Warm the cache on the listed GPUs before any test of this request runs."""
    state = _state
    if state is None or not session.items:
        return
    node_ids = [item.nodeid for item in session.items]
    shares = _warmup_plan.split_round_robin(node_ids, len(state.gpus))
    scratch = tempfile.mkdtemp(prefix="caliber-warmup-")
    started = time.monotonic()
    runs = []
    try:
        for gpu, share in zip(state.gpus, shares):
            if share:
                proc, log_path = _run_share(session.config, gpu, share, scratch)
                runs.append((gpu, share, proc, log_path, time.monotonic()))
        report = []
        for gpu, share, proc, log_path, t0 in runs:
            code = proc.wait()
            report.append({"exit": code, "gpu": gpu, "tests": len(share),
                           "wall_ns": int((time.monotonic() - t0) * 1e9)})
            with open(log_path) as log:
                for line in log:
                    print(f"[{PLUGIN} gpu {gpu}] {line}", end="")
            if code != 0:
                print(f"caliber_pytest.{PLUGIN}: warm-up on GPU {gpu} exited {code}; "
                      "the measured process compiles what it lacks itself")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    atomic_write_text(os.path.join(state.cell_dir, "parallel_warmup.json"),
                      dumps_json({"gpus": state.gpus, "runs": report,
                                  "wall_ns": int((time.monotonic() - started) * 1e9)}))
