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
