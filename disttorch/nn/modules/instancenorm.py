"""Instance normalisation layers ``InstanceNorm1d/2d/3d`` and their lazy forms: each
channel of each sample normalised on its own, optionally with running statistics."""

from __future__ import annotations

import warnings
from typing import Any

from ..._tensor import Tensor
from ..functional.normalization import instance_norm
from .batchnorm import _LazyNorm, _NormBase

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class _InstanceNorm(_NormBase):
    _spatial = 1

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        d = self._spatial
        if input.ndim not in (d + 1, d + 2):
            raise ValueError(f"expected {d + 1}D or {d + 2}D input (got {input.ndim}D input)")
        unbatched = input.ndim == d + 1
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim=1 to match num_features ({self.num_features}), "
                    f"but got: {x.shape[1]}."
                )
            warnings.warn(
                "input's size at dim=1 does not match num_features. You can silence this warning "
                "by not passing in num_features, which is not used because affine=False",
                stacklevel=2,
            )
        out = instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )
        return out[0] if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of ``(N, C, L)`` or ``(C, L)``.

    Args:
        num_features: ``C``. eps: added to the variance. momentum: running-statistics factor.
        affine: learn a per-channel weight and bias. Default: False.
        track_running_stats: keep running statistics and use them in eval mode. Default: False.
    """

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of ``(N, C, H, W)`` or ``(C, H, W)``; arguments as :class:`InstanceNorm1d`."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of ``(N, C, D, H, W)`` or ``(C, D, H, W)``; arguments as
    :class:`InstanceNorm1d`."""

    _spatial = 3


class _LazyInstanceNorm(_LazyNorm):
    def _feature_dim(self, input: Tensor) -> int:
        return input.shape[0] if input.ndim == self._spatial + 1 else input.shape[1]


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """:class:`InstanceNorm1d` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """:class:`InstanceNorm2d` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """:class:`InstanceNorm3d` whose ``num_features`` is read from the first input."""

    cls_to_become = InstanceNorm3d
