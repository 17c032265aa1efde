"""What parallel_warmup sends ahead, decided without a GPU."""

import json

import pytest

from caliber_pytest import _warmup_plan

NEXT = {
    "argv": ["-q", "-p", "no:cacheprovider", "-p", "caliber_pytest.device_setup", "-p", "caliber_pytest.parallel_warmup",
             "-p", "caliber_pytest.compat", "tests/test_softmax_ops.py", "-m", "softmax_rows"],
    "env": {"CALIBER_AUTOTUNE_FILE": "/run/tasks/t2/cells/correctness-off/autotune.jsonl",
            "CALIBER_AUTOTUNE_MODE": "replay", "CALIBER_CELL": "candidate",
            "CALIBER_CELL_DIR": "/run/tasks/t2/cells/correctness-candidate", "CALIBER_PHASE": "correctness",
            "CALIBER_TASK": "t2", "CALIBER_TIMER": '{"repeats":20}'},
    "key": "t2/correctness",
}


def test_gpus_are_parsed_and_the_measured_one_refused():
    assert _warmup_plan.parse_gpus("1, 2,3", "0") == ["1", "2", "3"]
    assert _warmup_plan.parse_gpus("", "0") == []
    assert _warmup_plan.parse_gpus(" , ", "0") == []
    with pytest.raises(ValueError, match="measured device"):
        _warmup_plan.parse_gpus("0,1", "0")
    with pytest.raises(ValueError, match="twice"):
        _warmup_plan.parse_gpus("1,1", "0")


def test_the_next_request_is_parsed_as_the_runner_writes_it():
    assert _warmup_plan.parse_next(json.dumps(NEXT)) == NEXT
    assert _warmup_plan.parse_next(None) is None and _warmup_plan.parse_next("") is None
    bad = [("{", "not JSON"), ("[]", "exactly argv, env and key"),
           (json.dumps(dict(NEXT, extra=1)), "exactly argv, env and key"),
           (json.dumps(dict(NEXT, argv="-q")), "argv"), (json.dumps(dict(NEXT, env={"A": 1})), "env"),
           (json.dumps(dict(NEXT, key="")), "key")]
    for text, why in bad:
        with pytest.raises(ValueError, match=why):
            _warmup_plan.parse_next(text)


def test_the_least_busy_gpu_takes_the_next_request_the_first_listed_on_a_tie():
    assert _warmup_plan.choose_gpu(["1", "2"], {}) == "1"
    assert _warmup_plan.choose_gpu(["1", "2"], {"1": 1, "2": 0}) == "2"
    assert _warmup_plan.choose_gpu(["1", "2", "3"], {"1": 2, "2": 1}) == "3"  # 3 has none in flight
    assert _warmup_plan.choose_gpu(["2", "1"], {"1": 1, "2": 1}) == "2"


def test_parallel_warmup_leaves_the_argv_and_nothing_else():
    assert _warmup_plan.without_self(["-p", "caliber_pytest.shapes", "-pcaliber_pytest.parallel_warmup", "-q",
                                      "-p", "caliber_pytest.parallel_warmup", "-m", "x", "t.py", "-p"]) == \
        ["-p", "caliber_pytest.shapes", "-q", "-m", "x", "t.py", "-p"]


def test_the_warmup_request_records_into_scratch_and_times_little():
    req = _warmup_plan.warmup_request(dict(NEXT, env=dict(NEXT["env"], CALIBER_WARMUP_NEXT="{}")), "/scratch/cells/0")
    assert req["task"] == "t2/correctness"
    assert req["argv"] == ["-q", "-p", "no:cacheprovider", "-p", "caliber_pytest.device_setup", "-p",
                           "caliber_pytest.compat", "tests/test_softmax_ops.py", "-m", "softmax_rows"]
    env = req["env"]
    assert env["CALIBER_CELL_DIR"] == "/scratch/cells/0"
    assert env["CALIBER_AUTOTUNE_MODE"] == "record"
    assert env["CALIBER_AUTOTUNE_FILE"] == "/scratch/cells/0/autotune.jsonl"
    assert json.loads(env["CALIBER_TIMER"]) == _warmup_plan.WARMUP_TIMER and " " not in env["CALIBER_TIMER"]
    assert env["CALIBER_GRAPH_CAPTURE"] == "0"
    assert "CALIBER_WARMUP_NEXT" not in env
    assert (env["CALIBER_TASK"], env["CALIBER_PHASE"], env["CALIBER_CELL"]) == ("t2", "correctness", "candidate")
    assert NEXT["env"]["CALIBER_AUTOTUNE_MODE"] == "replay"  # the runner's request stays as it was


def test_the_warmup_worker_environment():
    base = {"CUDA_VISIBLE_DEVICES": "0", "PARALLEL_WARMUP_GPUS": "1", "TRITON_CACHE_DIR": "/cache",
            "FLAGGEMS_CACHE_DIR": "/scratch/off-0/flaggems", "CALIBER_WORK_DIR": "/scratch/off-0/work",
            "CALIBER_REPLY_FD": "3", "PATH": "/bin", "CALIBER_TASK": "t1",
            "CALIBER_CELL_DIR": "/run/tasks/t1/cells/a-off", "CALIBER_WARMUP_NEXT": "{}"}
    env = _warmup_plan.worker_env(base, frozenset(NEXT["env"]), "1", "/tmp/w/gpu1", 7)
    assert env == {"CUDA_VISIBLE_DEVICES": "1", "TRITON_CACHE_DIR": "/cache", "CALIBER_WORK_DIR": "/tmp/w/gpu1/work",
                   "FLAGGEMS_CACHE_DIR": "/tmp/w/gpu1/flaggems", "CALIBER_REPLY_FD": "7", "PATH": "/bin"}
    assert base["CUDA_VISIBLE_DEVICES"] == "0"  # the measured worker's own stays
