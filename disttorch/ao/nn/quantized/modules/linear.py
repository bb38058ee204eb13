"""``LinearPackedParams``: a quantized linear layer's weight (a qint8 tensor) and float bias,
kept together as PyTorch keeps them (its ``state_dict`` holds ``dtype`` and the
``(weight, bias)`` pair under ``_packed_params``); ``Linear``: the static quantized linear
layer (quint8 in, quint8 out with its own output scale and zero point)."""

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
from .utils import fp16_weight, quantize_weight, record_version

__all__ = ["LinearPackedParams", "Linear"]


class LinearPackedParams(Module):
    """The weight and bias of a quantized linear layer (PyTorch packs them for fbgemm; here
    they stay a quantized tensor and a float tensor)."""

    _version = 3

    def __init__(self, dtype: _dtype.dtype = _dtype.qint8) -> None:
        super().__init__()
        if dtype not in (_dtype.qint8, _dtype.float16):
            raise RuntimeError(f"Unsupported dtype on dynamic quantized linear: {dtype} (qint8 or float16)")
        self.dtype = dtype
        self._packed_params: tuple = ()

    def set_weight_bias(self, weight: Tensor, bias: Tensor | None) -> None:
        """Keep ``weight`` (quantized qint8; for ``float16`` params a float weight, stored
        rounded to float16) and ``bias`` (float or None)."""
        if self.dtype is _dtype.float16:
            if weight.is_quantized:
                raise RuntimeError("the weight of a float16 dynamic linear layer must be a float tensor")
            weight = fp16_weight(weight)
        elif not weight.is_quantized or weight.dtype is not _dtype.qint8:
            raise RuntimeError(
                f"the weight of a quantized linear layer must be a qint8 tensor, got {weight.dtype}"
            )
        self._packed_params = (weight, bias)

    def _weight_bias(self) -> tuple:
        return self._packed_params

    def forward(self, x: Any) -> Any:
        return x

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        record_version(destination, prefix, self._version)
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(
        self,
        state_dict: Any,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list,
        unexpected_keys: list,
        error_msgs: list,
    ) -> None:
        for key in ("dtype", "_packed_params"):
            if prefix + key not in state_dict:
                if strict:
                    missing_keys.append(prefix + key)
                return
        self.dtype = state_dict.pop(prefix + "dtype")
        self.set_weight_bias(*state_dict.pop(prefix + "_packed_params"))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def __repr__(self) -> str:
        return repr(self._weight_bias())


class Linear(Module):
    """A static quantized linear layer (``QuantizedLinear``): quantized input, qint8 weight,
    float bias, output requantized with ``scale``/``zero_point`` as fbgemm does."""

    _version = 3

    def __init__(
        self, in_features: int, out_features: int, bias_: bool = True, dtype: Any = _dtype.qint8
    ) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.scale, self.zero_point = 1.0, 0
        self._packed_params = LinearPackedParams(dtype)
        zeros = Tensor._make(np.zeros((out_features, in_features), np.float32))
        self._packed_params.set_weight_bias(
            zeros if dtype is _dtype.float16 else quantize_per_tensor(zeros, 1.0, 0, dtype),
            Tensor._make(np.zeros(out_features, np.float32)) if bias_ else None,
        )

    def forward(self, x: Tensor) -> Tensor:
        if not x.is_quantized or x.dtype is not _dtype.quint8:
            raise RuntimeError("QuantizedLinear expects a quint8 quantized input (put a QuantStub before it)")
        weight, bias = self._packed_params._weight_bias()
        if weight.qscheme() is _qscheme.per_channel_affine:
            w_scale = weight.q_per_channel_scales().numpy()
        else:
            w_scale = np.array([weight.q_scale()])
        rows = x._data.reshape(-1, x._data.shape[-1])
        out = qk.int8_linear_requantized(
            rows,
            x.q_scale(),
            x.q_zero_point(),
            weight._data,
            w_scale,
            None if bias is None else bias.detach().numpy(),
            self.scale,
            self.zero_point,
        )
        out = out.reshape(x._data.shape[:-1] + (self.out_features,))
        return QuantizedTensor._build(
            out, _dtype.quint8, _qscheme.per_tensor_affine, float(self.scale), int(self.zero_point)
        )

    def _get_name(self) -> str:
        return "QuantizedLinear"

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
            f"zero_point={self.zero_point}, qscheme={self.weight().qscheme()}"
        )

    def __repr__(self) -> str:  # PyTorch hides the packed parameters
        return f"{self._get_name()}({self.extra_repr()})"

    def weight(self) -> Tensor:
        """The quantized (qint8) weight."""
        return self._packed_params._weight_bias()[0]

    def bias(self) -> Tensor | None:
        """The float bias (or None)."""
        return self._packed_params._weight_bias()[1]

    def set_weight_bias(self, w: Tensor, b: Tensor | None) -> None:
        """Replace the quantized weight and the float bias."""
        self._packed_params.set_weight_bias(w, b)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        record_version(destination, prefix, self._version)
        super()._save_to_state_dict(destination, prefix, keep_vars)
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
        for key, cast in (("scale", float), ("zero_point", int)):
            if prefix + key in state_dict:
                setattr(self, key, cast(state_dict.pop(prefix + key).item()))
            elif strict:
                missing.append(prefix + key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing, unexpected, errors)

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "Linear":
        """From a prepared float ``nn.Linear``: its weight quantized by ``qconfig.weight()``,
        its output scale and zero point from its ``activation_post_process`` observer."""
        if not hasattr(mod, "activation_post_process"):
            raise AssertionError(
                "Input float module must have observer attached (call prepare and calibrate first)"
            )
        weight_observer = getattr(mod, "weight_fake_quant", None)  # a QAT layer's, else a fresh one
        if weight_observer is None:
            weight_observer = mod.qconfig.weight()
        weight_observer(mod.weight)
        qlinear = cls(mod.in_features, mod.out_features, dtype=weight_observer.dtype)
        qlinear.set_weight_bias(quantize_weight(mod.weight.detach().float(), weight_observer), mod.bias)
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        qlinear.scale, qlinear.zero_point = float(scale.item()), int(zero_point.item())
        return qlinear
