"""``torch.backends.mkldnn``: disttorch does not use oneDNN (its kernels are NumPy's), so
``is_available()`` is False (a CPU build of PyTorch answers True); ``enabled`` is kept."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

__all__ = ["enabled", "flags", "is_available"]

enabled = True


def is_available() -> bool:
    """False: no oneDNN in disttorch."""
    return False


@contextlib.contextmanager
def flags(enabled: bool = False) -> Iterator[None]:
    """Set ``enabled`` inside a ``with`` block, restoring it after."""
    mod = sys.modules[__name__]
    old, mod.enabled = mod.enabled, enabled
    try:
        yield
    finally:
        mod.enabled = old
