"""flag_gems for the fake GPU: use_gems() and one kernel whose time depends on
whether FlagGems is in use (tests/python/test_flaggems_compat.py)."""

import torch

device = "cuda"
vendor_name = "nvidia"
enabled = 0


class use_gems:
    def __enter__(self):
        global enabled
        enabled += 1

    def __exit__(self, *exc):
        global enabled
        enabled -= 1


def kernel(x, torch_ms, gems_ms):
    torch.cuda.run(gems_ms if enabled else torch_ms)
    return x


def kernel_with_grad(x, ms, backward_ms):
    """A forward kernel of ms whose output's backward (torch.autograd.grad)
    is a kernel of backward_ms on the stream current now, as torch's
    autograd runs a backward on its forward's stream."""
    torch.cuda.run(ms)
    out = x._like()
    out._backward = (torch.cuda.current_stream(), backward_ms)
    return out
