"""The Poisson distribution."""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

import disttorch as _dt

from .._random import poisson
from .._tensor import Size, Tensor
from ..ops.special import lgamma
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """``Poisson(rate)``: ``P(k) = rate^k e^-rate / k!``."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(
            Size() if isinstance(rate, Number) else self.rate.size(), validate_args=validate_args
        )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        rates = np.array(np.broadcast_to(self.rate._data, shape), order="C")  # (0-d stays 0-d)
        return poisson(Tensor._make(rates))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        value = value.to(rate.dtype)
        return _xlogy(value, rate) - rate - lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple:
        return (self.rate.log(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp()


def _xlogy(x: Tensor, y: Tensor) -> Tensor:
    """``x * log(y)``, 0 where ``x == 0``."""
    safe = _dt.where(x == 0, _dt.ones_like(y), y)
    return _dt.where(x == 0, _dt.zeros_like(y), x * safe.log())
