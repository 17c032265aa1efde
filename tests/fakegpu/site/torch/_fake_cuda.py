"""torch.cuda of the fake GPU: events, graphs, streams and a CUDA generator
over a clock that kernels advance. Standalone (no torch import), so that the
tests in tests/python can use it in-process too.

Streams behave as torch's do where graph capture is concerned: a capture
runs on its capture stream (the one given, else one shared by every capture
of the process), which is current inside it; work queued on another stream
while capturing (autograd runs a backward on the stream of its forward)
invalidates the capture, which then fails at its end, and a failed capture
leaves its capture stream current (torch.cuda.graph restores the stream
only after capture_end, which raises)."""

import contextlib
import types


class FakeCuda:
    """torch.cuda with a simulated clock: run(ms) is a kernel of ms, which
    advances the clock, or, while a graph is being captured, joins the graph,
    whose every replay runs it again. ms is a number, or a callable giving
    the time of each run (a kernel whose time varies a little, as a real
    one's does)."""

    def __init__(self, capture_error=None):
        self.now = 0.0
        self.capturing = None
        self.capture_error = capture_error
        cuda = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing

            def record(self, stream=None):
                self.t = cuda.now

            def elapsed_time(self, end):
                return end.t - self.t

            def synchronize(self):
                pass

        class CUDAGraph:
            def __init__(self):
                self.ms = 0.0
                self.kernels = []

            def replay(self):
                cuda.now += self.ms + sum(k() for k in self.kernels)

            def reset(self):
                self.ms, self.kernels = 0.0, []

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

        class Stream:
            """A stream: the fake GPU runs everything in order, so waits are no-ops."""

            def wait_stream(self, other):
                pass

        self.Event = Event
        self.CUDAGraph = CUDAGraph
        self.Stream = Stream
        self.default_generators = (Generator(),)
        self.default_stream = Stream()
        self.default_capture_stream = Stream()
        self.current = self.default_stream
        self.capture_stream = None
        self.invalidated = False

    def run(self, ms, stream=None):
        """One kernel launch lasting ms (a number, or a callable giving it), on
        stream (default: the current one)."""
        if self.capturing is not None and stream is not None and stream is not self.capture_stream:
            # queued outside the capture: it runs now, and the capture is invalid
            self.invalidated = True
            self.now += ms() if callable(ms) else ms
        elif self.capturing is not None:
            if callable(ms):
                self.capturing.kernels.append(ms)
            else:
                self.capturing.ms += ms
        else:
            self.now += ms() if callable(ms) else ms

    @contextlib.contextmanager
    def graph(self, graph, pool=None, stream=None):
        """Capture like torch.cuda.graph: on stream (else the process's shared
        capture stream), current inside; the generator is marked capturing at
        the start and unmarked only when the capture ends well. A capture that
        fails leaves its stream current."""
        generator = self.default_generators[self.current_device()]
        generator.state.capturing = True
        if self.capture_error:
            raise self.capture_error
        before = self.current
        self.capture_stream = self.current = stream if stream is not None else self.default_capture_stream
        self.capturing, self.invalidated = graph, False
        try:
            yield
        finally:
            self.capturing = None
        if self.invalidated:
            raise RuntimeError("CUDA error: operation failed due to a previous error during capture")
        self.current, self.capture_stream = before, None
        generator.state.capturing = False

    def init(self):
        pass

    def current_stream(self, device=None):
        return self.current

    @contextlib.contextmanager
    def stream(self, stream):
        """torch.cuda.stream: stream is current inside, the previous one after."""
        before, self.current = self.current, stream
        try:
            yield
        finally:
            self.current = before

    def current_device(self):
        return 0

    def set_device(self, index):
        if index != 0:
            raise RuntimeError(f"invalid device ordinal {index}: one fake GPU is visible")

    def device_count(self):
        return 1

    def synchronize(self, device=None):
        pass

    def is_available(self):
        return True

    def get_device_name(self, index=0):
        return "Fake GPU"

    def get_device_properties(self, index):
        return types.SimpleNamespace(name="Fake GPU", uuid="00000000-0000-0000-0000-000000000000",
                                     multi_processor_count=132, major=9, minor=0)

    def get_device_capability(self, index=0):
        return (9, 0)

    def manual_seed(self, seed):
        pass

    def empty_cache(self):
        pass
