"""``torch.numa.binding``: the NUMA affinity settings of ``LaunchConfig(numa_options=...)``.

PyTorch's launcher wraps each worker in ``numactl`` to bind it to the CPUs near its GPU;
disttorch has no GPU and ``disttorch-launch`` pins each rank to its cores itself, so the
options are accepted and kept (accelerate's ``notebook_launcher`` passes them) and no binding
is made from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["AffinityMode", "NumaOptions"]


class AffinityMode(str, Enum):
    """Which CPUs a worker would be bound to: its GPU's NUMA node, socket, an exclusive share
    of them, or its core complex (PyTorch's four modes, by their values)."""

    NODE = "node"
    SOCKET = "socket"
    EXCLUSIVE = "exclusive"
    CORE_COMPLEX = "core-complex"


@dataclass(frozen=True)
class NumaOptions:
    """A binding request: the affinity mode, and whether a failed binding is ignored."""

    affinity_mode: AffinityMode
    should_fall_back_if_binding_fails: bool = False
