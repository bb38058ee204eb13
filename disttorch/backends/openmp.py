"""``torch.backends.openmp``: disttorch has no OpenMP parallel loops of its own (threads are
NumPy's BLAS threads, see ``torch.set_num_threads``), so ``is_available()`` is False."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: no OpenMP in disttorch itself."""
    return False
