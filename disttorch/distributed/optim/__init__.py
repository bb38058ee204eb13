"""Distributed optimisers: ``ZeroRedundancyOptimizer``, ``PostLocalSGDOptimizer``,
``DistributedOptimizer`` (over RPC)."""

from .distributed_optimizer import DistributedOptimizer
from .post_localSGD_optimizer import PostLocalSGDOptimizer
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["DistributedOptimizer", "PostLocalSGDOptimizer", "ZeroRedundancyOptimizer"]
