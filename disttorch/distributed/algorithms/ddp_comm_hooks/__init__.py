"""``torch.distributed.algorithms.ddp_comm_hooks``: DDP communication hooks under PyTorch's
module paths. ``default_hooks`` re-exports ``allreduce_hook``, the float16/bfloat16
compression hooks and their wrappers, and ``quantization_hooks`` the 8-bit hooks (they live
beside DDP in ``disttorch.nn.parallel``); ``debugging_hooks`` holds ``noop_hook``,
``powerSGD_hook`` PowerSGD compression; ``post_localSGD_hook`` post-local SGD (with
``model_averaging``). ``register_ddp_comm_hook(DDPCommHookType.X, model,
state)`` registers a hook by name, as PyTorch's."""

from __future__ import annotations

import sys
from enum import Enum
from functools import partial
from typing import Any

__all__ = ["DDPCommHookType", "register_ddp_comm_hook"]

if sys.version_info >= (3, 11):
    from enum import member as _member
else:  # a partial was an Enum member before 3.11

    def _member(value: Any) -> Any:
        return value


def _hook(module: str, name: str) -> Any:
    """The hook ``name`` of this package's ``module`` (imported when the hook is registered)."""
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def _ddp_comm_hook_wrapper(model: Any, state: Any, comm_hook: tuple[str, str]) -> None:
    model.register_comm_hook(state, _hook(*comm_hook))


def _powerSGD_comm_hook_wrapper(  # noqa: N802 (PyTorch's name)
    model: Any,
    state: Any,
    comm_hook: tuple[str, str],
    matrix_approximation_rank: int,
    start_powerSGD_iter: int = 1_000,  # noqa: N803 (PyTorch's name)
) -> None:
    """Register a PowerSGD hook with a ``PowerSGDState`` over the process group ``state``."""
    from .powerSGD_hook import PowerSGDState

    powersgd_state = PowerSGDState(
        process_group=state,
        matrix_approximation_rank=matrix_approximation_rank,
        start_powerSGD_iter=start_powerSGD_iter,
    )
    model.register_comm_hook(powersgd_state, _hook(*comm_hook))


class DDPCommHookType(Enum):
    """The hooks of ``ddp_comm_hooks`` by name: ``DDPCommHookType.X.value(model=model,
    state=process_group)`` registers hook ``X`` on the DDP ``model``."""

    ALLREDUCE = _member(partial(_ddp_comm_hook_wrapper, comm_hook=("default_hooks", "allreduce_hook")))
    FP16_COMPRESS = _member(
        partial(_ddp_comm_hook_wrapper, comm_hook=("default_hooks", "fp16_compress_hook"))
    )
    BF16_COMPRESS = _member(
        partial(_ddp_comm_hook_wrapper, comm_hook=("default_hooks", "bf16_compress_hook"))
    )
    QUANTIZE_PER_TENSOR = _member(
        partial(_ddp_comm_hook_wrapper, comm_hook=("quantization_hooks", "quantization_pertensor_hook"))
    )
    QUANTIZE_PER_CHANNEL = _member(
        partial(_ddp_comm_hook_wrapper, comm_hook=("quantization_hooks", "quantization_perchannel_hook"))
    )
    POWER_SGD = _member(
        partial(
            _powerSGD_comm_hook_wrapper,
            comm_hook=("powerSGD_hook", "powerSGD_hook"),
            matrix_approximation_rank=1,
        )
    )
    POWER_SGD_RANK2 = _member(
        partial(
            _powerSGD_comm_hook_wrapper,
            comm_hook=("powerSGD_hook", "powerSGD_hook"),
            matrix_approximation_rank=2,
        )
    )
    BATCHED_POWER_SGD = _member(
        partial(
            _powerSGD_comm_hook_wrapper,
            comm_hook=("powerSGD_hook", "batched_powerSGD_hook"),
            matrix_approximation_rank=1,
        )
    )
    BATCHED_POWER_SGD_RANK2 = _member(
        partial(
            _powerSGD_comm_hook_wrapper,
            comm_hook=("powerSGD_hook", "batched_powerSGD_hook"),
            matrix_approximation_rank=2,
        )
    )
    NOOP = _member(partial(_ddp_comm_hook_wrapper, comm_hook=("debugging_hooks", "noop_hook")))


def register_ddp_comm_hook(comm_hook_type: DDPCommHookType, model: Any, state: Any = None) -> None:
    """Register the hook ``comm_hook_type`` names on the DDP ``model``, with ``state``."""
    comm_hook_type.value(model=model, state=state)
