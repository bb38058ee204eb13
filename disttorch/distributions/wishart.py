"""The Wishart distribution over positive-definite matrices."""

from __future__ import annotations

import math
import warnings
from numbers import Number
from typing import Any

import numpy as np

import disttorch as _dt

from .._tensor import Size, Tensor
from ..linalg import cholesky, solve_triangular
from ..ops.special import digamma
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _eye, _precision_to_scale_tril
from .utils import _finfo, _mvlgamma, broadcast_shape, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma ``sum_j digamma(x - j / 2)``, ``j < p``."""
    if not bool((x > (p - 1) / 2).all()):
        raise ValueError("Wrong domain for multivariate digamma function.")
    return digamma(x.unsqueeze(-1) - _dt.arange(p, dtype=x.dtype) / 2).sum(-1)


class Wishart(ExponentialFamily):
    """``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)``:
    ``X = sum of df outer products of N(0, Sigma) vectors``; ``rsample`` by the Bartlett
    decomposition (reparameterised through chi-squared draws), resampling singular draws."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:  # type: ignore[override]
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df: Any,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
            )
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch dimensions"
            )
        if isinstance(df, Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = _dt.tensor(float(df), dtype=param.dtype)
        else:
            batch_shape = broadcast_shape(param.shape[:-2], df.shape)
            self.df = df.expand(*batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = (
            "scale_tril"
            if scale_tril is not None
            else "covariance_matrix"
            if covariance_matrix is not None
            else "precision_matrix"
        )
        setattr(self, name, param.expand(*batch_shape, p, p))
        if bool((self.df < p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape: tuple) -> Chi2:
        p = self._event_shape[-1]
        return Chi2(
            self.df.unsqueeze(-1)
            - _dt.arange(p, dtype=self._unbroadcasted_scale_tril.dtype).expand(*batch_shape, p),
            validate_args=False,
        )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(batch_shape)
        cov_shape = batch_shape + tuple(self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*cov_shape)
        new.df = self.df.expand(*batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril  # noqa: N806
        return (L @ L.transpose(-2, -1)).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return self._cholesky_solve(_eye(self._event_shape[-1], self._unbroadcasted_scale_tril)).expand(
            *self._batch_shape, *self._event_shape
        )

    def _cholesky_solve(self, b: Tensor) -> Tensor:
        """``(L L^T)^-1 b`` for the scale's Cholesky factor ``L``."""
        L = self._unbroadcasted_scale_tril  # noqa: N806
        shape = broadcast_shape(L.shape[:-2], b.shape[:-2])
        L = L.expand(*shape, *L.shape[-2:])  # noqa: N806
        b = b.expand(*shape, *b.shape[-2:])
        return solve_triangular(L.transpose(-2, -1), solve_triangular(L, b, upper=False), upper=True)

    def _batch_view(self, t: Tensor) -> Tensor:
        return t.reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self) -> Tensor:
        return self._batch_view(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = _dt.where(factor <= 0, _dt.full_like(factor, math.nan), factor)
        return self._batch_view(factor) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        diag = v.diagonal(dim1=-2, dim2=-1)
        return self._batch_view(self.df) * (v.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Any = ()) -> Tensor:
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=float(_finfo(self.df).eps))
        rows, cols = np.tril_indices(p, -1)
        shape = tuple(Size(tuple(sample_shape))) + tuple(self._batch_shape)
        lower = np.zeros(shape + (p, p), dtype=chi._data.dtype)
        lower[..., rows, cols] = _dt.randn(*shape, len(rows), dtype=chi.dtype)._data
        noise = chi.unsqueeze(-1) * _eye(p, chi) + Tensor._make(lower)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None) -> Tensor:
        """Bartlett samples, drawn again where PyTorch 2.13 draws them again: its first test
        marks the samples *inside* the support (``support.check`` is True for a positive
        definite matrix), warns "Singular sample detected." and redraws those; then it
        redraws the singular ones, up to ``max_try_correction`` times (default 10). Followed
        as it is, so that a seed gives PyTorch's samples."""
        sample = self._bartlett_sampling(sample_shape)
        redraw = self._per_sample(self.support.check(sample))
        if redraw.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(10 if max_try_correction is None else max_try_correction):
                fresh = self._bartlett_sampling(redraw[redraw].shape)
                sample[redraw] = fresh
                redraw[redraw.clone()] = self._per_sample(~self.support.check(fresh))
                if not redraw.any():
                    break
        return sample

    def _per_sample(self, mask: Tensor) -> Tensor:
        """Whether any matrix of a batch is marked, per sample."""
        batch = len(self._batch_shape)
        return mask.reshape(*mask.shape[: mask.dim() - batch], -1).any(-1) if batch else mask

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        logdet_value = 2 * cholesky(value).diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = self._cholesky_solve(value).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (
            -nu * (p * _LOG_2 / 2 + half_log_det)
            - _mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * logdet_value
            - trace / 2
        )

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (
            (p + 1) * (p * _LOG_2 / 2 + half_log_det)
            + _mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )
