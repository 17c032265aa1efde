"""The corpus's pytest setup: one mark per op (from inventory_main.csv, so the
marks and the inventory cannot drift apart) and a per-test seed."""

import zlib

import pytest

from caliber_ops import inventory


def pytest_configure(config):
    """Register every op name as a mark (pytest.ini asks for --strict-markers)."""
    for op in inventory.ops():
        config.addinivalue_line("markers", f"{op}: the {op} workload of inventory_main.csv")


@pytest.fixture(autouse=True)
def _seed_from_node_id(request):
    """Fresh, reproducible random inputs: each test seeds torch from its own node id."""
    import torch

    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))
