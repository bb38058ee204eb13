"""``nn.grad``: the input and weight gradients of ``conv1d/2d/3d`` as functions
(``conv2d_input``, ``conv2d_weight``, ...). Each is the vector-Jacobian product of the
convolution, which is linear in both arguments, computed by autograd through
``F.conv*d`` (so it uses the same kernels as training)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import _creation
from .._tensor import Tensor
from ..autograd import grad as _vjp
from ..autograd import grad_mode
from .functional import conv as _conv

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _input_grad(
    conv: Callable,
    input_size: Sequence[int],
    weight: Tensor,
    grad_output: Tensor,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    x = _creation.zeros(*[int(s) for s in input_size], dtype=grad_output.dtype, requires_grad=True)
    with grad_mode.enable_grad():
        out = conv(x, weight.detach(), None, stride, padding, dilation, groups)
    if tuple(out.shape) != tuple(grad_output.shape):
        raise RuntimeError(
            f"grad_output has shape {list(grad_output.shape)}, but the convolution of an input of "
            f"size {list(input_size)} gives {list(out.shape)}"
        )
    return _vjp(out, x, grad_output)[0]


def _weight_grad(
    conv: Callable,
    input: Tensor,
    weight_size: Sequence[int],
    grad_output: Tensor,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    w = _creation.zeros(*[int(s) for s in weight_size], dtype=input.dtype, requires_grad=True)
    with grad_mode.enable_grad():
        out = conv(input.detach(), w, None, stride, padding, dilation, groups)
    if tuple(out.shape) != tuple(grad_output.shape):
        raise RuntimeError(
            f"grad_output has shape {list(grad_output.shape)}, but the convolution with a weight of "
            f"size {list(weight_size)} gives {list(out.shape)}"
        )
    return _vjp(out, w, grad_output)[0]


def conv1d_input(
    input_size: Sequence[int],
    weight: Tensor,
    grad_output: Tensor,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """Gradient of ``conv1d`` with respect to its input (of size ``input_size``)."""
    return _input_grad(_conv.conv1d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(
    input: Tensor,
    weight_size: Sequence[int],
    grad_output: Tensor,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """Gradient of ``conv1d`` with respect to its weight (of size ``weight_size``)."""
    return _weight_grad(_conv.conv1d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(
    input_size: Sequence[int],
    weight: Tensor,
    grad_output: Tensor,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """Gradient of ``conv2d`` with respect to its input (of size ``input_size``)."""
    return _input_grad(_conv.conv2d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(
    input: Tensor,
    weight_size: Sequence[int],
    grad_output: Tensor,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """Gradient of ``conv2d`` with respect to its weight (of size ``weight_size``)."""
    return _weight_grad(_conv.conv2d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(
    input_size: Sequence[int],
    weight: Tensor,
    grad_output: Tensor,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """Gradient of ``conv3d`` with respect to its input (of size ``input_size``)."""
    return _input_grad(_conv.conv3d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(
    input: Tensor,
    weight_size: Sequence[int],
    grad_output: Tensor,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """Gradient of ``conv3d`` with respect to its weight (of size ``weight_size``)."""
    return _weight_grad(_conv.conv3d, input, weight_size, grad_output, stride, padding, dilation, groups)
