"""Per-sample normalisation layers: ``LayerNorm``, ``GroupNorm``, ``RMSNorm``,
``LocalResponseNorm`` and ``CrossMapLRN2d``."""

from __future__ import annotations

from typing import Any, Sequence

from ..._creation import empty
from ..._tensor import Tensor
from .. import init
from ..functional.norm_extra import cross_map_lrn2d, local_response_norm, rms_norm
from ..functional.normalization import group_norm, layer_norm
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


class LayerNorm(Module):
    r"""Layer normalisation over the trailing ``normalized_shape`` dims.

    Args:
        normalized_shape: an int or the trailing shape to normalise over.
        eps: added to the variance. Default: 1e-5.
        elementwise_affine: learn a weight (ones) of ``normalized_shape``. Default: True.
        bias: with ``elementwise_affine``, also learn a bias (zeros). Default: True.
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        has_bias = elementwise_affine and bias
        shape = self.normalized_shape
        self.register_parameter(
            "weight",
            Parameter(empty(*shape, device=device, dtype=dtype)) if elementwise_affine else None,
        )
        self.register_parameter(
            "bias", Parameter(empty(*shape, device=device, dtype=dtype)) if has_bias else None
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class GroupNorm(Module):
    r"""Group normalisation: ``num_channels`` split into ``num_groups`` groups, each
    normalised per sample, then a per-channel affine.

    Args:
        num_groups: number of groups (must divide ``num_channels``).
        num_channels: ``C`` of the ``(N, C, *)`` input.
        eps: added to the variance. Default: 1e-5.
        affine: learn a per-channel weight (ones) and bias (zeros). Default: True.
        bias: with ``affine``, also learn the bias. Default: True.
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        has_bias = affine and bias
        self.register_parameter(
            "weight", Parameter(empty(num_channels, device=device, dtype=dtype)) if affine else None
        )
        self.register_parameter(
            "bias",
            Parameter(empty(num_channels, device=device, dtype=dtype)) if has_bias else None,
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    r"""Root-mean-square normalisation over the trailing ``normalized_shape`` dims.

    Args:
        normalized_shape: an int or the trailing shape to normalise over.
        eps: added to the mean square; None uses the input dtype's machine epsilon.
        elementwise_affine: learn a weight (ones) of ``normalized_shape``. Default: True.
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.register_parameter(
            "weight",
            Parameter(empty(*self.normalized_shape, device=device, dtype=dtype))
            if elementwise_affine
            else None,
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight to ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Normalisation across neighbouring channels; see
    :func:`~disttorch.nn.functional.local_response_norm`."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """Local response normalisation across channels of 4-D ``(N, C, H, W)`` input, Lua
    Torch's layer with its window (see ``F.norm_extra.cross_map_lrn2d``). Differs from
    PyTorch in backward: PyTorch keeps Lua Torch's hand-written backward, which is not the
    gradient of this forward; disttorch returns the exact gradient."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)
