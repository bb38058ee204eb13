"""``FloatFunctional`` and ``QFunctional``: additions, products and concatenations inside a
quantized model. ``FloatFunctional`` computes in float and passes each result through its
``activation_post_process`` (an observer after ``prepare``); ``convert`` turns it into
``QFunctional``, which computes on quantized tensors and requantizes every result with the
scale and zero point the observer chose (dequantize, float32 op, quantize: PyTorch's values)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..... import _dtype, _qscheme
from ....._qtensor import QuantizedTensor
from ....._tensor import Tensor
from .....kernels import quantize as qk
from .....nn.modules.linear import Identity
from .....nn.modules.module import Module
from .....ops import elementwise, shape

__all__ = ["FloatFunctional", "QFunctional"]


class FloatFunctional(Module):
    """Float ``add``/``add_scalar``/``mul``/``cat``/``add_relu`` whose results are observed."""

    def __init__(self) -> None:
        super().__init__()
        self.activation_post_process = Identity()

    def forward(self, x: Any) -> Any:
        raise RuntimeError(
            "FloatFunctional is not intended to use the 'forward'. Please use the underlying operation"
        )

    def add(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(elementwise.add(x, y))

    def add_scalar(self, x: Tensor, y: float) -> Tensor:
        return elementwise.add(x, y)  # PyTorch does not observe a scalar addition

    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(elementwise.mul(x, y))

    def cat(self, x: list, dim: int = 0) -> Tensor:
        return self.activation_post_process(shape.cat(x, dim=dim))

    def add_relu(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(elementwise.relu(elementwise.add(x, y)))


class QFunctional(Module):
    """The quantized form of ``FloatFunctional``: quint8 inputs, results requantized with
    ``scale`` and ``zero_point``."""

    def __init__(self) -> None:
        super().__init__()
        self.scale, self.zero_point = 1.0, 0
        self.activation_post_process = Identity()  # as PyTorch's (it shows in the repr)

    def forward(self, x: Any) -> Any:
        raise RuntimeError(
            "Functional is not intended to use the 'forward'. Please use the underlying operation"
        )

    def _requantize(self, values: np.ndarray, relu: bool = False) -> QuantizedTensor:
        q = qk.quantize(values.astype(np.float32, copy=False), self.scale, self.zero_point, np.uint8)
        if relu:
            q = np.maximum(q, np.uint8(self.zero_point))
        return QuantizedTensor._build(
            q, _dtype.quint8, _qscheme.per_tensor_affine, float(self.scale), int(self.zero_point)
        )

    def add(self, x: Tensor, y: Tensor) -> QuantizedTensor:
        return self._requantize(_values(x) + _values(y))

    def add_scalar(self, x: Tensor, y: float) -> QuantizedTensor:
        return self._requantize(_values(x) + np.float32(y))

    def mul(self, x: Tensor, y: Tensor) -> QuantizedTensor:
        return self._requantize(_values(x) * _values(y))

    def cat(self, x: list, dim: int = 0) -> QuantizedTensor:
        return self._requantize(np.concatenate([_values(t) for t in x], axis=dim))

    def add_relu(self, x: Tensor, y: Tensor) -> QuantizedTensor:
        return self._requantize(_values(x) + _values(y), relu=True)

    def _get_name(self) -> str:
        return "QFunctional"

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}"

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> "QFunctional":
        """From a prepared ``FloatFunctional``: the qparams its observer chose."""
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        q = cls()
        q.scale, q.zero_point = float(scale.item()), int(zero_point.item())
        return q


def _values(t: Tensor) -> np.ndarray:
    if not t.is_quantized:
        raise RuntimeError("QFunctional expects quantized tensors (put a QuantStub before it)")
    return t.dequantize().numpy()
