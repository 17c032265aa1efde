"""Autotuner decisions: the key, the config as JSON, the record file and its
replay (docs/formats.md, autotune.jsonl and replay_miss.json). No triton here:
the plugin passes Triton's objects in, and these functions read plain attributes."""

import json
import os

from ._common import atomic_write_text, dumps_json, dumps_line

CONFIG_FIELDS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class ReplayMiss(RuntimeError):
    """A (kernel, key) the replayed record does not hold: never tuned afresh."""


def tuning_key(arg_names, keys, args, kwargs):
    """The autotuner's cache key, computed as Triton 3.6's Autotuner.run does:
    the values of the key arguments, then str(dtype) of every argument that has one."""
    all_args = {**dict(zip(arg_names, args)), **kwargs}
    named = {k: v for k, v in all_args.items() if k in arg_names}
    key = [named[k] for k in keys if k in named]
    for value in named.values():
        if hasattr(value, "dtype"):
            key.append(str(value.dtype))
    return tuple(key)


def kernel_id(fn):
    """'<module>:<function name>' of the autotuned Python function."""
    return f"{fn.__module__}:{fn.__name__}"


def config_to_dict(config):
    """The recorded fields of a triton.Config."""
    out = {"kwargs": dict(config.kwargs)}
    for field in CONFIG_FIELDS:
        out[field] = getattr(config, field)
    return out


def find_config(configs, wanted):
    """The config among configs whose recorded fields equal wanted, or None.
    Reusing the autotuner's own object keeps its pre_hook."""
    for config in configs:
        if config_to_dict(config) == wanted:
            return config
    return None


def load_record(path):
    """{(kernel, key): config dict} from an autotune.jsonl; a (kernel, key)
    recorded twice with different configs is an error."""
    record = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                pair = (entry["kernel"], entry["key"])
                config = entry["config"]
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{number}: not an autotune record: {e}") from e
            if pair in record and record[pair] != config:
                raise ValueError(f"{path}:{number}: {pair[0]} key {pair[1]} recorded with two configs")
            record[pair] = config
    return record


class DecisionLog:
    """Writes each distinct decision of one request once, as soon as it is seen,
    so a crash loses nothing already decided."""

    def __init__(self, path):
        self.path = path
        self._seen = set()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8"):
            pass

    def note(self, kernel, key, config):
        """Record one decision; repeats of the same decision are not written again."""
        line = dumps_line({"config": config, "kernel": kernel, "key": key})
        if line in self._seen:
            return
        self._seen.add(line)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()


def write_miss(cell_dir, kernel, key):
    """replay_miss.json for the first miss of a request (later misses keep the first)."""
    path = os.path.join(cell_dir, "replay_miss.json")
    if not os.path.exists(path):
        atomic_write_text(path, dumps_json({"kernel": kernel, "key": key}))
    return path
