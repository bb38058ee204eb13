"""Muon: momentum SGD whose update matrix is orthogonalised by a Newton-Schulz iteration."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ._checks import check_lr
from .optimizer import Optimizer, _scalar

__all__ = ["Muon"]


def _round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), kept in float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def zeropower_via_newtonschulz(
    grad: np.ndarray, ns_coefficients: tuple, ns_steps: int, eps: float
) -> np.ndarray:
    """About ``U V^T`` of ``grad = U S V^T``: ``ns_steps`` quintic Newton-Schulz iterations
    ``X = a X + (b G + c G^2) X`` (``G = X X^T``) on ``grad / ||grad||``, in bfloat16
    precision as PyTorch computes it (each result rounded to bfloat16)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _round_bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _round_bf16(np.float32(np.linalg.norm(x)))
    x = _round_bf16(x / max(norm, _round_bf16(np.float32(eps))))
    for _ in range(ns_steps):
        gram = _round_bf16(x @ x.T)
        update = _round_bf16(b * gram + c * (gram @ gram))
        x = _round_bf16(a * x + update @ x)
    return x.T if tall else x


class Muon(Optimizer):
    """As ``torch.optim.Muon``, for 2-d parameters (use e.g. AdamW for the others)::

        B = mu B + (1 - mu) g        (nesterov: U = g + mu (B - g), else U = B)
        O = NS(U);  p *= 1 - lr wd;  p -= adjusted_lr O

    with ``adjusted_lr = lr sqrt(max(1, A / B))`` (``adjust_lr_fn=None``/``"original"``) or
    ``0.2 lr sqrt(max(A, B))`` (``"match_rms_adamw"``) for an ``A x B`` parameter.
    The Newton-Schulz iteration runs in bfloat16 precision, as in PyTorch.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple = (3.4445, -4.775, 2.0315),
        eps: float = 1e-7,
        ns_steps: int = 5,
        adjust_lr_fn: str | None = None,
    ) -> None:
        check_lr(lr)
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(
            params,
            {
                "lr": lr,
                "weight_decay": weight_decay,
                "momentum": momentum,
                "nesterov": nesterov,
                "ns_coefficients": tuple(ns_coefficients),
                "eps": eps,
                "ns_steps": ns_steps,
                "adjust_lr_fn": adjust_lr_fn,
            },
        )
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}"
                    )

    def _update(self, group: dict, param: np.ndarray, grad: np.ndarray, state: Any) -> None:
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        mom, lr = group["momentum"], _scalar(group["lr"])
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = np.zeros_like(grad)
        buf = state["momentum_buffer"]
        buf += (grad - buf) * (1 - mom)
        update = grad + (buf - grad) * mom if group["nesterov"] else buf
        ortho = zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        rows, cols = param.shape
        fn = group["adjust_lr_fn"]
        if fn is None or fn == "original":
            ratio = math.sqrt(max(1, rows / cols))
        else:
            ratio = 0.2 * math.sqrt(max(rows, cols))
        param *= 1 - lr * group["weight_decay"]
        param -= (lr * ratio) * ortho.astype(param.dtype)
