"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import disttorch as _dt

from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..ops.special import lgamma
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _finfo, _mvlgamma, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """``LKJCholesky(dim, concentration=1.0)``: lower Cholesky factors ``L`` of ``dim x dim``
    correlation matrices with density proportional to ``det(L L^T)^(concentration - 1)``;
    sampled by the onion method (Beta-distributed squared row norms, uniform directions)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (dim - 2)
        offset = _dt.cat(
            [
                _dt.zeros(1, dtype=self.concentration.dtype),
                _dt.arange(dim - 1, dtype=self.concentration.dtype),
            ]
        )
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(tuple(batch_shape))
        new.dim = self.dim
        new.concentration = self.concentration.expand(*batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)._data
            shape = tuple(self._extended_shape(sample_shape))
            u = np.tril(_dt.randn(*shape, dtype=self.concentration.dtype)._data, -1)
            with np.errstate(invalid="ignore"):
                u = u / np.linalg.norm(u, axis=-1, keepdims=True)
            u[..., 0, :] = 0.0
            w = np.sqrt(y) * u
            diag = np.sqrt(np.maximum(1 - (w**2).sum(-1), float(_finfo(self.concentration).tiny)))
            w = w + diag[..., None] * np.eye(self.dim, dtype=w.dtype)
            return Tensor._make(w)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _dt.arange(2, self.dim + 1, dtype=value.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        return unnormalized - normalize
