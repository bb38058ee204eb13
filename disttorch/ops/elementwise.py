"""Elementwise ops: arithmetic, powers, exponentials, activations, dtype casts.

Each op is one Function: forward computes on NumPy arrays, backward (right below it)
expresses the gradient with tensor ops, so it can itself be differentiated. Gradients of
broadcast operands are summed back to their shapes by the engine.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import dtype as _dtype_cls
from .._dtype import from_numpy, result_type
from .._tensor import Tensor
from ..autograd.function import Function
from ._helpers import arr, binary, float_result

TENSOR_METHODS = ("add", "sub", "mul", "div", "true_divide", "pow", "neg", "exp", "log",
                  "relu", "cast", "negative", "multiply", "subtract", "divide")


def _operands(ctx: Any, a: Any, b: Any) -> None:
    """Save both operands of a binary op; Python scalars are kept as plain numbers."""
    ctx.save_for_backward(a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None)
    ctx.scalars = (None if isinstance(a, Tensor) else a, None if isinstance(b, Tensor) else b)


def _saved_operands(ctx: Any) -> tuple:
    ta, tb = ctx.saved_tensors
    sa, sb = ctx.scalars
    return (ta if ta is not None else sa), (tb if tb is not None else sb)


class Add(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, b):
        return binary(np.add, a, b)

    @staticmethod
    def backward(ctx, g):
        return g, g


class Sub(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, b):
        return binary(np.subtract, a, b)

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)


class Mul(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, b):
        _operands(ctx, a, b)
        return binary(np.multiply, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = _saved_operands(ctx)
        na, nb = ctx.needs_input_grad
        return (g * b if na else None), (g * a if nb else None)


class Div(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, b):
        _operands(ctx, a, b)
        xa, xb = arr(a), arr(b)
        try:
            out = np.true_divide(xa, xb)
        except ValueError:
            return binary(np.true_divide, a, b)
        rt_src = result_type(xa, xb)
        if np.dtype(rt_src).kind == "f" and out.dtype != rt_src:
            out = out.astype(rt_src)
        return float_result(out)

    @staticmethod
    def backward(ctx, g):
        a, b = _saved_operands(ctx)
        na, nb = ctx.needs_input_grad
        ga = g / b if na else None
        gb = -g * a / (b * b) if nb else None
        return ga, gb


class Pow(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, b):
        _operands(ctx, a, b)
        out = binary(np.power, a, b)
        ctx.out = out
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = _saved_operands(ctx)
        na, nb = ctx.needs_input_grad
        ga = g * b * a ** (b - 1) if na else None
        gb = None
        if nb:
            base = a if isinstance(a, Tensor) else Tensor._make(np.asarray(a, dtype=ctx.out.dtype))
            gb = g * (a ** b) * log(where_positive(base))
        return ga, gb


def where_positive(x: Tensor) -> Tensor:
    """``x`` with non-positive entries replaced by 1, so ``log`` is finite (d/db a**b at a<=0
    is taken as 0 there, as PyTorch does for a == 0)."""
    return Tensor._make(np.where(x._data > 0, x._data, 1).astype(x._data.dtype))


class Neg(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a):
        return np.negative(a._data)

    @staticmethod
    def backward(ctx, g):
        return -g


class Exp(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a):
        out = float_result(np.exp(a._data))
        ctx.out = out
        return out

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.out)


class Log(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return float_result(np.log(a._data))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g / a


class Relu(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a):
        x = a._data
        out = np.maximum(x, 0, dtype=x.dtype)
        ctx.mask = x > 0
        return out

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.mask.astype(g._data.dtype))


class Cast(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, dt):
        ctx.src = a._data.dtype
        return a._data.astype(dt.numpy)

    @staticmethod
    def backward(ctx, g):
        return Cast.apply(g, from_numpy(ctx.src)), None


# ---------------------------------------------------------------------- public functions
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other`` with broadcasting."""
    return Add.apply(input, other if alpha == 1 else mul(other, alpha))


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other`` with broadcasting."""
    return Sub.apply(input, other if alpha == 1 else mul(other, alpha))


def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product with broadcasting."""
    return Mul.apply(input, other)


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """True division (``rounding_mode=None``), or ``'trunc'`` / ``'floor'`` (no gradient)."""
    if rounding_mode is None:
        return Div.apply(input, other)
    fn = {"trunc": np.trunc, "floor": np.floor}.get(rounding_mode)
    if fn is None:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    xa, xb = arr(input), arr(other)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = binary(np.floor_divide if rounding_mode == "floor" else np.true_divide, input, other)
        if rounding_mode == "trunc":
            out = fn(out)
            rt = result_type(xa, xb)
            out = out.astype(rt)
    return Tensor._make(out)


def pow(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent``; either may be a Python number."""
    return Pow.apply(input, exponent)


def neg(input: Tensor) -> Tensor:
    return Neg.apply(input)


def exp(input: Tensor) -> Tensor:
    return Exp.apply(input)


def log(input: Tensor) -> Tensor:
    return Log.apply(input)


def relu(input: Tensor) -> Tensor:
    return Relu.apply(input)


def cast(input: Tensor, dtype: _dtype_cls) -> Tensor:
    """A copy of ``input`` converted to ``dtype`` (differentiable between float dtypes)."""
    return Cast.apply(input, dtype)


true_divide = divide = div
negative = neg
multiply = mul
subtract = sub
