"""The ``FullyShardedDataParallel`` wrapper's ``LOCAL_STATE_DICT``, laid out as PyTorch's FSDP1
lays it out: one ``<unit>._flat_param`` per unit, a 1-D ``ShardedTensor`` whose shard on each
rank is its ``1/N`` of the unit's parameters flattened and concatenated (in module order, a
shared parameter once), padded with zeros to a multiple of the shard group's size.

With ``use_orig_params=True`` each parameter starts on a 16-byte boundary (padding of 42s, as
PyTorch's), the padding to the group's size is 42s too, and every parameter of the unit is
also given as a plain 1-D tensor: the part of it that lies in this rank's shard (possibly
empty). ``_flat_param`` comes before the unit's other entries (after them with
``use_orig_params=True``), as PyTorch's.

disttorch keeps each parameter as dim-0 shards, not as a flat buffer: the flat shards are
cut from the gathered parameters (one all-gather each), and loading gathers the flat
shards back and gives every rank its rows. Loading ignores the per-parameter slices of a
unit whose ``_flat_param`` is there (PyTorch cannot load that dictionary at all)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...._tensor import Tensor
from ....distributed._shard.sharded_tensor import ShardedTensor
from ....distributed.tensor import DTensor

__all__ = ["flat_local_state_dict", "unflatten_local_state_dict"]

FLAT = "_flat_param"
_PADDING = 42  # PyTorch's value for address-alignment padding
_ALIGNMENT = 16  # bytes


def _in(key: str, prefix: str) -> bool:
    return not prefix or key.startswith(prefix)


def _units(sharded: dict, prefixes: list[str]) -> dict[str, list[str]]:
    """Each unit's (by key prefix, ``"0."``, ``""`` for the root) parameter keys, in order: a
    parameter belongs to the innermost unit holding it; a shared one is kept once."""
    owned: dict[str, list[str]] = {p: [] for p in prefixes}
    seen: set[int] = set()
    for key, value in sharded.items():
        if isinstance(value, DTensor) and id(value) not in seen:
            seen.add(id(value))
            owned[max((p for p in prefixes if _in(key, p)), key=len)].append(key)
    return {p: keys for p, keys in owned.items() if keys}


def _layout(shapes: list[tuple[int, ...]], dtype: np.dtype, n: int, align: bool) -> tuple[list[int], int]:
    """Where each parameter starts in the flat buffer, and the buffer's padded length."""
    step = _ALIGNMENT // dtype.itemsize if align else 1
    starts, total = [], 0
    for shape in shapes:
        total += -total % step
        starts.append(total)
        total += int(np.prod(shape, dtype=np.int64))
    return starts, total + -total % n


def _shard_group(value: DTensor) -> tuple[int, int]:
    """``(rank in the shard group, its size)``: the last mesh dimension shards."""
    mesh = value.device_mesh
    return mesh.get_coordinate()[-1], mesh.size(mesh.ndim - 1)


def flat_local_state_dict(sharded: dict, prefixes: list[str], use_orig_params: bool) -> dict:
    """``sharded`` (the model's sharded state dict: parameters as ``DTensor``s) as FSDP1's
    ``LOCAL_STATE_DICT``; ``prefixes`` are the units' key prefixes, outermost first."""
    units = _units(sharded, prefixes)
    flat: dict[str, Any] = {}
    slices: dict[str, Tensor] = {}
    for prefix, keys in units.items():
        params = [sharded[k] for k in keys]
        dtype = np.dtype(params[0]._data.dtype)
        rank, n = _shard_group(params[0])
        starts, total = _layout([tuple(p.shape) for p in params], dtype, n, use_orig_params)
        whole = np.full(total, _PADDING if use_orig_params else 0, dtype)
        for p, start in zip(params, starts):
            data = p.detach().full_tensor()._data.reshape(-1)
            whole[start : start + data.size] = data
        size = total // n
        lo = rank * size
        local = whole[lo : lo + size].copy()
        mesh, placements = params[0].device_mesh, params[0].placements
        flat[prefix] = ShardedTensor._from_dtensor(
            DTensor._wrap(local, mesh, placements, (total,)), requires_grad=True
        )
        for key, p, start in zip(keys, params, starts):
            a, b = max(start, lo), min(start + p.numel(), lo + size)
            slices[key] = Tensor._make(local[a - lo : max(a, b) - lo])
    # each unit's _flat_param goes before its entries (after them with use_orig_params), the
    # outer unit's first (the inner one's first)
    keys = list(sharded)
    entries = [(float(i), 0, k, v) for i, (k, v) in enumerate(sharded.items())]
    for depth, prefix in enumerate(prefixes):
        if prefix in flat:
            inside = [i for i, k in enumerate(keys) if _in(k, prefix)]
            position = inside[-1] + 0.5 if use_orig_params else inside[0] - 0.5
            entries.append((position, -depth if use_orig_params else depth, prefix + FLAT, flat[prefix]))
    out: dict[str, Any] = {}
    for _, _, key, value in sorted(entries, key=lambda e: e[:2]):
        if isinstance(value, DTensor):  # a parameter: its slice of the shard, or nothing
            if not use_orig_params or key not in slices:
                continue
            value = slices[key]
        out[key] = value
    return out


def unflatten_local_state_dict(state_dict: dict, sharded: dict, prefixes: list[str]) -> dict:
    """``state_dict`` (FSDP1's ``LOCAL_STATE_DICT``) with each unit's ``_flat_param`` turned
    back into the unit's whole parameters (gathered), for ``set_model_state_dict``;
    ``sharded`` is the model's current sharded state dict (the parameters' shapes)."""
    units = _units(sharded, prefixes)
    out = dict(state_dict)
    for prefix, keys in units.items():
        value = out.pop(prefix + FLAT, None)
        if value is None:
            continue
        if not isinstance(value, ShardedTensor):
            raise TypeError(
                f"{prefix + FLAT}: expected the ShardedTensor state_dict() gave, got {type(value).__name__}"
            )
        params = [sharded[k] for k in keys]
        dtype = np.dtype(params[0]._data.dtype)
        _, n = _shard_group(params[0])
        align = any(k in out for k in keys)  # use_orig_params=True also gave the slices
        starts, total = _layout([tuple(p.shape) for p in params], dtype, n, align)
        if tuple(value.size()) != (total,):
            raise ValueError(
                f"{prefix + FLAT}: a flat parameter of {tuple(value.size())[0]} elements does not fit this "
                f"unit's parameters ({total} with padding); load a LOCAL_STATE_DICT at the world size it was saved at"
            )
        whole = value._to_dtensor().full_tensor()._data
        for key, p, start in zip(keys, params, starts):
            out[key] = Tensor._make(whole[start : start + p.numel()].reshape(tuple(p.shape)).copy())
    return out
