"""The geometric distribution (failures before the first success)."""

from __future__ import annotations

from numbers import Number
from typing import Any

import disttorch as _dt

from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from . import constraints
from .distribution import Distribution
from .utils import _finfo, _one_of, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """``Geometric(probs=None, logits=None)``: failures before the first success
    (``P(k) = (1 - p)^k p``, k = 0, 1, ...)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        is_scalar = isinstance(probs if probs is not None else logits, Number)
        super().__init__(Size() if is_scalar else param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(
                f"Expected parameter probs of distribution {self!r} to be positive but "
                f"found invalid values:\n{self.probs}"
            )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        return self._expand_params(Geometric, batch_shape, _instance, ("probs", "logits"))

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return _dt.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        fi = _finfo(self.probs)
        with no_grad():
            u = _dt.rand(*shape, dtype=self.probs.dtype).clamp(min=float(fi.tiny))
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs = _dt.where((probs == 1) & (value == 0), _dt.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
