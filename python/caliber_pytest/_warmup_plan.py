"""What parallel_warmup sends ahead, decided without a GPU: the warm-up GPUs,
which one takes the next request, that request as the warm-up runs it, and
the environment of a warm-up worker. No torch here."""

import json
import os

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


def parse_next(text):
    """CALIBER_WARMUP_NEXT as {"argv", "env", "key"}; None when unset or empty.
    Raises ValueError when it is not what the runner writes (docs/formats.md)."""
    if not text:
        return None
    try:
        ahead = json.loads(text)
    except ValueError as e:
        raise ValueError(f"not JSON: {e}")
    if not isinstance(ahead, dict) or sorted(ahead) != ["argv", "env", "key"]:
        raise ValueError("expected an object with exactly argv, env and key")
    argv, env, key = ahead["argv"], ahead["env"], ahead["key"]
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ValueError("argv is not a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ValueError("env is not an object of strings")
    if not isinstance(key, str) or not key:
        raise ValueError("key is not a non-empty string")
    return ahead


def choose_gpu(gpus, in_flight):
    """The GPU to send the next request to: the first of gpus with the fewest
    requests in flight (in_flight: gpu -> count; a GPU not in it has none)."""
    return min(gpus, key=lambda gpu: in_flight.get(gpu, 0))


def without_self(argv):
    """argv less '-p caliber_pytest.parallel_warmup' (or '-pcaliber_pytest.parallel_warmup')."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "-p" and i + 1 < len(argv) and argv[i + 1] == SELF:
            i += 2
            continue
        if argv[i] != "-p" + SELF:
            out.append(argv[i])
        i += 1
    return out


def warmup_request(ahead, cell_dir):
    """The request a warm-up worker runs for ahead (parse_next's object): its
    cell outputs go to cell_dir, autotuning is recorded there (the baseline's
    record that a replay reads may not exist yet; recording benchmarks every
    config, so it compiles all that a replay would), timing is as short as
    can be, without graphs, and the warm-up sends nothing ahead itself.
    `task` is the key, which the session echoes in its reply."""
    env = {name: value for name, value in ahead["env"].items() if name != "CALIBER_WARMUP_NEXT"}
    env.update(CALIBER_CELL_DIR=cell_dir, CALIBER_AUTOTUNE_MODE="record",
               CALIBER_AUTOTUNE_FILE=f"{cell_dir}/autotune.jsonl",
               CALIBER_TIMER=json.dumps(WARMUP_TIMER, sort_keys=True, separators=(",", ":")),
               CALIBER_GRAPH_CAPTURE="0")
    return {"argv": without_self(ahead["argv"]), "env": env, "task": ahead["key"]}


def worker_env(base, request_names, gpu, gpu_dir, reply_fd):
    """The environment of the warm-up worker on gpu: the measured worker's
    own (base) less the per-request variables (request_names) and
    PARALLEL_WARMUP_GPUS, pinned to gpu, in its own working directory
    (gpu_dir/work), replying on reply_fd. TRITON_CACHE_DIR stays: what it
    compiles lands in the cell's private cache, where the measured process
    finds it. FLAGGEMS_CACHE_DIR does not (gpu_dir/flaggems): FlagGems keeps
    autotuning results there, and a decision benchmarked on the warm-up GPU
    must not become the measured process's."""
    env = {name: value for name, value in base.items()
           if name not in request_names and name not in ("CALIBER_WARMUP_NEXT", "PARALLEL_WARMUP_GPUS")}
    env.update(CUDA_VISIBLE_DEVICES=gpu, CALIBER_WORK_DIR=os.path.join(gpu_dir, "work"),
               FLAGGEMS_CACHE_DIR=os.path.join(gpu_dir, "flaggems"), CALIBER_REPLY_FD=str(reply_fd))
    return env
