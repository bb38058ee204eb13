"""``LinearPackedParams``: a quantized linear layer's weight (a qint8 tensor) and float bias,
kept together as PyTorch keeps them (its ``state_dict`` holds ``dtype`` and the
``(weight, bias)`` pair under ``_packed_params``)."""

from __future__ import annotations

from typing import Any

from ..... import _dtype
from ....._tensor import Tensor
from .....nn.modules.module import Module
from .utils import record_version

__all__ = ["LinearPackedParams"]


class LinearPackedParams(Module):
    """The weight and bias of a quantized linear layer (PyTorch packs them for fbgemm; here
    they stay a quantized tensor and a float tensor)."""

    _version = 3

    def __init__(self, dtype: _dtype.dtype = _dtype.qint8) -> None:
        super().__init__()
        if dtype is not _dtype.qint8:
            raise RuntimeError(
                f"Unsupported dtype on dynamic quantized linear: {dtype} (disttorch has qint8)"
            )
        self.dtype = dtype
        self._packed_params: tuple = ()

    def set_weight_bias(self, weight: Tensor, bias: Tensor | None) -> None:
        """Keep ``weight`` (quantized qint8) and ``bias`` (float or None)."""
        if not weight.is_quantized or weight.dtype is not _dtype.qint8:
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
