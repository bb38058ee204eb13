"""The negative binomial distribution (successes before ``total_count`` failures)."""

from __future__ import annotations

from typing import Any

import disttorch as _dt

from .._random import poisson
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops.special import lgamma
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _one_of, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """``NegativeBinomial(total_count, probs=None, logits=None)``: the number of successes
    (each with probability ``probs``) before ``total_count`` failures."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self, total_count: Any, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._expand_params(
            NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits")
        )
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            rate = self._gamma.sample(sample_shape)
            return poisson(rate)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -lgamma(self.total_count + value) + lgamma(1.0 + value) + lgamma(self.total_count)
        log_normalization = _dt.where(
            self.total_count + value == 0.0, _dt.zeros_like(log_normalization), log_normalization
        )
        return log_unnormalized - log_normalization
