"""What parallel_warmup would start, decided without a GPU."""

import json

import pytest

from caliber_pytest import _warmup_plan


def test_gpus_are_parsed_and_the_measured_one_refused():
    assert _warmup_plan.parse_gpus("1, 2,3", "0") == ["1", "2", "3"]
    assert _warmup_plan.parse_gpus("", "0") == []
    with pytest.raises(ValueError, match="measured device"):
        _warmup_plan.parse_gpus("0,1", "0")
    with pytest.raises(ValueError, match="twice"):
        _warmup_plan.parse_gpus("1,1", "0")


def test_tests_are_dealt_round_robin():
    assert _warmup_plan.split_round_robin(["a", "b", "c", "d", "e"], 2) == [["a", "c", "e"], ["b", "d"]]
    assert _warmup_plan.split_round_robin(["a"], 3) == [["a"], [], []]


def test_plugins_are_repeated_without_parallel_warmup():
    args = ["-p", "caliber_pytest.device_setup", "-pcaliber_pytest.shapes", "-p", "no:cacheprovider",
            "-p", "caliber_pytest.parallel_warmup", "-q", "-m", "softmax_rows", "tests/test_softmax_ops.py"]
    assert _warmup_plan.plugin_args(args) == ["-p", "caliber_pytest.device_setup", "-p", "caliber_pytest.shapes"]


def test_child_environment():
    base = {"CUDA_VISIBLE_DEVICES": "0", "PARALLEL_WARMUP_GPUS": "1", "TRITON_CACHE_DIR": "/cache",
            "CALIBER_AUTOTUNE_MODE": "record", "CALIBER_AUTOTUNE_FILE": "/run/cell/autotune.jsonl",
            "CALIBER_CELL_DIR": "/run/cell", "CALIBER_GRAPH_CAPTURE": "1"}
    env = _warmup_plan.child_env(base, "1", "/scratch/gpu1")
    assert env["CUDA_VISIBLE_DEVICES"] == "1" and "PARALLEL_WARMUP_GPUS" not in env
    assert env["TRITON_CACHE_DIR"] == "/cache"
    assert env["CALIBER_CELL_DIR"] == "/scratch/gpu1"
    assert env["CALIBER_AUTOTUNE_FILE"] == "/scratch/gpu1/autotune.jsonl"
    assert env["CALIBER_GRAPH_CAPTURE"] == "0" and json.loads(env["CALIBER_TIMER"])["repeats"] == 1
    assert base["CUDA_VISIBLE_DEVICES"] == "0"  # the measured process's own stays
    replay = _warmup_plan.child_env(dict(base, CALIBER_AUTOTUNE_MODE="replay"), "1", "/s")
    assert replay["CALIBER_AUTOTUNE_FILE"] == "/run/cell/autotune.jsonl"  # the record to replay, read only
