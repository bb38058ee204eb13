"""``torch.distributed.utils``: the module-state helpers PyTorch's DDP uses and libraries call
by these private names (Lightning's DDP strategy syncs a module this way before
``validate``/``test``/``predict``, where it does not wrap the model in DDP)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .._tensor import Tensor
from .collectives import broadcast

__all__ = ["_broadcast_coalesced", "_sync_module_states", "_sync_params_and_buffers"]


def _broadcast_coalesced(tensors: list[Tensor], src: int, group: Any = None) -> None:
    """Broadcast ``tensors`` from rank ``src`` in place, as one buffer per dtype (one
    collective each, not one per tensor)."""
    by_dtype: dict[np.dtype, list[Tensor]] = {}
    for t in tensors:
        by_dtype.setdefault(t._data.dtype, []).append(t)
    for dtype, ts in by_dtype.items():
        flat = np.concatenate([t._data.reshape(-1) for t in ts]) if ts else np.zeros(0, dtype)
        broadcast(Tensor._make(flat), src=src, group=group)
        offset = 0
        for t in ts:
            n = t._data.size
            np.copyto(t._data, flat[offset : offset + n].reshape(t._data.shape))
            t._bump_version()
            offset += n


def _sync_params_and_buffers(
    process_group: Any, module_states: list[Tensor], broadcast_bucket_size: int, src: int
) -> None:
    """Broadcast ``module_states`` from ``src`` (the bucket size is PyTorch's; disttorch sends
    one buffer per dtype whatever it is)."""
    if module_states:
        _broadcast_coalesced(module_states, src, process_group)


def _sync_module_states(
    module: Any,
    process_group: Any,
    broadcast_bucket_size: int,
    src: int,
    params_and_buffers_to_ignore: Iterable[str],
    broadcast_buffers: bool = True,
) -> None:
    """Give every rank ``src``'s parameters (and buffers, unless ``broadcast_buffers`` is
    False), except those named in ``params_and_buffers_to_ignore``."""
    ignored = set(params_and_buffers_to_ignore)
    states = [p.detach() for name, p in module.named_parameters() if name not in ignored]
    if broadcast_buffers:
        states += [b.detach() for name, b in module.named_buffers() if name not in ignored]
    _sync_params_and_buffers(process_group, states, broadcast_bucket_size, src)
