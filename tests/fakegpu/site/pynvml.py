"""pynvml (nvidia-ml-py) of the fake GPU: one H200-like device whose SM
clock is at its maximum (1980 MHz) and whose power is low, unless
FAKEGPU_THROTTLE in the worker's environment (a cell's env in the manifest
sets it for that cell) makes it run hot:

    FAKEGPU_THROTTLE=MODE

where MODE is one of
    always     every SM clock read gives 1200 MHz (no reason given, as a
               slowdown NVML does not explain): every row is throttled,
               measured again, and still throttled
    first-row  the first clock sample the timing plugin's sampler thread
               takes in each cell folder gives 1300 MHz with SwPowerCap:
               the first row is throttled once and measured again after a
               rest, then clean
    hot        the first 5 power reads in each cell folder give 690 W of
               700 W with SwPowerCap set: the rest before the first row
               waits until they pass
State is per cell folder (CALIBER_CELL_DIR), so every request starts alike."""

import os
import threading

NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
SW_POWER_CAP = 0x4
GPU_IDLE = 0x1
MAX_SM_MHZ = 1980
LIMIT_MW = 700000

_seen = {}   # CALIBER_CELL_DIR -> {"samples": n, "power": n}
_lock = threading.Lock()


class NVMLError(Exception):
    pass


def _mode():
    """The FAKEGPU_THROTTLE mode, or None."""
    return os.environ.get("FAKEGPU_THROTTLE") or None


def _count(what):
    """How many reads of `what` this cell folder has had before this one."""
    with _lock:
        seen = _seen.setdefault(os.environ.get("CALIBER_CELL_DIR", ""), {"samples": 0, "power": 0})
        seen[what] += 1
        return seen[what] - 1


def _hot():
    """Whether the power reads of a "hot" cell still run hot."""
    return _mode() == "hot" and _count("power") < 5


def nvmlInit():
    pass


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return "580.00-fakegpu"


def nvmlDeviceGetHandleByUUID(uuid):
    text = uuid.decode() if isinstance(uuid, bytes) else uuid
    if text != "GPU-00000000-0000-0000-0000-000000000000":
        raise NVMLError(f"no device with UUID {text}")
    return "fake-handle"


def nvmlDeviceGetIndex(handle):
    return 0


def nvmlDeviceGetMaxClockInfo(handle, kind):
    return MAX_SM_MHZ if kind == NVML_CLOCK_SM else 2619


def nvmlDeviceGetClockInfo(handle, kind):
    if kind != NVML_CLOCK_SM:
        return 2619
    mode = _mode()
    if mode == "always":
        return 1200
    if mode == "first-row" and threading.current_thread().name == "caliber-clocks" and _count("samples") == 0:
        return 1300
    return MAX_SM_MHZ


def nvmlDeviceGetCurrentClocksEventReasons(handle):
    return SW_POWER_CAP if _mode() == "hot" and _seen.get(os.environ.get("CALIBER_CELL_DIR", ""), {}).get(
        "power", 0) < 5 else 0


def nvmlDeviceGetPowerUsage(handle):
    return 690000 if _hot() else 100000


def nvmlDeviceGetEnforcedPowerLimit(handle):
    return LIMIT_MW
