"""bench/offset_probe.py OUT [--corpus ops] [--quick]: where the steady
per-process offset of identical code comes from (issue 23), measured on the
GPU machine from the repository root.

It speaks the worker session protocol of docs/formats.md to
`python3 -m caliber_pytest.session` processes it starts itself, with the
environment the runner gives a worker, and times the same benchmark rows of
the built-in corpus in every process: an A/A in which every process runs
identical code. Each *level* switches on one more part of a caliber worker:

  bare         timing plugin only, NVML absent (no clocks, no pacing), each
               process alone on the device (one after another, as a bare probe)
  coexist      the same, three processes alive at once (as caliber's cells)
  clocks       + NVML: clock sampling thread and pacing before each row
  hooks        + ir_meta (Triton launch and load hooks) and autotune_record
  full         the cuda backend's whole plugin plan and the demo compiler's
               stages hook (the control cell of campaigns/demo-h200)
  placement    full, and each request frees the CUDA caching allocator's
               memory and offsets its first allocation, so that every session
               of a process gets fresh device memory
  fresh        full, every session in a process of its own, the next one
               started (imports only) while the current one is timed

For each level and row it reports the spread of the per-process means of the
session medians (between) against the spread of the sessions inside one
process (within), in ppm of the row's time: a level whose between is many
times its within carries a per-process offset. Then it measures what a
worker process costs to start (imports, CUDA initialisation, first request)
and whether a process starting beside a timed one disturbs its samples
(--side import), or one started ahead starting its profiler (--side profiler).

Everything goes to OUT/offset_probe.json; a table is printed at the end."""

import argparse
import json
import os
import random
import select
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXTRA_PATH = []  # --extra-path: more PYTHONPATH entries of every worker (a corpus's own packages)
TIMER = {"kind": "native-event", "graph_capture": "auto", "warmup_ms": 10, "rep_ms": 60, "repeats": 9}
# The rows of campaigns/demo-h200/runs/aa with the largest per-process offsets.
WORKLOADS = [
    ("transpose", "benchmark/test_copy.py::test_perf_transpose", [[4096, 16384]]),
    ("log_softmax_rows", "benchmark/test_softmax.py::test_perf_log_softmax_rows", [[16384, 8192]]),
    ("index_select", "benchmark/test_indexing.py::test_perf_index_select", [[65536, 1024, 32768]]),
]
FULL_PLAN = ["caliber_pytest.device_setup", "caliber_pytest.shapes", "caliber_pytest.autotune_record",
             "caliber_pytest.ir_meta", "caliber_pytest.timing", "caliber_pytest.parallel_warmup",
             "caliber_pytest.compat"]
LEVELS = {
    "bare": {"plugins": ["caliber_pytest.shapes", "caliber_pytest.timing"], "nvml": False, "alone": True},
    "coexist": {"plugins": ["caliber_pytest.shapes", "caliber_pytest.timing"], "nvml": False},
    "clocks": {"plugins": ["caliber_pytest.shapes", "caliber_pytest.timing"]},
    "hooks": {"plugins": ["caliber_pytest.shapes", "caliber_pytest.autotune_record", "caliber_pytest.ir_meta",
                          "caliber_pytest.timing"]},
    "full": {"plugins": FULL_PLAN, "demo": True},
    "placement": {"plugins": FULL_PLAN, "demo": True, "placement": True},
    "fresh": {"plugins": FULL_PLAN, "demo": True, "fresh": True},
}


class Worker:
    """One caliber_pytest.session process and its reply pipe."""

    def __init__(self, env, log):
        r, w = os.pipe()
        env = dict(env, CALIBER_REPLY_FD=str(w))
        self.t_spawn = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "caliber_pytest.session"], stdin=subprocess.PIPE,
                                     stdout=log, stderr=subprocess.STDOUT, env=env, pass_fds=(w,), text=True)
        os.close(w)
        self.replies = os.fdopen(r, "r")
        self.n = 0

    def request(self, argv, env, timeout=600):
        """Send one request; its reply and wall time (s)."""
        self.n += 1
        rid = f"probe/{self.n}"
        t0 = time.monotonic()
        self.proc.stdin.write(json.dumps({"argv": argv, "env": env, "id": rid}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.replies], [], [], timeout)
        if not ready:
            raise RuntimeError(f"no reply within {timeout} s")
        reply = json.loads(self.replies.readline())
        return reply, time.monotonic() - t0

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.replies.close()


def base_env(work, corpus, level, name):
    """The environment a caliber worker gets (docs/formats.md), private folders under work/name."""
    import triton  # noqa: F401  (where the installed Triton lives, as --build-root)

    triton_root = os.path.dirname(os.path.dirname(triton.__file__))
    folders = {"HOME": "home", "XDG_CACHE_HOME": "home/.cache", "TRITON_CACHE_DIR": "triton",
               "FLAGGEMS_CACHE_DIR": "flaggems", "CALIBER_WORK_DIR": "work"}
    env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TZ", "USER", "LD_LIBRARY_PATH") if k in os.environ}
    for key, sub in folders.items():
        env[key] = os.path.join(work, name, sub)
        os.makedirs(env[key], exist_ok=True)
    # Identical code compiles to identical binaries: one Triton cache for the
    # levels with the demo compiler's hook and one for those without (the
    # cache key does not see the hook), so that processes load, not compile.
    env["TRITON_CACHE_DIR"] = os.path.join(work, "triton-demo" if level.get("demo") else "triton-stock")
    os.makedirs(env["TRITON_CACHE_DIR"], exist_ok=True)
    path = [os.path.join(ROOT, "python"), corpus, triton_root, os.path.join(ROOT, "bench")] + EXTRA_PATH
    if level.get("demo"):
        path.append(os.path.join(ROOT, "examples", "demo-compiler"))
        env.update({"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "0"})
    env.update({"PYTHONPATH": ":".join(path), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
                "CUDA_VISIBLE_DEVICES": os.environ.get("DEVICE", "0"), "CALIBER_CORPUS": corpus,
                "CALIBER_BACKEND": "cuda", "CALIBER_GRAPH_CAPTURE": "1",
                "OFFSET_PROBE_NVML": "1" if level.get("nvml", True) else "0",
                "OFFSET_PROBE_PLACEMENT": "1" if level.get("placement") else "0",
                "CALIBER_PRELOAD": "torch triton"})
    return env


def request_for(level, wl, cell_dir, session):
    """argv and env of one timed session of one workload."""
    _, target, shapes = wl
    argv = ["-q", "-p", "no:cacheprovider", "-p", "_offset_probe_plugin"]
    for p in level["plugins"]:
        argv += ["-p", p]
    argv.append(target)
    os.makedirs(cell_dir, exist_ok=True)
    env = {"CALIBER_CELL_DIR": cell_dir, "CALIBER_TASK": wl[0], "CALIBER_CELL": "probe", "CALIBER_ROLE": "baseline",
           "CALIBER_PHASE": "a", "CALIBER_SESSION": str(session), "CALIBER_AUTOTUNE_MODE": "record",
           "CALIBER_AUTOTUNE_FILE": os.path.join(cell_dir, "autotune.jsonl"), "CALIBER_DTYPES": "float16",
           "CALIBER_SHAPES": json.dumps(shapes if isinstance(shapes, dict) else {"values": shapes} if shapes else {}), "CALIBER_TIMER": json.dumps(TIMER)}
    return argv, env


def rows_of(cell_dir):
    """[(row, median ns, n_calls, timer, samples)] of a session's timing.jsonl."""
    out = []
    path = os.path.join(cell_dir, "timing.jsonl")
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            out.append((r["row"], statistics.median(r["samples_ns"]), r["n_calls"], r["timer"], r["samples_ns"]))
    return out


def run_level(name, level, args, work, log, record):
    """Time every workload in procs processes x sessions sessions; records go to record."""
    procs, sessions = args.procs, args.sessions
    t0 = time.monotonic()
    results = []

    def one(worker, p, s, wl):
        cell = os.path.join(work, name, f"p{p}", f"s{s}-{wl[0]}")
        argv, env = request_for(level, wl, cell, s)
        reply, wall = worker.request(argv, env)
        for row, med, n_calls, timer, samples in rows_of(cell):
            results.append({"proc": p, "session": s, "row": row, "median_ns": med, "n_calls": n_calls,
                            "timer": timer, "samples_ns": samples, "exit": reply.get("exit"), "wall_s": wall})
        if reply.get("exit") != 0:
            print(f"{name}: p{p} s{s} {wl[0]}: {reply}", flush=True)

    if level.get("fresh"):
        order = [(p, s) for s in range(1, sessions + 1) for p in range(procs)]
        spawn = lambda p, s: Worker(base_env(work, args.corpus, level, f"{name}/p{p}"), log)
        ahead = spawn(*order[0])
        for i, (p, s) in enumerate(order):
            worker, ahead = ahead, spawn(*order[i + 1]) if i + 1 < len(order) else None
            started = time.monotonic()
            for wl in args.workloads:
                one(worker, p, s, wl)
            record.setdefault("fresh_requests", []).append({"proc": p, "session": s,
                                                              "since_spawn_s": started - worker.t_spawn,
                                                              "wall_s": time.monotonic() - started})
            worker.close()
    elif level.get("alone"):
        for p in range(procs):
            worker = Worker(base_env(work, args.corpus, level, f"{name}/p{p}"), log)
            for s in range(1, sessions + 1):
                for wl in args.workloads:
                    one(worker, p, s, wl)
            worker.close()
    else:
        workers = [Worker(base_env(work, args.corpus, level, f"{name}/p{p}"), log) for p in range(procs)]
        for s in range(1, sessions + 1):
            for wl in args.workloads:
                for p, worker in enumerate(workers):
                    one(worker, p, s, wl)
        for worker in workers:
            worker.close()
    record["levels"][name] = {"results": results, "wall_s": time.monotonic() - t0}


def spread(results):
    """Per row: between-process and within-process spread (ppm of the row's mean)."""
    out = {}
    for row in sorted({r["row"] for r in results}):
        by = {}
        for r in results:
            if r["row"] == row and r["timer"] == "graph":
                by.setdefault(r["proc"], []).append(r["median_ns"])
        by = {p: v for p, v in by.items() if len(v) >= 2}
        if len(by) < 2:
            continue
        mean = statistics.mean(x for v in by.values() for x in v)
        between = statistics.pstdev([statistics.mean(v) for v in by.values()]) / mean * 1e6
        within = statistics.mean(statistics.stdev(v) for v in by.values()) / mean * 1e6
        out[row] = {"between_ppm": round(between), "within_ppm": round(within), "procs": len(by)}
    return out


def startup_costs(args, work, log, record):
    """Wall time of: python with torch and triton imported; then CUDA initialised; a first
    request in a fresh worker against the same request in the same worker again."""
    code = ("import time; t=time.monotonic(); import torch, triton; a=time.monotonic(); "
            "torch.empty(1, device='cuda'); torch.cuda.synchronize(); b=time.monotonic(); "
            "print(round(a-t,3), round(b-a,3))")
    env = base_env(work, args.corpus, LEVELS["full"], "startup")
    runs = []
    for _ in range(2):
        t0 = time.monotonic()
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        imp, cuda = (float(x) for x in out.stdout.split()) if out.returncode == 0 else (None, None)
        runs.append({"process_s": time.monotonic() - t0, "import_s": imp, "cuda_init_s": cuda})
    w = Worker(env, log)
    time.sleep(args.settle)
    wl = args.workloads[0]
    walls = []
    for s in (1, 2, 3):
        argv, renv = request_for(LEVELS["full"], wl, os.path.join(work, "startup", f"s{s}"), s)
        walls.append(w.request(argv, renv)[1])
    w.close()
    record["startup"] = {"python": runs, "request_wall_s": walls, "settle_s": args.settle}


SIDE_CODE = {
    # a process starting: python, torch and triton imported, CUDA initialised
    "import": "import torch, triton; torch.empty(1, device='cuda'); torch.cuda.synchronize()",
    # a worker started ahead (context made before the session) starting the
    # profiler during it, as _device_init's prepare_ahead does
    "profiler": ("import sys, torch, triton; torch.empty(1, device='cuda'); torch.cuda.synchronize(); "
                 "print('ready', flush=True); sys.stdin.readline(); "
                 "from caliber_pytest import _kernel_time; import time; t = time.monotonic(); "
                 "_kernel_time.prepare(torch, 'ahead'); print('started', time.monotonic() - t, flush=True)"),
}


def disturbance(args, work, log, record):
    """One persistent worker times the first workloads in sessions that alternate quiet
    and noisy: noisy while two other processes do what --side names beside it (import:
    start python, import torch and triton and initialise CUDA; profiler: having made
    their contexts before the session, start the profiler during it)."""
    level = LEVELS["full"]
    w = Worker(base_env(work, args.corpus, level, "disturb"), log)
    code = SIDE_CODE[args.side]
    env = base_env(work, args.corpus, level, "disturb-side")
    results, side_s = [], []
    for s in range(1, 2 * args.sessions + 1):
        noisy = s % 2 == 0
        side = []
        if noisy:
            side = [subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log, text=True) for _ in range(2)]
            if args.side == "profiler":
                for p in side:
                    assert p.stdout.readline().strip() == "ready"
                for p in side:
                    p.stdin.write("go\n")
                    p.stdin.flush()
        for wl in args.workloads[:2]:
            cell = os.path.join(work, "disturb", f"s{s}-{wl[0]}")
            argv, renv = request_for(level, wl, cell, s)
            w.request(argv, renv)
            for row, med, n_calls, timer, samples in rows_of(cell):
                results.append({"noisy": noisy, "session": s, "row": row, "median_ns": med, "timer": timer,
                                "spread_ppm": round((max(samples) - min(samples)) / med * 1e6)})
        for p in side:
            out, _ = p.communicate(timeout=120)
            side_s += [float(x.split()[1]) for x in out.splitlines() if x.startswith("started ")]
    w.close()
    record["disturbance"] = results
    record["disturbance_side"] = {"side": args.side, "profiler_start_s": side_s}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "ops"))
    ap.add_argument("--levels", default=",".join(LEVELS))
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--workloads", default=",".join(w[0] for w in WORKLOADS))
    ap.add_argument("--workloads-json", help="[[id, target, shapes], ...] in place of the built-in rows")
    ap.add_argument("--extra-path", default="", help="more PYTHONPATH entries (':'-separated) for the workers")
    ap.add_argument("--settle", type=float, default=8.0, help="seconds a prestarted worker gets before its request")
    ap.add_argument("--skip", default="", help="comma-separated: startup,disturbance")
    ap.add_argument("--side", choices=sorted(SIDE_CODE), default="import",
                    help="what the processes beside a noisy disturbance session do")
    args = ap.parse_args()
    args.corpus = os.path.abspath(args.corpus)
    EXTRA_PATH.extend(os.path.abspath(p) for p in args.extra_path.split(":") if p)
    names = set(args.workloads.split(","))
    args.workloads = json.loads(args.workloads_json) if args.workloads_json else [w for w in WORKLOADS if w[0] in names]
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="offset-probe.")
    record = {"levels": {}, "timer": TIMER, "procs": args.procs, "sessions": args.sessions}
    with open(os.path.join(args.out, "offset_probe.log"), "w") as log:
        for name in [n for n in args.levels.split(",") if n]:
            t = time.monotonic()
            run_level(name, LEVELS[name], args, work, log, record)
            print(f"level {name}: {time.monotonic() - t:.1f} s", flush=True)
        if "startup" not in args.skip:
            startup_costs(args, work, log, record)
        if "disturbance" not in args.skip:
            disturbance(args, work, log, record)
    for name, lv in record["levels"].items():
        lv["spread"] = spread(lv["results"])
    with open(os.path.join(args.out, "offset_probe.json"), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    if "disturbance_side" in record:
        print("disturbance side:", json.dumps(record["disturbance_side"]))
    print(f"{'level':10} {'row':42} {'between':>8} {'within':>8}  (ppm)")
    for name, lv in record["levels"].items():
        for row, s in lv["spread"].items():
            print(f"{name:10} {row.split('::')[-1][:42]:42} {s['between_ppm']:8} {s['within_ppm']:8}")
    for name, lv in record["levels"].items():
        timers = sorted({(r["proc"], r["session"], r["row"].split("|")[-1], r["timer"]) for r in lv["results"]})
        if any(t[3] != "graph" for t in timers):
            print(f"{name}: rows not captured: {[t for t in timers if t[3] != 'graph']}")
    if "startup" in record:
        print("startup:", json.dumps(record["startup"]))
    if "fresh_requests" in record:
        print("fresh requests (since spawn, wall):",
              [(round(r["since_spawn_s"], 1), round(r["wall_s"], 2)) for r in record["fresh_requests"]])
    for noisy in (False, True):
        d = [r for r in record.get("disturbance", []) if r["noisy"] == noisy]
        if d:
            print("disturbance", "noisy" if noisy else "quiet", [(r["row"].split("|")[-1], r["median_ns"],
                                                                   r["spread_ppm"]) for r in d])


if __name__ == "__main__":
    main()
