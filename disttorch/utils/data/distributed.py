"""``DistributedSampler``: each rank sees its own shard of the dataset, every epoch."""

from __future__ import annotations

import math
from typing import Any, Iterator

from ..._random import Generator, randperm
from .sampler import Sampler, T_co

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler[T_co]):
    """Restrict loading to rank ``rank``'s share of ``num_replicas`` equal shards.

    The indices (shuffled with ``seed + epoch`` when ``shuffle``) are padded by repeating
    from the start so that every rank gets ``ceil(N / num_replicas)`` of them (or trimmed
    to ``floor`` with ``drop_last``); rank r takes every ``num_replicas``-th from ``r``.
    Call ``set_epoch(e)`` at the start of each epoch so the order changes, the same on
    every rank. ``num_replicas`` and ``rank`` default to the process group's.
    """

    def __init__(
        self,
        dataset: Any,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if not dist.is_initialized():  # PyTorch's error (from get_world_size), with a hint
                raise ValueError(
                    "Default process group has not been initialized, please make sure to call "
                    "init_process_group. (DistributedSampler reads num_replicas and rank from it; "
                    "or pass them)"
                )
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` in the shuffling seed (call once per epoch on every rank)."""
        self.epoch = epoch
