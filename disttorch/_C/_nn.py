"""``torch._C._nn``: ``_parse_to``, how ``Tensor.to`` / ``Module.to`` read their arguments."""

from __future__ import annotations

from typing import Any

from .._dtype import bool as bool_
from .._dtype import dtype, float64, int64
from .._tensor import Tensor, device

__all__ = ["_parse_to"]

_PY_TYPES = {float: float64, int: int64, bool: bool_}


def _parse_to(*args: Any, **kwargs: Any) -> tuple[device | None, dtype | None, bool, Any]:
    """``(device, dtype, non_blocking, memory_format)`` from ``to``'s arguments:
    ``(device, dtype, non_blocking)``, ``(dtype, non_blocking)`` or ``(tensor, non_blocking)``,
    each also by keyword; what is not given is None (``non_blocking`` False)."""
    dev = kwargs.get("device")
    dt = _PY_TYPES.get(kwargs.get("dtype"), kwargs.get("dtype"))
    non_blocking = bool(kwargs.get("non_blocking", False))
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        dev, dt = rest[0].device, rest[0].dtype
        rest.pop(0)
    elif rest and (isinstance(rest[0], (str, device)) or (type(rest[0]) is int)):
        dev = rest.pop(0)
    if rest and (isinstance(rest[0], dtype) or rest[0] in _PY_TYPES):
        dt = _PY_TYPES.get(rest[0], rest[0])
        rest.pop(0)
    if rest:
        non_blocking = bool(rest.pop(0))
    if len(rest) > 1 or (rest and not isinstance(rest[0], bool)):
        raise TypeError(
            "to() received an invalid combination of arguments: expected (device, dtype, "
            f"non_blocking, copy), (dtype, non_blocking, copy) or (tensor, non_blocking, copy), got {args}"
        )
    if dev is not None and not isinstance(dev, device):
        dev = device(dev)
    return dev, dt, non_blocking, kwargs.get("memory_format")
