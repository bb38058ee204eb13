"""``torchvision.ops.misc``: the building blocks torchvision's (and timm's) models share:
a frozen batch norm, conv-norm-activation stacks, an MLP, squeeze-and-excitation, Permute."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import disttorch as torch
from disttorch import nn
from disttorch._tensor import Tensor

__all__ = [
    "Conv2dNormActivation",
    "Conv3dNormActivation",
    "ConvNormActivation",
    "FrozenBatchNorm2d",
    "MLP",
    "Permute",
    "SqueezeExcitation",
]

interpolate = nn.functional.interpolate


def _ntuple(value: int | Sequence[int], n: int) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, Sequence) else (value,) * n


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm2d whose statistics and affine parameters are buffers, never updated.

    Args:
        num_features: ``C`` of an input ``(N, C, H, W)``.
        eps: added to the variance for numerical stability. Default: 1e-5
    """

    def __init__(self, num_features: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", torch.ones(num_features))
        self.register_buffer("bias", torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        state_dict.pop(prefix + "num_batches_tracked", None)  # a BatchNorm2d's state loads here
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def forward(self, x: Tensor) -> Tensor:
        scale = self.weight.reshape(1, -1, 1, 1) * (self.running_var.reshape(1, -1, 1, 1) + self.eps).rsqrt()
        shift = self.bias.reshape(1, -1, 1, 1) - self.running_mean.reshape(1, -1, 1, 1) * scale
        return x * scale + shift

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.weight.shape[0]}, eps={self.eps})"


class ConvNormActivation(nn.Sequential):
    """A convolution, then a norm layer and an activation (either may be None). Use
    :class:`Conv2dNormActivation` or :class:`Conv3dNormActivation`; this base warns."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...] = 3,
        stride: int | tuple[int, ...] = 1,
        padding: int | tuple[int, ...] | str | None = None,
        groups: int = 1,
        norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm2d,
        activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
        dilation: int | tuple[int, ...] = 1,
        inplace: bool | None = True,
        bias: bool | None = None,
        conv_layer: Callable[..., nn.Module] = nn.Conv2d,
    ) -> None:
        if padding is None:  # "same" for odd kernels at stride 1
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                n = len(kernel_size) if isinstance(kernel_size, Sequence) else len(dilation)
                kernel_size, dilation = _ntuple(kernel_size, n), _ntuple(dilation, n)
                padding = tuple((k - 1) // 2 * d for k, d in zip(kernel_size, dilation))
        if bias is None:
            bias = norm_layer is None
        layers = [
            conv_layer(
                in_channels,
                out_channels,
                kernel_size,
                stride,
                padding,
                dilation=dilation,
                groups=groups,
                bias=bias,
            )
        ]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels
        if type(self) is ConvNormActivation:
            warnings.warn(
                "Don't use ConvNormActivation directly, please use Conv2dNormActivation and "
                "Conv3dNormActivation instead.",
                stacklevel=2,
            )


class Conv2dNormActivation(ConvNormActivation):
    """Conv2d, then ``norm_layer`` (default BatchNorm2d) and ``activation_layer`` (default
    ReLU); ``padding`` defaults to ``(kernel_size - 1) // 2 * dilation``, ``bias`` to
    ``norm_layer is None``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int] = 3,
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] | str | None = None,
        groups: int = 1,
        norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm2d,
        activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
        dilation: int | tuple[int, int] = 1,
        inplace: bool | None = True,
        bias: bool | None = None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
            activation_layer, dilation, inplace, bias, nn.Conv2d,
        )  # fmt: skip


class Conv3dNormActivation(ConvNormActivation):
    """:class:`Conv2dNormActivation` in three dimensions (Conv3d, BatchNorm3d by default)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int, int] = 3,
        stride: int | tuple[int, int, int] = 1,
        padding: int | tuple[int, int, int] | str | None = None,
        groups: int = 1,
        norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm3d,
        activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
        dilation: int | tuple[int, int, int] = 1,
        inplace: bool | None = True,
        bias: bool | None = None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, groups, norm_layer,
            activation_layer, dilation, inplace, bias, nn.Conv3d,
        )  # fmt: skip


class SqueezeExcitation(nn.Module):
    """Squeeze-and-Excitation (arXiv:1709.01507): the input scaled per channel by
    ``scale_activation(fc2(activation(fc1(avgpool(input)))))``, ``fc`` being 1x1 convolutions."""

    def __init__(
        self,
        input_channels: int,
        squeeze_channels: int,
        activation: Callable[..., nn.Module] = nn.ReLU,
        scale_activation: Callable[..., nn.Module] = nn.Sigmoid,
    ) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input: Tensor) -> Tensor:
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(input)))))

    def forward(self, input: Tensor) -> Tensor:
        return self._scale(input) * input


class MLP(nn.Sequential):
    """Linear layers of widths ``hidden_channels``, each but the last followed by
    ``norm_layer`` (if any), ``activation_layer`` and Dropout(``dropout``); the last by Dropout.
    ``inplace`` (None: the layers' defaults) goes to the activation and the dropouts."""

    def __init__(
        self,
        in_channels: int,
        hidden_channels: list[int],
        norm_layer: Callable[..., nn.Module] | None = None,
        activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
        inplace: bool | None = None,
        bias: bool = True,
        dropout: float = 0.0,
    ) -> None:
        kwargs = {} if inplace is None else {"inplace": inplace}
        layers: list[nn.Module] = []
        width = in_channels
        for hidden in hidden_channels[:-1]:
            layers.append(nn.Linear(width, hidden, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden))
            layers += [activation_layer(**kwargs), nn.Dropout(dropout, **kwargs)]
            width = hidden
        layers += [nn.Linear(width, hidden_channels[-1], bias=bias), nn.Dropout(dropout, **kwargs)]
        super().__init__(*layers)


class Permute(nn.Module):
    """Returns its input with dimensions permuted to ``dims`` (a view)."""

    def __init__(self, dims: list[int]) -> None:
        super().__init__()
        self.dims = dims

    def forward(self, x: Tensor) -> Tensor:
        return torch.permute(x, self.dims)
