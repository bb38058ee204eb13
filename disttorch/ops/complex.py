"""Complex tensors: the parts (``real``/``imag`` views, ``view_as_real``/``view_as_complex``),
building them (``complex``, ``polar``), ``conj`` and friends, ``angle``, ``sgn``, ``isreal``,
``is_complex``, ``cfloat``/``cdouble``, the complex branch of the inverse hyperbolic functions,
and ``result_type`` (PyTorch's promotion, complex included).

Gradients follow PyTorch's convention: the gradient of a real loss ``L`` with respect to a
complex ``z = x + iy`` is ``dL/dx + i dL/dy``. For an op ``s = f(z)`` with upstream gradient
``G`` that makes ``dL/dx = Re(conj(G) ds/dx)`` and ``dL/dy = Re(conj(G) ds/dy)``; for a
holomorphic ``f`` it is ``G * conj(f'(z))``. A real input of an op whose gradient comes out
complex receives the real part (the engine takes it).

Difference from PyTorch: ``conj()`` of a complex tensor is an eager copy, not a lazy
"conjugate bit" view, so ``is_conj()`` is always False, ``resolve_conj()``/``resolve_neg()``
return their input, and writing into ``z.conj()`` does not change ``z``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _tensor_arg
from ..autograd.autocast_state import autocast_op
from ..autograd.function import Function
from ..kernels.vml import unary as _vml
from ._helpers import sign_array
from .elementwise import _FloatUnary

__all__ = [
    "real",
    "imag",
    "view_as_real",
    "view_as_complex",
    "complex",
    "polar",
    "conj",
    "conj_physical",
    "resolve_conj",
    "resolve_neg",
    "is_conj",
    "is_neg",
    "is_complex",
    "isreal",
    "angle",
    "sgn",
    "result_type",
]
TENSOR_METHODS = (
    "conj",
    "conj_physical",
    "resolve_conj",
    "resolve_neg",
    "is_conj",
    "is_neg",
    "is_complex",
    "isreal",
    "angle",
    "sgn",
    "cfloat",
    "cdouble",
    "chalf",
)


def _is_c(x: Any) -> bool:
    return isinstance(x, Tensor) and x._data.dtype.kind == "c"


def _conj_if_complex(t: Tensor) -> Tensor:
    """``t.conj()`` for complex ``t``; ``t`` itself otherwise (for gradient formulas)."""
    return Conj.apply(t) if t._data.dtype.kind == "c" else t


# ---------------------------------------------------------------------- the parts
class Real(Function):
    """The real part of a complex tensor, a writable view of its memory."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a):
        return a._data.real

    @staticmethod
    def backward(ctx, g):
        return Complex.apply(g, Tensor._make(np.zeros_like(g._data)))


class Imag(Function):
    """The imaginary part of a complex tensor, a writable view of its memory."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a):
        return a._data.imag

    @staticmethod
    def backward(ctx, g):
        return Complex.apply(Tensor._make(np.zeros_like(g._data)), g)


def real(input: Tensor) -> Tensor:
    """The real values of ``input``: a view for a complex tensor, ``input`` itself otherwise."""
    _tensor_arg("real", input)
    return Real.apply(input) if _is_c(input) else input


def imag(input: Tensor) -> Tensor:
    """The imaginary values of a complex ``input``, a view (writable)."""
    _tensor_arg("imag", input)
    if not _is_c(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag.apply(input)


def _set_part(self: Tensor, value: Any, part: Any) -> None:
    part(self).copy_(value if isinstance(value, Tensor) else Tensor._make(np.asarray(value)))


def real_pairs(x: np.ndarray) -> np.ndarray:
    """A complex array's memory as floats ``(*x.shape, 2)`` (real, imaginary): a view."""
    re = x.real
    return np.lib.stride_tricks.as_strided(
        re, shape=x.shape + (2,), strides=x.strides + (re.itemsize,), writeable=re.flags.writeable
    )


class ViewAsReal(Function):
    """A complex tensor's memory as floats with a last dimension of 2 (real, imaginary)."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a):
        return real_pairs(a._data)

    @staticmethod
    def backward(ctx, g):
        return ViewAsComplex.apply(g.contiguous())


class ViewAsComplex(Function):
    """A float tensor whose last dimension has size 2 (and stride 1) as complex numbers."""

    _raw = True
    _view = True

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype not in (np.float32, np.float64):
            raise RuntimeError(
                "view_as_complex is only supported for float and double tensors, but got a tensor "
                f"of scalar type: {_dtype.scalar_type_name(x.dtype)}"
            )
        if x.ndim == 0 or x.shape[-1] != 2:
            raise RuntimeError("Tensor must have a last dimension of size 2")
        if x.strides[-1] != x.itemsize:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if any(s % (2 * x.itemsize) for s in x.strides[:-1]):
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
        return x.view(np.complex64 if x.dtype == np.float32 else np.complex128)[..., 0]

    @staticmethod
    def backward(ctx, g):
        return ViewAsReal.apply(g)


def view_as_real(input: Tensor) -> Tensor:
    """A view of complex ``input`` as real numbers: shape ``(*input.shape, 2)``."""
    _tensor_arg("view_as_real", input)
    if not _is_c(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


@autocast_op("fp32")  # PyTorch's CPU autocast runs it in float32
def view_as_complex(input: Tensor) -> Tensor:
    """A view of ``input`` (float32/float64, last dim of size 2 and stride 1) as complex."""
    _tensor_arg("view_as_complex", input)
    return ViewAsComplex.apply(input)


# ---------------------------------------------------------------------- building
def _check_parts(a: np.dtype, b: np.dtype) -> None:
    """The two real parts of ``complex``/``polar``: both float32 or both float64."""
    if a not in (np.float32, np.float64) or b not in (np.float32, np.float64):
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{_dtype.scalar_type_name(a)} and {_dtype.scalar_type_name(b)}"
        )
    if a != b:
        raise RuntimeError(
            f"Expected object of scalar type {_dtype.scalar_type_name(a)} but got scalar type "
            f"{_dtype.scalar_type_name(b)} for second argument"
        )


class Complex(Function):
    """``real + i imag`` of two real tensors of the same floating dtype."""

    _raw = True

    @staticmethod
    def forward(ctx, re, im):
        a, b = re._data, im._data
        _check_parts(a.dtype, b.dtype)
        out = np.empty(
            np.broadcast_shapes(a.shape, b.shape), np.complex64 if a.dtype == np.float32 else np.complex128
        )
        out.real, out.imag = a, b
        return out

    @staticmethod
    def backward(ctx, g):
        nr, ni = ctx.needs_input_grad
        return (real(g) if nr else None), (imag(g) if ni else None)


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex tensor ``real + i * imag`` (float32 parts give complex64, float64 complex128)."""
    _tensor_arg("complex", real, "real")
    _tensor_arg("complex", imag, "imag", 2)
    res = Complex.apply(real, imag)
    return res if out is None else out.copy_(res)


@autocast_op("fp32")
def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex tensor ``abs * (cos(angle) + i sin(angle))``."""
    _tensor_arg("polar", abs, "abs")
    _tensor_arg("polar", angle, "angle", 2)
    _check_parts(abs._data.dtype, angle._data.dtype)
    res = Complex.apply(abs * angle.cos(), abs * angle.sin())
    return res if out is None else out.copy_(res)


# ---------------------------------------------------------------------- conjugation
class Conj(Function):
    """The complex conjugate (a copy); its gradient is the conjugate of the incoming one."""

    _raw = True

    @staticmethod
    def forward(ctx, a):
        return np.conj(a._data)

    @staticmethod
    def backward(ctx, g):
        return _conj_if_complex(g)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate of ``input``; a real tensor is returned as is.

    Unlike PyTorch's lazy conjugate view, the result of a complex input is a new tensor."""
    _tensor_arg("conj", input)
    return Conj.apply(input) if _is_c(input) else input


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate of ``input`` as a new tensor (a real tensor: ``input``)."""
    _tensor_arg("conj_physical", input)
    return Conj.apply(input) if _is_c(input) else input


def resolve_conj(input: Tensor) -> Tensor:
    """``input``: conjugation is never lazy here, so there is nothing to resolve."""
    return _tensor_arg("resolve_conj", input)


def resolve_neg(input: Tensor) -> Tensor:
    """``input``: negation is never lazy here, so there is nothing to resolve."""
    return _tensor_arg("resolve_neg", input)


def is_conj(input: Tensor) -> bool:
    """False: disttorch has no lazy conjugate bit (``conj()`` conjugates eagerly)."""
    _tensor_arg("is_conj", input)
    return False


def is_neg(input: Tensor) -> bool:
    """False: disttorch has no lazy negative bit."""
    _tensor_arg("is_neg", input)
    return False


def is_complex(input: Tensor) -> bool:
    """True if ``input``'s dtype is complex64 or complex128."""
    return _is_c(_tensor_arg("is_complex", input))


def isreal(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input``'s imaginary part is 0 (every element of a real tensor)."""
    x = _tensor_arg("isreal", input)._data
    return Tensor._make(x.imag == 0 if x.dtype.kind == "c" else np.ones(x.shape, bool))


# ---------------------------------------------------------------------- angle, sgn
class Angle(Function):
    """The argument of each element (real input: 0 for x >= 0, pi for x < 0, NaN stays)."""

    _raw = True

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype.kind in "iub":
            x = x.astype(_dtype.get_default_dtype().numpy)
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
        if x.dtype.kind == "c":
            out = np.angle(x)
        else:  # (-0.0 is not below zero: its angle is 0, where np.angle gives pi)
            out = np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0))
        return out.astype(x.real.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx._checked_saved()
        if a._data.dtype.kind != "c":
            return g * 0
        # d angle: (-y, x) / |z|^2, i.e. G * i z / |z|^2 (0 at z = 0, as PyTorch)
        zero = Tensor._make(a._data == 0)
        return (g * a * 1j / a.abs().square()).masked_fill(zero, 0)


class Sgn(Function):
    """``z / |z|`` (0 at 0); for real tensors ``sign``."""

    _raw = True

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if ctx.needs_input_grad:
            ctx.save_for_backward(a)
        return np.sign(x) if x.dtype.kind == "c" else sign_array(x)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx._checked_saved()
        if a._data.dtype.kind != "c":
            return g * 0
        r = a.abs()
        s = Sgn.apply(a)
        zero = Tensor._make(a._data == 0)
        # (G - Re(conj(G) s) s) / |z|, 0 at z = 0
        return ((g - real(conj(g) * s) * s) / r).masked_fill(zero, 0)


def angle(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The element-wise argument (phase) in radians; real inputs give 0 or pi."""
    res = Angle.apply(_tensor_arg("angle", input))
    return res if out is None else out.copy_(res)


def sgn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``input / abs(input)`` for complex tensors (0 where ``input`` is 0), ``sign`` for real ones."""
    res = Sgn.apply(_tensor_arg("sgn", input))
    return res if out is None else out.copy_(res)


def cfloat(self: Tensor) -> Tensor:
    """``self.to(disttorch.complex64)``."""
    return self.to(_dtype.complex64)


def cdouble(self: Tensor) -> Tensor:
    """``self.to(disttorch.complex128)``."""
    return self.to(_dtype.complex128)


def chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self.to(disttorch.complex32)``: refused, with the reason (no complex32 tensors here)."""
    return self.to(_dtype.complex32)


# ---------------------------------------------------------------------- inverse hyperbolics
class Asinh(_FloatUnary):
    """``asinh`` (complex: NumPy's principal branch), derivative ``1 / sqrt(z^2 + 1)``."""

    ufunc = np.arcsinh

    @staticmethod
    def derivative(x, y):
        return (x * x + 1).rsqrt()


class Acosh(_FloatUnary):
    """``acosh``, derivative ``rsqrt(x^2 - 1)`` (complex: the principal branch,
    ``1 / (sqrt(z - 1) sqrt(z + 1))``)."""

    ufunc, quiet = np.arccosh, True

    @staticmethod
    def derivative(x, y):
        if x._data.dtype.kind != "c":  # PyTorch's formula, in its order of rounding steps
            return (x * x - 1).rsqrt()
        return ((x - 1).sqrt() * (x + 1).sqrt()).reciprocal()


class Atanh(_FloatUnary):
    """``atanh`` (complex: the principal branch), derivative ``1 / (1 - z^2)``."""

    ufunc, quiet = _vml(np.arctanh, None), True  # (float32 in float64, rounded once: the C library's)

    divides = True

    @staticmethod
    def divisor(x, y):
        return 1 - x * x


# ---------------------------------------------------------------------- promotion
def result_type(tensor: Any, other: Any) -> _dtype.dtype:
    """The dtype of an arithmetic op on ``tensor`` and ``other`` (tensors or Python numbers),
    by PyTorch's promotion rules (complex > floating > integer > bool; zero-dim tensors and
    numbers count only when of a higher category)."""
    if not isinstance(tensor, Tensor) and not isinstance(other, Tensor):
        if isinstance(tensor, (bool, int, float, complex)) and isinstance(other, (bool, int, float, complex)):
            cats = [_dtype._kind_of(x) for x in (tensor, other)]
            top = max(cats)
            return [
                _dtype.bool,
                _dtype.int64,
                _dtype.get_default_dtype(),
                _dtype.from_numpy(_dtype.default_complex()),
            ][top]
        raise TypeError(
            "result_type() received an invalid combination of arguments: expected (Tensor tensor, "
            f"Tensor other) or numbers, got ({type(tensor).__name__}, {type(other).__name__})"
        )
    a = tensor._data if isinstance(tensor, Tensor) else tensor
    b = other._data if isinstance(other, Tensor) else other
    return _dtype.from_numpy(_dtype.result_type(a, b))


def bind() -> None:
    """Attach ``Tensor.real`` and ``Tensor.imag``: properties with setters (writing into the
    parts); the methods go with every family's."""
    Tensor.real = property(real, lambda self, v: _set_part(self, v, real))
    Tensor.imag = property(imag, lambda self, v: _set_part(self, v, imag))
