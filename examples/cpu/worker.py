"""The stand-in worker of caliber's CPU example (examples/cpu/README.md).

It speaks the protocol of caliber's worker session (docs/formats.md, "Worker
session protocol") as caliber_pytest.session does: one JSON request per line
on stdin, the request's env set while it is served, from the cell's private
working directory CALIBER_WORK_DIR, one reply per request on fd
CALIBER_REPLY_FD echoing its id; EOF ends it. Where the real session runs
pytest with caliber's plugins on a GPU, this one asks the stand-in compiler
(`import standin`, which resolves in the cell's compiler root, as `import
triton` does in a real campaign) what each kernel becomes in this cell, and
writes what the plugins would have written: for correctness, pytest's exit
code (1 when the kernel is miscompiled); for a benchmark session, the launch
index ir/index.tsv, the kernel's TTGIR under ir/<variant>/ (in session 1, as
ir_meta copies it) and timing.jsonl, two rows of `repeats` samples around
the kernel's cost, shifted a little per session as a device drifts. The
samples are synthetic by design: they make the verdicts follow from the
compiler's table, and are never measurements.
"""

import json
import os
import sys

import standin

ROWS = ("1024x1024", "4096x4096")
DRIFT = {1: 1.0, 2: 1.0004, 3: 0.9997}


def samples(ns, repeats, row, session):
    """repeats samples spread +-0.1% around ns (a larger row takes
    longer), drifted by the session."""
    ns = round(ns * (1 + 3 * row) * DRIFT.get(session, 1.0))
    return [ns + ns * (2 * k - (repeats - 1)) // (1000 * max(repeats - 1, 1)) for k in range(repeats)]


def benchmark(cell_dir, op, compiled, env):
    """One timed session of a cell: its launch index, its IR (session 1),
    its timing rows."""
    session = int(env.get("CALIBER_SESSION", "1"))
    repeats = json.loads(env["CALIBER_TIMER"])["repeats"]
    ir = os.path.join(cell_dir, "ir")
    os.makedirs(ir, exist_ok=True)
    with open(os.path.join(ir, "index.tsv"), "w") as f:
        f.write(f"variant\tkernel\tlaunches\ttuning_launches\n{compiled['variant']}\t{compiled['kernel']}\t20\t0\n")
    if session == 1:
        d = os.path.join(ir, compiled["variant"])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, compiled["kernel"] + ".ttgir"), "w") as f:
            f.write(compiled["ttgir"])
        with open(os.path.join(d, compiled["kernel"] + ".json"), "w") as f:
            json.dump({"hash": compiled["variant"].lower(), "name": compiled["kernel"]}, f, sort_keys=True)
    with open(os.path.join(cell_dir, "timing.jsonl"), "w") as f:
        for r, shape in enumerate(ROWS):
            f.write(json.dumps({"clocks": {"after": None, "before": None}, "dtype": "float16", "n_calls": 20,
                                "row": f"benchmark/test_ops.py::test_perf_{op}[float16]|{shape}",
                                "samples_ns": samples(compiled["ns"], repeats, r, session), "shape": shape,
                                "timer": "direct", "timer_reason": "backend has no graph capture"},
                               sort_keys=True) + "\n")


def serve(request):
    """One request; returns pytest's exit code for it."""
    env = request["env"]
    op, phase, cell_dir = env["CALIBER_TASK"], env["CALIBER_PHASE"], env["CALIBER_CELL_DIR"]
    os.makedirs(cell_dir, exist_ok=True)
    compiled = standin.compile_kernel(op)
    print(f"standin worker: {op} {env['CALIBER_CELL']} {phase}: {standin.layout_runs()} runs of the layout pass, "
          f"{compiled['converts']} converts", flush=True)
    if phase == "correctness":
        return 0 if compiled["correct"] else 1
    benchmark(cell_dir, op, compiled, env)
    return 0


def main():
    fd = int(os.environ.get("CALIBER_REPLY_FD", "3"))
    home = os.getcwd()
    for line in sys.stdin:
        request = json.loads(line)
        saved = {k: os.environ.get(k) for k in request["env"]}
        os.environ.update(request["env"])
        os.chdir(os.environ["CALIBER_WORK_DIR"])
        try:
            code = serve(request)
        finally:
            os.chdir(home)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        reply = {"exit": code, "id": request["id"], "phase": request["phase"], "task": request["task"]}
        os.write(fd, (json.dumps(reply, sort_keys=True) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
