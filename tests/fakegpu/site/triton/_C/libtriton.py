"""triton._C.libtriton of the fake GPU: the pass constructors make_ttgir
calls, each adding its pass's name to the pass manager (a list). The demo
compiler swaps add_remove_layout_conversions for a gate while make_ttgir
runs, as on the real Triton."""

import types


def _adder(name):
    def add(pm):
        pm.append(name)
    add.__name__ = f"add_{name}"
    return add


ttgpuir = types.SimpleNamespace(**{f"add_{n}": _adder(n) for n in (
    "coalesce", "remove_layout_conversions", "optimize_thread_locality", "accelerate_matmul",
    "optimize_dot_operands", "pipeline", "prefetch", "reduce_data_duplication", "reorder_instructions")})
passes = types.SimpleNamespace(ttgpuir=ttgpuir)
