"""Autotune record and replay without Triton: key, config, record file, and the
plugin's Autotuner.run wrapper driven by a fake autotuner."""

import json
import os

import pytest

from caliber_pytest import _autotune, autotune_record


class FakeTensor:
    def __init__(self, dtype):
        self.dtype = dtype


class FakeConfig:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None):
        self.kwargs = kwargs
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg


def _matmul_kernel():
    pass


class FakeAutotuner:
    """What autotune_record reads of triton's Autotuner; run picks configs[-1] like a tuner would."""

    def __init__(self, configs):
        self.configs = configs
        self.arg_names = ["A", "B", "C", "M", "N", "K"]
        self.keys = ["M", "N", "K"]
        self.base_fn = _matmul_kernel
        self.seen_configs = []

    def run(self, *args, **kwargs):
        self.seen_configs.append(list(self.configs))
        self.best_config = self.configs[-1]
        return "launched"


def test_key_is_key_values_then_every_dtype():
    a, b, c = FakeTensor("torch.float16"), FakeTensor("torch.float16"), FakeTensor("torch.float32")
    key = _autotune.tuning_key(["A", "B", "C", "M", "N", "K"], ["M", "N", "K"], (a, b, c, 64, 32), {"K": 16,
                                                                                                 "BLOCK": 8})
    assert key == (64, 32, 16, "torch.float16", "torch.float16", "torch.float32")
    assert str(key) == "(64, 32, 16, 'torch.float16', 'torch.float16', 'torch.float32')"


def test_kernel_id_and_config_dict():
    assert _autotune.kernel_id(_matmul_kernel) == f"{__name__}:_matmul_kernel"
    config = FakeConfig({"BLOCK_M": 128}, num_warps=8, num_stages=3)
    assert _autotune.config_to_dict(config) == {"kwargs": {"BLOCK_M": 128}, "maxnreg": None, "num_ctas": 1,
                                                "num_stages": 3, "num_warps": 8}
    other = FakeConfig({"BLOCK_M": 64})
    assert _autotune.find_config([other, config], _autotune.config_to_dict(config)) is config
    assert _autotune.find_config([other], _autotune.config_to_dict(config)) is None


def test_log_writes_each_decision_once(tmp_path):
    path = tmp_path / "autotune.jsonl"
    log = _autotune.DecisionLog(str(path))
    config = {"kwargs": {"B": 1}, "maxnreg": None, "num_ctas": 1, "num_stages": 3, "num_warps": 4}
    log.note("m:k", "(1,)", config)
    log.note("m:k", "(1,)", config)
    log.note("m:k", "(2,)", config)
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0]) == {"config": config, "kernel": "m:k", "key": "(1,)"}
    assert lines[0].startswith('{"config": {"kwargs": {"B": 1}, "maxnreg": null')
    assert _autotune.load_record(str(path)) == {("m:k", "(1,)"): config, ("m:k", "(2,)"): config}


def test_conflicting_record_is_refused(tmp_path):
    path = tmp_path / "autotune.jsonl"
    path.write_text('{"config": {"num_warps": 4}, "kernel": "k", "key": "(1,)"}\n'
                    '{"config": {"num_warps": 8}, "kernel": "k", "key": "(1,)"}\n')
    with pytest.raises(ValueError, match="two configs"):
        _autotune.load_record(str(path))
    path.write_text("not json\n")
    with pytest.raises(ValueError, match=":1:"):
        _autotune.load_record(str(path))


def test_miss_file_keeps_the_first_miss(tmp_path):
    _autotune.write_miss(str(tmp_path), "k", "(1,)")
    _autotune.write_miss(str(tmp_path), "k", "(2,)")
    assert json.loads((tmp_path / "replay_miss.json").read_text()) == {"kernel": "k", "key": "(1,)"}


@pytest.fixture
def plugin(monkeypatch):
    """autotune_record's wrapper around FakeAutotuner.run (as `_run`), state set by hand."""
    monkeypatch.setattr(autotune_record, "_run", autotune_record._hooked(FakeAutotuner.run), raising=False)
    yield autotune_record
    autotune_record._state = None


def _args():
    return (FakeTensor("torch.float16"), FakeTensor("torch.float16"), FakeTensor("torch.float16"), 256, 256, 64)


def test_record_mode_logs_the_tuners_choice(plugin, tmp_path):
    log = _autotune.DecisionLog(str(tmp_path / "autotune.jsonl"))
    plugin._state = autotune_record._State("record", log, None, str(tmp_path))
    tuner = FakeAutotuner([FakeConfig({"BLOCK": 64}), FakeConfig({"BLOCK": 128}, num_warps=8)])
    assert plugin._run(tuner, *_args()) == "launched"
    assert plugin._run(tuner, *_args()) == "launched"
    entries = [json.loads(line) for line in (tmp_path / "autotune.jsonl").read_text().splitlines()]
    assert entries == [{"config": {"kwargs": {"BLOCK": 128}, "maxnreg": None, "num_ctas": 1, "num_stages": 3,
                                   "num_warps": 8},
                        "kernel": f"{__name__}:_matmul_kernel",
                        "key": "(256, 256, 64, 'torch.float16', 'torch.float16', 'torch.float16')"}]


def test_replay_mode_hands_triton_only_the_recorded_config(plugin, tmp_path):
    small, big = FakeConfig({"BLOCK": 64}), FakeConfig({"BLOCK": 128}, num_warps=8)
    key = "(256, 256, 64, 'torch.float16', 'torch.float16', 'torch.float16')"
    record = {(f"{__name__}:_matmul_kernel", key): _autotune.config_to_dict(small)}
    log = _autotune.DecisionLog(str(tmp_path / "autotune.jsonl"))
    plugin._state = autotune_record._State("replay", log, record, str(tmp_path))
    tuner = FakeAutotuner([small, big])
    plugin._run(tuner, *_args())
    assert tuner.seen_configs == [[small]]  # a single config: Triton benchmarks nothing
    assert tuner.configs == [small, big]  # and the autotuner is left as it was
    assert len((tmp_path / "autotune.jsonl").read_text().splitlines()) == 1


def test_replay_miss_fails_and_writes_the_miss(plugin, tmp_path):
    log = _autotune.DecisionLog(str(tmp_path / "autotune.jsonl"))
    plugin._state = autotune_record._State("replay", log, {}, str(tmp_path))
    tuner = FakeAutotuner([FakeConfig({"BLOCK": 64}), FakeConfig({"BLOCK": 128})])
    with pytest.raises(_autotune.ReplayMiss, match="replay miss"):
        plugin._run(tuner, *_args())
    assert tuner.seen_configs == []
    miss = json.loads((tmp_path / "replay_miss.json").read_text())
    assert miss["kernel"] == f"{__name__}:_matmul_kernel"
    assert os.path.exists(tmp_path / "replay_miss.json")


def test_single_config_autotuners_are_left_alone(plugin, tmp_path):
    plugin._state = autotune_record._State("replay", None, {}, str(tmp_path))
    tuner = FakeAutotuner([FakeConfig({"BLOCK": 64})])
    assert plugin._run(tuner, *_args()) == "launched"
    assert not os.path.exists(tmp_path / "replay_miss.json")


def test_subclasses_with_their_own_run_are_hooked_too():
    """FlagGems' LibTuner replaces Autotuner.run without calling it; a subclass
    that only inherits run needs no hook of its own."""

    class LibTunerLike(FakeAutotuner):
        def run(self, *args, **kwargs):
            return "own run"

    class Inherits(FakeAutotuner):
        pass

    class Deeper(Inherits):
        def run(self, *args, **kwargs):
            return "deeper run"

    found = autotune_record._tuner_classes(FakeAutotuner)
    assert set(found) == {FakeAutotuner, LibTunerLike, Deeper}
