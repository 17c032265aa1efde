"""caliber_pytest.ir_meta: the launch index and the IR of every variant.

Triton's kernel_load_end_hook tells which CUfunction belongs to which compiled
variant (its cache hash); launch_enter_hook tells which function each launch
runs. Joining the two gives, per variant, the launches of this request, split
into launches made while the autotuner benchmarks (tuning_launches) and the
rest. At the end of the request each variant's .ttgir and .json are copied to
<cell dir>/ir/<variant>/, ir/index.tsv is written, and ir/binaries.tsv with
each variant's binary identity (the digest of its compiled binary and of its
TTGIR without locations, and its launch configuration, _binaries); a later
timed session of a round (CALIBER_SESSION above 1) writes the index only,
since the cell's topology and binaries are its first session's and the IR
would repeat it. Launches inside a CUDA graph capture are counted when
captured, not when replayed; launches made while timing profiles a row
(_kernel_time) are not counted at all.

Beside the index, ir/resources.tsv says what each variant uses as loaded:
registers and spills from the CompiledKernel whose handles the load hook is
called for, shared memory, stages and warps from its metadata.

And <cell dir>/compile.json says what the request spent compiling: the
compiles and on-disk cache hits Triton's knobs.compilation.listener reported
while the request ran, and their microseconds (_compile_log)."""

import json
import os
import shutil
import sys

import pytest

from . import _binaries, _hooks, _kernel_time, _tuning
from ._compile_log import CompileLog
from ._common import atomic_write_text, drop_request_state, request_state, require_env, usage_error
from ._index import LaunchCounts, format_index
from ._resources import format_resources, resources
from ._variant import variant_name

PLUGIN = "ir_meta"
HOOKS = ("kernel_load_end_hook", "launch_enter_hook")
IR_SUFFIXES = (".ttgir", ".json")


class _Loaded:
    """A kernel loaded in this process: its variant, kernel name, cache files and resources."""

    def __init__(self, variant, kernel, group, resources):
        self.variant = variant
        self.kernel = kernel
        self.group = group
        self.resources = resources


# Process-wide by design, kept across requests: Triton loads a compiled variant
# once per process, so a variant loaded by an earlier request of this worker is
# joined to its launches in a later one only through this map (CUfunction -> _Loaded).
_loaded_by_function = {}


def variant_of(function):
    """The variant a launched function belongs to, or None when no load hook named it."""
    loaded = _loaded_by_function.get(function)
    return loaded.variant if loaded is not None else None


# How many callers of the load hook handler are looked at for Triton's
# CompiledKernel._init_handles: on the H200 (Triton 3.6) it is the second, after
# Triton's HookChain (tests/data/kernels/h200/loads.json); an older Triton's
# single hook is called through _hooks' chained function instead.
_LOADER_DEPTH = 4


def _loading_kernel(function):
    """The CompiledKernel whose _init_handles is calling the load hook: the
    nearest caller frame whose `self` holds this function and its registers
    (Triton 3.6 sets them before it calls the hook), or None."""
    frame = sys._getframe(2)
    for _ in range(_LOADER_DEPTH):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        if owner is not None and getattr(owner, "function", None) == function and hasattr(owner, "n_regs"):
            return owner
        frame = frame.f_back
    return None


def _json_metadata(group, name):
    """The variant's <name>.json from its metadata group, or {} when it cannot be read."""
    path = dict(group).get(name + ".json")
    try:
        with open(path) as f:
            return json.load(f)
    except (TypeError, OSError, ValueError):
        return {}


class _State:
    """One request: its counts, the variants it saw, launches no variant claimed,
    its handlers attached to Triton's hooks (name -> (handler, token)) and its
    compile log, listening to Triton's compiles."""

    def __init__(self, cell_dir):
        self.cell_dir = cell_dir
        self.counts = LaunchCounts()
        self.seen = {}
        self.unknown = set()
        self.attached = {}
        self.compiles = CompileLog()

    def on_load(self, module, function, name, metadata_group, hash):
        """kernel_load_end_hook: remember which variant this function is, and what it uses."""
        kernel = _loading_kernel(function)
        loaded = _Loaded(variant_name(hash), name, dict(metadata_group),
                         resources(kernel, None if kernel is not None else _json_metadata(metadata_group, name)))
        _loaded_by_function[function] = loaded
        self.counts.note_compiled(loaded.variant, loaded.kernel)
        self.seen[loaded.variant] = loaded

    def on_launch(self, metadata):
        """launch_enter_hook: count one launch of the variant the function belongs to."""
        if _kernel_time.profiling():
            return
        fields = metadata.get()
        loaded = _loaded_by_function.get(fields["function"])
        if loaded is None:
            self.unknown.add(str(fields.get("name")))
            return
        self.counts.note_launch(loaded.variant, loaded.kernel, _tuning.active())
        self.seen[loaded.variant] = loaded

    def handlers(self):
        """{hook name: this request's handler for it}."""
        return {"kernel_load_end_hook": self.on_load, "launch_enter_hook": self.on_launch}


# This request's _State lives in its config.stash under STATE, from pytest_configure to pytest_unconfigure;
# Triton's hooks reach it through its bound handlers, attached for that time only.
STATE = pytest.StashKey[_State]()


def pytest_configure(config):
    """Check the hooks exist, then attach this request's handlers to them and
    its compile log to the compilation listener."""
    cell_dir = require_env(PLUGIN, "CALIBER_CELL_DIR")
    try:
        from triton import knobs
    except ImportError as e:
        raise usage_error(PLUGIN, f"triton.knobs cannot be imported: {e}")
    missing = [h for h in HOOKS if not hasattr(knobs.runtime, h)]
    if missing:
        raise usage_error(PLUGIN, f"this Triton has no knobs.runtime.{', '.join(missing)}; "
                          "the launch index cannot be built")
    state = _State(cell_dir)
    for name, handler in state.handlers().items():
        state.attached[name] = (handler, _hooks.attach(knobs.runtime, name, handler))
    state.compiles.attach(knobs)
    _tuning.acquire()
    config.stash[STATE] = state


def _copy_ir(loaded, dest):
    """Copy a variant's .ttgir and .json into dest; returns the files it could not find."""
    os.makedirs(dest, exist_ok=True)
    missing = []
    cache_dir = os.environ.get("TRITON_CACHE_DIR")
    for suffix in IR_SUFFIXES:
        filename = loaded.kernel + suffix
        source = loaded.group.get(filename)
        if source is None and cache_dir:
            source = os.path.join(cache_dir, loaded.variant, filename)
        if source is None or not os.path.isfile(source):
            missing.append(filename)
            continue
        shutil.copyfile(source, os.path.join(dest, filename))
    return missing


def write_resources(ir_dir, state):
    """ir/resources.tsv: what each variant of the index uses, as loaded."""
    rows = [(v, state.seen[v].kernel, state.seen[v].resources) for v in state.counts.variants()]
    atomic_write_text(os.path.join(ir_dir, "resources.tsv"), format_resources(rows))


def _cache_group(loaded):
    """A variant's cache files (name -> path): the group Triton passed when it
    loaded the kernel, else the files of its folder in the cell's cache."""
    if loaded.group:
        return loaded.group
    cache_dir = os.environ.get("TRITON_CACHE_DIR")
    folder = os.path.join(cache_dir, loaded.variant) if cache_dir else None
    if not folder or not os.path.isdir(folder):
        return {}
    return {name: os.path.join(folder, name) for name in sorted(os.listdir(folder))}


def _write_binaries(state, ir_dir):
    """ir/binaries.tsv: the binary identity of every variant of the index."""
    rows = [_binaries.describe(v, state.seen[v].kernel, _cache_group(state.seen[v])) for v in state.counts.variants()]
    atomic_write_text(os.path.join(ir_dir, "binaries.tsv"), _binaries.format_binaries(rows))


def pytest_sessionfinish(session, exitstatus):
    """Write ir/<variant>/, ir/index.tsv, ir/binaries.tsv and compile.json; a
    launch of an unknown function fails the request."""
    state = request_state(session.config, STATE)
    if state is None:
        return
    ir_dir = os.path.join(state.cell_dir, "ir")
    os.makedirs(ir_dir, exist_ok=True)
    later_session = os.environ.get("CALIBER_SESSION", "1") != "1"
    for variant in [] if later_session else state.counts.variants():
        loaded = state.seen[variant]
        for filename in _copy_ir(loaded, os.path.join(ir_dir, variant)):
            print(f"caliber_pytest.{PLUGIN}: warning: {variant}/{filename} is not in the Triton cache")
    atomic_write_text(os.path.join(ir_dir, "index.tsv"), format_index(state.counts.rows()))
    write_resources(ir_dir, state)
    if not later_session:
        _write_binaries(state, ir_dir)
    state.compiles.write(state.cell_dir)
    if state.unknown:
        print(f"caliber_pytest.{PLUGIN}: launches of kernels loaded before the hook was attached: "
              f"{', '.join(sorted(state.unknown))}; the launch index is incomplete")
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR


def pytest_unconfigure(config):
    """Take this request's handlers off the hooks and its compile log off the
    listener, and forget it (the function map stays)."""
    state = drop_request_state(config, STATE)
    if state is None:
        return
    from triton import knobs

    for name, (handler, token) in state.attached.items():
        _hooks.detach(knobs.runtime, name, handler, token)
    state.attached.clear()
    state.compiles.detach(knobs)
    _tuning.release()
