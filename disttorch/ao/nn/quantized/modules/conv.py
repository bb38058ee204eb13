"""``QuantizedConv2d`` (``torch.ao.nn.quantized.Conv2d``): a static quantized 2-d convolution
(quint8 in and out, qint8 weights per tensor or per output channel, float bias)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..... import _dtype, _qscheme
from ....._creation import tensor
from ....._qtensor import QuantizedTensor
from ....._quantize import quantize_per_tensor
from ....._tensor import Tensor
from .....kernels import quantize as qk
from .....nn.modules.module import Module
from .utils import quantize_weight, record_version

__all__ = ["Conv2d"]


def _pair(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (int(v), int(v))


class Conv2d(Module):
    """A quantized Conv2d; made by ``convert`` from a prepared ``nn.Conv2d``."""

    _version = 3

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
    ) -> None:
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError(f"quantized Conv2d supports padding_mode='zeros', got {padding_mode!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.output_padding, self.transposed, self.padding_mode = (0, 0), False, padding_mode
        self.scale, self.zero_point = 1.0, 0
        shape = (out_channels, in_channels // groups) + self.kernel_size
        weight = quantize_per_tensor(Tensor._make(np.zeros(shape, np.float32)), 1.0, 0, _dtype.qint8)
        self.set_weight_bias(weight, Tensor._make(np.zeros(out_channels, np.float32)) if bias else None)

    def set_weight_bias(self, w: Tensor, b: Tensor | None) -> None:
        """Replace the quantized (qint8) weight and the float bias."""
        if not w.is_quantized or w.dtype is not _dtype.qint8:
            raise RuntimeError(f"the weight of a quantized Conv2d must be a qint8 tensor, got {w.dtype}")
        self._weight, self._bias = w, None if b is None else b.detach()  # not a Parameter here

    def weight(self) -> Tensor:
        return self._weight

    def bias(self) -> Tensor | None:
        return self._bias

    def _weight_scales(self) -> np.ndarray:
        w = self._weight
        if w.qscheme() is _qscheme.per_channel_affine:
            if w.q_per_channel_axis() != 0:
                raise NotImplementedError("quantized Conv2d weights are per output channel (axis 0)")
            return w.q_per_channel_scales().numpy()
        return np.array([w.q_scale()])

    def forward(self, x: Tensor) -> Tensor:
        if not x.is_quantized or x.dtype is not _dtype.quint8 or x.dim() != 4:
            raise RuntimeError(
                f"{self._get_name()} expects a 4-d quint8 quantized input (put a QuantStub before it)"
            )
        out = qk.conv2d_requantized(
            x._data,
            x.q_scale(),
            x.q_zero_point(),
            self._weight._data,
            self._weight_scales(),
            None if self._bias is None else self._bias.detach().numpy(),
            self.scale,
            self.zero_point,
            self.stride,
            self.padding,
            self.dilation,
            self.groups,
        )
        return QuantizedTensor._build(
            self._post(out),
            _dtype.quint8,
            _qscheme.per_tensor_affine,
            float(self.scale),
            int(self.zero_point),
        )

    def _post(self, out: np.ndarray) -> np.ndarray:
        return out

    def _get_name(self) -> str:
        return "QuantizedConv2d"

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"scale={self.scale}, zero_point={self.zero_point}"
        )
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self._bias is None:
            s += ", bias=False"
        return s

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        record_version(destination, prefix, self._version)
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "weight"] = self._weight
        destination[prefix + "bias"] = self._bias
        destination[prefix + "scale"] = tensor(self.scale)
        destination[prefix + "zero_point"] = tensor(self.zero_point)

    def _load_from_state_dict(
        self,
        state_dict: Any,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing: list,
        unexpected: list,
        errors: list,
    ) -> None:
        keys = ("weight", "bias", "scale", "zero_point")
        absent = [prefix + k for k in keys if prefix + k not in state_dict]
        if absent:
            if strict:
                missing.extend(absent)
            return
        self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        self.scale = float(state_dict.pop(prefix + "scale").item())
        self.zero_point = int(state_dict.pop(prefix + "zero_point").item())
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "Conv2d":
        """From a prepared float ``nn.Conv2d`` (or the conv of a fused module) or a trained QAT
        conv (its batch norm folded in first): its weight quantized by its fake quantizer or
        ``qconfig.weight()``, its output qparams from its observer."""
        observer = getattr(mod, "activation_post_process", None)
        conv = mod[0] if hasattr(mod, "__getitem__") else mod
        if observer is None:
            raise AssertionError(
                "Input float module must have observer attached (call prepare and calibrate first)"
            )
        if hasattr(mod, "fold_bn"):  # QAT ConvBn2d / ConvBnReLU2d
            mod.fold_bn()
        weight_observer = getattr(mod, "weight_fake_quant", None)  # a QAT layer's, else a fresh one
        if weight_observer is None:
            weight_observer = mod.qconfig.weight()
        weight_observer(conv.weight)
        q = cls(
            conv.in_channels,
            conv.out_channels,
            conv.kernel_size,
            conv.stride,
            conv.padding,
            conv.dilation,
            conv.groups,
            conv.bias is not None,
            conv.padding_mode,
        )
        q.set_weight_bias(quantize_weight(conv.weight.detach().float(), weight_observer), conv.bias)
        scale, zero_point = observer.calculate_qparams()
        q.scale, q.zero_point = float(scale.item()), int(zero_point.item())
        return q
