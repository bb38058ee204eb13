"""Argument checks shared by the optimisers, with PyTorch's messages."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor

__all__ = ["check_betas", "check_lr", "check_nonneg", "flag_defaults"]


def check_lr(lr: Any) -> None:
    """``lr`` must be a non-negative float or a one-element tensor."""
    if isinstance(lr, Tensor):
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        lr = lr.item()
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_nonneg(name: str, value: float) -> None:
    """``value`` must be >= 0 (``Invalid <name> value: ...``)."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def check_betas(betas: Any) -> None:
    """Both betas in [0, 1)."""
    for i, b in enumerate(betas):
        b = b.item() if isinstance(b, Tensor) else b
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def flag_defaults(
    foreach: bool | None = None,
    maximize: bool = False,
    capturable: bool = False,
    differentiable: bool = False,
    fused: bool | None = None,
    *,
    names: tuple = (),
) -> dict:
    """The implementation flags PyTorch keeps in every group. ``foreach``, ``fused`` and
    ``capturable`` choose kernels or devices in PyTorch; here they are accepted, stored and give
    the same arithmetic. ``differentiable`` is accepted but the update is never recorded by
    autograd. Only the names in ``names`` are returned (each optimiser has its own set)."""
    flags = {
        "foreach": foreach,
        "maximize": maximize,
        "capturable": capturable,
        "differentiable": differentiable,
        "fused": fused,
    }
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    return {k: flags[k] for k in names}
