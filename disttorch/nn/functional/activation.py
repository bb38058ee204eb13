"""Activation functions: ``relu``, ``leaky_relu``, ``elu``, ``selu``, ``gelu``, ``silu``,
``tanh``, ``sigmoid``, ``softplus``, and the numerically stable ``softmax``,
``log_softmax`` and ``softmin`` (``relu``, ``tanh`` and ``sigmoid`` are the core ops; the
softmax family lives in ``disttorch.ops.softmax``, below ``nn``, and is re-exported here).

The piecewise-linear and composite ones (``hardtanh``, ``relu6``, ``hardsigmoid``,
``hardswish``, ``logsigmoid``, ``mish``, ``glu``, ``prelu``) are built from core ops and
the functions above. The rest are one Function each: forward on NumPy arrays, keeping what backward needs (the output
or a mask); backward multiplies the incoming gradient by the local derivative, taken
from those arrays, or rebuilt from tensor ops of the saved input when backward is itself
recorded (``create_graph=True``), so higher-order gradients are right too.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, TypeVar

import numpy as np

from ..._tensor import Tensor, _wrap_dim
from ...autograd.autocast_state import autocast_op
from ...autograd.function import Function, named_node
from ...autograd.grad_mode import recording
from ...autograd.grad_reads import reads_inputs
from ...kernels import softplus as _softplus
from ...kernels.cephes_f32 import fma_f32
from ...kernels.gelu import gelu_tanh_with_derivative, gelu_with_derivative
from ...kernels.sigmoid import sigmoid as _sigmoid_array
from ...kernels.threads import elementwise, row_major
from ...kernels.vec_exp import compiled_exp, loop_exp, loop_expm1, one_plus_exp_neg
from ...ops import elementwise as _ew
from ...ops._helpers import float_input
from ...ops.inplace import _inplace, in_own_memory
from ...ops.opmath import computed_in_float32, is_low
from ...ops.shape import cat
from ...ops.softmax import log_softmax, softmax, softmin

__all__ = [
    "relu",
    "leaky_relu",
    "elu",
    "selu",
    "gelu",
    "silu",
    "tanh",
    "sigmoid",
    "softplus",
    "softmax",
    "log_softmax",
    "softmin",
    "hardtanh",
    "relu6",
    "logsigmoid",
    "mish",
    "hardsigmoid",
    "hardswish",
    "glu",
    "prelu",
]

_Op = TypeVar("_Op", bound=Callable[..., Tensor])
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def fused(node: str) -> Callable[[_Op], _Op]:
    """Decorate an activation that PyTorch computes in one CPU kernel: its result's
    ``grad_fn`` is named ``node``, and a float16/bfloat16 input is computed in float32 and
    rounded once (forward and backward), as that kernel does, not once per step."""

    def wrap(fn: _Op) -> _Op:
        wide = computed_in_float32(fn)

        @functools.wraps(fn)
        def op(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
            low = isinstance(input, Tensor) and is_low(input._data.dtype)
            return named_node((wide if low else fn)(input, *args, **kwargs), node)

        return op  # type: ignore[return-value]

    return wrap


def _times(g: Tensor, local: Callable[..., np.ndarray], *arrays: Any) -> Tensor:
    """``g * local(*arrays)`` for an element-wise local derivative (of the output's shape),
    computed with the product in one pass when no graph is recorded; split over the op's
    threads when large (``kernels.threads.elementwise``). A float16/bfloat16 gradient is
    multiplied in float32 and rounded once, as PyTorch's fused backward kernels do."""
    dt = g._data.dtype
    if recording():
        return g * Tensor._make(elementwise(lambda *a: local(*a).astype(dt, copy=False), *arrays))
    wide = np.dtype(np.float32) if is_low(dt) else dt

    def times(gg: np.ndarray, *a: np.ndarray) -> np.ndarray:
        out = np.asarray(local(*a)).astype(wide, copy=False)  # a new array (0-d too): multiplied in place
        np.multiply(out, gg, out=out)
        return out.astype(dt, copy=False)

    return Tensor._make(elementwise(times, g._data, *arrays))


class LeakyRelu(Function):
    _raw = True
    _grad_reads = "zero"
    _profiled_as = staticmethod(
        lambda x, slope, inplace=False: "aten::leaky_relu_" if inplace else "aten::leaky_relu"
    )

    @staticmethod
    def forward(ctx, x, negative_slope, inplace=False):
        a = float_input(x, "leaky_relu_cpu")
        slope = a.dtype.type(negative_slope)
        pos = elementwise(np.greater, a, 0)
        ctx.pos, ctx.slope = pos, negative_slope
        if inplace:  # into x's memory, kept as PyTorch's LeakyReluBackward1 keeps the result
            ctx.kept_result = a
        if slope == 0 or not np.isfinite(slope):  # (0 * inf: NaN, silently, as PyTorch's)
            with np.errstate(invalid="ignore"):
                if inplace:
                    return np.multiply(a, slope, out=a, where=~pos)
                return elementwise(lambda v, p: np.where(p, v, v * slope), a, pos)
        # x where x > 0, else slope * x: the larger of the two for a slope below 1, else the
        # smaller (the same bits as a select, in half the time)
        pick = np.maximum if negative_slope < 1 else np.minimum
        scaled = elementwise(np.multiply, a, slope)
        return pick(a, scaled, out=a if inplace else scaled)

    @staticmethod
    def backward(ctx, g):  # the local derivative is piecewise constant: exact to any order
        return _times(g, lambda pos: np.where(pos, 1, ctx.slope), ctx.pos), None, None


class Elu(Function):
    """``scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))`` as PyTorch's kernel
    computes it: ``x * scale``, or ``expm1(x * input_scale) * (alpha * scale)`` (ELU; SELU
    and CELU with their constants), in float32 for float16/bfloat16. ``grad_input_scale``:
    the ``input_scale`` of the derivative where it differs (CELU's is ``1 / float32(alpha)``,
    as PyTorch's derivative formula rounds alpha to float)."""

    _raw = True

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale=1.0, grad_input_scale=None):
        a = float_input(x, "elu_cpu")
        pos = elementwise(np.greater, a, 0)
        wide = np.dtype(np.float32) if is_low(a.dtype) else a.dtype
        one = wide.type

        def value(p: np.ndarray, v: np.ndarray) -> np.ndarray:
            w = v.astype(wide, copy=False)
            arg = np.copysign(np.minimum(w, 0), w) * one(input_scale)  # -0.0 stays
            neg = loop_expm1(arg, like=v) if wide == np.float32 else np.expm1(arg)
            neg *= one(alpha) * one(scale)
            return np.where(p, w * one(scale) if scale != 1 else w, neg).astype(v.dtype, copy=False)

        ctx.save_for_backward(x)
        ctx.pos, ctx.alpha, ctx.scale = pos, alpha, scale
        ctx.input_scale = input_scale if grad_input_scale is None else grad_input_scale
        return elementwise(value, pos, a)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx._checked_saved()
        alpha, scale, input_scale = ctx.alpha, ctx.scale, ctx.input_scale
        if recording():
            slope = _ew.exp(x * input_scale) * (alpha * input_scale)
            slope = _ew.where(x < 0, slope, slope.detach())  # at 0: no second derivative, as PyTorch's
            return g * (_ew.where(x > 0, 1.0, slope) * scale), None, None, None, None
        return _elu_grad(g._data, x._data, ctx.pos, alpha, scale, input_scale), None, None, None, None


def _elu_grad(
    g: np.ndarray, x: np.ndarray, pos: np.ndarray, alpha: float, scale: float, input_scale: float
) -> Tensor:
    """ELU's input gradient as PyTorch's kernel computes it: ``g * scale`` where ``x > 0``,
    else ``g * input_scale * (alpha * scale) * exp(x * input_scale)`` in that order (from
    ``exp``, not from the output's ``expm1``, which loses every digit below -15), in float32
    for float16/bfloat16."""
    dt = g.dtype
    wide = np.dtype(np.float32) if is_low(dt) else dt
    one = wide.type

    def grad(gg: np.ndarray, xx: np.ndarray, p: np.ndarray) -> np.ndarray:
        gg, xx = gg.astype(wide, copy=False), xx.astype(wide, copy=False)
        arg = xx * one(input_scale) if input_scale != 1 else xx
        e = loop_exp(arg) if wide == np.float32 else np.exp(arg)
        neg = np.multiply(gg * one(input_scale) * (one(alpha) * one(scale)), e, out=e)
        return np.where(p, gg * one(scale), neg).astype(dt, copy=False)

    return Tensor._make(elementwise(grad, g, x, pos))


class Gelu(Function):
    """``x * Phi(x)`` with the exact normal CDF, or its tanh approximation
    ``0.5 x (1 + tanh(u))`` with ``u = sqrt(2/pi) (x + 0.044715 x^3)``; backward
    ``g * gelu'(x)`` (``GeluDerivative``, from the derivative forward computed alongside)."""

    _raw = True

    @staticmethod
    def forward(ctx, x, approximate):
        a = float_input(x, "GeluKernelImpl")
        kernel = gelu_tanh_with_derivative if approximate == "tanh" else gelu_with_derivative
        out, local = kernel(a, bool(ctx.needs_input_grad))
        ctx.save_for_backward(x)
        ctx.approximate, ctx.local = approximate, local
        return out

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx._checked_saved()
        return g * GeluDerivative.apply(x, ctx.approximate, ctx.local), None


class GeluDerivative(Function):
    """``gelu'(x)``: ``Phi(x) + x phi(x)`` (exact) or the tanh form's derivative; ``local``,
    the array Gelu's forward computed, is returned as it is. Backward ``gg * gelu''(x)``:
    ``phi(x) (2 - x^2)`` (exact) or ``(1 - t^2) (u' + x (u''/2 - t u'^2))`` with
    ``t = tanh(u)`` (tanh), as tensor ops, so every higher order is recorded too."""

    _raw = True

    @staticmethod
    def forward(ctx, x, approximate, local):
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        return local

    @staticmethod
    def backward(ctx, gg):
        (x,) = ctx._checked_saved()
        if ctx.approximate == "tanh":
            th = _ew.tanh((x + 0.044715 * x * x * x) * _SQRT_2_OVER_PI)
            du = (x * x * (3 * 0.044715) + 1) * _SQRT_2_OVER_PI
            d2u = x * (6 * 0.044715 * _SQRT_2_OVER_PI)
            second = (1 - th * th) * (du + x * (d2u * 0.5 - th * du * du))
        else:
            second = _ew.exp(x * x * -0.5) * _INV_SQRT_2PI * (2 - x * x)
        return gg * second, None, None


class Silu(Function):
    _raw = True

    @staticmethod
    def forward(ctx, x):
        a = float_input(x, "silu_cpu")
        wide = a.astype(np.float32) if a.dtype == np.float16 else a  # rounded once, as PyTorch's
        ctx.save_for_backward(x)
        if wide.dtype == np.float32 and compiled_exp():  # x / (1 + exp(-x)): PyTorch's kernel's steps
            t = elementwise(one_plus_exp_neg, wide)
            ctx.s = np.divide(1, t)
            with np.errstate(invalid="ignore"):  # -inf / inf: NaN, as PyTorch's, without a warning
                return np.divide(wide, t, out=t).astype(a.dtype, copy=False)
        s = elementwise(_sigmoid_array, wide)
        ctx.s = s
        return elementwise(np.multiply, wide, s).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx._checked_saved()
        if recording():
            s = _ew.sigmoid(x)
            return g * (s * (x * (1 - s) + 1))
        if g._data.dtype == np.float32 and x._data.dtype == np.float32 and compiled_exp():
            return Tensor._make(elementwise(_silu_backward_f32, g._data, ctx.s, x._data))
        return _times(g, lambda s, v: s * (1 + v * (1 - s)), ctx.s, x._data)


def _silu_backward_f32(g: np.ndarray, s: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``g * s * (1 + x * (1 - s))`` in PyTorch's vectorised kernel's order, its last
    multiply-add fused (with the forward's steps: its bits)."""
    with np.errstate(invalid="ignore"):  # infinite x: NaN, as PyTorch's, without a warning
        out = np.multiply(g, s)
        return np.multiply(out, fma_f32(x, 1 - s, np.float32(1)), out=out)


class Softplus(Function):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold`` (float32: PyTorch's
    kernel's steps, ``kernels/softplus.py``)."""

    _raw = True

    @staticmethod
    def forward(ctx, x, beta, threshold):
        a = float_input(x, "softplus_cpu")
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        if a.dtype == np.float32 and compiled_exp():
            return elementwise(_softplus.softplus, a, beta, threshold)
        b = a.dtype.type(beta)
        bx = elementwise(np.multiply, a, b)
        linear = elementwise(np.greater, bx, threshold)
        with np.errstate(invalid="ignore"):  # NaN in, NaN out, without NumPy's warning
            return elementwise(
                lambda v, vb, lin: np.where(lin, v, np.logaddexp(0, np.where(lin, 0, vb)) / b), a, bx, linear
            )

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx._checked_saved()
        a = x._data
        bx = elementwise(np.multiply, a, a.dtype.type(ctx.beta))
        linear = elementwise(np.greater, bx, ctx.threshold)
        if recording():
            local = _ew.where(Tensor._make(linear), 1.0, _ew.sigmoid(x * ctx.beta))
            return g * local, None, None
        if g._data.dtype == np.float32 and a.dtype == np.float32 and compiled_exp():
            gx = elementwise(_softplus.softplus_backward, g._data, a, ctx.beta, ctx.threshold)
            return Tensor._make(gx), None, None
        return _times(g, lambda lin, vb: np.where(lin, 1, _sigmoid_array(vb)), linear, bx), None, None


class LogSigmoid(Function):
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, keeping ``exp(-|x|)`` for the
    gradient (float32: PyTorch's kernel's steps, ``kernels/softplus.py``)."""

    _raw = True

    @staticmethod
    def forward(ctx, x, buffer_dtype=None):
        # (row-major whatever ``x``'s layout: PyTorch's kernel reads ``x.contiguous()``)
        a = row_major(float_input(x, "log_sigmoid_cpu"))
        ctx.save_for_backward(x)
        if a.dtype == np.float32 and compiled_exp():
            buffer = elementwise(_softplus.sleef_exp_neg_abs, a)
            out = elementwise(_softplus.log_sigmoid, a, buffer)
        else:
            buffer = elementwise(np.exp, -np.abs(a))
            out = elementwise(np.minimum, a, 0) - elementwise(np.log1p, buffer)
        if buffer_dtype is not None:  # a 16-bit input's: PyTorch keeps its buffer in that dtype
            buffer = buffer.astype(buffer_dtype).astype(a.dtype)
        ctx.buffer = buffer
        return out

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx._checked_saved()
        if recording():
            return g * _ew.sigmoid(-x), None
        return Tensor._make(elementwise(_softplus.log_sigmoid_backward, g._data, x._data, ctx.buffer)), None


# ---------------------------------------------------------------------- public functions
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)`` elementwise; ``inplace``: written into ``input``, which is returned."""
    if input.is_quantized:
        return input.relu()
    return input.relu_() if inplace else _ew.relu(input)


def in_place(
    fn: Callable[..., Tensor], node: str | None = None, keeps_result: bool = False
) -> Callable[[Tensor], Tensor]:
    """``fn(input)``'s values stored in ``input`` through ``ops.inplace`` (as PyTorch's ``op_``:
    same tensor, version bumped, its errors), the node renamed ``node`` (``EluBackward1``).
    ``keeps_result``: the node keeps the result, as PyTorch's (whose backward reads it), so
    that a later in-place change of it makes backward raise."""

    def op(input: Tensor) -> Tensor:
        out = _inplace(input, lambda t: named_node(fn(t), node) if node else fn(t))
        if keeps_result and out.grad_fn is not None and out._base is None:
            out.grad_fn.kept_result = out._data
        return out

    return op


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x if x > 0 else negative_slope * x``."""
    return leaky_relu_(input, negative_slope) if inplace else _leaky_relu(input, negative_slope)


@fused("LeakyReluBackward0")
def _leaky_relu(input: Tensor, negative_slope: float, inplace: bool = False) -> Tensor:
    return LeakyRelu.apply(input, negative_slope, inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu`, written straight into ``input``'s memory."""

    def run(write: bool) -> Callable[[Tensor], Tensor]:
        return lambda t: named_node(_leaky_relu(t, negative_slope, write), "LeakyReluBackward1")

    return in_own_memory(input, run(True), run(False))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x if x > 0 else alpha * (exp(x) - 1)``."""
    return elu_(input, alpha) if inplace else _elu(input, alpha)


@fused("EluBackward0")
def _elu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return Elu.apply(input, alpha, 1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu`."""
    return in_place(lambda t: _elu(t, alpha), "EluBackward1", True)(input)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants."""
    return selu_(input) if inplace else _selu(input)


@fused("EluBackward0")
def _selu(input: Tensor) -> Tensor:
    return Elu.apply(input, _SELU_ALPHA, _SELU_SCALE)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return in_place(_selu, "EluBackward1", True)(input)


@fused("GeluBackward0")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``; ``approximate='tanh'`` uses
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return Gelu.apply(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (also called swish)."""
    return in_place(Silu.apply)(input) if inplace else Silu.apply(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent (the core op ``disttorch.tanh``)."""
    return _ew.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))`` (the core op ``disttorch.sigmoid``)."""
    return _ew.sigmoid(input)


@fused("SoftplusBackward0")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``; linear where ``beta * x > threshold``."""
    return Softplus.apply(input, beta, threshold)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.is_quantized:  # nn.functional.quantized.hardtanh
        return input.clamp(min_val, max_val)
    if input._data.dtype.kind in "iu":  # the bounds in the tensor's dtype: an integer result
        min_val, max_val = int(min_val), int(max_val)

    def run(write: bool) -> Callable[[Tensor], Tensor]:
        return lambda t: named_node(Hardtanh.apply(t, min_val, max_val, True, write), "HardtanhBackward0")

    return in_own_memory(input, run(True), run(False)) if inplace else run(False)(input)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`, written straight into ``input``'s memory."""
    return hardtanh(input, min_val, max_val, inplace=True)


class Hardtanh(Function):
    """``x`` clamped to ``[lo, hi]``, its gradient passing strictly between the bounds (PyTorch's
    ``hardtanh_backward``, also for ``relu6``, ``hardsigmoid`` and ``hardswish``: 0 at a bound,
    where ``clamp``'s passes); a NaN input's passes with ``nan_passes`` (``hardtanh``'s test is
    ``x <= lo or x >= hi``, ``hardsigmoid``'s ``lo < x < hi``)."""

    _raw = True
    _grad_reads = "zero"
    _profiled_as = staticmethod(
        lambda a, lo, hi, nan, inplace=False: "aten::hardtanh_" if inplace else "aten::hardtanh"
    )

    @staticmethod
    def forward(ctx, a, lo, hi, nan_passes, inplace=False):
        x = a._data
        if ctx.needs_input_grad:
            ctx.inside = ~((x <= lo) | (x >= hi)) if nan_passes else (x > lo) & (x < hi)
        if inplace:  # into x's memory
            return np.clip(x, lo, hi, out=x)
        return np.asarray(elementwise(np.clip, x, lo, hi))

    @staticmethod
    def backward(ctx, g):
        return _times(g, lambda m: m, ctx.inside), None, None, None, None


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, without overflow (a float16 or
    bfloat16 input computed in float32 and rounded once, forward and backward, as PyTorch's
    kernel, whose backward reads ``exp(-|x|)`` kept in the input's dtype)."""
    if isinstance(input, Tensor) and is_low(input._data.dtype):
        out = LogSigmoid.apply(input.float(), input._data.dtype).to(input.dtype)
    else:
        out = LogSigmoid.apply(input)
    return named_node(out, "LogSigmoidBackward0")


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return in_place(_mish)(input) if inplace else _mish(input)


@fused("MishBackward0")
def _mish(input: Tensor) -> Tensor:
    return input * _ew.tanh(Softplus.apply(input, 1.0, 20.0))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clamp(x / 6 + 1/2, 0, 1)``."""
    return in_place(_hardsigmoid)(input) if inplace else _hardsigmoid(input)


@fused("HardsigmoidBackward0")
def _hardsigmoid(input: Tensor) -> Tensor:
    return reads_inputs(Hardtanh.apply(input / 6.0 + 0.5, 0.0, 1.0, False), "aten::hardsigmoid_backward")


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    return in_place(_hardswish)(input) if inplace else _hardswish(input)


@fused("HardswishBackward0")
def _hardswish(input: Tensor) -> Tensor:
    return input * Hardtanh.apply(input + 3.0, 0.0, 6.0, True) / 6.0


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the second half."""
    if input._data.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    return Glu.apply(input, d)


class Glu(Function):
    """``a * sigmoid(b)`` of the halves ``a, b`` of ``dim``, as PyTorch's kernels: forward
    float16/bfloat16 in float32, rounded once; backward ``g * s`` and ``(1 - s) * s * a * g``
    from the sigmoid ``s`` rounded to the input's dtype, the second rounded once."""

    _raw, _own_16_bit = True, True

    @staticmethod
    def forward(ctx, x, dim):
        a, b = np.split(float_input(x, "glu_cpu"), 2, axis=dim)
        wide = np.float32 if is_low(a.dtype) else a.dtype
        s = elementwise(_sigmoid_array, b.astype(wide))
        ctx.save_for_backward(x)
        ctx.dim, ctx.s = dim, s.astype(a.dtype)
        return elementwise(np.multiply, a.astype(wide), s).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx._checked_saved()
        if recording():
            a, b = x.chunk(2, ctx.dim)
            s = _ew.sigmoid(b)
            return cat([g * s, (1 - s) * s * a * g], ctx.dim), None
        dt = g._data.dtype
        wide = np.float32 if is_low(dt) else dt
        a = np.split(x._data, 2, axis=ctx.dim)[0].astype(wide)
        s, gw = ctx.s.astype(wide), g._data.astype(wide)
        ga = elementwise(np.multiply, gw, s).astype(dt)
        gb = elementwise(lambda sv, av, gv: (1 - sv) * sv * av * gv, s, a, gw).astype(dt)
        return Tensor._make(np.concatenate([ga, gb], axis=ctx.dim)), None


@autocast_op("lower")
@fused("PreluKernelBackward0")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x if x > 0 else weight * x``; ``weight`` has one entry, or one per channel
    (dim 1 of the input)."""
    w = weight
    if weight._data.size != 1:
        if input._data.ndim < 2 or input._data.shape[1] != weight._data.size:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found "
                f"parameter numbers = {weight._data.size} and channel size = "
                f"{input._data.shape[1] if input._data.ndim > 1 else 1}."
            )
        w = weight.reshape((-1,) + (1,) * (input._data.ndim - 2))
    # at x == 0 PyTorch's gradient takes the negative branch (w * g) and its second
    # derivatives neither: the weight's factor there is a constant
    at_zero = input * w.detach()
    return reads_inputs(_ew.where(input > 0, input, _ew.where(input < 0, input * w, at_zero)))
