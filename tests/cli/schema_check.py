#!/usr/bin/env python3
"""schema_check.py SCHEMA_DIR KIND PATH...: validate JSON files against the
schemas of docs/schema/ with a real validator (python3-jsonschema).

KIND is a schema's name (campaign, task, cell, run, derived, diff, compare,
topology, task-matrix, export, timing-row: each line of a .jsonl file), or
`run`: then each PATH is a run root (sealed, derived or merged) and every
receipt in it is validated by its name: campaign.json, run.json,
task-matrix.json, derived.json, tasks/*/task.json, cell.json, timing.jsonl
(and shards/*/campaign.json, run.json). Prints each violation as
"FILE[:LINE]: JSON-PATH: message" and "schema_check: N documents valid";
exits 1 on any violation or on a run root that holds no receipt."""
import json
import os
import pathlib
import sys
import warnings

import jsonschema

BY_NAME = {"campaign.json": "campaign", "run.json": "run", "task-matrix.json": "task-matrix",
           "derived.json": "derived", "task.json": "task", "cell.json": "cell", "timing.jsonl": "timing-row"}


def validators(schema_dir):
    """One validator per schema file, $refs between them resolved locally."""
    store, out = {}, {}
    for p in sorted(pathlib.Path(schema_dir).glob("*.schema.json")):
        store[p.resolve().as_uri()] = json.loads(p.read_text())
    for uri, schema in store.items():
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        with warnings.catch_warnings():
            # Newer jsonschema prefers its referencing library; Debian 12's
            # 4.10 has only RefResolver, which both versions still honour.
            warnings.simplefilter("ignore", DeprecationWarning)
            resolver = jsonschema.RefResolver(base_uri=uri, referrer=schema, store=store)
        out[uri.rsplit("/", 1)[1][: -len(".schema.json")]] = cls(schema, resolver=resolver)
    return out


def documents(kind, path):
    """(kind, name, document) of each document in path."""
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    yield kind, f"{path}:{n}", json.loads(line)
    else:
        with open(path, encoding="utf-8") as f:
            yield kind, path, json.load(f)


def run_files(root):
    """Every receipt of a run root, with its kind."""
    for d, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(d, root)
        if os.sep + "ir" in os.sep + rel:
            continue  # the compiler's own metadata, not caliber's
        for f in sorted(files):
            kind = BY_NAME.get(f)
            if kind:
                yield kind, os.path.join(d, f)


def main(argv):
    schema_dir, kind, paths = argv[1], argv[2], argv[3:]
    vs = validators(schema_dir)
    bad = good = 0
    for path in paths:
        pairs = list(run_files(path)) if kind == "run" else [(kind, path)]
        if not pairs:
            print(f"{path}: no receipt found")
            bad += 1
        for k, p in pairs:
            for k2, name, doc in documents(k, p):
                errors = sorted(vs[k2].iter_errors(doc), key=lambda e: list(e.absolute_path))
                for e in errors:
                    where = "$" + "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in e.absolute_path)
                    print(f"{name}: {where}: {e.message}")
                bad += len(errors) > 0
                good += not errors
    print(f"schema_check: {good} documents valid, {bad} not")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
