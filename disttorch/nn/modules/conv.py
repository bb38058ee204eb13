"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d`` and ``ConvTranspose1d/2d/3d``
(one base class), with PyTorch's arguments, default initialisation, padding modes and
repr; and their lazy forms ``LazyConv*`` / ``LazyConvTranspose*`` (``in_channels`` read
from the first input)."""

from __future__ import annotations

import math
from typing import Any

from ..._creation import empty
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..functional.conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
from ..parameter import Parameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value: Any, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value)
    return (int(value),) * n


class _ConvNd(Module):
    """Shared state and behaviour of ``Conv1d/2d/3d``; subclasses set ``_dims`` and ``_conv``."""

    _dims = 0
    _conv = staticmethod(conv2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
        *,
        transposed: bool = False,
        output_padding: Any = 0,
    ) -> None:
        super().__init__()
        d = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size = _ntuple(kernel_size, d)
        self.stride = _ntuple(stride, d)
        self.dilation = _ntuple(dilation, d)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _ntuple(padding, d)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {set(_PADDING_MODES)}, but got padding_mode={padding_mode!r}"
            )
        self.in_channels, self.out_channels = in_channels, out_channels
        self.groups, self.padding_mode = groups, padding_mode
        self.transposed, self.output_padding = transposed, _ntuple(output_padding, d)
        # F.pad order (last dim first, (left, right) each) for non-zero padding modes
        self._reversed_padding_repeated_twice = self._explicit_padding()
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty((*shape, *self.kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _explicit_padding(self) -> list:
        pads: list = []
        for i in reversed(range(self._dims)):
            if self.padding == "valid":
                lo = hi = 0
            elif self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                lo, hi = total // 2, total - total // 2
            else:
                lo = hi = self.padding[i]
            pads += [lo, hi]
        return pads

    def reset_parameters(self) -> None:
        """PyTorch's default: ``kaiming_uniform_(a=sqrt(5))`` on the weight, and the bias from
        ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        """The convolution with this layer's settings and the given ``weight``/``bias``, as
        PyTorch's (subclasses and LoRA-style wrappers call it with a modified weight)."""
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return self._conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    r"""1-D convolution over ``(N, C_in, L)`` or ``(C_in, L)`` inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, dilation: ints or one-element tuples.
        padding: an int, a tuple, ``'valid'`` or ``'same'``. Default: 0.
        groups: blocked connections from input to output channels. Default: 1.
        bias: learn an additive bias. Default: True.
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Weight: ``(out_channels, in_channels / groups, kernel_size)``, initialised with
    ``kaiming_uniform_(a=sqrt(5))``; bias from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.
    """

    _dims = 1
    _conv = staticmethod(conv1d)


class Conv2d(_ConvNd):
    r"""2-D convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, dilation: ints or ``(h, w)`` tuples.
        padding: an int, a tuple, ``'valid'`` or ``'same'``. Default: 0.
        groups: blocked connections from input to output channels. Default: 1.
        bias: learn an additive bias. Default: True.
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Weight: ``(out_channels, in_channels / groups, kH, kW)``, initialised with
    ``kaiming_uniform_(a=sqrt(5))``; bias from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.
    """

    _dims = 2
    _conv = staticmethod(conv2d)


class Conv3d(_ConvNd):
    r"""3-D convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` inputs; arguments
    as :class:`Conv2d` with three spatial dims."""

    _dims = 3
    _conv = staticmethod(conv3d)


class _ConvTransposeNd(_ConvNd):
    """Shared ``__init__``/``forward`` of the transposed convolutions."""

    _conv_transpose = staticmethod(conv_transpose2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} takes an int or tuple padding, got padding={padding!r}")
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
            transposed=True,
            output_padding=output_padding,
        )

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple:
        """``output_padding``, or the one that makes the output ``output_size`` long."""
        if output_size is None:
            return self.output_padding
        d = self._dims
        wanted = tuple(int(v) for v in output_size)[-d:]
        pads = []
        for i in range(d):
            smallest = (
                (input.shape[-d + i] - 1) * self.stride[i]
                - 2 * self.padding[i]
                + self.dilation[i] * (self.kernel_size[i] - 1)
                + 1
            )
            extra = wanted[i] - smallest
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                raise ValueError(
                    f"requested an output size of {list(wanted)}, but valid sizes "
                    f"range from {smallest} to "
                    f"{smallest + max(self.stride[i], self.dilation[i]) - 1} "
                    f"along dim {i}"
                )
            pads.append(extra)
        return tuple(pads)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        return self._conv_transpose(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self._output_padding(input, output_size),
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    r"""1-D transposed convolution over ``(N, C_in, L)`` or ``(C_in, L)`` inputs.

    Args:
        in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias: as
            the convolution this one transposes.
        output_padding: extra length added to one side of the output.

    Weight: ``(in_channels, out_channels / groups, kernel_size)``, initialised as
    :class:`Conv1d`'s. ``forward(input, output_size=None)``.
    """

    _dims = 1
    _conv_transpose = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    r"""2-D transposed convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` inputs.

    Args:
        in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias: as
            the convolution this one transposes.
        output_padding: extra size added to one side of each output dim.

    Weight: ``(in_channels, out_channels / groups, kH, kW)``, initialised as
    :class:`Conv2d`'s. ``forward(input, output_size=None)`` picks the ``output_padding``
    that gives ``output_size``.
    """

    _dims = 2
    _conv_transpose = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    r"""3-D transposed convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` inputs;
    arguments as :class:`ConvTranspose2d`, weight ``(in_channels, out_channels / groups, kD, kH, kW)``."""

    _dims = 3
    _conv_transpose = staticmethod(conv_transpose3d)


class _LazyConvMixin(LazyModuleMixin):
    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        unbatched = input.ndim == self._dims + 1
        self.in_channels = input.shape[0] if unbatched else input.shape[1]
        if self.in_channels % self.groups:
            raise ValueError("in_channels must be divisible by groups")
        shape = (
            (self.in_channels, self.out_channels // self.groups)
            if self.transposed
            else (self.out_channels, self.in_channels // self.groups)
        )
        self._materialize_all({"weight": shape + tuple(self.kernel_size), "bias": (self.out_channels,)})


class _LazyConvNd(_LazyConvMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        # in_channels is unknown: build with groups channels (divisible), then make lazy
        super().__init__(
            groups,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )
        self.in_channels = 0
        self._lazy_params("weight", "bias")


class LazyConv1d(_LazyConvNd, Conv1d):
    """:class:`Conv1d` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvNd, Conv2d):
    """:class:`Conv2d` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvNd, Conv3d):
    """:class:`Conv3d` whose ``in_channels`` is read from the first input."""

    cls_to_become = Conv3d


class _LazyConvTransposeNd(_LazyConvMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            groups,
            out_channels,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            bias,
            dilation,
            padding_mode,
            device,
            dtype,
        )
        self.in_channels = 0
        self._lazy_params("weight", "bias")


class LazyConvTranspose1d(_LazyConvTransposeNd, ConvTranspose1d):
    """:class:`ConvTranspose1d` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeNd, ConvTranspose2d):
    """:class:`ConvTranspose2d` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeNd, ConvTranspose3d):
    """:class:`ConvTranspose3d` whose ``in_channels`` is read from the first input."""

    cls_to_become = ConvTranspose3d
