"""``torchvision.ops.stochastic_depth``: drop whole residual branches (arXiv:1603.09382)."""

from __future__ import annotations

import disttorch as torch
from disttorch import nn
from disttorch._tensor import Tensor

__all__ = ["StochasticDepth", "stochastic_depth"]


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    """Zero the whole input (``mode="batch"``) or whole rows of the batch (``mode="row"``)
    with probability ``p``, scaling what survives by ``1 / (1 - p)``. A no-op when not
    ``training`` or ``p == 0``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    keep = 1.0 - p
    shape = [input.shape[0] if mode == "row" else 1] + [1] * (input.ndim - 1)
    noise = torch.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(keep)
    if keep > 0.0:
        noise.div_(keep)
    return input * noise


class StochasticDepth(nn.Module):
    """See :func:`stochastic_depth`."""

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input: Tensor) -> Tensor:
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p}, mode={self.mode})"
