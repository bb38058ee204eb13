"""Elementwise ops: arithmetic (``+ - * / **``), unary math (exp, log, sqrt, trig,
activations), ``logaddexp``/``hypot``, ``clamp``, ``maximum``/``minimum``, ``where``,
``nan_to_num`` and dtype casts.

Each op is one Function: forward computes on NumPy arrays, backward (right below it)
expresses the gradient with tensor ops, so it can itself be differentiated
(``create_graph=True``). Gradients of broadcast operands are summed back to their shapes
by the engine, so a backward may return a gradient of the broadcast shape.

Forward outputs that backward needs (``exp``'s result, say) are kept as arrays and used
as constants; when the backward pass is itself being recorded they are recomputed with a
tensor op instead, so that second derivatives flow through them.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from .._dtype import (
    OWN_CONVERSION,
    checked_scalar,
    complex128,
    convert,
    float64,
    from_numpy,
    get_default_dtype,
    result_type,
    scalar_type_name,
)
from .._dtype import dtype as _dtype_cls
from .._memory_format import preserve_format, suggest_memory_format
from .._tensor import Tensor, _as_meta, _is_meta, _tensor_arg, _wants_meta, device
from .._type_info import finfo
from ..autograd.function import Function, named_node
from ..autograd.grad_mode import is_grad_enabled, recording
from ..autograd.saved_fields import kept, saved
from ..kernels.erf import TWO_OVER_SQRT_PI
from ..kernels.erf import erf as erf_kernel
from ..kernels.fma import fma
from ..kernels.lerp import lerp as lerp_kernel
from ..kernels.power import general_power
from ..kernels.power import power as power_kernel
from ..kernels.relu import relu as relu_kernel
from ..kernels.relu import relu_grad
from ..kernels.sigmoid import sigmoid as sigmoid_kernel
from ..kernels.tanh_grad import one_minus_square, tanh_grad
from ..kernels.threads import astype as _astype
from ..kernels.threads import elementwise as _split
from ..kernels.vml import rounded_cos, rounded_log, rounded_sin, sleef_log1p
from ..kernels.vml import sqrt as vml_sqrt
from ..kernels.vml import tanh as vml_tanh
from ..kernels.vml import unary as _vml
from ._helpers import arr, binary, broadcast_error, check_scalar_operand, in_half, no_complex, wrapped_int
from .comparison import floor_divide_array
from .deprecated_overloads import scale_first
from .dtype_rules import check_kernel, kernel_error, refuse_bool_subtraction, require_lerp_dtypes
from .flat import flat
from .opmath import SCALAR_TAIL, computed_in_float32, is_low, low_result, round_scalar_tail, scalar_of
from .scalar_self import number_self

__all__ = [
    "add",
    "sub",
    "mul",
    "div",
    "true_divide",
    "divide",
    "pow",
    "neg",
    "negative",
    "multiply",
    "subtract",
    "abs",
    "absolute",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "relu",
    "erf",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "maximum",
    "minimum",
    "where",
    "float_power",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "arcsin",
    "arccos",
    "arctan",
    "arctan2",
    "lerp",
    "logaddexp",
    "hypot",
    "nan_to_num",
]

TENSOR_METHODS = (
    "add",
    "sub",
    "mul",
    "div",
    "true_divide",
    "divide",
    "pow",
    "neg",
    "negative",
    "multiply",
    "subtract",
    "abs",
    "absolute",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "relu",
    "erf",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "maximum",
    "minimum",
    "float_power",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "arcsin",
    "arccos",
    "arctan",
    "arctan2",
    "lerp",
    "logaddexp",
    "hypot",
    "nan_to_num",
    "to",
)


def _as_returned(out: np.ndarray, dt: np.dtype) -> np.ndarray:
    """A forward result kept in float32 for a float16/bfloat16 op (``dt``, the gradient's
    dtype), with the values the op returned: rounded to ``dt``, as PyTorch's fused backward
    kernels read the result (still float32, so the gradient is rounded once, at the end)."""
    if is_low(dt) and out.dtype == np.float32:
        return out.astype(dt).astype(np.float32)
    return out


def _const(a: np.ndarray) -> Tensor:
    """A constant (no-grad) tensor over ``a``, for masks and saved results in backward."""
    return Tensor._make(a)


def _operands(ctx: Any, a: Any, b: Any) -> None:
    """Save both operands of a binary op; Python scalars are kept as plain numbers."""
    ctx.save_for_backward(a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None)
    ctx.scalars = (None if isinstance(a, Tensor) else a, None if isinstance(b, Tensor) else b)


def _cj(x: Any) -> Any:
    """The complex conjugate of a complex tensor or number, anything else as is: a
    holomorphic op's gradient is ``grad * conj(f'(z))`` (PyTorch's convention)."""
    if isinstance(x, Tensor):
        return x.conj() if x._data.dtype.kind == "c" else x
    return x.conjugate() if isinstance(x, complex) else x


def _wrapped(i: int) -> Callable[[Any], Any]:
    """The ``i``-th operand of a binary op when it was a Python number: PyTorch saves it as
    a 0-dim tensor (int64, float64 or complex128), disttorch keeps the number."""

    def operand(ctx: Any) -> Tensor | None:
        number = ctx.scalars[i]
        return None if number is None else Tensor._make(np.asarray(number))

    return operand


def _number(i: int) -> Callable[[Any], Any]:
    """The ``i``-th operand of a binary op when it was a Python number, as that number."""
    return lambda ctx: ctx.scalars[i]


def _saved_operands(ctx: Any) -> tuple:
    ta, tb = ctx._checked_saved()
    sa, sb = ctx.scalars
    return (ta if ta is not None else sa), (tb if tb is not None else sb)


# ---------------------------------------------------------------------- arithmetic
class Add(Function):
    _rounds_numbers = (0, 1)
    _raw = True
    _wraps_numbers = True
    # ``alpha`` other than 1 is a separate product node before this one
    _backward_saves = {"alpha": lambda ctx: 1}

    @staticmethod
    def forward(ctx, a, b):
        return binary(np.add, a, b)

    @staticmethod
    def backward(ctx, g):
        return g, g


class Sub(Function):
    _rounds_numbers = (0, 1)
    _raw = True
    _wraps_numbers = True
    _backward_saves = {"alpha": lambda ctx: 1}

    @staticmethod
    def forward(ctx, a, b):
        refuse_bool_subtraction(a, b)
        if not isinstance(a, Tensor):  # number - tensor: PyTorch's rsub
            ctx._node_name = "RsubBackward1"
        return binary(np.subtract, a, b)

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)


class AddScaled(Function):
    """``input + alpha * other`` of a float32/float64 result, the multiply-add rounded once
    (PyTorch's CPU kernel fuses it); ``sub`` with ``alpha`` passes ``subtract`` (``-alpha``)."""

    _rounds_numbers = (0, 1)
    _raw = True
    _wraps_numbers = True
    _node_name = "AddBackward0"
    _backward_saves = {"alpha": lambda ctx: ctx.alpha}

    @staticmethod
    def forward(ctx, a, b, alpha, subtract):
        signed = -alpha if subtract else alpha
        ctx.alpha, ctx.scale = alpha, signed
        if subtract:
            refuse_bool_subtraction(a, b)
            ctx._node_name = "SubBackward0"
        return binary(lambda x, y: fma(np.result_type(x, y).type(signed), y, x), a, b)

    @staticmethod
    def backward(ctx, g):
        return g, (mul(g, ctx.scale) if ctx.needs_input_grad[1] else None), None, None


class Addcmul(Function):
    """``input + (value * tensor1) * tensor2`` of three float32 or three float64 tensors, the
    last multiply-add rounded once, as PyTorch's CPU kernel."""

    _raw = True
    _backward_saves = {"value": lambda ctx: ctx.value}

    @staticmethod
    def forward(ctx, input, tensor1, tensor2, value):
        if ctx.needs_input_grad:
            ctx.save_for_backward(tensor1, tensor2)
        ctx.value = value
        t1 = tensor1._data
        scaled = t1 if value == 1 else np.multiply(t1, t1.dtype.type(value))
        return _split(fma, scaled, tensor2._data, input._data)

    @staticmethod
    def backward(ctx, g):
        t1, t2 = ctx._checked_saved()
        _, n1, n2, _ = ctx.needs_input_grad
        v = ctx.value
        return g, (g * (t2 * v) if n1 else None), (g * (t1 * v) if n2 else None), None


class Mul(Function):
    _rounds_numbers = (0,)
    _raw = True
    _wraps_numbers = True
    # PyTorch saves (and a pack hook sees) the other operand first
    _backward_saves = {"other": saved(1, _wrapped(1)), "self": saved(0, _wrapped(0))}

    @staticmethod
    def forward(ctx, a, b):
        if ctx.needs_input_grad:  # each operand is needed only for the other's gradient
            na, nb = ctx.needs_input_grad
            _operands(ctx, a if nb else None, b if na else None)
        return binary(np.multiply, a, b, exact_scalar=True)

    @staticmethod
    def backward(ctx, g):
        a, b = _saved_operands(ctx)
        na, nb = ctx.needs_input_grad
        return (g * _cj(b) if na else None), (g * _cj(a) if nb else None)


class Div(Function):
    _rounds_numbers = (0,)
    _raw = True
    _wraps_numbers = True
    # PyTorch saves (and a pack hook sees) the other operand first
    _backward_saves = {"other": saved(1, _wrapped(1)), "self": saved(0, _wrapped(0))}

    @staticmethod
    def forward(ctx, a, b):
        xa, xb = arr(a), arr(b)
        rt = result_type(xa, xb)
        if rt.kind in "fV" and rt.itemsize == 2:  # as PyTorch: a divisor number stays unrounded
            xa, xb = in_half(rt, xa), in_half(rt, xb, exact_scalar=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            try:
                out = _split(np.true_divide, xa, xb)
            except ValueError:
                raise broadcast_error(np.shape(xa), np.shape(xb)) from None
        if rt.kind not in "fVc":  # integer / integer gives the default float dtype
            rt = get_default_dtype().numpy
        if out.dtype != rt:
            with np.errstate(over="ignore"):  # (a 16-bit quotient beyond its range: inf)
                out = out.astype(rt)
        if ctx.needs_input_grad:  # as PyTorch: the divisor, the dividend only for the divisor's gradient
            _operands(ctx, a if ctx.needs_input_grad[1] else None, b)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = _saved_operands(ctx)
        na, nb = ctx.needs_input_grad
        ga = g / _cj(b) if na else None
        if nb and is_low(g._data.dtype):
            # bfloat16 operands' float32 copies: PyTorch's formula runs in bfloat16, each step rounded
            low = from_numpy(g._data.dtype)
            a, b = (cast(t, low) if isinstance(t, Tensor) else t for t in (a, b))
        gb = -g * _cj(a / b / b) if nb else None
        return ga, gb


def _int_power_check(xa: Any, xb: Any) -> bool:
    """Whether an integer base meets negative integer exponents: PyTorch refuses a negative
    number as the exponent, and computes a tensor's (see :func:`_int_power`)."""
    ka = xa.dtype.kind if isinstance(xa, np.ndarray) else ("f" if isinstance(xa, (float, complex)) else "i")
    kb = xb.dtype.kind if isinstance(xb, np.ndarray) else ("f" if isinstance(xb, (float, complex)) else "i")
    if ka not in "iub" or kb not in "iub" or not np.any(np.asarray(xb) < 0):
        return False
    if not isinstance(xb, np.ndarray):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return True


def _int_power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer ``x ** y`` where ``y`` may be negative, as PyTorch's kernel: 1 and -1 keep
    their powers, any other base to a negative power is 0 (NumPy raises)."""
    neg = y < 0
    out = np.power(x, np.where(neg, 0, y).astype(y.dtype, copy=False))
    ones = np.where((x == -1) & (y % 2 != 0), -1, 1)
    return np.where(neg, np.where(np.abs(x) == 1, ones, 0), out).astype(out.dtype, copy=False)


class Pow(Function):
    _rounds_numbers = (0, 1)
    _raw = True

    @staticmethod
    def _backward_saves(ctx: Any) -> dict:
        """``PowBackward0`` (tensor ** number) keeps the number and no result, ``PowBackward2``
        (number ** tensor) keeps the number base."""
        name = ctx.name()
        return {  # PyTorch's order: the exponent is saved (and packed) first
            "exponent": _number(1) if name == "PowBackward0" else saved(1),
            "self": _number(0) if name == "PowBackward2" else saved(0),
            **({} if name == "PowBackward0" else {"result": kept("out", 0)}),
        }

    @staticmethod
    def forward(ctx, a, b):
        if isinstance(b, Tensor):  # a Python bool exponent keeps a bool base bool, as in PyTorch
            check_kernel("pow", a, b)
            ctx._node_name = "PowBackward1" if isinstance(a, Tensor) else "PowBackward2"
        xa, xb = arr(a), arr(b)
        if _int_power_check(xa, xb):
            return binary(_int_power, a, b)
        out = power_kernel(xa, xb) if isinstance(xa, np.ndarray) else None  # integer/half-integer powers
        if out is None:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                out = binary(general_power, a, b)
        if isinstance(b, Tensor) and out.dtype.kind == "c":
            # PyTorch's complex kernel computes exp(b * log(a)): 0 ** 0 is 0 * -inf, NaN
            zero = np.broadcast_to((np.asarray(xa) == 0) & (xb == 0), out.shape)
            if zero.any():
                out = np.where(zero, complex(math.nan, math.nan), out).astype(out.dtype, copy=False)
        if ctx.needs_input_grad:
            _operands(ctx, a, b)
            if ctx.needs_input_grad[1]:  # the output only for the exponent's gradient
                ctx.out = out
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = _saved_operands(ctx)
        na, nb = ctx.needs_input_grad
        ga = gb = None
        if na:
            if isinstance(b, Tensor):
                with np.errstate(divide="ignore", invalid="ignore"):
                    if recording():
                        ga = g * _cj(where(_const(b._data == 0), 0.0, b * a ** (b - 1)))
                    else:
                        xa, xb = a._data, b._data
                        ga = g * _cj(_const(np.where(xb == 0, 0, xb * xa ** (xb - 1))))
            elif b == 0:
                ga = g * 0
            elif b == 2:
                ga = g * _cj(a * 2)
            else:
                ga = g * _cj(a ** (b - 1) * b)
        if nb:
            out = a**b if recording() else _const(ctx.out)
            if isinstance(a, Tensor):
                # d/db a**b = a**b log a; PyTorch takes it as 0 where a == 0 and b >= 0.
                with np.errstate(divide="ignore", invalid="ignore"):
                    dead = (a._data == 0) & (b._data.real >= 0)
                    gb = g * _cj(out * log(a))
                if dead.any():
                    gb = where(_const(dead), 0.0, gb)
            else:
                if isinstance(a, complex) or (a < 0 and out._data.dtype.kind == "c"):
                    gb = g * _cj(out * complex(np.log(complex(a))))
                else:
                    gb = g * _cj(out) * (math.log(a) if a > 0 else (0.0 if a == 0 else math.nan))
        return ga, gb


class BFloat16Pow(Pow):
    """``bfloat16 tensor ** number`` as PyTorch's kernel: the number rounded to bfloat16,
    ``x * x * x`` (3) and ``1 / (x * x)`` (-2) with each step rounded, any other exponent
    in float32 rounded once. It keeps the bfloat16 input, so the backward's
    ``exponent * x ** (exponent - 1)`` rounds each step as PyTorch's does."""

    _own_16_bit = True

    @staticmethod
    def forward(ctx, a, b):
        x = a._data
        e = float(np.float32(b).astype(x.dtype))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if e in (3, -2):  # (ml_dtypes rounds each product and reciprocal, as PyTorch's Vec)
                square = x * x
                out = square * x if e == 3 else np.reciprocal(square)
            else:
                wide = x.astype(np.float32)
                out = power_kernel(wide, e)
                out = (general_power(wide, e) if out is None else out).astype(x.dtype)
        if ctx.needs_input_grad:
            _operands(ctx, a, b)  # the exponent unrounded: PyTorch's backward reads the double
            ctx._node_name = "PowBackward0"
        return out


class Neg(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a):
        try:
            return _split(np.negative, a._data)
        except TypeError:
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If "
                "you are trying to invert a mask, use the `~` or `logical_not()` "
                "operator instead."
            ) from None

    @staticmethod
    def backward(ctx, g):
        return -g


class Abs(Function):
    _raw = True
    _grad_reads = "zero"  # PyTorch's grad * sgn(self)

    @staticmethod
    def forward(ctx, a):
        if ctx.needs_input_grad:
            ctx.sign = _split(np.sign, a._data)
            if a._data.dtype.kind == "c":  # d|z| = sgn(z), itself a function of z
                ctx.save_for_backward(a)
        return _split(np.abs, a._data)

    @staticmethod
    def backward(ctx, g):
        if ctx.sign.dtype.kind == "c" and recording():
            (a,) = ctx._checked_saved()
            return g * a.sgn()
        return g * _const(ctx.sign)


class Square(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        x = a._data
        return _split(np.square, x.astype(np.int64) if x.dtype.kind == "b" else x)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx._checked_saved()
        return g * _cj(a * 2)


# ---------------------------------------------------------------------- float-valued unary
class _FloatUnary(Function):
    """Base of ``y = f(x)`` ops with a floating result (integer inputs compute in the
    default float dtype). A subclass sets ``ufunc`` and defines ``derivative(x, y)``,
    dy/dx as a tensor expression of the input ``x`` and the output ``y``."""

    _raw = True
    ufunc: Callable = None
    uses_output = False  # derivative reads y (kept from forward, recomputed under create_graph)
    quiet = False  # silence NumPy's warnings for inputs outside the domain (log(0)...)
    #: PyTorch's fused backward kernel, ``(g, y) -> dx`` on real arrays (``tanh_backward``,
    #: ``sigmoid_backward``), in its operation order; the 16-bit dtypes in ``fused_widens``
    #: are computed in float32 and rounded once
    fused_backward: Callable | None = None
    fused_widens: tuple[str, ...] = ("float16", "bfloat16")
    #: PyTorch's formula divides the gradient by ``divisor(x, y)`` (``log``: ``grad / x``),
    #: one rounding fewer than a product with the reciprocal in 16-bit dtypes
    divides = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """PyTorch's name for what the op saves: the output when its derivative reads it."""
        super().__init_subclass__(**kwargs)
        cls._backward_saves = {"result": kept("out", 0)} if cls.uses_output else {"self": saved(0)}

    @classmethod
    def forward(cls, ctx, a):
        x = a._data
        if x.dtype.kind not in "fVc":
            x = x.astype(get_default_dtype().numpy)
        half = x.dtype == np.float16  # computed in float32 and rounded once, as PyTorch's kernels
        if half:
            x = x.astype(np.float32)
        if cls.quiet:
            with np.errstate(divide="ignore", invalid="ignore"):
                out = _split(cls.ufunc, x)
        else:
            out = _split(cls.ufunc, x)
        if half:
            with np.errstate(over="ignore"):  # beyond float16's range: inf, as PyTorch's
                out = out.astype(np.float16)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            if cls.uses_output:
                ctx.out = out
        return out

    @classmethod
    def backward(cls, ctx, g):
        (a,) = ctx._checked_saved()
        dt = g._data.dtype
        if is_low(dt) and a._data.dtype != dt:
            # a bfloat16 input's float32 copy: PyTorch's derivative formula runs in bfloat16,
            # each step rounded (sin's ``grad * cos(x)``: the cosine rounded first)
            a = cast(a, from_numpy(dt))
        if cls.fused_backward is not None and dt.kind in "fV" and not recording():
            wide = np.float32 if dt.name in cls.fused_widens else dt
            y = _as_returned(ctx.out, dt)
            return Tensor._make(
                cls.fused_backward(g._data.astype(wide), y.astype(wide)).astype(dt, copy=False)
            )
        y = None
        if cls.uses_output:
            # (a 16-bit op's float32 result rounded as returned: PyTorch's formula reads it)
            y = _saved_result(ctx, a, dt) if recording() else _const(ctx.out.astype(dt, copy=False))
        if cls.divides:
            return g / _cj(cls.divisor(a, y))
        return g * _cj(cls.derivative(a, y))

    @staticmethod
    def derivative(x: Tensor, y: Tensor | None) -> Tensor:
        raise NotImplementedError


def _saved_result(ctx: _FloatUnary, a: Tensor, dt: np.dtype) -> Tensor:
    """The op's output as a recorded backward reads it: the node's own output (as PyTorch's
    formula reads its saved result: a second derivative reaches the node again, its hooks
    too); otherwise (a 16-bit op's result, or a pass of batched gradients) recomputed from
    the input ``a`` (in the gradient's dtype ``dt``)."""
    if is_grad_enabled() and ctx.out.dtype == dt:
        return Tensor._make(ctx.out, ctx, 0)
    return type(ctx).apply(a)


class Exp(_FloatUnary):
    ufunc, uses_output = _vml(np.exp, "Exp"), True  # float64 rounded once: PyTorch's bits for ~99%

    @staticmethod
    def derivative(x, y):
        return y


class Expm1(_FloatUnary):
    ufunc, uses_output = _vml(np.expm1, None), True

    @staticmethod
    def derivative(x, y):
        return y + 1


class Log(_FloatUnary):
    ufunc, quiet = _vml(np.log, "Ln", widen=False, float32_loop=rounded_log), True

    divides = True

    @staticmethod
    def divisor(x, y):
        return x


class Log1p(_FloatUnary):
    ufunc, quiet = _vml(np.log1p, None, float32_loop=sleef_log1p), True
    _node_name, _profiled_as = "Log1PBackward0", "aten::log1p"

    divides = True

    @staticmethod
    def divisor(x, y):
        return x + 1


class Log2(_FloatUnary):
    ufunc, quiet = _vml(np.log2, "Log2"), True

    divides = True

    @staticmethod
    def divisor(x, y):
        return x * math.log(2)


class Log10(_FloatUnary):
    ufunc, quiet = _vml(np.log10, "Log10"), True

    divides = True

    @staticmethod
    def divisor(x, y):
        return x * math.log(10)


class Sqrt(_FloatUnary):
    ufunc, uses_output, quiet = vml_sqrt, True, True
    divides = True

    @staticmethod
    def divisor(x, y):
        return y * 2


def _rsqrt(x: np.ndarray) -> np.ndarray:
    out = np.sqrt(x, out=np.empty_like(x))  # (an array also for a 0-d x, where NumPy gives a scalar)
    return np.reciprocal(out, out=out)


class Rsqrt(_FloatUnary):
    ufunc, uses_output, quiet = _rsqrt, True, True
    _own_16_bit = True  # (bfloat16 arrives as is: see forward)

    @classmethod
    def forward(cls, ctx, a):
        """16-bit inputs as PyTorch's kernel: ``1 / sqrt`` in float32 rounded once by its vector
        loop, but the last ``n % 32`` elements of a contiguous tensor by its scalar loop, which
        rounds the square root to the dtype first."""
        x = a._data
        if x.dtype.itemsize != 2 or x.dtype.kind not in "fV":
            return super().forward(ctx, a)
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.sqrt(x.astype(np.float32))
            out = np.reciprocal(root)
            tail = x.size % SCALAR_TAIL if x.flags.c_contiguous else 0
            if tail:
                rounded = root.reshape(-1)[-tail:].astype(x.dtype).astype(np.float32)
                out.reshape(-1)[-tail:] = np.reciprocal(rounded)
        with np.errstate(over="ignore"):
            out = out.astype(x.dtype)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
            ctx.out = out
        return out

    @staticmethod
    def derivative(x, y):
        return y**3 * -0.5


class Reciprocal(_FloatUnary):
    ufunc, uses_output, quiet = np.reciprocal, True, True

    @staticmethod
    def derivative(x, y):
        return -(y * y)


class Sin(_FloatUnary):
    ufunc = _vml(np.sin, "Sin", widen=False, float32_loop=rounded_sin)  # (NumPy's float64 sin: 20x)

    @staticmethod
    def derivative(x, y):
        return cos(x)


class Cos(_FloatUnary):
    ufunc = _vml(np.cos, "Cos", widen=False, float32_loop=rounded_cos)

    @staticmethod
    def derivative(x, y):
        return -sin(x)


class Tan(_FloatUnary):
    ufunc, uses_output = _vml(np.tan, "Tan"), True

    @staticmethod
    def derivative(x, y):
        return y * y + 1


class _OneMinusSquare(_FloatUnary):
    """``1 - x * x`` rounded once: tanh's derivative where its backward is recorded (double
    backward, forward mode), so that it rounds as PyTorch's ``tanh_backward`` does there too."""

    ufunc = staticmethod(one_minus_square)
    _node_name = "TanhBackwardBackward0"

    @staticmethod
    def derivative(x, y):
        return x * -2


class Tanh(_FloatUnary):
    ufunc, uses_output = vml_tanh, True
    fused_backward = staticmethod(tanh_grad)

    @staticmethod
    def derivative(x, y):
        return _OneMinusSquare.apply(y)


class Sinh(_FloatUnary):
    ufunc = np.sinh

    @staticmethod
    def derivative(x, y):
        return cosh(x)


class Cosh(_FloatUnary):
    ufunc = np.cosh

    @staticmethod
    def derivative(x, y):
        return sinh(x)


class Asin(_FloatUnary):
    ufunc, quiet = _vml(np.arcsin, "Asin"), True

    @staticmethod
    def derivative(x, y):
        return (1 - x * x).rsqrt()


class Acos(_FloatUnary):
    ufunc, quiet = _vml(np.arccos, "Acos"), True

    @staticmethod
    def derivative(x, y):
        return -(1 - x * x).rsqrt()


class Atan(_FloatUnary):
    ufunc = _vml(np.arctan, "Atan")

    divides = True

    @staticmethod
    def divisor(x, y):
        return x * x + 1


class Atan2(Function):
    """``atan2(input, other)``: the angle of the point (other, input)."""

    _rounds_numbers = (0, 1)

    _raw = True
    _backward_saves = {"other": saved(1), "self": saved(0)}  # (PyTorch's order)

    @staticmethod
    def forward(ctx, a, b):
        check_kernel("atan2", a, b)
        ctx.save_for_backward(a, b)
        xa, xb = arr(a), arr(b)
        if result_type(xa, xb).kind in "biu":  # integers: the angle in the default float dtype
            xa, xb = (np.asarray(v, dtype=get_default_dtype().numpy) for v in (xa, xb))
        return binary(np.arctan2, xa, xb)

    @staticmethod
    def backward(ctx, g):
        y, x = ctx._checked_saved()
        scale = g / (x * x + y * y)
        na, nb = ctx.needs_input_grad
        return (scale * x if na else None), (-scale * y if nb else None)


def _complex_logaddexp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """PyTorch's complex ``log(exp(x) + exp(y))``: ``max + log1p(exp(min - max))`` ordered by
    real part; NaN if the smaller has a NaN part; where both real parts are the same
    infinity, the larger operand (-inf) or ``log(exp(x) + exp(y))`` (+inf)."""
    swap = y.real < x.real
    lo, hi = np.where(swap, y, x), np.where(swap, x, y)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = np.log1p(np.exp(lo - hi)) + hi
        same_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
        out = np.where(same_inf & (lo.real < 0), hi, out)
        out = np.where(same_inf & (lo.real > 0), np.log(np.exp(lo) + np.exp(hi)), out)
    nan = np.asarray(complex(np.nan, np.nan), dtype=out.dtype)
    return np.where(np.isnan(lo.real) | np.isnan(lo.imag), nan, out).astype(x.dtype, copy=False)


class Logaddexp(Function):
    """``log(exp(input) + exp(other))`` without overflow; the gradients are
    ``sigmoid(input - other)`` and ``sigmoid(other - input)``. :class:`Logaddexp2` is its
    base-2 twin (the differences scaled by ``ln 2``)."""

    _rounds_numbers = (0, 1)

    _raw = True
    ufunc = staticmethod(np.logaddexp)
    scale = 1.0

    @classmethod
    def forward(cls, ctx, a, b):
        rt = check_kernel(cls.ufunc.__name__, a, b)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a, b)
        with np.errstate(invalid="ignore"):
            if rt.kind == "c":  # (logaddexp only: logaddexp2 refuses complex)
                return _split(_complex_logaddexp, a._data.astype(rt), b._data.astype(rt))
            return binary(cls.ufunc, a, b)

    @classmethod
    def backward(cls, ctx, g):
        a, b = ctx._checked_saved()
        na, nb = ctx.needs_input_grad
        with np.errstate(invalid="ignore"):  # both -inf (or both +inf): NaN, as PyTorch
            d = a - b if cls.scale == 1.0 else (a - b) * cls.scale
            sa, sb = sigmoid(d), sigmoid(-d)
            if sa.is_complex():  # holomorphic: the conjugate derivatives, as PyTorch's
                sa, sb = sa.conj(), sb.conj()
            return (g * sa if na else None), (g * sb if nb else None)


class Logaddexp2(Logaddexp):
    """``log2(2**input + 2**other)`` without overflow."""

    ufunc = staticmethod(np.logaddexp2)
    scale = math.log(2)


class Hypot(Function):
    """``sqrt(input**2 + other**2)`` without overflow; the gradients are ``input / out``
    and ``other / out`` (NaN where both are 0, as PyTorch's)."""

    _rounds_numbers = (0, 1)

    _raw = True
    _backward_saves = {"other": saved(1), "self": saved(0), "result": kept("out", 0)}

    @staticmethod
    def forward(ctx, a, b):
        check_kernel("hypot", a, b)
        out = binary(np.hypot, a, b)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a, b)
            ctx.out = out
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx._checked_saved()
        na, nb = ctx.needs_input_grad
        out = Hypot.apply(a, b) if recording() else _const(ctx.out)
        scale = g / out
        return (scale * a if na else None), (scale * b if nb else None)


class Lerp(Function):
    """``input + weight * (end - input)``, rounded as PyTorch rounds it (``kernels/lerp.py``).
    Gradients: ``g * (1 - weight)`` to ``input``, ``g * weight`` to ``end``, and
    ``g * (end - input)`` to a tensor ``weight`` (conjugated for complex tensors)."""

    _raw = True

    @staticmethod
    def forward(ctx, a, b, w):
        if ctx.needs_input_grad:
            ctx.save_for_backward(a, b, w if isinstance(w, Tensor) else None)
            ctx.weight = None if isinstance(w, Tensor) else w
        try:
            return lerp_kernel(a._data, b._data, arr(w))
        except ValueError:
            raise broadcast_error(a._data.shape, b._data.shape, np.shape(arr(w))) from None

    @staticmethod
    def backward(ctx, g):
        a, b, w = ctx._checked_saved()
        w = ctx.weight if w is None else w
        na, nb, nw = ctx.needs_input_grad
        ga = g * _cj(1 - w) if na else None
        gb = g * _cj(w) if nb else None
        gw = g * _cj(b - a) if nw else None
        return ga, gb, gw


class NanToNum(Function):
    """NaN, +inf and -inf replaced by the given numbers (integer and bool inputs are
    copied); the gradient passes where the input is finite and is 0 elsewhere."""

    _raw, _own_16_bit = True, True  # (bfloat16's largest value is not float32's)

    @staticmethod
    def forward(ctx, a, nan, posinf, neginf):
        x = a._data
        if x.dtype.kind == "c":  # each part on its own, as PyTorch
            parts = x.real, x.imag
            out = np.empty_like(x)
            out.real, out.imag = (np.nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf) for p in parts)
            if ctx.needs_input_grad:
                ctx.finite = np.isfinite(x)
            return out
        if x.dtype.kind not in "fV":
            return x.copy()
        if ctx.needs_input_grad:
            ctx.finite = np.isfinite(x)
        if x.dtype.kind == "V":  # bfloat16, float8: not NumPy's floats, replaced in float32
            big = float(finfo(a.dtype).max)
            posinf, neginf = (big if posinf is None else posinf), (-big if neginf is None else neginf)
            wide = np.nan_to_num(x.astype(np.float32), nan=nan, posinf=posinf, neginf=neginf)
            return wide.astype(x.dtype)
        with np.errstate(over="ignore"):  # a bound beyond the dtype's range becomes inf
            return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):
        return g * _const(ctx.finite), None, None, None


class Sigmoid(_FloatUnary):
    ufunc, uses_output = sigmoid_kernel, True
    fused_backward = staticmethod(lambda g, y: g * (1 - y) * y)
    fused_widens = ("bfloat16",)  # float16's kernel steps in float16

    @staticmethod
    def derivative(x, y):
        return y * (1 - y)


class Erf(_FloatUnary):
    ufunc = _vml(erf_kernel, "Erf", widen=False)

    @staticmethod
    def derivative(x, y):
        return exp(-(x * x)) * TWO_OVER_SQRT_PI


class Relu(Function):
    """``max(x, 0)``; keeps its output, as PyTorch's (whose in-place change then makes backward
    raise), and passes the gradient where it is positive."""

    _raw = True
    _grad_reads = "zero"  # PyTorch's threshold_backward(grad, result, 0)
    _backward_saves = {"result": kept("out", 0)}

    @staticmethod
    def forward(ctx, a):
        return Relu.compute(ctx, a, None)

    @staticmethod
    def compute(ctx: Any, a: Tensor, out: np.ndarray | None) -> np.ndarray:
        """The forward, into ``out`` when given."""
        x = a._data
        if x.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        if x.dtype.kind == "c":
            raise NotImplementedError("clamp is not supported for complex types")
        out = relu_kernel(x, out)
        if ctx.needs_input_grad:
            ctx.out = out
        return out

    @staticmethod
    def backward(ctx, g):
        if recording():  # differentiable again: PyTorch's threshold_backward as a masked_fill
            return g.masked_fill(_const(_split(np.less_equal, ctx.out, 0)), 0)
        return Tensor._make(relu_grad(g._data, ctx.out))


class ReluInplace(Relu):
    """``relu_``: ``max(x, 0)`` written into ``x``'s own memory (``ops.inplace.in_own_memory``);
    the node keeps that memory, as PyTorch's ``ReluBackward0`` keeps the result."""

    _node_name, _profiled_as = "ReluBackward0", "aten::relu_"

    @staticmethod
    def forward(ctx, a):
        return Relu.compute(ctx, a, a._data)


# ---------------------------------------------------------------------- selection
def _probe(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """An empty array of ``dt`` that promotes like ``x`` (a tensor, or a 0-dim one)."""
    return np.empty((0,) if x.ndim else (), dtype=dt)


def _refuse_bool_clamp(lo: Any, hi: Any, rt: np.dtype) -> None:
    """PyTorch clamps bools only with one tensor bound (that is ``maximum``/``minimum``)."""
    tensors = isinstance(lo, Tensor) or isinstance(hi, Tensor)
    if tensors and (lo is None or hi is None):
        return
    bounds = "" if lo is not None and hi is not None else ("_min" if lo is not None else "_max")
    raise kernel_error(f"clamp{bounds}{'' if tensors else '_scalar'}_cpu", rt)


def _refuse_complex_clamp(a: Tensor, lo: Any, hi: Any) -> None:
    """PyTorch's words for a complex clamp: a complex input, or tensor bounds whose kernel
    (clamp, or the maximum/minimum one bound makes) has no complex loop."""
    if a._data.dtype.kind == "c" or not any(isinstance(b, Tensor) for b in (lo, hi)):
        raise NotImplementedError("clamp is not supported for complex types")
    kernel = "clamp" if lo is not None and hi is not None else ("maximum" if lo is not None else "minimum")
    dtype = a._data.dtype
    for bound in (lo, hi):
        if bound is not None:
            dtype = result_type(_probe(a._data, dtype), arr(bound))
    raise kernel_error(f"{kernel}_cpu", dtype)


class Clamp(Function):
    _raw = True

    @staticmethod
    def forward(ctx, a, lo, hi):
        x, xl, xh = a._data, arr(lo), arr(hi)
        ctx._node_name = (
            "ClampBackward0" if isinstance(lo, Tensor) or isinstance(hi, Tensor) else "ClampBackward1"
        )
        if x.dtype.kind == "c" or any(np.iscomplexobj(v) for v in (xl, xh) if v is not None):
            _refuse_complex_clamp(a, lo, hi)
        rt = x.dtype
        for bound in (xl, xh):
            if bound is not None:
                rt = result_type(_probe(x, rt), bound)
        if rt.kind == "b":
            _refuse_bool_clamp(lo, hi, rt)
        # a number bound converts as PyTorch's: past the dtype, an error; -1 into uint8, 255
        xl, xh = checked_scalar(xl, rt), checked_scalar(xh, rt)
        out = x if rt == x.dtype else x.astype(rt)
        try:
            if xl is not None:
                out = _split(np.maximum, out, xl)
            if xh is not None:
                out = _split(np.minimum, out, xh)
        except ValueError:
            other = xl if np.ndim(xl) else xh
            raise broadcast_error(x.shape, np.shape(other)) from None
        if out.dtype != rt:
            out = out.astype(rt)
        if ctx.needs_input_grad:
            ctx.masks = _clamp_masks(x, xl, xh)
        return out

    @staticmethod
    def backward(ctx, g):
        keep, to_lo, to_hi = ctx.masks
        na, nl, nh = ctx.needs_input_grad
        return (
            (g * _const(keep) if na else None),
            (g * _const(to_lo) if nl else None),
            (g * _const(to_hi) if nh else None),
        )


def _clamp_masks(x: np.ndarray, lo: Any, hi: Any) -> tuple:
    """Where the gradient goes: to the input inside [lo, hi], to ``lo`` below it, to ``hi``
    above it (``hi`` wins when lo > hi), as PyTorch's clamp backward."""
    if lo is not None and hi is not None:
        keep = _split(lambda v, a, b: (v >= a) & (v <= b), x, lo, hi)
        to_lo = _split(lambda v, a, b: (v < a) & (np.asarray(a) < b), x, lo, hi)
        to_hi = _split(lambda v, a, b: (v > b) | (np.asarray(b) < a), x, lo, hi)
    elif lo is not None:
        keep, to_lo, to_hi = _split(np.greater_equal, x, lo), _split(np.less, x, lo), None
    else:
        keep, to_lo, to_hi = _split(np.less_equal, x, hi), None, _split(np.greater, x, hi)
    return keep, to_lo, to_hi


class Maximum(Function):
    _rounds_numbers = (0, 1)
    _raw = True
    ufunc = staticmethod(np.maximum)

    @classmethod
    def forward(cls, ctx, a, b):
        if a._data.dtype.kind == "c" or b._data.dtype.kind == "c":
            raise RuntimeError(f"{cls.__name__.lower()} not implemented for complex tensors.")
        out = binary(cls.ufunc, a, b)
        if ctx.needs_input_grad:
            xa, xb = a._data, b._data
            # ties split the gradient evenly between the two inputs, as PyTorch does
            ctx.weight_a = _split(_weight_of_first, xa, xb, cls is Maximum)
        return out

    @staticmethod
    def backward(ctx, g):
        wa = _const(ctx.weight_a.astype(g._data.dtype, copy=False))
        na, nb = ctx.needs_input_grad
        return (g * wa if na else None), (g * (1 - wa) if nb else None)


def _weight_of_first(xa: np.ndarray, xb: np.ndarray, larger: bool) -> np.ndarray:
    """The share of the gradient of ``maximum(xa, xb)`` (``larger``) or ``minimum`` that
    goes to ``xa``: 1 where it wins, 0 where it loses, 0.5 on ties (float64)."""
    wins = (xa > xb) if larger else (xa < xb)
    return np.where(xa == xb, 0.5, wins.astype(np.float64))


class Minimum(Maximum):
    ufunc = staticmethod(np.minimum)


def _two_scalars_type(a: Any, b: Any) -> np.dtype:
    """PyTorch's result dtype for two Python numbers: default float, int64 or bool."""
    if isinstance(a, float) or isinstance(b, float):
        return get_default_dtype().numpy
    if isinstance(a, bool) and isinstance(b, bool):
        return np.dtype(np.bool_)
    return np.dtype(np.int64)


class Where(Function):
    _raw = True
    _wraps_numbers = True

    @staticmethod
    def forward(ctx, cond, a, b):
        c = cond._data
        if c.dtype == np.uint8:  # a byte condition is a mask, as PyTorch still takes it
            c = c.astype(bool)
        if c.dtype.kind != "b":
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a "
                f"tensor with dtype {scalar_type_name(c.dtype)}"
            )
        xa, xb = arr(a), arr(b)
        rt = (
            result_type(xa, xb)
            if isinstance(xa, np.ndarray) or isinstance(xb, np.ndarray)
            else _two_scalars_type(xa, xb)
        )
        try:
            out = _split(np.where, c, xa, xb)
        except ValueError:
            raise broadcast_error(c.shape, np.shape(xa), np.shape(xb)) from None
        if ctx.needs_input_grad:
            ctx.cond = c
        return out if out.dtype == rt else out.astype(rt)

    @staticmethod
    def backward(ctx, g):
        c = _const(ctx.cond)
        _, na, nb = ctx.needs_input_grad
        return None, (where(c, g, 0.0) if na else None), (where(c, 0.0, g) if nb else None)


class Cast(Function):
    _raw = True
    _node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, dt):
        ctx.src = a._data.dtype
        x = a._data
        if x.dtype.kind == "c" and dt.numpy.kind == "b":  # nonzero real or imaginary part, as PyTorch
            return x != 0
        if x.dtype.kind == "c" and dt.numpy.kind != "c":
            warnings.warn(
                "Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4
            )
            x = x.real
        if dt in OWN_CONVERSION:  # float8 kinds PyTorch converts otherwise than ml_dtypes
            return convert(x, dt)
        if x.dtype.kind == "f" and dt.numpy.kind in "iu":  # nan/inf/out of range: PyTorch's
            with np.errstate(invalid="ignore"):  # undefined values, without NumPy's warning
                return _astype(x, dt.numpy)
        return _astype(x, dt.numpy)

    @staticmethod
    def backward(ctx, g):
        if g._data.dtype.kind == "c" and ctx.src.kind != "c":
            g = g.real  # a real input made complex: the gradient's real part
        return Cast.apply(g, from_numpy(ctx.src)), None


# ---------------------------------------------------------------------- public functions
@scale_first("alpha")
def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other`` with broadcasting."""
    return Add.apply(input, other) if alpha == 1 else _scaled_step(Add, input, other, alpha)


@scale_first("alpha")
def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input - alpha * other`` with broadcasting."""
    return Sub.apply(input, other) if alpha == 1 else _scaled_step(Sub, input, other, alpha)


def _scaled_step(op: type[Function], input: Any, other: Any, alpha: Any) -> Tensor:
    """``op(input, alpha * other)`` (``Add`` or ``Sub``); for 16-bit floats ``alpha`` is
    rounded to their dtype and the result once, as in PyTorch."""
    rt = result_type(arr(input), arr(other))
    if rt.kind in "iu" and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if rt.kind != "c" and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    check_scalar_operand(alpha, rt)
    low = low_result(input, other)
    if low is None and rt.kind == "f" and rt.itemsize >= 4:
        return AddScaled.apply(input, other, alpha, op is Sub)
    if low is None:
        return op.apply(input, mul(other, alpha))
    return _op_of_product(op, input, other, scalar_of(alpha, low), low, (input, other))


@computed_in_float32
def _op_of_product(
    op: type[Function], input: Any, other: Any, alpha: Any, low: Any, operands: tuple
) -> Tensor:
    product = mul(other, alpha)
    round_scalar_tail(product._data, low.numpy, *operands)  # a fresh product: no one else reads it
    return op.apply(input, product)


def mul(input: Any, other: Any) -> Tensor:
    """Elementwise product with broadcasting."""
    return Mul.apply(input, other)


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """True division (``rounding_mode=None``; integers give floats), or ``'trunc'`` /
    ``'floor'`` rounding (a zero gradient, as PyTorch's; integer inputs stay integer)."""
    if rounding_mode is None:
        return Div.apply(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )
    if rounding_mode == "floor":
        return flat(floor_divide_array(input, other), "DivBackward2", input, other)
    xa, xb = arr(input), arr(other)
    rt = result_type(xa, xb)
    if rt.kind in "bc":
        raise NotImplementedError(f"\"div_trunc_cpu\" not implemented for '{scalar_type_name(rt)}'")
    if rt.kind in "iu":  # in the result's dtype, as PyTorch (a number wraps into it first)
        xa, xb = (np.asarray(wrapped_int(rt, x)).astype(rt, copy=False) for x in (xa, xb))
        if np.any(xb == 0):
            raise RuntimeError("ZeroDivisionError")
        with np.errstate(over="ignore"):
            q = xa // xb
            q += (xa - q * xb != 0) & ((xa < 0) != (xb < 0))  # floor to truncation
        return Tensor._make(np.asarray(q))
    with np.errstate(divide="ignore", invalid="ignore"):
        return flat(np.asarray(np.trunc(binary(np.true_divide, input, other))), "DivBackward2", input, other)


@number_self
def pow(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent``; either may be a Python number (an exponent beyond the range of
    an integer or 16-bit float ``input``'s dtype is PyTorch's RuntimeError)."""
    if exponent.__class__ in (int, float) and isinstance(input, Tensor):
        rt = input._data.dtype
        if (rt.kind in "iu" and exponent.__class__ is int and exponent >= 0) or (
            rt.kind in "fV" and rt.itemsize == 2
        ):
            check_scalar_operand(exponent, rt)
        if rt.kind == "V" and rt.itemsize == 2:  # bfloat16 (ml_dtypes' kind)
            return BFloat16Pow.apply(input, exponent)
    return Pow.apply(input, exponent)


@number_self
def float_power(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` computed in float64 (complex128 when either is complex)."""
    complex_ = any(
        isinstance(v, complex) or (isinstance(v, Tensor) and v.is_complex()) for v in (input, exponent)
    )
    wide = complex128 if complex_ else float64

    def widen(v: Any) -> Any:
        return cast(v, wide) if isinstance(v, Tensor) else wide.numpy.type(v).item()

    return Pow.apply(widen(input), widen(exponent))


def neg(input: Tensor) -> Tensor:
    """``-input``."""
    return Neg.apply(input)


def abs(input: Tensor) -> Tensor:
    """``|input|``; the gradient at 0 is 0. No bool inputs, as PyTorch's kernel."""
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return Abs.apply(input)


def square(input: Tensor) -> Tensor:
    """``input * input``."""
    return Square.apply(input)


def exp(input: Tensor) -> Tensor:
    """``e ** input``."""
    return Exp.apply(input)


def expm1(input: Tensor) -> Tensor:
    """``exp(input) - 1``, accurate for small inputs."""
    return Expm1.apply(input)


def log(input: Tensor) -> Tensor:
    """Natural logarithm."""
    return Log.apply(input)


def log1p(input: Tensor) -> Tensor:
    """``log(1 + input)``, accurate for small inputs."""
    return Log1p.apply(input)


def log2(input: Tensor) -> Tensor:
    """Base-2 logarithm."""
    return Log2.apply(input)


def log10(input: Tensor) -> Tensor:
    """Base-10 logarithm."""
    return Log10.apply(input)


def sqrt(input: Tensor) -> Tensor:
    """Square root."""
    return Sqrt.apply(input)


def rsqrt(input: Tensor) -> Tensor:
    """``1 / sqrt(input)``."""
    return Rsqrt.apply(input)


def reciprocal(input: Tensor) -> Tensor:
    """``1 / input`` (integers give floats)."""
    return Reciprocal.apply(input)


def sin(input: Tensor) -> Tensor:
    """Sine."""
    return Sin.apply(input)


def cos(input: Tensor) -> Tensor:
    """Cosine."""
    return Cos.apply(input)


def tan(input: Tensor) -> Tensor:
    """Tangent."""
    return Tan.apply(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return Tanh.apply(input)


def sinh(input: Tensor) -> Tensor:
    """Hyperbolic sine."""
    return Sinh.apply(input)


def cosh(input: Tensor) -> Tensor:
    """Hyperbolic cosine."""
    return Cosh.apply(input)


def asin(input: Tensor) -> Tensor:
    """Inverse sine (NaN outside [-1, 1])."""
    return Asin.apply(input)


def acos(input: Tensor) -> Tensor:
    """Inverse cosine (NaN outside [-1, 1])."""
    return Acos.apply(input)


def atan(input: Tensor) -> Tensor:
    """Inverse tangent."""
    return Atan.apply(input)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise angle of the point ``(other, input)``, in ``[-pi, pi]`` (broadcast)."""
    return Atan2.apply(input, other)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))``, computed stably (broadcast; floating results only)."""
    _tensor_arg("logaddexp", other, "other", 2)
    return Logaddexp.apply(input, other)


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)``, the hypotenuse, without overflow (broadcast;
    floating results only)."""
    _tensor_arg("hypot", other, "other", 2)
    return Hypot.apply(input, other)


def nan_to_num(
    input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Tensor:
    """``input`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``
    (by default the largest and smallest finite values of the dtype)."""
    return NanToNum.apply(input, 0.0 if nan is None else nan, posinf, neginf)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``; ``weight`` is a number or a tensor. ``end`` and a
    tensor ``weight`` must have ``input``'s (floating or complex) dtype, as in PyTorch. As
    PyTorch's kernel, a weight of magnitude 0.5 or more steps back from ``end`` instead:
    ``end - (1 - weight) * (end - input)`` (exact at ``weight == 1``), each one fused
    multiply-add in float32 for 16- and 32-bit floats (``kernels/lerp.py``)."""
    require_lerp_dtypes(input, end, weight)
    check_scalar_operand(weight, input._data.dtype, low="float32")
    out = Lerp.apply(input, end, weight)
    return named_node(out, "LerpBackward1") if isinstance(weight, Tensor) else out


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``, without overflow for large ``|input|``."""
    return Sigmoid.apply(input)


def erf(input: Tensor) -> Tensor:
    """The Gauss error function."""
    no_complex(input, "\"erf_vml_cpu\" not implemented for 'ComplexFloat'")
    return Erf.apply(input)


def relu(input: Tensor) -> Tensor:
    """``max(input, 0)``; the gradient at 0 is 0."""
    return Relu.apply(input)


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Limit ``input`` to ``[min, max]``; bounds are numbers or tensors (broadcast).

    Where ``min > max`` the result is ``max``, as PyTorch's.
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        # PyTorch's parser takes a 0-d tensor that needs no grad as a number (beta-VAE's
        # clamp(c, 0, C_max.data[0])): the numbers' overload then
        min, max = (_as_number(b) for b in (min, max))
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        raise TypeError(
            "clamp() received an invalid combination of arguments - got a "
            f"{type(min).__name__} min and a {type(max).__name__} max, but expected both "
            "tensors or both numbers"
        )
    return Clamp.apply(input, min, max)


def _as_number(b: Any) -> Any:
    """``b`` as a Python number where PyTorch's parser would take it for one (a 0-d tensor
    that does not require grad), else ``b``."""
    if isinstance(b, Tensor) and b._data.ndim == 0 and not b.requires_grad:
        return b._data.item()
    return b


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """``clamp(input, min=min)``."""
    return named_node(Clamp.apply(input, min, None), f"ClampMinBackward{int(isinstance(min, Tensor))}")


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """``clamp(input, max=max)``."""
    return named_node(Clamp.apply(input, None, max), f"ClampMaxBackward{int(isinstance(max, Tensor))}")


clip = clamp


def _as_tensor_like(x: Any, like: Tensor) -> Tensor:
    """A Python number as a 0-dim tensor (promotion then treats it as a scalar)."""
    if isinstance(x, Tensor):
        return x
    return Tensor._make(np.asarray(x, dtype=result_type(like._data, x)))


def maximum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise maximum (NaN propagates); at ties each input gets half the gradient."""
    return Maximum.apply(input, _as_tensor_like(other, input))


def minimum(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise minimum (NaN propagates); at ties each input gets half the gradient."""
    return Minimum.apply(input, _as_tensor_like(other, input))


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """``input`` where ``condition`` holds, else ``other`` (numbers allowed, broadcast).

    ``where(condition)`` alone returns the tuple of index tensors of the True entries.
    """
    if input is None and other is None:
        return tuple(Tensor._make(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(condition._data)))
    if input.__class__ in (int, float) or other.__class__ in (int, float):
        rt = result_type(arr(input), arr(other))
        for value in (input, other):  # a number is converted into the result's dtype, checked
            check_scalar_operand(value, rt, low="inf")
        with np.errstate(over="ignore"):  # (a 16-bit float takes inf quietly)
            return Where.apply(condition, input, other)
    return Where.apply(condition, input, other)


def cast(input: Tensor, dtype: _dtype_cls) -> Tensor:
    """A copy of ``input`` converted to ``dtype`` (differentiable between float dtypes)."""
    return Cast.apply(input, dtype)


true_divide = divide = div
negative = neg
multiply = mul
subtract = sub
absolute = abs
arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2


#: Python types given as a dtype to ``Tensor.to``
_PY_TYPES = {
    float: float64,
    int: from_numpy(np.dtype(np.int64)),
    bool: from_numpy(np.dtype(np.bool_)),
    complex: from_numpy(np.dtype(np.complex128)),
}


_TO_KEYWORDS = frozenset(("device", "dtype", "non_blocking", "copy", "memory_format"))
_TO_SIGNATURES = (
    "but expected one of:\n"
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, "
    "*, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format "
    "memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format "
    "memory_format = None)\n"
)


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(other)``; only the CPU device exists. A Python type
    is a dtype as PyTorch reads it: ``float`` float64, ``int`` int64, ``bool``, ``complex``
    complex128. ``memory_format=`` (e.g. ``torch.channels_last``) returns a copy laid out so
    unless ``self`` already is."""
    if not _TO_KEYWORDS.issuperset(kwargs):
        got = ", ".join(f"{k}={type(v).__name__}" for k, v in kwargs.items())
        raise TypeError(
            f"to() received an invalid combination of arguments - got ({got}, ), {_TO_SIGNATURES}"
        )
    target = _PY_TYPES.get(kwargs.get("dtype"), kwargs.get("dtype"))
    copy = kwargs.get("copy", False)
    fmt = kwargs.get("memory_format")
    dev = None
    if fmt is not None and fmt is not preserve_format:
        out = self.to(*args, **{k: v for k, v in kwargs.items() if k != "memory_format"})
        if out is self and suggest_memory_format(self._data) is fmt:
            return self
        return out.clone(memory_format=fmt)
    for a in args:
        if isinstance(a, _dtype_cls):
            target = a
        elif a in _PY_TYPES:
            target = _PY_TYPES[a]
        elif isinstance(a, Tensor):
            target = a.dtype
        elif isinstance(a, (str, device, int)) and not isinstance(a, bool):
            dev = a
    if kwargs.get("device") is not None:
        dev = kwargs["device"]
    if dev is not None and _wants_meta(dev) != _is_meta(self):
        if _is_meta(self):
            raise NotImplementedError(
                "Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead "
                "of torch.nn.Module.to() when moving module from meta to a different device."
            )
        dt = (target or self.dtype).numpy
        return Tensor._make(_as_meta(np.zeros(self._data.shape, dt))).requires_grad_(self.requires_grad)
    if target is None or target.numpy == self._data.dtype:
        return self.clone() if copy else self
    return cast(self, target)


def _where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """``x.where(condition, other)`` is ``where(condition, x, other)``."""
    return Where.apply(condition, self, other)


TENSOR_OPERATORS = {"__abs__": abs, "__pos__": lambda a: a, "where": _where_method}
