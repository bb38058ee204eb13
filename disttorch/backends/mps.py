"""``torch.backends.mps``: the Apple GPU backend is neither built nor available."""

from __future__ import annotations

__all__ = ["is_available", "is_built", "is_macos13_or_newer", "is_macos_or_newer"]


def is_available() -> bool:
    """False: no MPS device."""
    return False


def is_built() -> bool:
    """False: disttorch has no MPS backend."""
    return False


def is_macos_or_newer(major: int, minor: int) -> bool:
    """Whether MPS runs on macOS ``major.minor`` or newer: a ``RuntimeError`` without the
    backend, as PyTorch's CPU build answers."""
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


def is_macos13_or_newer(minor: int = 0) -> bool:
    """``is_macos_or_newer(13, minor)``."""
    return is_macos_or_newer(13, minor)
