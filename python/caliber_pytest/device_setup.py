"""caliber_pytest.device_setup: pins the one visible device, checks it, and
records its name, UUID, driver and clocks in <cell dir>/device.json."""

import os

from . import _nvml
from ._common import atomic_write_text, dumps_json, require_env, usage_error

PLUGIN = "device_setup"


def device_record(torch):
    """device.json's object for the current device (torch already pinned to it)."""
    props = torch.cuda.get_device_properties(0)
    uuid = _nvml.device_uuid(props)
    h = _nvml.handle(uuid)
    return {"clocks": _nvml.clocks(h), "driver": _nvml.driver_version(), "index": _nvml.index(h),
            "name": props.name, "uuid": uuid}


def pytest_configure(config):
    """Refuse to run unless exactly one device is visible; then record it."""
    cell_dir = require_env(PLUGIN, "CALIBER_CELL_DIR")
    try:
        import torch
    except ImportError as e:
        raise usage_error(PLUGIN, f"torch cannot be imported: {e}")
    if not torch.cuda.is_available():
        raise usage_error(PLUGIN, "no GPU is visible (torch.cuda.is_available() is False)")
    count = torch.cuda.device_count()
    if count != 1:
        raise usage_error(PLUGIN, f"exactly one visible device is required, found {count} "
                          f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r})")
    torch.cuda.set_device(0)
    atomic_write_text(os.path.join(cell_dir, "device.json"), dumps_json(device_record(torch)))
