"""Data-parallel training: ``DistributedDataParallel`` and its communication hooks."""
from . import comm_hooks
from .distributed import DistributedDataParallel

DDP = DistributedDataParallel
__all__ = ["DistributedDataParallel", "comm_hooks"]
