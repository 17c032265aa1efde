"""Capture the real TTGIR fixtures of tests/data/ttgir on a GPU.

    python3 scripts/device/capture_ttgir.py [--out tests/data/ttgir]

Compiles the catalog of compile_kernels.py with stock Triton (no demo
compiler), and matmul_bias_gelu and attention_fwd once more in the demo
compiler's baseline cell (2nd and 3rd RemoveLayoutConversions runs dropped),
each in a fresh process with a private TRITON_CACHE_DIR. Copies each kernel's
.ttgir to <out>/<label>[__<kernel>][__baseline].ttgir with the absolute paths in
loc(...) made relative (repository files to ops/..., Triton's to triton/...),
and writes <out>/expected.tsv with the number of ttg.convert_layout
operations in each file, as count_converts counts them.

count_converts needs neither torch nor triton: tests/python imports it."""

import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASELINE_LABELS = ["attention_fwd", "matmul_bias_gelu"]
MAX_TOTAL_BYTES = 1 << 20

# An operation line: results then '=' (or no result), then the op by name or in generic form.
_OP_LINE = re.compile(r'^\s*(?:%[\w.$#-]+(?::\d+)?(?:\s*,\s*%[\w.$#-]+(?::\d+)?)*\s*=\s*)?'
                      r'(?:ttg\.convert_layout\b|"ttg\.convert_layout"\s*\()')


def count_converts(text):
    """Number of ttg.convert_layout operations in a TTGIR text: lines whose operation is
    the op; mentions inside loc(...), #loc lines, strings and attributes don't count."""
    return sum(1 for line in text.splitlines() if _OP_LINE.match(line))


def compile_catalog(out_json, env_extra, demo, labels):
    """Start compile_kernels.py in a fresh process; returns the Popen."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALIBER_DEMO_")}
    paths = [os.path.join(REPO, "python"), os.path.join(REPO, "ops")]
    if demo:
        paths.append(os.path.join(REPO, "examples", "demo-compiler"))
    env.update(env_extra, PYTHONPATH=":".join(paths), PYTHONDONTWRITEBYTECODE="1")
    script = os.path.join(REPO, "tests", "device", "compile_kernels.py")
    return subprocess.Popen([sys.executable, script, out_json, *labels], env=env)


def _relative_locs(text, triton_dir):
    """Absolute source paths in loc(...) made relative: this repository's, and Triton's."""
    text = text.replace(f'"{REPO}/', '"')
    return text.replace(f'"{os.path.dirname(triton_dir)}/', '"')


def main(argv):
    """Compile, copy the fixtures, write expected.tsv."""
    out_dir = argv[argv.index("--out") + 1] if "--out" in argv else os.path.join(REPO, "tests", "data", "ttgir")
    import triton

    triton_dir = os.path.dirname(triton.__file__)
    work = tempfile.mkdtemp(prefix="caliber-capture-")
    stock_json, base_json = os.path.join(work, "stock.json"), os.path.join(work, "baseline.json")
    procs = [compile_catalog(stock_json, {"TRITON_CACHE_DIR": os.path.join(work, "stock")}, False, []),
             compile_catalog(base_json, {"TRITON_CACHE_DIR": os.path.join(work, "baseline")}, True, BASELINE_LABELS)]
    if any(p.wait() != 0 for p in procs):
        sys.exit("capture_ttgir: a compile run failed")
    with open(stock_json) as f:
        stock = json.load(f)
    with open(base_json) as f:
        baseline = json.load(f)
    files = {}
    for runs, suffix in ((stock, ""), (baseline, "__baseline")):
        for label, entries in runs.items():
            for entry in entries:
                name = label if len(entries) == 1 else f"{label}__{entry['kernel'].lstrip('_')}"
                with open(entry["ttgir"]) as f:
                    files[f"{name}{suffix}.ttgir"] = _relative_locs(f.read(), triton_dir)
    if sum(len(t.encode()) for t in files.values()) > MAX_TOTAL_BYTES:
        sys.exit("capture_ttgir: the fixtures would exceed 1 MB")
    os.makedirs(out_dir, exist_ok=True)
    lines = ["file\tcount"]
    for name in sorted(files):
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(files[name])
        lines.append(f"{name}\t{count_converts(files[name])}")
    with open(os.path.join(out_dir, "expected.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
