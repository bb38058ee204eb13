"""PyTorch's long tail of top-level math functions, built from the differentiable ops of the
other families: inverse hyperbolics, ``deg2rad``/``rad2deg``, ``copysign``, ``fmax``/``fmin``,
``frac``/``fix``, ``heaviside``, ``ldexp``, ``frexp``, ``gcd``/``lcm``, ``nextafter``,
``logaddexp2``, ``signbit``, ``isposinf``/``isneginf``; fused products (``addmv``, ``addr``,
``addbmm``, ``baddbmm``, ``addcmul``, ``addcdiv``), ``inner``/``kron``/``vdot``/``ger``,
``chain_matmul``, the legacy linear-algebra names (``det``, ``inverse``, ``svd``, ``qr``,
...), ``cdist``/``dist``, stacking and splitting helpers, ``nan``-aware reductions,
quantiles, cumulative max/min, windows, constants, and the in-place forms (``acosh_``...).
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from .. import _native_warnings, _random
from .._creation import check_range_dtype
from .._dtype import (
    FLOAT_KINDS,
    arrays_result_type,
    checked_scalar,
    float32,
    float64,
    from_numpy,
    get_default_dtype,
    scalar_type_name,
    to_numpy,
)
from .._dtype import dtype as _dtype_cls
from .._linspace import integer_ends
from .._tensor import Tensor
from ..autograd.autocast_state import autocast_op
from ..autograd.forward_ad import refuse_tangents
from ..autograd.function import Function, named_node
from ..autograd.grad_reads import reads_inputs
from ..kernels.reductions import reduce_along, scan_along, ufunc_reduce
from ..kernels.special import i0 as _i0
from ..kernels.threads import elementwise
from ..kernels.torch_select import kthvalue_index
from ..kernels.torch_topk import mode_order, replays
from . import complex as _complex
from . import linalg_functions as _linalg
from ._helpers import (
    _return_type,
    binary,
    broadcast_error,
    check_scalar_operand,
    no_complex,
    scalar_as_vector,
    wrap_dim,
)
from .comparison import _replay_tied, sort, sortable, unique_axis
from .deprecated_overloads import scale_first, scales_first
from .dtype_rules import (
    check_kernel,
    kernel_error,
    refuse_integer_addcdiv,
    refuse_kernel,
    require_source_dtype,
)
from .elementwise import Addcmul, Logaddexp2, clamp, lerp, sqrt, where
from .elementwise import abs as tabs
from .flat import flat, no_derivative
from .indexing import _checked_vector_index, check_index_source, gather
from .inplace import _RESTRIDE, _method_inplace, _restride_inplace
from .linalg import matmul
from .linalg_low_precision import refuse_low_precision
from .linalg_lu import lu_unpacked
from .low_batch_products import low_batch_product
from .opmath import computed_in_float32
from .shape import _check_join, cat, split, stack
from .special import Gammainc, Gammaincc

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

__all__ = [
    "acosh",
    "addbmm",
    "addcdiv",
    "addcmul",
    "addmv",
    "addr",
    "aminmax",
    "arccosh",
    "arcsinh",
    "arctanh",
    "asinh",
    "atanh",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "baddbmm",
    "bartlett_window",
    "bincount",
    "blackman_window",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "bucketize",
    "can_cast",
    "cartesian_prod",
    "cdist",
    "chain_matmul",
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "column_stack",
    "combinations",
    "copysign",
    "corrcoef",
    "cov",
    "cross",
    "cummax",
    "cummin",
    "cumulative_trapezoid",
    "deg2rad",
    "det",
    "diag_embed",
    "diagflat",
    "dist",
    "dsplit",
    "dstack",
    "fix",
    "fmax",
    "fmin",
    "frac",
    "frexp",
    "frobenius_norm",
    "gcd",
    "ger",
    "hamming_window",
    "hann_window",
    "heaviside",
    "histc",
    "hsplit",
    "igamma",
    "igammac",
    "inner",
    "inverse",
    "is_nonzero",
    "is_same_size",
    "is_signed",
    "isneginf",
    "isposinf",
    "kaiser_window",
    "kron",
    "kthvalue",
    "lcm",
    "ldexp",
    "logaddexp2",
    "logcumsumexp",
    "logdet",
    "logspace",
    "lu_unpack",
    "matrix_exp",
    "matrix_power",
    "matrix_rank",
    "mode",
    "msort",
    "nanmean",
    "nanmedian",
    "nanquantile",
    "nansum",
    "nextafter",
    "nuclear_norm",
    "pinverse",
    "positive",
    "promote_types",
    "qr",
    "quantile",
    "rad2deg",
    "renorm",
    "repeat_interleave",
    "rot90",
    "row_stack",
    "rsub",
    "scalar_tensor",
    "searchsorted",
    "signbit",
    "slogdet",
    "svd",
    "tensor_split",
    "trapezoid",
    "trapz",
    "triangular_solve",
    "unique_consecutive",
    "unravel_index",
    "vander",
    "vdot",
    "vsplit",
]

TENSOR_METHODS = (
    "acosh",
    "asinh",
    "atanh",
    "arccosh",
    "arcsinh",
    "arctanh",
    "deg2rad",
    "rad2deg",
    "copysign",
    "fmax",
    "fmin",
    "frac",
    "fix",
    "heaviside",
    "ldexp",
    "frexp",
    "gcd",
    "lcm",
    "nextafter",
    "logaddexp2",
    "signbit",
    "isposinf",
    "isneginf",
    "positive",
    "addmv",
    "addr",
    "addbmm",
    "baddbmm",
    "addcmul",
    "addcdiv",
    "inner",
    "kron",
    "vdot",
    "ger",
    "det",
    "slogdet",
    "logdet",
    "inverse",
    "pinverse",
    "matrix_exp",
    "matrix_power",
    "qr",
    "svd",
    "cholesky",
    "cholesky_solve",
    "cholesky_inverse",
    "triangular_solve",
    "cross",
    "dist",
    "diag_embed",
    "diagflat",
    "tensor_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "rot90",
    "msort",
    "aminmax",
    "cummax",
    "cummin",
    "logcumsumexp",
    "nansum",
    "nanmean",
    "quantile",
    "nanquantile",
    "nanmedian",
    "cov",
    "corrcoef",
    "is_nonzero",
    "is_same_size",
    "is_signed",
    "bincount",
    "histc",
    "kthvalue",
    "mode",
    "igamma",
    "igammac",
    "repeat_interleave",
    "unique_consecutive",
    "renorm",
)


def _t(x: Any, like: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    dt = like._data.dtype if like is not None and like._data.dtype.kind == "f" else None
    return Tensor._make(np.asarray(x, dtype=dt))


def _float(x: Tensor) -> Tensor:
    return x if x._data.dtype.kind in FLOAT_KINDS + "c" else x.to(get_default_dtype())


# ---------------------------------------------------------------------- pointwise
def acosh(input: Tensor) -> Tensor:
    """Inverse hyperbolic cosine (NaN below 1; complex: the principal branch)."""
    return _complex.Acosh.apply(_float(input))


def asinh(input: Tensor) -> Tensor:
    """Inverse hyperbolic sine (complex: the principal branch)."""
    return _complex.Asinh.apply(_float(input))


def atanh(input: Tensor) -> Tensor:
    """Inverse hyperbolic tangent (infinite at +-1, NaN beyond; complex: the principal branch)."""
    return _complex.Atanh.apply(_float(input))


arccosh, arcsinh, arctanh = acosh, asinh, atanh


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians."""
    no_complex(input, "deg2rad is not supported for complex tensors.", RuntimeError)
    return _float(input) * (math.pi / 180)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees."""
    no_complex(input, "rad2deg is not supported for complex tensors.", RuntimeError)
    return _float(input) * (180 / math.pi)


def copysign(input: Any, other: Any) -> Tensor:
    """``|input|`` with the sign (bit) of ``other``, in the operands' floating dtype."""
    rt = check_kernel("copysign", input, other)
    x, o = _t(input), _t(other)
    x = x.to(from_numpy(rt) if rt.kind in "fV" else get_default_dtype())
    neg = Tensor._make(np.signbit(o._data))
    out = where(neg, -tabs(x), tabs(x))
    if o.requires_grad:  # a zero gradient to ``other`` (PyTorch's, not None); + -0.0 keeps every value
        out = out + flat(np.full((), -0.0, dtype=out._data.dtype), "CopysignBackward0", o)
    return out


def fmax(input: Tensor, other: Any) -> Tensor:
    """Elementwise maximum that ignores NaN (NaN only where both are NaN)."""
    o = _t(other, input)
    no_complex(input, "fmax not implemented for complex tensors.", RuntimeError)
    no_complex(o, "fmax not implemented for complex tensors.", RuntimeError)
    return _nan_ignoring(np.greater_equal, input, o)


def fmin(input: Tensor, other: Any) -> Tensor:
    """Elementwise minimum that ignores NaN."""
    o = _t(other, input)
    no_complex(input, "fmin not implemented for complex tensors.", RuntimeError)
    no_complex(o, "fmin not implemented for complex tensors.", RuntimeError)
    return _nan_ignoring(np.less_equal, input, o)


def _nan_ignoring(keeps: np.ufunc, x: Tensor, o: Tensor) -> Tensor:
    """``x`` where ``keeps(x, o)`` or ``o`` is NaN, else ``o``: ``fmax``/``fmin`` with PyTorch's
    gradients (all of it to ``x`` at a tie, not half to each as ``maximum``'s)."""
    with np.errstate(invalid="ignore"):
        mask = np.logical_or(keeps(x._data, o._data), np.isnan(o._data))
    return where(Tensor._make(mask), x, o)


def frac(input: Tensor) -> Tensor:
    """Fractional part ``x - trunc(x)`` (gradient 1); floating inputs only, as PyTorch."""
    refuse_kernel("frac_cpu", input, "biuc")
    return named_node(input - Tensor._make(np.trunc(input._data)), "FracBackward0")


def fix(input: Tensor) -> Tensor:
    """Round towards zero (``trunc``)."""
    return input.trunc()


def heaviside(input: Tensor, values: Any) -> Tensor:
    """Step function: 0 below 0, 1 above, ``values`` at 0 (no derivative: backward through it
    raises, as PyTorch's). Both of one real dtype."""
    x, v = input._data, _t(values)._data
    if x.dtype.kind == "c" or v.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if x.dtype != v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return no_derivative(np.asarray(elementwise(_heaviside, x, v), dtype=x.dtype), "heaviside", input, values)


def _heaviside(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """PyTorch's ``v if x == 0 else x > 0``: 0 for NaN (NumPy's ``heaviside`` gives NaN)."""
    return np.where(x == 0, v, x > 0)


def ldexp(input: Tensor, other: Any) -> Tensor:
    """``input * 2 ** other`` (complex when ``other`` is), as PyTorch: the power in
    ``other``'s floating dtype (the default one for integers), the product written in the
    dtype ``input`` and ``other`` promote to (a floating or complex one). A floating
    ``input`` takes no bool ``other``, as PyTorch's kernel."""
    other = _t(other)
    if input._data.dtype.kind in FLOAT_KINDS and other._data.dtype == np.bool_:
        raise kernel_error("ldexp_cpu_exp", other._data.dtype)
    if other.is_complex():
        out = input * (2.0**other)
    else:
        power = 2.0 ** (other if other._data.dtype.kind in FLOAT_KINDS else other.to(get_default_dtype()))
        out = _float(input) * power
    rt = arrays_result_type([input._data, other._data])
    return out if rt.kind not in FLOAT_KINDS + "c" or out._data.dtype == rt else out.to(from_numpy(rt))


_Frexp = _return_type("frexp", ("mantissa", "exponent"))


class Frexp(Function):
    """The mantissa of ``input = mantissa * 2 ** exponent``; its gradient is ``g / 2 ** exponent``
    (the exponent is constant between its jumps)."""

    _raw = True

    @staticmethod
    def forward(ctx, a):
        m, ex = np.frexp(a._data)
        if ctx.needs_input_grad:
            ctx.exponent = ex
        return m

    @staticmethod
    def backward(ctx, g):
        return g / Tensor._make(np.exp2(ctx.exponent).astype(g._data.dtype))


def frexp(input: Tensor) -> tuple:
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``, mantissa in [0.5, 1)."""
    x = input._data
    if x.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    exponent = np.frexp(x.astype(np.float32) if x.dtype.kind == "V" else x)[1]
    return _Frexp(Frexp.apply(input), Tensor._make(exponent.astype(np.int32)))


def gcd(input: Tensor, other: Any) -> Tensor:
    """Elementwise greatest common divisor of integers (in the dtype they promote to)."""
    rt = check_kernel("gcd", input, other)
    return Tensor._make(elementwise(np.gcd, input._data.astype(rt), _t(other)._data.astype(rt)))


def lcm(input: Tensor, other: Any) -> Tensor:
    """Elementwise least common multiple of integers (in the dtype they promote to)."""
    rt = check_kernel("lcm", input, other)
    return Tensor._make(elementwise(np.lcm, input._data.astype(rt), _t(other)._data.astype(rt)))


class NextAfter(Function):
    """The next float after ``input`` towards ``other``; as PyTorch's, the gradient passes
    to ``input`` unchanged and ``other`` gets zeros."""

    _raw = True

    @staticmethod
    def forward(ctx, a, b, rt):
        ctx.shapes = a._data.shape, b._data.shape
        return elementwise(np.nextafter, a._data.astype(rt), b._data.astype(rt))

    @staticmethod
    def backward(ctx, g):
        return g.sum_to_size(ctx.shapes[0]), Tensor._make(np.zeros(ctx.shapes[1], g._data.dtype)), None


def nextafter(input: Tensor, other: Any) -> Tensor:
    """The next float after ``input`` towards ``other`` (floating tensors)."""
    rt = check_kernel("nextafter", input, other)
    return NextAfter.apply(input, _t(other), rt)


def logaddexp2(input: Tensor, other: Any) -> Tensor:
    """``log2(2^x + 2^y)`` computed stably (floating tensors)."""
    return Logaddexp2.apply(input, _t(other, input))


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set (also for -0.0); no complex inputs, as PyTorch."""
    if input._data.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    return Tensor._make(elementwise(np.signbit, input._data))


def isposinf(input: Tensor) -> Tensor:
    """True where ``input`` is +inf."""
    return Tensor._make(elementwise(np.isposinf, input._data))


def isneginf(input: Tensor) -> Tensor:
    """True where ``input`` is -inf."""
    return Tensor._make(elementwise(np.isneginf, input._data))


def positive(input: Tensor) -> Tensor:
    """Returns ``input`` (refuses bool, as PyTorch)."""
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---------------------------------------------------------------------- fused products
def _scaled(input: Tensor, prod: Tensor, beta: Any, alpha: Any, node: str) -> Tensor:
    """``beta * input + alpha * prod``, its node named ``node`` (PyTorch's one fused op)."""
    if alpha != 1:
        prod = prod * alpha
    if beta != 0:
        prod = (input if beta == 1 else input * beta) + prod
    return named_node(prod, node)


@scales_first
@computed_in_float32
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    return _scaled(input, matmul(mat, vec), beta, alpha, "AddmvBackward0")


@scales_first
@computed_in_float32
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _scaled(input, vec1.outer(vec2), beta, alpha, "AddrBackward0")


@autocast_op("lower")
@scales_first
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (16-bit: rounded after each
    batch, as PyTorch's CPU kernel)."""
    low = low_batch_product(input, batch1, batch2, beta, alpha, True, "AddbmmBackward0")
    return low if low is not None else _addbmm(input, batch1, batch2, beta, alpha)


@computed_in_float32
def _addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any) -> Tensor:
    return _scaled(input, batch1.bmm(batch2).sum(0), beta, alpha, "AddbmmBackward0")


@autocast_op("lower")
@scales_first
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` per batch."""
    low = low_batch_product(input, batch1, batch2, beta, alpha, False, "BaddbmmBackward0")
    return low if low is not None else _baddbmm(input, batch1, batch2, beta, alpha)


@computed_in_float32
def _baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any) -> Tensor:
    return _scaled(input, batch1.bmm(batch2), beta, alpha, "BaddbmmBackward0")


@scale_first("value")
@computed_in_float32
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``, in the dtype the three tensors promote to (``value``
    is a scalar of that dtype); not for bool."""
    check_scalar_operand(
        value, arrays_result_type([input._data, tensor1._data, tensor2._data]), low="float32"
    )
    if len({input.dtype, tensor1.dtype, tensor2.dtype}) == 1 and input.dtype in (float32, float64):
        return Addcmul.apply(input, tensor1, tensor2, value)
    prod = tensor2 * tensor1  # (Mul packs its other operand first: a pack hook sees tensor1, tensor2)
    out = input + (prod if value == 1 else prod * value)
    refuse_kernel("addcmul_cpu_out", out, "b")
    return named_node(out, "AddcmulBackward0")


@scale_first("value")
@computed_in_float32
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``; two integer tensors are refused, as in PyTorch."""
    refuse_integer_addcdiv(tensor1, tensor2)
    quotient = tensor1 / tensor2 if value == 1 else tensor1 * value / tensor2  # PyTorch's order
    return named_node(input + quotient, "AddcdivBackward0")


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum of products over the last dims (scalars multiply)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    from .linalg import tensordot

    return tensordot(input, other, ([-1], [-1]))


def kron(input: Tensor, other: Tensor) -> Tensor:
    """Kronecker product."""
    n = max(input.dim(), other.dim())
    a_shape = (1,) * (n - input.dim()) + tuple(input.shape)  # both padded to n dims
    b_shape = (1,) * (n - other.dim()) + tuple(other.shape)
    ea = named_node(input.reshape(tuple(x for s in a_shape for x in (s, 1))), "UnsafeViewBackward0")
    eb = named_node(other.reshape(tuple(x for s in b_shape for x in (1, s))), "UnsafeViewBackward0")
    out = (ea * eb).reshape(tuple(sa * sb for sa, sb in zip(a_shape, b_shape)))
    return named_node(out, "UnsafeViewBackward0")


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """Dot product of two 1-D tensors, the first conjugated (``sum(conj(input) * other)``)."""
    return input.conj().dot(other)


def ger(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product (old name of ``outer``)."""
    return input.outer(vec2)


def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """Product of matrices in the cheapest order (``linalg.multi_dot``); deprecated, with
    PyTorch's warning (once per process)."""
    _native_warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
        "parameters. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:1102.)",
        once=True,
    )
    if len(matrices) == 1:
        return matrices[0]
    return _linalg.multi_dot(matrices)


# ---------------------------------------------------------------------- legacy linear algebra
def det(input: Tensor) -> Tensor:
    """Alias of :func:`disttorch.linalg.det`."""
    return _linalg.det(input)


_SLOGDET = _return_type("slogdet", ("sign", "logabsdet"))


def slogdet(input: Tensor) -> tuple:
    """``(sign, logabsdet)`` as :func:`disttorch.linalg.slogdet` (``torch.return_types.slogdet``)."""
    return _SLOGDET(*_linalg.slogdet(input))


def logdet(input: Tensor) -> Tensor:
    """``log(det(input))`` (NaN for a negative determinant)."""
    if isinstance(input, Tensor):
        refuse_low_precision("logdet", input._data.dtype)
    sign, logabs = _linalg.slogdet(input)
    return logabs + Tensor._make(
        np.where(sign._data < 0, np.nan, np.where(sign._data == 0, -np.inf, 0.0)).astype(logabs._data.dtype)
    )


@autocast_op("fp32")
def inverse(input: Tensor) -> Tensor:
    """Alias of :func:`disttorch.linalg.inv`."""
    return _linalg.inv(input)


@autocast_op("fp32")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """Pseudo-inverse (:func:`disttorch.linalg.pinv` with ``rtol=rcond``)."""
    return _linalg.pinv(input, rtol=rcond)


def matrix_exp(input: Tensor) -> Tensor:
    """Alias of :func:`disttorch.linalg.matrix_exp`."""
    return _linalg.matrix_exp(input)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """Alias of :func:`disttorch.linalg.matrix_power`."""
    return _linalg.matrix_power(input, n)


_QR = _return_type("qr", ("Q", "R"))
_SVD = _return_type("svd", ("U", "S", "V"))


def qr(input: Tensor, some: bool = True) -> tuple:
    """``(Q, R)`` (``some=False`` gives the complete Q); deprecated, with PyTorch's warning
    (once per process)."""
    _native_warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
        "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, "
        "some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete') "
        "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2505.)",
        once=True,
    )
    return _QR(*_linalg.qr(input, "reduced" if some else "complete"))


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> tuple:
    """``(U, S, V)`` — note V, not Vh, as the legacy ``torch.svd``."""
    u, s, vh = _linalg.svd(input, full_matrices=not some)
    if not compute_uv:
        return _SVD(u * 0, s, vh * 0)
    return _SVD(u, s, vh.mT)


@autocast_op("fp32")
def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """:func:`disttorch.linalg.cholesky`; deprecated, with PyTorch's warning (once per process)."""
    _native_warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
        "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\n"
        "and\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
        "This transform will produce equivalent results for all valid (symmetric positive definite) inputs. "
        "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:1765.)",
        once=True,
    )
    return _linalg.cholesky(input, upper=upper)


@autocast_op("fp32")
def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """Solve ``A X = B`` given the Cholesky factor of ``A``."""
    if isinstance(B, Tensor):
        refuse_low_precision("cholesky_solve", B._data.dtype)
    la = _linalg
    low = L.mT if upper else L
    y = la.solve_triangular(low, B, upper=False)
    return la.solve_triangular(low.mT, y, upper=True)


@autocast_op("fp32")
def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``A`` from its Cholesky factor."""
    if isinstance(L, Tensor):
        refuse_low_precision("cholesky_inverse", L._data.dtype)
    eye = Tensor._make(np.broadcast_to(np.eye(L.shape[-1], dtype=L._data.dtype), L._data.shape).copy())
    return cholesky_solve(eye, L, upper)


def lu_unpack(
    LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True
) -> tuple:
    """``(P, L, U)`` from ``linalg.lu_factor``'s result."""
    return _LU_UNPACK(*lu_unpacked(LU_data, LU_pivots))


_LU_UNPACK = _return_type("lu_unpack", ("P", "L", "U"))
_TRIANGULAR_SOLVE = _return_type("triangular_solve", ("solution", "cloned_coefficient"))


def triangular_solve(
    b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False
) -> tuple:
    """``(solution, A)`` of the triangular system ``A X = b`` (legacy argument order)."""
    a = A.mT if transpose else A
    x = _linalg.solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return _TRIANGULAR_SOLVE(x, A.clone())


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """Vandermonde matrix (decreasing powers unless ``increasing``); ``N`` may be 0 or 1
    (``linalg.vander`` refuses them, as PyTorch's)."""
    if N is None:
        return vander(x, x.shape[-1], increasing)
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if N <= 1:
        v = _linalg.vander_powers(x, N)
    else:
        v = _linalg.vander(x, N=N)
    return v if increasing else v.flip(-1)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """Cross product along ``dim`` (the first dim of size 3 when omitted)."""
    if dim is None:
        _native_warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
            "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change "
            "to agree with that of linalg.cross in a future release. (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)",
            once=True,
        )
        sizes = np.broadcast_shapes(input.shape, other.shape)
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return _linalg.cross(input, other, dim=dim)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """``p``-norm of ``input - other`` (PyTorch's node: ``DistBackward0``)."""
    return named_node(_linalg.vector_norm(input - other, p), "DistBackward0")


@autocast_op("fp32")
def cdist(
    x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
) -> Tensor:
    """Pairwise ``p``-norm distances between the rows of ``x1`` (``*, P, M``) and ``x2``
    (``*, R, M``)."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x._data.dtype.kind not in "fV":
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {scalar_type_name(x._data.dtype)}"
            )
    if x1._data.dtype != x2._data.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_type_name(x1._data.dtype)} but found {scalar_type_name(x2._data.dtype)}"
        )
    if x1._data.dtype.itemsize == 2:  # float16, bfloat16: no kernel
        refuse_kernel("cdist", x1, "fV")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p == 2 and _euclid_by_products(x1.shape[-2], x2.shape[-2], compute_mode):
        refuse_tangents("_euclidean_dist", x1, x2)  # (PyTorch's has no forward rule either)
        return named_node(
            _linalg.vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, dim=-1), "CdistBackward0"
        )
    # PyTorch's _cdist_forward: no forward rule, and its backward (_cdist_backward) has no derivative
    refuse_tangents("_cdist_forward", x1, x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:  # a count of differing coordinates: zero gradients, as PyTorch's
        out = flat(np.count_nonzero(diff._data, axis=-1).astype(diff._data.dtype), "CdistBackward0", x1, x2)
    else:
        out = named_node(_linalg.vector_norm(diff, p, dim=-1), "CdistBackward0")
    return reads_inputs(out, "'_cdist_backward'")


def _euclid_by_products(p_rows: int, r_rows: int, compute_mode: str) -> bool:
    """Whether PyTorch computes ``p=2`` distances from matrix products (``_euclidean_dist``,
    composed of differentiable ops) rather than by its ``_cdist_forward`` kernel."""
    if compute_mode == "use_mm_for_euclid_dist":
        return True
    return compute_mode == "use_mm_for_euclid_dist_if_necessary" and (p_rows > 25 or r_rows > 25)


class DiagEmbed(Function):
    """Zeros with the last dim of ``input`` on diagonal ``offset`` of the new dims ``d1``,
    ``d2``; the gradient is that diagonal of ``g``."""

    _raw = True

    @staticmethod
    def forward(ctx, a, offset, d1, d2):
        x = a._data
        m = x.shape[-1]
        n = m + abs(offset)
        out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
        idx = np.arange(m)
        out[..., idx + max(-offset, 0), idx + max(offset, 0)] = x
        ctx.where = offset, d1, d2
        if (d1, d2) == (x.ndim - 1, x.ndim):
            return out
        return np.ascontiguousarray(np.moveaxis(out, (-2, -1), (d1, d2)))  # (PyTorch's is contiguous)

    @staticmethod
    def backward(ctx, g):
        offset, d1, d2 = ctx.where
        return g.diagonal(offset, d1, d2), None, None, None


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Batches of diagonal matrices whose diagonals are the last dim of ``input``, on the
    new dims ``dim1`` and ``dim2`` of the result."""
    nd = input._data.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DiagEmbed.apply(input, int(offset), d1, d2)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A 2-D matrix with the flattened ``input`` on diagonal ``offset``."""
    return diag_embed(input.reshape(-1), offset)


class BlockDiag(Function):
    """The 0-, 1- or 2-D tensors after ``dtype`` as the blocks of a block-diagonal matrix
    (a 0- or 1-D tensor is one row); each gradient is its block of ``g``."""

    _raw = True
    _node_name = "BlockDiagBackward0"

    @staticmethod
    def forward(ctx, dtype, *tensors):
        blocks = [t._data.reshape(1, -1) if t._data.ndim < 2 else t._data for t in tensors]
        out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype)
        r = c = 0
        for b in blocks:
            out[r : r + b.shape[0], c : c + b.shape[1]] = b
            r, c = r + b.shape[0], c + b.shape[1]
        ctx.shapes = [(t._data.shape, b.shape) for t, b in zip(tensors, blocks)]
        return out

    @staticmethod
    def backward(ctx, g):
        grads, r, c = [], 0, 0
        for shape, (rows, cols) in ctx.shapes:
            grads.append(g[r : r + rows, c : c + cols].reshape(shape))
            r, c = r + rows, c + cols
        return (None, *grads)


def block_diag(*tensors: Tensor) -> Tensor:
    """Block-diagonal matrix of 0-, 1- or 2-D tensors."""
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} dimensions"
            )
    rt = arrays_result_type([t._data for t in tensors]) if tensors else None  # (a 0-d tensor does not widen)
    if not tensors:
        return Tensor._make(np.zeros((1, 0), get_default_dtype().numpy))  # (PyTorch's shape)
    return BlockDiag.apply(rt, *tensors)


# ---------------------------------------------------------------------- shapes, stacking, splitting
def atleast_1d(*tensors: Any) -> Any:
    """Tensors viewed with at least 1 dimension."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(t.reshape(1) if t.dim() == 0 else t for t in ts)
    return out[0] if len(out) == 1 and len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def atleast_2d(*tensors: Any) -> Any:
    """Tensors viewed with at least 2 dimensions."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(t.reshape(1, -1) if t.dim() < 2 else t for t in ts)
    return out[0] if len(out) == 1 and len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def atleast_3d(*tensors: Any) -> Any:
    """Tensors viewed with at least 3 dimensions."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    res = []
    for t in ts:
        if t.dim() == 0:
            t = t.reshape(1, 1, 1)
        elif t.dim() == 1:
            t = t.reshape(1, -1, 1)
        elif t.dim() == 2:
            t = t.unsqueeze(-1)
        res.append(t)
    out = tuple(res)
    return out[0] if len(out) == 1 and len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def broadcast_shapes(*shapes: Any) -> tuple:
    """The shape the given shapes broadcast to."""
    from .._tensor import Size

    try:
        return Size(np.broadcast_shapes(*[tuple(s) if not isinstance(s, int) else (s,) for s in shapes]))
    except ValueError:
        raise RuntimeError(
            f"Shape mismatch: objects cannot be broadcast to a single shape: "
            f"{[list(s) if not isinstance(s, int) else [s] for s in shapes]}"
        ) from None


def broadcast_tensors(*tensors: Tensor) -> tuple:
    """The tensors expanded to their common broadcast shape."""
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


def column_stack(tensors: Any) -> Tensor:
    """Stack 1-D/2-D tensors as columns."""
    return cat([t.reshape(-1, 1) if t.dim() < 2 else t for t in _check_join(tensors, "column_stack")], 1)


def row_stack(tensors: Any) -> Tensor:
    """Stack tensors as rows (``vstack``)."""
    return cat(atleast_2d(*_check_join(tensors, "vstack")), 0)


def dstack(tensors: Any) -> Tensor:
    """Stack tensors along the third dim."""
    return cat(atleast_3d(*_check_join(tensors, "dstack")), 2)


def tensor_split(
    input: Tensor,
    indices_or_sections: Any = None,
    dim: int = 0,
    *,
    sections: int | None = None,
    indices: Sequence[int] | None = None,
) -> tuple:
    """Split into ``n`` nearly equal parts, or at the given indices (positionally, or as
    PyTorch's ``sections=``/``indices=`` keywords)."""
    given = [v for v in (indices_or_sections, sections, indices) if v is not None]
    if len(given) != 1:
        raise TypeError(
            "tensor_split() expects exactly one of indices_or_sections, sections or indices, "
            f"got {len(given)}"
        )
    indices_or_sections = given[0]
    n = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        sizes = [n // k + (1 if i < n % k else 0) for i in builtins.range(k)]
        bounds = np.cumsum([0] + sizes)
    else:
        bounds = [0] + [min(max(int(i) if i >= 0 else n + int(i), 0), n) for i in indices_or_sections] + [n]
    return tuple(input.narrow(dim, int(a), max(int(b) - int(a), 0)) for a, b in zip(bounds[:-1], bounds[1:]))


def _directional_split(name: str, input: Tensor, indices_or_sections: Any, dim: int, min_dims: int) -> tuple:
    """``torch.hsplit``/``vsplit``/``dsplit``: ``tensor_split`` along ``dim``, except that a
    number of sections must divide the dimension evenly (PyTorch's errors)."""
    if input.dim() < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, "
            f"but got a tensor with {input.dim()} dimensions!"
        )
    if isinstance(indices_or_sections, int):
        n = input.shape[dim]
        if indices_or_sections == 0 or n % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {n} is not divisible by the split_size {indices_or_sections}!"
            )
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """Split along dim 1 (dim 0 for 1-D tensors) into equal sections or at indices."""
    return _directional_split("hsplit", input, indices_or_sections, 1 if input.dim() > 1 else 0, 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """Split along dim 0 into equal sections or at indices."""
    return _directional_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """Split along dim 2 into equal sections or at indices."""
    return _directional_split("dsplit", input, indices_or_sections, 2, 3)


def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = dims
    if wrap_dim(d0, input.dim()) == wrap_dim(d1, input.dim()):
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0).flip(d1)
    if k == 3:
        return input.transpose(d0, d1).flip(d1)
    return input


def msort(input: Tensor) -> Tensor:
    """Sort along dim 0 (values only)."""
    return input.sort(0, stable=True)[0]


# ---------------------------------------------------------------------- reductions
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> tuple:
    """``(min, max)`` over ``dim`` (all elements when None)."""
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if input.numel() == 0 and (dim is None or input.shape[dim] == 0 or input.dim() == 0):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
        )
    if dim is None:
        dims = tuple(builtins.range(input.dim()))  # (this module defines torch.range)
        return _AMINMAX(input.amin(dims, keepdim=keepdim), input.amax(dims, keepdim=keepdim))
    return _AMINMAX(input.amin(dim, keepdim=keepdim), input.amax(dim, keepdim=keepdim))


_AMINMAX = _return_type("aminmax", ("min", "max"))


_CUM_TYPES = {
    np.maximum: _return_type("cummax", ("values", "indices")),
    np.minimum: _return_type("cummin", ("values", "indices")),
}
kthvalue_type = _return_type("kthvalue", ("values", "indices"))
nanmedian_type = _return_type("nanmedian", ("values", "indices"))
mode_type = _return_type("mode", ("values", "indices"))


def _cum_extreme(input: Tensor, dim: int, ufunc: Any) -> tuple:
    refuse_kernel("cummax_cpu" if ufunc is np.maximum else "cummin_cpu", input, "c")
    if input._data.ndim == 0:
        return scalar_as_vector(_cum_extreme, input, dim, ufunc)
    d = wrap_dim(dim, input._data.ndim)

    def running_index(x: np.ndarray) -> np.ndarray:  # where each slice's running extreme was attained
        positions = np.arange(x.shape[d], dtype=np.int64).reshape((-1,) + (1,) * (x.ndim - d - 1))
        with np.errstate(invalid="ignore"):  # (NaNs: no warning, as in PyTorch)
            attained = x == ufunc.accumulate(x, axis=d)
        if x.dtype.kind in FLOAT_KINDS:  # a NaN is the extreme from there on (the last NaN's index)
            attained |= np.isnan(x)
        return np.maximum.accumulate(np.where(attained, positions, 0), axis=d)

    idx = Tensor._make(scan_along(running_index, input._data, d))
    return _CUM_TYPES[ufunc](input.gather(d, idx), idx)


def cummax(input: Tensor, dim: int) -> tuple:
    """Running maximum along ``dim`` and the index where it was attained."""
    return _cum_extreme(input, dim, np.maximum)


def cummin(input: Tensor, dim: int) -> tuple:
    """Running minimum along ``dim`` and its index."""
    return _cum_extreme(input, dim, np.minimum)


@computed_in_float32
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``dim``, stabilised by the overall maximum (floating and
    complex inputs; 16-bit floats computed in float32, as PyTorch's kernel)."""
    refuse_kernel("logcumsumexp_out_cpu", input, "biu")
    dim = wrap_dim(dim, input._data.ndim)
    x = input._data
    if not x.size:  # nothing to stabilise (and no maximum of nothing)
        return input.exp().cumsum(dim).log()
    m = Tensor._make(np.asarray(ufunc_reduce(np.maximum, x, (dim,) if x.ndim else None, keepdims=True)))
    m = where(Tensor._make(np.isfinite(m._data)), m, 0.0)
    with np.errstate(divide="ignore"):
        return (input - m).exp().cumsum(dim).log() + m


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum treating NaN as 0."""
    no_complex(input, "nansum on CPU does not support complex inputs", RuntimeError)
    x = (
        where(Tensor._make(np.isnan(input._data)), 0.0, input)
        if input._data.dtype.kind in FLOAT_KINDS
        else input
    )
    return named_node(x.sum(dim, keepdim, dtype=dtype), "NansumBackward0")


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean over the non-NaN elements (in ``dtype`` when given: a floating one)."""
    no_complex(input, "nansum on CPU does not support complex inputs", RuntimeError)
    if input._data.dtype.kind in "biu":
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{scalar_type_name(input._data.dtype)}"
        )
    if dtype is not None and dtype.numpy.kind not in "fVc":
        raise RuntimeError(
            "nanmean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {scalar_type_name(dtype.numpy)}"
        )
    s = nansum(input, dim, keepdim, dtype=dtype)
    # PyTorch divides by the int64 count: one count read unrounded, several cast to the dtype
    counted = Tensor._make(~np.isnan(input._data)).sum(dim, keepdim)
    return (s / (counted.to(s.dtype) if counted.numel() > 1 else counted)).to(s.dtype)


@autocast_op("fp32")
def quantile(
    input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Tensor:
    """The ``q``-quantiles along ``dim`` (of all elements when None): each slice sorted, the
    element at rank ``q * (n - 1)`` (between two elements as ``interpolation`` says), NaN for
    a slice with NaN. ``q`` is a number or a 1-D tensor of ``input``'s dtype; its quantiles
    come first in the result. Gradients flow back to the elements picked."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@autocast_op("fp32")
def nanquantile(
    input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Tensor:
    """Quantiles ignoring NaN: the ranks count each slice's numbers only (see :func:`quantile`);
    NaN for a slice of NaN only."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")
#: The longest slice whose ranks the input's float32 holds exactly (PyTorch's limit too).
_QUANTILE_MAX_SLICE = 1 << 24


def _quantile_q(name: str, input: Tensor, q: Any) -> np.ndarray:
    """``q`` checked as PyTorch checks it, as an array of ``input``'s dtype."""
    if isinstance(q, Tensor):
        return q._data
    if isinstance(q, bool) or not isinstance(q, (int, float, np.floating, np.integer)):
        raise TypeError(
            f"{name}() received an invalid combination of arguments: q must be a float or a Tensor, "
            f"got {type(q).__name__}"
        )
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    return np.asarray(q, dtype=input._data.dtype if input._data.dtype.kind == "f" else np.float64)


def _quantile_checks(input: Tensor, qa: np.ndarray, q_is_tensor: bool) -> None:
    """PyTorch's checks, in its order and words."""
    x = input._data
    if x.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if qa.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if qa.dtype != x.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if q_is_tensor and not np.all((qa >= 0) & (qa <= 1)):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan) -> Tensor:
    """PyTorch's definition: sort each slice; turn ``q`` into fractional ranks, in the
    input's dtype (so the numbers are PyTorch's to the bit); pick the elements at the ranks
    below and above, and interpolate with :func:`lerp`."""
    qa = _quantile_q(name, input, q)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )
    _quantile_checks(input, qa, isinstance(q, Tensor))
    x = input._data
    if dim is not None:
        dim = wrap_dim(dim, x.ndim)
    if dim is None or x.ndim == 0:
        out_shape = (1,) * x.ndim if keepdim else ()
        slices = input.reshape(1, -1)
    else:
        out_shape = x.shape[:dim] + ((1,) if keepdim else ()) + x.shape[dim + 1 :]
        slices = input.movedim(dim, -1)
    n = slices.shape[-1]
    if n > _QUANTILE_MAX_SLICE:
        raise RuntimeError("quantile() input tensor is too large")
    values = sort(slices, -1, stable=True).values  # NaN last
    ranks = _quantile_ranks(values._data, qa.reshape(-1), ignore_nan, interpolation)
    below = ranks.astype(np.int64)
    out = gather(values, -1, Tensor._make(below))
    if interpolation in ("linear", "midpoint"):
        weight = np.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - np.floor(ranks)
        above = gather(values, -1, Tensor._make(np.ceil(ranks).astype(np.int64)))
        out = lerp(out, above, Tensor._make(weight))
    out, shape = out if qa.ndim == 0 else out.movedim(-1, 0), qa.shape + out_shape + (1,)
    out = out if tuple(out.shape) == shape else out.reshape(shape)
    return named_node(out.squeeze(-1), "SqueezeBackward4")  # (PyTorch's last op)


def _quantile_ranks(values: np.ndarray, q: np.ndarray, ignore_nan: bool, interpolation: str) -> np.ndarray:
    """Each slice's fractional rank of each ``q`` (the last axis), in ``values``' dtype:
    ``q * (n - 1)`` over the slice's numbers (``nanquantile``; 0 when it has none) or over
    all its elements, the last for a slice with NaN (``quantile``, whose result is then NaN)."""
    nan = np.isnan(values)
    if ignore_nan:
        count = (~nan).sum(-1, keepdims=True).astype(values.dtype)
        ranks = np.maximum(q * (count - 1), 0)
    else:
        last = values.shape[-1] - 1
        ranks = np.where(nan.any(-1, keepdims=True), values.dtype.type(last), q * values.dtype.type(last))
    if interpolation == "lower":
        return np.floor(ranks)
    if interpolation == "higher":
        return np.ceil(ranks)
    if interpolation == "nearest":
        return np.round(ranks)  # half to even, as PyTorch's round
    return ranks


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """Median ignoring NaN (the lower of the two middle values, as PyTorch)."""
    refuse_kernel("median_cpu" if dim is None else "median_out", input, "bc")
    x = input._data
    if dim is not None and x.ndim == 0:
        return scalar_as_vector(nanmedian, input, dim, keepdim)
    if dim is None:  # the flattened tensor as one slice (NaN when empty)
        if x.size == 0:
            return Tensor._make(np.asarray(np.nan, dtype=x.dtype))
        return nanmedian(input.reshape(-1), 0).values
    dim = wrap_dim(dim, x.ndim)

    def lower_median(a: np.ndarray) -> np.ndarray:  # each slice's index, kept dim
        pos = np.maximum(((~np.isnan(a)).sum(axis=dim, keepdims=True) - 1) // 2, 0)
        key = a.astype(np.float32) if a.dtype.kind == "V" else a  # NumPy's own floats sort NaN last
        return np.take_along_axis(np.argsort(key, axis=dim, kind="stable"), pos, axis=dim)

    idx = reduce_along(lower_median, x, (dim,), np.intp)  # slices split over the op's threads
    index = Tensor._make(idx.astype(np.int64))
    vals = gather(input, dim, index)  # NaN where a slice is all NaN; the gradient goes there
    return nanmedian_type(vals, index) if keepdim else nanmedian_type(vals.squeeze(dim), index.squeeze(dim))


def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Trapezoid-rule integral of ``y`` along ``dim`` (spacing ``dx`` or sample points ``x``);
    0 over an empty dim."""
    n = y.shape[dim]
    if n == 0:
        return y.sum(dim) * 0
    if x is not None:
        a, b = y.narrow(dim, 1, n - 1), y.narrow(dim, 0, n - 1)
        xd = x.narrow(dim if x.dim() > 1 else 0, 1, n - 1) - x.narrow(dim if x.dim() > 1 else 0, 0, n - 1)
        return ((a + b) * xd).sum(dim) / 2
    ends = named_node(
        (y.select(dim, 0) + y.select(dim, -1)) * 0.5, "MulBackward1"
    )  # PyTorch's formula and nodes
    return named_node((y.sum(dim) - ends) * (1 if dx is None else dx), "MulBackward1")


trapz = trapezoid


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """Running trapezoid-rule integral along ``dim`` (``n - 1`` values; none for an empty dim)."""
    n = y.shape[dim]
    if n == 0:
        return _float(y) * 1
    a, b = y.narrow(dim, 1, n - 1), y.narrow(dim, 0, n - 1)
    if x is not None:
        xd = x.narrow(dim if x.dim() > 1 else 0, 1, n - 1) - x.narrow(dim if x.dim() > 1 else 0, 0, n - 1)
        return ((a + b) * xd / 2).cumsum(dim)
    return ((a + b) * ((1 if dx is None else dx) / 2)).cumsum(dim)


def cov(input: Tensor, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Tensor:
    """Covariance of the variables in the rows of ``input`` (observations in columns)."""
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions"
        )
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    x = _float(x)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        mean = x.mean(1, keepdim=True)
        xc = x - mean
        c = matmul(xc, xc.mT.conj()) / _cov_norm(n - correction)
    else:
        wsum = w.sum()
        mean = (x * w).sum(1, keepdim=True) / wsum
        xc = x - mean
        if aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * (w * aweights.to(x.dtype)).sum() / wsum
        c = matmul(xc * w, xc.mT.conj()) / _cov_norm(norm)
    return c.squeeze() if input.dim() < 2 else c


def _cov_norm(norm: Any) -> Any:
    """``cov``'s divisor: 0 where no degree of freedom is left, with PyTorch's warning."""
    if float(norm) > 0:
        return norm
    _native_warnings.warn(
        "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
        "observations. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Correlation.cpp:129.)"
    )
    return norm.detach() * 0 + 0.0 if isinstance(norm, Tensor) else 0  # (+0, as PyTorch's zero_())


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of ``input``."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = sqrt(c.diagonal().real if c._data.dtype.kind == "c" else c.diagonal())
    r = c / d.unsqueeze(1) / d.unsqueeze(0)
    if r._data.dtype.kind == "c":  # complex: the real and imaginary parts each clipped to [-1, 1]
        return _complex.complex(clamp(r.real, -1, 1), clamp(r.imag, -1, 1))
    return clamp(r, -1, 1)


# ---------------------------------------------------------------------- creation
def _dt(dtype: Any) -> np.dtype:
    return to_numpy(dtype) if dtype is not None else get_default_dtype().numpy


def logspace(
    start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None, **kw: Any
) -> Tensor:
    """``base ** linspace(start, end, steps)``."""
    dt = _dt(dtype)
    if steps > 1:  # (one value needs no kernel: a bool one too)
        check_range_dtype("logspace_cpu", dt)
    if dt.kind in "iu":
        start, end = integer_ends(start, end, dt)
    with np.errstate(over="ignore", invalid="ignore"):
        t = Tensor._make(np.logspace(start, end, steps, base=base).astype(dt))
    return t.requires_grad_(True) if kw.get("requires_grad") else t


def scalar_tensor(s: Any, *, dtype: Any = None, **kw: Any) -> Tensor:
    """A 0-dim tensor holding ``s`` (a number beyond ``dtype``'s range is PyTorch's RuntimeError)."""
    dt = _dt(dtype)
    check_scalar_operand(s, dt, low="inf")  # (a 16-bit float takes inf, as PyTorch's)
    with np.errstate(over="ignore"):
        return Tensor._make(np.asarray(checked_scalar(s, dt) if dt.kind in "iu" else s, dtype=dt))


def _window(values: np.ndarray, dtype: Any, requires_grad: bool) -> Tensor:
    t = Tensor._make(values.astype(_dt(dtype)))
    return t.requires_grad_(True) if requires_grad else t


def _cosine_window(n: int, periodic: bool, coeffs: tuple, dtype: Any, requires_grad: bool) -> Tensor:
    if n == 0:
        return _window(np.zeros(0), dtype, requires_grad)
    if n == 1:
        return _window(np.ones(1), dtype, requires_grad)
    m = n if periodic else n - 1
    k = np.arange(n)
    w = sum(((-1) ** i) * c * np.cos(2 * math.pi * i * k / m) for i, c in enumerate(coeffs))
    return _window(w, dtype, requires_grad)


def hann_window(
    window_length: int, periodic: bool = True, *, dtype: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    """Hann window."""
    return _cosine_window(window_length, periodic, (0.5, 0.5), dtype, requires_grad)


def hamming_window(
    window_length: int,
    periodic: bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype: Any = None,
    requires_grad: bool = False,
    **kw: Any,
) -> Tensor:
    """Hamming window ``alpha - beta cos(2 pi k / N)``."""
    return _cosine_window(window_length, periodic, (alpha, beta), dtype, requires_grad)


def blackman_window(
    window_length: int, periodic: bool = True, *, dtype: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    """Blackman window."""
    return _cosine_window(window_length, periodic, (0.42, 0.5, 0.08), dtype, requires_grad)


def bartlett_window(
    window_length: int, periodic: bool = True, *, dtype: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    """Bartlett (triangular) window."""
    n = window_length
    if n <= 1:
        return _window(np.ones(n), dtype, requires_grad)
    m = n if periodic else n - 1
    k = np.arange(n)
    return _window(1 - np.abs(2 * k / m - 1), dtype, requires_grad)


def kaiser_window(
    window_length: int,
    periodic: bool = True,
    beta: float = 12.0,
    *,
    dtype: Any = None,
    requires_grad: bool = False,
    **kw: Any,
) -> Tensor:
    """Kaiser window with shape parameter ``beta``."""
    n = window_length
    if n <= 1:
        return _window(np.ones(n), dtype, requires_grad)
    m = n if periodic else n - 1
    k = np.arange(n)
    w = _i0(beta * np.sqrt(np.clip(1 - (2 * k / m - 1) ** 2, 0, None))) / _i0(np.asarray(beta))
    return _window(w, dtype, requires_grad)


# ---------------------------------------------------------------------- predicates and dtype info
def is_nonzero(input: Tensor) -> bool:
    """The truth value of a one-element tensor."""
    if input._data.size != 1:
        raise RuntimeError(
            "Boolean value of Tensor with more than one value is ambiguous"
            if input._data.size
            else "Boolean value of Tensor with no values is ambiguous"
        )
    return bool(input._data.reshape(()))


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:
    """Whether the dtype is signed."""
    return input.dtype.is_signed


def promote_types(type1: _dtype_cls, type2: _dtype_cls) -> _dtype_cls:
    """The dtype both types promote to."""
    from .._dtype import promote_types as _p

    return _p(type1, type2)


def can_cast(from_: _dtype_cls, to: _dtype_cls) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` (no float to integer, no
    non-bool to bool)."""
    ka, kb = from_._kind, to._kind
    return ka <= kb


def unravel_index(indices: Any, shape: Any) -> tuple:
    """Flat indices to coordinate tensors of ``shape``."""
    idx = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError("expected 'indices' to be integer dtype, but got " + str(idx.dtype))
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return tuple(Tensor._make(np.asarray(a, dtype=np.int64)) for a in np.unravel_index(idx, shape))


# ---------------------------------------------------------------------- searching and counting
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """Index of the bucket of each element (``boundaries`` sorted, 1-D)."""
    x = input._data if isinstance(input, Tensor) else np.asarray(input)
    _no_bool_search(boundaries._data, x)
    out = _insertion(sortable(boundaries._data), sortable(x), "right" if right else "left")
    return Tensor._make(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))


def _no_bool_search(seq: np.ndarray, x: np.ndarray) -> None:
    """PyTorch's searchsorted has no kernel for bools (both) or complex numbers (either)."""
    bad = next((d for d in (x.dtype, seq.dtype) if d.kind == "c"), None)
    if bad is None and seq.dtype.kind == "b" and x.dtype.kind == "b":
        bad = seq.dtype
    if bad is not None:
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for '{scalar_type_name(bad)}'")


def _insertion(seq: np.ndarray, x: np.ndarray, side: str) -> np.ndarray:
    """``np.searchsorted`` of 1-D ``seq`` where NaNs land as in PyTorch's binary search, whose
    every comparison with a NaN sends it right: a NaN value goes after every element, and
    with NaNs in ``seq`` the search is PyTorch's own (NumPy orders NaN last instead)."""
    if seq.dtype.kind == "f" and seq.size and np.isnan(seq).any():
        return _binary_search(seq, np.asarray(x), side == "right")
    out = np.searchsorted(seq, x, side=side)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        if nan.any():
            out = np.where(nan, seq.shape[-1], out)
    return out


def _binary_search(seq: np.ndarray, x: np.ndarray, right: bool) -> np.ndarray:
    """PyTorch's lower (upper, with ``right``) bound loop, run for every value of ``x`` at once."""
    start, end = np.zeros(x.shape, np.int64), np.full(x.shape, seq.shape[-1], np.int64)
    while True:
        active = start < end
        if not active.any():
            return start
        mid = start + ((end - start) >> 1)
        value = seq[np.minimum(mid, seq.shape[-1] - 1)]
        with np.errstate(invalid="ignore"):
            go_right = ~(value > x) if right else ~(value >= x)
        start = np.where(active & go_right, mid + 1, start)
        end = np.where(active & ~go_right, mid, end)


def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Any = None,
) -> Tensor:
    """Insertion indices of ``input`` into the innermost dim of ``sorted_sequence``."""
    sd = "right" if (side == "right" or right) else "left"
    x = input._data if isinstance(input, Tensor) else np.asarray(input)
    _check_search_shapes(sorted_sequence._data.shape, x.shape)
    _no_bool_search(sorted_sequence._data, x)
    seq, x = sortable(sorted_sequence._data), sortable(x)
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._data, -1)
    if seq.ndim == 1:
        out = _insertion(seq, x, sd)
    else:
        rows = math.prod(seq.shape[:-1])  # (not -1: a row may be empty)
        flat_s, flat_x = seq.reshape(rows, seq.shape[-1]), x.reshape(rows, x.shape[-1])
        found = [_insertion(s, v, sd) for s, v in zip(flat_s, flat_x)]
        out = np.stack(found).reshape(x.shape) if found else np.zeros(x.shape, np.int64)
    return Tensor._make(np.asarray(out, dtype=np.int32 if out_int32 else np.int64))


def _check_search_shapes(boundaries: tuple, values: tuple) -> None:
    """PyTorch's checks of ``searchsorted``'s shapes: 1-D boundaries, or boundaries whose
    leading dims are the values' (a scalar value only into 1-D boundaries)."""
    if not values and len(boundaries) != 1:
        raise RuntimeError(
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, "
            f"but we got boundaries tensor dim({len(boundaries)}) and input value's dim(0) numel(1)"
        )
    if not boundaries:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension"
        )
    if len(boundaries) != 1 and (len(values) != len(boundaries) or values[:-1] != boundaries[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(boundaries)} and input "
            f"value tensor {list(values)}"
        )


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Count (or sum ``weights`` of) each non-negative integer value."""
    x = input._data
    refuse_kernel("bincount_cpu", input, "bfVc")
    if x.ndim != 1 or x.dtype.kind not in "iu" or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = None if weights is None else weights._data
    out = np.bincount(x, w, minlength)
    if w is None:
        out = out.astype(np.int64)
    elif w.dtype == np.float32:
        out = out.astype(np.float32)
    return Tensor._make(out)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Histogram with ``bins`` equal bins over ``[min, max]`` (data range if both are 0)."""
    no_complex(input, "\"aminmax_cpu\" not implemented for 'ComplexFloat'")
    refuse_kernel("histogram_cpu", input, "biu")
    x = input._data
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    lo, hi = (float(x.min()), float(x.max())) if min == 0 and max == 0 and x.size else (min, max)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    h, _ = np.histogram(x, bins=bins, range=(lo, hi))
    return Tensor._make(h.astype(x.dtype))


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    """The ``k``-th smallest value along ``dim`` (NaN the largest) and its index: where the
    value occurs more than once in a slice, the one PyTorch's quickselect leaves there
    (``kernels/torch_select.py``)."""
    if input._data.ndim == 0:
        return scalar_as_vector(lambda x, d: kthvalue(x, k, d), input, dim)
    x = input._data
    dim = wrap_dim(dim, x.ndim)
    if x.shape[dim] == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
    if not 1 <= k <= x.shape[dim]:
        raise RuntimeError("kthvalue(): selected number k out of range for dimension " + str(dim))
    refuse_kernel("kthvalue_cpu", input, "bc")  # (after k's range, as PyTorch checks)

    def kth_index(a: np.ndarray) -> np.ndarray:  # each slice's index, kept dim
        a = sortable(a)  # (bfloat16 as float32: NaN last)
        idx = np.take(np.argsort(a, axis=dim, kind="stable"), [k - 1], axis=dim)
        kth = np.take_along_axis(a, idx, axis=dim)
        same = a == kth
        if a.dtype.kind in "fcV":
            same |= np.isnan(a) & np.isnan(kth)
        tied = np.argwhere(np.moveaxis(same.sum(axis=dim, keepdims=True) > 1, dim, -1)[..., 0])
        rows, out = np.moveaxis(a, dim, -1), np.moveaxis(idx, dim, -1)  # (views)
        for at in map(tuple, tied):
            out[at] = kthvalue_index(rows[at], k)
        return idx

    idx = reduce_along(kth_index, x, (dim,), np.intp)  # slices split over the op's threads
    index = Tensor._make(idx.astype(np.int64))
    vals = gather(input, dim, index)
    vals = vals if keepdim else vals.squeeze(dim)
    return kthvalue_type(named_node(vals, "KthvalueBackward0"), index if keepdim else index.squeeze(dim))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> tuple:
    """Most frequent value along ``dim`` (the smallest on ties) and the index PyTorch's CPU
    kernel gives: it sorts the slice with the C++ library's unstable sort and ``<`` (under
    which a NaN is neither before nor after anything) and takes the last element of the
    first longest run of equal values (a NaN is a run of its own). The slices with ties or
    NaNs are sorted by a replay of that sort (:func:`..kernels.torch_topk.mode_order`)."""
    refuse_kernel("mode_cpu", input, "c")
    if input._data.ndim == 0:
        return scalar_as_vector(mode, input, dim)
    x = input._data
    d = wrap_dim(dim, x.ndim)
    if x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    order = np.argsort(sortable(x), axis=d, kind="stable")
    if x.shape[d] and replays(x.shape[d]) and x.dtype.kind in "fiubV":
        nans = np.moveaxis(np.isnan(x), d, -1).any(axis=-1) if x.dtype.kind in "fV" else None
        _replay_tied(x, order, order, d, x.shape[d], mode_order, also=nans)
    ordered = np.moveaxis(np.take_along_axis(x, order, axis=d), d, -1)
    rows, flat_order = ordered.reshape(-1, x.shape[d]), np.moveaxis(order, d, -1).reshape(-1, x.shape[d])
    idx = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):  # one pass per slice (rows, not elements)
        ends = np.append(np.flatnonzero(row[1:] != row[:-1]), row.size - 1)  # each run's last place
        lengths = np.diff(ends, prepend=-1)
        idx[r] = flat_order[r, ends[np.argmax(lengths)]]  # the first longest run: the smallest value
    index = Tensor._make(np.expand_dims(idx.reshape(ordered.shape[:-1]), d))
    vals = gather(input, d, index)  # the gradient goes to the chosen element
    vals = vals if keepdim else vals.squeeze(d)
    return mode_type(named_node(vals, "ModeBackward0"), index if keepdim else index.squeeze(d))


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``."""
    return other - input * alpha


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """Alias of :func:`disttorch.special.gammainc`."""
    return Gammainc.apply(input, other)


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """Alias of :func:`disttorch.special.gammaincc`."""
    return Gammaincc.apply(input, other)


def frobenius_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """Frobenius norm over ``dim``."""
    return _linalg.vector_norm(input, 2, dim, keepdim)


def nuclear_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """Nuclear norm (sum of singular values) over ``dim``."""
    return _linalg.matrix_norm(input, "nuc", tuple(dim), keepdim)


def repeat_interleave(
    input: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """Repeat each element (along ``dim``, of the flattened input when None) ``repeats`` times."""
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        r = input._data
        return Tensor._make(np.repeat(np.arange(r.size), r).astype(r.dtype))  # (repeats' dtype)
    x = input if dim is not None else input.reshape(-1)
    d = 0 if dim is None else dim % x.dim()
    reps = repeats._data if isinstance(repeats, Tensor) else np.asarray(repeats)
    if reps.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if reps.ndim == 1 and reps.size != x.shape[d]:
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got repeats.size(0) = {reps.size} "
            f"and input.size({d}) = {x.shape[d]}"
        )
    if (reps < 0).any():
        raise RuntimeError(
            "repeats can not be negative" if isinstance(repeats, Tensor) else "Repeats must be non-negative"
        )
    idx = np.repeat(np.arange(x.shape[d]), np.broadcast_to(reps, (x.shape[d],)))
    return x.index_select(d, Tensor._make(idx.astype(np.int64)))


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    """Collapse runs of equal consecutive elements (of the flattened input, or slices along ``dim``)."""
    x = input._data
    if dim is None:
        flat = x.reshape(-1)
        start = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        vals = flat[start]
    else:
        moved = np.moveaxis(x, unique_axis(x, dim), 0)
        rest = int(np.prod(moved.shape[1:]))  # (not -1: one slice leaves no differences to size it)
        diff = (moved[1:] != moved[:-1]).reshape(moved.shape[0] - 1, rest).any(1) if moved.shape[0] else []
        start = np.concatenate([[True], diff]) if moved.shape[0] else np.zeros(0, bool)
        vals = np.moveaxis(moved[start], 0, dim)
    out = [no_derivative(np.asarray(vals), "unique_consecutive", input, declared=True)]
    if return_inverse:
        inv = np.cumsum(start) - 1
        out.append(Tensor._make(inv.reshape(x.shape if dim is None else (-1,)).astype(np.int64)))
    if return_counts:
        pos = np.flatnonzero(start)
        out.append(Tensor._make(np.diff(np.append(pos, start.size)).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """All combinations of elements of the 1-D ``tensors`` (rows of the result)."""
    if len(tensors) == 1:
        return tensors[0]
    grids = np.meshgrid(*[np.arange(t.shape[0]) for t in tensors], indexing="ij")
    cols = [t.index_select(0, Tensor._make(g.reshape(-1).astype(np.int64))) for t, g in zip(tensors, grids)]
    return stack(cols, 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Length-``r`` combinations of the elements of a 1-D tensor (rows of the result)."""
    import itertools

    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(builtins.range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if idx.size == 0:
        return Tensor._make(np.zeros((0, r) if r else (0,), dtype=input._data.dtype))
    return stack([input.index_select(0, Tensor._make(idx[:, j].copy())) for j in builtins.range(r)], 1)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Rescale each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` to that norm."""
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    others = tuple(d for d in builtins.range(input.dim()) if d != dim % input.dim())
    norms = _linalg.vector_norm(input, p, others, keepdim=True)
    scale = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    # row-major whatever ``input``'s strides, as PyTorch's (its kernel allocates the result)
    return named_node((input * scale).contiguous(), "RenormBackward0", (input,))


# ---------------------------------------------------------------------- in-place forms
_WITH_INPLACE = (
    "acosh",
    "asinh",
    "atanh",
    "arccosh",
    "arcsinh",
    "arctanh",
    "deg2rad",
    "rad2deg",
    "copysign",
    "frac",
    "fix",
    "heaviside",
    "ldexp",
    "gcd",
    "lcm",
    "nextafter",
    "addmv",
    "addr",
    "addbmm",
    "baddbmm",
    "renorm",
    "lgamma",
    "digamma",
    "erfinv",
    "erfc",
    "i0",
    "sinc",
    "logit",
    "xlogy",
    "exp2",
    "mvlgamma",
    "polygamma",
    "igamma",
    "igammac",
    "erf",
    "sinh",
    "cosh",
    "acos",
    "asin",
    "atan",
    "arccos",
    "arcsin",
    "arctan",
    "atan2",
    "arctan2",
    "hypot",
    "log2",
    "log10",
    "absolute",
    "nan_to_num",
    "cumsum",
    "cumprod",
    "tril",
    "triu",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "floor_divide",
    "addmm",
)
_INPLACE_METHODS = {n + "_": _method_inplace(n) for n in _WITH_INPLACE}
_INPLACE_METHODS.update({n + "_": _restride_inplace(n) for n in _RESTRIDE})


def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place ``float_power``: ``self`` must already have the result's dtype (float64, or
    complex128 when either operand is complex)."""
    complex_ = self.is_complex() or isinstance(exponent, complex)
    complex_ = complex_ or (isinstance(exponent, Tensor) and exponent.is_complex())
    want = np.dtype(np.complex128 if complex_ else np.float64)
    if self._data.dtype != want:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {scalar_type_name(self._data.dtype)} but the "
            f"operation's result requires dtype {scalar_type_name(want)}"
        )
    return _method_inplace("float_power")(self, exponent)


_INPLACE_METHODS["float_power_"] = _float_power_


def _fn_inplace(name: str) -> Any:
    def f(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return getattr(input, name)(*args, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"In-place ``{name}`` (``input.{name}(...)``)."
    return f


_TOP_INPLACE = (
    "acos_",
    "acosh_",
    "arccos_",
    "arccosh_",
    "arcsin_",
    "arcsinh_",
    "arctan_",
    "arctanh_",
    "asin_",
    "asinh_",
    "atan_",
    "atanh_",
    "cosh_",
    "sinh_",
    "deg2rad_",
    "rad2deg_",
    "erf_",
    "erfc_",
    "exp2_",
    "fix_",
    "frac_",
    "gcd_",
    "lcm_",
    "i0_",
    "ldexp_",
    "log10_",
    "log2_",
    "logit_",
    "nan_to_num_",
    "sinc_",
    "xlogy_",
    "addmv_",
    "as_strided_",
)
for _n in _TOP_INPLACE:
    globals()[_n] = _fn_inplace(_n)
__all__ += list(_TOP_INPLACE)

TENSOR_OPERATORS = dict(_INPLACE_METHODS)


# ---------------------------------------------------------------------- splitting aliases, scatters
def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    """Split into pieces of the given sizes along ``dim``."""
    return split(input, list(split_sizes), dim)


def unsafe_split(input: Tensor, split_size: Any, dim: int = 0) -> tuple:
    """Alias of ``split``."""
    return input.split(split_size, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Alias of ``chunk``."""
    return input.chunk(chunks, dim)


unsafe_split_with_sizes = split_with_sizes


def type_as(input: Tensor, other: Tensor) -> Tensor:
    return input.to(other.dtype)


def sum_to_size(input: Tensor, *sizes: Any, size: Any = None) -> Tensor:
    """Sum broadcast dims so the result has ``size`` (given by position or as ``size=``)."""
    if size is not None and sizes:
        raise TypeError("sum_to_size() got multiple values for argument 'size'")
    size = (size,) if size is not None else sizes
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    lead = input.dim() - len(size)
    out = input.sum(tuple(builtins.range(lead))) if lead > 0 else input
    dims = tuple(i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1)
    return out.sum(dims, keepdim=True) if dims else out


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` occurs in ``test_elements``."""
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    for d in (a.dtype, b.dtype):
        if d.kind in "bc":
            raise RuntimeError(f"Unsupported input type encountered for isin(): {scalar_type_name(d)}")
    return Tensor._make(np.isin(a, b, invert=invert))


def _scatter_into(input: Tensor, index: Any, src: Tensor) -> Tensor:
    out = input.clone()
    out[index] = src
    return out


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``index`` of ``dim``."""
    return _scatter_into(input, (slice(None),) * (dim % input.dim()) + (index,), src)


def slice_scatter(
    input: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
) -> Tensor:
    """A copy of ``input`` with ``src`` written into the slice ``start:end:step`` of ``dim``."""
    return _scatter_into(input, (slice(None),) * (dim % input.dim()) + (slice(start, end, step),), src)


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written on the diagonal of ``dim1``/``dim2`` (of any
    two dims, square or not): ``src`` gets that diagonal's gradient, ``input`` the rest."""
    out = input.clone()
    out.diagonal(offset, dim1, dim2).copy_(src)
    return named_node(out, "DiagonalScatterBackward0")


@autocast_op("promote")
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the slices ``index`` of ``dim`` replaced by ``source``."""
    require_source_dtype("index_copy", input, source)
    d, idx = _checked_vector_index(input, dim, index, "index_copy")
    check_index_source("index_copy", input._data.shape, d, idx.size, source._data.shape)
    if input._data.ndim == 0:  # (one slice: a 1-element vector's, as PyTorch reads a scalar)
        return _scatter_into(input.reshape(1), Tensor._make(idx.reshape(1)), source.reshape(1)).reshape(())
    return _scatter_into(input, (slice(None),) * d + (index,), source)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` with the ``True`` positions of ``mask`` filled from ``source`` in order."""
    require_source_dtype("masked_scatter", input, source)
    try:  # the mask may widen the input too (out of place), as PyTorch's
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        raise broadcast_error(input._data.shape, mask._data.shape) from None
    if shape != input._data.shape:
        input = input.expand(shape)
    m = np.broadcast_to(mask._data, shape)
    n = int(m.sum())
    if source.numel() < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return _scatter_into(input, Tensor._make(m.copy()), source.reshape(-1)[:n])


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source`` written at the flat positions ``index``."""
    require_source_dtype("put", input, source)
    flat = input.reshape(-1)
    if accumulate and index.numel() and int(index.min()) < 0:  # count from the end, as put_ without it
        index = index + (index < 0).long() * flat.numel()
    out = (
        flat.index_add(0, index.reshape(-1), source.reshape(-1))
        if accumulate
        else _scatter_into(flat, index.reshape(-1), source.reshape(-1))
    )
    return named_node(out.reshape(input.shape), "PutBackward0")


def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """``input << other`` for integers (dtypes promoted as for ``add``: a Python int or a
    0-dim tensor does not widen a tensor's dtype)."""
    check_kernel("bitwise_left_shift", input, other)
    return Tensor._make(binary(np.left_shift, input, other))


def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """``input >> other`` for integers (dtypes promoted as for ``add``)."""
    check_kernel("bitwise_right_shift", input, other)
    return Tensor._make(binary(np.right_shift, input, other))


def histogram(
    input: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None, density: bool = False
) -> tuple:
    """``(hist, bin_edges)`` of ``input`` (``hist`` has no derivative: backward through it
    raises, as PyTorch's)."""
    b = bins._data if isinstance(bins, Tensor) else bins
    if isinstance(b, int) and b <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension 0")
    h, edges = np.histogram(
        input._data, bins=b, range=range, weights=None if weight is None else weight._data, density=density
    )
    hist = no_derivative(h.astype(input._data.dtype), "histogram", input, weight)
    return _HISTOGRAM(hist, Tensor._make(edges.astype(input._data.dtype)))


_HISTOGRAM = _return_type("histogram", ("hist", "bin_edges"))
_HISTOGRAMDD = _return_type("histogramdd", ("hist", "bin_edges"))


def histogramdd(
    input: Tensor, bins: Any = 10, *, range: Any = None, weight: Any = None, density: bool = False
) -> tuple:
    """``(hist, bin_edges)`` of the rows of a 2-D ``input`` (one dim per column)."""
    rng = None if range is None else list(zip(range[::2], range[1::2]))
    h, edges = np.histogramdd(
        input._data, bins=bins, range=rng, weights=None if weight is None else weight._data, density=density
    )
    dt = input._data.dtype
    return _HISTOGRAMDD(Tensor._make(h.astype(dt)), tuple(Tensor._make(e.astype(dt)) for e in edges))


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """Indices of the non-zeros, cut or padded with ``fill_value`` to ``size`` rows."""
    nz = np.argwhere(input._data)[:size]
    pad = np.full((size - nz.shape[0], input._data.ndim), fill_value, dtype=np.int64)
    return Tensor._make(np.concatenate([nz.astype(np.int64), pad]))


def fill(input: Tensor, value: Any) -> Tensor:
    """A tensor like ``input`` filled with ``value`` (zero gradient to ``input``)."""
    return flat(np.full(input._data.shape, _t(value)._data, dtype=input._data.dtype), "FillBackward0", input)


def range(
    start: float = 0, end: float | None = None, step: float = 1, *, dtype: Any = None, **kw: Any
) -> Tensor:
    """Deprecated inclusive ``arange``: ``start, start + step, ..., end`` (numbers or
    one-element tensors; warns, as PyTorch)."""
    _native_warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior "
        "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
        "values in [start, end)."
    )
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    check_range_dtype("range_cpu", _dt(dtype), complex_too=True)
    return Tensor._make((start + step * np.arange(n)).astype(_dt(dtype)))


def _removed(name: str, advice: str) -> Any:
    """A function PyTorch removed in 1.9 that remains to raise its error (``advice`` follows the
    first sentence)."""

    def f(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed.{advice}")

    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Removed from PyTorch: raises its error, which names the replacement in ``torch.linalg``."
    return f


solve = _removed(
    "solve",
    " `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
    "reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, which "
    "can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
    "replaced with:\nX = torch.linalg.solve(A, B)",
)
lstsq = _removed(
    "lstsq",
    " `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
    "arguments and does not return the QR decomposition in the returned tuple (although it returns other "
    "information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe "
    "returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
    "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
    "returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
    "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution",
)
eig = _removed(
    "eig",
    " `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
    "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
    "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
    "L_complex, V_complex = torch.linalg.eig(A)",
)
symeig = _removed(
    "symeig",
    " The default behavior has changed from using the upper triangular portion of the matrix by default to "
    "using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
    "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, "
    "eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
)
matrix_rank = _removed(
    "matrix_rank",
    "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
    "`torch.linalg.matrix_rank()` to 'hermitian'.",
)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """``(LU, pivots)`` (and ``infos``) of ``linalg.lu_factor``; deprecated, with PyTorch's
    warning (once per process)."""
    _native_warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
        "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
        "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
        "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
        "torch.linalg.lu_factor_ex(A, compute_pivots) (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2073.)",
        once=True,
    )
    r = _linalg.lu_factor_ex(A, pivot=pivot)
    return (r.LU, r.pivots, r.info) if get_infos else (r.LU, r.pivots)


@autocast_op("fp32")
def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """Legacy ``lu_solve(b, LU, pivots)`` (:func:`disttorch.linalg.lu_solve`)."""
    return _linalg.lu_solve(LU_data, LU_pivots, b)


__all__ += [
    "bitwise_left_shift",
    "bitwise_right_shift",
    "diagonal_scatter",
    "eig",
    "fill",
    "histogram",
    "histogramdd",
    "index_copy",
    "isin",
    "lstsq",
    "lu",
    "lu_solve",
    "masked_scatter",
    "nonzero_static",
    "put",
    "range",
    "select_scatter",
    "slice_scatter",
    "solve",
    "split_with_sizes",
    "symeig",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
]
TENSOR_METHODS += (
    "split_with_sizes",
    "unsafe_split",
    "unsafe_chunk",
    "unsafe_split_with_sizes",
    "type_as",
    "sum_to_size",
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter",
    "index_copy",
    "masked_scatter",
    "put",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "histogram",
    "nonzero_static",
    "solve",
    "lstsq",
    "eig",
    "symeig",
    "lu",
    "lu_solve",
)
TENSOR_OPERATORS["bernoulli"] = lambda self, *args, **kw: _random.bernoulli(self, *args, **kw)
TENSOR_OPERATORS["multinomial"] = lambda self, *args, **kw: _random.multinomial(self, *args, **kw)
for _n in ("index_copy", "masked_scatter", "put", "bitwise_left_shift", "bitwise_right_shift"):
    TENSOR_OPERATORS[_n + "_"] = _method_inplace(_n)

TENSOR_OPERATORS.update(
    {
        "__lshift__": bitwise_left_shift,
        "__rlshift__": lambda self, other: bitwise_left_shift(other, self),
        "__rshift__": bitwise_right_shift,
        "__rrshift__": lambda self, other: bitwise_right_shift(other, self),
    }
)
# augmented assignments work in place (a view's base sees them), as PyTorch's do
for _dunder, _n in (("ilshift", "bitwise_left_shift"), ("irshift", "bitwise_right_shift")):
    TENSOR_OPERATORS[f"__{_dunder}__"] = _method_inplace(_n)
for _dunder, _n in (("iand", "bitwise_and"), ("ior", "bitwise_or"), ("ixor", "bitwise_xor")):
    TENSOR_OPERATORS[f"__{_dunder}__"] = _method_inplace(_n)
for _dunder, _n in (("imod", "remainder"), ("ifloordiv", "floor_divide"), ("idiv", "div")):
    TENSOR_OPERATORS[f"__{_dunder}__"] = _method_inplace(_n)
