"""Adagrad: per-coordinate steps scaled by the root of the summed squared gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..kernels.fma import fma
from ..kernels.vml import sqrt
from ._checks import check_lr, check_nonneg, flag_defaults
from .optimizer import Optimizer, _ArrayState, _scalar, _scalar_dtype

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """``sum += g^2``; ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps)``, as
    ``torch.optim.Adagrad`` (its state is created with the optimiser, as PyTorch does)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_lr(lr)
        check_nonneg("lr_decay", lr_decay)
        check_nonneg("weight_decay", weight_decay)
        check_nonneg("initial_accumulator_value", initial_accumulator_value)
        check_nonneg("epsilon", eps)
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                eps=eps,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                **flag_defaults(
                    foreach,
                    maximize,
                    False,
                    differentiable,
                    fused,
                    names=("foreach", "maximize", "differentiable", "fused"),
                ),
            ),
        )
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p._data, _ArrayState(self.state[p]))

    @staticmethod
    def _init_state(group: dict, param: np.ndarray, state: Any) -> None:
        state["step"] = np.zeros((), _scalar_dtype())
        state["sum"] = np.full_like(param, group["initial_accumulator_value"])

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        if "sum" not in state:  # a parameter added by add_param_group
            self._init_state(group, param, state)
        step = state.next_step()
        # PyTorch's single-tensor step: its kernels' roundings (add with alpha and addcmul fused)
        s = param.dtype.type
        if group["weight_decay"]:
            grad = fma(s(group["weight_decay"]), param, grad)
        clr = _scalar(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        fma(grad, grad, state["sum"], out=state["sum"])
        std = sqrt(state["sum"])
        std += group["eps"]
        quotient = np.multiply(grad, s(-clr))
        quotient /= std
        param += quotient
