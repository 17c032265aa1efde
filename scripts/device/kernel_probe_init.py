#!/usr/bin/env python3
"""What the profiler's first session costs a fresh process, and whether it
disturbs timings (issue 28: its cost must stay under 5 % of a campaign, and a
campaign starts a fresh worker process per timed session).

    python3 scripts/device/kernel_probe_init.py OUT

Run from the repository root on the GPU machine (about 45 s). The first probe
(kernel_probe.py) saw the first torch.profiler session of a process take 6 s
to start and later ones 1 ms. Each case below runs in a fresh process and
writes OUT/<case>.json:

- first: import torch, CUDA ready, then the wall time of the first and
  second profile() sessions (CUDA activities only), before any Triton kernel;
- prepared: the same with torch's _prepare_profiler called first, timed
  apart (does preparing alone bear the cost, so that it could be paid
  before a request arrives?);
- cupti: the CUPTI activity API through ctypes, without kineto: the wall
  time of loading libcupti, registering the buffer callbacks, enabling
  CONCURRENT_KERNEL, one kernel, flushing and disabling, and the first
  record's kind, registers and start/end; the CUpti_ActivityKernel
  definitions of cupti_activity.h are copied to cupti_kernel_structs.txt;
- after: in one process, a graph of 20 matmuls and 200 direct launches of a
  tiny kernel, each timed 15 times after a warm-up, then a first profile
  session, a warm-up again, and 15 more of each, and again after a second
  session (does the profiler leave anything behind that slows unprofiled
  timings, the host's launches above all?);
- beside: process B times a graph continuously for 9 s while process A,
  started 3 s in, runs its first profile session: B's samples with their
  clock times, and A's session start and end (does a neighbour's CUPTI
  start-up disturb a timed process, so that it could be hidden while the
  previous session is timed?).
Each case that fails writes its error and the rest still run."""

import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CUDA_TARGET = "/usr/local/cuda-13.0/targets/x86_64-linux"

COMMON = r'''
import json, os, sys, time
t0 = time.perf_counter_ns()
import torch
out = {"import_ns": time.perf_counter_ns() - t0}
t0 = time.perf_counter_ns()
x = torch.randn((2048, 2048), device="cuda", dtype=torch.float16)
y = x @ x
torch.cuda.synchronize()
out["cuda_ns"] = time.perf_counter_ns() - t0

def session():
    from torch.profiler import ProfilerActivity, profile
    t0 = time.perf_counter_ns()
    p = profile(activities=[ProfilerActivity.CUDA])
    p.__enter__()
    t1 = time.perf_counter_ns()
    y = x @ x
    torch.cuda.synchronize()
    p.__exit__(None, None, None)
    t2 = time.perf_counter_ns()
    n = sum(1 for e in p.profiler.kineto_results.events() if e.device_type().name == "CUDA")
    return {"enter_ns": t1 - t0, "exit_ns": t2 - t1, "kernels": n, "wall_start_ns": t0, "wall_end_ns": t2}

def graph_of(calls):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            torch.matmul(x, x, out=y)
    g.replay()
    torch.cuda.synchronize()
    return g

def timed(g, n):
    out = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); g.replay(); e.record(); torch.cuda.synchronize()
        out.append([time.time_ns(), int(s.elapsed_time(e) * 1e6)])
    return out

def warm(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        torch.matmul(x, x, out=y)
    torch.cuda.synchronize()
'''

CASES = {
    "first": COMMON + r'''
out["first"] = session()
out["second"] = session()
''',
    "prepared": COMMON + r'''
t0 = time.perf_counter_ns()
try:
    from torch.autograd import profiler as ap
    from torch._C._profiler import ProfilerActivity as PA
    ap._prepare_profiler(ap.ProfilerConfig(ap.ProfilerState.KINETO, False, False, False, False, False,
                                           ap._ExperimentalConfig()), {PA.CUDA})
    out["prepare_ns"] = time.perf_counter_ns() - t0
except Exception as e:
    out["prepare_error"] = f"{type(e).__name__}: {e}"
out["first"] = session()
out["second"] = session()
''',
    "cupti": COMMON + r'''
import ctypes, glob
paths = sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "*", "lib", "libcupti.so*")))
paths += sorted(glob.glob(sys.argv[1] + "/lib/libcupti.so*"))
out["libcupti_candidates"] = paths
t0 = time.perf_counter_ns()
lib = ctypes.CDLL(paths[0])
out["load_ns"] = time.perf_counter_ns() - t0
out["loaded"] = paths[0]
buffers = []
REQ = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t))
DONE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
records = []
def requested(buf, size, maxrec):
    b = ctypes.create_string_buffer(8 << 20)
    buffers.append(b)
    buf[0] = ctypes.cast(b, ctypes.c_void_p).value
    size[0] = 8 << 20
    maxrec[0] = 0
def completed(ctx, stream, buf, size, valid):
    rec = ctypes.c_void_p()
    while lib.cuptiActivityGetNextRecord(ctypes.c_void_p(buf), ctypes.c_size_t(valid), ctypes.byref(rec)) == 0:
        raw = ctypes.string_at(rec.value, 64)
        records.append({"kind": int.from_bytes(raw[0:4], "little"), "regs_at_6": int.from_bytes(raw[6:8], "little"),
                        "start_at_16": int.from_bytes(raw[16:24], "little"), "end_at_24": int.from_bytes(raw[24:32], "little"),
                        "first64_hex": raw.hex()})
req_cb, done_cb = REQ(requested), DONE(completed)
t0 = time.perf_counter_ns()
out["register_rc"] = lib.cuptiActivityRegisterCallbacks(req_cb, done_cb)
out["register_ns"] = time.perf_counter_ns() - t0
t0 = time.perf_counter_ns()
out["enable_rc"] = lib.cuptiActivityEnable(10)  # CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
out["enable_ns"] = time.perf_counter_ns() - t0
t0 = time.perf_counter_ns()
y = x @ x
torch.cuda.synchronize()
out["kernel_ns"] = time.perf_counter_ns() - t0
t0 = time.perf_counter_ns()
out["flush_rc"] = lib.cuptiActivityFlushAll(1)
out["flush_ns"] = time.perf_counter_ns() - t0
out["disable_rc"] = lib.cuptiActivityDisable(10)
out["records"] = records[:4]
out["nrecords"] = len(records)
t0 = time.perf_counter_ns()
out["enable_again_rc"] = lib.cuptiActivityEnable(10)
y = x @ x
torch.cuda.synchronize()
lib.cuptiActivityFlushAll(1)
lib.cuptiActivityDisable(10)
out["second_ns"] = time.perf_counter_ns() - t0
''',
    "after": COMMON + r'''
g = graph_of(20)
small = torch.zeros((256, ), device="cuda")

class Direct:
    """200 launches of a tiny kernel made directly: host launch cost dominates, as in small direct rows."""
    def replay(self):
        for _ in range(200):
            small.add_(1.0)

warm(300)
out["before"] = timed(g, 15)
out["before_direct"] = timed(Direct(), 15)
out["session"] = session()
warm(300)
out["after"] = timed(g, 15)
out["after_direct"] = timed(Direct(), 15)
out["session2"] = session()
warm(300)
out["after2"] = timed(g, 15)
out["after2_direct"] = timed(Direct(), 15)
''',
}

BESIDE_TIMER = COMMON + r'''
g = graph_of(20)
warm(300)
end = time.perf_counter() + 9
samples = []
while time.perf_counter() < end:
    samples += timed(g, 1)
out["samples"] = samples
'''

BESIDE_PROFILER = COMMON + r'''
time.sleep(float(sys.argv[2]))
out["session"] = session()
'''


def _run(code, out_path, args=(), wait=True):
    paths = [os.path.join(ROOT, "python"), os.path.join(ROOT, "ops"), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    code = code + "\njson.dump(out, open(%r, 'w'), indent=1)\n" % out_path
    proc = subprocess.Popen([sys.executable, "-c", code, CUDA_TARGET, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if not wait:
        return proc
    log, _ = proc.communicate(timeout=120)
    return proc.returncode, log


def _structs(out):
    """The CUpti_ActivityKernel definitions of cupti_activity.h (for the record layout)."""
    found = []
    for root, _, files in os.walk(os.path.join(CUDA_TARGET, "include")):
        for name in sorted(files):
            if not (name.startswith("cupti_activity") and name.endswith(".h")):
                continue
            text = open(os.path.join(root, name), errors="replace").read()
            at = text.find("} CUpti_ActivityKernel")
            while at >= 0:
                start, stop = text.rfind("typedef struct", 0, at), text.find(";", at) + 1
                found.append(f"// {name}\n{text[start:stop]}\n")
                at = text.find("} CUpti_ActivityKernel", stop)
    with open(os.path.join(out, "cupti_kernel_structs.txt"), "w") as f:
        f.write("\n".join(found) if found else "no CUpti_ActivityKernel struct found\n")


def main(out):
    os.makedirs(out, exist_ok=True)
    status = {}
    for name, code in CASES.items():
        t0 = time.perf_counter()
        try:
            rc, log = _run(code, os.path.join(out, f"{name}.json"))
        except Exception as e:  # the probe carries on with the next case
            rc, log = -1, f"{type(e).__name__}: {e}"
        status[name] = {"rc": rc, "log": log[-4000:], "wall_s": round(time.perf_counter() - t0, 2)}
    t0 = time.perf_counter()
    try:
        timer = _run(BESIDE_TIMER, os.path.join(out, "beside_timer.json"), wait=False)
        prof = _run(BESIDE_PROFILER, os.path.join(out, "beside_profiler.json"), args=("3",), wait=False)
        status["beside"] = {"timer_log": timer.communicate(timeout=120)[0][-4000:], "timer_rc": timer.returncode,
                            "profiler_log": prof.communicate(timeout=120)[0][-4000:], "profiler_rc": prof.returncode}
    except Exception as e:
        status["beside"] = {"error": f"{type(e).__name__}: {e}"}
    status["beside_wall_s"] = round(time.perf_counter() - t0, 2)
    try:
        _structs(out)
    except Exception as e:
        status["structs_error"] = f"{type(e).__name__}: {e}"
    with open(os.path.join(out, "status.json"), "w") as f:
        json.dump(status, f, indent=1)
    print(f"kernel_probe_init: wrote {sorted(os.listdir(out))} under {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/device/kernel_probe_init.py OUT")
    main(sys.argv[1])
