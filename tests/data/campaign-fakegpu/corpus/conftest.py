"""The fake-GPU corpus: each test seeds torch, as caliber's ops/ does."""
import pytest


@pytest.fixture(autouse=True)
def _seed():
    import torch

    torch.manual_seed(0)
