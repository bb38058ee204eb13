"""Affine maps: ``linear`` (one fused Function: a single matrix product plus the bias)
and ``bilinear``."""
from __future__ import annotations

import numpy as np

from ..._dtype import c_type_name
from ...autograd.autocast_state import autocast_op
from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import recording
from ...kernels.reductions import column_sum

__all__ = ["linear", "bilinear"]


class LinearFunction(Function):
    """``y = x @ W.T + b`` over the last dim of ``x``; leading dims are flattened into one
    matrix product. Backward: ``dx = g @ W``, ``dW = g.T @ x``, ``db = g.sum(leading)``,
    straight on the arrays (three BLAS calls), or as tensor ops when the backward pass is
    itself recorded (``create_graph=True``)."""

    _raw = True
    _blas = True  # float16 computed in float32 (NumPy has no float16 BLAS)

    @staticmethod
    def forward(ctx, x, w, b):
        xa, wa = x._data, w._data
        if xa.dtype != wa.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{c_type_name(xa.dtype)} != {c_type_name(wa.dtype)}")
        if xa.ndim == 0 or xa.shape[-1] != wa.shape[1]:
            rows = xa.size // xa.shape[-1] if xa.ndim and xa.shape[-1] else 1
            cols = xa.shape[-1] if xa.ndim else 1
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and "
                               f"{wa.shape[1]}x{wa.shape[0]})")
        if xa.ndim == 2:
            out = np.matmul(xa, wa.T)
        else:
            out = np.matmul(xa.reshape(-1, xa.shape[-1]), wa.T).reshape(xa.shape[:-1] + wa.shape[:1])
        if b is not None:
            out += b._data
        ctx.save_for_backward(x, w)
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        if recording():  # create_graph: the gradients are tensor ops, themselves recorded
            g = g.reshape(-1, g.shape[-1])
            gx = g.matmul(w).reshape(x.shape) if need_x else None
            gw = g.t().matmul(x.reshape(-1, x.shape[-1])) if need_w else None
            gb = g.sum(0) if need_b else None
            return gx, gw, gb
        ga = g._data.reshape(-1, g.shape[-1])
        gx = Tensor._make((ga @ w._data).reshape(x.shape)) if need_x else None
        gw = Tensor._make(ga.T @ x._data.reshape(-1, x.shape[-1])) if need_w else None
        gb = Tensor._make(column_sum(ga)) if need_b else None
        return gx, gw, gb


@autocast_op("lower")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""Apply :math:`y = xA^T + b`.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)``.
        bias: ``(out_features)`` or ``None``.

    Returns:
        ``(*, out_features)``.
    """
    if weight._data.ndim == 1:  # PyTorch accepts a 1-D weight: a dot product over the last dim
        out = input.matmul(weight)
        return out + bias if bias is not None else out
    return LinearFunction.apply(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""Apply :math:`y = x_1^T A x_2 + b` for every leading index.

    Args:
        input1: ``(*, in1_features)``.
        input2: ``(*, in2_features)``.
        weight: ``(out_features, in1_features, in2_features)``.
        bias: ``(out_features)`` or ``None``.
    """
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input sizes ({input1.shape[-1]}, {input2.shape[-1]}) do "
                           f"not match weight sizes ({in1}, {in2})")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    # x1 @ A_o for every output o in one product: (*, in1) @ (in1, out*in2)
    mixed = input1.matmul(weight.permute(1, 0, 2).reshape(in1, out_f * in2))
    out = (mixed.reshape(*input1.shape[:-1], out_f, in2) * input2.unsqueeze(-2)).sum(-1)
    return out + bias if bias is not None else out
