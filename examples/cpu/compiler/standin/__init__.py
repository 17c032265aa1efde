"""A stand-in GPU compiler for caliber's CPU example (examples/cpu/README.md).

It stands for Triton with the demo change of examples/demo-compiler: the
layout pass (RemoveLayoutConversions) runs up to three times, and the change
puts the 2nd and 3rd runs behind the same switches the demo's cells set:

    CALIBER_DEMO_RLC_ENHANCE=0                         the 1st run only (baseline)
    CALIBER_DEMO_RLC_ENHANCE=1 CALIBER_DEMO_RLC_PHASE_MASK=M
                                                       also the 2nd run when bit 0 of M
                                                       is set, the 3rd when bit 1 is
                                                       (0: the control, 3: the candidate)

It compiles the five kernels of the example's corpus, each described in
KERNELS by what it is after 1, 2 or 3 runs of the pass: how many
ttg.convert_layout operations its TTGIR keeps, how long one call takes (in
nanoseconds, on the stand-in device) and whether it still computes the right
thing. That table is the whole model: no code is compiled and nothing is
timed, so that the campaign's verdicts follow from it (matmul G, layer_norm
C, softmax B, transpose R, gelu K) on any machine.
"""

import base64
import hashlib
import os

# op: (kernel, converts, ns, correct), each tuple indexed by the number of
# runs of the layout pass minus one.
KERNELS = {
    "matmul": ("_matmul_kernel", (3, 1, 1), (64000, 48000, 48000), (True, True, True)),
    "layer_norm": ("_layer_norm_kernel", (2, 2, 1), (20100, 20100, 20050), (True, True, True)),
    "softmax": ("_softmax_kernel", (0, 0, 0), (15000, 15000, 15000), (True, True, True)),
    "transpose": ("_transpose_kernel", (1, 1, 1), (10000, 10000, 10600), (True, True, True)),
    "gelu": ("_gelu_kernel", (0, 0, 0), (9000, 9000, 9000), (True, True, False)),
}


def layout_runs(env=None):
    """How many runs of the layout pass this build does under env (default
    os.environ): 1, 2 or 3."""
    env = os.environ if env is None else env
    if env.get("CALIBER_DEMO_RLC_ENHANCE", "1") != "1":
        return 1
    mask = int(env.get("CALIBER_DEMO_RLC_PHASE_MASK", "3"))
    return 1 + (mask & 1) + (mask >> 1 & 1)


def _table_line(op):
    """The line of this file that holds op's row of KERNELS: where each of
    the kernel's ops comes from, as a loc in its TTGIR."""
    with open(__file__, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith(f'    "{op}": ('):
                return n
    return 0


def compile_kernel(op, env=None):
    """The compiled kernel of op: a dict with its name, its variant (a
    Triton-like cache name: base32 of a hash of its TTGIR), the TTGIR text,
    its convert count, the ns of one call and whether it is correct."""
    kernel, converts, ns, correct = KERNELS[op]
    runs = layout_runs(env)
    n = converts[runs - 1]
    lines = ["#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>",
             "#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>",
             f'#loc = loc("standin/__init__.py":{_table_line(op)}:4)',
             'module attributes {"ttg.num-warps" = 4 : i32} {',
             f"  tt.func public @{kernel}(%arg0: !tt.ptr<f16>) attributes {{noinline = false}} {{",
             "    %0 = arith.constant dense<0.000000e+00> : tensor<64x64xf16, #blocked> loc(#loc)"]
    for k in range(n):
        src, dst = ("#blocked", "#mma") if k % 2 == 0 else ("#mma", "#blocked")
        lines.append(f"    %{k + 1} = ttg.convert_layout %{k} : tensor<64x64xf16, {src}> -> tensor<64x64xf16, {dst}> "
                     f"loc(#loc{k + 1})")
    lines += ["    tt.return loc(#loc)", "  } loc(#loc)", "} loc(#loc)"]
    lines += [f'#loc{k + 1} = loc("standin/__init__.py":{_table_line(op)}:{8 + 4 * k})' for k in range(n)]
    text = "\n".join(lines) + "\n"
    variant = hashlib.sha256(text.encode()).digest()
    return {"kernel": kernel, "variant": base64.b32encode(variant).decode().rstrip("="), "ttgir": text,
            "converts": n, "ns": ns[runs - 1], "correct": correct[runs - 1]}
