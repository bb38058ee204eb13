"""Loss functions: ``cross_entropy`` (one fused Function: log-softmax, pick, reduce),
``nll_loss``, ``mse_loss``, ``l1_loss``, ``smooth_l1_loss``, ``huber_loss``,
``binary_cross_entropy``, ``binary_cross_entropy_with_logits``, ``kl_div``.

Class-index losses accept ``(N, C)``, ``(C,)`` and ``(N, C, d1, ...)`` inputs with
targets ``(N)``, ``()`` and ``(N, d1, ...)``. Each loss is one Function whose backward
multiplies the upstream gradient by the per-entry derivative: from forward's arrays for
the class-index losses (from a softmax recomputed in the graph under
``create_graph=True``), from tensor ops on the saved inputs for the others, so second
derivatives are right throughout.

A class-index loss over a batch of ``(N, C)`` entries is added up in PyTorch's cascade
order (``kernels/cascade_sum.py``), so its mean or sum has PyTorch's bits; over
``(N, C, d1, ...)`` the entries go through the same cascade in ``(N, d1, ...)`` order, as
PyTorch's ``nll_loss2d`` walks them. float16 and
bfloat16 ``cross_entropy`` is PyTorch's composition, ``nll_loss(log_softmax(x))``, each
computed in the 16-bit type as PyTorch's kernels round it.

Large inputs use the op's threads (``kernels.threads``): each per-entry loss is one
element-wise function split by :func:`~disttorch.kernels.threads.elementwise` (the same bits
for every thread count), the cross-entropy's rows by ``map_rows``, and the reduction's sum
adds per-thread partial sums in order (deterministic for a thread count, within float
tolerance across counts); backward runs on tensor ops, themselves split.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import _native_warnings
from ..._dtype import promote_types, result_type, scalar_type_name
from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.function import Function, ShownNode, named_node
from ...autograd.grad_mode import is_grad_enabled, recording
from ...autograd.transform_leaves import transform_kinds
from ...kernels.cascade_sum import cascade_sum
from ...kernels.reductions import ufunc_reduce
from ...kernels.softmax import log_softmax
from ...kernels.threads import elementwise, map_rows
from ...kernels.torch_sum import whole_sum
from ...kernels.vml import c_log, c_log1p
from ...ops import elementwise as _ew
from ...ops._helpers import broadcast_error, complex_kernel_error
from ...ops.dtype_rules import check_cast, check_kernel, refuse_bool_subtraction
from ...ops.opmath import is_low
from ...ops.softmax import Softmax
from ...ops.softmax import log_softmax as log_softmax_op
from .activation import softplus

__all__ = [
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
]

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction: str, size_average: Any = None, reduce: Any = None, old_mean: bool = True) -> str:
    """Resolve the legacy ``size_average``/``reduce`` flags (with PyTorch's deprecation
    warning, at the line that resolves them, as PyTorch's) and check ``reduction``; with
    ``old_mean``, ``'elementwise_mean'`` is ``'mean'`` (with PyTorch's warning), as for the
    losses PyTorch computes in C++ (those it writes in Python refuse it)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
            stacklevel=2,
        )
    if reduction == "elementwise_mean" and old_mean:
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.", stacklevel=2
        )
        return "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    """The per-entry ``loss`` reduced: its mean (divided as ``np.mean`` divides), its sum, or
    itself for ``'none'``; a dense float32/float64 loss added in PyTorch's order
    (``kernels/torch_sum.py``), float16/bfloat16 added in float32 and rounded once, as
    PyTorch's reductions."""
    if reduction == "none":
        return loss
    if not loss.size:  # the mean of nothing is NaN, quietly, as in PyTorch
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.asarray(
                loss.mean(dtype=loss.dtype) if reduction == "mean" else loss.sum(dtype=loss.dtype)
            )
    acc = np.dtype(np.float32) if is_low(loss.dtype) else loss.dtype
    total = whole_sum(loss)  # PyTorch's loss.mean()/sum() order (float32/float64)
    total = np.asarray(ufunc_reduce(np.add, loss, None, acc) if total is None else total)
    if reduction == "mean":
        return np.true_divide(total, np.intp(loss.size)).astype(loss.dtype)
    return total.astype(loss.dtype, copy=False)


# ---------------------------------------------------------------------- class-index targets
def _class_targets(input: np.ndarray, target: np.ndarray, ignore_index: int) -> tuple:
    """Check a class-index target against ``input`` (class dim 1): int64, or uint8 beside an
    input of at most two dims, as PyTorch's kernels; return the target as int64 with ignored
    entries set to 0, and the mask of entries that count."""
    if target.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {scalar_type_name(target.dtype)}"
        )
    if input.ndim > 2 and target.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {scalar_type_name(target.dtype)}")
    n_classes = input.shape[1]
    if input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    if input.shape[2:] != target.shape[1:]:
        expected = [input.shape[0], *input.shape[2:]]
        raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    valid = target != ignore_index
    bad = valid & ((target < 0) | (target >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(target[bad].flat[0])} is out of bounds.")
    return np.where(valid, target, 0).astype(np.int64, copy=False), valid


def _batched(input: Tensor, target: Tensor) -> tuple:
    """Arrays with a batch dim: an unbatched ``(C,)`` input and its ``()`` or ``(1,)`` class
    target (or ``(C,)`` probabilities) gain one; class targets' shapes checked in PyTorch's
    order (``nll_loss_nd``: the batch sizes, a 0-d target's counting as 0, then the target's
    dims)."""
    x, t = input._data, target._data
    if x.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if t.shape == x.shape:  # probability targets (cross_entropy)
        return (x[None], t[None], True) if x.ndim == 1 else (x, t, False)
    if x.ndim > 1 and x.shape[0] != (t.shape[0] if t.ndim else 0):
        raise ValueError(
            f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({t.shape[0] if t.ndim else 0})."
        )
    if x.ndim > 1 and not t.ndim:  # PyTorch reads the size of a 0-d target's dim 0
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if x.ndim <= 2 and t.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x.ndim == 1:
        if t.ndim == 1 and t.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}")
        return x[None], t.reshape(1), True
    return x, t, False


def _class_dim_view(a: np.ndarray, ndim: int) -> np.ndarray:
    """Reshape a per-class vector (C,) to broadcast against (N, C, d1, ...)."""
    return a.reshape((1, -1) + (1,) * (ndim - 2))


def _class_index(t: np.ndarray) -> tuple:
    """The index that picks, from an ``(N, C, d1, ...)`` array, each entry's target class
    ``t`` (``(N, d1, ...)``): ``a[_class_index(t)]`` has the shape of ``t``. (What
    ``np.take_along_axis(a, t[:, None], 1)[:, 0]`` gives, for a third of its cost: NumPy's
    helper builds this index in Python on every call, which dominated a small batch's loss.)"""
    grids = [np.arange(n).reshape((-1,) + (1,) * (t.ndim - 1 - i)) for i, n in enumerate(t.shape)]
    return (grids[0], t, *grids[1:])


def _nll_terms(log_probs: np.ndarray, pick: tuple, w_t: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Each entry's ``-log_probs[n, t] * w[t]`` at its target class (``pick``), and 0.0 where
    its target is ignored, as PyTorch writes it (the product gives -0.0 there for a positive
    log-probability)."""
    terms = -log_probs[pick] * w_t
    terms[~valid] = 0
    return terms


def _pick_weights(weight: Tensor | None, t: np.ndarray, valid: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Per-entry weight of the target class (0 where ignored)."""
    if weight is None:
        return valid.astype(dtype)
    return np.where(valid, weight._data.astype(dtype, copy=False)[t], 0).astype(dtype, copy=False)


def _probability_coef(t: np.ndarray, w: np.ndarray | None, eps: np.floating, n_classes: int) -> np.ndarray:
    """Cross-entropy's coefficients for probability targets: ``t`` mixed with the uniform
    distribution by ``eps`` (label smoothing), times the class weight ``w``; element-wise."""
    coef = t.astype(eps.dtype, copy=True)
    if eps > 0:
        coef *= 1 - eps
        coef += eps / n_classes
    if w is not None:
        coef *= w
    return coef


def _nll_node(ndim: int) -> str:
    """PyTorch's node for a negative log-likelihood over a batched input of ``ndim`` dims."""
    return "NllLossBackward0" if ndim <= 2 else "NllLoss2DBackward0"


def _batch_mean_or_sum(
    per_entry: np.ndarray, w_t: np.ndarray, valid: np.ndarray, weighted: bool, reduction: str
) -> tuple:
    """``(loss, divisor)`` of a class-index loss over a flat batch of entries, added
    as PyTorch's ``nll_loss`` adds them (``kernels/cascade_sum.py``), so the loss has its
    bits; the divisor (``'mean'``) is the targets' summed weights, their count unweighted."""
    dtype = per_entry.dtype
    counted = None if valid.all() else valid
    total = cascade_sum(per_entry, counted) + dtype.type(0)  # from a zero, as PyTorch's: -0.0 adds up to 0.0
    divisor = cascade_sum(w_t, counted) if weighted else dtype.type(np.count_nonzero(valid))
    if reduction == "sum":
        return np.asarray(total, dtype), divisor
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # all ignored: nan
        return np.asarray(np.asarray(total, dtype) / np.asarray(divisor, dtype)), divisor


#: the sum over the classes of probability targets' loss: over all entries when reduced
_SUM_NODE = {"mean": "SumBackward0", "sum": "SumBackward0", "none": "SumBackward1"}


class CrossEntropyFunction(Function):
    """Fused cross-entropy. Forward computes the log-softmax once; the loss is
    ``-sum_c a_c log p_c`` per entry for a coefficient vector ``a`` (one-hot times the
    class weight, plus label smoothing, or the probability target), so backward is
    ``(sum_c a_c) * softmax - a``, scaled by the reduction."""

    _raw = True
    _profiled_as = "aten::cross_entropy_loss"

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction, label_smoothing):
        x, t, unbatched = _batched(input, target)
        if x.dtype.kind not in "fV":  # PyTorch's log_softmax over the classes refuses it
            raise complex_kernel_error(f"log_softmax{'_lastdim' if x.ndim == 2 else ''}_kernel_impl", input)
        if t.shape != x.shape and not label_smoothing:  # PyTorch's log_softmax + nll_loss
            ctx._node_name = _nll_node(x.ndim)
        elif t.shape == x.shape:  # PyTorch's -(target * log_softmax).sum(1), divided for the mean
            ctx._node_name = "DivBackward1" if reduction == "mean" else "NegBackward0"
        else:  # class targets, smoothed: PyTorch adds the smoothing term to the nll loss
            ctx._node_name = "AddBackward0"
        n_classes = x.shape[1]
        logp, probs = log_softmax(x, 1)
        probs = probs.astype(x.dtype, copy=False)  # (float16's come in float32)
        w = None if weight is None else _class_dim_view(weight._data.astype(x.dtype, copy=False), x.ndim)
        eps = x.dtype.type(label_smoothing)
        if t.shape == x.shape:  # probability targets
            if t.dtype.kind not in "fV":
                raise RuntimeError(
                    f"expected target dtype to be a floating point type when the "
                    f"target has the input's shape, but got {scalar_type_name(t.dtype)}"
                )
            if ignore_index >= 0:
                raise RuntimeError("ignore_index is not supported for floating point target")
            coef = elementwise(_probability_coef, t, w, eps, n_classes)
            denom = x.size // n_classes if n_classes else 0  # no classes: 0 / 0, as PyTorch's
            pick = None
        else:
            tt, valid = _class_targets(x, t, ignore_index)
            pick = _class_index(tt)
            w_t = _pick_weights(weight, tt, valid, x.dtype)
            denom = w_t.sum()
            coef = None
            if label_smoothing > 0:
                class_shape = (1, n_classes) + (1,) * (x.ndim - 2)
                smooth = (eps / n_classes) * (w if w is not None else np.ones(class_shape, x.dtype))
                coef = elementwise(np.multiply, smooth, valid[:, None])
                coef[pick] = coef[pick] + (1 - eps) * w_t
        if coef is None:
            per_entry = _nll_terms(logp, pick, w_t, valid)
        else:
            per_entry = map_rows(lambda lp, c: (-(lp * c).sum(axis=1),), logp, coef)[0]
        # probability targets: PyTorch negates the whole sum (-0.0 where every term is 0)
        total = (lambda: -(-per_entry).sum()) if pick is None else per_entry.sum
        if coef is None and reduction != "none":  # (N, C, d1, ...): in (N, d1, ...) order
            flat = [a.reshape(-1) for a in (per_entry, w_t, valid)]
            out, denom = _batch_mean_or_sum(*flat, weight is not None, reduction)
        elif reduction == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):  # all ignored: nan, as PyTorch
                out = np.asarray(total() / x.dtype.type(denom))
        elif reduction == "sum":
            out = np.asarray(total())
        else:
            out = per_entry[0] + x.dtype.type(0) if unbatched else per_entry  # (PyTorch sums one entry)
        ctx.kind = (reduction, bool(label_smoothing), pick is None, _nll_node(x.ndim))
        if ctx.needs_input_grad and ctx.needs_input_grad[0]:
            ctx.save_for_backward(input)
            ctx.softmax, ctx.coef, ctx.pick, ctx.denom = probs, coef, pick, denom
            ctx.w_t = w_t if coef is None else None
            ctx.reduction, ctx.unbatched = reduction, unbatched
        return out.astype(x.dtype, copy=False)

    @property
    def next_functions(self) -> tuple:
        """PyTorch's graph of the loss: ``log_softmax`` below ``nll_loss`` (class targets),
        below ``-(target * log_probs).sum(1)`` (probability targets), or the two added
        (class targets with label smoothing); each ends in a division for the mean."""
        edges = super().next_functions
        reduction, smoothed, probabilities, nll_name = self.kind
        logp = ShownNode("LogSoftmaxBackward0", edges[0] if edges[0][0] is not None else None)
        if probabilities:
            product = ShownNode("MulBackward0", (logp, 0), edges[1] if len(edges) > 1 else None)
            summed = ShownNode(_SUM_NODE[reduction], (product, 0))  # under its negation
            return ((ShownNode("NegBackward0", (summed, 0)), 0),) if reduction == "mean" else ((summed, 0),)
        if not smoothed:
            return ((logp, 0),)
        nll = ShownNode(nll_name, (logp, 0))
        smooth = ShownNode("NegBackward0", (ShownNode("SumBackward1", (logp, 0)), 0))
        smooth = ShownNode("MaskedFillBackward0", (smooth, 0))
        if reduction == "mean":
            smooth = ShownNode("DivBackward0", (ShownNode("SumBackward0", (smooth, 0)), 0), None)
        elif reduction == "sum":
            smooth = ShownNode("SumBackward0", (smooth, 0))
        return ((ShownNode("MulBackward1", (nll, 0)), 0), (ShownNode("MulBackward1", (smooth, 0)), 0))

    @staticmethod
    def backward(ctx, g):
        if recording():  # create_graph: softmax recomputed in the graph
            (input,) = ctx._checked_saved()
            coef = ctx.coef
            if coef is None:
                coef = np.zeros(ctx.softmax.shape, dtype=ctx.softmax.dtype)
                coef[ctx.pick] = ctx.w_t
            p = Softmax.apply(input.reshape(1, -1) if ctx.unbatched else input, 1)
            local = p * Tensor._make(coef.sum(axis=1, keepdims=True)) - Tensor._make(coef)
        elif ctx.coef is None:  # one-hot target: w_t * (softmax - onehot)
            local = elementwise(np.multiply, ctx.softmax, ctx.w_t[:, None])
            local[ctx.pick] = local[ctx.pick] - ctx.w_t
        else:
            local = map_rows(lambda p, c: (p * c.sum(axis=1, keepdims=True) - c,), ctx.softmax, ctx.coef)[0]
        if ctx.reduction == "mean":
            local = local / float(ctx.denom)
        if ctx.unbatched:
            local = local.reshape(-1)
        elif ctx.reduction == "none":
            g = g.unsqueeze(1)
        if isinstance(local, Tensor):
            return g * local, None, None, None, None, None
        return (
            Tensor._make(elementwise(np.multiply, g._data, local)),
            None,
            None,
            None,
            None,
            None,
        )  # (no graph)


class NllLoss(Function):
    """``-w[t] * input[n, t]`` per entry (input holds log-probabilities), computed in the
    input's dtype as PyTorch does (float16 and bfloat16 too)."""

    _raw = True
    _grad_reads = "zero"
    _own_16_bit = True
    _profiled_as = "aten::nll_loss_nd"

    @staticmethod
    def forward(ctx, input, target, weight, ignore_index, reduction):
        x, t, unbatched = _batched(input, target)
        ctx._node_name = _nll_node(x.ndim)
        tt, valid = _class_targets(x, t, ignore_index)
        pick = _class_index(tt)
        w_t = _pick_weights(weight, tt, valid, x.dtype)
        per_entry = _nll_terms(x, pick, w_t, valid)
        denom = None
        if reduction != "none":  # (N, C, d1, ...): PyTorch's nll_loss2d adds in (N, d1, ...) order
            flat = [a.reshape(-1) for a in (per_entry, w_t, valid)]
            out, denom = _batch_mean_or_sum(*flat, weight is not None, reduction)
        else:
            out = per_entry[0] + x.dtype.type(0) if unbatched else per_entry  # (PyTorch sums one entry)
        ctx.shape, ctx.pick, ctx.w_t, ctx.denom, ctx.valid = x.shape, pick, w_t, denom, valid
        ctx.reduction, ctx.unbatched = reduction, unbatched
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        """PyTorch's steps in the dtype: ``weight[t] * -(grad / total weight)`` for the mean,
        ``weight[t] * -grad`` for the sum, ``-weight[t] * grad`` per entry, written at each
        counted entry's target class; every other element is 0.0 (never -0.0)."""
        dtype = g._data.dtype
        reduced = ctx.reduction != "none"
        w_t = (ctx.w_t if reduced else -ctx.w_t).astype(dtype)
        if recording():  # create_graph: the steps recorded, on tensors
            local, counted = np.zeros(ctx.shape, dtype), np.zeros(ctx.shape, bool)
            local[ctx.pick], counted[ctx.pick] = w_t, ctx.valid
            if ctx.unbatched:
                local, counted = local[0], counted[0]
            elif not reduced:
                g = g.unsqueeze(1)
            if ctx.reduction == "mean":
                g = g / Tensor._make(np.asarray(ctx.denom, dtype=dtype))
            grad = Tensor._make(local) * (-g if reduced else g)
            return grad.masked_fill(Tensor._make(~counted), 0.0), None, None, None, None
        # the same steps on the arrays (each tensor op costs more than a small batch's gradient)
        gd = g._data if reduced else g._data.reshape(ctx.valid.shape)
        if ctx.reduction == "mean":
            gd = gd / np.asarray(ctx.denom, dtype=dtype)
        picked = elementwise(np.multiply, w_t, -gd if reduced else gd)
        picked[~ctx.valid] = 0
        grad = np.zeros(ctx.shape, dtype)
        grad[ctx.pick] = picked
        return Tensor._make(grad[0] if ctx.unbatched else grad), None, None, None, None


@autocast_op("fp32")
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy between ``input`` logits and ``target``.

    Args:
        input: ``(N, C)``, ``(C)`` or ``(N, C, d1, ...)`` unnormalised scores.
        target: class indices ``(N)``/``()``/``(N, d1, ...)`` in ``[0, C)``, or class
            probabilities of the same shape as ``input``.
        weight: ``(C)`` rescaling weight per class.
        ignore_index: class-index targets equal to it contribute nothing (and are left
            out of the mean).
        reduction: ``'none'`` | ``'mean'`` | ``'sum'``.
        label_smoothing: mixes the target with the uniform distribution (usually in
            ``[0, 1]``; PyTorch takes any value).
    """
    reduction = _reduction(reduction, size_average, reduce)
    if label_smoothing > 1.0:  # (PyTorch checks only this end: a negative value smooths nothing)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    probabilities = target.shape == input.shape and target._data.dtype.kind in "fV"
    if not input.ndim:
        _refuse_scalar_input(input, target)
    _check_class_weight(weight, input, target, "cross_entropy: " if probabilities else "")
    if probabilities and target.dtype != input.dtype:  # PyTorch's product promotes them
        dtype = promote_types(input.dtype, target.dtype)
        input, target = input.to(dtype), target.to(dtype)
    if is_low(input._data.dtype) and target._data.dtype.kind in "iu" and input.ndim:
        # float16/bfloat16 class targets: PyTorch's own composition, which rounds the
        # log-probabilities to the 16-bit type before the loss adds them up
        log_probs = log_softmax_op(input, 1 if input.ndim > 1 else 0)
        loss = nll_loss(log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
        if not label_smoothing:
            return loss
        return _smoothed(loss, log_probs, target, weight, ignore_index, reduction, label_smoothing)
    if target.requires_grad and target._data.dtype.kind in "fVc":
        return _soft_cross_entropy(input, target, weight, reduction, label_smoothing)
    if target._data.dtype.kind in "iub":
        weight = _non_differentiable(weight)
    return CrossEntropyFunction.apply(input, target, weight, ignore_index, reduction, label_smoothing)


def _refuse_scalar_input(input: Tensor, target: Tensor) -> None:
    """PyTorch's errors for a 0-d ``input`` (it has no class dim 1): a target of its shape is
    probabilities, which must be floating point; else the log-softmax over dim 1 fails."""
    if target.shape == input.shape:
        if target._data.dtype.kind not in "fVc":
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got {target.dtype.scalar_name}"
            )
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")


def _smoothed(
    nll: Tensor,
    log_probs: Tensor,
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
) -> Tensor:
    """Class-index cross-entropy with label smoothing composed as PyTorch composes it (its
    16-bit results round at each step): ``(1 - ls) * nll + smooth * (ls / C)``, ``smooth``
    the (weighted) sum of ``-log_probs`` over the classes, reduced as the loss is."""
    dim = 1 if log_probs.ndim > 1 else 0
    classes = log_probs.shape[dim]
    ignored = target == ignore_index
    if weight is not None:
        shape = [1] * log_probs.ndim
        shape[dim] = classes
        smooth = -(log_probs * weight.view(shape)).sum(dim)
    else:
        smooth = -log_probs.sum(dim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        kept = ~ignored
        total = (
            weight.gather(0, target.masked_select(kept).flatten()).sum() if weight is not None else kept.sum()
        )
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / classes)


def _soft_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None, reduction: str, label_smoothing: float
) -> Tensor:
    """Cross-entropy with probability targets that require grad, composed of differentiable
    ops as PyTorch composes it (the fused Function gives a target no gradient):
    ``-sum_c log_softmax(x)_c t_c w_c``, the mean over the batch elements."""
    dim = 1 if input.ndim > 1 else 0
    logp = log_softmax_op(input, dim)
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / input.shape[dim]
    product = logp * target
    if weight is not None:
        product = product * weight.reshape((-1,) + (1,) * (input.ndim - dim - 1))
    if reduction == "none":
        return -product.sum(dim)
    if reduction == "sum":
        return -product.sum()
    return -product.sum() / (input.numel() / max(input.shape[dim], 1))


@autocast_op("fp32")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class-index ``target`` under log-probabilities ``input``
    (shapes as for ``cross_entropy``); ``'mean'`` divides by the summed target weights."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_class_weight(weight, input, target, "")
    weight = _non_differentiable(weight)
    return NllLoss.apply(input, target, weight, ignore_index, reduction)


def _check_class_weight(weight: Tensor | None, input: Tensor, target: Tensor, prefix: str) -> None:
    """PyTorch's checks of a class-weight vector, in its order: (for class-index targets,
    ``prefix`` empty) the batch sizes first; one entry per class (the classes: dim 1 of
    ``input``, or its only dim); for class-index targets, ``input``'s dtype."""
    if weight is None or not isinstance(input, Tensor) or input.ndim == 0:
        return
    same_dtype = not prefix
    if same_dtype and input.ndim > 1 and isinstance(target, Tensor) and target.ndim:
        if input.shape[0] != target.shape[0]:
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
            )
    classes = input.shape[1 if input.ndim > 1 else 0]
    if weight.ndim != 1 or weight.numel() != classes:
        raise RuntimeError(
            f"{prefix}weight tensor should be defined either for all {classes} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    if same_dtype and weight._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(input._data.dtype)} but found "
            f"{scalar_type_name(weight._data.dtype)}"
        )


def _non_differentiable(
    tensor: Tensor | None,
    function: str = "nll_loss_forward",
    argument: str = "weight",
    decomposed: bool = False,
) -> Tensor | None:
    """``tensor`` as an argument PyTorch's loss has no derivative for (class-index losses'
    class weights, ``binary_cross_entropy``'s weight, ``soft_margin_loss``'s target): one that
    requires grad is refused while grad mode is on, unless only for a forward transform (forward
    AD's duals, ``jvp``'s inputs: returned detached, their tangents ignored, as PyTorch's). Where
    ``torch.func`` runs the loss ``decomposed`` into differentiable ops, its transforms' inputs
    are differentiable there (returned as they are).
    """
    if not isinstance(tensor, Tensor) or not tensor.requires_grad or not is_grad_enabled():
        return tensor
    kinds = transform_kinds(tensor)
    if "own" in kinds or ("vjp" in kinds and not decomposed):
        raise RuntimeError(
            f"The function '{function}' is not differentiable with respect to argument '{argument}'. "
            "This input cannot have requires_grad True."
        )
    return tensor if decomposed and "dual" not in kinds else tensor.detach()


# ---------------------------------------------------------------------- elementwise losses
def _pair(input: Tensor, target: Tensor, name: str) -> tuple:
    """Both arrays broadcast together, warning (as PyTorch) when the shapes differ."""
    x, y = input._data, target._data
    if x.shape != y.shape:
        _native_warnings.warn(  # at the program's line, as PyTorch's (stacklevel=2 there)
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            f"broadcasting. Please ensure they have the same size."
        )
        try:
            x, y = np.broadcast_arrays(x, y)
        except ValueError:
            raise broadcast_error(input.shape, target.shape) from None
    return x, y


class _ElementwiseLoss:
    """A loss computed entry by entry from ``d = input - target``: subclasses define
    ``value(d, param)`` on arrays (forward) and ``derivative(d, param)`` on tensors
    (d loss / d input per entry, built from tensor ops so that it can itself be
    differentiated). The target's gradient is minus the input's."""

    @staticmethod
    def value(d: np.ndarray, param: float) -> np.ndarray:
        raise NotImplementedError

    #: whether PyTorch's backward kernel rounds each step to a 16-bit dtype (else it computes
    #: in float32 and rounds once)
    steps_in_dtype = False

    @staticmethod
    def derivative(d: Tensor, param: float) -> Tensor:
        raise NotImplementedError

    @classmethod
    def gradient(cls, d: Tensor, g: Tensor, param: float, n: int | None) -> Tensor:
        """The input's gradient from ``d`` and the loss's gradient ``g`` (``n``: the count a
        mean divides by, or None)."""
        local = cls.derivative(d, param)
        return g * (local / n if n else local)


def _difference_dtype(name: str, input: Tensor, target: Tensor, reduction: str) -> np.dtype:
    """The dtype ``input - target`` is computed in, under PyTorch's rules for the loss ``name``:
    promoted, floating only (``l1_loss`` reaches its integer refusal through the mean), and
    ``huber_loss`` keeps ``input``'s dtype."""
    if name == "l1_loss":
        refuse_bool_subtraction(input, target)
        dtype = result_type(input._data, target._data)
        if dtype.kind in "iu" and reduction == "mean":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                f"complex dtype. Got: {scalar_type_name(dtype)}"
            )
        return dtype
    if name == "huber_loss":  # computed in input's dtype, which must hold the promoted one
        check_cast(result_type(input._data, target._data), input._data.dtype)
        check_kernel(name, input, target)
        return input._data.dtype
    return check_kernel(name, input, target)


def _elementwise_loss(kind: type, name: str) -> type:
    """The Function computing ``kind``'s loss; called as ``apply(input, target, reduction, param)``."""

    class Loss(Function):
        _raw = True

        @staticmethod
        def forward(ctx, input, target, reduction, param):
            dtype = _difference_dtype(name, input, target, reduction)
            x, y = _pair(input, target, name)
            loss = elementwise(lambda a, b: kind.value(np.subtract(a, b, dtype=dtype), param), x, y)
            ctx.save_for_backward(input, target)
            ctx.reduction, ctx.param, ctx.n = reduction, param, loss.size
            return _reduce(loss, reduction)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx._checked_saved()
            if kind.steps_in_dtype and g._data.dtype.itemsize == 2 and x._data.dtype != g._data.dtype:
                x, y = x.to(g.dtype), y.to(g.dtype)  # 16-bit: each step rounds (float32 copies saved)
            n = ctx.n if ctx.reduction == "mean" and ctx.n else None
            gx = kind.gradient(x - y, g, ctx.param, n)
            need_x, need_y = ctx.needs_input_grad[:2]
            return (gx if need_x else None), (-gx if need_y else None), None, None

    Loss.__name__ = Loss.__qualname__ = kind.__name__.lstrip("_") + "Loss"
    return Loss


def _clamp_inside(d: Tensor, bound: float, per_beta: bool) -> Tensor:
    """``d.clamp(-bound, bound)`` (Huber) or ``(d / bound).clamp(-1, 1)`` (smooth L1, ``per_beta``):
    the losses' derivatives. Under ``create_graph`` its own derivative is 0 at ``|d| == bound``,
    as PyTorch's double backward (clamp's passes there)."""
    if not recording():
        return (d / bound).clamp(-1, 1) if per_beta else d.clamp(-bound, bound)
    edge = d.sign().detach() * (1.0 if per_beta else bound)
    return _ew.where(d.abs() < bound, d / bound if per_beta else d, edge)


class _Mse(_ElementwiseLoss):
    steps_in_dtype = True

    @staticmethod
    def value(d, param):
        return d * d

    @staticmethod
    def derivative(d, param):
        return d * 2

    @classmethod
    def gradient(cls, d: Tensor, g: Tensor, param: float, n: int | None) -> Tensor:
        """PyTorch's kernel: ``norm * d * g``, ``norm`` (``2 / n`` or 2) in ``d``'s dtype."""
        norm = Tensor._make(np.asarray(2.0 / n if n else 2.0, dtype=d._data.dtype))
        return d * norm * g


class _L1(_ElementwiseLoss):
    @staticmethod
    def value(d, param):
        return np.abs(d)

    @staticmethod
    def derivative(d, param):
        return d.sign()


class _Huber(_ElementwiseLoss):
    """``0.5 d^2`` for ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""

    @staticmethod
    def value(d, delta):
        a = np.abs(d)
        return np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta)).astype(d.dtype, copy=False)

    @staticmethod
    def derivative(d, delta):
        return _clamp_inside(d, delta, False)


class _SmoothL1(_ElementwiseLoss):
    """``0.5 d^2 / beta`` for ``|d| < beta``, else ``|d| - 0.5 beta`` (L1 when beta = 0)."""

    @staticmethod
    def value(d, beta):
        a = np.abs(d)
        if beta == 0:
            return a
        return np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta).astype(d.dtype, copy=False)

    @staticmethod
    def derivative(d, beta):
        return d.sign() if beta == 0 else _clamp_inside(d, beta, True)


MseLoss = _elementwise_loss(_Mse, "mse_loss")
L1Loss = _elementwise_loss(_L1, "l1_loss")
HuberLoss = _elementwise_loss(_Huber, "huber_loss")
SmoothL1Loss = _elementwise_loss(_SmoothL1, "smooth_l1_loss")


def _weighted(
    loss: type, input: Tensor, target: Tensor, weight: Tensor, reduction: str, arg: float, by_weight: bool
) -> Tensor:
    """``weight * loss`` elementwise (``weight`` shaped as ``input``), reduced as PyTorch's
    weighted losses: 'mean' divides by the weights' sum (``by_weight``) or by the count."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = loss.apply(input, target, "none", arg) * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.sum() / weight.sum() if by_weight else weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@autocast_op("fp32")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Squared error ``(input - target)^2``, reduced; ``weight`` (shaped as ``input``) weighs
    each element, and 'mean' is then the weighted mean."""
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        return _weighted(MseLoss, input, target, weight, reduction, 0.0, by_weight=True)
    return MseLoss.apply(input, target, reduction, 0.0)


@autocast_op("fp32")
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Absolute error ``|input - target|``, reduced; ``weight`` as in :func:`mse_loss`."""
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        return _weighted(L1Loss, input, target, weight, reduction, 0.0, by_weight=True)
    out = L1Loss.apply(input, target, reduction, 0.0)
    return named_node(out, {"mean": "MeanBackward0", "sum": "SumBackward0"}.get(reduction, "AbsBackward0"))


@autocast_op("fp32")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """Quadratic below ``beta``, linear above: ``0.5 d^2 / beta`` or ``|d| - 0.5 beta``."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return SmoothL1Loss.apply(input, target, _reduction(reduction, size_average, reduce), beta)


@autocast_op("fp32")
def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight: Tensor | None = None
) -> Tensor:
    """``0.5 d^2`` below ``delta``, ``delta (|d| - 0.5 delta)`` above; ``weight`` (shaped as
    ``input``) weighs each element ('mean' then still divides by the count, as PyTorch)."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        return _weighted(HuberLoss, input, target, weight, reduction, delta, by_weight=False)
    return HuberLoss.apply(input, target, _reduction(reduction), delta)


# ---------------------------------------------------------------------- binary and KL losses
def _mean_scale(reduction: str, x: np.ndarray) -> float:
    """What the reduction divides the summed loss by (1 for 'sum' and 'none')."""
    if reduction == "mean":
        return float(max(x.size, 1))
    if reduction == "batchmean":
        return float(x.shape[0] if x.ndim else 1)
    return 1.0


def _backward_of_sum(g: Tensor, local: Tensor, reduction: str, x: np.ndarray) -> Tensor:
    """Upstream gradient times a per-entry derivative (a tensor), divided as the reduction."""
    n = _mean_scale(reduction, x)
    return g * (local / n if n != 1 else local)


def _binary_cross_entropy(p: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Per-entry ``w ((y - 1) log(1 - p) - y log p)``, the logs clamped at -100, in ``p``'s
    dtype, as PyTorch's scalar loop: float32's logs are the C library's ``logf``/``log1pf``
    with numba (NumPy's float32 ``log`` is another unit off in some 10% of the entries)."""
    one, floor = p.dtype.type(1), p.dtype.type(-100)
    logs = (c_log(p), c_log1p(-p)) if p.dtype == np.float32 else (None, None)
    with np.errstate(divide="ignore"):
        logp = np.maximum(np.log(p) if logs[0] is None else logs[0], floor)
        log1mp = np.maximum(np.log1p(-p) if logs[1] is None else logs[1], floor)
    loss = (y - one) * log1mp - y * logp
    return (loss if w is None else loss * w).astype(p.dtype, copy=False)


def _binary_cross_entropy_with_logits(
    x: np.ndarray, y: np.ndarray, w: np.ndarray | None, pos_weight: np.ndarray | None
) -> np.ndarray:
    """Per-entry ``w [pos_weight y softplus(-x) + (1 - y) softplus(x)]``, in ``x``'s dtype."""
    sp_neg = np.logaddexp(0, -x)  # -log sigmoid(x)
    sp_pos = sp_neg + x  # -log(1 - sigmoid(x))
    pos = y * sp_neg if pos_weight is None else pos_weight * y * sp_neg
    loss = pos + (1 - y) * sp_pos
    return (loss if w is None else loss * w).astype(x.dtype, copy=False)


def _kl_div(x: np.ndarray, t: np.ndarray, log_target: bool) -> np.ndarray:
    """Per-entry ``t (log t - x)`` (0 where ``t <= 0``), or ``exp(t) (t - x)`` for a log
    target, in ``x``'s dtype."""
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.where(t > 0, t * (np.log(np.where(t > 0, t, 1)) - x), 0)
    return loss.astype(x.dtype, copy=False)


class BinaryCrossEntropy(Function):
    """``-w (y log p + (1 - y) log(1 - p))`` with the logs clamped at -100, as PyTorch.
    Backward (tensor ops, differentiable again, in PyTorch's order): ``dp = g (p - y) /
    max((1 - p) p, 1e-12) w / n``, ``dy = -logit(p) g w / n`` (``n`` for the mean)."""

    _raw = True

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        p, y = input._data, target._data
        if p.shape != y.shape:
            raise ValueError(
                f"Using a target size ({target.shape}) that is different to the input "
                f"size ({input.shape}) is deprecated. Please ensure they have the same size."
            )
        for name, a in (("input", p), ("target", y)):
            if a.size and (ufunc_reduce(np.fmin, a, None) < 0 or ufunc_reduce(np.fmax, a, None) > 1):
                raise RuntimeError(f"all elements of {name} should be between 0 and 1")
        loss = elementwise(_binary_cross_entropy, p, y, None if weight is None else weight._data)
        ctx.save_for_backward(input, target)
        ctx.weight, ctx.reduction = weight, reduction
        return _reduce(loss, reduction)

    @staticmethod
    def backward(ctx, g):
        p, y = ctx._checked_saved()
        w = ctx.weight
        n = _mean_scale(ctx.reduction, p._data)
        # PyTorch's order: grad * (p - y) / max((1 - p) p, eps), times the weight, over n
        gx = g * (p - y) / ((1 - p) * p).clamp_min(1e-12)
        gx = gx * w if w is not None else gx
        gx = gx / n if n != 1 else gx
        gy = None
        if ctx.needs_input_grad[1]:  # -logit(p) * grad, times the weight, over n
            with np.errstate(divide="ignore"):
                gy = -p.logit() * g
            gy = gy * w if w is not None else gy
            gy = gy / n if n != 1 else gy
        return gx, gy, None, None


class BinaryCrossEntropyWithLogits(Function):
    """``-w [pos_weight y log s(x) + (1 - y) log(1 - s(x))]`` computed stably:
    ``log s(x) = -softplus(-x)``, ``log(1 - s(x)) = -softplus(x)``. Backward:
    ``dx = w ((1 - y) s(x) - pos_weight y (1 - s(x)))``,
    ``dy = w (pos_weight softplus(-x) - softplus(x))``."""

    _raw = True

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        x, y = input._data, target._data
        if x.shape != y.shape:
            raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
        arrays = [None if t is None else t._data for t in (weight, pos_weight)]
        try:
            np.broadcast_shapes(x.shape, *(np.shape(a) for a in arrays if a is not None))
        except ValueError:
            raise broadcast_error(x.shape, *(np.shape(a) for a in arrays if a is not None)) from None
        loss = elementwise(_binary_cross_entropy_with_logits, x, y, *arrays)
        ctx.save_for_backward(input, target)
        ctx.weight, ctx.pos_weight, ctx.reduction = weight, pos_weight, reduction
        return _reduce(loss, reduction)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx._checked_saved()
        w, pw = ctx.weight, ctx.pos_weight
        if g._data.dtype.itemsize == 2 and x._data.dtype != g._data.dtype:  # 16-bit: each step
            x, y = x.to(g.dtype), y.to(g.dtype)  # rounds to it, as PyTorch's (float32 copies)
            w = w.to(g.dtype) if w is not None else None
        s = _ew.sigmoid(x)
        if pw is None:  # PyTorch's order: (sigmoid(x) - y) * grad * weight / n
            gx = (s - y) * g
            gx = gx * w if w is not None else gx
            n = _mean_scale(ctx.reduction, x._data)
            gx = gx / n if n != 1 else gx
        else:
            local = (1 - y) * s - pw * y * (1 - s)
            gx = _backward_of_sum(g, local * w if w is not None else local, ctx.reduction, x._data)
        gy = gw = gpw = None
        if ctx.needs_input_grad[1]:
            gap = -x if pw is None else pw * softplus(-x) - softplus(x)
            gy = _backward_of_sum(g, gap * w if w is not None else gap, ctx.reduction, x._data)
        if ctx.needs_input_grad[2]:  # (only under torch.func, which decomposes this loss)
            positive = y * softplus(-x)
            unweighted = (positive if pw is None else pw * positive) + (1 - y) * softplus(x)
            gw = _backward_of_sum(g, unweighted, ctx.reduction, x._data)
        if ctx.needs_input_grad[3]:
            positive = y * softplus(-x)
            gpw = _backward_of_sum(g, positive * w if w is not None else positive, ctx.reduction, x._data)
        return gx, gy, gw, gpw, None


@autocast_op("fp32")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross-entropy between probabilities ``input`` and ``target`` (same shape and
    dtype; a ``weight`` broadcasts to their shape)."""
    reduction = _reduction(reduction, size_average, reduce)
    weight = _non_differentiable(weight, "binary_cross_entropy")
    if input.shape == target.shape and input.dtype != target.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected {input.dtype.scalar_name}")
    if weight is not None and input.shape == target.shape:
        try:
            np.broadcast_shapes(weight.shape, input.shape)
        except ValueError:
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {weight.shape[-1]} at -1! Mismatching "
                f"argument at index 1 had {weight.shape}; but expected shape should be broadcastable to "
                f"{list(input.shape)}"
            ) from None
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


@autocast_op("fp32")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid plus binary cross-entropy in one numerically stable step; ``pos_weight``
    weighs the positive term (broadcast along the last dim, one per class). As PyTorch's
    kernel, which computes ``(1 - target) * input`` in ``target``'s dtype, the result has the
    floating ``target``'s dtype; an integer or bool ``target`` is refused."""
    reduction = _reduction(reduction, size_average, reduce)
    weight = _non_differentiable(weight, "binary_cross_entropy_with_logits", decomposed=True)
    pos_weight = _non_differentiable(
        pos_weight, "binary_cross_entropy_with_logits", "pos_weight", decomposed=True
    )
    if isinstance(target, Tensor) and isinstance(input, Tensor) and target.dtype != input.dtype:
        if target._data.dtype.kind == "b":
            refuse_bool_subtraction(target, target)
        check_cast(input._data.dtype, target._data.dtype)
        input = input.to(target.dtype)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


#: PyTorch's kl_div is a composition: its last op by reduction (without: a sub, or with
#: ``log_target`` a product)
_KL_NODE = {"mean": "MeanBackward0", "sum": "SumBackward0", "batchmean": "DivBackward0"}


class KlDiv(Function):
    """``target * (log target - input)`` per entry (``input`` holds log-probabilities;
    with ``log_target`` so does ``target``: ``exp(t) * (t - input)``). Backward:
    ``dx = -t`` (``-exp(t)``), ``dt = log t + 1 - x`` (``exp(t) (t - x + 1)``)."""

    _raw = True

    @staticmethod
    def forward(ctx, input, target, reduction, log_target):
        ctx._node_name = _KL_NODE.get(reduction) or ("MulBackward0" if log_target else "SubBackward0")
        x, t = input._data, target._data
        try:
            np.broadcast_shapes(x.shape, t.shape)
        except ValueError:  # (PyTorch's first op is ``log(target) - input``)
            raise broadcast_error(t.shape, x.shape) from None
        loss = elementwise(_kl_div, x, t, log_target)
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.log_target = reduction, log_target
        if reduction == "batchmean":
            total = ufunc_reduce(np.add, loss, None) if loss.size else loss.sum()
            return np.asarray(total / _mean_scale(reduction, x)).astype(x.dtype)
        return _reduce(loss, reduction)

    @staticmethod
    def backward(ctx, g):
        x, t = ctx._checked_saved()
        if ctx.log_target:
            et = t.exp()
            gx_local, gt_local = -et, et * (t - x + 1)
        else:
            positive = t > 0
            gx_local = -t
            gt_local = _ew.where(positive, _ew.where(positive, t, 1.0).log() + 1 - x, 0.0)
        gx = _backward_of_sum(g, gx_local, ctx.reduction, x._data)
        gt = _backward_of_sum(g, gt_local, ctx.reduction, x._data) if ctx.needs_input_grad[1] else None
        return gx, gt, None, None


@autocast_op("fp32")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Kullback-Leibler divergence ``sum target * (log target - input)`` for
    log-probabilities ``input``; ``reduction='batchmean'`` divides by the batch size
    (the mathematical KL divergence), ``'mean'`` by the number of entries."""
    if reduction == "mean" and size_average is None and reduce is None:
        _native_warnings.warn(  # at the program's line, as PyTorch's
            "reduction: 'mean' divides the total loss by both the batch size and the "
            "support size.'batchmean' divides only by the batch size, and aligns with "
            "the KL div math definition.'mean' will be changed to behave the same as "
            "'batchmean' in the next major release."
        )
    if reduction != "batchmean":
        reduction = _reduction(reduction, size_average, reduce)
    if input.dtype.scalar_name in _INTEGRAL or target.dtype.scalar_name in _INTEGRAL:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    return KlDiv.apply(input, target, reduction, log_target)


_INTEGRAL = frozenset("Bool Byte Char Short Int Long UInt16 UInt32 UInt64".split())
