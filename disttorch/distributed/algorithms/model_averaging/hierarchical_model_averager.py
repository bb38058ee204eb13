"""``model_averaging.hierarchical_model_averager``: ``HierarchicalModelAverager`` averages
over groups of several sizes, each with its own period (hierarchical SGD)."""

from __future__ import annotations

import logging
import warnings
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from . import averagers, utils

__all__ = ["HierarchicalModelAverager"]

logger = logging.getLogger(__name__)


class HierarchicalModelAverager(averagers.ModelAverager):
    """``period_group_size_dict`` maps periods to group sizes (``OrderedDict([(4, 8), (16,
    16)])``: groups of 8 ranks every 4 steps, all 16 every 16); after ``warmup_steps`` each
    step averages within the groups of the largest period dividing it, if any. The last size
    must be ``process_group``'s (default: the world's)."""

    def __init__(
        self,
        period_group_size_dict: OrderedDict | None = None,
        warmup_steps: int = 0,
        process_group: Any = None,
    ) -> None:
        from .... import distributed as dist

        super().__init__(process_group)
        if not period_group_size_dict:
            raise ValueError("Arg ``period_group_size_dict`` must not be empty.")
        self._periods = list(period_group_size_dict.keys())
        if self._periods[0] <= 0:
            raise ValueError("The minimum period in arg ``period_group_size_dict`` must be a positive value.")
        if self._periods[-1] == 1:
            warnings.warn(
                "When the maximum period in arg ``period_group_size_dict`` is 1, no need to use "
                "model averaging because the communication cost of all-reducing parameters will be "
                "no less than the cost of all-reducing gradients by DistributedDataParallel in the "
                "backward pass. Therefore, only DistributedDataParallel should be used for this case.",
                stacklevel=2,
            )
        overall = dist.get_world_size(group=self.process_group)
        last = list(period_group_size_dict.values())[-1]
        if last != overall:
            raise ValueError(
                f"The last value in arg ``period_group_size_dict`` {last} must be equal to the "
                f"size of arg ``process_group`` {overall}."
            )
        self.period_process_group_dict: OrderedDict = OrderedDict()
        logger.info("Model averaging hierarchy:")
        for period, group_size in period_group_size_dict.items():
            logger.info(
                "\tEach group that has %s processes average parameters every %s iterations, "
                "if no higher-level averaging.",
                group_size,
                period,
            )
            if group_size != overall:
                self.period_process_group_dict[period], _ = dist.new_subgroups(
                    group_size=group_size, group=self.process_group
                )
            else:
                self.period_process_group_dict[period] = self.process_group
        if warmup_steps < 0:
            raise ValueError("Arg ``warmup_steps`` must be a non-negative number.")
        self.warmup_steps = warmup_steps

    def _find_process_group(self) -> Any:
        """The group of the largest period dividing ``step``; ``None`` if none does."""
        for period in reversed(self._periods):
            if self.step % period == 0:
                return self.period_process_group_dict[period]
        return None

    def average_parameters(self, params: Iterable[Any]) -> None:
        """Average ``params`` within this step's groups, if any; count the step."""
        if self.step >= self.warmup_steps:
            group = self._find_process_group()
            if group is not None:
                utils.average_parameters_or_parameter_groups(params, group)
        self.step += 1
