"""Resolve a campaign's pytest selections against the real corpus tree, in
one process for the whole campaign (the `targets` preflight of `caliber run`).

    python3 -m caliber_pytest.collect CORPUS QUERIES.json RESULT.json

QUERIES.json: {"queries": [{"id": "...", "args": ["file.py::test", "-m", "expr"]}, ...]}
RESULT.json:  {"queries": {"<id>": {"count": N, "missing": [node ids], "exit": rc,
                                    "errors": ["..."]}}}

It runs in the private CALIBER_WORK_DIR with the corpus as rootdir, as the
worker session does, so collecting writes nothing into the frozen corpus.
Each query is one `pytest --collect-only` session (test modules are imported
once per process and reused), so -m and -k are evaluated by pytest itself.
The queries are shared out over CALIBER_COLLECT_JOBS processes of this
module (default: half the CPUs, at most 8): collecting touches no timing, and
a corpus whose tests import heavy packages (FlagGems: 77 s for 64 selections
in one process on the H200) is collected in a fraction of the time.
A node id is missing when no collected item is that node or, for a function
without parameters in the id, one of its parametrizations."""

import json
import os
import subprocess
import sys
import tempfile

import pytest

from caliber_pytest._common import corpus_argv


class _Collector:
    """Keeps what one collection session selected and what failed to collect."""

    def __init__(self):
        self.items = []
        self.errors = []

    def pytest_collection_modifyitems(self, session, config, items):
        self.items = list(items)

    def pytest_collectreport(self, report):
        if report.failed:
            text = report.longreprtext.strip().splitlines()
            self.errors.append(f"{report.nodeid or '(session)'}: {text[-1] if text else 'collection failed'}")


def _node_ids(args):
    """The positional node ids of a selection (those naming a test)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-m", "-k"):
            skip = True
        elif "::" in a:
            out.append(a)
    return out


def resolve(corpus, args):
    """Collect one selection; returns its result entry."""
    c = _Collector()
    rc = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *corpus_argv(corpus, args)],
                     plugins=[c])
    ids = [i.nodeid for i in c.items]
    missing = [n for n in _node_ids(args)
               if not any(i == n or i.startswith(n + "[") for i in ids)]
    return {"count": len(ids), "missing": missing, "exit": int(rc), "errors": c.errors}


def jobs(n_queries):
    """How many processes collect n_queries queries (CALIBER_COLLECT_JOBS, else
    half the CPUs, at most 8, never more than the queries)."""
    text = os.environ.get("CALIBER_COLLECT_JOBS", "")
    want = int(text) if text.isdigit() and int(text) > 0 else min(8, max(1, (os.cpu_count() or 2) // 2))
    return max(1, min(want, n_queries))


def _in_parallel(corpus, qs, n):
    """Collect qs in n processes of this module, each a share dealt round robin;
    the merged results. A process that fails reports its last stderr line as
    the error of each of its queries."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="caliber-collect.") as tmp:
        procs = []
        for k in range(n):
            share, result = os.path.join(tmp, f"q{k}.json"), os.path.join(tmp, f"r{k}.json")
            with open(share, "w", encoding="utf-8") as f:
                json.dump({"queries": qs[k::n]}, f)
            env = dict(os.environ, CALIBER_COLLECT_JOBS="1")
            procs.append((qs[k::n], result, subprocess.Popen([sys.executable, "-m", "caliber_pytest.collect", corpus,
                                                              share, result], env=env, stdout=subprocess.DEVNULL,
                                                             stderr=subprocess.PIPE, text=True)))
        for share, result, proc in procs:
            _, err = proc.communicate()
            if proc.returncode == 0:
                with open(result, encoding="utf-8") as f:
                    out.update(json.load(f)["queries"])
                continue
            last = (err.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            for q in share:
                out[q["id"]] = {"count": 0, "missing": [], "exit": 3, "errors": [last]}
    return out


def main(argv):
    corpus, queries, result = argv[1], argv[2], argv[3]
    with open(queries, encoding="utf-8") as f:
        qs = json.load(f)["queries"]
    work = os.environ.get("CALIBER_WORK_DIR")
    if not work:
        sys.exit("caliber_pytest.collect: CALIBER_WORK_DIR is not set (the caliber worker environment sets it)")
    os.chdir(work)
    n = jobs(len(qs))
    out = {"queries": _in_parallel(corpus, qs, n) if n > 1 else {q["id"]: resolve(corpus, q["args"]) for q in qs}}
    with open(result, "w", encoding="utf-8") as f:
        json.dump(out, f, sort_keys=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as e:  # one line for the preflight to quote, not a traceback
        sys.exit(f"caliber_pytest.collect: {type(e).__name__}: {e}")
