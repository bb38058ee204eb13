"""``ctc_loss``: Connectionist Temporal Classification (Graves et al. 2006) as one op.

Forward runs the alpha recursion in log space over the extended label sequence (blanks
between and around the labels), vectorised over the batch and the label positions, one
NumPy step per time frame. Backward runs the beta recursion the same way and turns
``alpha + beta`` into the occupancy of each (frame, class), summed per class with one
``np.bincount``. The gradient with respect to ``log_probs`` is PyTorch's:
``exp(log_probs)`` minus that occupancy, within each sequence's input length. The exact
derivative is minus the occupancy alone; the ``exp`` term adds, per frame, a multiple of the
softmax, which the backward of a ``log_softmax`` producing ``log_probs`` (the usual case)
removes again, since each frame's occupancy sums to 1. For log-probabilities made another
way the two differ, and PyTorch's is the one trained with.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.function import Function
from ._numpy_backward import numpy_backward
from .loss import _reduction

__all__ = ["ctc_loss"]


def _ctc_targets(targets: np.ndarray, target_lengths: np.ndarray, n: int) -> np.ndarray:
    """Targets as a padded ``(N, S_max)`` int array, from padded or concatenated form, with
    PyTorch's checks of their sizes against ``target_lengths``."""
    checking = " for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
    if n and target_lengths.min() < 0:
        raise RuntimeError(
            f"Expected target_lengths to have value at least 0, but got value {int(target_lengths.min())} "
            "(while checking arguments for ctc_loss_allocate_outputs)"
        )
    if targets.ndim == 1 and targets.size != target_lengths.sum():
        raise RuntimeError(
            f"Expected tensor to have size {int(target_lengths.sum())} at dimension 0, but got size "
            f"{targets.size}{checking}"
        )
    if targets.ndim == 2 and n and targets.shape[1] < target_lengths.max():
        raise RuntimeError(
            f"Expected tensor to have size at least {int(target_lengths.max())} at dimension 1, but got "
            f"size {targets.shape[1]}{checking}"
        )
    if targets.ndim == 1:
        s_max = int(target_lengths.max()) if n else 0
        out = np.zeros((n, s_max), dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(target_lengths)[:-1]])
        for b in range(n):  # one slice per sequence
            out[b, : target_lengths[b]] = targets[offsets[b] : offsets[b] + target_lengths[b]]
        return out
    return targets.astype(np.int64)


def _logsumexp3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe)) + safe


def _shift(a: np.ndarray, k: int, forward: bool) -> np.ndarray:
    """``a`` moved ``k`` places along the last axis (towards higher indices if
    ``forward``), filled with -inf."""
    out = np.full_like(a, -np.inf)
    if forward:
        out[:, k:] = a[:, :-k]
    else:
        out[:, :-k] = a[:, k:]
    return out


class CtcLossFunction(Function):
    """Per-sequence negative log likelihood ``(N,)``; inputs: log_probs ``(T, N, C)``,
    extended labels ``(N, 2S+1)``, input and target lengths."""

    _raw = True

    @staticmethod
    def forward(ctx, log_probs, ext, in_len, tg_len, zero_infinity):
        lp = log_probs._data.astype(np.float64)
        t_max, n, _ = lp.shape
        length = ext.shape[1]
        emit = np.take_along_axis(lp, np.broadcast_to(ext[None], (t_max, n, length)), axis=2)
        in_seq = np.arange(length)[None, :] < (2 * tg_len[:, None] + 1)
        skip = np.zeros((n, length), dtype=bool)
        skip[:, 2:] = (ext[:, 2:] != ext[:, :-2]) & (ext[:, 2:] != ctx_blank(ext))
        alpha = np.full((t_max, n, length), -np.inf)
        alpha[0] = np.where((np.arange(length)[None, :] < 2) & in_seq, emit[0], -np.inf)
        for t in range(1, t_max):
            prev = alpha[t - 1]
            two = np.where(skip, _shift(prev, 2, True), -np.inf)
            alpha[t] = np.where(in_seq, _logsumexp3(prev, _shift(prev, 1, True), two) + emit[t], -np.inf)
        rows = np.arange(n)
        last_t = np.maximum(in_len - 1, 0)
        end = alpha[last_t, rows, 2 * tg_len]
        end_prev = np.where(tg_len > 0, alpha[last_t, rows, np.maximum(2 * tg_len - 1, 0)], -np.inf)
        ll = np.logaddexp(end, end_prev)
        nll = -ll
        infinite = ~np.isfinite(nll)
        if zero_infinity:
            nll = np.where(infinite, 0.0, nll)
        ctx.saved = (lp, emit, alpha, ext, in_len, tg_len, skip, in_seq, ll, infinite, zero_infinity)
        return nll.astype(log_probs._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        g = numpy_backward("ctc_loss", lambda g: (_ctc_backward(ctx, g),), grad)[0]
        return g, None, None, None, None


def ctx_blank(ext: np.ndarray) -> np.ndarray:
    """The blank label of each sequence (the first extended entry is always the blank)."""
    return ext[:, :1]


def _ctc_backward(ctx: CtcLossFunction, g: np.ndarray) -> np.ndarray:
    lp, emit, alpha, ext, in_len, tg_len, skip, in_seq, ll, infinite, zero_infinity = ctx.saved
    t_max, n, length = emit.shape
    c = lp.shape[2]
    beta = np.full((t_max, n, length), -np.inf)
    pos = np.arange(length)[None, :]
    ends = (pos == 2 * tg_len[:, None]) | ((pos == 2 * tg_len[:, None] - 1) & (tg_len[:, None] > 0))
    skip_next = np.zeros((n, length), dtype=bool)
    skip_next[:, :-2] = skip[:, 2:]  # s -> s + 2 allowed
    for t in range(t_max - 1, -1, -1):
        start_here = (t == in_len - 1)[:, None]
        inside = (t < in_len - 1)[:, None]
        if t + 1 < t_max:
            nxt = beta[t + 1]
            two = np.where(skip_next, _shift(nxt, 2, False), -np.inf)
            rec = _logsumexp3(nxt, _shift(nxt, 1, False), two) + emit[t]
        else:
            rec = np.full((n, length), -np.inf)
        beta[t] = np.where(start_here & ends, emit[t], np.where(inside & in_seq, rec, -np.inf))
    with np.errstate(invalid="ignore", over="ignore"):
        occupancy = np.exp(alpha + beta - emit - ll[None, :, None])
    occupancy = np.where(np.isfinite(occupancy), occupancy, 0.0)
    flat = (np.arange(t_max)[:, None, None] * n + np.arange(n)[None, :, None]) * c + ext[None]
    gamma = np.bincount(flat.ravel(), occupancy.ravel(), minlength=t_max * n * c).reshape(t_max, n, c)
    scale = np.where(infinite & zero_infinity, 0.0, g.astype(np.float64))
    within = (np.arange(t_max)[:, None] < in_len[None, :])[:, :, None]
    grad = (np.where(within, np.exp(lp), 0.0) - gamma) * scale[None, :, None]
    if np.any(infinite & ~zero_infinity):
        grad[:, infinite & ~zero_infinity, :] = np.nan
    return grad.astype(g.dtype)


@autocast_op("fp32")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist Temporal Classification loss.

    Args:
        log_probs: ``(T, N, C)`` (or unbatched ``(T, C)``) log-probabilities (``log_softmax``).
        targets: ``(N, S)`` padded or 1-D concatenated target sequences (no ``blank``).
        input_lengths, target_lengths: per-sequence lengths (tensors or sequences of ints).
        blank: the blank label. reduction: ``'mean'`` divides each loss by its target length
            and then averages over the batch; ``'sum'``; ``'none'``.
        zero_infinity: replace infinite losses (impossible alignments) and their gradients by 0.

    The gradient with respect to ``log_probs`` is the exact one (minus the alignment
    occupancy); PyTorch returns it plus ``exp(log_probs)``, which is the gradient with
    respect to the logits when ``log_probs`` is a ``log_softmax``: through a
    ``log_softmax`` both give the same gradients.
    """
    reduction = _reduction(reduction)
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise RuntimeError(
            f"ctc_loss: expected log_probs to be 2-D (unbatched) or 3-D, got {log_probs.ndim}-D"
        )
    in_len = np.atleast_1d(
        np.asarray(
            input_lengths._data if isinstance(input_lengths, Tensor) else input_lengths, dtype=np.int64
        )
    )
    tg_len = np.atleast_1d(
        np.asarray(
            target_lengths._data if isinstance(target_lengths, Tensor) else target_lengths, dtype=np.int64
        )
    )
    t_max, n, c = lp.shape
    tg = np.asarray(targets._data)
    if in_len.shape[0] != n or tg_len.shape[0] != n:
        raise RuntimeError(
            f"input_lengths and target_lengths must have batch_size ({n}) entries, got "
            f"{in_len.shape[0]} and {tg_len.shape[0]}"
        )
    if np.any(in_len > t_max) or np.any(in_len < 0):
        raise RuntimeError(
            f"Expected input_lengths to have value at most {t_max}, but got value {int(in_len.max())}"
        )
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    tgt = _ctc_targets(tg, tg_len, n)
    s_max = tgt.shape[1]
    ext = np.full((n, 2 * s_max + 1), blank, dtype=np.int64)
    ext[:, 1::2] = tgt[:, :s_max]
    nll = CtcLossFunction.apply(lp, ext, in_len, tg_len, zero_infinity)
    if unbatched:
        nll = nll.reshape(())
    if reduction == "mean":
        divisor = Tensor._make(np.maximum(tg_len, 1).astype(nll._data.dtype)).reshape(nll.shape)
        return (nll / divisor).mean()
    if reduction == "sum":
        return nll.sum()
    return nll
