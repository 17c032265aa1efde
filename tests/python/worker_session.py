"""Serve requests through `python3 -m caliber_pytest.session` as the runner
does: requests on stdin, replies read back from fd 3."""

import json
import os
import subprocess
import sys

from repo_paths import PYTHON_DIR


def request(task, argv, env=None, phase="a"):
    """One request line, with the id the runner would give it."""
    return json.dumps({"argv": argv, "cell": "baseline", "dir": "/unused", "env": env or {},
                       "id": f"{task}/{phase}/baseline/1", "phase": phase, "task": task}) + "\n"


def serve(corpus, requests, env=None, timeout=120):
    """Run one worker over requests with CALIBER_CORPUS=corpus and a private
    working directory beside it (CALIBER_WORK_DIR=corpus/../work); env adds to
    (or, with None values, removes from) this process's environment. Returns
    (exit status, replies, output)."""
    read_fd, write_fd = os.pipe()
    work = os.path.join(os.path.dirname(os.path.abspath(corpus)), "work")
    os.makedirs(work, exist_ok=True)
    full_env = dict(os.environ, PYTHONPATH=PYTHON_DIR, CALIBER_CORPUS=str(corpus), CALIBER_WORK_DIR=work,
                    CALIBER_REPLY_FD="3")
    for name, value in (env or {}).items():
        if value is None:
            full_env.pop(name, None)
        else:
            full_env[name] = value
    # fd 3 is the pipe, as the runner sets it up; close_fds=False keeps the dup2'ed fd 3 open
    proc = subprocess.Popen([sys.executable, "-m", "caliber_pytest.session"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=full_env, cwd="/",
                            close_fds=False, preexec_fn=lambda: os.dup2(write_fd, 3))
    os.close(write_fd)
    out, _ = proc.communicate("".join(requests), timeout=timeout)
    with os.fdopen(read_fd) as replies:
        return proc.returncode, [json.loads(line) for line in replies], out
