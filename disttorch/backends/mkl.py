"""``torch.backends.mkl``: disttorch does not link Intel MKL itself (NumPy's BLAS does the
matrix products), so ``is_available()`` is False (a CPU build of PyTorch answers True)."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: disttorch has no MKL of its own."""
    return False
