"""The binomial distribution."""

from __future__ import annotations

from typing import Any

import disttorch as _dt

from .._random import binomial
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..ops.special import lgamma
from . import constraints
from .distribution import Distribution
from .utils import (
    _one_of,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Binomial"]


class Binomial(Distribution):
    """``Binomial(total_count=1, probs=None, logits=None)``: successes in ``total_count`` trials."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self, total_count: Any = 1, probs: Any = None, logits: Any = None, validate_args: bool | None = None
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

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        new = self._expand_params(Binomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

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
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, k = self.total_count, value.to(self.total_count.dtype)
        log_factorial_n = lgamma(n + 1)
        log_factorial_k = lgamma(k + 1)
        log_factorial_nmk = lgamma(n - k + 1)
        # k log p + (n - k) log(1 - p), stably from the logits
        normalize_term = (
            n * _clamp_by_zero(self.logits) + n * (-self.logits.abs()).exp().log1p() - log_factorial_n
        )
        return k * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> Tensor:
        total = int(self.total_count.max().item())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total = int(self.total_count.max().item())
        if not bool((self.total_count == total).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = _dt.arange(1 + total, dtype=self._param.dtype).reshape(-1, *([1] * len(self._batch_shape)))
        return values.expand(-1, *self._batch_shape) if expand else values


def _clamp_by_zero(x: Tensor) -> Tensor:
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2
