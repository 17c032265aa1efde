"""The demo compiler on real Triton 3.6: the control compiles byte-identical
TTGIR to the baseline, mask 3 compiles what stock Triton does (loc aside), the
baseline keeps more converts in matmul_bias_gelu and attention_fwd, and the
variant names do not see the difference (why each cell needs its own cache)."""

import json
import re

from capture_ttgir import compile_catalog, count_converts

CELLS = {
    "stock": (False, {}),
    "baseline": (True, {}),
    "control": (True, {"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "0"}),
    "candidate": (True, {"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "3"}),
}
MORE_CONVERTS = ["matmul_bias_gelu", "attention_fwd"]
_LOC = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")


def _strip_loc(text):
    """TTGIR without location information: #loc lines and loc(...) suffixes."""
    return "\n".join(_LOC.sub("", line) for line in text.splitlines() if not line.startswith("#loc"))


def _texts(path):
    """{label: [(kernel, variant, ttgir text)]} of one compile_kernels.py run."""
    with open(path) as f:
        runs = json.load(f)
    out = {}
    for label, entries in runs.items():
        out[label] = []
        for e in entries:
            with open(e["ttgir"]) as f:
                out[label].append((e["kernel"], e["variant"], f.read()))
    return out


def test_baseline_control_candidate_stock(tmp_path):
    procs = {name: compile_catalog(str(tmp_path / f"{name}.json"), dict(env, TRITON_CACHE_DIR=str(tmp_path / name)),
                            demo, []) for name, (demo, env) in CELLS.items()}
    assert {name: p.wait() for name, p in procs.items()} == {name: 0 for name in CELLS}
    texts = {name: _texts(tmp_path / f"{name}.json") for name in CELLS}
    for label in sorted(texts["stock"]):
        print(label, " ".join(f"{cell}={sum(count_converts(t) for _, _, t in texts[cell][label])}" for cell in CELLS))
    assert len(texts["stock"]) >= 14
    for label in texts["stock"]:
        base, ctrl, cand, stock = (texts[c][label] for c in ("baseline", "control", "candidate", "stock"))
        assert [t for _, _, t in base] == [t for _, _, t in ctrl], f"{label}: control differs from baseline"
        assert [_strip_loc(t) for _, _, t in cand] == [_strip_loc(t) for _, _, t in stock], \
            f"{label}: mask 3 differs from stock Triton"
        assert [v for _, v, _ in base] == [v for _, v, _ in cand]  # same cache folder, other TTGIR
    for label in MORE_CONVERTS:
        (_, _, base), = texts["baseline"][label]
        (_, _, cand), = texts["candidate"][label]
        assert count_converts(base) > count_converts(cand), label
