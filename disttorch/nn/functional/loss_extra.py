"""The margin, embedding, likelihood and sequence losses: ``margin_ranking_loss``,
``hinge_embedding_loss``, ``soft_margin_loss``, ``multilabel_soft_margin_loss``,
``cosine_embedding_loss``, ``multi_margin_loss``, ``multilabel_margin_loss``,
``triplet_margin_loss``, ``triplet_margin_with_distance_loss``, ``poisson_nll_loss``,
``gaussian_nll_loss`` and ``linear_cross_entropy`` (``ctc_loss`` lives in ``ctc.py``).

Each is composed from differentiable tensor ops, so its gradient (of any order) comes
from the graph.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.forward_ad import refuse_tangents
from ...autograd.function import named_node
from ...autograd.grad_reads import reads_inputs
from ...ops import elementwise as _ew
from ...ops._helpers import complex_kernel_error
from ...ops.opmath import is_low
from .activation import logsigmoid, relu, softplus
from .distance import pairwise_distance
from .linear import linear
from .loss import _non_differentiable, _reduction, cross_entropy

__all__ = [
    "cosine_embedding_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "linear_cross_entropy",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "poisson_nll_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _const(value: Any, like: Tensor) -> Tensor:
    return Tensor._make(np.asarray(value, dtype=like._data.dtype))


@autocast_op("fp32")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -y * (x1 - x2) + margin)``, ``y`` in {1, -1}."""
    reduction = _reduction(reduction, size_average, reduce)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got "
            f"sizes: input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _reduce(_hinge(-target * (input1 - input2) + margin), reduction)


def _hinge(z: Tensor) -> Tensor:
    """``max(z, 0)`` as PyTorch's ranking and embedding losses compute it (``clamp_min``: at
    ``z == 0`` the gradient passes, where ``relu``'s is 0)."""
    return _ew.clamp_min(z, 0.0)


@autocast_op("fp32")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``x`` where ``y == 1``, ``max(0, margin - x)`` where ``y == -1`` (and, as PyTorch,
    their sum where ``y`` is neither)."""
    reduction = _reduction(reduction, size_average, reduce)
    zero = _const(0, input)
    margin_part = _ew.where(target != 1, _hinge(margin - input), zero)
    same_part = _ew.where(target != -1, input, zero)
    return _reduce(margin_part + same_part, reduction)


@autocast_op("fp32")
def soft_margin_loss(
    input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
) -> Tensor:
    """``log(1 + exp(-y * x))``."""
    reduction = _reduction(reduction, size_average, reduce)
    target = _non_differentiable(target, "soft_margin_loss", "target")
    return named_node(_reduce(softplus(-target * input), reduction), "SoftMarginLossBackward0")


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Per sample, the mean over classes of ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))``."""
    reduction = _reduction(reduction, size_average, reduce, old_mean=False)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.ndim - 1) / input.shape[-1]
    return _reduce(loss, reduction)


@autocast_op("fp32")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where ``y == 1``, ``max(0, cos(x1, x2) - margin)`` where ``y == -1``."""
    reduction = _reduction(reduction, size_average, reduce)
    if target.ndim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != target.ndim + 1 or input2.ndim != target.ndim + 1:
        raise RuntimeError(
            f"{target.ndim}D target tensor expects {target.ndim + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    eps = 1e-12  # PyTorch's EPSILON on the squared norms
    dot = (input1 * input2).sum(-1)
    cos = dot / (((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps)).sqrt()
    zero = _const(0, cos)
    loss = _ew.where(target == 1, 1 - cos, zero) + _ew.where(target == -1, _hinge(cos - margin), zero)
    return _reduce(loss, reduction)


def _check_margin_input(input: Tensor) -> None:
    """The margin losses' input: a non-empty vector, or a matrix of non-empty rows."""
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}"
        )


def _refuse_16_bit(kernel: str, input: Tensor) -> None:
    """PyTorch's ``NotImplementedError`` of a loss kernel without float16/bfloat16 loops."""
    if is_low(input._data.dtype):
        raise complex_kernel_error(kernel, input)


@autocast_op("fp32")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge: per sample ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``
    (times ``weight[y]``)."""
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    checked = _non_differentiable(weight, "multi_margin_loss")  # its tangent detached
    refuse_tangents("multi_margin_loss", input, weight)  # PyTorch has no forward rule
    weight = checked
    _check_margin_input(input)
    _refuse_16_bit("multi_margin_loss_cpu_kernel", input)
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(-1).long()
    c = x.shape[1]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    if t._data.size and (t._data.min() < 0 or t._data.max() >= c):
        raise RuntimeError("target out of range")
    picked = x.gather(1, t.reshape(-1, 1))
    z = relu(margin - picked + x)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t).reshape(-1, 1)
    not_target = Tensor._make(np.arange(c)[None, :] != t._data[:, None])
    loss = _ew.where(not_target, z, _const(0, z)).sum(1) / c
    if input.ndim != 2:
        loss = loss.reshape(())
    out = named_node(_reduce(loss, reduction), "MultiMarginLossBackward0")
    return reads_inputs(out, "aten::multi_margin_loss_backward")


@autocast_op("fp32")
def multilabel_margin_loss(
    input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
) -> Tensor:
    """Multi-label hinge: the targets of a sample are its leading non-negative entries of
    ``target`` (ended by -1); per sample ``sum_{j in y, i not in y} max(0, 1 - (x[j] - x[i])) / C``,
    a target listed twice counted twice (as PyTorch's loop over the list)."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_margin_input(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _refuse_16_bit("multilabel_margin_loss_forward_out_frame", input)
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target._data.reshape(x.shape).astype(np.int64)
    n, c = x.shape
    valid = np.cumprod(t >= 0, axis=1).astype(bool)  # entries before the first -1
    if np.any((t >= c) & valid):
        raise RuntimeError("multilabel_margin_loss: target out of range")
    refuse_tangents("multilabel_margin_loss_forward", input)  # PyTorch has no forward rule
    listed = np.zeros((n, c), dtype=x._data.dtype)  # how often each class is listed
    rows = np.broadcast_to(np.arange(n)[:, None], t.shape)
    np.add.at(listed, (rows[valid], t[valid]), 1)
    # pairs (j target, i non-target): hinge of x[j] - x[i], once per listing of j
    hinge = relu(1 - (x.unsqueeze(2) - x.unsqueeze(1)))  # [n, j, i]
    pair = Tensor._make(listed[:, :, None] * (listed == 0)[:, None, :])
    loss = (hinge * pair).sum((1, 2)) / c
    if input.ndim != 2:
        loss = loss.reshape(())
    return reads_inputs(_reduce(loss, reduction), "aten::multilabel_margin_loss_backward")


@autocast_op("fp32")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the ``p``-norm pairwise distance;
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance."""
    reduction = _reduction(reduction, size_average, reduce)
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same "
            f"number of dimensions, but got: anchor {anchor.ndim}D, positive "
            f"{positive.ndim}D, and negative {negative.ndim}D inputs"
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _ew.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_hinge(margin + d_pos - d_neg), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """:func:`triplet_margin_loss` with any ``distance_function`` (default: pairwise
    Euclidean distance)."""
    reduction = _reduction(reduction, old_mean=False)
    if margin <= 0:
        raise ValueError(
            f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
        )
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = _ew.minimum(d_neg, dist(positive, negative))
    return _reduce(_hinge(d_pos - d_neg + margin), reduction)


@autocast_op("fp32")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: Any = None,
    eps: float = 1e-8,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log likelihood: ``exp(x) - y * x`` (``log_input``) or
    ``x - y * log(x + eps)``; ``full`` adds Stirling's term ``y log y - y + log(2 pi y) / 2``
    where ``y > 1`` (a function of the target: a target that requires grad gets its derivative)."""
    reduction = _reduction(reduction, size_average, reduce, old_mean=False)
    loss = (input.exp() - target * input) if log_input else (input - target * (input + eps).log())
    if full:  # differentiable in the target, as PyTorch's (NaN where a target of 0 meets log 0)
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log likelihood ``0.5 * (log(max(var, eps)) + (x - y)^2 / max(var, eps))``
    (+ ``0.5 log(2 pi)`` with ``full``); ``var`` may have one dim fewer or a last dim of 1
    (homoscedastic), or be a float."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _const(var, input).expand(*input.shape)
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if np.any(var._data < 0):
        raise ValueError("var has negative entry/entries")
    # PyTorch clamps var in place without recording: the gradient passes as if unclamped
    with_eps = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (with_eps.log() + (input - target) ** 2 / with_eps)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; the class
    ``options`` (chunking) is accepted; the logits are computed in one piece."""
    logits = linear(input, linear_weight, linear_bias)
    return cross_entropy(
        logits,
        target,
        weight,
        ignore_index=-100 if ignore_index is None else ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )
