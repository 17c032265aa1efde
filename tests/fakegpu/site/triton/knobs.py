"""triton.knobs of the fake GPU: the runtime hooks caliber's plugins and the
demo compiler use, as Triton 3.6 holds them (launch and load hooks are
HookChains; the stages hook is a plain attribute), and the compilation
listener with the CompileTimes it is given."""

import dataclasses


class HookChain:
    """Triton 3.6's chain of hook functions: add, remove, and call them all."""

    def __init__(self):
        self.calls = []

    def add(self, fn):
        self.calls.append(fn)

    def remove(self, fn):
        self.calls.remove(fn)

    def __call__(self, *args, **kwargs):
        for fn in list(self.calls):
            fn(*args, **kwargs)


@dataclasses.dataclass(frozen=True)
class CompileTimes:
    """Triton 3.6's timing of one triton.compile, all in microseconds: make_ir,
    each lowering stage, saving to the cache; total is their sum."""

    ir_initialization: int
    lowering_stages: list
    store_results: int

    @property
    def total_lowering(self):
        return sum(stage[1] for stage in self.lowering_stages)

    @property
    def total(self):
        return self.ir_initialization + self.total_lowering + self.store_results


class compilation:
    # called as listener(src=, metadata=, metadata_group=, times=, cache_hit=) at the end of each compile
    listener = None


class runtime:
    launch_enter_hook = HookChain()
    launch_exit_hook = HookChain()
    kernel_load_end_hook = HookChain()
    add_stages_inspection_hook = None


class cache:
    dir = None
