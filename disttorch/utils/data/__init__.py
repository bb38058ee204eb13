"""Data loading: datasets, samplers (incl. ``DistributedSampler``), ``DataLoader``; the
iterable DataPipe base and shuffler (``datapipes``, ``graph_settings``)."""

from . import datapipes, graph_settings
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .datapipes.datapipe import IterDataPipe
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker import get_worker_info

__all__ = [
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "IterDataPipe",
    "TensorDataset",
    "Subset",
    "ConcatDataset",
    "ChainDataset",
    "StackDataset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "DistributedSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
]
