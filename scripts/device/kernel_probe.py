#!/usr/bin/env python3
"""What per-kernel time and resources (issue 28) rely on, recorded on a real GPU.

    python3 scripts/device/kernel_probe.py OUT

Run from the repository root on the GPU machine (about 30 s, most of it
compiling). It compiles a few corpus kernels (ops/caliber_ops: an autotuned
matmul, so that one kernel name has several variants, a row softmax, and a
torch elementwise op, a kernel that is not Triton's), and writes under OUT:

- env.json: torch, CUDA, Triton and device versions;
- loads.json: every kernel_load_end_hook call (function handle, name, hash,
  the variant folder name) and, found from the hook's caller frames, the
  CompiledKernel's n_regs, n_spills, n_max_threads and metadata shared,
  num_stages, num_warps, hash, name, with the frames walked to find it;
- launches.json: every launch_enter_hook call, in order, tagged with the
  phase it happened in (warm, capture, direct, ...);
- graph.json / direct.json: one CUDA graph of the calls, replayed under
  torch.profiler (CUDA activities only), and the same calls made directly
  under it: every _KinetoEvent's name, device type, start/end/duration (ns),
  correlation ids and stream, the FunctionEvent view of the same, and the
  chrome trace's kernel events with their args (registers, shared memory,
  grid, block, graph node); beside them the CUDA-event time of the same
  replay, unprofiled, before and after the profiler was used (does the
  profiler leave anything behind that slows later timed samples?);
- overhead.json: the wall time of the profiler's first session in the
  process and of later ones, for graphs of 1, 100 and 1000 calls, split
  into the session itself and reading its events (kineto events, and
  prof.events());
- summary.json: how each profiler kernel name maps to Triton's kernel name,
  and whether the kernel records of a replay follow the captured launch
  order.
Each part that fails writes its error instead, so the rest still comes back."""

import json
import os
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _dump(out, name, value):
    with open(os.path.join(out, name), "w") as f:
        json.dump(value, f, indent=1, sort_keys=True, default=str)
        f.write("\n")


def _safe(fn):
    """fn() or {"error": ...} when it raises."""
    try:
        return fn()
    except Exception as e:  # the probe reports what failed and carries on
        return {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}


def _attr(obj, name):
    try:
        value = getattr(obj, name)
    except Exception as e:
        return f"<{type(e).__name__}: {e}>"
    return value if isinstance(value, (int, float, str, bool, type(None))) else repr(value)


class Recorder:
    """The load and launch hooks: what each call gave, and the CompiledKernel of each load."""

    def __init__(self):
        self.loads = []
        self.launches = []
        self.compiled = {}
        self.phase = "setup"

    def on_load(self, module, function, name, metadata_group, hash):
        from caliber_pytest._variant import variant_name
        frames, found = [], None
        frame = sys._getframe(1)
        for depth in range(1, 8):
            if frame is None:
                break
            owner = frame.f_locals.get("self")
            frames.append({"depth": depth, "code": frame.f_code.co_name,
                           "file": os.path.basename(frame.f_code.co_filename),
                           "self_type": type(owner).__name__ if owner is not None else None})
            if found is None and owner is not None and getattr(owner, "function", None) == function:
                found = (depth, owner)
            frame = frame.f_back
        record = {"function": function, "name": name, "hash": hash, "variant": variant_name(hash),
                  "metadata_group": {k: os.path.basename(v) for k, v in dict(metadata_group).items()},
                  "module_type": type(module).__name__, "function_type": type(function).__name__,
                  "frames": frames, "phase": self.phase}
        if found is not None:
            depth, kernel = found
            self.compiled[function] = kernel
            record["compiled_depth"] = depth
            record["compiled"] = _compiled_fields(kernel)
        self.loads.append(record)

    def on_launch(self, metadata):
        fields = metadata.get()
        self.launches.append({"phase": self.phase, "function": fields.get("function"), "name": fields.get("name"),
                              "stream": _attr_plain(fields.get("stream")), "keys": sorted(fields)})


def _attr_plain(value):
    return value if isinstance(value, (int, str, type(None))) else repr(value)


def _compiled_fields(kernel):
    """What a CompiledKernel says of its resources, as loaded."""
    out = {k: _attr(kernel, k) for k in ("n_regs", "n_spills", "n_max_threads", "name", "hash", "function")}
    out["type"] = f"{type(kernel).__module__}.{type(kernel).__qualname__}"
    metadata = getattr(kernel, "metadata", None)
    out["metadata_type"] = type(metadata).__name__
    out["metadata"] = {k: _attr(metadata, k) for k in ("shared", "num_stages", "num_warps", "hash", "name",
                                                        "num_ctas", "maxnreg", "tmem_size", "global_scratch_size")}
    fields = getattr(metadata, "_fields", None)
    out["metadata_fields"] = list(fields) if fields else sorted(k for k in dir(metadata) if not k.startswith("_"))
    return out


def _kineto(prof):
    """Every _KinetoEvent of a finished profile, as plain fields."""
    out = []
    for e in prof.profiler.kineto_results.events():
        record = {}
        for key in ("name", "device_type", "device_index", "device_resource_id", "start_ns", "end_ns", "duration_ns",
                    "correlation_id", "linked_correlation_id", "is_async"):
            try:
                value = getattr(e, key)()
            except Exception as err:
                value = f"<{type(err).__name__}: {err}>"
            record[key] = value if isinstance(value, (int, float, str, bool, type(None))) else str(value)
        out.append(record)
    return out


def _function_events(prof):
    """prof.events() (the FunctionEvent view) of the CUDA-side events."""
    out = []
    for e in prof.events():
        out.append({"name": e.name, "device_type": str(e.device_type), "id": _attr(e, "id"),
                    "start_us": e.time_range.start, "end_us": e.time_range.end,
                    "device_time_total": _attr(e, "device_time_total"), "is_async": _attr(e, "is_async")})
    return out


def _trace_kernels(prof, name):
    """The chrome trace's kernel events, with their args."""
    path = os.path.join(tempfile.mkdtemp(), name)
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    return [e for e in events if isinstance(e, dict) and e.get("cat") in ("kernel", "cuda_runtime", "gpu_memcpy",
                                                                          "gpu_memset", "cuda_driver")]


def _profile(torch, body):
    """body() under torch.profiler with CUDA activities only: wall times of its parts and what it recorded."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    prof = profile(activities=[ProfilerActivity.CUDA])
    prof.__enter__()
    t1 = time.perf_counter_ns()
    body()
    torch.cuda.synchronize()
    t2 = time.perf_counter_ns()
    prof.__exit__(None, None, None)
    t3 = time.perf_counter_ns()
    kineto = _safe(lambda: _kineto(prof))
    t4 = time.perf_counter_ns()
    return prof, kineto, {"enter_ns": t1 - t0, "body_ns": t2 - t1, "exit_ns": t3 - t2, "kineto_events_ns": t4 - t3}


def _event_ms(torch, body, repeats=5):
    """CUDA-event time (ms) of each of repeats runs of body, unprofiled."""
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        body()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return times


def _capture(torch, rec, fn, calls, phase):
    rec.phase = phase
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    rec.phase = phase + "-replay-untimed"
    graph.replay()
    torch.cuda.synchronize()
    return graph


def _scenario(torch, rec, out, name, body, phase):
    """One profiled run of body with everything the profiler gave, and body's event times around it."""
    result = {"event_ms_before": _event_ms(torch, body)}
    rec.phase = phase
    first = len(rec.launches)
    prof, kineto, walls = _profile(torch, body)
    result["launches_during"] = rec.launches[first:]
    result["walls"] = walls
    result["kineto"] = kineto
    t0 = time.perf_counter_ns()
    result["function_events"] = _safe(lambda: _function_events(prof))
    result["walls"]["function_events_ns"] = time.perf_counter_ns() - t0
    result["trace_kernels"] = _safe(lambda: _trace_kernels(prof, name + ".trace.json"))
    rec.phase = phase + "-after"
    result["event_ms_after"] = _event_ms(torch, body)
    return result


def _overhead(torch, rec, fn_small):
    """Wall time of profiled graph replays of 1, 100 and 1000 calls (the first session of the process is
    the graph scenario's)."""
    out = {}
    for calls in (1, 100, 1000):
        graph = _capture(torch, rec, fn_small, calls, f"overhead-capture-{calls}")
        rec.phase = f"overhead-{calls}"
        runs = []
        for _ in range(2):
            prof, kineto, walls = _profile(torch, graph.replay)
            t0 = time.perf_counter_ns()
            n = _safe(lambda: len(prof.events()))
            walls["function_events_ns"] = time.perf_counter_ns() - t0
            walls["kernels"] = (sum(1 for k in kineto if "CUDA" in str(k["device_type"]))
                                if isinstance(kineto, list) else kineto)
            walls["function_events"] = n
            runs.append(walls)
        out[str(calls)] = runs
        del graph
    return out


def _summary(rec, graph_result):
    """Profiler kernel name -> Triton kernel name, and the kernel order of a replay against the capture's."""
    triton_names = {r["name"] for r in rec.loads}
    kineto = graph_result.get("kineto")
    kineto = kineto if isinstance(kineto, list) else []
    kernels = [k for k in kineto if "CUDA" in str(k.get("device_type"))
               and k.get("name") not in ("cudaGraphLaunch", "cudaDeviceSynchronize")]
    kernels.sort(key=lambda k: (k["start_ns"], k["correlation_id"]))
    names = [k["name"] for k in kernels]
    captured = [la["name"] for la in rec.launches if la["phase"] == "capture"]
    return {"profiler_kernel_names": sorted(set(names)),
            "triton_kernel_names": sorted(triton_names),
            "name_equals_triton_name": {n: n in triton_names for n in sorted(set(names))},
            "replay_kernel_order": names,
            "captured_triton_launch_order": captured,
            "triton_order_matches_capture": [n for n in names if n in triton_names] == captured,
            "loads_with_compiled_kernel": sum(1 for r in rec.loads if "compiled" in r),
            "loads": len(rec.loads)}


def main(out):
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kernel-probe-cache-"))
    sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "ops")]
    import torch
    import triton
    from triton import knobs

    import caliber_ops as ops

    _dump(out, "env.json", _safe(lambda: {
        "torch": torch.__version__, "cuda": _attr(getattr(torch, "version", None), "cuda"),
        "triton": triton.__version__, "device": torch.cuda.get_device_name(0), "python": sys.version,
        "hooks": {h: type(getattr(knobs.runtime, h, None)).__name__
                  for h in ("launch_enter_hook", "kernel_load_end_hook", "add_stages_inspection_hook")}}))
    rec = Recorder()
    knobs.runtime.kernel_load_end_hook.add(rec.on_load)
    knobs.runtime.launch_enter_hook.add(rec.on_launch)
    results = {}
    try:
        torch.manual_seed(0)
        a = torch.randn((2048, 2048), device="cuda", dtype=torch.float16)
        b = torch.randn((2048, 2048), device="cuda", dtype=torch.float16)
        c = torch.empty((2048, 2048), device="cuda", dtype=torch.float16)
        x = torch.randn((4096, 2048), device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        small = torch.randn((256, 1024), device="cuda", dtype=torch.float16)
        small_out = torch.empty_like(small)

        def fn():
            ops.matmul(a, b, out=c)
            ops.softmax_rows(x, out=y)
            y.add_(1.0)  # an aten kernel: a launch no Triton hook sees

        def fn_small():
            ops.softmax_rows(small, out=small_out)

        rec.phase = "warm"
        for _ in range(3):
            fn()
            fn_small()
        torch.cuda.synchronize()
        graph = _capture(torch, rec, fn, 3, "capture")
        results["graph"] = _safe(lambda: _scenario(torch, rec, out, "graph", graph.replay, "graph-profiled"))
        if isinstance(results["graph"], dict) and "walls" in results["graph"]:
            second = _safe(lambda: _profile(torch, graph.replay)[2])
            results["graph"]["second_session_walls"] = second

        def direct():
            for _ in range(3):
                fn()
        results["direct"] = _safe(lambda: _scenario(torch, rec, out, "direct", direct, "direct-profiled"))
        results["overhead"] = _safe(lambda: _overhead(torch, rec, fn_small))
        # what the saved CompiledKernels say now, after their launches
        results["compiled_after"] = {str(f): _compiled_fields(k) for f, k in rec.compiled.items()}
    except Exception as e:
        results["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    finally:
        knobs.runtime.kernel_load_end_hook.remove(rec.on_load)
        knobs.runtime.launch_enter_hook.remove(rec.on_launch)
    _dump(out, "loads.json", rec.loads)
    _dump(out, "launches.json", rec.launches)
    for name in ("graph", "direct", "overhead", "compiled_after", "error"):
        if name in results:
            _dump(out, f"{name}.json", results[name])
    _dump(out, "summary.json", _safe(lambda: _summary(rec, results.get("graph") or {})))
    print(f"kernel_probe: wrote {sorted(os.listdir(out))} under {out}")
    return 1 if "error" in results else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/device/kernel_probe.py OUT")
    sys.exit(main(sys.argv[1]))
