"""The worker session protocol: requests on stdin, replies on fd 3, one
in-process pytest session per request, each counting only its own tests."""

import os
import subprocess
import sys
import textwrap
import time

from caliber_pytest._common import corpus_argv
from repo_paths import PYTHON_DIR
from worker_session import request, serve

TESTS = {
    "test_two.py": """
        def test_one():
            pass

        def test_two():
            pass
    """,
    "test_fails.py": """
        def test_fails():
            assert False
    """,
    "test_env.py": """
        import os

        def test_request_env_is_set_and_cwd_is_the_work_dir():
            assert os.environ["CALIBER_TASK"] == "t3"
            assert os.getcwd() == os.environ["CALIBER_WORK_DIR"]
    """,
    "test_env_gone.py": """
        import os

        def test_previous_request_env_is_gone():
            assert "CALIBER_TASK" not in os.environ
    """,
}


def _request(task, target, env=None):
    return request(task, ["-q", "-p", "no:cacheprovider", target], env)


def _serve(corpus, requests):
    return serve(corpus, requests, {"CALIBER_TASK": None})


def _corpus(tmp_path, tests):
    corpus = tmp_path / "corpus"
    for name, text in tests.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(textwrap.dedent(text))
    return corpus


def test_two_sessions_count_their_own_tests(tmp_path):
    status, replies, out = _serve(_corpus(tmp_path, TESTS), [
        _request("t1", "test_two.py"),
        _request("t2", "test_fails.py"),
        "\n",
        _request("t3", "test_env.py", {"CALIBER_TASK": "t3"}),
        _request("t4", "test_env_gone.py"),
    ])
    assert status == 0, out
    assert replies == [{"exit": 0, "id": "t1/a/baseline/1", "phase": "a", "task": "t1"},
                       {"exit": 1, "id": "t2/a/baseline/1", "phase": "a", "task": "t2"},
                       {"exit": 0, "id": "t3/a/baseline/1", "phase": "a", "task": "t3"},
                       {"exit": 0, "id": "t4/a/baseline/1", "phase": "a", "task": "t4"}]
    assert "2 passed" in out and "1 failed" in out
    assert "3 passed" not in out and "1 failed, 2 passed" not in out


def test_files_a_test_writes_stay_out_of_the_corpus(tmp_path):
    """FlagGems' conftest writes accuracy_result.json to the working directory:
    it must land in the private work dir, while node ids stay relative to the
    corpus and -m selects as before."""
    corpus = _corpus(tmp_path, {"tests/test_writes.py": """
        import pytest

        @pytest.mark.gelu
        def test_writes(request):
            with open("accuracy_result.json", "a") as f:
                f.write(request.node.nodeid)

        def test_unmarked():
            assert False
    """})
    before = sorted(p.relative_to(corpus) for p in corpus.rglob("*"))
    status, replies, out = _serve(corpus, [_request("t1", "tests/test_writes.py", {}),
                                           request("t2", ["-q", "-p", "no:cacheprovider", "tests/test_writes.py",
                                                          "-m", "gelu"])])
    assert status == 0, out
    assert [r["exit"] for r in replies] == [1, 0], out
    assert sorted(p.relative_to(corpus) for p in corpus.rglob("*") if "__pycache__" not in p.parts) == before
    written = (tmp_path / "work" / "accuracy_result.json").read_text()
    assert written == "tests/test_writes.py::test_writes" * 2


def test_bad_requests_get_exit_3(tmp_path):
    status, replies, _ = _serve(tmp_path, ["{not json\n", '{"id": "x/a/c/2", "task": "x", "phase": "a"}\n'])
    assert status == 0
    assert replies[0]["exit"] == 3 and "bad request" in replies[0]["error"] and "id" not in replies[0]
    assert replies[1] == {"error": "request has no argv list of strings", "exit": 3, "id": "x/a/c/2", "phase": "a",
                          "task": "x"}


def test_missing_corpus_is_reported(tmp_path):
    status, replies, _ = _serve(tmp_path, [_request("t", "x.py", {"CALIBER_CORPUS": ""})])
    assert status == 0
    assert replies == [{"error": "CALIBER_CORPUS or CALIBER_WORK_DIR is not set", "exit": 3, "id": "t/a/baseline/1",
                        "phase": "a", "task": "t"}]


def test_corpus_argv_makes_only_corpus_paths_absolute(tmp_path):
    (tmp_path / "benchmark").mkdir()
    (tmp_path / "benchmark" / "test_x.py").write_text("")
    args = ["-q", "-p", "no:cacheprovider", "benchmark/test_x.py::test_a[float16]", "benchmark", "-m", "benchmark",
            "-k", "test_x.py", "--mode", "cudagraph", "/abs/test_y.py", "missing/test_z.py"]
    assert corpus_argv(str(tmp_path), args) == [
        f"--rootdir={tmp_path}", "-q", "-p", "no:cacheprovider", f"{tmp_path}/benchmark/test_x.py::test_a[float16]",
        f"{tmp_path}/benchmark", "-m", "benchmark", "-k", "test_x.py", "--mode", "cudagraph", "/abs/test_y.py",
        "missing/test_z.py"]


def _gone(pid):
    """Whether pid has exited (a zombie nobody reaped yet counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def test_a_session_whose_parent_dies_ends_even_with_its_stdin_open(tmp_path):
    """The watchdog: the session's parent exits (as a killed runner would)
    while the session, up and running, waits for a request on a stdin that
    stays open; the session must end by itself within a few seconds. (A
    parent that dies before the session starts is the exec wrapper's part.)"""
    middle = ("import os, subprocess, sys, time\n"
              "p = subprocess.Popen([sys.executable, '-m', 'caliber_pytest.session'], stdin=sys.stdin,\n"
              "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(3,))\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(3)\n"
              "os._exit(0)\n")
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, CALIBER_REPLY_FD="3")
    parent = subprocess.Popen([sys.executable, "-c", middle], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env, close_fds=False, preexec_fn=lambda: os.dup2(write_fd, 3))
    os.close(write_fd)
    try:
        pid = int(parent.stdout.readline())
        parent.wait(timeout=30)
        deadline = time.monotonic() + 20
        while not _gone(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(pid), "the session outlived its parent"
    finally:
        parent.stdin.close()
        os.close(read_fd)


def test_a_served_worker_runs_its_atexit_functions_and_skips_finalisation(tmp_path):
    """After its last request the worker runs what was registered with
    atexit (a plugin's clean-up) and ends without the interpreter's
    finalisation, whose teardown of torch, CUDA and the profiler the runner
    would otherwise wait for before the next session: a module global's
    __del__, which only finalisation calls, must not run."""
    marks = tmp_path / "marks"
    marks.mkdir()
    tests = {"conftest.py": f"""
        import atexit

        MARKS = {str(marks)!r}

        def _registered():
            open(MARKS + "/atexit", "w").close()

        class _Teardown:
            # os.open and os.close held here: finalisation may have emptied
            # the modules by the time it destroys this object
            import os as _os

            def __del__(self, _os=_os, _path=MARKS + "/finalised"):
                _os.close(_os.open(_path, _os.O_CREAT | _os.O_WRONLY, 0o644))

        atexit.register(_registered)
        KEPT = _Teardown()
    """}
    tests.update(TESTS)
    status, replies, out = _serve(_corpus(tmp_path, tests), [_request("t1", "test_two.py")])
    assert status == 0, out
    assert [r["exit"] for r in replies] == [0]
    assert sorted(os.listdir(marks)) == ["atexit"], out
