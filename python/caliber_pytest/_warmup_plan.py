"""What parallel_warmup starts: which GPUs, which tests on each, with which
arguments and environment. No torch here."""

import json

PLUGIN_PREFIX = "caliber_pytest."
SELF = "caliber_pytest.parallel_warmup"
# The warm-up only needs the kernels compiled; its timing is thrown away.
WARMUP_TIMER = {"graph_capture": "off", "kind": "native-event", "rep_ms": 1, "repeats": 1, "warmup_ms": 0}


def parse_gpus(text, measured):
    """PARALLEL_WARMUP_GPUS ('1,2') as a list of ids; the measured device may not be one."""
    gpus = [part.strip() for part in (text or "").split(",") if part.strip()]
    if len(set(gpus)) != len(gpus):
        raise ValueError(f"PARALLEL_WARMUP_GPUS={text!r} names a GPU twice")
    if measured is not None and measured in gpus:
        raise ValueError(f"PARALLEL_WARMUP_GPUS={text!r} holds the measured device {measured}")
    return gpus


def split_round_robin(node_ids, n):
    """node_ids dealt onto n lists, keeping their order within each."""
    return [node_ids[i::n] for i in range(n)]


def plugin_args(invocation_args):
    """The '-p caliber_pytest.X' pairs of the measured run, less parallel_warmup itself."""
    out = []
    args = list(invocation_args)
    for i, arg in enumerate(args):
        name = None
        if arg == "-p" and i + 1 < len(args):
            name = args[i + 1]
        elif arg.startswith("-p") and len(arg) > 2:
            name = arg[2:]
        if name and name.startswith(PLUGIN_PREFIX) and name != SELF:
            out += ["-p", name]
    return out


def child_env(base, gpu, scratch):
    """The environment of the warm-up process on gpu: the measured process's own,
    pinned to gpu, writing its cell outputs under scratch, timing as little as possible.
    TRITON_CACHE_DIR stays, so what it compiles lands in the cell's cache."""
    env = dict(base)
    env.pop("PARALLEL_WARMUP_GPUS", None)
    env["CUDA_VISIBLE_DEVICES"] = gpu
    env["CALIBER_CELL_DIR"] = scratch
    if env.get("CALIBER_AUTOTUNE_MODE") == "record":
        env["CALIBER_AUTOTUNE_FILE"] = f"{scratch}/autotune.jsonl"
    env["CALIBER_TIMER"] = json.dumps(WARMUP_TIMER, sort_keys=True, separators=(",", ":"))
    env["CALIBER_GRAPH_CAPTURE"] = "0"
    return env
