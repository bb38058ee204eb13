"""The generalised Pareto distribution."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import disttorch as _dt

from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import _batch, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """``GeneralizedPareto(loc, scale, concentration)``: survival function
    ``(1 + xi z)^(-1/xi)`` with ``z = (x - loc) / scale`` (``exp(-z)`` when ``xi = 0``);
    ``rsample`` by the inverse CDF."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        batch = _batch(loc, scale, concentration)
        super().__init__(batch if batch is not None else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return self._expand_params(
            GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration")
        )

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    def _safe_conc(self) -> tuple:
        eq_zero = Tensor._make(np.isclose(self.concentration._data, 0.0))
        return eq_zero, _dt.where(eq_zero, _dt.ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(_dt.rand(*shape, dtype=self.loc.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, conc = self._safe_conc()
        y = 1 / conc + _dt.ones_like(z)
        nonzero = _dt.where(y == 0, y, y * (conc * z).log1p())
        return -self.scale.log() - _dt.where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """``log P(X > value)``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, conc = self._safe_conc()
        return _dt.where(eq_zero, -z, -(conc * z).log1p() / conc)

    def log_cdf(self, value: Tensor) -> Tensor:
        """``log P(X <= value)``."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero, conc = self._safe_conc()
        logu = (-value).log1p()
        return _dt.where(
            eq_zero, self.loc - self.scale * logu, self.loc + self.scale / conc * (-conc * logu).expm1()
        )

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        conc = _dt.where(valid, self.concentration, _dt.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - conc)
        return _dt.where(valid, result, _dt.full_like(result, math.nan))

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        conc = _dt.where(valid, self.concentration, _dt.full_like(self.concentration, 0.25))
        result = self.scale**2 / ((1 - conc) ** 2 * (1 - 2 * conc))
        return _dt.where(valid, result, _dt.full_like(result, math.nan))

    @property
    def mode(self) -> Tensor:
        return self.loc

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(*self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        upper = _dt.where(
            self.concentration < 0, lower - self.scale / self.concentration, _dt.full_like(lower, math.inf)
        )
        return constraints.interval(lower, upper)
