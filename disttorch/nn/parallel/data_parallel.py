"""``DataParallel`` and ``data_parallel``: single-process replication over GPUs in
PyTorch. disttorch runs on CPUs only, so, exactly as PyTorch does on a machine without
GPUs, the wrapper runs its module directly (``device_ids`` is empty); use
``DistributedDataParallel`` under ``disttorch-launch`` for parallel training."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module`` (registered as ``module``, so state-dict keys start with
    ``module.``) and forwards every call to it. ``device_ids``, ``output_device`` and
    ``dim`` are accepted and, with no GPU, unused (``device_ids`` is ``[]``)."""

    def __init__(
        self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None, dim: int = 0
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []
        self.dim = dim
        self.output_device = None
        self.src_device_obj = None

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(
    module: Module,
    inputs: Any,
    device_ids: Sequence[Any] | None = None,
    output_device: Any = None,
    dim: int = 0,
    module_kwargs: dict | None = None,
) -> Any:
    """Evaluate ``module(*inputs, **module_kwargs)`` (no GPUs: no replication)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
