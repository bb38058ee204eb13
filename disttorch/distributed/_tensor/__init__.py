"""``torch.distributed._tensor``: the old name of :mod:`disttorch.distributed.tensor`, kept as
PyTorch keeps it (its ``experimental`` and ``_utils`` submodules are the new package's)."""

import sys
from importlib import import_module

from ..tensor import (
    DeviceMesh,
    DTensor,
    Partial,
    Placement,
    Replicate,
    Shard,
    distribute_tensor,
    init_device_mesh,
)

for _name in ("experimental", "_utils"):
    sys.modules[f"{__name__}.{_name}"] = import_module(f"disttorch.distributed.tensor.{_name}")

__all__ = [
    "DTensor",
    "DeviceMesh",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_tensor",
    "init_device_mesh",
]
