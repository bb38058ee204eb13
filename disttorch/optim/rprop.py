"""Rprop: resilient backpropagation, per-coordinate step sizes driven by gradient signs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ._checks import check_lr
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """As ``torch.optim.Rprop``: each coordinate's step size grows by ``etas[1]`` while the
    gradient keeps its sign, shrinks by ``etas[0]`` when it flips (that step is skipped and
    the gradient forgotten), and stays within ``step_sizes``; ``p -= sign(g) * step_size``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple = (0.5, 1.2),
        step_sizes: tuple = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(
            params,
            {
                "lr": lr,
                "etas": tuple(etas),
                "step_sizes": tuple(step_sizes),
                "foreach": foreach,
                "maximize": maximize,
                "differentiable": differentiable,
                "capturable": capturable,
            },
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        if "prev" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            state["prev"] = np.zeros_like(param)
            state["step_size"] = np.full_like(param, _scalar(group["lr"]))
        state.next_step()
        sign = np.sign(grad * state["prev"])
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0)).astype(param.dtype)
        size = state["step_size"]
        size *= factor
        np.clip(size, lo, hi, out=size)
        grad = np.where(sign < 0, 0, grad).astype(param.dtype)
        param -= np.sign(grad) * size
        state["prev"][...] = grad
