"""torch.nn for the fake GPU: only what its functional module needs."""
from . import functional  # noqa: F401
