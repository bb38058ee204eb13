"""``Gamma``, with reparameterised sampling by the implicit gradient ``dx/dalpha = -(dF/dalpha) / f`` of the gamma CDF ``F`` (as PyTorch's ``rsample``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

from .._dtype import scalar_type_name
from .._random import _gen
from .._tensor import Size, Tensor
from ..autograd.function import Function
from ..kernels.special import digamma as digamma_np
from ..kernels.special import lgamma as lgamma_np
from ..kernels.torch_gamma import standard_gamma
from ..ops.special import digamma, lgamma
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _finfo, broadcast_all

_SERIES_MAX_X = 2500.0

__all__ = ["Gamma", "StandardGamma", "require_float32_or_64", "standard_gamma_grad"]


def standard_gamma_grad(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """``d x / d alpha`` of a standard-gamma sample ``x`` at the same CDF level.

    Uses ``P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a+1)...(a+n))``, whose derivative
    divided by the density is ``-(x / a) (S (log x - digamma(a + 1)) + dS/da)``; for very
    large ``x`` (``alpha`` in the thousands) the Wilson-Hilferty normal approximation."""
    x = np.asarray(x, dtype=np.float64)
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), x.shape)
    out = np.empty_like(x)
    series = x < _SERIES_MAX_X
    xs, as_ = x[series], a[series]
    term = np.ones_like(xs)
    s, d, harmonic = np.ones_like(xs), np.zeros_like(xs), np.zeros_like(xs)
    n_max = int(np.max(xs, initial=0) + 20 * np.sqrt(np.max(xs, initial=0)) + 60)
    for n in range(1, n_max):
        term = term * xs / (as_ + n)
        harmonic = harmonic + 1.0 / (as_ + n)
        s += term
        d -= term * harmonic
        if n > 10 and np.all(term * (1 + harmonic) < 1e-17 * (s + np.abs(d))):
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        out[series] = -(xs / as_) * (s * (np.log(xs) - digamma_np(as_ + 1.0)) + d)
    xl, al = x[~series], a[~series]
    z = ((xl / al) ** (1 / 3) - 1 + 1 / (9 * al)) * 3 * np.sqrt(al)
    u = 1 - 1 / (9 * al) + z / (3 * np.sqrt(al))
    out[~series] = u**3 + 3 * al * u**2 * (1 / (9 * al**2) - z / (6 * al**1.5))
    out[x == 0] = 0.0
    return out


def require_float32_or_64(a: np.ndarray, kernel: str) -> None:
    """PyTorch's samplers take float32 and float64 only: its error for other dtypes."""
    if a.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(a.dtype)}'")


class StandardGamma(Function):
    """A ``Gamma(alpha, 1)`` sample whose gradient is the implicit reparameterisation one."""

    _raw = True

    @staticmethod
    def forward(ctx, alpha, generator):
        a = alpha._data
        require_float32_or_64(a, "gamma_cpu")
        x = standard_gamma(_gen(generator), a)
        if ctx.needs_input_grad:
            ctx.grad = standard_gamma_grad(x, a).astype(a.dtype, copy=False)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.grad), None


def _standard_gamma(alpha: Tensor, generator: Any = None) -> Tensor:
    """``torch._standard_gamma``: ``Gamma(alpha, 1)`` draws, PyTorch's for a seed."""
    return StandardGamma.apply(alpha, generator)


class Gamma(ExponentialFamily):
    """``Gamma(concentration, rate)``: density ``rate^a x^(a-1) e^(-rate x) / Gamma(a)``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch = Size() if isinstance(concentration, Number) and isinstance(rate, Number) else self.rate.size()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)
        return value.clamp(min=float(_finfo(value).tiny))

    def log_prob(self, value: Any) -> Tensor:
        if not isinstance(value, Tensor):
            value = Tensor._make(np.asarray(value, dtype=self.rate._data.dtype))
        if self._validate_args:
            self._validate_sample(value)
        a, r = self.concentration, self.rate
        return a * r.log() + (a - 1) * value.log() - r * value - lgamma(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration._data
        x = np.broadcast_to((self.rate * value)._data, np.broadcast_shapes(a.shape, value.shape))
        return Tensor._make(_regularized_lower_gamma(np.broadcast_to(a, x.shape), x).astype(a.dtype))


def _regularized_lower_gamma(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``P(a, x)`` by its series (x < a + 1) or continued fraction (Lentz), vectorised."""
    a = np.asarray(a, np.float64)
    x = np.asarray(x, np.float64)
    out = np.zeros(np.broadcast_shapes(a.shape, x.shape))
    a, x = np.broadcast_to(a, out.shape), np.broadcast_to(x, out.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_pref = a * np.log(x) - x - lgamma_np(a)
        low = x < a + 1
        ap, term = a.copy(), 1.0 / a
        total = term.copy()
        for _ in range(1000):
            ap = ap + 1
            term = term * x / ap
            total += term
            if np.all(np.abs(term[low]) < np.abs(total[low]) * 1e-16):
                break
        series = total * np.exp(log_pref)
        b = x + 1 - a
        c = np.full_like(x, 1e300)
        d = 1 / b
        h = d.copy()
        for i in range(1, 1000):
            an = -i * (i - a)
            b = b + 2
            d = an * d + b
            d = np.where(np.abs(d) < 1e-300, 1e-300, d)
            c = b + an / c
            c = np.where(np.abs(c) < 1e-300, 1e-300, c)
            d = 1 / d
            delta = d * c
            h = h * delta
            if np.all(np.abs(delta[~low] - 1) < 1e-16):
                break
        cont = 1 - np.exp(log_pref) * h
        out = np.where(low, series, cont)
        out = np.where(x <= 0, 0.0, out)
    return out
