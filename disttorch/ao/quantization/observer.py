"""Observers: modules that watch the tensors passing through them and choose quantization
parameters (scale and zero point) from what they saw, with PyTorch's arithmetic (float32,
round half to even), so ``calculate_qparams`` answers exactly as PyTorch's does.

``MinMaxObserver`` (running min/max of the whole tensor), ``PerChannelMinMaxObserver``
(min/max per index of ``ch_axis``), their moving-average forms (QAT), ``PlaceholderObserver`` (records nothing: the dtype of a
dynamically quantized activation), and ``calculate_qmin_qmax``.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from ... import _dtype, _qscheme
from ..._creation import from_numpy, tensor
from ..._tensor import Tensor
from ...nn.modules.module import Module

__all__ = [
    "ObserverBase",
    "MinMaxObserver",
    "MovingAverageMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver",
    "PerChannelMinMaxObserver",
    "PlaceholderObserver",
    "calculate_qmin_qmax",
    "default_observer",
    "default_weight_observer",
    "default_dynamic_quant_observer",
    "default_float_qparams_observer",
    "default_per_channel_weight_observer",
    "default_placeholder_observer",
]

_EPS = float(np.finfo(np.float32).eps)
_8BIT = {
    "qint8": (-128, 127, -64, 63),
    "int8": (-128, 127, -64, 63),
    "quint8": (0, 255, 0, 127),
    "uint8": (0, 255, 0, 127),
}


def calculate_qmin_qmax(
    quant_min: int | None, quant_max: int | None, has_customized_qrange: bool, dtype: Any, reduce_range: bool
) -> tuple[int, int]:
    """The integer range an observer quantizes to: the dtype's (halved by ``reduce_range``
    for 8-bit types) or the customized ``[quant_min, quant_max]``."""
    if has_customized_qrange:
        width = quant_max - quant_min + 1
        if dtype.name.endswith("int8") and not 0 < width <= 256:
            raise AssertionError(
                "quantization range should be positive and not exceed the maximum bit range (=256)."
            )
        return (quant_min // 2, quant_max // 2) if reduce_range else (quant_min, quant_max)
    if dtype.name in _8BIT:
        lo, hi, rlo, rhi = _8BIT[dtype.name]
        return (rlo, rhi) if reduce_range else (lo, hi)
    if dtype.name in ("qint32", "int32"):
        return -(2**31), 2**31 - 1
    raise AssertionError(f"observers quantize to qint8, quint8, qint32 (and their int types), got {dtype}")


def _resize_to_loaded(module: Module, state_dict: Any, prefix: str, names: tuple) -> None:
    """Resize buffers whose size depends on what was observed (per-channel minima, scales)
    to the loaded entries' sizes before ``load_state_dict`` copies them in, as PyTorch does."""
    for name in names:
        if prefix + name in state_dict:
            getattr(module, name).resize_(tuple(state_dict[prefix + name].shape))


class _PartialWrapper:
    """An observer (or fake-quantize) factory with constructor arguments, as PyTorch's
    ``with_args`` gives: calling it builds a new instance; ``with_callable_args`` adds
    arguments computed by a call each time; its repr is PyTorch's (the partial, then the
    callable arguments: ``functools.partial(<class ...>, ...){}``)."""

    def __init__(self, p: functools.partial) -> None:
        self.p = p
        self.callable_args: dict = {}

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        computed = {name: make() for name, make in self.callable_args.items() if name not in keywords}
        return self.p(*args, **computed, **keywords)

    def __repr__(self) -> str:
        return repr(self.p) + repr(self.callable_args)

    def with_args(self, **kwargs: Any) -> _PartialWrapper:
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs: Any) -> _PartialWrapper:
        result = _PartialWrapper(self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self: Any, **kwargs: Any) -> _PartialWrapper:
    """``cls_or_self`` with ``kwargs`` bound (a class's ``with_args``, or a factory's)."""
    return _PartialWrapper(functools.partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self: Any, **kwargs: Any) -> _PartialWrapper:
    """``cls_or_self`` with arguments each computed by calling their value per instance."""
    return _PartialWrapper(functools.partial(cls_or_self)).with_callable_args(**kwargs)


class ObserverBase(Module):
    """The base of observers: ``forward`` records statistics and returns its input;
    ``calculate_qparams`` turns them into ``(scale, zero_point)``."""

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)

    def __init__(self, dtype: Any, is_dynamic: bool = False) -> None:
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic


class _UniformObserver(ObserverBase):
    """What MinMax-style observers share: the dtype, scheme and integer range, and PyTorch's
    formula from a min and max to scales and zero points."""

    def __init__(
        self,
        dtype: Any = None,
        qscheme: Any = None,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        factory_kwargs: Any = None,
        eps: float = _EPS,
        is_dynamic: bool = False,
    ) -> None:
        super().__init__(_dtype.quint8 if dtype is None else dtype, is_dynamic)
        self.qscheme = _qscheme.per_tensor_affine if qscheme is None else qscheme
        if reduce_range:
            warnings.warn(
                "Please use quant_min and quant_max to specify the range for observers. "
                "reduce_range will be deprecated in a future release of PyTorch.",
                stacklevel=3,
            )
        self.reduce_range = reduce_range
        self.register_buffer("eps", tensor([eps]))
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange and not quant_min <= 0 <= quant_max:
            raise AssertionError("Used-specified quantization range must include 0.")
        if self.has_customized_qrange and quant_min >= quant_max:
            raise AssertionError(
                "qmin must be strictly less than qmax for user-specified quantization range."
            )
        self.quant_min, self.quant_max = calculate_qmin_qmax(
            quant_min, quant_max, self.has_customized_qrange, self.dtype, reduce_range
        )

    def _calculate_qparams(self, min_val: Tensor, max_val: Tensor) -> tuple:
        """Scales (float32) and zero points from running minima and maxima."""
        lo, hi = min_val.numpy(), max_val.numpy()
        if lo.size == 0 or (lo.ndim == 0 and lo == np.inf and hi == -np.inf):
            warnings.warn(
                "must run observer before calling calculate_qparams. Returning default values.", stacklevel=3
            )
            return tensor([1.0]), tensor([0])
        if np.any(lo > hi):
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
        qmin, qmax = self.quant_min, self.quant_max
        if self.qscheme is _qscheme.per_channel_affine_float_qparams:  # zero point: -min / scale
            scale = (hi - lo) / np.float32(qmax - qmin)
            scale = np.where(scale > self.eps.numpy()[0], scale, np.float32(1.0)).astype(np.float32)
            return from_numpy(scale), from_numpy((-1 * lo / scale).astype(np.float32))
        lo_neg = np.minimum(lo, np.float32(0))
        hi_pos = np.maximum(hi, np.float32(0))
        eps = self.eps.numpy()[0]
        zero_point = np.zeros(lo.shape, dtype=np.int64)
        if self.qscheme in (_qscheme.per_tensor_symmetric, _qscheme.per_channel_symmetric):
            hi_pos = np.maximum(-lo_neg, hi_pos)
            scale = np.maximum(hi_pos / np.float32((qmax - qmin) / 2), eps)
            if self.dtype in (_dtype.quint8, _dtype.uint8):
                zero_point[...] = (qmin + qmax) // 2 if self.has_customized_qrange else 128
        else:
            scale = np.maximum((hi_pos - lo_neg) / np.float32(qmax - qmin), eps)
            # int32 here, int64 for the symmetric schemes: PyTorch's dtypes
            zero_point = np.clip(qmin - np.rint(lo_neg / scale).astype(np.int64), qmin, qmax).astype(np.int32)
        scale = np.asarray(scale, dtype=np.float32).reshape(-1 if lo.ndim else 1)
        return from_numpy(scale.copy()), from_numpy(np.asarray(zero_point).reshape(scale.shape).copy())


class MinMaxObserver(_UniformObserver):
    """Records the running minimum and maximum of every tensor it sees; the scale and zero
    point map ``[min(min, 0), max(max, 0)]`` onto the integer range (``per_tensor_affine``),
    or ``[-m, m]`` with ``m = max(|min|, max)`` (``per_tensor_symmetric``)."""

    def __init__(
        self,
        dtype: Any = None,
        qscheme: Any = None,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        factory_kwargs: Any = None,
        eps: float = _EPS,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        qscheme = _qscheme.per_tensor_affine if qscheme is None else qscheme
        if qscheme not in (_qscheme.per_tensor_affine, _qscheme.per_tensor_symmetric):
            raise NotImplementedError(
                "MinMaxObserver's qscheme only support _qscheme.per_tensor_symmetric and _qscheme.per_tensor_affine."
            )
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic)
        self.register_buffer("min_val", tensor(float("inf")))
        self.register_buffer("max_val", tensor(float("-inf")))
        if qscheme is _qscheme.per_tensor_symmetric and reduce_range and self.dtype is _dtype.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def forward(self, x_orig: Tensor) -> Tensor:
        """Record the running minimum and maximum of ``x_orig``; return it unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype).numpy()
        self.min_val.copy_(tensor(min(x.min(), self.min_val.item())))
        self.max_val.copy_(tensor(max(x.max(), self.max_val.item())))
        return x_orig

    def calculate_qparams(self) -> tuple:
        """``(scale, zero_point)``: one-element float32 and int64 tensors."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self) -> None:
        """Forget what was seen."""
        self.min_val.copy_(tensor(float("inf")))
        self.max_val.copy_(tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Like ``MinMaxObserver``, but the minimum and maximum move towards each new tensor's by
    ``averaging_constant`` (the first tensor sets them): what ``FakeQuantize`` uses in QAT."""

    def __init__(
        self,
        averaging_constant: float = 0.01,
        dtype: Any = None,
        qscheme: Any = None,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        eps: float = _EPS,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        self.averaging_constant = averaging_constant
        super().__init__(
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            eps=eps,
            is_dynamic=is_dynamic,
            **kwargs,
        )

    def forward(self, x_orig: Tensor) -> Tensor:
        """Move the running minimum and maximum towards ``x_orig``'s; return it unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype).numpy()
        lo, hi = self.min_val.numpy(), self.max_val.numpy()
        c = np.float32(self.averaging_constant)
        if lo == np.inf and hi == -np.inf:
            lo, hi = x.min(), x.max()
        else:
            lo, hi = lo + c * (x.min() - lo), hi + c * (x.max() - hi)
        self.min_val.copy_(tensor(np.float32(lo)))
        self.max_val.copy_(tensor(np.float32(hi)))
        return x_orig


class PerChannelMinMaxObserver(_UniformObserver):
    """Records running minima and maxima per index of ``ch_axis`` (``per_channel_affine`` or
    ``per_channel_symmetric``): one scale and zero point per channel."""

    def __init__(
        self,
        ch_axis: int = 0,
        dtype: Any = None,
        qscheme: Any = None,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        factory_kwargs: Any = None,
        eps: float = _EPS,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        qscheme = _qscheme.per_channel_affine if qscheme is None else qscheme
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", tensor([]))
        self.register_buffer("max_val", tensor([]))

    def forward(self, x_orig: Tensor) -> Tensor:
        """Record the running per-channel minima and maxima of ``x_orig``; return it."""
        if x_orig.numel() == 0:
            return x_orig
        x = np.moveaxis(x_orig.detach().to(self.min_val.dtype).numpy(), self.ch_axis, 0)
        rows = x.reshape(x.shape[0], -1)
        lo, hi = rows.min(axis=1), rows.max(axis=1)
        if self.min_val.numel():
            lo, hi = self._merge(lo, hi, self.min_val.numpy(), self.max_val.numpy())
        self.min_val = from_numpy(lo.copy())
        self.max_val = from_numpy(hi.copy())
        return x_orig

    def _merge(self, lo: np.ndarray, hi: np.ndarray, old_lo: np.ndarray, old_hi: np.ndarray) -> tuple:
        """The running minima and maxima after a tensor with per-channel ``lo``/``hi``."""
        return np.minimum(lo, old_lo), np.maximum(hi, old_hi)

    def _load_from_state_dict(self, state_dict: Any, prefix: str, *args: Any) -> None:
        _resize_to_loaded(self, state_dict, prefix, ("min_val", "max_val"))
        super()._load_from_state_dict(state_dict, prefix, *args)

    def calculate_qparams(self) -> tuple:
        """``(scales, zero_points)``: float32 and int64 tensors, one value per channel."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Like ``PerChannelMinMaxObserver``, but each channel's minimum and maximum move towards
    the new tensor's by ``averaging_constant`` (the first tensor sets them): QAT weights."""

    def __init__(
        self,
        averaging_constant: float = 0.01,
        ch_axis: int = 0,
        dtype: Any = None,
        qscheme: Any = None,
        reduce_range: bool = False,
        quant_min: int | None = None,
        quant_max: int | None = None,
        eps: float = _EPS,
        is_dynamic: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            ch_axis=ch_axis,
            dtype=dtype,
            qscheme=qscheme,
            reduce_range=reduce_range,
            quant_min=quant_min,
            quant_max=quant_max,
            eps=eps,
            is_dynamic=is_dynamic,
            **kwargs,
        )
        self.averaging_constant = averaging_constant

    def _merge(self, lo: np.ndarray, hi: np.ndarray, old_lo: np.ndarray, old_hi: np.ndarray) -> tuple:
        c = np.float32(self.averaging_constant)
        return old_lo + c * (lo - old_lo), old_hi + c * (hi - old_hi)


class PlaceholderObserver(ObserverBase):
    """Observes nothing: it carries the dtype (and range) of a tensor quantized later, e.g.
    a dynamically quantized activation (``is_dynamic=True``)."""

    def __init__(
        self,
        dtype: Any = None,
        custom_op_name: str = "",
        compute_dtype: Any = None,
        quant_min: int | None = None,
        quant_max: int | None = None,
        qscheme: Any = None,
        eps: float | None = None,
        is_dynamic: bool = False,
    ) -> None:
        super().__init__(_dtype.float32 if dtype is None else dtype, is_dynamic or bool(compute_dtype))
        self.qscheme = _qscheme.per_tensor_affine if qscheme is None else qscheme
        self.quant_min, self.quant_max = quant_min, quant_max
        self.eps = _EPS if eps is None else eps
        self.custom_op = custom_op_name

    def forward(self, x: Tensor) -> Tensor:
        return x

    def extra_repr(self) -> str:
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self) -> tuple:
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")  # noqa: TRY002


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=_dtype.qint8, qscheme=_qscheme.per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=_dtype.qint8, qscheme=_qscheme.per_channel_symmetric
)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=_dtype.quint8, quant_min=0, quant_max=255, is_dynamic=True
)
default_placeholder_observer = PlaceholderObserver
#: embedding weights: per-row quint8 with float zero points (PyTorch's ``default_float_qparams_observer``)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=_dtype.quint8, qscheme=_qscheme.per_channel_affine_float_qparams, ch_axis=0
)
