"""``torch.distributed.algorithms.ddp_comm_hooks.ddp_zero_hook``: the hooks that would run
``ZeroRedundancyOptimizer(overlap_with_ddp=True)``'s step inside DDP's backward. PyTorch refuses
them on Gloo, its CPU backend (they may hang there); disttorch's backend stands where Gloo does,
so both refuse with PyTorch's errors when they are built."""

from __future__ import annotations

from typing import Any, Callable, NoReturn

__all__ = ["hook_with_zero_step", "hook_with_zero_step_interleaved"]


def _refuse(zero: Any) -> NoReturn:
    if not zero._overlap_with_ddp:
        raise ValueError(
            "ZeroRedundancyOptimizer must be constructed with `overlap_with_ddp=True` to use this hook properly"
        )
    raise RuntimeError("Gloo backend using Overlapping DDP with ZeRO may meet hangs")


def hook_with_zero_step(hook: Callable, ddp: Any, zero: Any, shard_buckets: bool = False) -> Callable:
    """PyTorch's: ``hook`` followed by ``zero``'s step once the last bucket is reduced.

    Raises:
        ValueError: ``zero`` was built with ``overlap_with_ddp=False``.
        RuntimeError: otherwise, as PyTorch's on Gloo.
    """
    return _refuse(zero)


def hook_with_zero_step_interleaved(
    hook: Callable, ddp: Any, zero: Any, shard_buckets: bool = False
) -> Callable:
    """PyTorch's: ``hook`` followed by ``zero``'s step on each bucket as it is reduced.

    Raises:
        ValueError: ``zero`` was built with ``overlap_with_ddp=False``.
        RuntimeError: otherwise, as PyTorch's on Gloo.
    """
    return _refuse(zero)
