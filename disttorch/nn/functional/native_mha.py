"""``nn.MultiheadAttention``'s inference fast path, as PyTorch's CPU build computes it
(``torch._native_multi_head_attention``): the input projection without its bias, the bias
added and the queries scaled by ``1/sqrt(head_dim)`` in one step rounded once to the dtype,
``Q Kᵀ``, the softmax and its product with V each rounded to the dtype, then the output
projection. PyTorch takes it in evaluation mode without gradients for batch-first
self-attention (:func:`fast_path_applies`)."""

from __future__ import annotations

import math

import numpy as np

from ..._tensor import Tensor
from ...autograd.autocast_state import is_autocast_enabled
from ...autograd.grad_mode import is_grad_enabled
from ...kernels.masked_softmax import masked_softmax_16_bit
from ...ops.opmath import is_low
from .linear import linear

__all__ = ["fast_path_applies", "native_multi_head_attention"]


def fast_path_applies(
    module, query: Tensor, key: Tensor, value: Tensor, masks: tuple, is_causal: bool
) -> bool:
    """Whether PyTorch's ``MultiheadAttention.forward`` takes its fast path for these
    arguments (``masks``: ``(key_padding_mask, attn_mask)``, each None or boolean)."""
    params = (module.in_proj_weight, module.in_proj_bias, module.out_proj.weight, module.out_proj.bias)
    return (
        query.dim() == 3
        and query is key
        and key is value
        and module.in_proj_weight is not None
        and module.in_proj_bias is not None
        and module.out_proj.bias is not None
        and query.dtype == module.in_proj_weight.dtype == module.in_proj_bias.dtype
        and not module.training
        and module.num_heads % 2 == 0
        and module.batch_first
        and module.bias_k is None
        and not module.add_zero_attn
        and module._qkv_same_embed_dim
        and not is_causal
        and all(m is None or not m.dtype.is_floating_point for m in masks)
        and not is_autocast_enabled()
        and not (is_grad_enabled() and any(t.requires_grad for t in [query, *params]))
    )


def native_multi_head_attention(
    x: Tensor,
    num_heads: int,
    in_proj_weight: Tensor,
    in_proj_bias: Tensor,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    need_weights: bool,
    average_attn_weights: bool,
) -> tuple:
    """Self-attention of ``x`` ``(B, T, D)`` by the fast path's steps; boolean masks mark with
    True the positions that may not be attended (a query with none left gets zeros).
    Returns ``(output (B, T, D), weights or None)``."""
    B, T, D = x.shape
    dh = D // num_heads
    qkv = x.matmul(in_proj_weight.t())
    scale = Tensor._make(np.asarray(1.0 / math.sqrt(dh), dtype=np.float32))
    wide = (qkv.float() + in_proj_bias.float()).chunk(3, dim=-1)
    q, k, v = (
        t.to(x.dtype).reshape(B, T, num_heads, dh).transpose(1, 2)
        for t in ((wide[0] * scale), wide[1], wide[2])
    )
    scores = q.matmul(k.transpose(-1, -2))
    hidden = _hidden(key_padding_mask, attn_mask, B, num_heads, T)
    if hidden is not None and is_low(scores._data.dtype):  # PyTorch's masked softmax, step by step
        weights = Tensor._make(masked_softmax_16_bit(scores._data, hidden._data))
    elif hidden is not None:
        weights = scores.masked_fill(hidden, float("-inf")).softmax(-1)
    else:
        weights = scores.softmax(-1)
    if hidden is not None:
        weights = weights.masked_fill(hidden.all(-1, keepdim=True), 0.0)
    context = weights.matmul(v).transpose(1, 2).reshape(B, T, D)
    out = linear(context, out_proj_weight, out_proj_bias)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = weights.sum(1) / num_heads
    return out, weights


def _hidden(
    key_padding_mask: Tensor | None, attn_mask: Tensor | None, B: int, H: int, T: int
) -> Tensor | None:
    """The boolean masks merged to ``(B, H, T, T)`` (True: hidden), or None."""
    hidden = None
    if attn_mask is not None:
        hidden = attn_mask.reshape(B, H, T, T) if attn_mask.dim() == 3 else attn_mask.reshape(1, 1, T, T)
    if key_padding_mask is not None:
        pad = key_padding_mask.reshape(B, 1, 1, T)
        hidden = pad if hidden is None else hidden | pad
    return None if hidden is None else hidden.expand(B, H, T, T)
