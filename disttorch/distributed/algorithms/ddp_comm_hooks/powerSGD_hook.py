"""``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook``: the state of PyTorch's
PowerSGD gradient compression (low-rank approximations of each gradient matrix, with error
feedback). As PyTorch's, the hooks run the plain averaging all-reduce for the first
``start_powerSGD_iter`` iterations (default 1000); the compression itself is not implemented
in disttorch: from that iteration on the hooks raise ``NotImplementedError``."""

from __future__ import annotations

from typing import Any

__all__ = ["PowerSGDState", "batched_powerSGD_hook", "powerSGD_hook"]


class PowerSGDState:
    """``PowerSGDState(process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000,
    ...)``: PyTorch's settings of PowerSGD, kept as given."""

    def __init__(
        self,
        process_group: Any,
        matrix_approximation_rank: int = 1,
        start_powerSGD_iter: int = 1_000,  # noqa: N803 (PyTorch's name)
        min_compression_rate: float = 2,
        use_error_feedback: bool = True,
        warm_start: bool = True,
        orthogonalization_epsilon: float = 0,
        random_seed: int = 0,
        compression_stats_logging_frequency: int = 10_000,
        batch_tensors_with_same_shape: bool = False,
    ) -> None:
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback, self.warm_start = use_error_feedback, warm_start
        self.orthogonalization_epsilon, self.random_seed = orthogonalization_epsilon, random_seed
        self.compression_stats_logging_frequency = compression_stats_logging_frequency
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape
        self.iter = 0
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError(
                "Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is enabled, "
                "because PowerSGD can only be applied after the first two iterations in DDP."
            )

    def maybe_increase_iter(self, bucket: Any) -> None:
        """Count an iteration when its last bucket (bucket 0) is reduced."""
        if bucket.is_last():
            self.iter += 1


def _hook(name: str, state: PowerSGDState, bucket: Any) -> Any:
    if state.iter < state.start_powerSGD_iter:
        from .default_hooks import allreduce_hook

        state.maybe_increase_iter(bucket)
        return allreduce_hook(state.process_group, bucket)
    raise NotImplementedError(
        f"{name}: PowerSGD compression (from iteration start_powerSGD_iter={state.start_powerSGD_iter} "
        "on) is not supported by disttorch's DistributedDataParallel; use the default all-reduce "
        "(no comm hook), fp16_compress_hook or bf16_compress_hook"
    )


def powerSGD_hook(state: PowerSGDState, bucket: Any) -> Any:  # noqa: N802 (PyTorch's name)
    """The averaging all-reduce of ``bucket`` for the first ``state.start_powerSGD_iter``
    iterations; then ``NotImplementedError`` (no PowerSGD compression in disttorch)."""
    return _hook("powerSGD_hook", state, bucket)


def batched_powerSGD_hook(state: PowerSGDState, bucket: Any) -> Any:  # noqa: N802 (PyTorch's name)
    """As :func:`powerSGD_hook`."""
    return _hook("batched_powerSGD_hook", state, bucket)
