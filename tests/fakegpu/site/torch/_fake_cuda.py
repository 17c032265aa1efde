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
import os
import threading
import types

# The name a kernel launched with no name of its own gets (torch's own
# kernels, the stand-ins of tests); Triton's kernels carry their own.
NON_TRITON_KERNEL = ("void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctorOnSelf_add<c10::Half>, "
                     "std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<c10::Half>, std::array<char*, 2ul>)")


class FakeCuda:
    """torch.cuda with a simulated clock: run(ms) is a kernel of ms, which
    advances the clock, or, while a graph is being captured, joins the graph,
    whose every replay runs it again. ms is a number, or a callable giving
    the time of each run (a kernel whose time varies a little, as a real
    one's does)."""

    def __init__(self, capture_error=None):
        self.now = 0.0
        self.capturing = None
        self.profiler = None
        self.correlation = 0
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
            """The kernels captured, (name, ms) each; a replay runs them in capture order."""

            def __init__(self):
                self.kernels = []

            def replay(self):
                cuda.runtime_call("cudaGraphLaunch")
                for name, ms in self.kernels:
                    cuda.execute(name, ms() if callable(ms) else ms)

            def reset(self):
                self.kernels = []

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

    def run(self, ms, stream=None, name=NON_TRITON_KERNEL):
        """One kernel launch named name lasting ms (a number, or a callable
        giving it), on stream (default: the current one)."""
        if self.capturing is not None and stream is not None and stream is not self.capture_stream:
            # queued outside the capture: it runs now, and the capture is invalid
            self.invalidated = True
            self.runtime_call("cudaLaunchKernel")
            self.execute(name, ms() if callable(ms) else ms)
        elif self.capturing is not None:
            self.capturing.kernels.append((name, ms))
        else:
            self.runtime_call("cudaLaunchKernel")
            self.execute(name, ms() if callable(ms) else ms)

    def execute(self, name, ms):
        """A kernel runs on the device: the clock advances, and a profiler that is on records it."""
        start = self.now
        self.now += ms
        if self.profiler is not None:
            self.profiler.kernel(name, start, self.now, self.correlation)

    def runtime_call(self, name):
        """A CUDA runtime call of the host (a launch): what a profiler correlates the kernels with."""
        self.correlation += 1
        if self.profiler is not None:
            self.profiler.runtime(name, self.now, self.correlation)

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
        return os.environ.get("FAKEGPU_NAME", "Fake GPU")

    def get_device_properties(self, index):
        return types.SimpleNamespace(name=self.get_device_name(index), uuid="00000000-0000-0000-0000-000000000000",
                                     multi_processor_count=132, major=9, minor=0)

    def get_device_capability(self, index=0):
        return (9, 0)

    def manual_seed(self, seed):
        pass

    def empty_cache(self):
        pass


class DeviceType:
    """torch.autograd.DeviceType as a kineto event gives it: an enum member with a name."""

    class Member:
        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return f"DeviceType.{self.name}"

    CPU = Member("CPU")
    CUDA = Member("CUDA")


# Kineto's clock is the host's, in ns since the epoch; the fake's starts here.
EPOCH_NS = 1_767_225_600_000_000_000


class KinetoEvent:
    """One record of a finished profile (torch's _KinetoEvent), as the H200's
    are (tests/data/kernels/h200): a host runtime call (device type CPU, the
    process and thread as device index and resource), or a kernel on the
    device (CUDA, device 0, its stream as resource) that carries the
    correlation id of the call that launched it (for a graph's kernels, the
    cudaGraphLaunch)."""

    def __init__(self, name, device_type, start_ms, end_ms, correlation):
        self._name, self._type = name, device_type
        self._start, self._end = EPOCH_NS + int(round(start_ms * 1e6)), EPOCH_NS + int(round(end_ms * 1e6))
        self._correlation = correlation

    def name(self):
        return self._name

    def device_type(self):
        return self._type

    def device_index(self):
        return 0 if self._type is DeviceType.CUDA else os.getpid()

    def device_resource_id(self):
        return 7 if self._type is DeviceType.CUDA else threading.get_native_id()

    def start_ns(self):
        return self._start

    def end_ns(self):
        return self._end

    def duration_ns(self):
        return self._end - self._start

    def correlation_id(self):
        return self._correlation

    def linked_correlation_id(self):
        return 0


class Recording:
    """What one profiling session of the fake device gathers."""

    def __init__(self):
        self.events = []

    def kernel(self, name, start_ms, end_ms, correlation):
        self.events.append(KinetoEvent(name, DeviceType.CUDA, start_ms, end_ms, correlation))

    def runtime(self, name, now_ms, correlation):
        self.events.append(KinetoEvent(name, DeviceType.CPU, now_ms, now_ms + 0.002, correlation))


def profiler_module(cuda):
    """torch.profiler over the fake device: profile(activities=[...]) records, while on,
    every runtime call and kernel of cuda; once it has exited its events are
    prof.profiler.kineto_results.events(), as torch's are."""

    class ProfilerActivity:
        CPU = "ProfilerActivity.CPU"
        CUDA = "ProfilerActivity.CUDA"

    class profile:
        def __init__(self, activities=None, **kwargs):
            self.activities = list(activities or [ProfilerActivity.CPU, ProfilerActivity.CUDA])
            self.profiler = None

        def __enter__(self):
            if cuda.profiler is not None:
                raise RuntimeError("Can't disable Kineto profiler when it's not running")
            cuda.profiler = Recording()
            return self

        def __exit__(self, *exc):
            recording, cuda.profiler = cuda.profiler, None
            kept = [e for e in recording.events
                    if (e.device_type() is DeviceType.CUDA) == (ProfilerActivity.CUDA in self.activities)
                    or e.device_type() is DeviceType.CPU]
            results = types.SimpleNamespace(events=lambda: list(kept))
            self.profiler = types.SimpleNamespace(kineto_results=results)
            return False

    return types.SimpleNamespace(profile=profile, ProfilerActivity=ProfilerActivity, DeviceType=DeviceType)
