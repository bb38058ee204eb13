"""RMSprop (with momentum and the centred variant) and Adagrad."""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .optimizer import Optimizer

__all__ = ["RMSprop", "Adagrad"]


class RMSprop(Optimizer):
    """``sq = alpha sq + (1 - alpha) g^2``; ``p -= lr g / (sqrt(sq) + eps)``, as
    ``torch.optim.RMSprop`` (centred: subtract the squared running mean of g first)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, *, maximize: bool = False) -> None:
        if lr < 0 or eps < 0 or momentum < 0 or weight_decay < 0 or alpha < 0:
            raise ValueError(f"Invalid RMSprop option: lr={lr}, alpha={alpha}, eps={eps}, "
                             f"weight_decay={weight_decay}, momentum={momentum}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize))

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: dict) -> None:
        alpha, eps, wd, mom = group["alpha"], group["eps"], group["weight_decay"], group["momentum"]
        if not state:
            state["step"] = 0.0
            state["square_avg"] = np.zeros_like(param)
            if mom > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        state["step"] = float(state["step"]) + 1
        if wd:
            grad = grad + wd * param
        sq = state["square_avg"]
        sq *= alpha
        sq += (1 - alpha) * grad * grad
        if group["centered"]:
            ga = state["grad_avg"]
            ga += (grad - ga) * (1 - alpha)
            avg = np.sqrt(sq - ga * ga) + eps
        else:
            avg = np.sqrt(sq) + eps
        if mom > 0:
            buf = state["momentum_buffer"]
            buf *= mom
            buf += grad / avg
            param -= group["lr"] * buf
        else:
            param -= group["lr"] * grad / avg


class Adagrad(Optimizer):
    """``sum += g^2``; ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps)``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, *, maximize: bool = False) -> None:
        if lr < 0 or lr_decay < 0 or weight_decay < 0 or initial_accumulator_value < 0 or eps < 0:
            raise ValueError(f"Invalid Adagrad option: lr={lr}, lr_decay={lr_decay}, "
                             f"weight_decay={weight_decay}, eps={eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps, maximize=maximize))

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: dict) -> None:
        if not state:
            state["step"] = 0.0
            state["sum"] = np.full_like(param, group["initial_accumulator_value"])
        state["step"] = step = float(state["step"]) + 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state["sum"] += grad * grad
        param -= clr * grad / (np.sqrt(state["sum"]) + group["eps"])
