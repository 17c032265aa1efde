"""Compile a catalog of corpus kernels in this process and say where their TTGIR is.

    python3 scripts/device/compile_kernels.py OUT.json [LABEL ...]

Run it with PYTHONPATH=python:ops for stock Triton, or with
examples/demo-compiler added (and the CALIBER_DEMO_* switches) for a demo
compiler cell; give each run its own TRITON_CACHE_DIR. Each catalog entry
runs its op once (compiling), then once more while Triton's hooks record which
variants it launches. Autotuned kernels are pinned to their first config, so
every run compiles the same specialization. OUT.json maps each label to
[{"kernel", "variant", "ttgir"}] (ttgir: the path in the Triton cache)."""

import importlib
import json
import sys

import torch
from triton import knobs

import caliber_ops as ops
from caliber_pytest._variant import variant_name


def _randn(*shape, dtype=torch.float16):
    return torch.randn(shape, device="cuda", dtype=dtype)


def _catalog():
    """label -> a call of one op on fixed inputs (reductions, softmax, copies, dots, loops, attention)."""
    x = _randn(1024, 4096)
    w, b = _randn(4096), _randn(4096)
    a, bm, bias = _randn(1024, 512), _randn(512, 768), _randn(768)
    q = _randn(2, 4, 512, 64)
    mean, rstd = x.float().mean(1), torch.rsqrt(x.float().var(1, unbiased=False) + 1e-5)
    return {
        "sum_rows": lambda: ops.sum_rows(x),
        "sum_cols": lambda: ops.sum_cols(x),
        "argmax_rows": lambda: ops.argmax_rows(x),
        "var_rows": lambda: ops.var_rows(x),
        "softmax_rows": lambda: ops.softmax_rows(x),
        "softmax_cols": lambda: ops.softmax_cols(x),
        "log_softmax_cols": lambda: ops.log_softmax_cols(x),
        "layer_norm_fwd": lambda: ops.layer_norm_fwd(x, w, b),
        "layer_norm_bwd": lambda: ops.layer_norm_bwd(x, x, w, mean, rstd),
        "cross_entropy": lambda: ops.cross_entropy(x, torch.zeros(1024, dtype=torch.int64, device="cuda")),
        "cumsum": lambda: ops.cumsum(x),
        "transpose": lambda: ops.transpose(x),
        "permute_copy": lambda: ops.permute_copy(x.view(16, 64, 4096)),
        "topk": lambda: ops.topk(x, 8),
        "matmul": lambda: ops.matmul(a, bm),
        "matmul_bias_gelu": lambda: ops.matmul_bias_gelu(a, bm, bias),
        "attention_fwd": lambda: ops.attention_fwd(q, q, q),
    }


class _Recorder:
    """Joins launches to variants through Triton's load and launch hooks."""

    def __init__(self):
        self.loaded = {}
        self.launched = None

    def on_load(self, module, function, name, metadata_group, hash):
        self.loaded[function] = {"kernel": name, "variant": variant_name(hash),
                                 "ttgir": metadata_group.get(f"{name}.ttgir")}

    def on_launch(self, metadata):
        if self.launched is not None:
            entry = self.loaded[metadata.get()["function"]]
            if entry not in self.launched:
                self.launched.append(entry)


def main(argv):
    """Compile the catalog (or the labels given) and write OUT.json."""
    out_path, labels = argv[0], argv[1:]
    matmul_module = importlib.import_module("caliber_ops.matmul")  # the package re-exports a function of that name
    for tuner in (matmul_module._matmul_kernel, matmul_module._bmm_kernel, matmul_module._matmul_bias_gelu_kernel):
        tuner.configs = tuner.configs[:1]
    torch.manual_seed(0)
    catalog = _catalog()
    recorder = _Recorder()
    knobs.runtime.kernel_load_end_hook.add(recorder.on_load)
    knobs.runtime.launch_enter_hook.add(recorder.on_launch)
    result = {}
    for label in labels or sorted(catalog):
        catalog[label]()
        recorder.launched = []
        catalog[label]()
        torch.cuda.synchronize()
        result[label], recorder.launched = recorder.launched, None
        print(label, " ".join(f"{e['kernel']}:{e['variant']}" for e in result[label]))
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
