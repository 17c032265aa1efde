"""A simulated GPU for the tests that have none: torch.cuda's events, graphs
and synchronize over a clock that kernels advance (FakeCuda), and, for pytest
runs in a child process, fake torch, triton and flag_gems packages built on it
(write_fake_site)."""

import contextlib
import os
import textwrap
import types


class FakeCuda:
    """torch.cuda with a simulated clock: run(ms) is a kernel of ms, which advances
    the clock, or, while a graph is being captured, adds ms to each replay."""

    def __init__(self, capture_error=None):
        self.now = 0.0
        self.capturing = None
        self.capture_error = capture_error
        cuda = self

        class Event:
            def __init__(self, enable_timing):
                assert enable_timing

            def record(self):
                self.t = cuda.now

            def elapsed_time(self, end):
                return end.t - self.t

        class CUDAGraph:
            def __init__(self):
                self.ms = 0.0

            def replay(self):
                cuda.now += self.ms

        class GeneratorState:
            def __init__(self, capturing=False):
                self.capturing = capturing

        class Generator:
            """torch's CUDA generator as far as graph capture concerns it: a
            capture marks its state capturing until the capture ends well."""

            def __init__(self):
                self.state = GeneratorState()

            def clone_state(self):
                clone = Generator()
                clone.state = GeneratorState(self.state.capturing)
                return clone

            def graphsafe_set_state(self, other):
                self.state = other.state

            def draw(self):
                if self.state.capturing and cuda.capturing is None:
                    raise RuntimeError("Offset increment outside graph capture encountered unexpectedly.")

        self.Event = Event
        self.CUDAGraph = CUDAGraph
        self.default_generators = (Generator(),)

    def run(self, ms):
        """One kernel launch lasting ms."""
        if self.capturing is not None:
            self.capturing.ms += ms
        else:
            self.now += ms

    @contextlib.contextmanager
    def graph(self, graph):
        """Capture like torch.cuda.graph: the generator is marked capturing at the
        start and unmarked only when the capture ends well."""
        generator = self.default_generators[self.current_device()]
        generator.state.capturing = True
        if self.capture_error:
            raise self.capture_error
        self.capturing = graph
        try:
            yield
        finally:
            self.capturing = None
        generator.state.capturing = False

    def current_device(self):
        return 0

    def synchronize(self):
        pass

    def is_available(self):
        return True

    def get_device_properties(self, index):
        return types.SimpleNamespace(uuid="00000000-0000-0000-0000-000000000000")


# Packages importable as torch, triton and flag_gems in a child pytest process;
# FAKE_TRITON_LOG names a file where Triton's own do_bench notes its calls.
FAKE_PACKAGES = {
    "torch/__init__.py": """
        from fake_gpu import FakeCuda

        cuda = FakeCuda()


        class dtype:
            def __init__(self, name, is_floating_point):
                self.name = name
                self.is_floating_point = is_floating_point

            def __repr__(self):
                return f"torch.{self.name}"

            __str__ = __repr__


        float16 = dtype("float16", True)
        float32 = dtype("float32", True)
        bfloat16 = dtype("bfloat16", True)
        int32 = dtype("int32", False)


        class Size(tuple):
            pass


        class Tensor:
            def __init__(self, shape, dtype):
                self.shape = Size(shape)
                self.dtype = dtype
                self.grad = None

            def size(self):
                return self.shape


        def randn(shape, dtype=float32, device=None):
            return Tensor(shape, dtype)
    """,
    "triton/__init__.py": """
        from . import testing
    """,
    "triton/testing.py": """
        import json
        import os
        import statistics

        import torch


        def _note(name, **kwargs):
            path = os.environ.get("FAKE_TRITON_LOG")
            if path:
                with open(path, "a") as f:
                    f.write(json.dumps(dict(kwargs, name=name)) + "\\n")


        def _mean_ms(fn, calls=4):
            fn()
            start = torch.cuda.now
            for _ in range(calls):
                fn()
            return (torch.cuda.now - start) / calls


        def _summarize_statistics(times, quantiles, return_mode):
            ordered = sorted(times)
            if quantiles is not None:
                ret = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
                return ret[0] if len(ret) == 1 else ret
            if return_mode == "all":
                return list(times)
            return {"mean": statistics.mean, "median": statistics.median, "min": min, "max": max}[return_mode](times)


        def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
            _note("do_bench", warmup=warmup, rep=rep)
            return _summarize_statistics([_mean_ms(fn)] * 3, quantiles, return_mode)


        def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
            _note("do_bench_cudagraph", rep=rep)
            return _summarize_statistics([_mean_ms(fn)] * 3, quantiles, return_mode)
    """,
    "triton/runtime/__init__.py": "",
    "triton/runtime/autotuner.py": """
        class Autotuner:
            def run(self, *args, **kwargs):
                return self._bench(*args, **kwargs)

            def _bench(self, *args, **kwargs):
                return [0.0, 0.0, 0.0]
    """,
    "flag_gems/__init__.py": """
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
    """,
}


def write_fake_site(root):
    """Write the fake packages under root; returns root as a string for PYTHONPATH."""
    for rel, text in FAKE_PACKAGES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text).lstrip())
    return str(root)
