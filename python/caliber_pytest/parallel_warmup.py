"""caliber_pytest.parallel_warmup: compile the cell's next request on other
GPUs while this one is measured.

Inert unless PARALLEL_WARMUP_GPUS names device ids (never the measured one).
With it, the runner puts CALIBER_WARMUP_NEXT in the env of each request of a
persistent worker: the argv and env of the next request of the same cell
that may need compiling, and its key "<task>/<phase>" (docs/formats.md).

For the life of the worker process (module state, kept across pytest
sessions) this plugin keeps one warm-up worker per listed GPU: a
`python -m caliber_pytest.session` pinned to that GPU with
CUDA_VISIBLE_DEVICES, with the cell's private TRITON_CACHE_DIR, its own
working directory, and its output in a log, all in a private temporary
folder. When a request starts (pytest_configure) the named request goes to
the warm-up worker with the fewest requests in flight, rewritten by
_warmup_plan.warmup_request: cell outputs to a scratch folder, autotuning
recorded (which benchmarks, hence compiles, every config), timing minimal. A
key is sent at most once. The measured process never waits for a warm-up:
when the warmed request comes, it runs anyway and finds in the cache what
the warm-up has compiled by then (Triton writes cache entries by temporary
file and rename, so the worst case is a variant compiled twice, once on the
side). Replies are read without blocking, requests written without blocking.

<cell dir>/parallel_warmup.json says what this request found and sent; a
failed warm-up is recorded there and printed, never fatal. At exit the
warm-up workers' stdin is closed and those still running are killed, so the
worker's own exit is not delayed."""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from . import _warmup_plan
from ._common import atomic_write_text, dumps_json, require_env, usage_error

PLUGIN = "parallel_warmup"
LOG_TAIL = 20

# Process-wide by design: the warm-up workers and the jobs sent to them outlive
# every request (a request's warm-up is sent by the one before it). Nothing
# per-request is kept here; each request's findings go to its parallel_warmup.json.
_pool = None


class _Job:
    """One request sent ahead: where, since when, and how it ended."""

    def __init__(self, key, gpu, cell):
        self.key, self.gpu, self.cell = key, gpu, cell
        self.log = None
        self.t0 = time.monotonic_ns()
        self.exit = self.error = self.wall_ns = None

    def finish(self, exit_code=None, error=None):
        """Ended: with the session's reply (exit_code, maybe its error) or without one (error)."""
        self.exit, self.error = exit_code, error
        self.wall_ns = time.monotonic_ns() - self.t0
        shutil.rmtree(self.cell, ignore_errors=True)

    def record(self):
        """Its entry in parallel_warmup.json."""
        out = {"gpu": self.gpu, "key": self.key}
        if self.wall_ns is None:
            out["state"] = "running"
            return out
        out.update(state="finished" if self.exit is not None else "failed", wall_ns=self.wall_ns)
        if self.exit is not None:
            out["exit"] = self.exit
        if self.error is not None:
            out["error"] = self.error
        return out


class _Warmer:
    """One warm-up worker: a caliber session pinned to one GPU, and the
    requests it has not answered yet, oldest first."""

    def __init__(self, gpu, folder, base_env, request_names):
        gpu_dir = os.path.join(folder, f"gpu{gpu}")
        work = os.path.join(gpu_dir, "work")
        os.makedirs(work, exist_ok=True)
        os.makedirs(os.path.join(gpu_dir, "flaggems"), exist_ok=True)
        self.gpu, self.log = gpu, os.path.join(folder, f"gpu{gpu}.log")
        self.jobs = []                    # sent, not answered yet, oldest first
        self.pending = self.buffer = b""  # requests not written yet, a reply not read whole
        read_fd, write_fd = os.pipe()
        try:
            with open(self.log, "ab") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "caliber_pytest.session"], stdin=subprocess.PIPE, stdout=log,
                    stderr=subprocess.STDOUT, cwd=work, pass_fds=(write_fd,),
                    env=_warmup_plan.worker_env(base_env, request_names, gpu, gpu_dir, write_fd))
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        self.reply_fd, self.stdin_fd = read_fd, self.proc.stdin.fileno()
        os.set_blocking(self.reply_fd, False)
        os.set_blocking(self.stdin_fd, False)

    @property
    def alive(self):
        """Whether it can still take requests."""
        return self.reply_fd is not None

    def send(self, job, request):
        """Queue request for job; written as the pipe takes it, never waiting."""
        job.log = self.log
        self.jobs.append(job)
        self.pending += (json.dumps(request, sort_keys=True) + "\n").encode()
        self.poll()

    def poll(self):
        """Write what is queued, take the replies that have arrived; a worker
        that ended fails the requests it had left."""
        ended = None
        while self.pending:
            try:
                self.pending = self.pending[os.write(self.stdin_fd, self.pending):]
            except BlockingIOError:
                break
            except OSError as e:
                ended = f"its stdin failed: {e}"
                break
        while True:
            try:
                chunk = os.read(self.reply_fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                ended = ended or "it closed its replies"
                break
            self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            if line.strip() and self.jobs:
                self._answer(self.jobs.pop(0), line)
        if ended is not None:
            code = self.stop()
            for job in self.jobs:
                job.finish(error=f"the warm-up worker stopped without replying ({ended}, status {code})")
            self.jobs = []

    @staticmethod
    def _answer(job, line):
        """Finish job with the session's reply line."""
        try:
            reply = json.loads(line)
            code = reply["exit"]
            if not isinstance(code, int):
                raise ValueError("exit is not an integer")
        except (ValueError, KeyError, TypeError) as e:
            job.finish(error=f"malformed reply {line[:200]!r}: {e}")
            return
        job.finish(exit_code=code, error=reply.get("error"))

    def stop(self):
        """Close its stdin, kill it if it still runs, reap it; its exit status."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        if self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait()
        if self.reply_fd is not None:
            os.close(self.reply_fd)
            self.reply_fd = None
        return code


class _Pool:
    """The warm-up workers of this process and every request sent ahead, by key."""

    def __init__(self, gpus, base_env, request_names):
        self.gpus, self.base_env, self.request_names = gpus, base_env, request_names
        self.folder = tempfile.mkdtemp(prefix="caliber-warmup-")
        self.warmers, self.jobs = {}, {}
        atexit.register(self.close)
        for gpu in gpus:
            self._start(gpu)

    def _start(self, gpu):
        """A fresh warm-up worker on gpu; None (printed) when it cannot start."""
        try:
            self.warmers[gpu] = _Warmer(gpu, self.folder, self.base_env, self.request_names)
        except (OSError, subprocess.SubprocessError) as e:
            print(f"caliber_pytest.{PLUGIN}: cannot start the warm-up worker on GPU {gpu}: {e}")
            self.warmers.pop(gpu, None)
        return self.warmers.get(gpu)

    def poll(self):
        """Bring every warm-up worker up to date."""
        for warmer in list(self.warmers.values()):
            if warmer.alive:
                warmer.poll()

    def send(self, ahead):
        """Send ahead to the least busy warm-up worker (restarted if it ended);
        its job, or None when this key was sent before."""
        key = ahead["key"]
        if key in self.jobs:
            return None
        self.poll()
        in_flight = {gpu: len(w.jobs) for gpu, w in self.warmers.items() if w.alive}
        gpu = _warmup_plan.choose_gpu(self.gpus, in_flight)
        job = self.jobs[key] = _Job(key, gpu, os.path.join(self.folder, "cells", str(len(self.jobs))))
        warmer = self.warmers[gpu] if gpu in in_flight else self._start(gpu)
        if warmer is None:
            job.finish(error="the warm-up worker cannot start")
        else:
            warmer.send(job, _warmup_plan.warmup_request(ahead, job.cell))
        return job

    def close(self):
        """At exit: end every warm-up worker at once and remove the private folder."""
        for warmer in self.warmers.values():
            if warmer.alive:
                warmer.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def _report_failure(job):
    """Print a warm-up that failed or whose tests did not pass, with its log's tail."""
    record = job.record()
    if record["state"] == "running" or record.get("exit") == 0:
        return
    how = f"exited {record['exit']}" if "exit" in record else "failed"
    print(f"caliber_pytest.{PLUGIN}: warm-up of {job.key} on GPU {job.gpu} {how}"
          f"{': ' + job.error if job.error else ''}; the measured process compiles what it lacks itself")
    if job.log and os.path.exists(job.log):
        with open(job.log, errors="replace") as log:
            for line in log.readlines()[-LOG_TAIL:]:
                print(f"[{PLUGIN} gpu {job.gpu}] {line}", end="")


def pytest_configure(config):
    """Stay inert without PARALLEL_WARMUP_GPUS; else send the next request
    ahead and record what this one found."""
    global _pool
    try:
        gpus = _warmup_plan.parse_gpus(os.environ.get("PARALLEL_WARMUP_GPUS", ""),
                                       os.environ.get("CUDA_VISIBLE_DEVICES"))
    except ValueError as e:
        raise usage_error(PLUGIN, str(e))
    if not gpus:
        return
    if not os.environ.get("TRITON_CACHE_DIR"):
        raise usage_error(PLUGIN, "TRITON_CACHE_DIR is not set: the warm-up would compile into another cache")
    cell_dir = require_env(PLUGIN, "CALIBER_CELL_DIR")
    key = f"{require_env(PLUGIN, 'CALIBER_TASK')}/{require_env(PLUGIN, 'CALIBER_PHASE')}"
    try:
        ahead = _warmup_plan.parse_next(os.environ.get("CALIBER_WARMUP_NEXT"))
    except ValueError as e:
        raise usage_error(PLUGIN, f"CALIBER_WARMUP_NEXT: {e}")
    if _pool is None and ahead is not None:
        _pool = _Pool(gpus, dict(os.environ), frozenset(ahead["env"]))
    warmed = sent = None
    if _pool is not None:
        _pool.poll()
        job = _pool.jobs.get(key)
        if job is not None:
            warmed = job.record()
            _report_failure(job)
        job = _pool.send(ahead) if ahead is not None else None
        sent = job.record() if job is not None else None
    atomic_write_text(os.path.join(cell_dir, "parallel_warmup.json"),
                      dumps_json({"gpus": gpus, "key": key, "next": ahead["key"] if ahead else None,
                                  "sent": sent, "warmed": warmed}))


def pytest_unconfigure(config):
    """Take the warm-up replies that came during this request."""
    if _pool is not None:
        _pool.poll()
