"""``ExponentialFamily``: distributions with density ``h(x) exp(<t(x), theta> - F(theta))``;
the entropy follows from the log normaliser ``F`` by autograd (a Bregman divergence)."""

from __future__ import annotations

from typing import Any

import disttorch as _dt

from .._tensor import Tensor
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses define ``_natural_params``, ``_log_normalizer(*natural_params)`` and
    ``_mean_carrier_measure`` (``E[log h(x)]``); ``entropy`` is then
    ``F(theta) - <theta, grad F(theta)> - E[log h(x)]``."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with _dt.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = _dt.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(*self._batch_shape, -1).sum(-1)
        return result
