"""More activations: ``celu``, ``rrelu``, ``threshold``, ``hardshrink``, ``softshrink``,
``tanhshrink``, ``softsign``, ``gumbel_softmax``, and the in-place forms (``relu_``,
``elu_``, ``selu_``, ``celu_``, ``leaky_relu_``, ``hardtanh_``, ``rrelu_``,
``threshold_``).

Each is composed from differentiable tensor ops (``where``, ``exp``, ``tanh``...), so
first and higher-order gradients come from the autograd graph. In-place forms go through
the in-place machinery (``ops.inplace``), which keeps autograd's version checks; ``relu_``,
``leaky_relu_`` and ``hardtanh_`` (defined with their functions) write straight into the
input's memory.
"""

from __future__ import annotations

import numpy as np

from ..._dtype import scalar_type_name
from ..._random import _gen
from ..._tensor import Tensor
from ...autograd.function import named_node
from ...autograd.grad_reads import reads_inputs
from ...kernels import torch_random as _kr
from ...ops import elementwise as _ew
from ...ops.inplace import relu_
from ...ops.tensor_attributes import hardshrink as _hardshrink
from .activation import Elu, elu_, fused, hardtanh_, in_place, leaky_relu, leaky_relu_, selu_, softmax

__all__ = [
    "celu",
    "celu_",
    "elu_",
    "gumbel_softmax",
    "hardshrink",
    "hardtanh_",
    "leaky_relu_",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu_",
    "softshrink",
    "softsign",
    "tanhshrink",
    "threshold",
    "threshold_",
]


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")

    @fused("CeluBackward0")
    def fn(t: Tensor) -> Tensor:  # PyTorch's: ELU's kernel with input_scale 1 / alpha
        return Elu.apply(t, alpha, 1.0, 1.0 / alpha, 1.0 / float(np.float32(alpha)))

    return in_place(fn, "CeluBackward1", True)(input) if inplace else fn(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x if x > threshold else value``."""

    @fused("ThresholdBackward0")
    def fn(t: Tensor) -> Tensor:
        # (NaN is not <= threshold: it stays NaN, as in PyTorch)
        value_ = Tensor._make(np.asarray(value, dtype=t._data.dtype))
        return reads_inputs(_ew.where(t <= threshold, value_, t))  # PyTorch's threshold_backward(grad, self)

    return in_place(fn, "ThresholdBackward1")(input) if inplace else fn(input)


@fused("HardshrinkBackward0")
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x if |x| > lambd else 0`` (NaN stays NaN)."""
    return reads_inputs(_hardshrink(input, lambd))


@fused("SoftshrinkBackward0")
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd if x > lambd``, ``x + lambd if x < -lambd``, else 0 (NaN stays NaN)."""
    if lambd < 0:
        dtype = input._data.dtype
        raise RuntimeError(
            f"lambda must be in range [0, {float(np.finfo(dtype).max):g}] for input dtype "
            f"{scalar_type_name(dtype)}, but found {lambd:g}"
        )
    # ``input * 0`` inside: -0.0 for negative inputs and NaN for NaN (with a zero gradient),
    # as PyTorch's kernels give
    inner = _ew.where(input < -lambd, input + lambd, input * 0)
    return reads_inputs(_ew.where(input > lambd, input - lambd, inner))


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - input.tanh()


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    return input / (input.abs() + 1)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: in training each negative element is scaled by a slope drawn
    from ``U(lower, upper)``; in evaluation by ``(lower + upper) / 2``."""
    if not training:

        def fn(t):
            return leaky_relu(t, (lower + upper) / 2)
    else:
        a = input._data
        # PyTorch draws one double U(lower, upper) slope per element <= 0, in order, with the
        # bounds first rounded to the input's (opmath) precision
        neg = a <= 0
        op = np.float64 if a.dtype == np.float64 else np.float32
        lo, hi = float(op(lower)), float(op(upper))
        slope = np.ones(a.shape, dtype=a.dtype)
        slope[neg] = _kr.uniform(_gen(None), int(neg.sum()), np.dtype(np.float64), lo, hi)
        slope_t = Tensor._make(slope)

        def fn(t):
            return t * slope_t

    if inplace:
        return in_place(fn, "RreluWithNoiseBackward1", True)(input)
    return named_node(fn(input), "RreluWithNoiseBackward0")  # (PyTorch's op, in training or not)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g ~ Gumbel(0, 1)``. ``hard=True`` returns one-hot samples whose gradient is that of
    the soft sample (straight-through)."""
    d = logits._data  # PyTorch: -empty_like(logits).exponential_().log()
    gumbels = Tensor._make(-np.log(_kr.exponential(_gen(None), d.size, d.dtype, 1.0).reshape(d.shape)))
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft._data.argmax(axis=dim)
    hard_arr = np.zeros_like(y_soft._data)
    np.put_along_axis(hard_arr, np.expand_dims(index, dim), 1.0, axis=dim)
    return Tensor._make(hard_arr) - y_soft.detach() + y_soft


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return _threshold(input, threshold, value, inplace=True)


_threshold = threshold
