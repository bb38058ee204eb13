"""The categorical distribution over indices."""

from __future__ import annotations

from typing import Any

import numpy as np

import disttorch as _dt

from .._random import multinomial
from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import _finfo, _one_of, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """``Categorical(probs=None, logits=None)``: an index in ``[0, K)`` of the last dim."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._expand_params(Categorical, batch_shape, _instance, ("probs", "logits"), event_dims=1)
        new._event_shape = Size()
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return _dt.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return _dt.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        # PyTorch: multinomial(probs_2d, sample_shape.numel(), True).T, reshaped
        probs_2d = self.probs._data.reshape(-1, self._num_events)
        n = int(np.prod(tuple(sample_shape), dtype=np.int64))
        idx = multinomial(Tensor._make(probs_2d), n, True)._data.T
        return Tensor._make(np.ascontiguousarray(idx).reshape(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape[:-1]) + (1,))
        value = value.expand(*shape)
        log_pmf = self.logits.expand(*shape[:-1], self._num_events)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        fi = _finfo(self.logits)
        logits = self.logits.clamp(min=float(fi.min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _dt.arange(self._num_events, dtype=_dt.int64).reshape(-1, *([1] * len(self._batch_shape)))
        return values.expand(-1, *self._batch_shape) if expand else values
