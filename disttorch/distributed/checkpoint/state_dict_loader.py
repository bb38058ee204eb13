"""``load``: fill a state dict in place from a checkpoint, whatever world size wrote it."""

from __future__ import annotations

import math
import os
import warnings
from typing import Any, Sequence

import numpy as np

from ..._tensor import Size, Tensor
from .. import object_collectives
from .._shard.sharded_tensor import ShardedTensor
from ..tensor import DTensor
from ..tensor._utils import compute_local_shape_and_global_offset
from ._format import flatten, numpy_dtype, read_metadata, read_pieces
from ._plain import plain_from_json
from .api import attempt, checkpoint_directory, raise_failures
from .state_dict_saver import _rank_and_world, wait_for_background_saves
from .stateful import Stateful, stateful_to_state_dict

__all__ = ["load", "load_state_dict"]


def _box_from(
    directory: str, spec: dict, offset: Sequence[int], shape: Sequence[int], files: dict
) -> np.ndarray:
    """The block of the saved tensor that starts at ``offset`` and has ``shape``, from the
    pieces that overlap it (a piece's start is a global index, or a row for dim 0 in
    checkpoints written before pieces had several dimensions). A block the pieces do not
    cover whole, or a piece of another size than the metadata says, raises."""
    dtype = numpy_dtype(spec["dtype"])
    # (piece, where in the block, where in the piece): every piece read and checked before the
    # block is allocated, so a forged shape costs no memory
    parts = []
    for rank, first, piece_shape, index in spec["pieces"]:
        piece_shape = piece_shape or [1]
        first = [first] + [0] * (len(piece_shape) - 1) if isinstance(first, int) else first
        lo = [max(a, b) for a, b in zip(offset, first)]
        hi = [min(a + n, b + m) for a, n, b, m in zip(offset, shape, first, piece_shape)]
        if any(low >= high for low, high in zip(lo, hi)):
            continue
        if rank not in files:  # a checkpoint written before saves had ids
            files[rank] = read_pieces(directory, rank, None)
        piece = _piece(files[rank], index, dtype, piece_shape, directory, rank)
        here = tuple(slice(low - a, high - a) for low, high, a in zip(lo, hi, offset))
        there = tuple(slice(low - b, high - b) for low, high, b in zip(lo, hi, first))
        parts.append((piece, here, there))
    if not _covers([here for _, here, _ in parts], shape):
        raise ValueError(
            f"the checkpoint in {directory} does not hold every element of the block at {list(offset)} "
            f"of shape {list(shape)} (its metadata lists pieces that leave a hole)"
        )
    out = np.empty(shape, dtype)
    for piece, here, there in parts:
        out[here] = piece[there]
    return out


def _piece(files: Any, index: int, dtype: np.dtype, shape: list, directory: str, rank: int) -> np.ndarray:
    """Piece ``index`` of rank ``rank``'s file, checked against the size the metadata gives it."""
    name = f"p{index}"
    raw = files[name] if name in files.files else None
    if raw is None or raw.dtype != np.uint8 or raw.size != math.prod(shape) * dtype.itemsize:
        found = "is missing" if raw is None else f"holds {raw.size} bytes"
        raise ValueError(
            f"piece {index} of rank {rank} in {directory} {found}; the metadata says {list(shape)} of {dtype}"
        )
    return raw.view(dtype).reshape(shape)


def _covers(boxes: list, shape: Sequence[int]) -> bool:
    """Whether the blocks ``boxes`` (tuples of slices) cover the whole of ``shape``."""
    held = sum(math.prod(s.stop - s.start for s in box) for box in boxes)
    if held < math.prod(shape):
        return False
    if len(boxes) == 1:
        return True
    covered = np.zeros(shape, bool)  # several pieces (a re-cut load): each element once
    for box in boxes:
        covered[box] = True
    return bool(covered.all())


def load(
    state_dict: dict,
    *,
    checkpoint_id: str | os.PathLike | None = None,
    storage_reader: Any = None,
    planner: Any = None,
    process_group: Any = None,
    no_dist: bool = False,
) -> None:
    """Load the checkpoint in ``checkpoint_id`` into ``state_dict`` in place: every tensor's
    memory is overwritten (a DTensor's with its own block, re-cut if the world size or
    layout changed), plain values are replaced. Every rank of ``process_group`` (default: the
    world) must call it: keys absent from the checkpoint, or of another shape, on any rank
    make every rank raise ``CheckpointException`` (its ``failures`` name them, by rank) before
    anything is overwritten; with ``planner=DefaultLoadPlanner(allow_partial_load=True)``
    absent keys are left as they are. A
    top-level ``Stateful`` value is loaded through its ``state_dict()``, then given the
    result with ``load_state_dict``. This process's background saves into the directory
    finish first."""
    directory = checkpoint_directory(checkpoint_id, storage_reader)
    wait_for_background_saves(directory)
    stateful = stateful_to_state_dict(state_dict)
    strict = not getattr(planner, "allow_partial_load", False)
    _load_in_place(stateful, directory, process_group, no_dist, strict)
    for key, value in state_dict.items():
        if isinstance(value, Stateful):
            value.load_state_dict(stateful[key])
        else:
            state_dict[key] = stateful[key]  # a plain top-level value may have been replaced


def load_state_dict(
    state_dict: dict,
    storage_reader: Any,
    process_group: Any = None,
    coordinator_rank: int = 0,
    no_dist: bool = False,
    planner: Any = None,
) -> None:
    """Deprecated (PyTorch's too, with a ``FutureWarning``): :func:`load` from ``storage_reader``."""
    warnings.warn(
        "`load_state_dict` is deprecated and will be removed in future versions. Please use `load` instead.",
        FutureWarning,
        stacklevel=2,
    )
    load(
        state_dict,
        storage_reader=storage_reader,
        planner=planner,
        process_group=process_group,
        no_dist=no_dist,
    )


def _spec_of(metadata: dict, key: str, shape: tuple) -> dict:
    """The checkpoint's entry for tensor ``key`` of global ``shape``; raises if absent
    (``RuntimeError``) or of another shape (``ValueError``), as PyTorch's."""
    spec = metadata["tensors"].get(key)
    if spec is None:
        raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
    if tuple(spec["shape"]) != shape:  # PyTorch's words and type
        raise ValueError(
            f"Size mismatch between saved {Size(spec['shape'])!r} and current: {Size(shape)!r} for {key}"
        )
    return spec


def _plan(state_dict: dict, metadata: dict, strict: bool) -> list[tuple[Any, Any, Any, dict | None]]:
    """Every leaf of ``state_dict`` to load, as ``(container, index, value, spec)`` (``spec``:
    the checkpoint's entry of a tensor, ``None`` for a plain value); raises on the first key
    the checkpoint holds with another shape, or lacks (unless not ``strict``: then the key
    is left out), as PyTorch's planner."""
    plan = []
    for key, (container, index) in flatten(state_dict).items():
        if not strict and key not in metadata["tensors"] and key not in metadata["plain"]:
            continue
        value = container[index]
        spec = None
        if isinstance(value, (ShardedTensor, Tensor)):
            shape = value.global_shape if isinstance(value, DTensor) else value.size()
            spec = _spec_of(metadata, key, tuple(shape))
        elif key not in metadata["plain"]:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
        plan.append((key, container, index, spec))
    return plan


def _every_failure(failure: Any, process_group: Any, no_dist: bool) -> dict:
    """Every rank's failure of a step of a load, by rank (all-gathered over the group)."""
    world = 1 if no_dist else _rank_and_world(process_group)[1]
    every = [failure]
    if world > 1:
        every = [None] * world
        object_collectives.all_gather_object(every, failure, group=process_group)
    return {r: failed for r, failed in enumerate(every) if failed is not None}


def _load_in_place(state_dict: dict, directory: str, process_group: Any, no_dist: bool, strict: bool) -> None:
    metadata = read_metadata(directory)
    # every file is checked against the metadata before any tensor is overwritten
    files = {r: read_pieces(directory, r, save_id) for r, save_id in enumerate(metadata.get("save_ids", ()))}
    plan: list = []
    failure = attempt(lambda: plan.extend(_plan(state_dict, metadata, strict)))
    raise_failures(_every_failure(failure, process_group, no_dist), "load")
    for key, container, index, spec in plan:
        value = container[index]
        if isinstance(value, ShardedTensor):
            for shard in value.local_shards():
                meta, data = shard.metadata, shard.tensor._data
                box = _box_from(directory, spec, tuple(meta.shard_offsets), tuple(meta.shard_sizes), files)
                np.copyto(data, box.reshape(data.shape).astype(data.dtype, copy=False))
                shard.tensor._bump_version()
        elif isinstance(value, Tensor):
            shape = tuple(spec["shape"])
            rows_shape = shape or (1,)  # a 0-d tensor is laid out as one row
            local, offset = rows_shape, (0,) * len(rows_shape)
            if isinstance(value, DTensor):
                local, offset = compute_local_shape_and_global_offset(
                    rows_shape, value.device_mesh, value.placements
                )
            data = _box_from(directory, spec, offset, local, files)
            np.copyto(value._data, data.reshape(value._data.shape).astype(value._data.dtype, copy=False))
            value._bump_version()
        else:
            container[index] = plain_from_json(metadata["plain"][key], key)
