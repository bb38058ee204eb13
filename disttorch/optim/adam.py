"""Adam, with AMSGrad and (``decoupled_weight_decay``) AdamW's weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..kernels.fma import fma
from ..kernels.lerp import lerp
from ..kernels.vml import sqrt
from ._16_bit import adam_16_bit, is_16_bit
from ._checks import check_betas, check_lr, check_nonneg, flag_defaults
from .optimizer import Optimizer, _scalar, _scalar_dtype

__all__ = ["Adam"]

_FLAGS = ("maximize", "foreach", "capturable", "differentiable", "fused")


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``::

        m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
        p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)

    ``weight_decay`` adds ``wd * p`` to the gradient (L2), or with
    ``decoupled_weight_decay=True`` (AdamW) decays the weights: ``p *= 1 - lr * wd``.
    ``amsgrad`` uses the running maximum of ``v``.
    """

    _elementwise_update = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonneg("epsilon", eps)
        check_betas(betas)
        check_nonneg("weight_decay", weight_decay)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=tuple(betas),
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                **flag_defaults(foreach, maximize, capturable, differentiable, fused, names=_FLAGS),
                decoupled_weight_decay=decoupled_weight_decay,
            ),
        )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        lr, (b1, b2), eps, wd = _scalar(group["lr"]), group["betas"], group["eps"], group["weight_decay"]
        b1, b2 = _scalar(b1), _scalar(b2)
        if "exp_avg" not in state:
            state["step"] = np.zeros((), _scalar_dtype())
            state["exp_avg"] = np.zeros_like(param)
            state["exp_avg_sq"] = np.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        step = state.next_step()
        if is_16_bit(param):
            return adam_16_bit(group, param, grad, state, step, lr, b1, b2)
        # PyTorch's single-tensor step: its kernels' roundings (lerp and addcmul fused)
        s = param.dtype.type
        if wd:
            if group.get("decoupled_weight_decay", False):
                param *= 1 - lr * wd
            else:
                grad = fma(s(wd), param, grad)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        lerp(m, grad, 1 - b1, out=m)
        v *= b2
        scratch = np.multiply(grad, s(1 - b2), out=np.empty_like(param))  # (an array even 0-d)
        fma(scratch, grad, v, out=v)
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
            v = state["max_exp_avg_sq"]
        t = sqrt(v)
        t /= (1 - b2**step) ** 0.5
        t += eps
        quotient = np.multiply(m, s(-(lr / (1 - b1**step))), out=scratch)
        quotient /= t
        param += quotient
