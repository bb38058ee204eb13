"""Special functions as Functions: the gamma family (lgamma, digamma, polygamma, multigammaln),
error functions (erfc, erfcx, erfinv), the normal distribution (ndtr, log_ndtr, ndtri),
Bessel functions, incomplete gamma, Hurwitz zeta, xlogy/xlog1py, entr, sinc, logit, exp2
and the orthogonal polynomials of ``torch.special``.

Kernels (``disttorch/kernels/special.py``) compute in float64; results keep a floating input's dtype
(integers give the default float dtype). Gradients follow PyTorch: where PyTorch has no
derivative (zeta, ``gammainc`` w.r.t. ``a``) backward raises ``NotImplementedError`` naming
the function; the Bessel functions and polynomials of ``torch.special`` give results that
do not require grad, as PyTorch's (``disttorch.special`` computes them without recording).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtype import arrays_result_type, from_numpy, get_default_dtype
from .._tensor import Tensor
from ..autograd.function import Function, named_node
from ..autograd.grad_mode import is_grad_enabled, recording
from ..autograd.saved_fields import kept, saved
from ..kernels import special as K
from ._helpers import broadcast_error, complex_kernel_error
from .dtype_rules import check_kernel, kernel_error
from .elementwise import Pow, cast, exp, log, sigmoid, where
from .opmath import is_low
from .scalar_self import number_self

__all__ = [
    "digamma",
    "erfc",
    "erfinv",
    "exp2",
    "i0",
    "lgamma",
    "logit",
    "mvlgamma",
    "polygamma",
    "sinc",
    "xlogy",
]

TENSOR_METHODS = ("lgamma", "digamma", "mvlgamma", "erfc", "erfinv", "i0", "sinc", "xlogy", "logit", "exp2")


def _float_dtype(*arrays: Any) -> np.dtype:
    """The result dtype of a special function of ``arrays`` (and numbers): PyTorch's
    promotion (a 0-dim tensor does not widen a dimensioned one), integers giving the
    default float dtype."""
    rt = arrays_result_type([a for a in arrays if isinstance(a, np.ndarray)] or [np.zeros(())])
    return rt if rt.kind in "fV" else get_default_dtype().numpy


def _arr(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


class _Special(Function):
    """``y = kernel(*inputs)`` computed in float64; ``derivatives(ctx, g, *inputs)`` returns
    one gradient per input (a subclass without it raises on backward, as PyTorch does).
    ``dtype_rule`` names the op's row in ``dtype_rules.KERNELS``, for binary kernels that
    refuse some promoted dtypes. With ``in_float32``, float32 and 16-bit inputs reach the
    kernel as float32 (PyTorch's kernel computes in float32 there, not in float64); with
    ``own_dtype`` (and ``_own_16_bit``), in the result's dtype itself, 16-bit ones too. With
    ``no_16_bit``, a float16 or bfloat16 result is PyTorch's ``"<name>_cpu" not implemented
    for 'Half'`` (its kernel has no 16-bit loop)."""

    _raw = True
    kernel: Callable = None
    name_ = ""
    n_inputs = 1
    dtype_rule: str | None = None
    in_float32 = False
    own_dtype = False
    no_16_bit = False
    #: the fields of PyTorch's node (``grad_fn._saved_<name>``, see ``autograd.saved_fields``),
    #: in its order: names of :data:`_FIELDS`
    saves: tuple[str, ...] = ("self",)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._backward_saves = {name: _FIELDS[name] for name in cls.saves}

    @classmethod
    def forward(cls, ctx, *args):
        inputs, extra = args[: cls.n_inputs], args[cls.n_inputs :]
        if cls.dtype_rule is not None:
            check_kernel(cls.dtype_rule, *inputs)
        for a in inputs:
            if isinstance(a, Tensor) and a._data.dtype.kind == "c":
                raise complex_kernel_error(cls.name_, a)
        arrays = [_arr(a) for a in inputs]
        if len(arrays) == 2:
            try:
                np.broadcast_shapes(np.shape(arrays[0]), np.shape(arrays[1]))
            except ValueError:
                raise broadcast_error(np.shape(arrays[0]), np.shape(arrays[1])) from None
        out_dtype = _float_dtype(*arrays)
        if cls.no_16_bit and is_low(out_dtype):
            raise kernel_error(f"{cls.name_}_cpu", out_dtype)
        work = np.float32 if cls.in_float32 and out_dtype != np.float64 else np.float64
        work = out_dtype if cls.own_dtype else work
        out = np.asarray(cls.kernel(*extra, *[np.asarray(a, dtype=work) for a in arrays]))
        out = out.astype(out_dtype, copy=False)
        if ctx.needs_input_grad:
            ctx.save_for_backward(*[a if isinstance(a, Tensor) else None for a in inputs])
            ctx.scalars = inputs
            ctx.extra = extra
            ctx.out = out
        return out

    @classmethod
    def backward(cls, ctx, g):
        saved = ctx._checked_saved()
        inputs = [s if s is not None else v for s, v in zip(saved, ctx.scalars)]
        grads = cls.derivatives(ctx, g, *inputs)
        return tuple(grads) + (None,) * len(ctx.extra)

    @classmethod
    def derivatives(cls, ctx, g, *inputs):
        raise NotImplementedError(f"the derivative for '{cls.name_}' is not implemented.")


_FIELDS = {
    "self": saved(0, lambda ctx: ctx.scalars[0]),  # a number where the op took one
    "other": saved(1, lambda ctx: ctx.scalars[1]),
    "result": kept("out", 0),
    "n": lambda ctx: ctx.extra[0],  # polygamma's order
    "eps": lambda ctx: ctx.extra[0],  # logit's
}


def _out(ctx, x: Tensor) -> Tensor:
    """The saved output; when backward is itself recorded (``create_graph=True``), the node's
    own output (as PyTorch's formula reads its saved result: a derivative written with it is
    differentiable in ``x`` through this node), or in a pass of batched gradients the output
    recomputed."""
    if is_grad_enabled():
        return Tensor._make(ctx.out, ctx, 0)
    if recording():
        return type(ctx).apply(x, *ctx.extra)
    return Tensor._make(ctx.out)


def _unary(
    name: str,
    kernel: Callable,
    deriv: Callable | None = None,
    in_float32: bool = False,
    formula: Callable | None = None,
    saves: tuple[str, ...] = ("self",),
) -> type:
    """A one-input special Function; ``deriv(x, y)`` is dy/dx as a tensor expression, or
    ``formula(g, x, y)`` the input's gradient, where PyTorch's derivative formula multiplies by
    the gradient before its last factor (the order its 16-bit steps round in); ``saves``: the
    fields of PyTorch's node."""
    attrs: dict = {"kernel": staticmethod(kernel), "name_": name, "in_float32": in_float32, "saves": saves}
    if formula is None and deriv is not None:

        def formula(g: Tensor, x: Tensor, y: Tensor) -> Tensor:
            return g * deriv(x, y)

    if formula is not None:
        attrs["derivatives"] = classmethod(lambda cls, ctx, g, x: (formula(g, *_in_grad_dtype(ctx, g, x)),))
    return type(name.title().replace("_", ""), (_Special,), attrs)


def _in_grad_dtype(ctx: Any, g: Tensor, x: Tensor) -> tuple:
    """``(x, y)`` for a derivative formula: a bfloat16 input's float32 copy (see
    ``autograd.function``) and its float32 result rounded to bfloat16, as PyTorch's formula
    reads them, so that each of its steps rounds to bfloat16 as there."""
    y = _out(ctx, x)
    low = g._data.dtype
    if is_low(low) and x._data.dtype != low:
        x, y = cast(x, from_numpy(low)), cast(y, from_numpy(low))
    return x, y


_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _sign(x: Tensor) -> Tensor:
    return Tensor._make(np.sign(x._data))


Lgamma = _unary("lgamma", K.lgamma, lambda x, y: digamma(x))
Digamma = _unary("digamma", K.digamma, lambda x, y: polygamma(1, x))
Erfc = _unary("erfc", K.erfc, lambda x, y: exp(-(x * x)) * (-2 / _SQRT_PI))
Erfcx = _unary("erfcx", K.erfcx, lambda x, y: 2 * x * y - 2 / _SQRT_PI, saves=("self", "result"))
Erfinv = _unary("erfinv", K.erfinv, lambda x, y: exp(y * y) * (_SQRT_PI / 2))
LogNdtr = _unary(
    "log_ndtr", K.log_ndtr, lambda x, y: exp(-(x * x) / 2 - y) / _SQRT_2PI, saves=("self", "result")
)
Ndtri = _unary("ndtri", K.ndtri, lambda x, y: exp(y * y / 2) * _SQRT_2PI, saves=("result",))
I0 = _unary("i0", K.i0, lambda x, y: i1(x))
I0e = _unary("i0e", K.i0e, lambda x, y: i1e(x) - _sign(x) * y, saves=("self", "result"))
I1 = _unary(
    "i1",
    K.i1,
    lambda x, y: (
        Tensor._make(np.where(x._data == 0, 0.5, 0.0)).to(y.dtype)
        + where(x == 0, 0.0, i0(x) - y / where(x == 0, 1.0, x))
    ),
    saves=("self", "result"),
)
I1e = _unary(
    "i1e",
    K.i1e,
    lambda x, y: (
        Tensor._make(np.where(x._data == 0, 0.5, 0.0)).to(y.dtype)
        + where(x == 0, 0.0, i0e(x) - y * (_sign(x) + 1 / where(x == 0, 1.0, x)))
    ),
    saves=("self", "result"),
)
Entr = _unary(
    "entr",
    lambda x: np.where(
        x > 0, -x * np.log(np.where(x > 0, x, 1)), np.where(x < 0, -np.inf, np.where(x == 0, 0.0, x))
    ),
    lambda x, y: -(log(x) + 1),
)


def _sinc(x: np.ndarray) -> np.ndarray:
    """``sin(pi x) / (pi x)`` in ``x``'s dtype (float32 as PyTorch: ``pi x`` rounded first, its
    sine the C library's, correctly rounded: float64's rounded once)."""
    px = x.dtype.type(math.pi) * x
    with np.errstate(invalid="ignore", divide="ignore"):
        sin = np.sin(px, dtype=np.float64).astype(x.dtype)
        return np.where(x == 0, 1.0, sin / np.where(x == 0, 1.0, px))


def _sinc_deriv(x: Tensor, y: Tensor) -> Tensor:
    """PyTorch's ``(pi x cos(pi x) - sin(pi x)) / (x x pi)`` filled with 0 at 0, in tensor ops in
    its order (so that its own derivative is PyTorch's second derivative: NaN at 0, as there)."""
    px = x * math.pi
    return ((px * px.cos() - px.sin()) / (x * x * math.pi)).masked_fill(Tensor._make(x._data == 0), 0.0)


Sinc = _unary("sinc", _sinc, _sinc_deriv, in_float32=True)
Exp2 = _unary("exp2", np.exp2, formula=lambda g, x, y: g * y * math.log(2), saves=("result",))


def _nan_edges(kernel: Callable, infinite: bool = True) -> Callable:
    """``kernel`` with NaN for a NaN input and, with ``infinite``, for +-inf: PyTorch's
    kernels' answers there (their series and asymptotic forms give NaN)."""

    def f(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            out = np.asarray(kernel(x), dtype=np.float64)
        return np.where(np.isinf(x) if infinite else np.isnan(x), np.nan, np.where(np.isnan(x), x, out))

    return f


BesselJ0 = _unary("bessel_j0", _nan_edges(lambda x: K.bessel_j(0, x)))
BesselJ1 = _unary("bessel_j1", _nan_edges(lambda x: K.bessel_j(1, x)))
BesselY0 = _unary("bessel_y0", _nan_edges(lambda x: K.bessel_y(0, x)))
BesselY1 = _unary("bessel_y1", _nan_edges(lambda x: K.bessel_y(1, x)))
ModifiedBesselK0 = _unary("modified_bessel_k0", K.k0)
ModifiedBesselK1 = _unary("modified_bessel_k1", K.k1)
ScaledModifiedBesselK0 = _unary("scaled_modified_bessel_k0", _nan_edges(K.k0e, infinite=False))
ScaledModifiedBesselK1 = _unary("scaled_modified_bessel_k1", _nan_edges(K.k1e, infinite=False))
ModifiedBesselI0 = _unary("modified_bessel_i0", K.i0)
ModifiedBesselI1 = _unary("modified_bessel_i1", K.i1)
AiryAi = _unary("airy_ai", _nan_edges(K.airy_ai))
SphericalBesselJ0 = _unary("spherical_bessel_j0", lambda x: np.where(np.isinf(x), 0.0, _sinc(x / math.pi)))


def _no_16_bit(*classes: type) -> None:
    """The kernels PyTorch's CPU build has no float16/bfloat16 loop for: refuse such a
    result (forward then sees 16-bit arrays as they are, not float32 copies)."""
    for cls in classes:
        cls.no_16_bit = cls._own_16_bit = True


_no_16_bit(Erfcx, LogNdtr, Ndtri, BesselJ0, BesselJ1, BesselY0, BesselY1, AiryAi, SphericalBesselJ0)
_no_16_bit(ModifiedBesselI0, ModifiedBesselI1, ModifiedBesselK0, ModifiedBesselK1)
_no_16_bit(ScaledModifiedBesselK0, ScaledModifiedBesselK1)

# PyTorch's node names where they are not the class name: ``torch.special``'s own ops are
# ``Special...``; its ``ndtr`` is a product
for _cls, _name in (
    (Entr, "SpecialEntrBackward0"),
    (Erfcx, "SpecialErfcxBackward0"),
    (I0e, "SpecialI0EBackward0"),
    (I1, "SpecialI1Backward0"),
    (I1e, "SpecialI1EBackward0"),
    (LogNdtr, "SpecialLogNdtrBackward0"),
    (Ndtri, "SpecialNdtriBackward0"),
):
    _cls._node_name = _name
    _cls._profiled_as = "aten::special_" + _cls.name_  # the profiler's name: the operator's


class Polygamma(_Special):
    name_, saves = "polygamma", ("n", "self")

    @staticmethod
    def kernel(n, x):
        return K.polygamma(n, x)

    @classmethod
    def derivatives(cls, ctx, g, x):
        return (g * polygamma(ctx.extra[0] + 1, x),)


class Logit(_Special):
    """``log(p / (1 - p))`` of ``p`` clamped to ``[eps, 1 - eps]`` (no clamp if eps is None);
    the gradient is 0 outside that interval (NaN outside [0, 1] without eps), as PyTorch's."""

    name_, saves = "logit", ("self", "eps")
    own_dtype, _own_16_bit = True, True

    @staticmethod
    def kernel(eps, x):
        one = x.dtype.type(1)  # each step rounds to the input's dtype, as PyTorch's kernel
        if eps is not None:
            lo = x.dtype.type(eps)
            x = np.clip(x, lo, one - lo).astype(x.dtype, copy=False)  # (bfloat16's clip widens)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x / (one - x))

    @classmethod
    def derivatives(cls, ctx, g, x):
        """``g / (x (1 - x))`` in tensor ops (differentiable again, as PyTorch's), 0 outside
        ``[eps, 1 - eps]``."""
        eps, xd = ctx.extra[0], x._data
        if eps is not None:
            outside, fill = (xd < eps) | (xd > 1 - eps), 0.0
        else:  # outside [0, 1] the logit is NaN, and so is its gradient
            outside, fill = (xd < 0) | (xd > 1), math.nan
        grad = g / (x * (1 - x)).to(g.dtype)  # (PyTorch's division, 16-bit steps rounded)
        return (grad.masked_fill(Tensor._make(outside), fill),)


class _Binary(_Special):
    n_inputs = 2
    saves = ("self", "other")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """The op; with a number for ``self`` (``other``) its node is PyTorch's ``...Backward1``
        (``...Backward2``), the overload for a Scalar there."""
        out = super().apply(*args)
        if isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
            return out
        base = cls._node_name or cls.__name__ + "Backward0"
        return named_node(out, base[:-1] + ("2" if isinstance(args[0], Tensor) else "1"))

    _rounds_numbers = (0, 1)


def _grad_to(t: Any) -> bool:
    return isinstance(t, Tensor)


def _xlog_grad_x(fn: Callable, g: Tensor, x: Any, y: Any, pole: float) -> Tensor:
    """d/dx of ``x * log(y)`` (``fn`` xlogy) or ``x * log1p(y)`` (xlog1py): ``log(y)`` times
    ``g``, also at ``x == 0`` as in PyTorch; 0 only where ``x == 0`` and the log is undefined
    (``y <= pole``), where the value is the constant 0."""
    undefined = (np.asarray(_arr(x)) == 0) & (np.asarray(_arr(y)) <= pole)
    return where(Tensor._make(undefined), 0.0, fn(g, y))


def _times_log(log: np.ufunc) -> Callable:
    """The kernel ``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN), in the arrays' own
    dtype as PyTorch's scalar kernel: below float64 the C library's log (correctly rounded)
    rounded to the dtype, times ``x`` rounded once."""

    def kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            if x.dtype == np.float64:
                v = x * log(y)
            else:
                lg = log(y.astype(np.float64)).astype(y.dtype).astype(np.float32)
                v = (x.astype(np.float32) * lg).astype(x.dtype)
            return np.where((x == 0) & ~np.isnan(y), np.zeros((), v.dtype), v)

    return kernel


class Xlogy(_Binary):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""

    name_ = "xlogy"
    dtype_rule = "xlogy"
    own_dtype, _own_16_bit = True, True
    kernel = staticmethod(_times_log(np.log))

    @classmethod
    def derivatives(cls, ctx, g, x, y):
        gx = _xlog_grad_x(xlogy, g, x, y, 0.0) if _grad_to(x) else None
        gy = g * x / y if _grad_to(y) else None
        return gx, gy


class Xlog1py(_Binary):
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""

    _node_name, _profiled_as = "SpecialXlog1PyBackward0", "aten::special_xlog1py"
    name_ = "xlog1py"
    dtype_rule = "xlog1py"
    own_dtype, _own_16_bit = True, True
    kernel = staticmethod(_times_log(np.log1p))

    @classmethod
    def derivatives(cls, ctx, g, x, y):
        gx = _xlog_grad_x(xlog1py, g, x, y, -1.0) if _grad_to(x) else None
        gy = g * x / (y + 1) if _grad_to(y) else None
        return gx, gy


class Zeta(_Binary):
    _node_name = "SpecialZetaBackward0"
    name_ = "zeta"
    kernel = staticmethod(K.zeta)


class Gammainc(_Binary):
    """Regularised lower incomplete gamma ``P(a, x)``; differentiable in ``x`` only."""

    name_ = "gammainc"
    dtype_rule = "igamma"
    kernel = staticmethod(K.gammainc)
    sign = 1.0

    @classmethod
    def derivatives(cls, ctx, g, a, x):
        if _grad_to(a) and ctx.needs_input_grad[0]:
            raise NotImplementedError(
                f"the derivative for '{cls.name_}' with respect to input (a) is not implemented."
            )
        ad, xd = np.asarray(_arr(a), dtype=np.float64), np.asarray(_arr(x), dtype=np.float64)
        with np.errstate(all="ignore"):
            d = cls.sign * np.exp((ad - 1) * np.log(xd) - xd - K.lgamma(ad))
        return None, g * Tensor._make(d.astype(ctx.out.dtype))


class Gammaincc(Gammainc):
    name_ = "gammaincc"
    dtype_rule = "igammac"
    kernel = staticmethod(K.gammaincc)
    sign = -1.0


class _Polynomial(_Binary):
    """An orthogonal polynomial ``p_n(x)`` (no gradient, as in PyTorch)."""

    recurrence: tuple = ()

    @classmethod
    def kernel(cls, x, n):
        p0, p1, step = cls.recurrence
        n = np.asarray(n)
        if n.dtype.kind == "f":
            n = np.where(np.isfinite(n), np.trunc(n), -1)
        return K.poly_recurrence(x, n, p0, p1, step)


def _poly(name: str, p0: Callable, p1: Callable, step: Callable, shift: bool = False) -> type:
    if shift:
        q0, q1, qs = p0, p1, step
        p0, p1 = (lambda x: q0(2 * x - 1)), (lambda x: q1(2 * x - 1))

        def step(k, x, cur, prev):
            return qs(k, 2 * x - 1, cur, prev)

    return type(name, (_Polynomial,), {"name_": name, "recurrence": (p0, p1, step)})


_ones = np.ones_like


def _cheb_step(k, x, cur, prev):
    return 2 * x * cur - prev


ChebyshevT = _poly("chebyshev_polynomial_t", _ones, lambda x: x, _cheb_step)
ChebyshevU = _poly("chebyshev_polynomial_u", _ones, lambda x: 2 * x, _cheb_step)
ChebyshevV = _poly("chebyshev_polynomial_v", _ones, lambda x: 2 * x - 1, _cheb_step)
ChebyshevW = _poly("chebyshev_polynomial_w", _ones, lambda x: 2 * x + 1, _cheb_step)
ShiftedChebyshevT = _poly("shifted_chebyshev_polynomial_t", _ones, lambda x: x, _cheb_step, True)
ShiftedChebyshevU = _poly("shifted_chebyshev_polynomial_u", _ones, lambda x: 2 * x, _cheb_step, True)
ShiftedChebyshevV = _poly("shifted_chebyshev_polynomial_v", _ones, lambda x: 2 * x - 1, _cheb_step, True)
ShiftedChebyshevW = _poly("shifted_chebyshev_polynomial_w", _ones, lambda x: 2 * x + 1, _cheb_step, True)
HermiteH = _poly(
    "hermite_polynomial_h", _ones, lambda x: 2 * x, lambda k, x, cur, prev: 2 * x * cur - 2 * k * prev
)
HermiteHe = _poly("hermite_polynomial_he", _ones, lambda x: x, lambda k, x, cur, prev: x * cur - k * prev)
LaguerreL = _poly(
    "laguerre_polynomial_l",
    _ones,
    lambda x: 1 - x,
    lambda k, x, cur, prev: ((2 * k + 1 - x) * cur - k * prev) / (k + 1),
)
LegendreP = _poly(
    "legendre_polynomial_p",
    _ones,
    lambda x: x,
    lambda k, x, cur, prev: ((2 * k + 1) * x * cur - k * prev) / (k + 1),
)
_no_16_bit(_Polynomial, Zeta)


# ---------------------------------------------------------------------- public functions
def lgamma(input: Tensor, *, out: Any = None) -> Tensor:
    """``log|Gamma(input)|``."""
    return Lgamma.apply(input)


def digamma(input: Tensor, *, out: Any = None) -> Tensor:
    """The logarithmic derivative of the gamma function, ``psi(x)``."""
    return Digamma.apply(input)


def polygamma(n: int, input: Tensor, *, out: Any = None) -> Tensor:
    """The ``n``-th derivative of the digamma function."""
    if isinstance(n, Tensor):
        n = int(n.item())
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return Polygamma.apply(input, int(n))


def mvlgamma(input: Tensor, p: int, *, out: Any = None) -> Tensor:
    """Multivariate log-gamma ``sum_{j<p} lgamma(x - j/2) + p(p-1)/4 log(pi)`` for ``p >= 1``
    (at every element, as PyTorch 2.13: its definition's domain ``x > (p - 1) / 2`` is not
    checked)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    total = lgamma(input)
    for j in range(1, p):
        total = total + lgamma(input - j / 2)
    return named_node(total + p * (p - 1) / 4 * math.log(math.pi), "MvlgammaBackward0")


def erfc(input: Tensor, *, out: Any = None) -> Tensor:
    """The complementary error function ``1 - erf(x)``, accurate in the tails."""
    return Erfc.apply(input)


def erfinv(input: Tensor, *, out: Any = None) -> Tensor:
    """The inverse error function on ``(-1, 1)`` (±inf at ±1, NaN outside)."""
    return Erfinv.apply(input)


def i0(input: Tensor, *, out: Any = None) -> Tensor:
    """Modified Bessel function of the first kind, order 0."""
    return I0.apply(input)


def i0e(input: Tensor, *, out: Any = None) -> Tensor:
    """Exponentially scaled ``exp(-|x|) I0(x)``."""
    return I0e.apply(input)


def i1(input: Tensor, *, out: Any = None) -> Tensor:
    """Modified Bessel function of the first kind, order 1."""
    return I1.apply(input)


def i1e(input: Tensor, *, out: Any = None) -> Tensor:
    """Exponentially scaled ``exp(-|x|) I1(x)``."""
    return I1e.apply(input)


def sinc(input: Tensor, *, out: Any = None) -> Tensor:
    """The normalised sinc ``sin(pi x) / (pi x)`` (1 at 0; complex inputs too)."""
    if input._data.dtype.kind == "c":
        zero = Tensor._make(input._data == 0)
        px = input * math.pi
        return where(zero, 1.0, px.sin() / where(zero, 1.0, px))
    return Sinc.apply(input)


@number_self
def xlogy(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """``input * log(other)``, 0 where ``input == 0``."""
    return Xlogy.apply(input, other)


@number_self
def xlog1py(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """``input * log1p(other)``, 0 where ``input == 0``."""
    return Xlog1py.apply(input, other)


def logit(input: Tensor, eps: float | None = None, *, out: Any = None) -> Tensor:
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    return Logit.apply(input, eps)


def exp2(input: Tensor, *, out: Any = None) -> Tensor:
    """``2 ** input``."""
    if input._data.dtype.kind == "c":
        return Pow.apply(2.0, input)
    return Exp2.apply(input)


def expit(input: Tensor, *, out: Any = None) -> Tensor:
    """The logistic sigmoid."""
    return sigmoid(input)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``Tensor.polygamma(n)``: the order comes first in the function, second in the method."""
    return polygamma(n, self)


TENSOR_OPERATORS = {"polygamma": _polygamma_method}
