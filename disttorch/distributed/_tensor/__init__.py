"""``torch.distributed._tensor``: the old name of :mod:`disttorch.distributed.tensor`, kept as
PyTorch keeps it (its ``experimental``, ``_utils``, ``device_mesh`` and ``placement_types``
submodules are the new package's)."""

import sys
from importlib import import_module

from .. import tensor as _tensor
from ..tensor import *  # noqa: F403 - the same names under the old module path

__all__ = list(_tensor.__all__)

for _name in ("experimental", "_utils", "device_mesh", "placement_types"):
    sys.modules[f"{__name__}.{_name}"] = import_module(f"disttorch.distributed.tensor.{_name}")
