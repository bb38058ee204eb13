"""Adadelta: steps scaled by the ratio of running RMS of updates and of gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ._checks import check_lr, check_nonneg
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """As ``torch.optim.Adadelta``::

    v = rho v + (1 - rho) g^2
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho u + (1 - rho) delta^2
    p -= lr * delta
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonneg("epsilon", eps)
        check_nonneg("weight_decay", weight_decay)
        super().__init__(
            params,
            {
                "lr": lr,
                "rho": rho,
                "eps": eps,
                "weight_decay": weight_decay,
                "maximize": maximize,
                "capturable": capturable,
                "foreach": foreach,
                "differentiable": differentiable,
            },
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
        if "square_avg" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            state["square_avg"] = np.zeros_like(param)
            state["acc_delta"] = np.zeros_like(param)
        state.next_step()
        if wd:
            grad = grad + wd * param
        v, u = state["square_avg"], state["acc_delta"]
        v *= rho
        v += (1 - rho) * grad * grad
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * grad
        u *= rho
        u += (1 - rho) * delta * delta
        param -= _scalar(group["lr"]) * delta
