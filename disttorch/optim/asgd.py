"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ._checks import check_lr, check_nonneg
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """As ``torch.optim.ASGD``::

        p = p (1 - lambd eta) - eta g
        ax = ax + mu (p - ax)   (ax = p while mu == 1)
        eta = lr / (1 + lambd lr t)^alpha;   mu = 1 / max(1, t - t0)

    ``eta`` and ``mu`` are 0-d tensors in the state, as PyTorch keeps them; the averaged
    parameters are ``state["ax"]``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonneg("weight_decay", weight_decay)
        super().__init__(
            params,
            {
                "lr": lr,
                "lambd": lambd,
                "alpha": alpha,
                "t0": t0,
                "weight_decay": weight_decay,
                "foreach": foreach,
                "maximize": maximize,
                "differentiable": differentiable,
                "capturable": capturable,
            },
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        lr, lambd = _scalar(group["lr"]), group["lambd"]
        if "ax" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            state["eta"] = np.array(lr, _scalar_dtype())
            state["mu"] = np.ones((), _scalar_dtype())
            state["ax"] = np.zeros_like(param)
        step = state.next_step()
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        eta, mu = float(state["eta"]), float(state["mu"])
        param *= 1 - lambd * eta
        param -= eta * grad
        ax = state["ax"]
        if mu != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        state["eta"][...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"][...] = 1 / max(1, step - group["t0"])
