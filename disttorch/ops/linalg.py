"""Matrix products: matmul (1-D, 2-D and batched with broadcasting), mm, bmm."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.function import Function

TENSOR_METHODS = ("matmul", "mm", "bmm")


def _shape_str(s: tuple) -> str:
    return "x".join(str(d) for d in s)


class Matmul(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        if x.ndim == 0 or y.ndim == 0:
            raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                               f"{x.ndim}D and {y.ndim}D")
        if x.dtype != y.dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{a.dtype.name} != {b.dtype.name}")
        kx = x.shape[-1]
        ky = y.shape[-2] if y.ndim > 1 else y.shape[0]
        if kx != ky:
            if x.ndim <= 2 and y.ndim <= 2:
                sx = x.shape if x.ndim == 2 else (1,) + x.shape
                sy = y.shape
                raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                                   f"({_shape_str(sx)} and {_shape_str(sy)})")
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{kx}] but got: [{ky}] (matmul of shapes {list(x.shape)} and "
                               f"{list(y.shape)})")
        ctx.save_for_backward(a, b)
        try:
            return np.matmul(x, y)
        except ValueError:
            raise RuntimeError(f"matmul: batch dimensions of {list(x.shape)} and {list(y.shape)} "
                               f"do not broadcast") from None

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = g2.unsqueeze(-2)
        if b.ndim == 1:
            g2 = g2.unsqueeze(-1)
        ga = gb = None
        if na:
            ga = g2.matmul(b2.mT)
            if a.ndim == 1:
                ga = ga.squeeze(-2)
        if nb:
            gb = a2.mT.matmul(g2)
            if b.ndim == 1:
                gb = gb.squeeze(-1)
        return ga, gb


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Matrix product with NumPy/PyTorch semantics for 1-D, 2-D and batched operands."""
    return Matmul.apply(input, other)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Product of two 2-D matrices."""
    if input._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(f"self must be a matrix" if input._data.ndim != 2 else "mat2 must be a matrix")
    return Matmul.apply(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched product of two 3-D tensors with equal batch sizes."""
    if input._data.ndim != 3 or mat2._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input._data.ndim != 3 else "batch2 must be a 3D tensor")
    if input._data.shape[0] != mat2._data.shape[0]:
        raise RuntimeError(f"Expected size for first dimension of batch2 tensor to be: "
                           f"[{input._data.shape[0]}] but got: [{mat2._data.shape[0]}].")
    return Matmul.apply(input, mat2)
