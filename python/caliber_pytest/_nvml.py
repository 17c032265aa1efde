"""Device facts from NVML (nvidia-ml-py), when it is importable; None where not.

NVML ignores CUDA_VISIBLE_DEVICES, so the device is found by the UUID that
torch reports for the one visible device."""

# Process-wide by design: NVML is initialised once per process (False: unavailable).
_nvml = None


def _lib():
    """pynvml, initialised once, or None when it is missing or NVML fails."""
    global _nvml
    if _nvml is None:
        try:
            import pynvml

            pynvml.nvmlInit()
            _nvml = pynvml
        except Exception:  # no NVML is a documented state: clocks are then null
            _nvml = False
    return _nvml or None


def device_uuid(props):
    """'GPU-<uuid>' of a torch device-properties object (torch prints the UUID bare)."""
    text = str(props.uuid)
    return text if text.startswith("GPU-") else f"GPU-{text}"


def handle(uuid):
    """The NVML handle of the device with this UUID ('GPU-...'), or None."""
    lib = _lib()
    if lib is None:
        return None
    for key in (uuid, uuid.encode()):  # older nvidia-ml-py releases take bytes only
        try:
            return lib.nvmlDeviceGetHandleByUUID(key)
        except Exception:
            continue
    return None


def clocks(h):
    """{'mem_mhz', 'sm_mhz'} now, or None where the device cannot say."""
    lib = _lib()
    if lib is None or h is None:
        return None
    try:
        return {"mem_mhz": int(lib.nvmlDeviceGetClockInfo(h, lib.NVML_CLOCK_MEM)),
                "sm_mhz": int(lib.nvmlDeviceGetClockInfo(h, lib.NVML_CLOCK_SM))}
    except Exception:
        return None


def driver_version():
    """The driver version string, or None."""
    lib = _lib()
    if lib is None:
        return None
    try:
        version = lib.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:
        return None


def index(h):
    """The physical index NVML gives the device, or None."""
    lib = _lib()
    if lib is None or h is None:
        return None
    try:
        return int(lib.nvmlDeviceGetIndex(h))
    except Exception:
        return None


# NVML's clock-event (throttle) reasons that slow the SM for power or heat;
# GpuIdle (0x1), the application clock setting (0x2) and sync boost (0x10)
# are not throttling.
SW_POWER_CAP = 0x4
HW_SLOWDOWN = 0x8
SW_THERMAL = 0x20
HW_THERMAL = 0x40
HW_POWER_BRAKE = 0x80
THROTTLE_MASK = SW_POWER_CAP | HW_SLOWDOWN | SW_THERMAL | HW_THERMAL | HW_POWER_BRAKE
GPU_IDLE = 0x1


def max_sm_mhz(h):
    """The device's maximum SM clock (MHz), or None."""
    lib = _lib()
    if lib is None or h is None:
        return None
    try:
        return int(lib.nvmlDeviceGetMaxClockInfo(h, lib.NVML_CLOCK_SM))
    except Exception:
        return None


def reasons(h):
    """The current clock-event reasons as a bit mask, or None (older
    nvidia-ml-py names them throttle reasons)."""
    lib = _lib()
    if lib is None or h is None:
        return None
    for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        call = getattr(lib, name, None)
        if call is None:
            continue
        try:
            return int(call(h))
        except Exception:
            return None
    return None


def power_share(h):
    """Power drawn now as a share of the enforced limit (NVML averages it
    over about a second), or None."""
    lib = _lib()
    if lib is None or h is None:
        return None
    try:
        return lib.nvmlDeviceGetPowerUsage(h) / lib.nvmlDeviceGetEnforcedPowerLimit(h)
    except Exception:
        return None


def sample(h):
    """(sm_mhz, reasons) now; either may be None."""
    c = clocks(h)
    return (c["sm_mhz"] if c else None), reasons(h)
