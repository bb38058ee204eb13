"""``torch.backends.mps``: the Apple GPU backend is neither built nor available."""

from __future__ import annotations

__all__ = ["is_available", "is_built", "is_macos13_or_newer"]


def is_available() -> bool:
    """False: no MPS device."""
    return False


def is_built() -> bool:
    """False: disttorch has no MPS backend."""
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    """False: no MPS backend to ask."""
    return False
