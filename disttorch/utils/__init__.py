"""Utilities: ``data`` (datasets, samplers, DataLoader), ``trace`` (Chrome traces),
``checkpoint`` (activation checkpointing) and ``tensorboard`` (``SummaryWriter``);
``swap_tensors``.

``data`` is imported on first access, because ``trace`` is needed by the core before
tensors exist.
"""

import importlib

__all__ = ["data", "trace", "safetensors", "dlpack", "checkpoint", "tensorboard", "hooks", "swap_tensors"]


def __getattr__(name: str):
    if name == "swap_tensors":  # a function, in a module that needs Tensor
        from ._swap_tensors import swap_tensors

        return swap_tensors
    if name in __all__:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'disttorch.utils' has no attribute '{name}'")
