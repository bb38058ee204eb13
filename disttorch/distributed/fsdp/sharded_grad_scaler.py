"""``torch.distributed.fsdp.sharded_grad_scaler``: ``ShardedGradScaler``, the ``GradScaler``
for sharded models: each rank holds only its shard's gradients, so whether a step has an
inf/NaN gradient is agreed over the process group (an all-reduce of each rank's finding)
before every rank steps or skips alike. float16 gradients are unscaled too (FSDP may keep
them in the parameters' dtype)."""

from __future__ import annotations

from typing import Any

from ... import _creation, _dtype
from ...amp.grad_scaler import GradScaler
from ..collectives import all_reduce

__all__ = ["ShardedGradScaler"]


class ShardedGradScaler(GradScaler):
    """``GradScaler`` whose inf/NaN check spans ``process_group`` (default: the world).

    Args:
        device, init_scale, backoff_factor, growth_factor, growth_interval, enabled: as
            ``GradScaler``'s (note PyTorch's order here: ``backoff_factor`` before
            ``growth_factor``).
        process_group: the ranks that share the finding (``None``: the default group).
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        backoff_factor: float = 0.5,
        growth_factor: float = 2.0,
        growth_interval: int = 2000,
        enabled: bool = True,
        process_group: Any = None,
    ) -> None:
        super().__init__(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled)
        self.process_group = process_group

    def unscale_(self, optimizer: Any) -> None:
        """Unscale this rank's gradients, then agree with the group on whether any is inf/NaN."""
        self._unscale(optimizer, allow_fp16=True)
        if not self._enabled:
            return
        state = self._state_of(optimizer)
        found = _creation.tensor([float(state["found_inf"])], dtype=_dtype.float32)
        all_reduce(found, group=self.process_group)
        state["found_inf"] = bool(found.item())
