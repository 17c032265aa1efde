"""parallel_warmup in a real worker session, without a GPU: the request that
CALIBER_WARMUP_NEXT names runs on the warm-up "GPU" in the background, in a
persistent warm-up worker, while the measured process goes on without
waiting; parallel_warmup.json says what each request found and sent."""

import json
import os
import textwrap
import time

from caliber_pytest import _warmup_plan
from worker_session import request, serve

# The corpus. Markers go to $WARMUP_MARKERS/<CUDA_VISIBLE_DEVICES>-<task>-<phase>.json;
# test_wait_job.py waits, inside the measured process, until the warm-up of
# $WAIT_KEY has ended; test_wait_marker.py until the marker $WAIT_MARKER exists.
CORPUS = {
    "conftest.py": """
        import json
        import os
        import time

        def write_marker():
            env = os.environ
            name = f"{env['CUDA_VISIBLE_DEVICES']}-{env['CALIBER_TASK']}-{env['CALIBER_PHASE']}.json"
            keep = {k: v for k, v in env.items() if k.startswith(("CALIBER_", "CUDA_", "PARALLEL_", "TRITON_"))}
            with open(os.path.join(env["WARMUP_MARKERS"], name + ".tmp"), "w") as f:
                json.dump({"cwd": os.getcwd(), "env": keep, "pid": os.getpid()}, f)
            os.replace(os.path.join(env["WARMUP_MARKERS"], name + ".tmp"), os.path.join(env["WARMUP_MARKERS"], name))

        def wait_for(done, what):
            deadline = time.monotonic() + 90
            while not done():
                assert time.monotonic() < deadline, f"waited 90 s for {what}"
                time.sleep(0.05)
    """,
    "test_marker.py": """
        from conftest import write_marker

        def test_marker():
            write_marker()
    """,
    "test_slow.py": """
        import time
        from conftest import write_marker

        def test_slow():
            write_marker()
            time.sleep(600)
    """,
    "test_picky.py": """
        import os
        from conftest import write_marker

        def test_fails_on_the_warmup_gpu():
            write_marker()
            assert os.environ["CUDA_VISIBLE_DEVICES"] != "7"
    """,
    "test_dies.py": """
        import os

        def test_kills_the_warmup_worker():
            if os.environ["CUDA_VISIBLE_DEVICES"] == "7":
                os._exit(9)
    """,
    "test_wait_job.py": """
        import os
        from caliber_pytest import parallel_warmup
        from conftest import wait_for

        def test_wait_job():
            key = os.environ["WAIT_KEY"]

            def ended():
                parallel_warmup._pool.poll()
                return parallel_warmup._pool.jobs[key].wall_ns is not None
            wait_for(ended, f"the warm-up of {key}")
    """,
    "test_wait_marker.py": """
        import os
        from conftest import wait_for

        def test_wait_marker():
            path = os.path.join(os.environ["WARMUP_MARKERS"], os.environ["WAIT_MARKER"])
            wait_for(lambda: os.path.exists(path), path)
    """,
}

ARGV = ["-q", "-p", "no:cacheprovider", "-p", "caliber_pytest.parallel_warmup"]


def _setup(tmp_path):
    """The corpus and the folders a session needs; returns the worker env."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in CORPUS.items():
        (corpus / name).write_text(textwrap.dedent(text))
    for sub in ("markers", "tmp", "triton", "run"):
        (tmp_path / sub).mkdir()
    return corpus, {"PARALLEL_WARMUP_GPUS": "7", "CUDA_VISIBLE_DEVICES": "0", "TMPDIR": str(tmp_path / "tmp"),
                    "TRITON_CACHE_DIR": str(tmp_path / "triton"), "WARMUP_MARKERS": str(tmp_path / "markers"),
                    "CALIBER_TASK": None, "CALIBER_CELL_DIR": None, "CALIBER_WARMUP_NEXT": None}


def _env(tmp_path, task, phase):
    """A request's env as the runner writes it, for (task, phase) of one cell."""
    cell = str(tmp_path / "run" / task / phase)
    return {"CALIBER_CELL_DIR": cell, "CALIBER_TASK": task, "CALIBER_PHASE": phase, "CALIBER_CELL": "candidate",
            "CALIBER_AUTOTUNE_MODE": "replay", "CALIBER_AUTOTUNE_FILE": f"{tmp_path}/run/{task}/off/autotune.jsonl",
            "CALIBER_TIMER": '{"graph_capture":"auto","repeats":20}'}


def _request(tmp_path, task, phase, target, ahead=None, **extra):
    """One request line; ahead = (task, phase, target) of the request to name in CALIBER_WARMUP_NEXT."""
    env = dict(_env(tmp_path, task, phase), **extra)
    if ahead:
        env["CALIBER_WARMUP_NEXT"] = json.dumps(
            {"argv": ARGV + [ahead[2]], "env": _env(tmp_path, ahead[0], ahead[1]), "key": f"{ahead[0]}/{ahead[1]}"},
            sort_keys=True, separators=(",", ":"))
    return request(task, ARGV + [target], env, phase)


def _record(tmp_path, task, phase):
    """parallel_warmup.json of (task, phase)."""
    return json.loads((tmp_path / "run" / task / phase / "parallel_warmup.json").read_text())


def _marker(tmp_path, gpu, task, phase):
    return json.loads((tmp_path / "markers" / f"{gpu}-{task}-{phase}.json").read_text())


def _gone(pid, seconds=10):
    """Whether process pid has ended (and been reaped) within seconds."""
    deadline = time.monotonic() + seconds
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    return not os.path.exists(f"/proc/{pid}")


def test_the_next_request_runs_ahead_on_the_warmup_gpu(tmp_path):
    corpus, env = _setup(tmp_path)
    started = time.monotonic()
    status, replies, out = serve(corpus, [
        _request(tmp_path, "t1", "correctness", "test_wait_job.py", ("t1", "a", "test_marker.py"), WAIT_KEY="t1/a"),
        _request(tmp_path, "t1", "a", "test_marker.py", ("t2", "correctness", "test_slow.py")),
        _request(tmp_path, "t1", "b", "test_wait_marker.py", ("t2", "correctness", "test_slow.py"),
                 WAIT_MARKER="7-t2-correctness.json"),
    ], env)
    try:
        assert status == 0, out
        assert [r["exit"] for r in replies] == [0, 0, 0], out
        # The warm-up ran t1/a on GPU 7, in its own process, as a record into scratch, timing little.
        warm, measured = _marker(tmp_path, "7", "t1", "a"), _marker(tmp_path, "0", "t1", "a")
        assert warm["pid"] != measured["pid"] and warm["cwd"] != measured["cwd"]
        assert warm["env"]["TRITON_CACHE_DIR"] == measured["env"]["TRITON_CACHE_DIR"] == str(tmp_path / "triton")
        assert warm["env"]["CALIBER_CELL_DIR"].startswith(str(tmp_path / "tmp") + "/")
        assert warm["env"]["CALIBER_AUTOTUNE_MODE"] == "record"
        assert warm["env"]["CALIBER_AUTOTUNE_FILE"] == warm["env"]["CALIBER_CELL_DIR"] + "/autotune.jsonl"
        assert json.loads(warm["env"]["CALIBER_TIMER"]) == _warmup_plan.WARMUP_TIMER
        assert warm["env"]["CALIBER_GRAPH_CAPTURE"] == "0"
        assert "PARALLEL_WARMUP_GPUS" not in warm["env"] and "CALIBER_WARMUP_NEXT" not in warm["env"]
        # The measured process ran t1/a itself, as the runner asked.
        assert measured["env"]["CALIBER_CELL_DIR"] == str(tmp_path / "run" / "t1" / "a")
        assert measured["env"]["CALIBER_AUTOTUNE_MODE"] == "replay"
        # Each request says what it found and sent; t2/correctness is sent once.
        assert _record(tmp_path, "t1", "correctness") == {
            "gpus": ["7"], "key": "t1/correctness", "next": "t1/a", "warmed": None,
            "sent": {"gpu": "7", "key": "t1/a", "state": "running"}}
        rec = _record(tmp_path, "t1", "a")
        assert rec["warmed"]["wall_ns"] > 0
        assert rec == {"gpus": ["7"], "key": "t1/a", "next": "t2/correctness",
                       "warmed": {"exit": 0, "gpu": "7", "key": "t1/a", "state": "finished",
                                  "wall_ns": rec["warmed"]["wall_ns"]},
                       "sent": {"gpu": "7", "key": "t2/correctness", "state": "running"}}
        assert _record(tmp_path, "t1", "b") == {"gpus": ["7"], "key": "t1/b", "next": "t2/correctness",
                                                "warmed": None, "sent": None}
        # One warm-up worker served both, and the worker's exit did not wait for the slow one.
        assert _marker(tmp_path, "7", "t2", "correctness")["pid"] == warm["pid"]
        assert time.monotonic() - started < 90
        assert _gone(warm["pid"]), "the warm-up worker still runs after the measured worker ended"
        assert os.listdir(tmp_path / "tmp") == []
        assert "slow" not in out  # the warm-up's output stays out of the measured worker's
    finally:
        slow = tmp_path / "markers" / "7-t2-correctness.json"
        if slow.exists() and not _gone(json.loads(slow.read_text())["pid"], 0):
            os.kill(json.loads(slow.read_text())["pid"], 9)


def test_a_failed_warmup_is_recorded_and_the_next_one_gets_a_fresh_worker(tmp_path):
    corpus, env = _setup(tmp_path)
    status, replies, out = serve(corpus, [
        _request(tmp_path, "t1", "correctness", "test_wait_job.py", ("t1", "a", "test_picky.py"), WAIT_KEY="t1/a"),
        _request(tmp_path, "t1", "a", "test_picky.py", ("t2", "correctness", "test_dies.py")),
        _request(tmp_path, "t1", "b", "test_wait_job.py", None, WAIT_KEY="t2/correctness"),
        _request(tmp_path, "t2", "correctness", "test_dies.py", ("t2", "a", "test_marker.py")),
        _request(tmp_path, "t2", "a", "test_wait_marker.py", None, WAIT_MARKER="7-t2-a.json"),
    ], env)
    assert status == 0, out
    assert [r["exit"] for r in replies] == [0, 0, 0, 0, 0], out
    warmed = _record(tmp_path, "t1", "a")["warmed"]
    assert (warmed["state"], warmed["exit"]) == ("finished", 1)
    assert "warm-up of t1/a on GPU 7 exited 1" in out and "test_fails_on_the_warmup_gpu" in out
    warmed = _record(tmp_path, "t2", "correctness")["warmed"]
    assert warmed["state"] == "failed" and "exit" not in warmed
    assert "stopped without replying" in warmed["error"] and "status 9" in warmed["error"]
    assert _record(tmp_path, "t2", "correctness")["sent"] == {"gpu": "7", "key": "t2/a", "state": "running"}
    assert _marker(tmp_path, "7", "t2", "a")["pid"] != _marker(tmp_path, "7", "t1", "a")["pid"]


def test_inert_without_warmup_gpus(tmp_path):
    corpus, env = _setup(tmp_path)
    env["PARALLEL_WARMUP_GPUS"] = " "
    status, replies, out = serve(corpus, [
        _request(tmp_path, "t1", "correctness", "test_marker.py", ("t1", "a", "test_marker.py"))], env)
    assert status == 0 and replies[0]["exit"] == 0, out
    assert os.listdir(tmp_path / "markers") == ["0-t1-correctness.json"]
    assert not (tmp_path / "run" / "t1" / "correctness" / "parallel_warmup.json").exists()
    assert os.listdir(tmp_path / "tmp") == []


def test_what_the_warmup_needs_is_checked(tmp_path):
    corpus, env = _setup(tmp_path)
    line = _request(tmp_path, "t1", "correctness", "test_marker.py", ("t1", "a", "test_marker.py"))
    for change, why in [({"PARALLEL_WARMUP_GPUS": "7,0"}, "holds the measured device 0"),
                        ({"TRITON_CACHE_DIR": None}, "TRITON_CACHE_DIR is not set")]:
        status, replies, out = serve(corpus, [line], dict(env, **change))
        assert status == 0 and replies[0]["exit"] == 4, out
        assert "caliber_pytest.parallel_warmup: " in out and why in out
    assert os.listdir(tmp_path / "markers") == []
    bad = request("t1", ARGV + ["test_marker.py"], dict(_env(tmp_path, "t1", "correctness"), CALIBER_WARMUP_NEXT="{"))
    status, replies, out = serve(corpus, [bad], env)
    assert replies[0]["exit"] == 4 and "caliber_pytest.parallel_warmup: CALIBER_WARMUP_NEXT: not JSON" in out
