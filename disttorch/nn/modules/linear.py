"""Affine layers: ``Identity``, ``Linear``, ``Bilinear`` and ``LazyLinear``, with PyTorch's default
initialisation."""

from __future__ import annotations

import math
from typing import Any

from ..._creation import empty
from ..._tensor import Tensor
from .. import init
from ..functional.linear import bilinear, linear
from ..parameter import Parameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


def _empty_param(*shape: int, device: Any = None, dtype: Any = None) -> Parameter:
    return Parameter(empty(shape, device=device, dtype=dtype))


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    r"""Apply :math:`y = xA^T + b`.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: if ``False``, the layer learns no additive bias. Default: ``True``.

    Weight and bias start from :math:`\mathcal{U}(-\sqrt{k}, \sqrt{k})` with
    :math:`k = 1/\text{in\_features}` (``kaiming_uniform_(a=sqrt(5))`` on the weight).
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = _empty_param(out_features, in_features, device=device, dtype=dtype)
        if bias:
            self.bias = _empty_param(out_features, device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from PyTorch's default distributions."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return linear(input, self.weight, self.bias)  # through autocast

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under PyTorch's name for ``MultiheadAttention.out_proj`` (so reprs and
    pickled models that reference ``nn.modules.linear.NonDynamicallyQuantizableLinear`` match)."""


class Bilinear(Module):
    r"""Apply :math:`y = x_1^T A x_2 + b`.

    Args:
        in1_features, in2_features: sizes of the two inputs.
        out_features: size of the output.
        bias: if ``False``, no additive bias. Default: ``True``.

    Weight and bias start from :math:`\mathcal{U}(-1/\sqrt{\text{in1\_features}},
    1/\sqrt{\text{in1\_features}})`.
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = _empty_param(out_features, in1_features, in2_features, device=device, dtype=dtype)
        if bias:
            self.bias = _empty_param(out_features, device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from U(-1/sqrt(in1), 1/sqrt(in1))."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """:class:`Linear` whose ``in_features`` is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, out_features, bias, device, dtype)
        self._lazy_params("weight", "bias")

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        self.in_features = input.shape[-1]
        self._materialize_all({"weight": (self.out_features, self.in_features), "bias": (self.out_features,)})
