"""Where a shard's elements lie along one tensor dimension: ``torch.chunk``'s split of
``size`` rows into ``n`` pieces (``ceil(size / n)`` rows each, the last ones shorter or
empty), and the collectives that move such pieces along one mesh dimension: gathering
them into the whole, reduce-scattering summands into them, cutting a rank's own piece.

Collectives need equal blocks, so uneven pieces travel padded to ``chunk_rows`` and the
padding is dropped on arrival. Every function takes the tensor dimension ``dim``; the
collective runs on that dimension moved to the front."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import collectives
from ..comm_record import counted_as
from ..reduce_ops import ReduceOp

__all__ = ["chunk_rows", "chunk_bounds", "local_chunk", "gather_dim", "reduce_scatter_dim"]


def chunk_rows(size: int, n: int) -> int:
    """Rows per piece (every piece padded to this many for collectives)."""
    return -(-size // n) if size else 0


def chunk_bounds(size: int, n: int, index: int) -> tuple[int, int]:
    """``(start, stop)`` of piece ``index`` of ``size`` rows split ``n`` ways."""
    rows = chunk_rows(size, n)
    start = min(index * rows, size)
    return start, min(start + rows, size)


def local_chunk(whole: np.ndarray, dim: int, n: int, index: int) -> np.ndarray:
    """Piece ``index`` of ``whole`` cut ``n`` ways along ``dim`` (a copy)."""
    start, stop = chunk_bounds(whole.shape[dim], n, index)
    return np.array(np.take(whole, np.arange(start, stop), axis=dim), copy=True)


def gather_dim(local: np.ndarray, dim: int, size: int, group: Any, n: int) -> np.ndarray:
    """The whole array, ``size`` long along ``dim``, from every rank's piece along ``dim``
    (pieces padded to equal length for the collective, the padding dropped after)."""
    front = np.moveaxis(local, dim, 0)
    rows = chunk_rows(size, n)
    padded = np.zeros((rows,) + front.shape[1:], local.dtype)
    padded[: front.shape[0]] = front
    out = np.empty((n * rows,) + front.shape[1:], local.dtype)
    with counted_as("c10d_functional.all_gather_into_tensor"):
        collectives.all_gather_into_tensor(out, padded, group=group)
    return np.ascontiguousarray(np.moveaxis(out[:size], 0, dim))


def reduce_scatter_dim(
    summand: np.ndarray, dim: int, op: ReduceOp, group: Any, n: int, index: int
) -> np.ndarray:
    """This rank's piece (``index`` of ``n`` along ``dim``) of the reduction of every rank's
    whole ``summand``: one ``reduce_scatter_tensor`` over blocks padded to equal length."""
    front = np.moveaxis(summand, dim, 0)
    size = front.shape[0]
    rows = chunk_rows(size, n)
    padded = np.zeros((n * rows,) + front.shape[1:], summand.dtype)
    padded[:size] = front
    out = np.empty((rows,) + front.shape[1:], summand.dtype)
    with counted_as("c10d_functional.reduce_scatter_tensor"):
        collectives.reduce_scatter_tensor(out, padded, op=op, group=group)
    start, stop = chunk_bounds(size, n, index)
    return np.ascontiguousarray(np.moveaxis(out[: stop - start], 0, dim))
