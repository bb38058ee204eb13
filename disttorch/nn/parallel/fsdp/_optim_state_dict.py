"""The ``FullyShardedDataParallel`` wrapper's optimiser state dicts, keyed by parameter name
and ordered as PyTorch's: its ``FlatParameter`` units (``use_orig_params=False``) list each
unit's parameters, the root's first and then the nested units' in module order, each
parameter's states by name; with ``use_orig_params=True`` the parameters go by sorted name,
their states and the parameter groups in the optimiser's order."""

from __future__ import annotations

from typing import Any

from ....distributed import groups
from ....distributed.checkpoint.state_dict import (
    StateDictOptions,
    clean_key,
    get_optimizer_state_dict,
    loadable_optimizer_state_dict,
)
from ....distributed.object_collectives import broadcast_object_list
from ...modules.module import Module
from ._api import FSDPModule

__all__ = ["optim_state_dict", "scatter_full_optim_state_dict"]


def _unit_order(model: Module) -> dict[str, int]:
    """Every sharded parameter's name and its place in PyTorch's flat-parameter order."""
    names = {id(p): clean_key(n) for n, p in model.named_parameters()}
    order: dict[str, int] = {}
    for m in model.modules():
        unit = m._fsdp_state.unit if isinstance(m, FSDPModule) else None
        for fp in unit.params if unit is not None else ():
            name = names.get(id(fp.sharded))
            if name is not None:
                order.setdefault(name, len(order))
    return order


def optim_state_dict(model: Module, optim: Any, options: StateDictOptions, use_orig_params: bool) -> dict:
    """The optimiser's state dict by name (full or sharded as ``options`` say; an empty dict
    on ranks other than 0 with ``full_state_dict`` and ``cpu_offload``), in PyTorch's order."""
    out = get_optimizer_state_dict(model, optim, options=options)
    if not out:
        return out
    if use_orig_params:
        out["state"] = {name: out["state"][name] for name in sorted(out["state"])}
        return out
    order = _unit_order(model)
    names = sorted(out["state"], key=lambda n: order.get(n, len(order)))
    for group in out["param_groups"]:
        group["params"] = sorted(group["params"], key=lambda n: order.get(n, len(order)))
    out["state"] = {name: dict(sorted(out["state"][name].items())) for name in names}
    return out


def scatter_full_optim_state_dict(full: dict | None, model: Module, optim: Any, group: Any) -> dict:
    """Rank 0's full optimiser state dict (other ranks pass ``None``) broadcast over
    ``group`` and cut to this rank's shards, ready for ``optim.load_state_dict``."""
    if optim is None:
        raise ValueError(
            "scatter_full_optim_state_dict: pass optim= (the optimiser the state is loaded into); "
            "optim_input alone is not supported"
        )
    box = [full]
    broadcast_object_list(box, src=0, group=group)
    if box[0] is None:
        rank = groups.get_rank() if groups.is_initialized() else 0
        raise ValueError(f"scatter_full_optim_state_dict: rank 0 passed no state dict (on rank {rank})")
    return loadable_optimizer_state_dict(model, optim, box[0])
