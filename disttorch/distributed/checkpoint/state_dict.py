"""Model and optimiser state dicts of sharded models, full or sharded (mirrors
``torch.distributed.checkpoint.state_dict``).

- sharded (the default): every ``DTensor`` parameter stays this rank's shard; optimiser
  states of a sharded parameter become DTensors with the parameter's layout;
- ``full_state_dict=True``: the shards are gathered into whole tensors (a collective: every
  rank calls it), loadable by a plain model, by DDP and by PyTorch; with ``cpu_offload=True``
  only rank 0 keeps them (the others get an empty dict), as in PyTorch.

Keys are the parameters' names in the plain model: the wrapper's ``_fsdp_wrapped_module.``
(and ``torch.compile``'s ``_orig_mod.``) are left out. Loading takes either form: a whole
tensor is cut into this rank's shard, a DTensor's local piece is copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._tensor import Tensor
from .. import collectives, groups
from ..tensor import DTensor, distribute_tensor
from ..tensor._layout import chunk_bounds

__all__ = [
    "StateDictOptions",
    "get_model_state_dict",
    "set_model_state_dict",
    "get_optimizer_state_dict",
    "set_optimizer_state_dict",
    "get_state_dict",
    "set_state_dict",
]

_WRAPPER_PREFIXES = ("_fsdp_wrapped_module.", "_checkpoint_wrapped_module.", "_orig_mod.")


@dataclass
class StateDictOptions:
    """How state dicts are made and loaded (the fields of PyTorch's; see the module header)."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def clean_key(key: str) -> str:
    """The plain model's name of a state-dict key (wrapper prefixes removed)."""
    for prefix in _WRAPPER_PREFIXES:
        key = key.replace(prefix, "")
    return key


def _rank() -> int:
    return groups.get_rank() if groups.is_initialized() else 0


def _whole(t: Any) -> Any:
    return t.full_tensor() if isinstance(t, DTensor) else t


def get_model_state_dict(
    model: Any, *, submodules: Any = None, options: StateDictOptions | None = None
) -> dict:
    """The model's state dict, sharded or full (see the module header)."""
    options = options or StateDictOptions()
    frozen = {clean_key(n) for n, p in model.named_parameters() if not p.requires_grad}
    out = {}
    for key, value in model.state_dict().items():
        key = clean_key(key)
        if options.ignore_frozen_params and key in frozen:
            continue
        out[key] = _whole(value) if options.full_state_dict else value
    if options.full_state_dict and options.cpu_offload and _rank() != 0:
        return {}
    return out


def _broadcast_whole(value: Any, like: Any) -> Tensor:
    """Rank 0's whole tensor on every rank (the others allocate it from ``like``'s spec)."""
    shape = like.global_shape if isinstance(like, DTensor) else tuple(like._data.shape)
    buf = np.ascontiguousarray(value._data) if _rank() == 0 else np.empty(shape, like._data.dtype)
    collectives.broadcast(buf, src=0)
    return Tensor._make(buf)


def set_model_state_dict(
    model: Any, model_state_dict: dict, *, options: StateDictOptions | None = None
) -> Any:
    """Load a full or sharded state dict into the model (whole tensors are cut into this
    rank's shards). With ``broadcast_from_rank0=True`` only rank 0 needs the values. A model
    built on the meta device (and sharded there) takes the loaded tensors as its parameters
    (``load_state_dict(..., assign=True)``), as PyTorch's does: it has no memory to copy into."""
    options = options or StateDictOptions()
    currents = model.state_dict(keep_vars=True)
    on_meta = any(isinstance(t, Tensor) and t.is_meta for t in currents.values())
    converted = {}
    for key, current in currents.items():
        name = clean_key(key)
        if options.broadcast_from_rank0:
            value = _broadcast_whole(model_state_dict.get(name), current)
        elif name in model_state_dict:
            value = model_state_dict[name]
        else:
            continue
        if isinstance(current, DTensor) and not isinstance(value, DTensor):
            value = distribute_tensor(value, current.device_mesh, current.placements, src_data_rank=None)
        converted[key] = value
    return model.load_state_dict(converted, strict=options.strict, assign=on_meta)


def _param_names(model: Any, optimizer: Any) -> list[tuple[str, Any]]:
    """The optimiser's parameters in its own order, with their names in the model."""
    names = {id(p): clean_key(n) for n, p in model.named_parameters()}
    return [(names[id(p)], p) for group in optimizer.param_groups for p in group["params"]]


def _state_value_out(value: Any, param: Any, full: bool) -> Any:
    if not (
        isinstance(param, DTensor) and isinstance(value, Tensor) and value._data.shape == param._data.shape
    ):
        return value
    if value._data.ndim == 0 and param._data.ndim == 0:
        return value
    spec = (param.device_mesh, param.placements, param.global_shape)
    shard = DTensor._wrap(value._data, *spec)
    return shard.full_tensor() if full else shard


def _init_optim_state(optimizer: Any) -> None:
    """Give a fresh optimiser its state (a step of zero gradients at learning rate 0, as
    PyTorch does), so that its state dict has every key a checkpoint can be loaded into."""
    if optimizer.state:
        return
    lrs = [g["lr"] for g in optimizer.param_groups]
    params = [p for g in optimizer.param_groups for p in g["params"] if p.requires_grad and p.grad is None]
    for p in params:
        p.grad = Tensor._make(np.zeros_like(p._data))
    for g in optimizer.param_groups:
        g["lr"] = 0.0
    optimizer.step()
    for g, lr in zip(optimizer.param_groups, lrs):
        g["lr"] = lr
    for p in params:
        p.grad = None


def get_optimizer_state_dict(
    model: Any, optimizers: Any, *, submodules: Any = None, options: StateDictOptions | None = None
) -> dict:
    """The optimiser's state dict keyed by parameter name; a sharded parameter's states are
    DTensors (sharded) or gathered whole (``full_state_dict=True``). A fresh optimiser's
    state is created first (see ``_init_optim_state``)."""
    options = options or StateDictOptions()
    optimizer = optimizers[0] if isinstance(optimizers, (list, tuple)) else optimizers
    _init_optim_state(optimizer)
    raw = optimizer.state_dict()
    params = _param_names(model, optimizer)
    state = {}
    for index, (name, param) in enumerate(params):
        if index in raw["state"]:
            entry = raw["state"][index]
            state[name] = {k: _state_value_out(v, param, options.full_state_dict) for k, v in entry.items()}
    groups_out = []
    start = 0
    for group in raw["param_groups"]:
        count = len(group["params"])
        groups_out.append({**group, "params": [params[i][0] for i in range(start, start + count)]})
        start += count
    if options.full_state_dict and options.cpu_offload and _rank() != 0:
        return {}
    return {"state": state, "param_groups": groups_out}


def _state_value_in(value: Any, param: Any) -> Any:
    if isinstance(value, DTensor):
        return Tensor._make(np.array(value._data, copy=True))
    if (
        isinstance(param, DTensor)
        and isinstance(value, Tensor)
        and tuple(value._data.shape) == param.global_shape
    ):
        if not param.global_shape:
            return value
        mesh = param.device_mesh
        dim = mesh.ndim - 1
        rows = value._data.reshape((-1,) + value._data.shape[1:])
        start, stop = chunk_bounds(rows.shape[0], mesh.size(dim), mesh.get_local_rank(dim))
        return Tensor._make(np.array(rows[start:stop], copy=True))
    return value


def loadable_optimizer_state_dict(model: Any, optimizer: Any, optim_state_dict: dict) -> dict:
    """A state dict of :func:`get_optimizer_state_dict` (by name, full or sharded) in the
    optimiser's own form (by index, this rank's shards), for ``optimizer.load_state_dict``."""
    params = _param_names(model, optimizer)
    index = {name: i for i, (name, _) in enumerate(params)}
    state = {}
    for name, entry in optim_state_dict["state"].items():
        param = params[index[name]][1]
        state[index[name]] = {k: _state_value_in(v, param) for k, v in entry.items()}
    param_groups = [  # in the optimiser's order: load_state_dict pairs them by position
        {**g, "params": sorted(index[n] for n in g["params"])} for g in optim_state_dict["param_groups"]
    ]
    return {"state": state, "param_groups": param_groups}


def set_optimizer_state_dict(
    model: Any, optimizers: Any, optim_state_dict: dict, *, options: StateDictOptions | None = None
) -> None:
    """Load a state dict made by :func:`get_optimizer_state_dict` (full or sharded)."""
    optimizer = optimizers[0] if isinstance(optimizers, (list, tuple)) else optimizers
    optimizer.load_state_dict(loadable_optimizer_state_dict(model, optimizer, optim_state_dict))


def get_state_dict(
    model: Any, optimizers: Any, *, submodules: Any = None, options: StateDictOptions | None = None
) -> tuple[dict, dict]:
    """``(get_model_state_dict(...), get_optimizer_state_dict(...))``."""
    return get_model_state_dict(model, options=options), get_optimizer_state_dict(
        model, optimizers, options=options
    )


def set_state_dict(
    model: Any,
    optimizers: Any,
    *,
    model_state_dict: dict,
    optim_state_dict: dict,
    options: StateDictOptions | None = None,
) -> Any:
    """Load both; returns the model's missing and unexpected keys."""
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
