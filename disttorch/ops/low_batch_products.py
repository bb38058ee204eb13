"""``baddbmm`` and ``addbmm`` of float16/bfloat16 tensors, rounded where PyTorch's CPU kernels
round: ``baddbmm`` once (``beta * input + alpha * batch1 @ batch2`` in float32), ``addbmm``
after each batch (PyTorch's loop of ``addmm_`` calls, the first scaling ``input`` by
``beta``); their gradients by PyTorch's formulas, each product and scaling rounded to the
dtype (``grad.bmm(batch2ᵀ) * alpha``, ...)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function, named_node
from .opmath import is_low


class LowBatchProduct(Function):
    """``beta * input + alpha * (batch1 @ batch2)``, per batch or (``summed``) summed over
    batches, of three tensors of one 16-bit dtype."""

    _raw = True
    _own_16_bit = True

    @staticmethod
    def forward(ctx: Any, input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any, summed: bool):
        ctx.batch1, ctx.batch2, ctx.beta, ctx.alpha, ctx.summed = batch1, batch2, beta, alpha, summed
        ctx.shape = input._data.shape
        low = input._data.dtype
        a, b = batch1._data.astype(np.float32), batch2._data.astype(np.float32)
        c = input._data.astype(np.float32)
        products = [a @ b] if not summed else [a[i] @ b[i] for i in range(a.shape[0])]
        if not products:  # (no batches: beta * input)
            products = [np.zeros(np.broadcast_shapes(c.shape, (a.shape[1], b.shape[2])), np.float32)]
        for i, p in enumerate(products):
            scale = beta if i == 0 else 1
            if alpha != 1:
                p = p * np.float32(alpha)
            if scale != 0:  # (as PyTorch: with beta 0, input is ignored, NaNs too)
                p = (c if scale == 1 else c * np.float32(scale)) + p
            c = p.astype(low).astype(np.float32)
        return c.astype(low)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> tuple:
        a, b, alpha = ctx.batch1, ctx.batch2, ctx.alpha
        wide = g.unsqueeze(0).expand(a.shape[0], *g.shape) if ctx.summed else g
        grads: list[Any] = [None, None, None, None, None, None]
        if ctx.needs_input_grad[0]:
            grads[0] = (g if ctx.beta == 1 else g * ctx.beta).sum_to_size(ctx.shape)
        if ctx.needs_input_grad[1]:
            grads[1] = wide.bmm(b.transpose(1, 2)) * alpha
        if ctx.needs_input_grad[2]:
            grads[2] = a.transpose(1, 2).bmm(wide) * alpha
        return tuple(grads)


def low_batch_product(
    input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any, summed: bool, node: str
) -> Tensor | None:
    """The op as PyTorch's 16-bit kernels compute it, or None where it does not apply (other
    dtypes, mixed dtypes, or shapes the general path refuses with its errors)."""
    dtypes = {t._data.dtype for t in (input, batch1, batch2) if type(t) is Tensor}
    if len(dtypes) != 1 or not is_low(next(iter(dtypes))) or type(input) is not Tensor:
        return None
    if type(batch1) is not Tensor or type(batch2) is not Tensor:
        return None
    s1, s2 = batch1._data.shape, batch2._data.shape
    if len(s1) != 3 or len(s2) != 3 or s1[0] != s2[0] or s1[2] != s2[1]:
        return None
    out = (s1[1], s2[2]) if summed else (s1[0], s1[1], s2[2])
    try:
        if np.broadcast_shapes(input._data.shape, out) != out:
            return None
    except ValueError:
        return None
    return named_node(LowBatchProduct.apply(input, batch1, batch2, beta, alpha, summed), node)
