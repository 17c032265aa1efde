"""What binary identity (issue 29) relies on, recorded on a real GPU.

    python3 scripts/device/binary_probe.py OUT

Run from the repository root; about 20 s. Compiles a few kernels of
ops/caliber_ops (sum_rows, softmax_rows, layer_norm_fwd and the autotuned
matmul, pinned to its first config) in four fresh processes, each with a
fresh TRITON_CACHE_DIR of its own and its own working directory, as four
cells of a campaign would:

    stock-1, stock-2   stock Triton, twice (same code, two caches)
    off                the demo compiler's baseline (2nd and 3rd RemoveLayoutConversions dropped)
    mask3              the demo compiler's candidate (both back: stock Triton through the hook)

and writes under OUT:

    <run>/launched.json     per label, each launched kernel: name, variant, hash, the
                            metadata_group that kernel_load_end_hook passed (file name ->
                            path), the fields launch_enter_hook's metadata gave, launch count
    <run>/listing.tsv       every file of each launched variant's cache folder: name, bytes, sha256
    <run>/cache/<variant>/  the cache folder's files (the .llir and .ttir left out)
    summary.json            per label and kernel, across the runs: variant, sha256 of the
                            cubin, of the TTGIR and of the TTGIR with locations stripped (the
                            rule of strip_locations below), whether the metadata JSON files
                            are equal (else the keys that differ), whether the cubin holds
                            the cache folder's path or a source path
    versions.json           python, torch, triton, the device

Nothing here is needed by caliber at run time; the records are the golden
data of its binary identity tests."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LABELS = ["sum_rows", "softmax_rows", "layer_norm_fwd", "matmul"]
RUNS = {
    "stock-1": {"demo": False, "env": {}},
    "stock-2": {"demo": False, "env": {}},
    "off": {"demo": True, "env": {"CALIBER_DEMO_RLC_ENHANCE": "0"}},
    "mask3": {"demo": True, "env": {"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "3"}},
}
LEFT_OUT = (".llir", ".ttir")


def strip_locations(text):
    """TTGIR without source locations: every ` loc(...)` (parentheses balanced,
    strings skipped) taken out, and every `#locN = loc(...)` line dropped."""
    out = []
    for line in text.splitlines():
        if re.match(r"^\s*#loc[\w.$-]*\s*=\s*loc\(", line):
            continue
        out.append(_drop_loc_calls(line).rstrip())
    return "\n".join(out) + "\n"


def _drop_loc_calls(line):
    """line with each ' loc(' ... ')' removed (the blanks before it too)."""
    result, i = [], 0
    while True:
        m = _LOC_CALL.search(line, i)
        if not m:
            result.append(line[i:])
            return "".join(result)
        result.append(line[i:m.start()])
        j, depth, quoted = m.end(), 1, False
        while j < len(line) and depth:
            c = line[j]
            if quoted:
                if c == "\\":
                    j += 1
                elif c == '"':
                    quoted = False
            elif c == '"':
                quoted = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            j += 1
        i = j


_LOC_CALL = re.compile(r"\s*\bloc\(")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def child(out_json):
    """In a fresh process: compile and launch LABELS twice each, recording loads and launches."""
    sys.path.insert(0, HERE)
    import importlib

    import torch
    from triton import knobs

    import compile_kernels

    matmul_module = importlib.import_module("caliber_ops.matmul")
    for tuner in (matmul_module._matmul_kernel, matmul_module._bmm_kernel, matmul_module._matmul_bias_gelu_kernel):
        tuner.configs = tuner.configs[:1]
    torch.manual_seed(0)
    catalog = compile_kernels._catalog()
    loaded, current = {}, {"label": None}
    launched = {label: {} for label in LABELS}

    def on_load(module, function, name, metadata_group, hash):
        loaded[function] = {"kernel": name, "hash": hash, "metadata_group": dict(metadata_group)}

    def on_launch(metadata):
        fields = metadata.get()
        entry = loaded.get(fields["function"])
        if current["label"] is None or entry is None:
            return
        row = launched[current["label"]].setdefault(fields["function"], dict(entry, launches=0, fields={}))
        row["launches"] += 1
        row["fields"] = {k: _jsonable(v) for k, v in fields.items() if k not in ("function", "stream")}

    knobs.runtime.kernel_load_end_hook.add(on_load)
    knobs.runtime.launch_enter_hook.add(on_launch)
    for label in LABELS:
        current["label"] = label
        catalog[label]()
        catalog[label]()
        torch.cuda.synchronize()
    current["label"] = None
    from caliber_pytest._variant import variant_name

    result = {label: sorted((dict(row, variant=variant_name(row["hash"])) for row in rows.values()),
                            key=lambda r: r["kernel"]) for label, rows in launched.items()}
    with open(out_json, "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)


def start(run, spec, work):
    """Start the child of one run in its own cache and working directory; returns the Popen."""
    cache, cwd = os.path.join(work, run, "cache"), os.path.join(work, run, "cwd")
    os.makedirs(cache)
    os.makedirs(cwd)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALIBER_DEMO_")}
    paths = [os.path.join(REPO, "python"), os.path.join(REPO, "ops")]
    if spec["demo"]:
        paths.append(os.path.join(REPO, "examples", "demo-compiler"))
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    env.update(spec["env"], PYTHONPATH=":".join(paths), PYTHONDONTWRITEBYTECODE="1", TRITON_CACHE_DIR=cache)
    log = open(os.path.join(work, run, "child.log"), "w")
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child",
                             os.path.join(work, run, "launched.json")], env=env, cwd=cwd, stdout=log,
                            stderr=subprocess.STDOUT)


def collect(run, work, out):
    """Copy a run's records and its launched variants' cache folders under out/run."""
    dest = os.path.join(out, run)
    os.makedirs(os.path.join(dest, "cache"))
    shutil.copyfile(os.path.join(work, run, "launched.json"), os.path.join(dest, "launched.json"))
    shutil.copyfile(os.path.join(work, run, "child.log"), os.path.join(dest, "child.log"))
    with open(os.path.join(dest, "launched.json")) as f:
        launched = json.load(f)
    cache = os.path.join(work, run, "cache")
    lines = ["variant\tfile\tbytes\tsha256"]
    variants = sorted({row["variant"] for rows in launched.values() for row in rows})
    for variant in variants:
        folder = os.path.join(cache, variant)
        os.makedirs(os.path.join(dest, "cache", variant))
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            lines.append(f"{variant}\t{name}\t{len(data)}\t{sha256(data)}")
            if not name.endswith(LEFT_OUT):
                shutil.copyfile(os.path.join(folder, name), os.path.join(dest, "cache", variant, name))
    with open(os.path.join(dest, "listing.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return launched


def describe(run, work, row):
    """Digests and facts of one launched kernel of one run."""
    folder = os.path.join(work, run, "cache", row["variant"])
    files = {name: open(os.path.join(folder, name), "rb").read() for name in os.listdir(folder)}
    name = row["kernel"]
    cubin, ttgir = files.get(name + ".cubin"), files.get(name + ".ttgir")
    meta = json.loads(files[name + ".json"]) if name + ".json" in files else None
    return {
        "variant": row["variant"], "launches": row["launches"], "files": sorted(files),
        "group_files": sorted(os.path.basename(p) for p in row["metadata_group"].values()),
        "cubin_sha256": sha256(cubin) if cubin else None,
        "ttgir_sha256": sha256(ttgir) if ttgir else None,
        "ttgir_noloc_sha256": sha256(strip_locations(ttgir.decode()).encode()) if ttgir else None,
        "cubin_holds_cache_path": bool(cubin) and os.path.join(work, run, "cache").encode() in cubin,
        "cubin_holds_corpus_path": bool(cubin) and os.path.join(REPO, "ops").encode() in cubin,
        "cubin_holds_triton_path": bool(cubin) and b"triton/language" in cubin,
        "metadata": meta,
    }


def compare(first, other):
    """What differs between the descriptions of one kernel in two runs."""
    keys = sorted(set(first["metadata"] or {}) | set(other["metadata"] or {}))
    return {
        "variant_equal": first["variant"] == other["variant"],
        "cubin_equal": first["cubin_sha256"] == other["cubin_sha256"],
        "ttgir_equal": first["ttgir_sha256"] == other["ttgir_sha256"],
        "ttgir_noloc_equal": first["ttgir_noloc_sha256"] == other["ttgir_noloc_sha256"],
        "metadata_keys_differing": [k for k in keys if (first["metadata"] or {}).get(k) != (other["metadata"] or {}).get(k)],
    }


def main(argv):
    if argv[:1] == ["--child"]:
        child(argv[1])
        return 0
    out = os.path.abspath(argv[0])
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="caliber-binary-probe-")
    procs = {run: start(run, spec, work) for run, spec in RUNS.items()}
    failed = [run for run, p in procs.items() if p.wait() != 0]
    for run in failed:
        shutil.copyfile(os.path.join(work, run, "child.log"), os.path.join(out, f"{run}.failed.log"))
    if failed:
        print(f"binary_probe: runs failed: {', '.join(failed)} (logs in {out})")
        return 1
    launched = {run: collect(run, work, out) for run in RUNS}
    summary = {}
    for label in LABELS:
        for row in launched["stock-1"][label]:
            per_run = {}
            for run in RUNS:
                match = [r for r in launched[run][label] if r["kernel"] == row["kernel"]]
                per_run[run] = describe(run, work, match[0]) if match else None
            first = per_run["stock-1"]
            summary[f"{label}/{row['kernel']}"] = {
                "runs": per_run,
                "against_stock-1": {run: compare(first, d) for run, d in per_run.items() if d and run != "stock-1"},
            }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
    import torch
    import triton

    versions = {"python": sys.version, "torch": torch.__version__, "triton": triton.__version__,
                "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    with open(os.path.join(out, "versions.json"), "w") as f:
        json.dump(versions, f, indent=2, sort_keys=True)
    for key, entry in summary.items():
        print(key, json.dumps(entry["against_stock-1"], sort_keys=True))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
