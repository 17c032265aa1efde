"""The caliber worker session (docs/formats.md, "Worker session protocol").

    python3 -m caliber_pytest.session

Reads one JSON request per line on stdin; for each, sets the request's `env`,
changes to the worker's private CALIBER_WORK_DIR, runs pytest.main on argv
with the corpus CALIBER_CORPUS as rootdir (_common.corpus_argv: whatever a
test writes to its working directory stays out of the frozen corpus), puts the
environment and directory back, and writes one JSON reply line on fd
CALIBER_REPLY_FD (3) that echoes the request's id (with its task and
phase), so that the runner can tell it from a stale or extra one. torch and triton stay imported between requests, which
is the point of a session; every pytest.main is its own pytest session with its
own test counts, and the plugins keep their state in that session's
config.stash, so none of it reaches the next request (what is process-wide
by design, such as the warm-up workers of parallel_warmup, says so where it
is kept). EOF on stdin ends the worker with status 0.

A worker dies with its runner: on Linux caliber starts it through an exec
wrapper that sets PR_SET_PDEATHSIG; everywhere, and for the warm-up workers a
session starts itself, a watchdog thread ends the session when its parent
goes (its parent pid changes), even in the middle of a request."""

import atexit
import importlib
import json
import os
import sys
import threading
import time

import pytest

from caliber_pytest._common import corpus_argv


def _reply_stream():
    """The reply channel: fd CALIBER_REPLY_FD, line-buffered."""
    fd = int(os.environ.get("CALIBER_REPLY_FD", "3"))
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1)


def _apply_env(env):
    """Set env in os.environ; returns what to put back."""
    saved = {name: os.environ.get(name) for name in env}
    for name, value in env.items():
        os.environ[name] = str(value)
    return saved


def _restore_env(saved):
    """Put back the variables _apply_env changed."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def run_request(request):
    """Run one request; returns its reply (without task and phase)."""
    argv, env = request.get("argv"), request.get("env", {})
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return {"error": "request has no argv list of strings", "exit": 3}
    if not isinstance(env, dict):
        return {"error": "request env is not an object", "exit": 3}
    saved = _apply_env(env)
    cwd = os.getcwd()
    try:
        corpus, work = os.environ.get("CALIBER_CORPUS"), os.environ.get("CALIBER_WORK_DIR")
        if not corpus or not work:
            return {"error": "CALIBER_CORPUS or CALIBER_WORK_DIR is not set", "exit": 3}
        os.chdir(work)
        return {"exit": int(pytest.main(corpus_argv(corpus, argv)))}
    except Exception as e:  # reported to the runner, which marks the task X
        return {"error": f"{type(e).__name__}: {e}", "exit": 3}
    finally:
        os.chdir(cwd)
        _restore_env(saved)
        sys.stdout.flush()
        sys.stderr.flush()


def watch_parent(interval=1.0):
    """Start the watchdog: a daemon thread that ends this process (status 1)
    as soon as its parent pid is no longer the one it started under."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="caliber-parent-watchdog", daemon=True).start()


def preload(names):
    """Import the modules named in names (CALIBER_PRELOAD, space-separated)
    before the first request comes, so that a worker started ahead of its
    turn has paid for them while another worker was timed. A module that
    cannot be imported is said on stderr (the request that needs it fails
    on its own); returns the names that failed."""
    failed = []
    for name in names.split():
        try:
            importlib.import_module(name)
        except Exception as e:  # reported, not fatal: see the docstring
            print(f"caliber_pytest.session: preload {name}: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    return failed


def main():
    """Serve requests until EOF on stdin."""
    watch_parent()
    preload(os.environ.get("CALIBER_PRELOAD", ""))
    replies = _reply_stream()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as e:
            reply = {"error": f"bad request: {e}", "exit": 3}
            request = {}
        else:
            reply = run_request(request)
        for field in ("id", "phase", "task"):
            if field in request:
                reply[field] = request[field]
        replies.write(json.dumps(reply, sort_keys=True) + "\n")
        replies.flush()
    return 0


def leave(status):
    """End this process with status once its requests are served: run the
    functions registered with atexit (a plugin's own clean-up, such as the
    warm-up workers of parallel_warmup), flush, then os._exit, skipping the
    interpreter's finalisation and the C libraries' exit handlers. With
    torch, a CUDA context and the profiler loaded, that finalisation is
    host work of its own after the reply (bench/RESULTS.md, "What a
    request costs"), which the runner waits for before the next session of
    the campaign starts, since a worker that serves one request is ended
    after it."""
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed or broken stream has nothing left to say
                pass
        os._exit(status)


if __name__ == "__main__":
    leave(main())
