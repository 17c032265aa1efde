"""The demo compiler change: gate the 2nd and 3rd RemoveLayoutConversions runs
of the NVIDIA backend's make_ttgir behind two environment variables.

Stock Triton 3.6 runs passes.ttgpuir.add_remove_layout_conversions three times
in make_ttgir: after coalescing, after accelerate_matmul, and late, before
reduce_data_duplication. This module replaces the "ttgir" stage through
triton.knobs.runtime.add_stages_inspection_hook with one that calls the stock
make_ttgir while add_remove_layout_conversions is swapped for a gate:

    run 1                always added (stock)
    run 2                added when CALIBER_DEMO_RLC_ENHANCE=1 and bit 0 of the mask is set
    run 3                added when CALIBER_DEMO_RLC_ENHANCE=1 and bit 1 of the mask is set

with the mask from CALIBER_DEMO_RLC_PHASE_MASK (default 0). Unset or 0
ENHANCE drops both (the baseline); ENHANCE=1 with mask 0 drops both too (the
control, byte-identical TTGIR to the baseline); mask 3 adds both, which is
stock Triton (the candidate). The variables are read at every compilation.
Triton's cache key does not see this hook: each cell needs its own cache."""

import importlib
import os
import threading

ENHANCE = "CALIBER_DEMO_RLC_ENHANCE"
MASK = "CALIBER_DEMO_RLC_PHASE_MASK"
_lock = threading.Lock()


def enabled_runs():
    """The 1-based RemoveLayoutConversions runs of make_ttgir that are added now."""
    runs = {1}
    if os.environ.get(ENHANCE, "0") == "1":
        mask = int(os.environ.get(MASK, "0") or "0")
        if mask & 1:
            runs.add(2)
        if mask & 2:
            runs.add(3)
    return runs


def _gated_make_ttgir(backend, options, capability):
    """The ttgir stage: stock make_ttgir with the 2nd and 3rd RLC runs gated."""
    from triton._C.libtriton import passes

    def stage(src, metadata):
        runs = enabled_runs()
        with _lock:
            original = passes.ttgpuir.add_remove_layout_conversions
            calls = []

            def gate(pm):
                calls.append(len(calls) + 1)
                if calls[-1] in runs:
                    original(pm)

            passes.ttgpuir.add_remove_layout_conversions = gate
            try:
                module = backend.make_ttgir(src, metadata, options, capability)
            finally:
                passes.ttgpuir.add_remove_layout_conversions = original
        if len(calls) != 3:
            raise RuntimeError(f"caliber demo compiler: make_ttgir added RemoveLayoutConversions {len(calls)} "
                               "times, expected 3 (Triton 3.6); the gate does not fit this Triton")
        return module

    return stage


def stages_hook(backend, stages, options, language, capability):
    """add_stages_inspection_hook: swap in the gated ttgir stage for Triton kernels."""
    from triton.backends.compiler import Language

    if language == Language.TRITON and "ttgir" in stages and capability is not None:
        stages["ttgir"] = _gated_make_ttgir(backend, options, capability)


def install():
    """Set the hook on the imported triton; refuses to replace someone else's hook."""
    runtime = importlib.import_module("triton.knobs").runtime
    current = getattr(runtime, "add_stages_inspection_hook", "missing")
    if current == "missing":
        raise RuntimeError("caliber demo compiler: this Triton has no knobs.runtime.add_stages_inspection_hook")
    if current is not None and current is not stages_hook:
        raise RuntimeError("caliber demo compiler: add_stages_inspection_hook is already set by someone else")
    runtime.add_stages_inspection_hook = stages_hook
