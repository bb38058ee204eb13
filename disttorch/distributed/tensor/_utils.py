"""Shard arithmetic that libraries import (mirrors ``torch.distributed.tensor._utils``)."""

from __future__ import annotations

from typing import Sequence

from ..device_mesh import DeviceMesh
from .placement_types import Placement, Shard, cut_order

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(
    global_shape: Sequence[int],
    mesh: DeviceMesh,
    placements: Sequence[Placement],
    coordinate: Sequence[int] | None = None,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The piece of a tensor of ``global_shape`` laid out by ``placements`` on ``mesh`` that
    the rank at mesh ``coordinate`` holds (default: this rank): its shape and the global
    index of its first element."""
    shape, offset = list(global_shape), [0] * len(global_shape)
    if coordinate is None:
        coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,) * len(shape), tuple(global_shape)
    for mesh_dim in cut_order(placements):
        placement = placements[mesh_dim]
        if isinstance(placement, Shard):
            size, start = Shard.local_shard_size_and_offset(
                shape[placement.dim], mesh.size(mesh_dim), coordinate[mesh_dim]
            )
            shape[placement.dim] = size
            offset[placement.dim] += start
    return tuple(shape), tuple(offset)
