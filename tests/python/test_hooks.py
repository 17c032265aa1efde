"""Attaching to Triton's runtime hooks: HookChain (Triton 3.6) and single callables."""

from caliber_pytest import _hooks


class FakeChain:
    """The add/remove/call surface of triton.knobs.HookChain."""

    def __init__(self):
        self.calls = []

    def add(self, fn):
        self.calls.append(fn)

    def remove(self, fn):
        self.calls.remove(fn)


class Runtime:
    pass


def test_chain_gets_added_and_removed():
    runtime = Runtime()
    runtime.launch_enter_hook = chain = FakeChain()
    seen = []
    token = _hooks.attach(runtime, "launch_enter_hook", seen.append)
    assert chain.calls == [seen.append]
    _hooks.detach(runtime, "launch_enter_hook", seen.append, token)
    assert chain.calls == [] and runtime.launch_enter_hook is chain


def test_single_callable_is_chained_then_restored():
    runtime = Runtime()
    order = []

    def previous(x):
        order.append(("previous", x))

    runtime.launch_enter_hook = previous

    def mine(x):
        order.append(("mine", x))

    token = _hooks.attach(runtime, "launch_enter_hook", mine)
    runtime.launch_enter_hook(7)
    assert order == [("previous", 7), ("mine", 7)]
    _hooks.detach(runtime, "launch_enter_hook", mine, token)
    assert runtime.launch_enter_hook is previous


def test_none_is_restored_to_none():
    runtime = Runtime()
    runtime.launch_enter_hook = None
    seen = []
    token = _hooks.attach(runtime, "launch_enter_hook", seen.append)
    runtime.launch_enter_hook(1)
    assert seen == [1]
    _hooks.detach(runtime, "launch_enter_hook", seen.append, token)
    assert runtime.launch_enter_hook is None
