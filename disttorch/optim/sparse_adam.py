"""SparseAdam: Adam that moves only the entries a (sparse) gradient touches."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._checks import check_betas, check_lr, check_nonneg
from .optimizer import Optimizer, _scalar

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """As ``torch.optim.SparseAdam``: for the entries present in the gradient only,
    ``m``, ``v`` follow Adam and ``p -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)``;
    other entries (and their moments) stay as they are.

    Difference from PyTorch: a sparse COO gradient (``grad.is_sparse``) gives its stored
    indices; a dense gradient (PyTorch raises for one) is accepted, its nonzero entries
    being the ones touched, so ``nn.Embedding(sparse=False)`` rows that were not looked up
    keep their moments, as with a sparse gradient.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonneg("epsilon", eps)
        check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "maximize": maximize})

    def step(self, closure: Any = None) -> Any:
        """One SparseAdam step; ``closure`` re-evaluates the loss."""
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad

            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._sparse_update(group, p, p.grad)
                    p._bump_version()
        return loss

    def _sparse_update(self, group: dict, p: Tensor, grad: Tensor) -> None:
        param = p._data
        if getattr(grad, "is_sparse", False):
            grad = grad.coalesce()
            idx = tuple(grad.indices()._data)
            values = grad.values()._data
            mask = np.zeros(param.shape[: len(idx)], dtype=bool)
            mask[idx] = True
            dense = np.zeros_like(param)
            dense[idx] = values
            mask = np.broadcast_to(mask.reshape(mask.shape + (1,) * (param.ndim - mask.ndim)), param.shape)
        else:
            dense = grad._data
            mask = dense != 0
        if group["maximize"]:
            dense = -dense
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._make(np.zeros_like(param))
            state["exp_avg_sq"] = Tensor._make(np.zeros_like(param))
        state["step"] += 1
        step = state["step"]
        b1, b2 = group["betas"]
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        g = dense[mask]
        m_new = m[mask] + (g - m[mask]) * (1 - b1)
        v_new = v[mask] + (g * g - v[mask]) * (1 - b2)
        m[mask], v[mask] = m_new, v_new
        step_size = _scalar(group["lr"]) * math.sqrt(1 - b2**step) / (1 - b1**step)
        param[mask] -= step_size * m_new / (np.sqrt(v_new) + group["eps"])
