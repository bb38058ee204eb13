"""The Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import disttorch as _dt

from .._tensor import Size, Tensor
from ..ops.special import lgamma
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _finfo, broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """``FisherSnedecor(df1, df2)``: the ratio of two scaled chi-squared variables
    (reparameterised through the gamma samples)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch = Size() if isinstance(df1, Number) and isinstance(df2, Number) else self.df1.size()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = self._expand_params(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return _dt.where(self.df2 <= 2, _dt.full_like(self.df2, math.nan), self.df2 / (self.df2 - 2))

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _dt.where(self.df1 <= 2, _dt.full_like(mode, math.nan), mode)

    @property
    def variance(self) -> Tensor:
        df1, df2 = self.df1, self.df2
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return _dt.where(df2 <= 4, _dt.full_like(var, math.nan), var)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        x1 = self._gamma1.rsample(sample_shape)
        tiny = float(_finfo(x1).tiny)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
