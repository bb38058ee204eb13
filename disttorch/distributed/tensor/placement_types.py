"""How a ``DTensor`` is laid out along each dimension of its mesh: ``Shard(dim)`` (split
along a tensor dimension, in ``torch.chunk`` pieces), ``Replicate()`` (whole on every rank)
or ``Partial()`` (every rank holds a summand)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ._layout import chunk_bounds

__all__ = ["Placement", "Shard", "Replicate", "Partial", "cut_order"]


class Placement:
    """The base of the placement types."""

    def is_shard(self, dim: int | None = None) -> bool:
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        return isinstance(self, Replicate)

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return isinstance(self, Partial) and (reduce_op is None or self.reduce_op == reduce_op)


@dataclass(frozen=True)
class Shard(Placement):
    """Split along tensor dimension ``dim``: mesh rank ``r`` holds chunk ``r`` of
    ``torch.chunk(t, n, dim)`` (the last ranks may hold fewer rows, or none)."""

    dim: int

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"

    @staticmethod
    def local_shard_size_and_offset(size_on_dim: int, num_chunks: int, rank: int) -> tuple[int, int]:
        """``(rows, first row)`` of piece ``rank`` of ``size_on_dim`` rows cut ``num_chunks`` ways."""
        start, stop = chunk_bounds(size_on_dim, num_chunks, rank)
        return stop - start, start

    _local_shard_size_and_offset = local_shard_size_and_offset


@dataclass(frozen=True)
class _StridedShard(Shard):
    """A cut made inside the pieces of the later mesh dimensions' cuts of the same tensor
    dimension (``split_factor``: how many pieces those make), as PyTorch lays out FSDP's
    shard of a tensor-parallel piece: ``(_StridedShard(0, sf=tp), Shard(0))`` on ``(dp, tp)``
    is row-chunk ``dp`` of the ``tp``-th row-chunk. Ops by sharding propagation refuse it
    (``redistribute`` first); ``redistribute``, ``full_tensor`` and ``to_local`` take it."""

    split_factor: int = 1

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self) -> str:
        return f"_S({self.dim}, {self.split_factor})"


@dataclass(frozen=True)
class Replicate(Placement):
    """The whole tensor on every rank of the mesh dimension."""

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


@dataclass(frozen=True)
class Partial(Placement):
    """Every rank holds a summand; the tensor is their reduction by ``reduce_op``."""

    reduce_op: str = "sum"

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"


def cut_order(placements: Sequence[Placement]) -> list[int]:
    """The mesh dimensions in the order their cuts nest (outermost first): mesh order, each
    ``_StridedShard`` after the plain ones (it cuts inside their pieces)."""
    return sorted(range(len(placements)), key=lambda i: (isinstance(placements[i], _StridedShard), i))
