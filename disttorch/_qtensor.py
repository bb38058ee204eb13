"""``QuantizedTensor``: a tensor of a quantized dtype (``quint8``, ``qint8``, ``qint32``),
kept as its integer representation (``_data``, uint8/int8/int32) and the affine map back to
reals: one scale and zero point (``per_tensor_affine``) or one per index of an axis
(``per_channel_affine``; ``per_channel_affine_float_qparams`` with float zero points, the
weights of quantized embeddings).

As in PyTorch, a quantized tensor has no autograd and no arithmetic of its own: it is made
by ``quantize_per_tensor``/``quantize_per_channel``, read with ``dequantize()``/
``int_repr()``/``q_scale()``..., viewed (``view``, ``reshape``, indexing, ``t``...) and
handed to quantized modules. The ops PyTorch's quantized backend has for the layers between
quantized modules keep the input's scale and zero point: ``relu``, ``clamp`` (hardtanh,
ReLU6), ``mean`` (the integer sum averaged and rounded half to even, as PyTorch's kernel);
pooling is in ``nn.functional.quantized``. Other ops raise as PyTorch's backend does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype, _qscheme
from ._public_name import package_name
from ._repr import array_body, with_suffixes
from ._tensor import Tensor
from .kernels import quantize as qk

__all__ = ["QuantizedTensor", "cat"]


class QuantizedTensor(Tensor):
    """A quantized tensor (``x.is_quantized`` is True); see the module header."""

    is_quantized = True
    _functions_call_methods = True

    @classmethod
    def _build(
        cls,
        int_repr: np.ndarray,
        qdtype: _dtype.dtype,
        scheme: _qscheme.qscheme,
        scale: Any,
        zero_point: Any,
        axis: int | None = None,
    ) -> QuantizedTensor:
        """Wrap an integer representation (its NumPy dtype is ``qdtype``'s) with its map:
        floats for per-tensor schemes, float64/int64 arrays and ``axis`` for per-channel."""
        q = object.__new__(cls)
        q._init_state(int_repr)
        q._qdtype, q._qscheme, q._axis = qdtype, scheme, axis
        q._scale, q._zero_point = scale, zero_point
        return q

    def _like(self, int_repr: np.ndarray, axis: int | None = None) -> QuantizedTensor:
        """Another representation under this tensor's map (``axis`` moved for per-channel)."""
        return QuantizedTensor._build(
            int_repr, self._qdtype, self._qscheme, self._scale, self._zero_point, axis
        )

    # ------------------------------------------------------------------ what it is
    @property
    def dtype(self) -> _dtype.dtype:
        return self._qdtype

    def qscheme(self) -> _qscheme.qscheme:
        """The quantization scheme (``per_tensor_affine`` or ``per_channel_affine``)."""
        return self._qscheme

    def _per_channel(self) -> bool:
        return self._axis is not None

    def q_scale(self) -> float:
        """The scale of a per-tensor quantized tensor."""
        self._expect(per_channel=False)
        return float(self._scale)

    def q_zero_point(self) -> int:
        """The zero point of a per-tensor quantized tensor."""
        self._expect(per_channel=False)
        return int(self._zero_point)

    def q_per_channel_scales(self) -> Tensor:
        """The float64 scales of a per-channel quantized tensor, one per index of its axis."""
        self._expect(per_channel=True)
        return Tensor._make(self._scale.copy())

    def q_per_channel_zero_points(self) -> Tensor:
        """The zero points of a per-channel quantized tensor (int64; float32 for float qparams)."""
        self._expect(per_channel=True)
        return Tensor._make(self._zero_point.copy())

    def q_per_channel_axis(self) -> int:
        """The axis a per-channel quantized tensor has its scales along."""
        self._expect(per_channel=True)
        return self._axis

    def _expect(self, per_channel: bool) -> None:
        if per_channel and not self._per_channel():
            raise RuntimeError(
                "Expected quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                "kPerChannelAffineFloatQParams to be true, but got false."
            )
        if not per_channel and self._per_channel():
            raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.")

    # ------------------------------------------------------------------ reading it
    def int_repr(self) -> Tensor:
        """The integer representation as a uint8 / int8 / int32 tensor (a copy)."""
        return Tensor._make(np.array(self._data))

    def dequantize(self) -> Tensor:
        """The float32 values: ``(int_repr - zero_point) * scale``."""
        return Tensor._make(qk.dequantize(self._data, self._scale, self._zero_point, self._axis))

    def numpy(self, *, force: bool = False) -> np.ndarray:
        raise TypeError(f"Got unsupported ScalarType {self._qdtype.scalar_name}")

    def tolist(self) -> Any:
        raise RuntimeError("load_scalar: invalid type")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        return self

    def __repr__(self) -> str:
        indent = len("tensor(")
        values = qk.dequantize(self._data, self._scale, self._zero_point, self._axis)
        suffixes = [f"size={tuple(self._data.shape)}", f"dtype={self._qdtype!r}"]
        suffixes.append(f"quantization_scheme={self._qscheme!r}")
        if self._per_channel():
            suffixes += [
                f"scale={Tensor._make(self._scale)!r}",
                f"zero_point={Tensor._make(self._zero_point)!r}",
                f"axis={self._axis}",
            ]
        else:
            suffixes += [f"scale={float(self._scale)!r}", f"zero_point={int(self._zero_point)}"]
        return with_suffixes("tensor(" + array_body(values, indent), suffixes, indent)

    # ------------------------------------------------------------------ views and copies
    def clone(self, *, memory_format: Any = None) -> QuantizedTensor:
        return self._like(np.array(self._data), self._axis)

    def detach(self) -> QuantizedTensor:
        return self._like(self._data, self._axis)

    def contiguous(self, memory_format: Any = None) -> QuantizedTensor:
        return self if self._data.flags.c_contiguous else self.clone()

    def _per_tensor_view(self, what: str, arr: np.ndarray) -> QuantizedTensor:
        if self._per_channel():
            raise NotImplementedError(
                f"{what} of a per-channel quantized tensor is not supported in disttorch"
            )
        return self._like(arr)

    def view(self, *shape: Any) -> QuantizedTensor:
        return self._per_tensor_view("view", self._data.reshape(_shape_arg(shape)))

    def reshape(self, *shape: Any) -> QuantizedTensor:
        return self._per_tensor_view("reshape", self._data.reshape(_shape_arg(shape)))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> QuantizedTensor:
        shape = self._data.shape
        end = end_dim % max(len(shape), 1) + 1
        merged = shape[:start_dim] + (int(np.prod(shape[start_dim:end])),) + shape[end:]
        return self._per_tensor_view("flatten", self._data.reshape(merged))

    def __getitem__(self, key: Any) -> QuantizedTensor:
        return self._per_tensor_view("indexing", self._data[key])

    def t(self) -> QuantizedTensor:
        return self.transpose(0, 1) if self._data.ndim == 2 else self

    def transpose(self, dim0: int, dim1: int) -> QuantizedTensor:
        return self._per_tensor_view("transpose", np.swapaxes(self._data, dim0, dim1))

    def permute(self, *dims: Any) -> QuantizedTensor:
        return self._per_tensor_view("permute", np.transpose(self._data, _shape_arg(dims)))

    # ------------------------------------------------------------------ quantized ops
    def _per_tensor_data(self, what: str) -> np.ndarray:
        if self._per_channel():
            raise NotImplementedError(
                f"{what} of a per-channel quantized tensor is not supported in disttorch"
            )
        return self._data

    def relu(self) -> QuantizedTensor:
        """``max(x, 0)``: the integers clamped below at the zero point (same scale)."""
        data = self._per_tensor_data("relu")
        return self._like(np.maximum(data, data.dtype.type(self._zero_point)))

    def clamp(self, min: float | None = None, max: float | None = None) -> QuantizedTensor:
        """Values clamped to ``[min, max]`` (bounds quantized with this tensor's scale)."""
        data = self._per_tensor_data("clamp")
        lo, hi = qk.qrange(data.dtype)
        if min is not None:
            lo = qk.quantize(np.float32([min]), self._scale, self._zero_point, data.dtype)[0]
        if max is not None:
            hi = qk.quantize(np.float32([max]), self._scale, self._zero_point, data.dtype)[0]
        return self._like(np.clip(data, lo, hi).astype(data.dtype))

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> QuantizedTensor:
        """The mean over ``dim`` (all dims by default) with this tensor's scale and zero point."""
        if dtype is not None and dtype is not self._qdtype:
            raise RuntimeError(f"quantized mean keeps the input's dtype {self._qdtype}, got dtype={dtype}")
        data = self._per_tensor_data("mean")
        dims = (
            tuple(range(data.ndim)) if dim is None or dim == [] else (dim,) if isinstance(dim, int) else dim
        )
        dims = tuple(d % max(data.ndim, 1) for d in dims)
        acc = (data.astype(np.int64) - int(self._zero_point)).sum(axis=dims, keepdims=keepdim)
        count = int(np.prod([data.shape[d] for d in dims]))
        return self._like(qk.average_requantized(acc, count, int(self._zero_point), data.dtype))

    def __reduce_ex__(self, protocol: int):
        return (
            QuantizedTensor._build,
            (np.array(self._data), self._qdtype, self._qscheme, self._scale, self._zero_point, self._axis),
        )

    def __deepcopy__(self, memo: dict) -> QuantizedTensor:
        return self.clone()


def cat(tensors: list, dim: int = 0) -> QuantizedTensor:
    """``torch.cat`` of quantized tensors: requantized with the first one's scale and zero
    point (their integers joined as they are where all share it), as PyTorch's kernel."""
    first = tensors[0]
    if any(not t.is_quantized or t.dtype is not first.dtype or t._per_channel() for t in tensors):
        raise RuntimeError("quantized cat expects per-tensor quantized tensors of one dtype")
    if all(t._scale == first._scale and t._zero_point == first._zero_point for t in tensors):
        return first._like(np.concatenate([t._data for t in tensors], axis=dim))
    values = np.concatenate([t.dequantize()._data for t in tensors], axis=dim)
    return first._like(qk.quantize(values, first._scale, first._zero_point, first._data.dtype))


def _shape_arg(args: tuple) -> tuple:
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)


def _unsupported(op: str):
    def refuse(self: QuantizedTensor, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"Could not run 'aten::{op}' with arguments from the 'QuantizedCPU' backend "
            f"({package_name()} quantized tensors are read with dequantize() and used by "
            "quantized modules; they have no arithmetic)"
        )

    return refuse


for _op in (
    "add sub mul div matmul neg pow sum max min abs exp log sqrt float double half to "
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __matmul__ "
    "__rmatmul__ __neg__ __pow__ __rpow__ backward"
).split():
    setattr(QuantizedTensor, _op, _unsupported(_op.strip("_")))
