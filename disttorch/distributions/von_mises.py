"""The von Mises distribution on the circle."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import disttorch as _dt

from .._dtype import float64
from .._random import rand
from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4: I0 and I1 for x < 3.75 (in (x / 3.75)^2) and their scaled
# forms sqrt(x) e^-x I(x) for x >= 3.75 (in 3.75 / x).
_I_SMALL = (
    [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
    [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3],
)
_I_LARGE = (
    [
        0.39894228,
        0.1328592e-1,
        0.225319e-2,
        -0.157565e-2,
        0.916281e-2,
        -0.2057706e-1,
        0.2635537e-1,
        -0.1647633e-1,
        0.392377e-2,
    ],
    [
        0.39894228,
        -0.3988024e-1,
        -0.362018e-2,
        0.163801e-2,
        -0.1031555e-1,
        0.2282967e-1,
        -0.2895312e-1,
        0.1787654e-1,
        -0.420059e-2,
    ],
)


def _poly(y: Tensor, coef: list) -> Tensor:
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """``log I_order(x)`` for ``x > 0`` (order 0 or 1), differentiable."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _poly(y, _I_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _poly(3.75 / x, _I_LARGE[order]).log()
    return _dt.where(x < 3.75, small, large)


class VonMises(Distribution):
    """``VonMises(loc, concentration)``: density ``exp(k cos(x - loc)) / (2 pi I0(k))`` on
    ``[-pi, pi)``; sampled by Best and Fisher's rejection method (in float64)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (
            self.concentration * (value - self.loc).cos()
            - math.log(2 * math.pi)
            - _log_modified_bessel_fn(self.concentration, order=0)
        )

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        kappa = np.broadcast_to(self.concentration._data.astype(np.float64), shape)
        loc = np.broadcast_to(self.loc._data.astype(np.float64), shape)
        tau = 1 + np.sqrt(1 + 4 * kappa**2)
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho**2) / (2 * rho))
        x = np.zeros(shape)
        done = np.zeros(shape, dtype=bool)
        while not done.all():  # PyTorch's loop: a later acceptance replaces an earlier one
            u1, u2, u3 = rand((3,) + shape, dtype=float64)._data
            z = np.cos(math.pi * u1)
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            with np.errstate(divide="ignore", invalid="ignore"):
                accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
                x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(f), x)
            done |= accept
        out = (x + math.pi + loc) % (2 * math.pi) - math.pi
        return Tensor._make(out.astype(self.loc._data.dtype))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        return (
            1
            - (
                _log_modified_bessel_fn(self.concentration, 1)
                - _log_modified_bessel_fn(self.concentration, 0)
            ).exp()
        )
