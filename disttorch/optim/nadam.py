"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ._checks import check_betas, check_lr, check_nonneg
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """As ``torch.optim.NAdam``: with ``mu_t = b1 (1 - 0.96^(t psi) / 2)`` (``psi`` the
    ``momentum_decay``) and ``mu_product`` their running product (kept as a 0-d tensor)::

        m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2;   d = sqrt(v / (1 - b2^t)) + eps
        p -= lr (1 - mu_t) / (1 - mu_product) g / d + lr mu_{t+1} / (1 - mu_product mu_{t+1}) m / d

    ``decoupled_weight_decay=True`` decays the weights (NAdamW) instead of adding ``wd p`` to g.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
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
        check_nonneg("momentum_decay", momentum_decay)
        super().__init__(
            params,
            {
                "lr": lr,
                "betas": tuple(betas),
                "eps": eps,
                "weight_decay": weight_decay,
                "momentum_decay": momentum_decay,
                "decoupled_weight_decay": decoupled_weight_decay,
                "maximize": maximize,
                "foreach": foreach,
                "capturable": capturable,
                "differentiable": differentiable,
            },
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        lr, (b1, b2), eps, wd = _scalar(group["lr"]), group["betas"], group["eps"], group["weight_decay"]
        if "exp_avg" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            state["mu_product"] = np.ones((), _scalar_dtype())
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
        step = state.next_step()
        if wd:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * wd
            else:
                grad = grad + wd * param
        psi = group["momentum_decay"]
        mu = b1 * (1.0 - 0.5 * 0.96 ** (step * psi))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
        mu_product = state["mu_product"]
        mu_product *= mu  # in the 0-d tensor's own precision, as PyTorch
        prod = float(mu_product)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (grad - m) * (1 - b1)
        v *= b2
        v += (1 - b2) * grad * grad
        denom = np.sqrt(v / (1 - b2**step)) + eps
        param += (-lr * (1.0 - mu) / (1.0 - prod)) * grad / denom
        param += (-lr * mu_next / (1.0 - prod * mu_next)) * m / denom
