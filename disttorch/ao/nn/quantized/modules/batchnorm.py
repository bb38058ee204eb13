"""``QuantizedBatchNorm2d``: an eval-mode batch norm on quantized tensors, folded into one
affine map per channel from input integers to output integers (as PyTorch's kernel:
``rint((q - zp_in) * a + b)`` with ``a = gamma / sqrt(var + eps) * scale_in / scale_out``,
``b = (beta - mean * gamma / sqrt(var + eps)) / scale_out + zp_out``, in float32)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..... import _dtype, _qscheme
from ....._creation import tensor
from ....._qtensor import QuantizedTensor
from ....._tensor import Tensor
from .....nn.modules import batchnorm
from .....nn.modules.module import Module

__all__ = ["BatchNorm2d"]

_F32 = np.float32


class BatchNorm2d(batchnorm.BatchNorm2d):
    """The quantized form of ``nn.BatchNorm2d`` (its statistics, and output ``scale`` and
    ``zero_point`` buffers)."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(num_features, eps, momentum, True, True)
        self.register_buffer("scale", tensor(1.0))
        self.register_buffer("zero_point", tensor(0))

    def _get_name(self) -> str:
        return "QuantizedBatchNorm2d"

    def forward(self, input: Tensor) -> Tensor:
        if not input.is_quantized or input.dim() != 4:
            raise RuntimeError(
                "QuantizedBatchNorm2d expects a 4-d quantized input (put a QuantStub before it)"
            )
        alpha = self.weight.detach().numpy() * (_F32(1) / np.sqrt(self.running_var.numpy() + _F32(self.eps)))
        beta = self.bias.detach().numpy() - self.running_mean.numpy() * alpha
        out_scale, out_zp = _F32(self.scale.item()), int(self.zero_point.item())
        a = (alpha * _F32(input.q_scale()) / out_scale).reshape(1, -1, 1, 1)
        b = (beta / out_scale + _F32(out_zp)).reshape(1, -1, 1, 1)
        q = np.rint((input._data.astype(_F32) - _F32(input.q_zero_point())) * a + b)
        lo, hi = (0, 255) if input.dtype is _dtype.quint8 else (-128, 127)
        out = np.clip(q, lo, hi).astype(input._data.dtype)
        return QuantizedTensor._build(out, input.dtype, _qscheme.per_tensor_affine, float(out_scale), out_zp)

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "BatchNorm2d":
        """From a prepared float ``nn.BatchNorm2d``: its statistics and its observer's qparams."""
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new = cls(mod.num_features, mod.eps)
        new.weight, new.bias = mod.weight, mod.bias
        new.running_mean, new.running_var = mod.running_mean, mod.running_var
        new.scale, new.zero_point = scale, zero_point
        return new
