"""triton.knobs of the fake GPU: the runtime hooks caliber's plugins and the
demo compiler use, as Triton 3.6 holds them (launch and load hooks are
HookChains; the stages hook is a plain attribute)."""


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


class runtime:
    launch_enter_hook = HookChain()
    launch_exit_hook = HookChain()
    kernel_load_end_hook = HookChain()
    add_stages_inspection_hook = None


class cache:
    dir = None
