"""``skip_init``: build a module without running its parameter initialisation."""

from __future__ import annotations

import inspect
from typing import Any

from .. import init as _init
from ..modules.module import Module

__all__ = ["skip_init"]

_FILLERS = [name for name in _init.__all__ if name.endswith("_") and name != "calculate_gain"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """Instantiate ``module_cls(*args, **kwargs)`` with its parameters and buffers left
    uninitialised (their values are arbitrary; fill them yourself). As in PyTorch, the
    class must accept a ``device`` keyword argument. The ``nn.init`` fillers are skipped
    while the module is built (process-wide, so do not build modules in other threads
    meanwhile), so no random numbers are drawn."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")  # noqa: TRY004
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    saved = {name: getattr(_init, name) for name in _FILLERS}
    try:
        for name in _FILLERS:
            setattr(_init, name, lambda tensor, *a, **k: tensor)
        return module_cls(*args, **kwargs)
    finally:
        for name, fn in saved.items():
            setattr(_init, name, fn)
