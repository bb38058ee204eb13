"""``QuantizedEmbedding`` and ``QuantizedEmbeddingBag`` (``torch.ao.nn.quantized.Embedding`` /
``EmbeddingBag``): weight-only quantized lookup tables. Each row is quint8 with its own
float scale and float zero point (``per_channel_affine_float_qparams``, from
``float_qparams_weight_only_qconfig``); a looked-up row is ``fma(scale, q, -zero_point *
scale)`` in float32, and a bag sums its rows in order as fbgemm's kernel does."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..... import _dtype, _qscheme
from ....._quantize import quantize_per_channel
from ....._tensor import Tensor
from .....nn.modules.module import Module
from .....nn.modules.sparse import Embedding as FloatEmbedding
from .....nn.modules.sparse import EmbeddingBag as FloatEmbeddingBag
from .utils import record_version

__all__ = ["EmbeddingPackedParams", "Embedding", "EmbeddingBag"]

_F32 = np.float32


class EmbeddingPackedParams(Module):
    """A quantized embedding's weight (PyTorch packs it for fbgemm; here the quint8 tensor)."""

    _version = 1

    def __init__(self, num_embeddings: int, embedding_dim: int, dtype: Any = _dtype.quint8) -> None:
        super().__init__()
        if dtype is not _dtype.quint8:
            raise NotImplementedError(
                f"Unsupported dtype on quantized embedding! Supports quint8, got {dtype}"
            )
        self.dtype = dtype
        zeros = Tensor._make(np.zeros((num_embeddings, embedding_dim), _F32))
        scales, zero_points = (
            Tensor._make(np.ones(num_embeddings, _F32)),
            Tensor._make(np.zeros(num_embeddings, _F32)),
        )
        self.set_weight(quantize_per_channel(zeros, scales, zero_points, 0, dtype))

    def set_weight(self, weight: Tensor) -> None:
        """Keep ``weight``: a quint8 tensor quantized per row with float qparams."""
        if not weight.is_quantized or weight.qscheme() is not _qscheme.per_channel_affine_float_qparams:
            raise RuntimeError("a quantized embedding's weight is quint8 per_channel_affine_float_qparams")
        self._packed_weight = weight

    def forward(self, x: Any) -> Any:
        return x

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        record_version(destination, prefix, self._version)
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_weight"] = self._packed_weight

    def _load_from_state_dict(
        self, state_dict: Any, prefix: str, local_metadata: dict, strict: bool, missing: list, *args: Any
    ) -> None:
        absent = [prefix + k for k in ("dtype", "_packed_weight") if prefix + k not in state_dict]
        if absent:
            missing.extend(absent if strict else [])
            return
        self.dtype = state_dict.pop(prefix + "dtype")
        self.set_weight(state_dict.pop(prefix + "_packed_weight"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing, *args)

    def __repr__(self) -> str:
        return repr(self._packed_weight)


def _rows(weight: Tensor, index: np.ndarray) -> tuple:
    """The rows' integers (float64) and float32 scales and biases (``-zero_point * scale``)."""
    scale = weight._scale[index].astype(_F32)[..., None]
    return weight._data[index].astype(np.float64), scale, -(weight._zero_point[index][..., None] * scale)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) * b + c).astype(_F32)  # the product is exact in float64


class Embedding(Module):
    """A weight-only quantized ``nn.Embedding`` (made by ``convert``/``quantize_dynamic`` with
    ``float_qparams_weight_only_qconfig``); its output is float32."""

    _version = 1
    _FLOAT_MODULE = FloatEmbedding

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        dtype: Any = _dtype.quint8,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.dtype = num_embeddings, embedding_dim, dtype
        self._packed_params = EmbeddingPackedParams(num_embeddings, embedding_dim, dtype)
        if _weight is not None:
            self.set_weight(_weight)

    def set_weight(self, w: Tensor) -> None:
        self._packed_params.set_weight(w)

    def weight(self) -> Tensor:
        return self._packed_params._packed_weight

    def _indices(self, indices: Tensor) -> np.ndarray:
        idx = indices.numpy()
        if idx.dtype.kind not in "iu":
            raise RuntimeError(
                f"Expected tensor for argument #1 'indices' to have an integer dtype, got {indices.dtype}"
            )
        if idx.size and (idx.min() < 0 or idx.max() >= self.num_embeddings):
            raise IndexError("index out of range in self")
        return idx.astype(np.int64)

    def forward(self, indices: Tensor) -> Tensor:
        q, scale, bias = _rows(self.weight(), self._indices(indices))
        return Tensor._make(_fma(scale, q, bias))

    def _get_name(self) -> str:
        return "QuantizedEmbedding"

    def __repr__(self) -> str:  # PyTorch hides the packed weight
        return f"{self._get_name()}({self.extra_repr()})"

    def extra_repr(self) -> str:
        return (
            f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, "
            f"dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}"
        )

    @classmethod
    def from_float(cls, mod: Module, use_precomputed_fake_quant: bool = False) -> Embedding:
        """From a float ``nn.Embedding`` with ``float_qparams_weight_only_qconfig``: its weight
        quantized per row by the qconfig's weight observer."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {cls._FLOAT_MODULE.__name__}")
        if getattr(mod, "qconfig", None) is None:
            raise AssertionError("Embedding input float module must have qconfig defined")
        observer = mod.qconfig.weight()
        if observer.qscheme is not _qscheme.per_channel_affine_float_qparams:
            raise AssertionError(
                "Embedding quantization is only supported with float_qparams_weight_only_qconfig."
            )
        if observer.dtype is not _dtype.quint8:
            raise AssertionError(
                f"The only supported dtype for nnq.Embedding is torch.quint8, got {observer.dtype}"
            )
        observer(mod.weight)
        scales, zero_points = observer.calculate_qparams()
        weight = quantize_per_channel(mod.weight.detach().float(), scales, zero_points, 0, _dtype.quint8)
        return cls._from_weight(mod, weight)

    @classmethod
    def _from_weight(cls, mod: Module, weight: Tensor) -> Embedding:
        return cls(mod.num_embeddings, mod.embedding_dim, _weight=weight)


class EmbeddingBag(Embedding):
    """A weight-only quantized ``nn.EmbeddingBag``: each bag's rows summed in order,
    ``out = fma(w * scale, q, out + w * bias)``, as fbgemm. As PyTorch's, it sums whatever its
    ``mode`` says (PyTorch's module passes mode 0, sum, to its kernel)."""

    _version = 1
    _FLOAT_MODULE = FloatEmbeddingBag

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "sum",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        dtype: Any = _dtype.quint8,
    ) -> None:
        super().__init__(num_embeddings, embedding_dim, _weight=_weight, dtype=dtype)
        self.mode, self.pruned_weights, self.include_last_offset = mode, False, include_last_offset

    def forward(
        self,
        indices: Tensor,
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
        compressed_indices_mapping: Tensor | None = None,
    ) -> Tensor:
        idx = self._indices(indices)
        if offsets is None:
            if idx.ndim != 2:
                raise ValueError("input has to be 2D Tensor when offsets is None")
            starts = np.arange(0, idx.size, idx.shape[1])
            idx = idx.reshape(-1)
        else:
            if idx.ndim != 1:
                raise ValueError("input has to be 1D Tensor when offsets are given")
            starts = offsets.numpy().astype(np.int64)
            if self.include_last_offset:
                starts = starts[:-1]
        ends = np.append(starts[1:], idx.size)
        lengths = ends - starts
        weights = None if per_sample_weights is None else per_sample_weights.numpy().astype(_F32).reshape(-1)
        out = np.zeros((len(starts), self.embedding_dim), _F32)
        for step in range(int(lengths.max(initial=0))):
            bags = np.nonzero(lengths > step)[0]
            at = starts[bags] + step
            q, scale, bias = _rows(self.weight(), idx[at])
            if weights is not None:
                scale, bias = scale * weights[at, None], bias * weights[at, None]
            out[bags] = _fma(scale, q, out[bags] + bias)
        return Tensor._make(out)

    def _get_name(self) -> str:
        return "QuantizedEmbeddingBag"

    @classmethod
    def _from_weight(cls, mod: Module, weight: Tensor) -> EmbeddingBag:
        if mod.mode not in ("sum", "mean"):
            raise NotImplementedError(
                f"quantized EmbeddingBag supports mode 'sum' and 'mean', got {mod.mode!r}"
            )
        return cls(
            mod.num_embeddings,
            mod.embedding_dim,
            mode=mod.mode,
            _weight=weight,
            include_last_offset=mod.include_last_offset,
        )
