"""The Dirichlet distribution; its reparameterised samples are normalised standard-gamma draws, differentiated as PyTorch's ``_Dirichlet`` does: through each coordinate's Beta marginal (``torch._dirichlet_grad``)."""

from __future__ import annotations

from typing import Any

import numpy as np

import disttorch as _dt

from .._random import _gen
from .._tensor import Tensor
from ..autograd.function import Function
from ..kernels.special import digamma as digamma_np
from ..kernels.torch_gamma import dirichlet
from ..ops.special import digamma, lgamma
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import require_float32_or_64

__all__ = ["Dirichlet", "SampleDirichlet"]


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``torch._dirichlet_grad``: ``-(dI_x(a, b)/da) / (pdf(x; a, b) (1 - x))`` for ``x`` drawn
    from ``Beta(a, b)``, ``b = total - a`` held fixed (``I`` the regularised incomplete beta).

    Exact, from the positive series ``I_z(p, q) = z^p (1-z)^q / B(p, q) sum_n (p+q)_n / (p)_{n+1} z^n``
    taken at ``z = x`` (``p = a``) when ``x <= 1/2`` and at ``z = 1 - x`` (``p = b``, by
    ``I_x(a, b) = 1 - I_{1-x}(b, a)``) otherwise. PyTorch uses rational and saddle-point
    approximations of the same quantity (within about 3e-3 relative of this)."""
    x = np.asarray(x, dtype=np.float64)
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), x.shape)
    t = np.broadcast_to(np.asarray(total, dtype=np.float64), x.shape)
    lo = x <= 0.5
    z = np.where(lo, x, 1.0 - x)
    p = np.where(lo, a, t - a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = np.log(x) - digamma_np(a) + digamma_np(t)
        term = 1.0 / p
        s = term.copy()
        dlog = np.where(lo, -1.0 / p, 0.0)  # d log(term_n) / da
        ds = term * dlog
        peak = np.max(z * t / (1.0 - z), initial=0.0)
        n_max = int(min(peak + 30.0 * np.sqrt(peak) + 80.0, 1e6))
        for n in range(1, n_max):
            term = term * z * (t + (n - 1)) / (p + n)
            dlog = dlog + 1.0 / (t + (n - 1)) - np.where(lo, 1.0 / (p + n), 0.0)
            s += term
            ds += term * dlog
            if n > 20 and np.all(term * (1.0 + np.abs(dlog)) <= 1e-17 * (s + np.abs(ds))):
                break
        out = np.where(lo, -x, x) * (f * s + ds)
    out = np.where(np.isnan(out), 0.0, out)
    return out


class SampleDirichlet(Function):
    """PyTorch's Dirichlet draw (``kernels/torch_gamma.py``): gamma draws ``g`` over their sum
    ``S``. Its gradient is PyTorch's ``_Dirichlet_backward``:
    ``dL/dalpha_i = dirichlet_grad(x_i, alpha_i, sum(alpha)) * (grad_i - sum_j grad_j x_j)``."""

    _raw = True

    @staticmethod
    def forward(ctx, alpha, generator):
        a = alpha._data
        require_float32_or_64(a, "dirichlet")
        x, g = dirichlet(_gen(generator), a)
        if ctx.needs_input_grad:
            ctx.x = x
            total = np.broadcast_to(a.sum(-1, keepdims=True), a.shape)
            ctx.scale = dirichlet_grad(x, a, total).astype(a.dtype)
        return x

    @staticmethod
    def backward(ctx, g):
        x = Tensor._make(ctx.x)
        return (g - (g * x).sum(-1, keepdim=True)) * Tensor._make(ctx.scale), None


def _sample_dirichlet(concentration: Tensor, generator: Any = None) -> Tensor:
    """``torch._sample_dirichlet``: Dirichlet draws over the last dim, PyTorch's for a seed."""
    return SampleDirichlet.apply(concentration, generator)


class Dirichlet(ExponentialFamily):
    """``Dirichlet(concentration)`` on the simplex of the last dimension."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",), event_dims=1)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _sample_dirichlet(self.concentration.expand(*shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ((c - 1) * value.log()).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        c = (self.concentration - 1).clamp(min=0.0)
        mode = c / c.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(-1)
        if bool(mask.any()):
            one_hot = _dt.nn.functional.one_hot(c.argmax(-1), c.shape[-1]).to(mode.dtype)
            mode = _dt.where(mask.unsqueeze(-1), one_hot, mode)
        return mode

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Tensor:
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        c = self.concentration
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
