"""``convert_conv2d_weight_memory_format`` / ``convert_conv3d_weight_memory_format``.

PyTorch re-lays convolution weights out as channels-last for faster GPU kernels.
disttorch tensors are NumPy arrays whose convolution kernels pick their own layout, so
there is no memory format to convert: the module is checked and returned unchanged."""

from __future__ import annotations

from typing import Any

from ..modules.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """Accepted for compatibility: returns ``module`` (no memory formats in disttorch)."""
    if not isinstance(module, Module):
        raise TypeError(f"expected a Module, got {type(module).__name__}")
    return module


def convert_conv3d_weight_memory_format(module: Module, memory_format: Any) -> Module:
    """Accepted for compatibility: returns ``module`` (no memory formats in disttorch)."""
    if not isinstance(module, Module):
        raise TypeError(f"expected a Module, got {type(module).__name__}")
    return module
