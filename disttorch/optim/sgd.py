"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..kernels.fma import fma
from ._16_bit import is_16_bit, sgd_16_bit
from ._checks import check_lr, check_nonneg, flag_defaults
from .optimizer import Optimizer, _scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * d``, with ``d`` the (momentum-averaged) gradient, as ``torch.optim.SGD``.

    With momentum ``m``: ``buf = m * buf + (1 - dampening) * g`` (``buf = g`` at the first
    step) and ``d = g + m * buf`` (Nesterov) or ``d = buf``. ``foreach``/``fused`` are
    accepted and give the same arithmetic.
    """

    _elementwise_update = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        check_nonneg("weight_decay", _scalar(weight_decay))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                **flag_defaults(
                    foreach,
                    maximize,
                    False,
                    differentiable,
                    fused,
                    names=("maximize", "foreach", "differentiable", "fused"),
                ),
            ),
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        wd, m = _scalar(group["weight_decay"]), group["momentum"]
        if is_16_bit(param):
            return sgd_16_bit(group, param, grad, state, _scalar(group["lr"]), wd)
        # PyTorch's single-tensor step; each ``a + s * b`` is its kernel's fused multiply-add
        s = param.dtype.type
        if wd:
            grad = fma(s(wd), param, grad)
        if m:
            buf = state.get("momentum_buffer")
            if buf is None:
                state["momentum_buffer"] = buf = np.array(grad, dtype=param.dtype)
            else:
                buf *= m
                fma(s(1 - group["dampening"]), grad, buf, out=buf)
            grad = fma(s(m), buf, grad) if group["nesterov"] else buf
        fma(s(-_scalar(group["lr"])), grad, param, out=param)
