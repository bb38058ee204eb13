"""Softmax and log-softmax along one dimension, computed stably (the max subtracted first).

``softmax``, ``log_softmax`` and ``softmin`` are ``nn.functional``'s (an omitted ``dim`` is
chosen with PyTorch's deprecation warning); ``disttorch.softmax`` and ``Tensor.softmax``
(``ops.reduction``) require ``dim``. Both run the two Functions here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype, _native_warnings
from .._tensor import Tensor, _wrap_dim
from ..autograd.function import Function
from ..autograd.grad_mode import recording
from ..autograd.saved_fields import kept
from ..kernels import softmax as _kernels
from ._helpers import float_input
from .opmath import is_low

__all__ = ["softmax", "log_softmax", "softmin"]


def _kernel(name: str, x: Tensor, dim: int) -> str:
    """The name of PyTorch's softmax kernel for ``x`` along ``dim`` (its errors name it)."""
    return (
        f"{name}_lastdim_kernel_impl"
        if dim in (-1, x._data.ndim - 1) or x._data.ndim == 0
        else f"{name}_kernel_impl"
    )


class Softmax(Function):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``; backward
    ``y * (g - sum(g * y))``. float16/bfloat16 inputs: the kernel rounds as PyTorch's does,
    and backward computes in float32 and rounds once, as PyTorch's backward kernel."""

    _raw = True
    _own_16_bit = True
    _backward_saves = {"dim": lambda ctx: ctx.dim, "result": kept("out", 0)}

    @staticmethod
    def forward(ctx, x, dim):
        e = _kernels.softmax(float_input(x, _kernel("softmax", x, dim)), dim)
        ctx.save_for_backward(x)
        ctx.out, ctx.dim = e, dim
        return e

    @staticmethod
    def backward(ctx, g):
        y = _softmax_of_saved(ctx, ctx.out)
        if is_low(g._data.dtype):
            wide, yw = g.float(), y.float()
            return (yw * (wide - (wide * yw).sum(ctx.dim, keepdim=True))).to(g.dtype), None
        return y * (g - (g * y).sum(ctx.dim, keepdim=True)), None


class LogSoftmax(Function):
    """``x - max - log(sum(exp(x - max)))`` along ``dim``; backward
    ``g - softmax(x) * sum(g)``. float16/bfloat16 inputs: the kernel rounds as PyTorch's
    does, and backward computes in float32 from ``exp(output)`` and rounds once, as
    PyTorch's backward kernel."""

    _raw = True
    _own_16_bit = True
    _backward_saves = {
        "dim": lambda ctx: ctx.dim,
        # the output is not kept (backward reads the softmax): recomputed from the input
        "result": lambda ctx: Tensor._make(
            _kernels.log_softmax(ctx._checked_saved()[0]._data, ctx.dim)[0], ctx, 0
        ),
    }

    @staticmethod
    def forward(ctx, x, dim):
        out, probs = _kernels.log_softmax(float_input(x, _kernel("log_softmax", x, dim)), dim)
        ctx.save_for_backward(x)
        ctx.softmax, ctx.dim, ctx.out = probs, dim, out
        return out

    @staticmethod
    def backward(ctx, g):
        gx = None if recording() else _kernels.log_softmax_backward(g._data, ctx.out, ctx.dim)
        if gx is not None:  # PyTorch's steps
            return Tensor._make(gx), None
        probs = _softmax_of_saved(ctx, ctx.softmax)
        if is_low(g._data.dtype):
            wide = g.float()
            return (wide - probs.float() * wide.sum(ctx.dim, keepdim=True)).to(g.dtype), None
        return g - probs * g.sum(ctx.dim, keepdim=True), None


def _softmax_of_saved(ctx: Any, probs: np.ndarray) -> Tensor:
    """The softmax of the saved input along ``ctx.dim``: the kept array, or (when
    backward is recorded) a softmax recomputed in the graph."""
    if recording():
        (x,) = ctx._checked_saved()
        return Softmax.apply(x, ctx.dim)
    return Tensor._make(probs)


def _softmax_dim(ndim: int, name: str) -> int:
    _native_warnings.warn(  # at the program's line, as PyTorch's _stacklevel puts it
        f"Implicit dimension choice for {name} has been deprecated. Change the call "
        f"to include dim=X as an argument."
    )
    return 0 if ndim in (0, 1, 3) else 1


def _prepare(input: Tensor, dim: Any, dtype: Any, name: str) -> tuple:
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = _softmax_dim(input._data.ndim, name)
    return input, _wrap_dim(dim, input._data.ndim)


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: _dtype.dtype | None = None
) -> Tensor:
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim`` (the max is subtracted first)."""
    input, dim = _prepare(input, dim, dtype, "softmax")
    if input._data.ndim == 0:
        return Softmax.apply(input.reshape(1), 0).reshape(())
    return Softmax.apply(input, dim)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: _dtype.dtype | None = None
) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed stably in one pass."""
    input, dim = _prepare(input, dim, dtype, "log_softmax")
    if input._data.ndim == 0:
        return LogSoftmax.apply(input.reshape(1), 0).reshape(())
    return LogSoftmax.apply(input, dim)


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: _dtype.dtype | None = None
) -> Tensor:
    """``softmax(-x)`` along ``dim``."""
    input, dim = _prepare(input, dim, dtype, "softmin")
    return Softmax.apply(-input, dim)


def _softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> Tensor:
    """The gradient of ``softmax`` along ``dim`` given its ``output``:
    ``output * (grad_output - sum(grad_output * output))`` (``torch._softmax_backward_data``,
    which custom softmax Functions call; a float32 gradient of a 16-bit input is rounded to
    ``input_dtype``). Differentiable."""
    d = _wrap_dim(dim, output.dim())
    grad = output * (grad_output - (grad_output * output).sum(d, keepdim=True))
    if grad.dtype == _dtype.float32 and input_dtype in (_dtype.float16, _dtype.bfloat16):
        return grad.to(input_dtype)
    return grad
