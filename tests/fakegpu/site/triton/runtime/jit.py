"""triton.jit of the fake GPU: kernels that compile and launch the way
Triton 3.6's do, as far as caliber can see it, with no code running.

Compiling a specialization (the dtypes of its tensor arguments, its
compile-time constants and launch options) runs the NVIDIA backend's
stages through knobs.runtime.add_stages_inspection_hook, so a compiler
change hooked there (examples/demo-compiler) changes what make_ttgir
builds. The TTGIR written holds one ttg.convert_layout per dot of the
kernel (tl.dot in its source or in the jitted helpers it calls), plus two
more per dot for each of the 2nd and 3rd RemoveLayoutConversions runs that
make_ttgir did not add, plus one for a tl.trans, tl.cumsum or tl.sort. The
cache folder TRITON_CACHE_DIR/<base32 of the hash>/ holds what Triton 3.6's
NVIDIA backend writes there, in its order: <name>.ttir, .ttgir, .llir, .ptx,
.cubin and .json, and __grp__<name>.json listing them (and .source first,
as Triton 3.6 writes it). The cubin is an ELF like ptxas's: its .text
follows from what the code is (kernel, specialization, options, converts),
and its .debug_line names the folders of the kernel's source and of this
triton, as the line tables of a real cubin do. kernel_load_end_hook is called
with (module, function, name, metadata_group, hash), metadata_group mapping
each file's name to its path. Like Triton's, the hash does not see the
stages hook, and a specialization whose folder already holds its group and
metadata (another process of the cell compiled it) is loaded from there
without running the stages. Either way knobs.compilation.listener, when
set, is called as Triton 3.6's compile() calls it: with cache_hit and a
knobs.CompileTimes, in microseconds that follow from the kernel (its
converts), not from this machine's speed. Every launch
calls launch_enter_hook and lasts, on torch.cuda's clock, a time that grows
with the bytes of its tensor arguments and, for a kernel with dots, with its
converts; it varies from launch to launch and, a little, from one request
to the next (_Noise), so that identical cells time alike but not
identically, and the drift between requests is what separates them."""

import base64
import collections
import hashlib
import inspect
import json
import os
import random
import re
import struct

import torch

from .. import knobs
from .._C.libtriton import passes
from ..backends.compiler import Language

_handles = iter(range(0x7F0000001000, 1 << 62, 0x100))
# The fields of a compiled kernel's metadata that caliber reads (Triton's is a namedtuple of every key).
_KernelMetadata = collections.namedtuple("KernelMetadata", ["hash", "name", "num_ctas", "num_stages", "num_warps",
                                                            "shared"])


class _LaunchMetadata:
    """What launch_enter_hook receives: .get() gives the launch's fields."""

    def __init__(self, fields):
        self._fields = fields

    def get(self):
        return dict(self._fields)


class _Source:
    """The ttir stage's output: which kernel and what its TTGIR depends on."""

    def __init__(self, fn, name, dots, base):
        self.fn = fn
        self.name = name
        self.dots = dots
        self.base = base


def _rlc_runs(pm):
    """Which of make_ttgir's three RemoveLayoutConversions runs the pass list holds:
    the one after coalesce (1), after accelerate_matmul (2), after prefetch (3)."""
    runs, last = set(), None
    for name in pm:
        if name == "remove_layout_conversions":
            runs.add({"coalesce": 1, "accelerate_matmul": 2, "prefetch": 3}.get(last, 0))
        else:
            last = name
    return runs


class Backend:
    """The NVIDIA backend as far as the demo compiler uses it."""

    def make_ttgir(self, src, metadata, options, capability):
        pm = []
        ttg = passes.ttgpuir
        ttg.add_coalesce(pm)
        ttg.add_remove_layout_conversions(pm)
        ttg.add_optimize_thread_locality(pm)
        ttg.add_accelerate_matmul(pm)
        ttg.add_remove_layout_conversions(pm)
        ttg.add_optimize_dot_operands(pm)
        ttg.add_pipeline(pm)
        ttg.add_prefetch(pm)
        ttg.add_remove_layout_conversions(pm)
        ttg.add_reduce_data_duplication(pm)
        ttg.add_reorder_instructions(pm)
        runs = _rlc_runs(pm)
        converts = src.base + src.dots * (1 + 2 * (2 not in runs) + 2 * (3 not in runs))
        metadata["converts"] = converts
        return _ttgir(src, converts, metadata)


def _ttgir(src, converts, metadata):
    """TTGIR text of a kernel with the given number of converts."""
    file = inspect.getsourcefile(src.fn) or "<unknown>"
    line = inspect.getsourcelines(src.fn)[1]
    warps = metadata.get("num_warps", 4)
    out = ['#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [%d], order = [0]}>'
           % warps,
           '#blocked1 = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [%d], order = [0]}>'
           % warps,
           '#loc = loc("%s":%d:0)' % (file, line),
           'module attributes {"ttg.num-warps" = %d : i32, "ttg.target" = "cuda:90"} {' % warps,
           '  tt.func public @%s(%%arg0: !tt.ptr<f16> loc("x"(#loc))) attributes {noinline = false} {' % src.name,
           '    %%c0 = arith.constant dense<0> : tensor<128xi32, #blocked> loc(#loc%d)' % 1]
    for k in range(converts):
        out.append('    %%%d = ttg.convert_layout %%c0 : tensor<128xi32, #blocked> -> tensor<128xi32, #blocked1> '
                   'loc(#loc%d)' % (k + 1, k + 2))
    out.append('    tt.return loc(#loc)')
    out.append('  } loc(#loc)')
    out.append('} loc(#loc)')
    for k in range(converts + 1):
        out.append('#loc%d = loc("%s":%d:%d)' % (k + 1, file, line + 1 + k, 4))
    return "\n".join(out) + "\n"


class CompiledKernel:
    """One specialization, compiled, then loaded by _init_handles as Triton 3.6
    loads it: the module, function and the registers and spills the driver
    reports are set, then kernel_load_end_hook is called from there. Its
    resources follow from what it holds: shared memory from its stages and
    dots, registers (per thread) from its warps and converts, spills once
    registers pass 255."""

    def __init__(self, jit, key, options):
        self.name = jit.__name__
        self.jit = jit
        digest = hashlib.sha256(f"{jit.fn.__module__}.{jit.fn.__qualname__}\n{jit.src}\n{key!r}".encode())
        self.hash = digest.hexdigest()
        self.module = self.function = None
        src = _Source(jit.fn, self.name, jit.dots, jit.base)
        folder = _cache_folder(self.hash)
        self.group = _cached_group(folder, self.name)
        cache_hit = self.group is not None
        if cache_hit:
            with open(self.group[self.name + ".json"]) as f:
                metadata = json.load(f)
            times = knobs.CompileTimes(ir_initialization=200, lowering_stages=[], store_results=0)
        else:
            metadata, times = self._compile(src, key, options, folder)
        self.converts = metadata["converts"]
        self.metadata = _KernelMetadata(**{f: metadata[f] for f in _KernelMetadata._fields})
        listener = knobs.compilation.listener
        if listener is not None:
            listener(src=src, metadata=metadata, metadata_group=dict(self.group), times=times,
                     cache_hit=cache_hit)
        self._init_handles()

    def _compile(self, src, key, options, folder):
        """Run the stages (through the stages hook) and write the cache folder;
        the metadata and the CompileTimes of the stages: ttgir's grows with the
        converts it leaves, cubin's (ptxas) is the longest."""
        stages = options.get("num_stages", 3)
        metadata = {"hash": self.hash, "name": self.name, "num_warps": options.get("num_warps", 4),
                    "num_stages": stages, "num_ctas": 1, "shared": 16384 * stages * min(self.jit.dots, 2)}
        stages = {"ttir": lambda src, md: src, "ttgir": None, "llir": None, "ptx": None, "cubin": None}
        backend = Backend()
        stages["ttgir"] = lambda src, md: backend.make_ttgir(src, md, options, 90)
        hook = knobs.runtime.add_stages_inspection_hook
        if hook is not None:
            hook(backend, stages, options, Language.TRITON, 90)
        ttgir = stages["ttgir"](stages["ttir"](src, metadata), metadata)
        self.converts = metadata["converts"]
        self.group = self._write(folder, key, ttgir, metadata)
        lowering = [("ttir", 1000), ("ttgir", 4000 + 1000 * metadata["converts"]), ("llir", 3000), ("ptx", 5000),
                    ("cubin", 30000)]
        return metadata, knobs.CompileTimes(ir_initialization=2000, lowering_stages=lowering, store_results=500)

    def _init_handles(self):
        """Load the kernel (once): its handles and resources, then kernel_load_end_hook."""
        if self.function is not None:
            return
        self.module, self.function = f"module-{self.hash[:8]}", next(_handles)
        regs = 40 + 8 * self.metadata.num_warps + 24 * self.converts
        self.n_regs, self.n_spills = min(regs, 255), max(0, regs - 255) * 4
        self.n_max_threads = 1024
        knobs.runtime.kernel_load_end_hook(self.module, self.function, self.name, self.group, self.hash)

    def _write(self, folder, key, ttgir, metadata):
        """The cache folder Triton would write: <cache>/<base32(hash)>/ with each
        stage's output, the metadata and the group file, as compile() does."""
        os.makedirs(folder, exist_ok=True)
        code = hashlib.sha256(repr((self.name, key, metadata["num_warps"], metadata["num_stages"],
                                    self.converts)).encode()).hexdigest()
        metadata.update(warp_size=32, tmem_size=0, global_scratch_size=0,
                        global_scratch_align=1, profile_scratch_size=0, profile_scratch_align=1,
                        launch_cooperative_grid=False, launch_pdl=False, triton_version="3.6.0")
        source = inspect.getsourcefile(self.jit.fn) or "<unknown>"
        lines = f"{os.path.dirname(os.path.abspath(source))}\0{os.path.dirname(os.path.dirname(__file__))}\0"
        stages = ((".source", self.jit.src), (".ttir", f"module {{\n  tt.func public @{self.name}() {{\n  }}\n}}\n"),
                  (".ttgir", ttgir),
                  (".llir", f"; ModuleID = 'LLVMDialectModule'\ndefine void @{self.name}() {{\n  ret void\n}}\n"),
                  (".ptx", f"//\n// Generated by LLVM NVPTX Back-End\n//\n.version 8.7\n.target sm_90a\n"
                           f".visible .entry {self.name}()\n{{\n\t// {code}\n\tret;\n}}\n"),
                  (".cubin", _elf(self.name, bytes.fromhex(code), lines.encode())),
                  (".json", json.dumps(metadata)))
        group = {}
        for suffix, data in stages:
            path = os.path.join(folder, self.name + suffix)
            with open(path, "wb" if isinstance(data, bytes) else "w") as f:
                f.write(data)
            group[self.name + suffix] = path
        with open(os.path.join(folder, f"__grp__{self.name}.json"), "w") as f:
            json.dump({"child_paths": group}, f)
        return group


def _cache_folder(hash):
    """<TRITON_CACHE_DIR, else ~/.triton/cache>/<base32 of the hash's bytes>, as Triton names it."""
    root = os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")
    return os.path.join(root, base64.b32encode(bytes.fromhex(hash)).decode().rstrip("="))


def _cached_group(folder, name):
    """The group a compile left in folder ({file name: path}, from __grp__<name>.json)
    when it and every file it lists exist and it holds <name>.json, as Triton's
    cache manager's get_group finds a hit; else None."""
    try:
        with open(os.path.join(folder, f"__grp__{name}.json")) as f:
            group = json.load(f)["child_paths"]
    except (OSError, ValueError, KeyError):
        return None
    if name + ".json" not in group or not all(os.path.isfile(p) for p in group.values()):
        return None
    return group


def _elf(name, code, lines):
    """A cubin as ptxas lays one out, as far as a reader of its sections
    sees: an ELF64 for sm_90 (machine 190) with .shstrtab, .debug_line (the
    source folders) and .text.<name> (the code), its section table last."""
    table = [("", 0, b""), (".shstrtab", 3, b""), (".debug_line", 1, lines), (f".text.{name}", 1, code)]
    names = b"\0" + b"".join(n.encode() + b"\0" for n, _, _ in table[1:])
    table[1] = (".shstrtab", 3, names)
    body, entries = b"", []
    for i, (section, kind, data) in enumerate(table):
        entries.append(struct.pack("<IIQQQQIIQQ", names.index(section.encode() + b"\0") if i else 0, kind, 0, 0,
                                   64 + len(body), len(data), 0, 0, 1, 0))
        body += data
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, 64 + len(body), 0x5A0559,
                                                           64, 0, 0, 64, len(table), 1)
    return head + body + b"".join(entries)


class _Noise:
    """How a launch's time deviates from its cost: by a drift drawn once per
    request (sd 0.05 %: the device's state, which moves between independent
    measurements) times a deviation of its own (within 0.5 %), both from a
    generator seeded by the request's cell folder."""

    cell = None
    rng = random.Random(0)
    drift = 0.0

    @classmethod
    def factor(cls):
        cell = os.environ.get("CALIBER_CELL_DIR", "")
        if cls.cell != cell:
            cls.cell = cell
            cls.rng = random.Random(hashlib.sha256(cell.encode()).digest())
            cls.drift = cls.rng.gauss(0.0, 5e-4)
        return (1 + cls.drift) * (1 + cls.rng.uniform(-5e-3, 5e-3))


def _cost_ms(kernel, args, options):
    """How long one launch lasts: 0.003 ms plus its bytes at 3 TB/s; a kernel with
    dots also pays for each convert; launch options move it by a few percent."""
    nbytes = sum(a.numel() * a.element_size() for a in args if isinstance(a, torch.Tensor))
    ms = 0.003 + nbytes / 3e9
    if kernel.jit.dots:
        ms *= 1 + 0.25 * kernel.converts
    tuning = hashlib.sha256(repr(sorted(options.items())).encode()).digest()[0] / 255
    return ms * (1 + 0.05 * tuning)


class JITFunction:
    """@triton.jit: kernel[grid](*args, **constants_and_options)."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__module__ = fn.__module__
        self.src = inspect.getsource(fn)
        params = inspect.signature(fn).parameters
        self.arg_names = list(params)
        from .. import language as tl
        self.constexprs = {n for n, p in params.items() if p.annotation is tl.constexpr}
        self.cache = {}

    @property
    def dots(self):
        """tl.dot calls in this kernel and the jitted helpers it names."""
        return _count(self, r"\btl\.dot\(")

    @property
    def base(self):
        return int(_count(self, r"\btl\.(trans|cumsum|sort)\(") > 0)

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def run(self, *args, grid=None, warmup=False, **kwargs):
        options = {k: kwargs.pop(k) for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if k in kwargs}
        bound = dict(zip(self.arg_names, args), **kwargs)
        missing = [n for n in self.arg_names if n not in bound]
        if missing:
            raise TypeError(f"{self.__name__}() missing arguments: {', '.join(missing)}")
        key = tuple((n, str(v.dtype) if isinstance(v, torch.Tensor) else
                     v if n in self.constexprs else (type(v).__name__, isinstance(v, int) and v % 16 == 0))
                    for n, v in bound.items()) + tuple(sorted(options.items()))
        kernel = self.cache.get(key)
        if kernel is None:
            kernel = self.cache[key] = CompiledKernel(self, key, options)
        if callable(grid):
            grid(bound)
        knobs.runtime.launch_enter_hook(_LaunchMetadata({"function": kernel.function, "name": kernel.name,
                                                         "stream": 0}))
        tensors = [v for v in bound.values() if isinstance(v, torch.Tensor)]
        for t in tensors:
            t._written = True
        base = _cost_ms(kernel, tensors, options)
        torch.cuda.run(lambda: base * _Noise.factor(), name=kernel.name)
        knobs.runtime.launch_exit_hook(_LaunchMetadata({"function": kernel.function, "name": kernel.name}))
        return kernel


def _count(jit, pattern, seen=None):
    """Matches of pattern in jit's source and in the jitted functions it calls by name."""
    seen = set() if seen is None else seen
    if id(jit) in seen:
        return 0
    seen.add(id(jit))
    total = len(re.findall(pattern, jit.src))
    for name in set(re.findall(r"\b([A-Za-z_]\w*)\(", jit.src)):
        other = jit.fn.__globals__.get(name)
        if isinstance(other, JITFunction):
            total += _count(other, pattern, seen)
    return total


def jit(fn=None, **kwargs):
    """triton.jit, bare or with options."""
    if fn is None:
        return lambda f: JITFunction(f)
    return JITFunction(fn)
