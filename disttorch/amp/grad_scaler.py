"""``GradScaler``: dynamic loss scaling, as ``torch.amp.GradScaler``.

The loss is multiplied by a scale before backward so small float16/bfloat16 gradients
do not underflow; before the optimiser step the gradients are divided by it again and
checked: a step whose gradients hold an inf or NaN is skipped and the scale shrinks
(``backoff_factor``); after ``growth_interval`` clean steps in a row it grows
(``growth_factor``). Device ``'cpu'`` scales for real; ``'cuda'`` (the default, as in
PyTorch) warns and disables itself on this CPU-only build, as PyTorch's CPU build does;
a disabled scaler passes everything through (``scale(loss)`` is ``loss``, ``step`` is
``optimizer.step()``).
"""

from __future__ import annotations

import warnings
from enum import Enum
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimiser is within one iteration."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _tensor(value: float, dtype: _dtype.dtype = _dtype.float32) -> Any:
    return Tensor._make(np.array(value, dtype=dtype.numpy))


class GradScaler:
    """Scale the loss, unscale and check the gradients, skip bad steps, adapt the scale.

    Args:
        device: ``'cpu'`` scales; ``'cuda'`` (default) is disabled here with a warning.
        init_scale: the first scale (``2.0**16``).
        growth_factor: the scale is multiplied by it after ``growth_interval`` clean steps.
        backoff_factor: the scale is multiplied by it after a step with inf/NaN gradients.
        growth_interval: clean steps in a row before the scale grows.
        enabled: ``False`` makes every method a pass-through.

    Example::

        scaler = disttorch.amp.GradScaler("cpu")
        with disttorch.autocast("cpu", dtype=disttorch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)   # skipped if a gradient is inf/NaN
        scaler.update()
    """

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda":
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.", stacklevel=2
            )
            self._enabled = False
        elif enabled and device != "cpu":
            warnings.warn(
                f"GradScaler is enabled for device '{device}', but disttorch computes on "
                f"the CPU only.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: Any = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker: int | None = None
        self._per_optimizer_states: dict[int, dict] = {}

    def _fresh_state(self) -> dict:
        return {"stage": OptState.READY, "found_inf": None}

    def _state_of(self, optimizer: Any) -> dict:
        return self._per_optimizer_states.setdefault(id(optimizer), self._fresh_state())

    def _check_started(self, funcname: str) -> None:
        if self._scale is None:
            raise RuntimeError(
                f"Attempted {funcname} but _scale is None.  This may indicate your "
                "script did not use scaler.scale(loss or outputs) earlier in the "
                "iteration."
            )

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or tensors in lists/tuples) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = _tensor(self._init_scale)
            self._growth_tracker = self._init_growth_tracker
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale (in place) and record whether any
        is inf/NaN. Call it before clipping gradients; ``step`` calls it if you did not."""
        self._unscale(optimizer, allow_fp16=False)

    def _unscale(self, optimizer: Any, allow_fp16: bool) -> None:
        """``unscale_``; float16 gradients are refused unless ``allow_fp16``."""
        if not self._enabled:
            return
        self._check_started("unscale_")
        state = self._state_of(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / np.float64(self._scale._data))
        found = None
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype is _dtype.float16 and not allow_fp16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                arr = g._data
                bad = not np.isfinite(arr.astype(np.float32, copy=False)).all()
                np.multiply(arr, inv_scale, out=arr, casting="unsafe")
                g._bump_version()
                found = bool(found) or bad
        state["found_inf"] = found
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (if not done yet), then ``optimizer.step(*args, **kwargs)`` unless a
        gradient was inf/NaN. Returns what ``optimizer.step`` returned (None if skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_started("step")
        state = self._state_of(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Adapt the scale after the iteration's steps (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        self._check_started("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.dtype is not _dtype.float32:
                    raise ValueError(
                        "new_scale should be a float or a 1-element "
                        "torch.cuda.FloatTensor or torch.FloatTensor with "
                        "requires_grad=False."
                    )
                self._scale = _tensor(float(new_scale.item()))
            else:
                self._scale = _tensor(float(new_scale))
        else:
            found = [
                s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None
            ]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            scale = float(self._scale._data)
            if any(found):
                scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    scale *= self._growth_factor
                    self._growth_tracker = 0
            self._scale = _tensor(scale)
        self._per_optimizer_states = {}

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale._data)

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def is_enabled(self) -> bool:
        """Whether this scaler scales (False when disabled or on an unavailable device)."""
        return self._enabled

    def state_dict(self) -> dict:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` (an empty dict when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` returned."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = _tensor(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = state["_growth_tracker"] = None
        return state
