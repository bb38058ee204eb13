"""``FakeQuantize``: a module that observes the tensors passing through it (by default with a
``MovingAverageMinMaxObserver``) and returns them fake-quantized with the scale and zero point
chosen so far, so quantization-aware training sees quantization's rounding while gradients
flow straight through (``fake_quantize_per_tensor_affine``). ``FusedMovingAvgObsFakeQuantize``
does the same in one step as PyTorch's fused kernel, whose scale and zero point come from
fbgemm's ``ChooseQuantizationParams`` (what ``get_default_qat_qconfig`` trains with)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import _dtype, _qscheme
from ..._creation import from_numpy, tensor
from ..._tensor import Tensor
from ...kernels import quantize as qk
from ...nn.modules.module import Module
from ...ops.fake_quantize import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine
from .observer import (
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    _resize_to_loaded,
    _with_args,
)

__all__ = [
    "FakeQuantize",
    "FusedMovingAvgObsFakeQuantize",
    "default_fake_quant",
    "default_fused_act_fake_quant",
    "default_fused_per_channel_wt_fake_quant",
    "default_fused_wt_fake_quant",
    "default_per_channel_weight_fake_quant",
    "default_weight_fake_quant",
    "disable_fake_quant",
    "disable_observer",
    "enable_fake_quant",
    "enable_observer",
]

_PER_CHANNEL = (_qscheme.per_channel_affine, _qscheme.per_channel_symmetric)
_SYMMETRIC = (_qscheme.per_tensor_symmetric, _qscheme.per_channel_symmetric)
_INT_RANGE = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2**31), 2**31 - 1)}


class FakeQuantize(Module):
    """Observe, then fake-quantize: ``scale``/``zero_point`` buffers follow the observer while
    ``observer_enabled``; the output is fake-quantized while ``fake_quant_enabled``."""

    with_args = classmethod(_with_args)

    def __init__(
        self,
        observer: Any = MovingAverageMinMaxObserver,
        quant_min: int | None = None,
        quant_max: int | None = None,
        is_dynamic: bool = False,
        **observer_kwargs: Any,
    ) -> None:
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            lo, hi = _INT_RANGE.get(observer_kwargs.get("dtype", _dtype.quint8).name, (quant_min, quant_max))
            if lo > quant_min:
                raise AssertionError("quant_min out of bound")
            if quant_max > hi:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.is_dynamic = self.activation_post_process.is_dynamic
        self.register_buffer("fake_quant_enabled", tensor([1], dtype=_dtype.uint8))
        self.register_buffer("observer_enabled", tensor([1], dtype=_dtype.uint8))
        self.register_buffer("scale", tensor([1.0]))
        self.register_buffer("zero_point", tensor([0], dtype=_dtype.int32))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        self.is_per_channel = self.qscheme in _PER_CHANNEL

    def calculate_qparams(self) -> tuple:
        return self.activation_post_process.calculate_qparams()

    def forward(self, X: Tensor) -> Tensor:
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            self.scale = scale.float()
            self.zero_point = zero_point.to(_dtype.int32)
        if self.fake_quant_enabled[0] == 1:
            if self.is_per_channel:
                return fake_quantize_per_channel_affine(
                    X, self.scale, self.zero_point, self.ch_axis, self.quant_min, self.quant_max
                )
            return fake_quantize_per_tensor_affine(
                X, self.scale, self.zero_point, self.quant_min, self.quant_max
            )
        return X

    def _load_from_state_dict(self, state_dict: Any, prefix: str, *args: Any) -> None:
        _resize_to_loaded(self, state_dict, prefix, ("scale", "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, *args)

    def extra_repr(self) -> str:
        return (
            f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
            f"quant_min={self.activation_post_process.quant_min}, quant_max={self.activation_post_process.quant_max}, "
            f"dtype={self.dtype}, qscheme={self.qscheme}, ch_axis={self.ch_axis}, "
            f"scale={self.scale}, zero_point={self.zero_point}"
        )


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """``FakeQuantize`` with a moving-average observer, computed as PyTorch's fused kernel
    (``fused_moving_avg_obs_fake_quant``): the observer's running minima and maxima move while
    ``observer_enabled``; while ``fake_quant_enabled`` the scale and zero point are chosen
    from them by fbgemm's rule (a symmetric scheme keeps sparsity: ``max(|min|/128, max/127)``
    as the scale) and the input is fake-quantized. ``calculate_qparams`` is the observer's."""

    def __init__(
        self,
        observer: Any = MovingAverageMinMaxObserver,
        quant_min: int = 0,
        quant_max: int = 255,
        **observer_kwargs: Any,
    ) -> None:
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(
            self.activation_post_process, (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)
        ):
            raise AssertionError(
                "Fused observer+fake_quant module only works with MovingAverageMinMaxObserver"
            )
        self.register_buffer("fake_quant_enabled", tensor([1], dtype=_dtype.int64))
        self.register_buffer("observer_enabled", tensor([1], dtype=_dtype.int64))
        self.is_symmetric_quant = self.activation_post_process.qscheme in _SYMMETRIC

    def forward(self, X: Tensor) -> Tensor:
        if X.numel() == 0:
            return X.clone()
        observer = self.activation_post_process
        if self.observer_enabled[0] == 1:
            observer(X.detach())
        if self.fake_quant_enabled[0] != 1:
            return X.clone()
        lo, hi = observer.min_val.numpy().reshape(-1), observer.max_val.numpy().reshape(-1)
        params = [
            qk.choose_qparams(
                a, b, observer.quant_min, observer.quant_max, preserve_sparsity=self.is_symmetric_quant
            )
            for a, b in zip(lo.tolist(), hi.tolist())
        ]
        for buffer, values in (
            (self.scale, [p[0] for p in params]),
            (self.zero_point, [p[1] for p in params]),
        ):
            buffer.resize_(len(values)).copy_(from_numpy(np.array(values, buffer.numpy().dtype)))  # in place
        if self.is_per_channel:
            return fake_quantize_per_channel_affine(
                X, self.scale, self.zero_point, self.ch_axis, observer.quant_min, observer.quant_max
            )
        return fake_quantize_per_tensor_affine(
            X, self.scale, self.zero_point, observer.quant_min, observer.quant_max
        )

    def extra_repr(self) -> str:
        observer = self.activation_post_process
        return (
            f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
            f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}, "
            f"quant_min={observer.quant_min}, quant_max={observer.quant_max}, "
            f"qscheme={self.qscheme}, reduce_range={observer.reduce_range}"
        )


def _switch(name: str, value: int):
    def switch(mod: Module) -> None:
        if isinstance(mod, FakeQuantize):
            getattr(mod, name)[0] = value

    switch.__doc__ = f"Set ``{name}`` of a ``FakeQuantize`` (use with ``model.apply``)."
    return switch


enable_fake_quant = _switch("fake_quant_enabled", 1)
disable_fake_quant = _switch("fake_quant_enabled", 0)
enable_observer = _switch("observer_enabled", 1)
disable_observer = _switch("observer_enabled", 0)

#: activations: quint8 over [0, 127] (reduce_range), moving-average min/max
default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=0,
    quant_max=255,
    dtype=_dtype.quint8,
    qscheme=_qscheme.per_tensor_affine,
    reduce_range=True,
)
#: weights: per-tensor symmetric qint8
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=_dtype.qint8,
    qscheme=_qscheme.per_tensor_symmetric,
    reduce_range=False,
)
#: weights: per-channel symmetric qint8 (axis 0), moving-average observer
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=_dtype.qint8,
    qscheme=_qscheme.per_channel_symmetric,
    reduce_range=False,
    ch_axis=0,
)
#: the fused forms (what ``get_default_qat_qconfig`` uses)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=_dtype.quint8
)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=_dtype.qint8,
    qscheme=_qscheme.per_tensor_symmetric,
)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=_dtype.qint8,
    qscheme=_qscheme.per_channel_symmetric,
)
