"""What a request spent compiling (docs/formats.md, `compile.json`): the
report's wall-time section shows beside each cell's time per phase how much
of it Triton spent compiling, so that a campaign shows where its time goes
(a FlagGems operator's correctness compiled a kernel per test case in each of
its three cells).

Triton 3.6 calls knobs.compilation.listener(src=, metadata=, metadata_group=,
times=, cache_hit=) at the end of every triton.compile: with cache_hit=False
after it compiled the kernel, with cache_hit=True when it found the kernel in
its on-disk cache (TRITON_CACHE_DIR). A kernel the process already holds in
memory never reaches triton.compile, so it is not counted. `times` is a
knobs.CompileTimes, all in microseconds: ir_initialization, lowering_stages
[(stage, us)], store_results, and `total`, their sum; on a cache hit it is
the lookup alone (ir_initialization). A Triton without the listener leaves
the counts at zero and says so (listened false)."""

import os

from ._common import atomic_write_text, dumps_json


def _micros(times):
    """times.total as microseconds, or 0 when it is not a count."""
    total = getattr(times, "total", None)
    return total if isinstance(total, int) and not isinstance(total, bool) and total >= 0 else 0


class CompileLog:
    """One request's compiles and cache hits, and the microseconds each took;
    the listener while attached, chaining the one that was there before."""

    def __init__(self):
        self.compiles = 0
        self.compile_us = 0
        self.cache_hits = 0
        self.cache_hit_us = 0
        self.listened = False
        self.previous = None

    def __call__(self, *, src=None, metadata=None, metadata_group=None, times=None, cache_hit=False, **rest):
        if cache_hit:
            self.cache_hits += 1
            self.cache_hit_us += _micros(times)
        else:
            self.compiles += 1
            self.compile_us += _micros(times)
        if self.previous is not None:
            self.previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                          cache_hit=cache_hit, **rest)

    def attach(self, knobs):
        """Listen to knobs.compilation, when this Triton has the listener."""
        compilation = getattr(knobs, "compilation", None)
        if compilation is None or not hasattr(compilation, "listener"):
            return
        self.previous, compilation.listener, self.listened = compilation.listener, self, True

    def detach(self, knobs):
        """Put back what was listening before (once; the counts stay)."""
        if self.listened and knobs.compilation.listener is self:
            knobs.compilation.listener, self.previous = self.previous, None

    def record(self):
        """compile.json's fields."""
        return {"cache_hit_us": self.cache_hit_us, "cache_hits": self.cache_hits, "compile_us": self.compile_us,
                "compiles": self.compiles, "listened": self.listened}

    def write(self, cell_dir):
        """<cell dir>/compile.json."""
        atomic_write_text(os.path.join(cell_dir, "compile.json"), dumps_json(self.record()))
