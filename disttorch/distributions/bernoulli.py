"""The Bernoulli distribution."""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

import disttorch as _dt

from .._random import _bernoulli_array, _gen
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (
    _one_of,
    _sample_like,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    """``Bernoulli(probs=None, logits=None)``: 1 with probability ``probs``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        is_scalar = isinstance(probs if probs is not None else logits, Number)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        super().__init__(Size() if is_scalar else param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        return self._expand_params(Bernoulli, batch_shape, _instance, ("probs", "logits"))

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return (self.probs if "probs" in self.__dict__ else self.logits).size()

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return _dt.where(self.probs == 0.5, _dt.full_like(mode, float("nan")), mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            p = np.broadcast_to(self.probs._data, tuple(shape))
            flat = np.ascontiguousarray(p).reshape(-1)  # (a 0-d p too: PyTorch draws it as a tensor)
            return _sample_like(_bernoulli_array(_gen(None), flat.shape, flat).reshape(p.shape), self.probs)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value.to(logits.dtype), reduction="none")

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _dt.arange(2, dtype=self.probs.dtype if "probs" in self.__dict__ else self.logits.dtype)
        values = values.reshape(2, *([1] * len(self._batch_shape)))
        return values.expand(2, *self._batch_shape) if expand else values

    @property
    def _natural_params(self) -> tuple:
        return (self.probs.log() - (-self.probs).log1p(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp().log1p()
