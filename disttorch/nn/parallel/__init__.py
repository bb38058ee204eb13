"""Data-parallel training: ``DistributedDataParallel`` and its communication hooks;
``DataParallel`` (on CPUs it runs the module, as PyTorch does without GPUs)."""

from . import comm_hooks
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

DDP = DistributedDataParallel
__all__ = ["DistributedDataParallel", "comm_hooks", "DataParallel", "data_parallel"]
