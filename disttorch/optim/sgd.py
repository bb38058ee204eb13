"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .optimizer import Optimizer, _check_impl_flags

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * d``, with ``d`` the (momentum-averaged) gradient, as ``torch.optim.SGD``.

    With momentum ``m``: ``buf = m * buf + (1 - dampening) * g`` (``buf = g`` at the first
    step) and ``d = g + m * buf`` (Nesterov) or ``d = buf``.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, fused: bool | None = None) -> None:
        _check_impl_flags(foreach, fused)
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: dict) -> None:
        wd, m = group["weight_decay"], group["momentum"]
        if wd:
            grad = grad + wd * param
        if m:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(grad, dtype=param.dtype)
            else:
                buf *= m
                dampening = group["dampening"]
                buf += (1 - dampening) * grad if dampening else grad
            grad = grad + m * buf if group["nesterov"] else buf
        param -= group["lr"] * grad
