"""Adamax: Adam with the infinity norm of past gradients in the denominator."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ._checks import check_betas, check_lr, check_nonneg
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """As ``torch.optim.Adamax``::

    m = b1 m + (1 - b1) g;   u = max(b2 u, |g| + eps)
    p -= lr / (1 - b1^t) * m / u
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonneg("epsilon", eps)
        check_betas(betas)
        check_nonneg("weight_decay", weight_decay)
        super().__init__(
            params,
            {
                "lr": lr,
                "betas": tuple(betas),
                "eps": eps,
                "weight_decay": weight_decay,
                "foreach": foreach,
                "maximize": maximize,
                "differentiable": differentiable,
                "capturable": capturable,
            },
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        b1, b2 = group["betas"]
        if "exp_avg" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            state["exp_avg"] = np.zeros_like(param)
            state["exp_inf"] = np.zeros_like(param)
        step = state.next_step()
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        m, u = state["exp_avg"], state["exp_inf"]
        m += (grad - m) * (1 - b1)
        u *= b2
        np.maximum(u, np.abs(grad) + group["eps"], out=u)
        param -= _scalar(group["lr"]) / (1 - b1**step) * m / u
