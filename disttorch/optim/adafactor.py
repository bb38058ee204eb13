"""Adafactor: Adam-like steps with a factored (row x column) second-moment estimate."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ._checks import check_lr
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """As ``torch.optim.Adafactor`` (no first moment). At step ``t``, with
    ``beta2_t = 1 - t^beta2_decay``, ``rho_t = min(lr, 1 / sqrt(t))`` and
    ``alpha = max(eps2, RMS(p)) rho_t``: a matrix (or batch of matrices, the last two dims)
    keeps row and column means of ``g^2``, ``V = R C / mean(R)``; a vector keeps ``V`` itself.
    ``U = g / sqrt(max(V, eps1^2))``; ``p -= alpha / max(1, RMS(U) / d) U``, after the
    decoupled decay ``p *= 1 - lr wd``. ``eps1=None`` means the dtype's machine epsilon.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(
            params,
            {
                "lr": lr,
                "beta2_decay": beta2_decay,
                "eps": tuple(eps),
                "d": d,
                "weight_decay": weight_decay,
                "foreach": foreach,
                "maximize": maximize,
            },
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        lr = _scalar(group["lr"])
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = float(np.finfo(param.dtype).eps)
        if "step" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            if grad.ndim > 1:
                state["row_var"] = np.zeros(grad.shape[:-1] + (1,), param.dtype)
                state["col_var"] = np.zeros(grad.shape[:-2] + (1, grad.shape[-1]), param.dtype)
            else:
                state["variance"] = np.zeros_like(param)
        step = state.next_step()
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / math.sqrt(step))
        alpha = max(eps2, float(np.linalg.norm(param.ravel())) / math.sqrt(param.size)) * rho
        if group["weight_decay"]:
            param *= 1 - lr * group["weight_decay"]
        sq = grad * grad
        if grad.ndim > 1:
            row, col = state["row_var"], state["col_var"]
            row += (sq.mean(axis=-1, keepdims=True) - row) * one_minus_beta2
            col += (sq.mean(axis=-2, keepdims=True) - col) * one_minus_beta2
            var = (row @ col) / np.maximum(row.mean(axis=-2, keepdims=True), eps1)
        else:
            var = state["variance"]
            var += (sq - var) * one_minus_beta2
        update = grad / np.sqrt(np.maximum(var, eps1 * eps1))
        denom = max(1.0, float(np.linalg.norm(update.ravel())) / (math.sqrt(update.size) * group["d"]))
        param -= (alpha / denom) * update
