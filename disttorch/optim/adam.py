"""Adam and AdamW (decoupled weight decay), with AMSGrad."""
from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from .optimizer import Optimizer, _check_impl_flags

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``::

        m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
        p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)

    ``weight_decay`` adds ``wd * p`` to the gradient (L2); AdamW decays the weights instead.
    """

    _decoupled = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, fused: bool | None = None) -> None:
        _check_impl_flags(foreach, fused)
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        if weight_decay < 0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: dict) -> None:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if not state:
            state["step"] = 0.0
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        state["step"] = step = float(state["step"]) + 1
        if wd:
            if self._decoupled:
                param *= 1 - lr * wd
            else:
                grad = grad + wd * param
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (grad - m) * (1 - b1)
        v *= b2
        v += (1 - b2) * grad * grad
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
            v = state["max_exp_avg_sq"]
        denom = np.sqrt(v) / math.sqrt(1 - b2 ** step) + eps
        param -= (lr / (1 - b1 ** step)) * m / denom


class AdamW(Adam):
    """Adam with decoupled weight decay: ``p *= 1 - lr * wd`` before the Adam step."""

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         fused=fused)
