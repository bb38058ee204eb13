"""RMSprop, with momentum and the centred variant."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..kernels.fma import fma
from ..kernels.lerp import lerp
from ..kernels.vml import sqrt
from ._checks import check_lr, check_nonneg
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """``sq = alpha sq + (1 - alpha) g^2``; ``p -= lr g / (sqrt(sq) + eps)``, as
    ``torch.optim.RMSprop`` (centred: subtract the squared running mean of g first;
    ``momentum``: ``buf = momentum buf + g / avg``, ``p -= lr buf``)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonneg("epsilon", eps)
        check_nonneg("momentum", momentum)
        check_nonneg("weight_decay", weight_decay)
        check_nonneg("alpha", alpha)
        super().__init__(
            params,
            {
                "lr": lr,
                "momentum": momentum,
                "alpha": alpha,
                "eps": eps,
                "centered": centered,
                "weight_decay": weight_decay,
                "capturable": capturable,
                "foreach": foreach,
                "maximize": maximize,
                "differentiable": differentiable,
            },
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        alpha, eps, wd, mom = group["alpha"], group["eps"], group["weight_decay"], group["momentum"]
        if "square_avg" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            state["square_avg"] = np.zeros_like(param)
            if mom > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        state.next_step()
        # PyTorch's single-tensor step: its kernels' roundings (addcmul and add with alpha fused)
        s = param.dtype.type
        if wd:
            grad = fma(s(wd), param, grad)
        sq = state["square_avg"]
        sq *= alpha
        scratch = np.multiply(grad, s(1 - alpha), out=np.empty_like(param))  # (an array even 0-d)
        fma(scratch, grad, sq, out=sq)
        if group["centered"]:
            ga = state["grad_avg"]
            lerp(ga, grad, 1 - alpha, out=ga)
            avg = sqrt(fma(-ga, ga, sq))
        else:
            avg = sqrt(sq)
        avg += eps
        lr = _scalar(group["lr"])
        if mom > 0:
            buf = state["momentum_buffer"]
            buf *= mom
            buf += np.divide(grad, avg, out=scratch)
            fma(s(-lr), buf, param, out=param)
        else:
            quotient = np.multiply(grad, s(-lr), out=scratch)
            quotient /= avg
            param += quotient
