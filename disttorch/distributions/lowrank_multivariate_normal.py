"""The multivariate normal with covariance ``W W^T + diag(D)``."""

from __future__ import annotations

import math
from typing import Any

import disttorch as _dt

from .._tensor import Size, Tensor
from ..linalg import cholesky, solve_triangular
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv, _eye
from .utils import broadcast_shape, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """Cholesky factor of ``I + W^T D^-1 W``."""
    m = W.shape[-1]
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    K = Wt_Dinv @ W
    return cholesky(K + _eye(m, W))


class LowRankMultivariateNormal(Distribution):
    """``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: covariance
    ``cov_factor @ cov_factor.T + diag(cov_diag)`` (Woodbury and the matrix determinant
    lemma keep the cost linear in the event size)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {tuple(event_shape)}")
        n, m = event_shape[0], cov_factor.shape[-1]
        batch_shape = broadcast_shape(loc.shape[:-1], cov_factor.shape[:-2], cov_diag.shape[:-1])
        self.loc = loc.expand(*batch_shape, n)
        self.cov_factor = cov_factor.expand(*batch_shape, n, m)
        self.cov_diag = cov_diag.expand(*batch_shape, n)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(tuple(batch_shape))
        n, m = self._event_shape[0], self.cov_factor.shape[-1]
        new.loc = self.loc.expand(*batch_shape, n)
        new.cov_factor = self.cov_factor.expand(*batch_shape, n, m)
        new.cov_diag = self.cov_diag.expand(*batch_shape, n)
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        v = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return v.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        n = self._event_shape[0]
        return cholesky(self.covariance_matrix).expand(*self._batch_shape, n, n)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W = self._unbroadcasted_cov_factor
        cov = W @ W.transpose(-2, -1) + self._unbroadcasted_cov_diag.unsqueeze(-1) * _eye(W.shape[-2], W)
        n = self._event_shape[0]
        return cov.expand(*self._batch_shape, n, n)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        P = D.reciprocal().unsqueeze(-1) * _eye(W.shape[-2], W) - A.transpose(-2, -1) @ A
        n = self._event_shape[0]
        return P.expand(*self._batch_shape, n, n)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + (self.cov_factor.shape[-1],)
        eps_w = _dt.randn(*w_shape, dtype=self.loc.dtype)
        eps_d = _dt.randn(*shape, dtype=self.loc.dtype)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
            + self._unbroadcasted_cov_diag.sqrt() * eps_d
        )

    def _log_det(self) -> Tensor:
        return 2 * self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(
            -1
        ) + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
        Wt_Dinv_x = _batch_mv(Wt_Dinv, diff)
        mahalanobis_term1 = (diff.pow(2) / D).sum(-1)
        mahalanobis_term2 = _batch_mahalanobis(self._capacitance_tril, Wt_Dinv_x)
        M = mahalanobis_term1 - mahalanobis_term2
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self) -> Tensor:
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(*self._batch_shape)
