"""Many subgroups at once: :func:`new_subgroups` (consecutive blocks of ranks) and
:func:`new_subgroups_by_enumeration` (listed blocks), as PyTorch builds them on
:func:`~disttorch.distributed.new_group`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .engine.process_group import ProcessGroup
from .groups import get_process_group_ranks, get_rank, get_world_size, new_group

__all__ = ["new_subgroups", "new_subgroups_by_enumeration"]


def new_subgroups_by_enumeration(
    ranks_per_subgroup_list: list[list[int]],
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    group_desc: str | None = None,
) -> tuple[ProcessGroup | None, list]:
    """One group per list of global ranks (every rank calls it with the same lists; a rank
    may be in one list at most). Returns this rank's subgroup (``None`` if it is in no list)
    and every subgroup, in the order given (``GroupMember.NON_GROUP_MEMBER`` for those this
    rank is not in), for ``destroy_process_group`` later."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    subgroups: list = []
    mine = None
    owner: dict[int, list[int]] = {}
    for ranks in ranks_per_subgroup_list:
        subgroup = new_group(
            ranks=ranks, timeout=timeout, backend=backend, pg_options=pg_options, group_desc=group_desc
        )
        subgroups.append(subgroup)
        for rank in ranks:
            if rank in owner:
                raise ValueError(f"Rank {rank} has appeared in both subgroup {owner[rank]} and {ranks}")
            owner[rank] = ranks
            if rank == get_rank():
                mine = subgroup
    return mine, subgroups


def new_subgroups(
    group_size: int | None = None,
    group: ProcessGroup | None = None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    group_desc: str | None = None,
) -> tuple[ProcessGroup | None, list]:
    """Cut ``group`` (default: every rank) into consecutive subgroups of ``group_size`` ranks
    and return this rank's and all of them (see :func:`new_subgroups_by_enumeration`).
    ``group_size`` is required here: PyTorch's default, one subgroup per machine's GPUs,
    needs CUDA."""
    if group_size is None:
        raise ValueError(
            "Default group size only takes effect when CUDA is available.If your subgroup using a "
            "backend that does not depend on CUDA,please pass in 'group_size' correctly."
        )
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})")
    if world_size % group_size:
        raise ValueError(f"The world size ({world_size}) must be divisible by 'group_size={group_size}'")
    ranks = get_process_group_ranks(group)
    blocks = [ranks[i : i + group_size] for i in range(0, len(ranks), group_size)]
    return new_subgroups_by_enumeration(
        blocks, timeout=timeout, backend=backend, pg_options=pg_options, group_desc=group_desc
    )
