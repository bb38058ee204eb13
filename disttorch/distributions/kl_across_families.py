"""KL divergences between distributions of different families, the pairs
``torch.distributions.kl`` answers: infinite where ``p`` puts mass outside ``q``'s support;
otherwise ``KL(p || q) = -H(p) - E_p[log q(x)]``, with ``E_p[log q(x)]`` written from the
moments of ``p`` that ``q``'s log density needs (its mean and variance for a Normal ``q``,
``E[log x]`` for a Gamma, the moment generating function at ``-1/scale`` for a Gumbel).
Registered into :mod:`.kl`'s table when the package is imported."""

from __future__ import annotations

import math

import disttorch as _dt

from .._tensor import Tensor
from ..ops.special import lgamma
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _infinite_like, register_kl
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform

__all__: list = []

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _infinite_where(cond: Tensor, out: Tensor) -> Tensor:
    """``out`` with ``inf`` where ``cond`` holds (p's support leaves q's there)."""
    return _dt.where(cond, _infinite_like(out), out)


def _infinite(p, q) -> Tensor:
    """``inf`` over ``p``'s batch shape (as PyTorch's): ``p``'s support is not inside ``q``'s."""
    return _dt.full(p.batch_shape, math.inf, dtype=p.mean.dtype)


for _p, _qs in (
    (Normal, (Beta, Gamma, Exponential, Uniform, ContinuousBernoulli, Pareto)),
    (Laplace, (Beta, Gamma, Exponential, Uniform, ContinuousBernoulli, Pareto)),
    (Gumbel, (Beta, Gamma, Exponential, Uniform, ContinuousBernoulli, Pareto)),
    (Gamma, (Beta, Uniform, ContinuousBernoulli, Pareto)),
    (Exponential, (Beta, Uniform, ContinuousBernoulli, Pareto)),
    (Pareto, (Beta, Uniform, ContinuousBernoulli)),
    (Beta, (Pareto,)),
    (ContinuousBernoulli, (Pareto,)),
    (Poisson, (Bernoulli, Binomial)),
):
    for _q in _qs:
        register_kl(_p, _q)(_infinite)


def _xlogx(x: Tensor) -> Tensor:
    return _dt.xlogy(x, x)


def _mean_log_uniform(low: Tensor, high: Tensor) -> Tensor:
    """``E[log x]`` for ``x ~ Uniform(low, high)``, ``0 <= low``."""
    return (_xlogx(high) - _xlogx(low)) / (high - low) - 1


# ---------------------------------------------------------------------- q Normal
def _kl_to_normal(p, q: Normal) -> Tensor:
    """``-H(p) + log(s sqrt(2 pi)) + (Var p + (E p - m)^2) / (2 s^2)``."""
    return (
        -p.entropy() + q.scale.log() + _HALF_LOG_2PI + (p.variance + (p.mean - q.loc) ** 2) / (2 * q.scale**2)
    )


for _p in (
    Beta,
    Gamma,
    Exponential,
    Laplace,
    Gumbel,
    ContinuousBernoulli,
    Pareto,
):  # (Pareto: inf for alpha <= 2)
    register_kl(_p, Normal)(_kl_to_normal)


# ---------------------------------------------------------------------- q Gumbel
def _kl_to_gumbel(p, q: Gumbel, mgf: Tensor) -> Tensor:
    """``-H(p) + log b + (E p - m) / b + e^(m / b) M_p(-1 / b)``, ``mgf`` = ``M_p(-1 / b)``."""
    return -p.entropy() + q.scale.log() + (p.mean - q.loc) / q.scale + (q.loc / q.scale).exp() * mgf


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    t = -1 / q.scale
    return _kl_to_gumbel(p, q, (p.loc * t + (p.scale * t) ** 2 / 2).exp())


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    return _kl_to_gumbel(p, q, (p.rate / (p.rate + 1 / q.scale)) ** p.concentration)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    return _kl_to_gumbel(p, q, p.rate / (p.rate + 1 / q.scale))


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    t = -1 / q.scale
    return _kl_to_gumbel(p, q, ((p.high * t).exp() - (p.low * t).exp()) / (t * (p.high - p.low)))


# ---------------------------------------------------------------------- q Gamma, Exponential
def _kl_to_gamma(p, q: Gamma, mean_log: Tensor) -> Tensor:
    """``-H(p) - a log r + lgamma(a) - (a - 1) E[log x] + r E[x]`` (``mean_log``: ``E[log x]``)."""
    a, r = q.concentration, q.rate
    return -p.entropy() - a * r.log() + lgamma(a) - (a - 1) * mean_log + r * p.mean


def _kl_to_exponential(p, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    a, b = p.concentration1, p.concentration0
    return _kl_to_gamma(p, q, _dt.digamma(a) - _dt.digamma(a + b))


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    out = _kl_to_gamma(p, q, _mean_log_uniform(p.low.clamp_min(0), p.high))
    return _infinite_where(p.low < 0, out)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    out = _kl_to_gamma(p, q, p.scale.log() + 1 / p.alpha)
    return _infinite_where(p.alpha <= 1, out)


@register_kl(Beta, Exponential)
@register_kl(ContinuousBernoulli, Exponential)
def _kl_bounded_exponential(p, q):
    return _kl_to_exponential(p, q)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    out = _kl_to_exponential(p, q)
    return _infinite_where(p.low < 0, out)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    out = _kl_to_exponential(p, q)
    return _infinite_where(p.alpha <= 1, out)


# ---------------------------------------------------------------------- q on [0, 1], q Pareto
@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    a, b = q.concentration1, q.concentration0
    low, high = p.low.clamp(0, 1), p.high.clamp(0, 1)
    mean_log_x = _mean_log_uniform(low, high)
    mean_log_1mx = _mean_log_uniform(1 - high, 1 - low)
    lbeta = lgamma(a) + lgamma(b) - lgamma(a + b)
    out = -p.entropy() - (a - 1) * mean_log_x - (b - 1) * mean_log_1mx + lbeta
    return _infinite_where((p.low < 0) | (p.high > 1), out)


def _kl_to_continuous_bernoulli(p, q: ContinuousBernoulli) -> Tensor:
    """``-H(p) - log C(l) - log(1 - l) - E[x] logit(l)``."""
    log_1m = -_dt.nn.functional.softplus(q.logits)
    return -p.entropy() - q._cont_bern_log_norm() - log_1m - p.mean * q.logits


@register_kl(Beta, ContinuousBernoulli)
@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_unit_continuous_bernoulli(p, q):
    return _kl_to_continuous_bernoulli(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    out = _kl_to_continuous_bernoulli(p, q)
    return _infinite_where((p.low <= 0) | (p.high >= 1), out)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    out = -p.entropy() + (q.high - q.low).log()
    return _infinite_where((q.low >= 0) | (q.high <= 1), out)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    mean_log = _mean_log_uniform(p.low.clamp_min(q.scale), p.high)
    out = -p.entropy() - q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * mean_log
    return _infinite_where(p.low < q.scale, out)


# ---------------------------------------------------------------------- discrete
@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    """``(1 - pi) log(1 - pi) + pi log pi + r - pi log r``."""
    pi = p.probs
    return _xlogx(1 - pi) + _xlogx(pi) + q.rate - pi * q.rate.log()
