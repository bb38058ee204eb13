"""``model_averaging.utils``: average parameters over a process group, flattened into one
buffer for a single all-reduce (as PyTorch's)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["average_parameters", "average_parameters_or_parameter_groups", "get_params_to_average"]


def average_parameters(params: Iterator[Any], process_group: Any) -> None:
    """Average ``params`` over ``process_group`` (``None``: the world): one flat buffer is
    divided by the group's size and all-reduced, and each parameter's ``data`` becomes its
    slice of it (cast back to the parameter's dtype). A rank outside the group does nothing."""
    from .... import cat
    from .... import distributed as dist

    group = process_group if process_group is not None else dist.group.WORLD
    if dist._rank_not_in_group(group):
        return
    params = list(params)
    flat = cat([p.data.reshape(-1) for p in params])
    flat /= dist.get_world_size(group)
    dist.all_reduce(flat, group=group)
    offset = 0
    for p in params:
        p.data = flat[offset : offset + p.numel()].view_as(p).type_as(p)
        offset += p.numel()


def get_params_to_average(params: Iterable[Any]) -> list:
    """The parameters (of a model, or of an optimiser's parameter groups) that have a gradient."""
    filtered = []
    for param in params:
        if _is_parameter(param):
            if param.grad is not None:
                filtered.append(param)
        elif isinstance(param, dict):
            filtered.extend(p for p in param["params"] if p.grad is not None)
        else:
            raise NotImplementedError(f"Parameter input of type {type(param)} is not supported")
    return filtered


def _is_parameter(obj: Any) -> bool:
    """Whether ``obj`` is an ``nn.Parameter`` (distributed does not import nn: before nn is
    loaded, nothing is one)."""
    module = sys.modules.get("disttorch.nn.parameter")
    return module is not None and isinstance(obj, module.Parameter)


def average_parameters_or_parameter_groups(params: Iterable[Any], process_group: Any) -> None:
    """Average the parameters with a gradient among ``params`` (parameters or parameter groups)."""
    average_parameters(iter(get_params_to_average(params)), process_group)
