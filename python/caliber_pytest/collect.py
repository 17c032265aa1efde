"""Resolve a campaign's pytest selections against the real corpus tree, in
one process for the whole campaign (the `targets` preflight of `caliber run`).

    python3 -m caliber_pytest.collect CORPUS QUERIES.json RESULT.json

QUERIES.json: {"queries": [{"id": "...", "args": ["file.py::test", "-m", "expr"]}, ...]}
RESULT.json:  {"queries": {"<id>": {"count": N, "missing": [node ids], "exit": rc,
                                    "errors": ["..."]}}}

It runs in the private CALIBER_WORK_DIR with the corpus as rootdir, as the
worker session does, so collecting writes nothing into the frozen corpus.
Each query is one `pytest --collect-only` session in this process (test modules
are imported once and reused), so -m and -k are evaluated by pytest itself.
A node id is missing when no collected item is that node or, for a function
without parameters in the id, one of its parametrizations."""

import json
import os
import sys

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


def main(argv):
    corpus, queries, result = argv[1], argv[2], argv[3]
    with open(queries, encoding="utf-8") as f:
        qs = json.load(f)["queries"]
    work = os.environ.get("CALIBER_WORK_DIR")
    if not work:
        sys.exit("caliber_pytest.collect: CALIBER_WORK_DIR is not set (the caliber worker environment sets it)")
    os.chdir(work)
    out = {"queries": {q["id"]: resolve(corpus, q["args"]) for q in qs}}
    with open(result, "w", encoding="utf-8") as f:
        json.dump(out, f, sort_keys=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as e:  # one line for the preflight to quote, not a traceback
        sys.exit(f"caliber_pytest.collect: {type(e).__name__}: {e}")
