"""``disttorch.special``: PyTorch's ``torch.special`` (gamma and error functions, the normal
distribution, Bessel functions, incomplete gamma, zeta, orthogonal polynomials, and the
softmax family), computed in NumPy without SciPy; see :mod:`disttorch.ops.special`."""

from typing import Any as _Any

from .._tensor import Tensor
from ..autograd.function import named_node as _named_node
from ..autograd.grad_mode import no_grad as _no_grad
from ..ops import special as _s
from ..ops.comparison import round
from ..ops.elementwise import erf, expm1, log1p
from ..ops.out_arg import accept_declared_out as _accept_declared_out
from ..ops.reduction import log_softmax, logsumexp, softmax
from ..ops.scalar_self import number_self as _number_self
from ..ops.special import (
    digamma,
    erfc,
    erfinv,
    exp2,
    expit,
    i0,
    i0e,
    i1,
    i1e,
    logit,
    polygamma,
    sinc,
    xlog1py,
    xlogy,
)

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]

gammaln = _s.lgamma
psi = digamma
multigammaln = _s.mvlgamma


def erfcx(input: Tensor, *, out: _Any = None) -> Tensor:
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""
    return _s.Erfcx.apply(input)


def entr(input: Tensor, *, out: _Any = None) -> Tensor:
    """Elementwise entropy ``-x log x`` (0 at 0, -inf for x < 0)."""
    return _s.Entr.apply(input)


def ndtr(input: Tensor, *, out: _Any = None) -> Tensor:
    """The standard normal CDF, composed as PyTorch's: ``(1 + erf(x sqrt(1/2))) * 0.5`` (its
    steps rounded to a 16-bit input's dtype, its gradient through them)."""
    return _named_node((1 + erf(input * 0.7071067811865476)) * 0.5, "MulBackward1")


def log_ndtr(input: Tensor, *, out: _Any = None) -> Tensor:
    """``log(ndtr(x))``, accurate far into the left tail."""
    return _s.LogNdtr.apply(input)


def ndtri(input: Tensor, *, out: _Any = None) -> Tensor:
    """The inverse of the standard normal CDF."""
    return _s.Ndtri.apply(input)


@_number_self
def zeta(input: _Any, other: _Any, *, out: _Any = None) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other)^(-input)`` (no gradient)."""
    return _s.Zeta.apply(input, other)


def gammainc(input: _Any, other: _Any, *, out: _Any = None) -> Tensor:
    """Regularised lower incomplete gamma ``P(input, other)``."""
    return _s.Gammainc.apply(input, other)


def gammaincc(input: _Any, other: _Any, *, out: _Any = None) -> Tensor:
    """Regularised upper incomplete gamma ``Q(input, other)``."""
    return _s.Gammaincc.apply(input, other)


def _unary_public(fn_cls: type, doc: str):
    def f(input: Tensor, *, out: _Any = None) -> Tensor:
        with _no_grad():  # (PyTorch's result is not differentiable: it never requires grad)
            return fn_cls.apply(input)

    f.__name__ = f.__qualname__ = fn_cls.name_
    f.__doc__ = doc + " (no gradient, as in PyTorch)."
    return f


def _poly_public(fn_cls: type):
    def f(input: _Any, n: _Any, *, out: _Any = None) -> Tensor:
        with _no_grad():  # (PyTorch's result is not differentiable: it never requires grad)
            return fn_cls.apply(input, n)

    f.__name__ = f.__qualname__ = fn_cls.name_
    f.__doc__ = (
        f"The polynomial ``{fn_cls.name_}`` of degree ``n`` at ``input`` (0 for negative "
        "n; no gradient, as in PyTorch)."
    )
    return f


airy_ai = _unary_public(_s.AiryAi, "The Airy function Ai")
bessel_j0 = _unary_public(_s.BesselJ0, "Bessel function of the first kind, order 0")
bessel_j1 = _unary_public(_s.BesselJ1, "Bessel function of the first kind, order 1")
bessel_y0 = _unary_public(_s.BesselY0, "Bessel function of the second kind, order 0")
bessel_y1 = _unary_public(_s.BesselY1, "Bessel function of the second kind, order 1")
modified_bessel_i0 = _unary_public(_s.ModifiedBesselI0, "Modified Bessel function I0")
modified_bessel_i1 = _unary_public(_s.ModifiedBesselI1, "Modified Bessel function I1")
modified_bessel_k0 = _unary_public(_s.ModifiedBesselK0, "Modified Bessel function K0")
modified_bessel_k1 = _unary_public(_s.ModifiedBesselK1, "Modified Bessel function K1")
scaled_modified_bessel_k0 = _unary_public(_s.ScaledModifiedBesselK0, "exp(x) K0(x)")
scaled_modified_bessel_k1 = _unary_public(_s.ScaledModifiedBesselK1, "exp(x) K1(x)")
spherical_bessel_j0 = _unary_public(_s.SphericalBesselJ0, "Spherical Bessel function j0 = sin(x)/x")
chebyshev_polynomial_t = _poly_public(_s.ChebyshevT)
chebyshev_polynomial_u = _poly_public(_s.ChebyshevU)
chebyshev_polynomial_v = _poly_public(_s.ChebyshevV)
chebyshev_polynomial_w = _poly_public(_s.ChebyshevW)
shifted_chebyshev_polynomial_t = _poly_public(_s.ShiftedChebyshevT)
shifted_chebyshev_polynomial_u = _poly_public(_s.ShiftedChebyshevU)
shifted_chebyshev_polynomial_v = _poly_public(_s.ShiftedChebyshevV)
shifted_chebyshev_polynomial_w = _poly_public(_s.ShiftedChebyshevW)
hermite_polynomial_h = _poly_public(_s.HermiteH)
hermite_polynomial_he = _poly_public(_s.HermiteHe)
laguerre_polynomial_l = _poly_public(_s.LaguerreL)
legendre_polynomial_p = _poly_public(_s.LegendreP)

_accept_declared_out(globals(), "special_")  # out= writes into the given tensor, as PyTorch
