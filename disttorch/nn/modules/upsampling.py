"""``Upsample`` and the fixed-mode ``UpsamplingNearest2d`` / ``UpsamplingBilinear2d``
(``F.interpolate`` as a layer)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ..functional import interpolation as F
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resize to ``size`` or by ``scale_factor`` with ``mode`` (``'nearest'``, ``'linear'``,
    ``'bilinear'``, ``'bicubic'``, ``'trilinear'``, ...); see
    :func:`~disttorch.nn.functional.interpolate`."""

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = (
            float(scale_factor)
            if isinstance(scale_factor, (int, float))
            else (tuple(float(f) for f in scale_factor) if scale_factor is not None else None)
        )
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        info = (
            f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        )
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """2-D nearest-neighbour upsampling (``Upsample(mode='nearest')``)."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling with ``align_corners=True`` (``Upsample(mode='bilinear')``)."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
