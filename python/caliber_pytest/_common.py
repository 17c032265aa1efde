"""Helpers shared by every plugin: errors that name the plugin, environment
variables, per-request state in config.stash, and the file conventions of
docs/formats.md (sorted keys, integers only, atomic writes)."""

import json
import os
import tempfile

import pytest


# pytest options whose value is the next argument (never a path to rewrite).
_VALUE_OPTIONS = frozenset(("-m", "-k", "-p", "-c", "-o", "--rootdir", "--confcutdir", "--basetemp"))


def corpus_argv(corpus, args):
    """args for running the corpus' tests from a working directory outside the
    corpus: --rootdir is the corpus, so node ids stay relative to it, and each
    positional selection that names a file or folder of the corpus (a node id
    relative to it) is made absolute; option values and anything else pass as
    they are. Files a corpus writes to its working directory (FlagGems'
    accuracy_result.json, pytest-benchmark's .benchmarks) then land in the
    cell's private folder, and the frozen corpus tree stays as its digest says."""
    out, value = [f"--rootdir={corpus}"], False
    for a in args:
        path = os.path.join(corpus, a.split("::", 1)[0])
        if value or a.startswith("-") or os.path.isabs(a) or not os.path.exists(path):
            value = not value and a in _VALUE_OPTIONS
            out.append(a)
        else:
            out.append(os.path.join(corpus, a))
    return out


def usage_error(plugin, why):
    """The error every plugin raises when it cannot work: never silent."""
    return pytest.UsageError(f"caliber_pytest.{plugin}: {why}")


def require_env(plugin, name):
    """The value of a variable the runner must set, else a usage error."""
    value = os.environ.get(name)
    if not value:
        raise usage_error(plugin, f"{name} is not set (the caliber worker sets it)")
    return value


def request_state(config, key):
    """This request's state of a plugin: what its pytest_configure put in
    config.stash under key, or None (not configured, or already unconfigured).

    Each pytest session (one request of a worker) has its own Config and so its
    own stash: state kept there cannot reach the next request."""
    return config.stash.get(key, None)


def drop_request_state(config, key):
    """Take a plugin's state out of config.stash (pytest_unconfigure); returns it, or
    None when pytest_configure never stored it (a plugin before it raised)."""
    state = config.stash.get(key, None)
    if state is not None:
        del config.stash[key]
    return state


def check_integers(obj, where="value"):
    """Raise ValueError if obj holds a float anywhere (formats.md: no JSON reals)."""
    if isinstance(obj, float):
        raise ValueError(f"{where}: {obj!r} is a real; caliber files hold integers only")
    if isinstance(obj, dict):
        for key, value in obj.items():
            check_integers(value, f"{where}.{key}")
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            check_integers(value, f"{where}[{i}]")


def dumps_json(obj):
    """A JSON document as caliber writes it: sorted keys, two-space indent, final newline."""
    check_integers(obj)
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def dumps_line(obj):
    """One JSON Lines record: sorted keys, one line, final newline."""
    check_integers(obj)
    return json.dumps(obj, sort_keys=True, ensure_ascii=False) + "\n"


def atomic_write_text(path, text):
    """Write text to path through a temporary file in the same folder, fsync, rename,
    fsync of the folder, so a reader never sees a half-written file."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def append_line(path, line):
    """Append one JSON Lines record and flush it to disk before returning."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def dtype_name(dtype):
    """'float16' for torch.float16 or the string 'float16'; None stays None."""
    if dtype is None:
        return None
    text = str(dtype)
    return text[len("torch."):] if text.startswith("torch.") else text


def item_dtype(item):
    """A collected test's `dtype` parameter, or None when it has none."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("dtype") if callspec is not None else None
