"""caliber_pytest.autotune_record: the baseline records every autotuner
decision; the other cells replay them, so every cell runs the same configs.

Hooks triton.runtime.autotuner.Autotuner.run. Record mode lets Triton decide
(benchmarking or from its in-memory cache) and writes each decision to
CALIBER_AUTOTUNE_FILE. Replay mode hands Triton only the recorded config for
the call, so it takes its single-config path and benchmarks nothing; a
(kernel, key) missing from the record writes replay_miss.json and fails the
test. Only autotuners with more than one config decide anything."""

import os

from . import _autotune
from ._common import require_env, usage_error

PLUGIN = "autotune_record"

_original_run = None
_state = None


class _State:
    """This request's mode, record (replay) and decision log."""

    def __init__(self, mode, log, record, cell_dir):
        self.mode = mode
        self.log = log
        self.record = record
        self.cell_dir = cell_dir


def _run(self, *args, **kwargs):
    """Autotuner.run with the decision recorded or replayed."""
    state = _state
    if state is None or len(self.configs) <= 1:
        return _original_run(self, *args, **kwargs)
    kernel = _autotune.kernel_id(self.base_fn)
    key = str(_autotune.tuning_key(self.arg_names, self.keys, args, kwargs))
    if state.mode == "record":
        ret = _original_run(self, *args, **kwargs)
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
        ret = _original_run(self, *args, **kwargs)
    finally:
        self.configs = configs
    state.log.note(kernel, key, wanted)
    return ret


def pytest_configure(config):
    """Open the record (or load the one to replay) and hook the autotuner."""
    global _original_run, _state
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
    _state = _State(mode, log, record, cell_dir)
    if _original_run is None:
        _original_run = Autotuner.run
        Autotuner.run = _run


def pytest_unconfigure(config):
    """Put Triton's Autotuner.run back and forget this request."""
    global _original_run, _state
    _state = None
    if _original_run is not None:
        from triton.runtime.autotuner import Autotuner

        Autotuner.run = _original_run
        _original_run = None
