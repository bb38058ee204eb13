"""``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook``: the state of PyTorch's
PowerSGD gradient compression (low-rank approximations of each gradient matrix, with error
feedback). disttorch's DDP has no PowerSGD: the state can be built and inspected (libraries
such as accelerate import this module to offer it), and the hooks raise
``NotImplementedError``."""

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


def _unsupported(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"{name} is not supported by disttorch's DistributedDataParallel (no PowerSGD compression); "
        "use the default all-reduce (no comm hook), fp16_compress_hook or bf16_compress_hook"
    )


def powerSGD_hook(state: PowerSGDState, bucket: Any) -> Any:  # noqa: N802 (PyTorch's name)
    """Raises ``NotImplementedError``: disttorch's DDP does not support PowerSGD."""
    raise _unsupported("powerSGD_hook")


def batched_powerSGD_hook(state: PowerSGDState, bucket: Any) -> Any:  # noqa: N802 (PyTorch's name)
    """Raises ``NotImplementedError``: disttorch's DDP does not support PowerSGD."""
    raise _unsupported("batched_powerSGD_hook")
