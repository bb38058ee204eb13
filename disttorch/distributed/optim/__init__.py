"""Distributed optimisers: ``ZeroRedundancyOptimizer``, ``DistributedOptimizer`` (over RPC)."""

from .distributed_optimizer import DistributedOptimizer
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["DistributedOptimizer", "ZeroRedundancyOptimizer"]
