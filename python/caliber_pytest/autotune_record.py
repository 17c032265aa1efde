"""caliber_pytest.autotune_record: the baseline records every autotuner
decision; the other cells replay them, so every cell runs the same configs.

Hooks triton.runtime.autotuner.Autotuner.run and the run of every subclass
that replaces it without calling it (FlagGems' LibTuner does: its own config
cache and policy), found at configure time and again once collection has
imported the corpus. Record mode lets the tuner decide
(benchmarking or from its in-memory cache) and writes each decision to
CALIBER_AUTOTUNE_FILE. Replay mode hands Triton only the recorded config for
the call, so it takes its single-config path and benchmarks nothing; a
(kernel, key) missing from the record writes replay_miss.json and fails the
test. Only autotuners with more than one config decide anything."""

import os

import pytest

from . import _autotune
from ._common import drop_request_state, request_state, require_env, usage_error

PLUGIN = "autotune_record"
HOOK_MARK = "caliber_autotune_record"  # set on every run this plugin installs


class _State:
    """This request's mode, record (replay) and decision log, and the tuner
    classes whose own run it has hooked (class -> that run)."""

    def __init__(self, mode, log, record, cell_dir):
        self.mode = mode
        self.log = log
        self.record = record
        self.cell_dir = cell_dir
        self.originals = {}


# This request's _State lives in its config.stash under STATE, from pytest_configure to pytest_unconfigure.
STATE = pytest.StashKey[_State]()


def _hooked(original, state):
    """A run that records or replays around the class's own run, for the request of state."""

    def run(self, *args, **kwargs):
        if len(self.configs) <= 1:
            return original(self, *args, **kwargs)
        kernel = _autotune.kernel_id(self.base_fn)
        key = str(_autotune.tuning_key(self.arg_names, self.keys, args, kwargs))
        if state.mode == "record":
            ret = original(self, *args, **kwargs)
            state.log.note(kernel, key, _autotune.config_to_dict(self.best_config))
            return ret
        wanted = state.record.get((kernel, key))
        if wanted is None:
            _autotune.write_miss(state.cell_dir, kernel, key)
            raise _autotune.ReplayMiss(f"caliber_pytest.{PLUGIN}: replay miss: {kernel} key {key} "
                                       f"is not in {os.environ.get('CALIBER_AUTOTUNE_FILE')}")
        config = _autotune.find_config(self.configs, wanted)
        if config is None:
            from triton import Config

            config = Config(dict(wanted["kwargs"]), num_warps=wanted["num_warps"], num_stages=wanted["num_stages"],
                            num_ctas=wanted["num_ctas"], maxnreg=wanted["maxnreg"])
        configs = self.configs
        self.configs = [config]
        try:
            ret = original(self, *args, **kwargs)
        finally:
            self.configs = configs
        state.log.note(kernel, key, wanted)
        return ret

    run.__wrapped__ = original
    setattr(run, HOOK_MARK, True)
    return run


def _own_run(cls):
    """The run cls defines itself, seen through a hook an earlier request left on it."""
    run = cls.__dict__["run"]
    while getattr(run, HOOK_MARK, False):
        run = run.__wrapped__
    return run


def _tuner_classes(base):
    """base and every subclass (transitively) that defines its own run."""
    out, todo = [], [base]
    while todo:
        cls = todo.pop()
        if "run" in cls.__dict__ and callable(cls.__dict__["run"]):
            out.append(cls)
        todo.extend(cls.__subclasses__())
    return out


def _hook_all(state):
    """Hook, for the request of state, every tuner class it has not hooked yet."""
    from triton.runtime.autotuner import Autotuner

    for cls in _tuner_classes(Autotuner):
        if cls not in state.originals:
            state.originals[cls] = _own_run(cls)
            cls.run = _hooked(state.originals[cls], state)


def pytest_configure(config):
    """Open the record (or load the one to replay) and hook the autotuner."""
    cell_dir = require_env(PLUGIN, "CALIBER_CELL_DIR")
    mode = require_env(PLUGIN, "CALIBER_AUTOTUNE_MODE")
    path = require_env(PLUGIN, "CALIBER_AUTOTUNE_FILE")
    if mode not in ("record", "replay"):
        raise usage_error(PLUGIN, f"CALIBER_AUTOTUNE_MODE={mode!r}: expected record or replay")
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError as e:
        raise usage_error(PLUGIN, f"triton's autotuner cannot be imported: {e}")
    if not callable(getattr(Autotuner, "run", None)):
        raise usage_error(PLUGIN, "triton.runtime.autotuner.Autotuner has no run method to hook")
    if mode == "record":
        record, log = None, _autotune.DecisionLog(path)
    else:
        try:
            record = _autotune.load_record(path)
        except (OSError, ValueError) as e:
            raise usage_error(PLUGIN, f"cannot read the record to replay: {e}")
        log = _autotune.DecisionLog(os.path.join(cell_dir, "autotune.jsonl"))
    state = config.stash[STATE] = _State(mode, log, record, cell_dir)
    _hook_all(state)


def pytest_collection_finish(session):
    """Hook tuner classes the corpus defined while being collected."""
    state = request_state(session.config, STATE)
    if state is not None:
        _hook_all(state)


def pytest_unconfigure(config):
    """Put every tuner's own run back and forget this request."""
    state = drop_request_state(config, STATE)
    if state is None:
        return
    for cls, original in state.originals.items():
        cls.run = original
    state.originals.clear()
