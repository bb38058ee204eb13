"""Where a shard's rows lie: ``torch.chunk``'s split of ``size`` rows into ``n`` pieces
(``ceil(size / n)`` rows each, the last ones shorter or empty), and the gathering of such
pieces back into the whole along dimension 0 through one ``all_gather_into_tensor``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import collectives

__all__ = ["chunk_rows", "chunk_bounds", "gather_rows"]


def chunk_rows(size: int, n: int) -> int:
    """Rows per piece (every piece padded to this many for collectives)."""
    return -(-size // n) if size else 0


def chunk_bounds(size: int, n: int, index: int) -> tuple[int, int]:
    """``(start, stop)`` of piece ``index`` of ``size`` rows split ``n`` ways."""
    rows = chunk_rows(size, n)
    start = min(index * rows, size)
    return start, min(start + rows, size)


def gather_rows(local: np.ndarray, size: int, group: Any, n: int) -> np.ndarray:
    """The whole ``size``-row array from every rank's piece along dim 0 (pieces padded to
    equal length for the collective, the padding dropped after)."""
    rows = chunk_rows(size, n)
    padded = np.zeros((rows,) + local.shape[1:], local.dtype)
    padded[: local.shape[0]] = local
    out = np.empty((n * rows,) + local.shape[1:], local.dtype)
    collectives.all_gather_into_tensor(out, padded, group=group)
    return out[:size]
