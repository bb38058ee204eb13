"""Attention: ``scaled_dot_product_attention`` (one fused Function) and
``multi_head_attention_forward`` (the computation behind ``nn.MultiheadAttention``).

Fused attention forward: ``S = Q Kᵀ * scale + mask``, ``P = softmax(S)``, ``P' = dropout(P)``,
``O = P' V``. Backward from what forward kept (Q, K, V, P, the dropout mask):
``dV = P'ᵀ dO``, ``dP = (dO Vᵀ) ∘ mask / (1 - p)``, ``dS = P ∘ (dP - rowsum(dP ∘ P))``,
``dQ = dS K * scale``, ``dK = dSᵀ Q * scale``. Batch dims broadcast as in ``matmul``;
the engine sums broadcast gradients back to each input's shape.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._dtype import c_type_name, from_numpy
from ..._random import _gen
from ..._tensor import Tensor
from ...autograd.autocast_state import autocast_op
from ...autograd.forward_ad import refuse_tangents
from ...autograd.function import Function, named_node
from ...autograd.grad_reads import reads_inputs
from ...backends import cuda as _switches
from ...kernels import torch_random as _kr
from ...kernels.flash_attention import flash_backward, flash_forward
from ...kernels.flash_attention import weights as flash_weights
from ...kernels.softmax import softmax_backward_last_, softmax_last_
from ...kernels.threads import astype, elementwise
from ...kernels.threads import matmul as blas_matmul
from ...ops._helpers import broadcast_error
from ...ops.linalg import bmm
from ...ops.mathfns import baddbmm
from ...ops.opmath import is_low
from ...ops.shape import cat
from ._numpy_backward import needed_grads, numpy_backward
from .dropout import dropout
from .linear import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_FLASH = "_scaled_dot_product_flash_attention_for_cpu"  # PyTorch's op, where its CPU build routes to flash


@functools.lru_cache(maxsize=16)
def _causal_bias(L: int, S: int, dtype: np.dtype) -> np.ndarray:
    """Additive ``(L, S)`` mask: 0 on and below the diagonal, -inf above (read-only, cached)."""
    bias = np.triu(np.full((L, S), -np.inf, dtype=dtype), 1)
    bias.flags.writeable = False
    return bias


def _as_bias(mask: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A boolean mask (True = may attend) as an additive float mask; float masks pass through."""
    if mask.dtype == np.bool_:
        return np.where(mask, np.array(0, dtype=dtype), np.array(-np.inf, dtype=dtype))
    return mask.astype(dtype, copy=False)


def _dropped(x: np.ndarray, keep: np.ndarray, keep_prob: np.generic) -> np.ndarray:
    """Dropout of attention weights (or their gradient): ``x * keep / keep_prob``, element by
    element, so that :func:`kernels.threads.elementwise` may split it."""
    return x * keep / keep_prob


class ScaledDotProductAttention(Function):
    """Fused attention; returns ``(output, attention weights after dropout)``."""

    _raw = True
    _blas = True  # float16 computed in float32 (NumPy has no float16 BLAS)

    @staticmethod
    def forward(
        ctx,
        query,
        key,
        value,
        attn_mask,
        dropout_p,
        is_causal,
        scale,
        fused=False,
        weights_dtype=None,
        groups=1,
    ):
        q, k, v = query._data, key._data, value._data
        if groups > 1:  # grouped-query heads, repeated here (16-bit flash: see flash_backward)
            k, v = np.repeat(k, groups, axis=-3), np.repeat(v, groups, axis=-3)
        if weights_dtype is None:
            qs = q * np.asarray(scale, dtype=q.dtype)  # scaling Q is cheaper than scaling Q Kᵀ
            s = blas_matmul(qs, k.swapaxes(-1, -2))
        else:  # the flash kernel scales the product
            qs = None
            s = blas_matmul(q, k.swapaxes(-1, -2)) * np.float32(scale)
        if is_causal:
            s += _causal_bias(q.shape[-2], k.shape[-2], s.dtype)
        if attn_mask is not None:
            s = s + _as_bias(attn_mask._data, s.dtype)
        if weights_dtype is not None:  # PyTorch's CPU flash kernel on 16-bit inputs
            out, lse = flash_forward(s, v, weights_dtype)
            p = flash_weights(s, lse)  # as its backward recomputes them
            ctx.out16 = _rounded(out, weights_dtype)  # the output its backward reads
        else:
            p = softmax_last_(s)
        keep = None
        if dropout_p > 0.0:
            # PyTorch's math path: dropout's noise, bernoulli_(1 - p) of the default generator
            keep = _kr.bernoulli_scalar(_gen(None), p.size, 1.0 - dropout_p).reshape(p.shape)
            p_used = elementwise(_dropped, p, keep, p.dtype.type(1.0 - dropout_p))
        else:
            p_used = p
        if weights_dtype is None:
            out = blas_matmul(p_used, v)
        if fused:
            out = _laid_out_like(out, q)
        ctx.p, ctx.p_used, ctx.keep, ctx.qs = p, p_used, keep, qs
        ctx.dropout_p, ctx.scale, ctx.is_causal, ctx.mask = dropout_p, scale, is_causal, attn_mask
        ctx.weights_dtype, ctx.groups = weights_dtype, groups
        ctx.save_for_backward(query, key, value)
        ctx.set_materialize_grads(False)  # the weights output rarely gets a gradient
        return out, p_used

    @staticmethod
    def backward(ctx, grad, grad_weights):
        query, key, value = ctx._checked_saved()

        def grads(_):
            k, v = key._data, value._data
            need_q, need_k, need_v, need_mask = ctx.needs_input_grad[:4]
            p, p_used = ctx.p, ctx.p_used
            if grad is not None:
                g = grad._data
            else:  # only the weights output got a gradient
                g = np.zeros(p.shape[:-1] + v.shape[-1:], dtype=p.dtype)
            if ctx.weights_dtype is not None:
                q, low, groups = query._data, ctx.weights_dtype, ctx.groups
                if groups > 1:
                    k, v = np.repeat(k, groups, axis=-3), np.repeat(v, groups, axis=-3)
                return flash_backward(p, q, k, v, g, ctx.out16, ctx.scale, low, groups)
            gv = blas_matmul(p_used.swapaxes(-1, -2), g) if need_v else None
            if not (need_q or need_k or need_mask):
                return None, None, gv, None
            gp = blas_matmul(g, v.swapaxes(-1, -2))
            if grad_weights is not None:
                gp += grad_weights._data
            if ctx.keep is not None:
                gp = elementwise(_dropped, gp, ctx.keep, gp.dtype.type(1.0 - ctx.dropout_p))
            gs = softmax_backward_last_(gp, p)
            gmask = gs.copy() if need_mask else None
            gq = blas_matmul(gs, k) * np.asarray(ctx.scale, dtype=gs.dtype) if need_q else None
            gk = blas_matmul(gs.swapaxes(-1, -2), ctx.qs) if need_k else None
            return gq, gk, gv, gmask

        def jvp(tq: Tensor | None, tk: Tensor | None, tv: Tensor | None, tmask: Tensor | None) -> Tensor:
            return _attention_jvp(ctx, query, key, value, tq, tk, tv, tmask)

        gq, gk, gv, gmask = numpy_backward(
            "scaled_dot_product_attention",
            grads,
            grad if grad is not None else grad_weights,
            grad_weights,
            query,
            key,
            value,
            jvp=jvp if grad is not None and grad_weights is None and ctx.groups == 1 else None,
            batched=_batched_grads(ctx, query, key, value)
            if grad is not None and grad_weights is None
            else None,
            in_tensor_ops=lambda _: _grads_in_tensor_ops(ctx, query, key, value, grad, grad_weights),
        )
        return gq, gk, gv, gmask, None, None, None, None, None, None


def _grads_in_tensor_ops(
    ctx: ScaledDotProductAttention,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    g: Tensor | None,
    grad_weights: Tensor | None,
) -> tuple | Any:
    """The backward above in tensor ops of the inputs (the weights recomputed), for a recorded
    pass: second derivatives (gradient penalties, ``hessian``), the gradients ``g`` of the
    output and ``grad_weights`` of the weights (either may be None). Not for 16-bit weights or
    grouped heads (NotImplemented: the fused node raises)."""
    if ctx.weights_dtype is not None or ctx.groups > 1:
        return NotImplemented
    if g is None:  # only the weights output got a gradient
        g = Tensor._make(np.zeros(ctx.p.shape[:-1] + value.shape[-1:], dtype=ctx.p.dtype))
    qs = query * ctx.scale
    s = qs @ key.mT
    if ctx.is_causal:
        s = s + Tensor._make(_causal_bias(query.shape[-2], key.shape[-2], s._data.dtype))
    mask = ctx.mask
    if mask is not None:
        s = s + (
            mask.to(s.dtype)
            if mask._data.dtype != np.bool_
            else Tensor._make(_as_bias(mask._data, s._data.dtype))
        )
    p = s.softmax(-1)
    drop = None
    if ctx.keep is not None:
        drop = Tensor._make((ctx.keep / (1.0 - ctx.dropout_p)).astype(p._data.dtype))
    gv = (p if drop is None else p * drop).mT @ g
    gp = g @ value.mT
    if grad_weights is not None:
        gp = gp + grad_weights
    if drop is not None:
        gp = gp * drop
    gs = p * (gp - (gp * p).sum(-1, keepdim=True))
    return gs @ key * ctx.scale, gs.mT @ qs, gv, gs


def _batched_grads(
    ctx: ScaledDotProductAttention, query: Tensor, key: Tensor, value: Tensor
) -> Callable[[np.ndarray], tuple] | None:
    """The backward for a batch of output gradients (one more leading dim, a batched
    backward pass) where the products broadcast over it: no dropout, 16-bit weights, mask
    gradient, grouped heads or broadcast batch dims (else None: once per entry)."""
    if ctx.keep is not None or ctx.weights_dtype is not None or ctx.needs_input_grad[3] or ctx.groups > 1:
        return None
    if not query.shape[:-2] == key.shape[:-2] == value.shape[:-2]:
        return None

    def grads(g: np.ndarray) -> tuple:
        need_q, need_k, need_v = needed_grads(ctx, 3)
        gv = blas_matmul(ctx.p_used.swapaxes(-1, -2), g) if need_v else None
        gq = gk = None
        if need_q or need_k:
            gp = blas_matmul(g, value._data.swapaxes(-1, -2))
            gs = softmax_backward_last_(gp, np.broadcast_to(ctx.p, gp.shape))
            gq = blas_matmul(gs, key._data) * np.asarray(ctx.scale, dtype=gs.dtype) if need_q else None
            gk = blas_matmul(gs.swapaxes(-1, -2), ctx.qs) if need_k else None
        return gq, gk, gv, None

    return grads


def _rounded(a: np.ndarray, low: np.dtype) -> np.ndarray:
    """Float32 ``a`` with its values rounded to the 16-bit dtype ``low``."""
    return astype(astype(a, low), a.dtype)


def _attention_jvp(
    ctx: ScaledDotProductAttention,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    tq: Tensor | None,
    tk: Tensor | None,
    tv: Tensor | None,
    tmask: Tensor | None,
) -> Tensor:
    """Forward-mode rule of the output, with tensor ops on the real inputs (so it stays
    differentiable w.r.t. them): ``dS = scale (dQ K^T + Q dK^T) + dmask``,
    ``dP = P * (dS - rowsum(P dS))``, ``dOut = dP_used V + P_used dV``."""
    scale = float(ctx.scale)
    s = (query * scale) @ key.mT
    if ctx.is_causal:
        s = s + Tensor._make(_causal_bias(query.shape[-2], key.shape[-2], s._data.dtype))
    if ctx.mask is not None:
        s = s + (
            ctx.mask
            if ctx.mask.is_floating_point()
            else Tensor._make(_as_bias(ctx.mask._data, s._data.dtype))
        )
    p = s.softmax(-1)
    drop = None
    if ctx.keep is not None:
        drop = Tensor._make((ctx.keep / np.asarray(1.0 - ctx.dropout_p)).astype(s._data.dtype))
    p_used = p * drop if drop is not None else p
    out = None
    ds = None
    for term in (
        tq @ key.mT * scale if tq is not None else None,
        query @ tk.mT * scale if tk is not None else None,
        tmask,
    ):
        if term is not None:
            ds = term if ds is None else ds + term
    if ds is not None:
        dp = p * (ds - (p * ds).sum(-1, keepdim=True))
        out = (dp * drop if drop is not None else dp) @ value
    if tv is not None:
        out = p_used @ tv if out is None else out + p_used @ tv
    return out if out is not None else (p_used @ value).detach() * 0


def _attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
    fused: bool = False,
    groups: int = 1,
) -> tuple:
    """Check shapes and run the fused attention; returns (output, weights). ``fused``: lay the
    output out as PyTorch's CPU flash kernel does (see :func:`_laid_out_like`); ``groups``:
    query heads per key/value head (grouped-query attention in the 16-bit flash kernel, the
    shapes checked by the caller with the heads repeated)."""
    q, k, v = query._data, key._data, value._data
    if groups > 1:
        k = v = np.broadcast_to(np.empty((), q.dtype), k.shape[:-3] + (k.shape[-3] * groups,) + k.shape[-2:])
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError(
            f"scaled_dot_product_attention expects query, key and value of at least "
            f"2 dims (..., L, E), got {list(q.shape)}, {list(k.shape)}, "
            f"{list(v.shape)}"
        )
    if not q.dtype == k.dtype == v.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{c_type_name(q.dtype)} key.dtype: {c_type_name(k.dtype)} and value.dtype: {c_type_name(v.dtype)} instead."
        )
    batch = _batch_shape(q.shape[:-2], k.shape[:-2])  # Q Kᵀ, then (Q Kᵀ) V, as PyTorch's math
    _batch_shape(batch, v.shape[:-2])
    if q.shape[-1] != k.shape[-1]:  # the message of the product Q Kᵀ over the flattened batch
        n = math.prod(batch)
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {q.shape[-1]}] "
            f"but got: [{n}, {k.shape[-1]}]."
        )
    if k.shape[-2] != v.shape[-2]:
        raise RuntimeError(
            f"scaled_dot_product_attention: key and value must have the same "
            f"sequence length, got key {list(k.shape)} and value {list(v.shape)}"
        )
    if is_causal and attn_mask is not None and not fused:  # PyTorch's flash kernel applies both
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
        )
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout probability has to be in [0, 1), but got {dropout_p}")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    low = q.dtype if fused and q.dtype.itemsize == 2 and q.dtype.kind in "fV" else None
    if fused:  # PyTorch's CPU flash kernel has no forward rule and a backward not differentiable
        refuse_tangents(_FLASH, query, key, value, attn_mask)
    out = ScaledDotProductAttention.apply(
        query, key, value, attn_mask, float(dropout_p), bool(is_causal), float(scale), fused, low, groups
    )
    return reads_inputs(out, f"aten::{_FLASH}_backward") if fused else out


@autocast_op("lower")
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    r"""``softmax(Q Kᵀ * scale + mask) V`` with optional dropout on the weights.

    Args:
        query: ``(..., L, E)``.
        key: ``(..., S, E)``.
        value: ``(..., S, Ev)``.
        attn_mask: broadcastable to ``(..., L, S)``; boolean (True = may attend) or float
            (added to the scores).
        dropout_p: dropout probability on the attention weights (applied whenever > 0, as
            PyTorch; pass 0.0 in evaluation).
        is_causal: mask out keys after each query (upper triangle). With ``attn_mask`` it
            raises, except where PyTorch's CPU flash kernel runs (4-d inputs, see
            ``_cpu_kernel``), which applies both.
        scale: score scale. Default: ``1 / sqrt(E)``.
        enable_gqa: let the query have more heads than key/value (grouped-query attention):
            key and value heads are repeated to match.

    Returns:
        ``(..., L, Ev)``.
    """
    groups = 1
    if enable_gqa:
        grouped_key, grouped_value = _grouped_heads(query, key, value)
        fused = _cpu_kernel(query, grouped_key, grouped_value, dropout_p, attn_mask) == "flash"
        dt = query._data.dtype
        if fused and dt.itemsize == 2 and dt.kind in "fV" and key._data.shape[-3] == value._data.shape[-3]:
            groups = query._data.shape[-3] // key._data.shape[-3]  # the kernel sums each group's
        if groups == 1:  # key/value gradients in the 16-bit dtype, head after head
            key, value = grouped_key, grouped_value
    else:
        fused = _cpu_kernel(query, key, value, dropout_p, attn_mask) == "flash"
    out = _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, fused, groups)[0]
    return named_node(
        out, "ScaledDotProductFlashAttentionForCpuBackward0" if fused else "UnsafeViewBackward0"
    )


def _cpu_kernel(
    query: Tensor, key: Tensor, value: Tensor, dropout_p: float, attn_mask: Tensor | None = None
) -> str:
    """The kernel PyTorch's CPU build picks, ``"flash"`` or ``"math"``, under the switches of
    ``torch.backends.cuda`` (``nn.attention.sdpa_kernel``); raises as it does when the
    enabled ones cannot run these inputs. Flash takes 4-d query, key and value with equal
    batch sizes, equal heads (after grouped-query repetition), one embedding size, no empty
    sequence, unit stride in the last dim, no dropout, and no mask that requires grad (it has
    no gradient for the mask: the math path then runs, twice differentiable)."""
    q, k, v = query._data, key._data, value._data
    flash_ok = (
        q.ndim == k.ndim == v.ndim == 4
        and dropout_p == 0.0
        and q.shape[0] == k.shape[0] == v.shape[0]
        and q.shape[1] == k.shape[1] == v.shape[1]
        and q.shape[3] == k.shape[3] == v.shape[3]
        and min(q.shape[2], k.shape[2]) > 0
        and all(a.strides[-1] == a.itemsize or a.shape[-1] == 1 for a in (q, k, v))
        and not (isinstance(attn_mask, Tensor) and attn_mask.requires_grad)
    )
    if _switches.flash_sdp_enabled() and flash_ok:
        return "flash"
    if _switches.math_sdp_enabled():
        return "math"
    if _switches.flash_sdp_enabled():
        raise RuntimeError("No available kernel.  Aborting execution.")
    raise RuntimeError(
        "No viable backend for scaled_dot_product_attention was found. This is likely due to "
        "turning off both the math kernel and the fused kernels."
    )


def _laid_out_like(out: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``out`` (shaped as ``q``) stored densely with its dims in the memory order of ``q``'s,
    as PyTorch's CPU flash kernel allocates it (``empty_like(query)``): a query made by
    ``x.view(B, L, H, E).transpose(1, 2)`` gives an output whose ``transpose(1, 2)`` can
    ``view`` back to ``(B, L, H * E)``."""
    order = sorted(range(q.ndim), key=lambda d: -q.strides[d])  # stable: ties keep dim order
    if order == list(range(q.ndim)):
        return out
    return np.ascontiguousarray(out.transpose(order)).transpose(np.argsort(order))


def _batch_shape(a: tuple, b: tuple) -> tuple:
    """The broadcast of two batch shapes, or PyTorch's error naming the first bad dim."""
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        raise broadcast_error(a, b) from None


def _grouped_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple:
    """``enable_gqa``: key and value with each head repeated to the query's head count (each
    count must divide the query's, as PyTorch checks)."""
    if min(query._data.ndim, key._data.ndim, value._data.ndim) < 3:
        return key, value
    hq, hk, hv = query._data.shape[-3], key._data.shape[-3], value._data.shape[-3]
    if hq == hk == hv:
        return key, value
    if hk == 0 or hv == 0 or hq % hk or hq % hv:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hv)


def _repeat_heads(t: Tensor, reps: int) -> Tensor:
    """Repeat each head of ``(..., H, S, E)`` ``reps`` times in place order (GQA)."""
    if reps == 1:
        return t
    shape = t.shape
    lead, h = tuple(shape[:-3]), shape[-3]
    expanded = t.unsqueeze(-3).expand(*lead, h, reps, shape[-2], shape[-1])
    return expanded.reshape(*lead, h * reps, shape[-2], shape[-1])


def _mha_mask_bias(mask: Tensor, dtype: np.dtype) -> Tensor:
    """``nn.MultiheadAttention``'s masks (bool: True = may NOT attend; float: added) as an
    additive float mask tensor."""
    m = mask._data
    if m.dtype == np.bool_:
        return Tensor._make(np.where(m, np.array(-np.inf, dtype=dtype), np.array(0, dtype=dtype)))
    if m.dtype.kind not in "fV":
        raise AssertionError(f"only bool and floating types of masks are supported, got {m.dtype}")
    return mask if m.dtype == dtype else mask.to(from_numpy(dtype))


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple:
    r"""Multi-head attention on sequence-first inputs, as ``nn.MultiheadAttention`` runs it.

    Args:
        query: ``(L, N, E)`` or unbatched ``(L, E)``.
        key, value: ``(S, N, kdim)`` / ``(S, N, vdim)`` (or unbatched).
        embed_dim_to_check: ``E``; num_heads: ``H`` (``E`` divisible by ``H``).
        in_proj_weight, in_proj_bias: packed ``(3E, E)`` / ``(3E,)`` projections (the
            bias is used with separate weights too).
        bias_k, bias_v: ``(1, 1, E)`` appended to the keys/values, or None.
        add_zero_attn: append a zero key/value position.
        dropout_p: dropout on the attention weights (only when ``training``).
        out_proj_weight, out_proj_bias: output projection.
        key_padding_mask: ``(N, S)``; True (or -inf) marks keys to ignore.
        need_weights: also return the attention weights.
        attn_mask: ``(L, S)`` or ``(N*H, L, S)``; True (or -inf) marks pairs to ignore.
        use_separate_proj_weight: use ``q/k/v_proj_weight`` instead of ``in_proj_weight``.
        static_k, static_v: not supported (raise).
        average_attn_weights: average the returned weights over heads.
        is_causal: when no ``attn_mask`` is given, apply a causal mask.

    Returns:
        ``(attn_output (L, N, E), attn_weights (N, L, S) or (N, H, L, S), or None)``.
    """
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not supported")
    if key_padding_mask is not None and attn_mask is not None and key_padding_mask.dtype != attn_mask.dtype:
        warnings.warn(
            "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both instead.",
            stacklevel=2,
        )
    unbatched = query._data.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight and key.shape[:2] != value.shape[:2]:
        raise AssertionError(
            f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
        )
    if not use_separate_proj_weight and key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # input projections
    if not use_separate_proj_weight:
        w_q, w_k, w_v = in_proj_weight.split(embed_dim)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.split(embed_dim)
    if not use_separate_proj_weight and query is key and key is value:
        q, k, v = linear(query, in_proj_weight, in_proj_bias).split(embed_dim, dim=-1)
    else:
        q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    dtype = q._data.dtype
    if attn_mask is not None:
        attn_mask = _mha_mask_bias(attn_mask, dtype)
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
    elif is_causal:
        attn_mask = Tensor._make(_causal_bias(tgt_len, key.shape[0], dtype)[None])
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)

    # (len, N, E) -> (N * H, len, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zeros = Tensor._make(np.zeros((bsz * num_heads, 1, head_dim), dtype=dtype))
        k, v = cat([k, zeros], dim=1), cat([v, zeros], dim=1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = _mha_mask_bias(key_padding_mask, dtype).reshape(bsz, 1, 1, src_len)
        kpm = kpm.expand(bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    p = dropout_p if training else 0.0
    if need_weights and is_low(dtype):  # PyTorch's steps, each rounded to the 16-bit dtype
        out, weights = _rounded_attention(q, k, v, attn_mask, p)
    elif need_weights:
        out, weights = _attention(q, k, v, attn_mask, p, False, None)
    else:  # PyTorch's 4-d scaled_dot_product_attention (its CPU flash kernel without dropout)
        q, k, v = (t.reshape(bsz, num_heads, t.shape[1], head_dim) for t in (q, k, v))
        if attn_mask is not None:
            lead = (1, 1) if attn_mask.shape[0] == 1 else (bsz, num_heads)
            attn_mask = attn_mask.reshape(*lead, -1, src_len)
        fused = _cpu_kernel(q, k, v, p, attn_mask) == "flash"
        out = _attention(q, k, v, attn_mask, p, False, None, fused)[0]
        out = out.reshape(bsz * num_heads, tgt_len, head_dim)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)  # may project to another width (CLIP's pool)
    out = out.reshape(tgt_len, bsz, out.shape[-1])
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if unbatched:
        weights = weights.squeeze(0)
    return out, weights


def _rounded_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float) -> tuple:
    """``multi_head_attention_forward``'s weights and output as PyTorch composes them when
    it returns the weights: the queries scaled by ``1/sqrt(head_dim)``, ``baddbmm`` with the
    mask (``bmm`` without), ``softmax``, ``dropout``, ``bmm`` with the values."""
    scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    keys = k.transpose(-2, -1)
    weights = (baddbmm(mask, scaled, keys) if mask is not None else bmm(scaled, keys)).softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    return bmm(weights, v), weights


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """Append one zero (= may attend) column to an additive or boolean mask."""
    if mask is None:
        return None
    m = mask._data
    pad = np.zeros(m.shape[:-1] + (1,), dtype=m.dtype)
    return Tensor._make(np.concatenate([m, pad], axis=-1))
