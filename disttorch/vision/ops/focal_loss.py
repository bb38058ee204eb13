"""``torchvision.ops.focal_loss``: the focal loss of RetinaNet (arXiv:1708.02002)."""

from __future__ import annotations

import disttorch as torch
from disttorch._tensor import Tensor
from disttorch.nn import functional as F

__all__ = ["sigmoid_focal_loss"]


def sigmoid_focal_loss(
    inputs: Tensor, targets: Tensor, alpha: float = 0.25, gamma: float = 2, reduction: str = "none"
) -> Tensor:
    """Binary cross-entropy of the logits ``inputs`` against ``targets`` (in [0, 1]), scaled
    by ``(1 - p_t) ** gamma`` and, unless ``alpha`` is -1, weighted ``alpha`` for positives
    and ``1 - alpha`` for negatives; ``reduction`` is ``'none'``, ``'mean'`` or ``'sum'``."""
    if not (0 <= alpha <= 1) and alpha != -1:
        raise ValueError(f"Invalid alpha value: {alpha}. alpha must be in the range [0,1] or -1 for ignore.")
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(
        f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', 'sum'"
    )
