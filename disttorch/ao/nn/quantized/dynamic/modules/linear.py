"""``DynamicQuantizedLinear`` (``torch.ao.nn.quantized.dynamic.Linear``): a linear layer
whose weight is stored as qint8 and whose input is quantized to quint8 at every call, as
PyTorch's fbgemm backend does: the input's range chosen per call with 7-bit activations
(``reduce_range``), the products summed as integers, the sum scaled back to float32 and
the float bias added. With ``dtype=float16`` the weight is stored rounded to float16 (clamped
to its range) and the product is a float32 one."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...... import _dtype, _qscheme
from ......_tensor import Tensor
from ......kernels import quantize as qk
from ......nn.modules.module import Module
from ...modules.linear import Linear as StaticLinear
from ...modules.utils import fp16_weight, quantize_weight

__all__ = ["Linear", "linear_dynamic", "pack_weight", "quantize_input"]


def quantize_input(x: np.ndarray, reduce_range: bool = True) -> tuple:
    """``(q, scale, zero_point)``: ``x`` (float32) quantized to uint8 over its own range, as
    fbgemm quantizes a dynamic layer's input."""
    lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
    scale, zero_point = qk.choose_qparams(lo, hi, 0, 255, reduce_range)
    return qk.quantize(x, scale, zero_point, np.uint8), scale, zero_point


def pack_weight(weight: Tensor, observer: Any) -> Tensor:
    """A float weight as a dynamic layer keeps it, by its qconfig's weight ``observer``: qint8
    quantized with the qparams it observed, or (``float16``) rounded to float16, values
    beyond its range clamped with a warning as PyTorch's packing does, kept as float32."""
    if observer.dtype is _dtype.float16:
        return fp16_weight(weight)
    if observer.dtype is not _dtype.qint8:
        raise AssertionError(
            f"The only supported dtypes for dynamic quantized layers are qint8 and float16, got: {observer.dtype}"
        )
    observer(weight)
    return quantize_weight(weight.detach().float(), observer)


def linear_dynamic(x: Tensor, weight: Tensor, bias: Tensor | None, reduce_range: bool = True) -> Tensor:
    """``x @ weight.T + bias`` with ``x`` quantized per call (``quantized::linear_dynamic``),
    or with float16-rounded float ``weight`` a float32 product (``linear_dynamic_fp16``)."""
    arr = x.detach().numpy().astype(np.float32, copy=False)
    if arr.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({int(np.prod(arr.shape[:-1]))}x{arr.shape[-1]} "
            f"and {weight.shape[1]}x{weight.shape[0]})"
        )
    if not weight.is_quantized:
        out = arr @ weight.numpy().T
        return Tensor._make(out if bias is None else out + bias.detach().numpy())
    qx, x_scale, x_zp = quantize_input(arr, reduce_range)
    if weight.qscheme() is _qscheme.per_channel_affine:
        w_scale = weight.q_per_channel_scales().numpy().astype(np.float32)
        w_zp = weight.q_per_channel_zero_points().numpy()
    else:
        w_scale = np.array([weight.q_scale()], dtype=np.float32)
        w_zp = np.array([weight.q_zero_point()])
    b = None if bias is None else bias.detach().numpy()
    out = qk.int8_linear(qx, x_scale, x_zp, weight._data, w_scale, w_zp, b)
    return Tensor._make(out.astype(arr.dtype, copy=False))


class Linear(StaticLinear):
    """A dynamically quantized linear layer: ``y = dequant(quant(x) @ quant(W).T) + b``.
    As in PyTorch it is a static quantized ``Linear`` (weights, state dict, accessors) whose
    forward takes and gives float tensors.

    Args:
        in_features, out_features: as ``nn.Linear``.
        bias_: whether the layer has a bias (float, not quantized).
        dtype: the weight's dtype (``qint8``).
    """

    _version = 4

    def __init__(
        self, in_features: int, out_features: int, bias_: bool = True, dtype: Any = _dtype.qint8
    ) -> None:
        super().__init__(in_features, out_features, bias_, dtype)
        self.version = 4

    def forward(self, x: Tensor) -> Tensor:
        weight, bias = self._packed_params._weight_bias()
        return linear_dynamic(x, weight, bias, reduce_range=True)

    def _get_name(self) -> str:
        return "DynamicQuantizedLinear"

    def extra_repr(self) -> str:
        s = f"in_features={self.in_features}, out_features={self.out_features}, dtype={self._packed_params.dtype}"
        return s + (f", qscheme={self.weight().qscheme()}" if self.weight().is_quantized else "")

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "Linear":
        """The dynamically quantized form of ``mod`` (an ``nn.Linear`` with a ``qconfig``):
        its weight observed and quantized by ``mod.qconfig.weight()``, its bias kept."""
        from ......nn.modules.linear import Linear as FloatLinear

        if not isinstance(mod, FloatLinear):
            raise AssertionError(
                f"nn.quantized.dynamic.Linear.from_float only works for one of ['Linear'], got {type(mod)}"
            )
        if getattr(mod, "qconfig", None) is None or mod.qconfig.weight is None:
            raise AssertionError("Input float module must have qconfig defined")
        observer = mod.qconfig.weight()
        weight = pack_weight(mod.weight, observer)
        qlinear = cls(mod.in_features, mod.out_features, dtype=observer.dtype)
        qlinear.set_weight_bias(weight, mod.bias)
        return qlinear
