"""The check, at the root's first forward, that every rank sharded the same modules.

Ranks that wrapped the model differently (another ``auto_wrap_policy``, ``fully_shard`` on
other modules) gather other parameters in each collective. Where the sizes differ, the
collectives' signature check names both sides; where they agree (two layers of one shape,
each wrapped on one rank) each rank would silently build its parameters from pieces of
other parameters. One object all-gather per group of the units, once, compares what each
unit holds (module, parameter names, shapes, dtypes) and raises on every rank, naming the
first unit that differs and both sides.
"""

from __future__ import annotations

from typing import Any

from ....distributed import get_global_rank, get_rank
from ....distributed.object_collectives import all_gather_object

__all__ = ["check_same_units"]


def _describe(unit: tuple) -> str:
    module, params = unit
    held = ", ".join(f"{name} {list(shape)} {dtype}" for name, shape, dtype in params) or "no parameters"
    return f"'{module or '(root)'}' ({held})"


def check_same_units(root: Any, states: list) -> None:
    """Raise ``RuntimeError`` on every rank when the fully-sharded modules below ``root``
    (``states``, in module order) differ between the ranks of their groups."""
    units = [s.unit for s in states if s.unit is not None]
    if not units:
        return
    names = {id(m): n for n, m in root.named_modules()}
    mine = []
    for s in states:
        prefix = names.get(id(s.module), "?")
        params = s.unit.params if s.unit is not None else []
        held = [
            (
                ".".join(filter(None, (names.get(id(p.slots[0][0]), "?"), p.slots[0][1]))),
                p.global_shape,
                str(p.dtype),
            )
            for p in params
        ]
        mine.append((prefix, held))
    mesh = units[0].mesh
    for dim in range(mesh.ndim):
        group = mesh.get_group(dim)
        everyone: list = [None] * mesh.size(dim)
        all_gather_object(everyone, mine, group=group)
        for i, theirs in enumerate(everyone):
            if theirs == mine:
                continue
            other = get_global_rank(group, i)
            at = next(
                (k for k, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs))
            )
            me = get_rank()
            ours = _describe(mine[at]) if at < len(mine) else "none"
            other_unit = _describe(theirs[at]) if at < len(theirs) else "none"
            raise RuntimeError(
                f"FSDP: the ranks sharded the model differently: fully-sharded module {at} (in module order) is "
                f"{ours} on rank {me} but {other_unit} on rank {other} ({len(mine)} and {len(theirs)} "
                "fully-sharded modules); every rank must wrap the same modules (the same auto_wrap_policy, "
                "fully_shard on the same modules), or each would build its parameters from other parameters' shards"
            )
