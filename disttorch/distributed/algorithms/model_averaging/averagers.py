"""``model_averaging.averagers``: ``ModelAverager`` and ``PeriodicModelAverager``, which
averages parameters every ``period`` steps once ``warmup_steps`` have passed."""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from . import utils

__all__ = ["ModelAverager", "PeriodicModelAverager"]


class ModelAverager(ABC):
    """Base of the model averagers: ``process_group`` (``None``: the world) and ``step``, the
    number of ``average_parameters`` calls so far."""

    def __init__(self, process_group: Any = None) -> None:
        from .... import distributed as dist

        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.step = 0

    @abstractmethod
    def average_parameters(self, params: Iterable[Any]) -> None:
        raise NotImplementedError


class PeriodicModelAverager(ModelAverager):
    """Average parameters (or an optimiser's parameter groups) over ``process_group`` at each
    call whose ``step`` is at least ``warmup_steps`` and a multiple of ``period`` past it."""

    def __init__(self, period: int, warmup_steps: int = 0, process_group: Any = None) -> None:
        super().__init__(process_group)
        if warmup_steps < 0:
            raise ValueError("Arg ``warmup_steps`` must be a non-negative number.")
        self.warmup_steps = warmup_steps
        if period < 1:
            raise ValueError("Arg ``period`` must be a positive value.")
        if period == 1:
            warnings.warn(
                "When period is 1, no need to use model averaging because the communication cost "
                "of all-reducing parameters will be no less than the cost of all-reducing gradients "
                "by DistributedDataParallel in the backward pass. Therefore, only "
                "DistributedDataParallel should be used for this case.",
                stacklevel=2,
            )
        self.period = period

    def average_parameters(self, params: Iterable[Any]) -> None:
        """Average ``params`` if this step is an averaging one; count the step."""
        if self.step >= self.warmup_steps and (self.step - self.warmup_steps) % self.period == 0:
            utils.average_parameters_or_parameter_groups(params, self.process_group)
        self.step += 1
