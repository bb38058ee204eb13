"""``disttorch.distributed.tensor``: ``DTensor``, placements and the mesh they live on
(mirrors ``torch.distributed.tensor``): ``Shard(d)``/``Replicate()``/``Partial()`` layouts,
redistribution between them, and ops on DTensors by sharding propagation. FSDP keeps its
shards as DTensors; tensor parallelism (``parallel/``) computes on them."""

from ..device_mesh import DeviceMesh, init_device_mesh
from ._api import DTensor, distribute_tensor
from ._module_api import distribute_module
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = [
    "DTensor",
    "DeviceMesh",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_module",
    "distribute_tensor",
    "init_device_mesh",
]
