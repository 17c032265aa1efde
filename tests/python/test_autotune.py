"""Autotune record and replay without Triton: key, config, record file, and the
plugin, configured for a request with its state in that request's config.stash,
hooking a fake autotuner's run."""

import json
import os
import sys
import types

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


KEY = "(256, 256, 64, 'torch.float16', 'torch.float16', 'torch.float16')"


@pytest.fixture
def plugin(monkeypatch, tmp_path):
    """configure(mode, record=None, cell=tmp_path): autotune_record's pytest_configure for one
    request (a fake config with a real pytest.Stash), FakeAutotuner standing for triton's
    Autotuner; returns that config. record ({(kernel, key): config}) is the file a replay
    reads. Every request configured is unconfigured at the end."""
    autotuner = types.ModuleType("triton.runtime.autotuner")
    autotuner.Autotuner = FakeAutotuner
    for name in ("triton", "triton.runtime"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "triton.runtime.autotuner", autotuner)
    own_run = FakeAutotuner.run
    configured = []

    def configure(mode, record=None, cell=tmp_path):
        cell.mkdir(parents=True, exist_ok=True)
        path = cell / ("autotune.jsonl" if mode == "record" else "record.jsonl")
        if mode == "replay":
            path.write_text("".join(json.dumps({"config": config, "kernel": kernel, "key": key}) + "\n"
                                    for (kernel, key), config in (record or {}).items()))
        monkeypatch.setenv("CALIBER_CELL_DIR", str(cell))
        monkeypatch.setenv("CALIBER_AUTOTUNE_MODE", mode)
        monkeypatch.setenv("CALIBER_AUTOTUNE_FILE", str(path))
        config = types.SimpleNamespace(stash=pytest.Stash())
        autotune_record.pytest_configure(config)
        configured.append(config)
        return config

    yield configure
    for config in configured:
        autotune_record.pytest_unconfigure(config)
    assert FakeAutotuner.run is own_run


def _args():
    return (FakeTensor("torch.float16"), FakeTensor("torch.float16"), FakeTensor("torch.float16"), 256, 256, 64)


def test_record_mode_logs_the_tuners_choice(plugin, tmp_path):
    config = plugin("record")
    assert isinstance(config.stash[autotune_record.STATE], autotune_record._State)
    tuner = FakeAutotuner([FakeConfig({"BLOCK": 64}), FakeConfig({"BLOCK": 128}, num_warps=8)])
    assert tuner.run(*_args()) == "launched"
    assert tuner.run(*_args()) == "launched"
    entries = [json.loads(line) for line in (tmp_path / "autotune.jsonl").read_text().splitlines()]
    assert entries == [{"config": {"kwargs": {"BLOCK": 128}, "maxnreg": None, "num_ctas": 1, "num_stages": 3,
                                   "num_warps": 8},
                        "kernel": f"{__name__}:_matmul_kernel",
                        "key": KEY}]


def test_replay_mode_hands_triton_only_the_recorded_config(plugin, tmp_path):
    small, big = FakeConfig({"BLOCK": 64}), FakeConfig({"BLOCK": 128}, num_warps=8)
    plugin("replay", {(f"{__name__}:_matmul_kernel", KEY): _autotune.config_to_dict(small)})
    tuner = FakeAutotuner([small, big])
    tuner.run(*_args())
    assert tuner.seen_configs == [[small]]  # a single config: Triton benchmarks nothing
    assert tuner.configs == [small, big]  # and the autotuner is left as it was
    assert len((tmp_path / "autotune.jsonl").read_text().splitlines()) == 1


def test_replay_miss_fails_and_writes_the_miss(plugin, tmp_path):
    plugin("replay", {})
    tuner = FakeAutotuner([FakeConfig({"BLOCK": 64}), FakeConfig({"BLOCK": 128})])
    with pytest.raises(_autotune.ReplayMiss, match="replay miss"):
        tuner.run(*_args())
    assert tuner.seen_configs == []
    miss = json.loads((tmp_path / "replay_miss.json").read_text())
    assert miss["kernel"] == f"{__name__}:_matmul_kernel"
    assert os.path.exists(tmp_path / "replay_miss.json")


def test_single_config_autotuners_are_left_alone(plugin, tmp_path):
    plugin("replay", {})
    tuner = FakeAutotuner([FakeConfig({"BLOCK": 64})])
    assert tuner.run(*_args()) == "launched"
    assert not os.path.exists(tmp_path / "replay_miss.json")


def test_each_request_has_its_own_state(plugin, tmp_path):
    """A worker runs requests one after another in one process: the second
    request's tuner run follows its own mode and record, never the first's,
    and unconfigure leaves the tuner's own run in place."""
    own_run = FakeAutotuner.run
    first = plugin("record", cell=tmp_path / "r1")
    tuner = FakeAutotuner([FakeConfig({"BLOCK": 64}), FakeConfig({"BLOCK": 128})])
    assert tuner.run(*_args()) == "launched"
    autotune_record.pytest_unconfigure(first)
    assert FakeAutotuner.run is own_run and autotune_record.STATE not in first.stash
    assert tuner.run(*_args()) == "launched"  # between requests nothing records
    assert len((tmp_path / "r1" / "autotune.jsonl").read_text().splitlines()) == 1
    plugin("replay", {}, cell=tmp_path / "r2")
    with pytest.raises(_autotune.ReplayMiss):
        tuner.run(*_args())
    assert (tmp_path / "r2" / "autotune.jsonl").read_text() == ""
    assert json.loads((tmp_path / "r2" / "replay_miss.json").read_text())["key"] == KEY
    assert not os.path.exists(tmp_path / "r1" / "replay_miss.json")


def test_a_hook_left_by_an_earlier_request_is_replaced_not_wrapped(plugin, tmp_path):
    own_run = FakeAutotuner.run
    plugin("record", cell=tmp_path / "r1")  # never unconfigured before the next request
    plugin("replay", {}, cell=tmp_path / "r2")
    assert FakeAutotuner.run.__wrapped__ is own_run
    tuner = FakeAutotuner([FakeConfig({"BLOCK": 64}), FakeConfig({"BLOCK": 128})])
    with pytest.raises(_autotune.ReplayMiss):
        tuner.run(*_args())
    assert (tmp_path / "r1" / "autotune.jsonl").read_text() == ""


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
