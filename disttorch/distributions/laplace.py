"""The Laplace distribution."""

from __future__ import annotations

from typing import Any

import disttorch as _dt

from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import _batch, _finfo, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """``Laplace(loc, scale)``: density ``exp(-|x - loc| / scale) / (2 scale)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(
            _batch(loc, scale) if _batch(loc, scale) is not None else self.loc.size(),
            validate_args=validate_args,
        )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return self._expand_params(Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return 2**0.5 * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        fi = _finfo(self.loc)
        u = _dt.rand(*shape, dtype=self.loc.dtype) * (2 - float(fi.eps)) - (1 - float(fi.eps))  # (-1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
