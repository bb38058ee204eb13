"""RAdam: Adam with a rectified adaptive learning rate."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ._checks import check_betas, check_lr, check_nonneg
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """As ``torch.optim.RAdam``: with ``rho_inf = 2 / (1 - b2) - 1`` and
    ``rho_t = rho_inf - 2 t b2^t / (1 - b2^t)``, the step is
    ``lr m_hat r_t sqrt(1 - b2^t) / (sqrt(v) + eps)`` when ``rho_t > 5`` (``r_t`` the
    variance rectification), else the un-adapted ``lr m_hat``.
    ``decoupled_weight_decay=True`` decays the weights instead of adding ``wd p`` to g.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
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
                "maximize": maximize,
                "foreach": foreach,
                "capturable": capturable,
                "decoupled_weight_decay": decoupled_weight_decay,
                "differentiable": differentiable,
            },
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        lr, (b1, b2), eps, wd = _scalar(group["lr"]), group["betas"], group["eps"], group["weight_decay"]
        if "exp_avg" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        step = state.next_step()
        if wd:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * wd
            else:
                grad = grad + wd * param
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (grad - m) * (1 - b1)
        v *= b2
        v += (1 - b2) * grad * grad
        bc1, bc2 = 1 - b1**step, 1 - b2**step
        m_hat = m / bc1
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * step * (b2**step) / bc2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            param -= m_hat * lr * (math.sqrt(bc2) / (np.sqrt(v) + eps)) * rect
        else:
            param -= m_hat * lr
