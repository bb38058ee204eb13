"""Fold an eval-mode batch norm into the convolution or linear layer before it:
``fuse_conv_bn_eval``, ``fuse_conv_bn_weights``, ``fuse_linear_bn_eval``,
``fuse_linear_bn_weights`` (inference only: the running statistics become constants)."""

from __future__ import annotations

import copy

from ... import _creation
from ..._tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` computing ``bn(conv(x))`` (both in eval mode) in one convolution."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("batch norm without running statistics cannot be fused")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias, transpose
    )
    return fused


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple:
    """``(weight, bias)`` of the convolution equal to the convolution followed by the batch
    norm with running statistics ``bn_rm``/``bn_rv`` and affine ``bn_w``/``bn_b``."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _creation.zeros_like(bn_rm)
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = [1, -1] + [1] * (conv_w.ndim - 2) if transpose else [-1, 1] + [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(w_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(b_dtype)
    return Parameter(fused_w.detach(), conv_w.requires_grad), Parameter(
        fused_b.detach(), conv_b.requires_grad
    )


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` computing ``bn(linear(x))`` (both in eval mode) in one layer."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError(
            "To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("batch norm without running statistics cannot be fused")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor,
    bn_b: Tensor,
) -> tuple:
    """``(weight, bias)`` of the linear layer equal to the layer followed by the batch norm."""
    if linear_b is None:
        linear_b = _creation.zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(fused_w.detach(), linear_w.requires_grad), Parameter(
        fused_b.detach(), linear_b.requires_grad
    )
