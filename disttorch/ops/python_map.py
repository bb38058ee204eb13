"""``Tensor.apply_``, ``map_`` and ``map2_``: a Python callable applied to every element, in
place (PyTorch's CPU-only helpers, "not for code that needs speed").

The callable receives Python numbers (``float``, ``int`` or ``bool`` as the dtype is) and
its results are cast to the tensor's dtype (floats into an integer tensor truncate). These
write outside autograd: a tensor that requires grad is refused, as in PyTorch.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._dtype import scalar_type_name
from .._tensor import Tensor

__all__: list = []  # Tensor methods only

TENSOR_METHODS = ("apply_", "map_", "map2_")


def _legacy_name(dt: np.dtype) -> str:
    return f"torch.{scalar_type_name(dt)}Tensor"


def _run(self: Tensor, op: str, fn: Callable, others: tuple) -> Tensor:
    if self.requires_grad:
        raise RuntimeError(
            f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead."
        )
    if not callable(fn):
        raise TypeError(f"{op}(): the last argument must be callable, got {type(fn).__name__}")
    x = self._data
    columns = [x.reshape(-1).tolist()]
    for name, other in others:
        if not isinstance(other, Tensor):
            raise TypeError(f"{op}: argument '{name}' must be Tensor, not {type(other).__name__}")
        if other._data.dtype != x.dtype:
            raise TypeError(
                f"{op}: expected {_legacy_name(x.dtype)} for '{name}' (got {_legacy_name(other._data.dtype)})"
            )
        try:
            columns.append(np.broadcast_to(other._data, x.shape).reshape(-1).tolist())
        except ValueError:
            raise RuntimeError(
                f"{op}: '{name}' of shape {list(other._data.shape)} cannot be broadcast to self's "
                f"shape {list(x.shape)}"
            ) from None
    results = [fn(*values) for values in zip(*columns)]
    try:
        new = np.asarray(results, dtype=np.float64 if x.dtype.kind in "fV" else object).astype(x.dtype)
    except (TypeError, ValueError):
        bad = next(r for r in results if not isinstance(r, (int, float, bool, np.number)))
        raise TypeError(f"must be real number, not {type(bad).__name__}") from None
    x[...] = new.reshape(x.shape)
    self._bump_version()
    return self


def apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Replace every element ``v`` by ``callable(v)``, in place; returns ``self``."""
    return _run(self, "apply_", callable, ())


def map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """Replace every element ``a`` by ``callable(a, b)``, ``b`` the matching element of
    ``tensor`` (same dtype, broadcast to ``self``), in place; returns ``self``."""
    return _run(self, "map_", callable, (("other", tensor),))


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:
    """Replace every element ``a`` by ``callable(a, b, c)``, ``b`` and ``c`` the matching
    elements of ``x`` and ``y`` (same dtype, broadcast to ``self``), in place."""
    return _run(self, "map2_", callable, (("x", x), ("y", y)))
