"""ATen operators that are ``torch.nn.functional`` functions under another signature
(``aten::embedding`` takes the table first, losses take their reduction as ATen's enum),
registered for the wrapper subclasses that are handed them (see
:mod:`disttorch.ops.aten_dispatch`)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops.op_namespace import REGISTERED
from . import activation, loss, sparse

__all__: list[str] = []


_REDUCTIONS = ("none", "mean", "sum")  # ATen's reduction enum, by value


def nll_loss_forward(
    self: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int
) -> tuple[Tensor, Tensor]:
    """``aten::nll_loss_forward``: the loss and the total weight of the counted targets."""
    out = loss.nll_loss(self, target, weight, ignore_index=ignore_index, reduction=_REDUCTIONS[reduction])
    kept = target != ignore_index
    counted = kept.to(self.dtype) if weight is None else weight[target.clamp(min=0)] * kept
    return out, counted.sum()


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, *_: Any) -> Tensor:
    """``aten::embedding``: rows of ``weight`` (ATen takes the table first)."""
    return sparse.embedding(indices, weight)


def _with_reduction(name: str) -> Any:
    """``aten::<name>(self, target, reduction)`` of the functional loss ``name``."""

    def op(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
        return getattr(loss, name)(self, target, reduction=_REDUCTIONS[reduction])

    return op


REGISTERED.update(
    {
        "aten::gelu": activation.gelu,
        "aten::nll_loss_forward": nll_loss_forward,
        "aten::embedding": embedding,
        **{f"aten::{name}": _with_reduction(name) for name in ("mse_loss", "l1_loss")},
    }
)
