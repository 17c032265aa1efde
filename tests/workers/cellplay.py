"""Test workers for the runner (no GPU, no torch, no pytest run).

They speak caliber's worker session protocol (docs/formats.md): one JSON
request per line on stdin, one JSON reply per request on fd CALIBER_REPLY_FD,
EOF ends the session. Instead of running pytest they write what the plugins
would have written for that cell, from DATA/cells.json and the real TTGIR
fixtures in tests/data/ttgir/: ir/<variant>/<kernel>.ttgir and .json,
ir/index.tsv, ir/binaries.tsv, timing.jsonl and autotune.jsonl. Like
Triton, a cell compiles each variant into its private TRITON_CACHE_DIR
(<variant>/<kernel>.ttgir, .json and a stand-in .cubin whose bytes follow
from the TTGIR without locations and the variant's "binary" of cells.json,
when it has one: a backend change that leaves the TTGIR alone), and
ir_meta's digests come from there (caliber_pytest._binaries). The
compile-only pass of run --prescreen (phase screen) writes the IR, the
index and the binaries and times nothing, as the timing plugin then does.
Each named worker in this
folder misbehaves in one way on one task (argument TASK), to exercise one
path of the runner:

    replay.py DATA                 every cell as recorded
    hang.py DATA TASK              hangs in the candidate's round a of TASK
    crash.py DATA TASK             dies by SIGSEGV in the control's round a of TASK
    unjoinable.py DATA TASK        leaves a variant without index row in the candidate's round a
    replay_miss.py DATA TASK       the candidate's round a finds no recorded autotune config
    slow.py DATA TASK SECONDS      sleeps SECONDS in the baseline's correctness of TASK
    kill_runner.py DATA K [TASK SECONDS]
                                   SIGKILLs caliber (its parent) when the baseline's workers get
                                   the cell's K-th request (K = 0: when a baseline worker's stdin
                                   ends having served a request: after the last task for a
                                   persistent worker), leaving its pid in kill_runner.pid of that
                                   request's cell folder; optionally slow as above (when the K-th
                                   request is the slow one, it then sleeps at once, silently, as
                                   a worker hung in a kernel would)

The hostile ones break the rules of a worker in the candidate's round a of
TASK, once (in its first timed session); caliber must survive each with
that cell a harness failure (or a timeout) and every other task unaffected:

    hang.py DATA TASK              (above) never replies, and runs on
    closefds.py DATA TASK          closes its stdout, stderr and reply fd, then runs on
    extrareply.py DATA TASK        replies twice (an extra "passed") in one write
    stalereply.py DATA TASK        sends its reply again a second later, before the next request
    wrongid.py DATA TASK           echoes another request's id
    noid.py DATA TASK              replies without an id
    wrongtask.py DATA TASK         echoes the request's id with another task's name
    endless.py DATA TASK           writes a reply that never ends (no newline)
    midreply.py DATA TASK          writes half of its reply, then exits
    flood.py DATA TASK MIB         prints MIB MiB to stdout, then answers as recorded
    plantlink.py DATA TASK [kill]  leaves a symlink, a FIFO and a link whose name is not UTF-8 in
                                   its cell folder (and with
                                   kill, SIGKILLs caliber before it replies)
    plantnext.py DATA TASK VICTIM  answers as recorded, having planted a link to the file VICTIM
                                   at the worker.log of its next cell (round b of TASK)
    plantroot.py DATA TASK         answers as recorded, having left a symlink and a FIFO at the top
                                   of the run root, outside every cell folder
    forkchild.py DATA TASK         starts a child that holds its pipes and sleeps an hour (its pid
                                   in forkchild.pid of the cell folder), then exits without a reply

The attacks of issue 25 answer as recorded, having tried to change what the
run says from outside their cell folder (each says in worker.log what the
kernel let it do and what it refused):

    rewritetiming.py DATA TASK     starts a child in a session of its own (setsid; its pid in
                                   rewriter.pid of the cell folder) that multiplies by 1.5 the
                                   samples_ns of every other cell's timing.jsonl of TASK as each
                                   appears, for an hour (and replies once its first pass is done)
    rewritetask.py DATA TASK VICTIM
                                   rewrites the task receipt of the earlier task VICTIM: its
                                   verdict becomes B
    plantdir.py DATA TASK NEXT OUTSIDE [cells]
                                   plants tasks/NEXT (with cells: tasks/NEXT/cells) as a symlink
                                   to the folder OUTSIDE, before caliber makes it
    writeoutside.py DATA TASK VICTIM
                                   writes planted.txt at the top of the run root and in every
                                   other task's folder, and hard-links the file VICTIM (outside
                                   the run root) into its cell folder as linked.txt

Any of them also takes --cell-s SECONDS (anywhere after DATA): every request
then takes SECONDS more before it is served, as real work would (a stand-in
whose time the test sets, never the machine: e.g. 0.3 s a cell against
timeouts of 30 s, for the planning of --stop-after).
    retune.py DATA TASK [PHASE]    the candidate's tuner decides for itself in PHASE (default
                                   screen) of TASK instead of replaying the baseline's decision:
                                   its autotune.jsonl holds another config, its binaries are the same

Any of them also takes --then-kill (anywhere after DATA): the hostile cell
leaves then-kill.task, naming its task, in its own cell folder when it
starts (the one place a confined worker may write that the others can
read), and the first worker that then gets a request of a later task, or
sees its stdin end (the run is over), SIGKILLs caliber: a run cut right
after the task a hostile worker spoiled, for --resume to finish.

builds.py (its own docstring) serves campaigns of two compiler builds: what a
cell compiles comes from the stand-in compiler it imports, not from its role.

offsets.py DATA SEED PROC_PPM REP_PPM (its own docstring) serves A/A campaigns
whose worker processes each carry a random offset fixed for their life, as the
H200's do: the fresh processes of the default worker mode sample it, a
persistent process's sessions share it.

Like the real worker session (caliber_pytest.session) they serve each request
from the cell's private working directory CALIBER_WORK_DIR, so a relative path
in a request would be resolved against the wrong folder, as it would be there;
and like the autotune_record plugin, a replaying cell reads the baseline's
record and fails when it cannot, and writes the decisions it replayed to its
own autotune.jsonl.
"""

import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TTGIR = os.path.join(os.path.dirname(HERE), "data", "ttgir")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

from caliber_pytest import _binaries  # noqa: E402  (after the path it comes from)


# How each timed session of a round shifts every cell's samples (the slow
# drift of a device between sessions, shared by the cells it interleaves).
SESSION_DRIFT = {1: 1.0, 2: 1.0004, 3: 0.9997}


def samples(ns, n, row, session=1):
    """n deterministic samples spread +-0.1% around ns (row shifts them,
    session drifts them)."""
    ns = int(round(ns * SESSION_DRIFT.get(session, 1.0)))
    return [ns * (1 + row) + ns * (2 * k - (n - 1)) // (1000 * max(n - 1, 1)) for k in range(n)]


def compile_variant(cache, v, extra=None):
    """Variant v of cells.json compiled into the cache as Triton would: its
    folder holds <kernel>.ttgir, .cubin and .json (extra merged into the
    metadata); returns the group (file name -> path) in the order written.
    The cubin's bytes follow from the code (the TTGIR without locations),
    the launch configuration and v's "binary", never from where it lives."""
    d = os.path.join(cache, v["variant"])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(TTGIR, v["ttgir"])) as f:
        ttgir = f.read()
    meta = dict({"name": v["kernel"], "hash": v["variant"].lower(), "num_warps": v.get("num_warps", 4), "num_ctas": 1,
                 "shared": 0}, **(extra or {}))
    code = f"{_binaries.strip_locations(ttgir)}|{meta['num_warps']}|{v.get('binary', '')}"
    files = ((".ttgir", ttgir), (".cubin", b"\x7fELF" + hashlib.sha256(code.encode()).digest()),
             (".json", json.dumps(meta)))
    group = {}
    for suffix, data in files:
        path = os.path.join(d, v["kernel"] + suffix)
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        group[v["kernel"] + suffix] = path
    return group


def write_ir(cell_dir, variants, groups):
    """ir/ as ir_meta writes it in a cell's first session: each variant's
    .ttgir and .json copied from its cache group, and ir/binaries.tsv."""
    ir = os.path.join(cell_dir, "ir")
    rows = []
    for v in variants:
        group = groups[v["variant"]]
        d = os.path.join(ir, v["variant"])
        os.makedirs(d, exist_ok=True)
        for name in (v["kernel"] + ".ttgir", v["kernel"] + ".json"):
            shutil.copyfile(group[name], os.path.join(d, name))
        rows.append(_binaries.describe(v["variant"], v["kernel"], group))
    with open(os.path.join(ir, "binaries.tsv"), "w") as f:
        f.write(_binaries.format_binaries(rows))


def write_index(cell_dir, lines):
    """ir/index.tsv: its header and lines."""
    os.makedirs(os.path.join(cell_dir, "ir"), exist_ok=True)
    with open(os.path.join(cell_dir, "ir", "index.tsv"), "w") as f:
        f.write("\n".join(["variant\tkernel\tlaunches\ttuning_launches"] + lines) + "\n")


def write_cell(cell_dir, spec, role, phase, repeats, rows, session=1, sampler=samples):
    """The outputs of one benchmark cell, as the plugins write them: a later
    session of a round writes the launch index but no IR or binaries, as
    ir_meta does; the screen times nothing (an empty timing.jsonl).
    sampler(ns, n, row, session) gives a row's samples (default: samples)."""
    variants = sorted(spec["candidate" if role == "candidate" else "baseline"], key=lambda v: v["variant"])
    cache = os.environ.get("TRITON_CACHE_DIR") or os.path.join(cell_dir, ".cache")
    write_index(cell_dir, [f"{v['variant']}\t{v['kernel']}\t{v['launches']}\t0" for v in variants])
    if session == 1:
        write_ir(cell_dir, variants, {v["variant"]: compile_variant(cache, v) for v in variants})
    if phase == "screen":
        open(os.path.join(cell_dir, "timing.jsonl"), "w").close()
    else:
        write_timing(cell_dir, spec["ns"][role], repeats, rows, session, sampler)


def write_timing(cell_dir, ns, repeats, rows, session, sampler=samples):
    """timing.jsonl of one benchmark cell: rows timed around ns."""
    with open(os.path.join(cell_dir, "timing.jsonl"), "w") as f:
        for r in range(rows):
            f.write(json.dumps({"row": f"benchmark/test_ops.py::test_perf[float16]|r{r}",
                                "samples_ns": sampler(ns, repeats, r, session), "timer": "direct",
                                "timer_reason": "backend has no graph capture", "n_calls": 10,
                                "clocks": {"before": None, "after": None}}, sort_keys=True) + "\n")


def replay_record_readable(env):
    """What the autotune_record plugin checks first in a replaying cell: the
    baseline's record (CALIBER_AUTOTUNE_FILE) can be read. It says why not."""
    if env["CALIBER_AUTOTUNE_MODE"] != "replay":
        return True
    try:
        with open(env["CALIBER_AUTOTUNE_FILE"]) as f:
            f.read()
        return True
    except OSError as e:
        print(f"caliber_pytest.autotune_record: cannot read the record to replay: {e}", flush=True)
        return False


def decision(task, block=128):
    """The task's one autotune decision, as autotune.jsonl holds it."""
    return json.dumps({"kernel": f"ops:{task}", "key": "(4096,)", "config": {"kwargs": {"BLOCK": block},
                       "num_warps": 4, "num_stages": 2, "num_ctas": 1, "maxnreg": None}}) + "\n"


def autotune(env, task, retune=False):
    """What the autotune_record plugin does: record the task's one decision,
    or read the record and write what it replays to the cell's own
    autotune.jsonl (with retune, the tuner's own other decision instead).
    False: the request fails."""
    if env["CALIBER_AUTOTUNE_MODE"] == "record":
        with open(env["CALIBER_AUTOTUNE_FILE"], "w") as f:
            f.write(decision(task))
    if not replay_record_readable(env):
        return False
    if env["CALIBER_AUTOTUNE_MODE"] == "replay":
        with open(env["CALIBER_AUTOTUNE_FILE"]) as f:
            record = f.read()
        with open(os.path.join(env["CALIBER_CELL_DIR"], "autotune.jsonl"), "w") as f:
            f.write(decision(task, 256) if retune else record)
    return True


def begin(request, data):
    """A request's environment, task, role, phase and cell folder (created),
    and the task's entry of cells.json."""
    env = request["env"]
    os.makedirs(env["CALIBER_CELL_DIR"], exist_ok=True)
    return (env, env["CALIBER_TASK"], env["CALIBER_ROLE"], env["CALIBER_PHASE"], env["CALIBER_CELL_DIR"],
            data["tasks"][env["CALIBER_TASK"]])


# The hostile modes (t0910): each misbehaves once, in the first timed
# session of its round (CALIBER_SESSION, 1 when the runner has none).
HOSTILE_MODES = ("closefds", "extrareply", "stalereply", "wrongid", "noid", "wrongtask", "endless", "midreply", "flood",
                 "plantlink", "plantnext", "plantroot", "forkchild", "rewritetiming", "rewritetask", "plantdir",
                 "writeoutside")


def spot(env, kind):
    """Where a request is, as misbehave names the request to spoil: (task,
    phase, role); a later session of a round has its number added, so that
    a hostile mode never spots it."""
    here = (env["CALIBER_TASK"], env["CALIBER_PHASE"], env["CALIBER_ROLE"])
    session = env.get("CALIBER_SESSION", "1")
    return here + (session,) if kind in HOSTILE_MODES and session != "1" else here


def handle(request, data, misbehave):
    """Serve one request; returns the pytest exit code to reply."""
    env, task, role, phase, cell_dir, spec = begin(request, data)
    here = spot(env, misbehave.get("kind"))
    print(f"cellplay: {task} {role} {phase} pid {os.getpid()}", flush=True)
    if misbehave.get("hang") == here:
        time.sleep(3600)
    if misbehave.get("crash") == here:
        os.kill(os.getpid(), signal.SIGSEGV)
    if misbehave.get("slow") == (task, "correctness", role):
        time.sleep(misbehave["seconds"])
    if misbehave.get("closefds") == here:
        for fd in (1, 2, int(os.environ.get("CALIBER_REPLY_FD", "3"))):
            os.close(fd)
        time.sleep(3600)
    if misbehave.get("endless") == here:
        chunk = b"x" * 65536
        while True:
            os.write(int(os.environ.get("CALIBER_REPLY_FD", "3")), chunk)
    if misbehave.get("flood") == here:
        line = "flood " + "y" * 1017 + "\n"
        for _ in range(misbehave["mib"] * 1024):
            sys.stdout.write(line)
        sys.stdout.flush()
    if not autotune(env, task, misbehave.get("retune") == here):
        return 4
    if misbehave.get("replay_miss") == here:
        with open(os.path.join(cell_dir, "replay_miss.json"), "w") as f:
            json.dump({"kernel": f"ops:{task}", "key": "(8192,)"}, f)
        return 1
    if phase == "correctness":
        return 1 if role in spec.get("correctness_fails", []) else 0
    timer = json.loads(env["CALIBER_TIMER"])
    write_cell(cell_dir, spec, role, phase, timer["repeats"], data["rows"], int(env.get("CALIBER_SESSION", "1")))
    if misbehave.get("unjoinable") == here:
        os.makedirs(os.path.join(cell_dir, "ir", "STRAYVARIANT"), exist_ok=True)
        with open(os.path.join(cell_dir, "ir", "STRAYVARIANT", "stray.ttgir"), "w") as f:
            f.write("module {\n}\n")
    if misbehave.get("forkchild") == here:
        child = os.fork()
        if child == 0:
            time.sleep(3600)
            os._exit(0)
        with open(os.path.join(cell_dir, "forkchild.pid"), "w") as f:
            f.write(f"{child}\n")
        os._exit(0)
    if misbehave.get("rewritetiming") == here:
        rewrite_timing_behind(cell_dir)
    if misbehave.get("rewritetask") == here:
        attempt("rewrite the earlier task.json", rewrite_task, os.path.join(run_root(cell_dir), "tasks",
                                                                         misbehave["victim"], "task.json"))
    if misbehave.get("plantdir") == here:
        target = os.path.join(run_root(cell_dir), "tasks", misbehave["next"])
        if misbehave["cells"]:
            attempt("make the next task's folder", os.makedirs, target, exist_ok=True)
            target = os.path.join(target, "cells")
        attempt("plant " + target, os.symlink, misbehave["outside"], target)
    if misbehave.get("writeoutside") == here:
        root = run_root(cell_dir)
        targets = [os.path.join(root, "planted.txt")]
        targets += [os.path.join(root, "tasks", t, "planted.txt") for t in sorted(os.listdir(os.path.join(root, "tasks")))
                    if t != task]
        for path in targets:
            attempt("write " + path, write_text, path, "planted by a worker\n")
        attempt("link " + misbehave["victim"], os.link, misbehave["victim"], os.path.join(cell_dir, "linked.txt"))
    if misbehave.get("plantnext") == here:
        nxt = os.path.join(os.path.dirname(cell_dir), f"b-{env['CALIBER_CELL']}")
        os.makedirs(nxt, exist_ok=True)
        os.symlink(misbehave["victim"], os.path.join(nxt, "worker.log"))
    if misbehave.get("plantroot") == here:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(cell_dir))))
        os.symlink("/etc/passwd", os.path.join(root, "planted-root"))
        os.mkfifo(os.path.join(root, "planted-root.fifo"))
    if misbehave.get("plantlink") == here:
        os.symlink("/etc/passwd", os.path.join(cell_dir, "ir", "planted"))
        os.mkfifo(os.path.join(cell_dir, "planted.fifo"))
        os.symlink(b"planted.fifo", os.path.join(os.fsencode(cell_dir), b"not-utf8-\xff"))
        if misbehave.get("kill_after_plant"):
            os.kill(os.getppid(), signal.SIGKILL)
    return 0


def run_root(cell_dir):
    """The run root of a cell folder (RUN/tasks/TASK/cells/CELL)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(cell_dir))))


def attempt(what, fn, *args, **kwargs):
    """fn(*args) as a hostile worker tries it: what the kernel says goes to
    worker.log (stdout), and a refusal is no reason to stop."""
    try:
        fn(*args, **kwargs)
        print(f"cellplay: hostile: {what}: done", flush=True)
    except OSError as e:
        print(f"cellplay: hostile: {what}: refused: {e.strerror}", flush=True)


def write_text(path, text):
    """path holds text (made, or overwritten in place)."""
    with open(path, "w") as f:
        f.write(text)


def rewrite_task(path):
    """The task receipt at path with its verdict made B, written in place."""
    with open(path) as f:
        text = f.read()
    os.chmod(path, 0o644)
    write_text(path, text.replace('"verdict": "G"', '"verdict": "B"'))


def scale_timing(path):
    """Every samples_ns of the timing.jsonl at path times 1.5, in place."""
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for r in rows:
        r["samples_ns"] = [int(x * 1.5) for x in r["samples_ns"]]
    os.chmod(path, 0o644)
    write_text(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def rewrite_timing_behind(cell_dir):
    """Start the rewriter: a child in a session of its own, out of the
    worker's process group, that rescales the timing.jsonl of every other
    cell of its task as each appears (once each), for an hour."""
    ready = os.path.join(cell_dir, "rewriter.ready")
    child = os.fork()
    if child:
        with open(os.path.join(cell_dir, "rewriter.pid"), "w") as f:
            f.write(f"{child}\n")
        # its first pass done (and said in worker.log) before the reply
        deadline = time.time() + 5
        while not os.path.exists(ready) and time.time() < deadline:
            time.sleep(0.01)
        return
    os.setsid()
    cells = os.path.dirname(cell_dir)
    done = set()
    deadline = time.time() + 3600
    while time.time() < deadline:
        for name in sorted(os.listdir(cells)) if os.path.isdir(cells) else []:
            path = os.path.join(cells, name, "timing.jsonl")
            if os.path.join(cells, name) == cell_dir or path in done or not os.path.exists(path):
                continue
            done.add(path)
            attempt("rescale " + path, scale_timing, path)
        if not os.path.exists(ready):
            open(ready, "w").close()
        time.sleep(0.01)
    os._exit(0)


def take_option(name):
    """The value of option NAME (e.g. --then-kill MARKER), taken out of
    sys.argv; or None."""
    if name not in sys.argv:
        return None
    at = sys.argv.index(name)
    value = sys.argv[at + 1]
    del sys.argv[at:at + 2]
    return value


# --then-kill: the file the hostile cell leaves in its own cell folder (the
# one place a confined worker may write that other workers can read),
# naming the task it spoiled.
THEN_KILL = "then-kill.task"


def spoiled_task(cell_dir):
    """The task a hostile cell of this run marked with THEN_KILL, or None."""
    tasks = os.path.join(run_root(cell_dir), "tasks")
    for task in sorted(os.listdir(tasks)) if os.path.isdir(tasks) else []:
        cells = os.path.join(tasks, task, "cells")
        for cell in sorted(os.listdir(cells)) if os.path.isdir(cells) else []:
            if os.path.exists(os.path.join(cells, cell, THEN_KILL)):
                return task
    return None


def kill_caliber():
    """--then-kill: SIGKILL caliber (the parent); this worker then waits to
    die with it."""
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(3600)


def name_thread():
    """What CUDA's cuInit does first on the GPU: name the calling thread
    through procfs (/proc/<pid>/task/<tid>/comm). Where that write is
    refused (a worker confined without /proc), cuInit fails with error 304
    and torch sees no GPU: the stand-in fails the same way, so that a
    confinement that would break the GPU breaks the CPU tests too. The name
    written is the one the thread has."""
    path = f"/proc/{os.getpid()}/task/{threading.get_native_id()}/comm"
    with open(path) as f:
        name = f.read().rstrip("\n")    # comm reads back with a newline, which a write would keep
    with open(path, "w") as f:
        f.write(name)


def main(misbehave_kind=None):
    """Serve requests until EOF. argv: DATA [TASK]."""
    name_thread()
    then_kill = "--then-kill" in sys.argv
    if then_kill:
        sys.argv.remove("--then-kill")
    cell_s = float(take_option("--cell-s") or 0)
    data_dir = sys.argv[1]
    with open(os.path.join(data_dir, "cells.json")) as f:
        data = json.load(f)
    misbehave = {"kind": misbehave_kind}
    if misbehave_kind == "kill_runner":
        misbehave["kill_at"] = int(sys.argv[2])
        if len(sys.argv) > 4:
            misbehave["slow"] = (sys.argv[3], "correctness", "baseline")
            misbehave["seconds"] = float(sys.argv[4])
    elif misbehave_kind == "slow":
        misbehave["slow"] = (sys.argv[2], "correctness", "baseline")
        misbehave["seconds"] = float(sys.argv[3])
    elif misbehave_kind:
        task = sys.argv[2]
        role = {"crash": "control"}.get(misbehave_kind, "candidate")
        phase = "a"
        if misbehave_kind == "retune":
            phase = sys.argv[3] if len(sys.argv) > 3 else "screen"
        misbehave[misbehave_kind] = (task, phase, role)
        if misbehave_kind == "flood":
            misbehave["mib"] = int(sys.argv[3])
        if misbehave_kind in ("plantnext", "rewritetask", "writeoutside"):
            misbehave["victim"] = sys.argv[3]
        if misbehave_kind == "plantdir":
            misbehave["next"], misbehave["outside"] = sys.argv[3], sys.argv[4]
            misbehave["cells"] = sys.argv[5:] == ["cells"]
        misbehave["kill_after_plant"] = sys.argv[3:] == ["kill"]
    seen = []
    last_cell = []

    def answer(request):
        env = request["env"]
        time.sleep(cell_s)
        if then_kill:
            last_cell.append(env["CALIBER_CELL_DIR"])
            if misbehave.get(misbehave_kind) == spot(env, misbehave_kind):
                os.makedirs(env["CALIBER_CELL_DIR"], exist_ok=True)
                with open(os.path.join(env["CALIBER_CELL_DIR"], THEN_KILL), "w") as f:
                    f.write(env["CALIBER_TASK"] + "\n")
            elif spoiled_task(env["CALIBER_CELL_DIR"]) not in (None, env["CALIBER_TASK"]):
                kill_caliber()
        if env["CALIBER_ROLE"] == "baseline":
            seen.append(request)
            # the cell's n-th request of this invocation, whichever process serves it
            # (the n of its id: docs/formats.md, "Worker session protocol")
            if int(request["id"].rsplit("/", 1)[1]) == misbehave.get("kill_at"):
                os.makedirs(env["CALIBER_CELL_DIR"], exist_ok=True)
                with open(os.path.join(env["CALIBER_CELL_DIR"], "kill_runner.pid"), "w") as f:
                    f.write(f"{os.getpid()}\n")
                os.kill(os.getppid(), signal.SIGKILL)
                if misbehave.get("slow") == (env["CALIBER_TASK"], env["CALIBER_PHASE"], "baseline"):
                    time.sleep(misbehave["seconds"])
        return handle(request, data, misbehave)

    def send(request, text, write):
        """The reply as the hostile modes mangle it (else as it is)."""
        env = request["env"]
        if misbehave_kind not in REPLY_MODES or misbehave[misbehave_kind] != spot(env, misbehave_kind):
            write(text)
            return
        reply = json.loads(text)
        if misbehave_kind == "extrareply":
            write(text + json.dumps(dict(reply, exit=0)) + "\n")
        elif misbehave_kind == "stalereply":
            write(text)
            time.sleep(1)
            write(text)
        elif misbehave_kind == "wrongid":
            write(json.dumps(dict(reply, id=f"{reply.get('id')}0")) + "\n")
        elif misbehave_kind == "wrongtask":
            write(json.dumps(dict(reply, task=f"{reply.get('task')}0")) + "\n")
        elif misbehave_kind == "midreply":
            write(text[:len(text) // 2])
            os._exit(0)
        else:
            reply.pop("id", None)
            write(json.dumps(reply) + "\n")

    serve(answer, send)
    if misbehave.get("kill_at") == 0 and seen:
        os.kill(os.getppid(), signal.SIGKILL)
    if then_kill and last_cell and spoiled_task(last_cell[-1]):
        kill_caliber()
    return 0


# The hostile modes that break the reply rather than the work.
REPLY_MODES = ("extrareply", "stalereply", "wrongid", "noid", "wrongtask", "midreply")


def serve(answer, send=None):
    """The session loop: each request answered from its cell's private working
    directory (CALIBER_WORK_DIR of the worker's environment), as the real
    session runs pytest there. The reply echoes the request's id (with task
    and phase); send(request, text, write), when given, writes it instead."""
    fd = int(os.environ.get("CALIBER_REPLY_FD", "3"))
    home = os.getcwd()

    def write(text):
        os.write(fd, text.encode())

    for line in sys.stdin:
        request = json.loads(line)
        os.chdir(os.environ["CALIBER_WORK_DIR"])
        try:
            code = answer(request)
        finally:
            os.chdir(home)
        reply = {"exit": code, "phase": request["phase"], "task": request["task"]}
        if "id" in request:
            reply["id"] = request["id"]
        text = json.dumps(reply, sort_keys=True) + "\n"
        (send or (lambda _, t, w: w(t)))(request, text, write)
