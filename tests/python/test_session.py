"""The worker session protocol: requests on stdin, replies on fd 3, one
in-process pytest session per request, each counting only its own tests."""

import textwrap

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

        def test_request_env_is_set_and_cwd_is_the_corpus():
            assert os.environ["CALIBER_TASK"] == "t3"
            assert os.getcwd() == os.environ["CALIBER_CORPUS"]
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


def test_two_sessions_count_their_own_tests(tmp_path):
    for name, text in TESTS.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    status, replies, out = _serve(tmp_path, [
        _request("t1", "test_two.py"),
        _request("t2", "test_fails.py"),
        "\n",
        _request("t3", "test_env.py", {"CALIBER_TASK": "t3"}),
        _request("t4", "test_env_gone.py"),
    ])
    assert status == 0, out
    assert replies == [{"exit": 0, "phase": "a", "task": "t1"}, {"exit": 1, "phase": "a", "task": "t2"},
                       {"exit": 0, "phase": "a", "task": "t3"}, {"exit": 0, "phase": "a", "task": "t4"}]
    assert "2 passed" in out and "1 failed" in out
    assert "3 passed" not in out and "1 failed, 2 passed" not in out


def test_bad_requests_get_exit_3(tmp_path):
    status, replies, _ = _serve(tmp_path, ["{not json\n", '{"task": "x", "phase": "a"}\n'])
    assert status == 0
    assert replies[0]["exit"] == 3 and "bad request" in replies[0]["error"]
    assert replies[1] == {"error": "request has no argv list of strings", "exit": 3, "phase": "a", "task": "x"}


def test_missing_corpus_is_reported(tmp_path):
    status, replies, _ = _serve(tmp_path, [_request("t", "x.py", {"CALIBER_CORPUS": ""})])
    assert status == 0
    assert replies == [{"error": "CALIBER_CORPUS is not set", "exit": 3, "phase": "a", "task": "t"}]
