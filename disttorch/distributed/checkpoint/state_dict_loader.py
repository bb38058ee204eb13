"""``load``: fill a state dict in place from a checkpoint, whatever world size wrote it."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ..tensor import DTensor
from ..tensor._layout import chunk_bounds
from ._format import flatten, numpy_dtype, read_metadata, read_pieces

__all__ = ["load"]


def _rows_from(directory: str, spec: dict, start: int, stop: int, files: dict) -> np.ndarray:
    """Rows ``[start, stop)`` of the saved tensor, from the pieces that overlap them."""
    dtype = numpy_dtype(spec["dtype"])
    shape = spec["shape"] or [1]
    out = np.empty([stop - start] + shape[1:], dtype)
    for rank, first, piece_shape, index in spec["pieces"]:
        count = piece_shape[0] if piece_shape else 1
        lo, hi = max(start, first), min(stop, first + count)
        if lo >= hi:
            continue
        if rank not in files:
            files[rank] = read_pieces(directory, rank)
        piece = files[rank][f"p{index}"].view(dtype).reshape([count] + shape[1:])
        out[lo - start : hi - start] = piece[lo - first : hi - first]
    return out


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
    memory is overwritten (a DTensor's with its own rows, re-cut if the world size
    changed), plain values are replaced. Keys absent from the checkpoint raise."""
    directory = os.fspath(checkpoint_id if checkpoint_id is not None else storage_reader.path)
    metadata = read_metadata(directory)
    files: dict[int, Any] = {}
    for key, (container, index) in flatten(state_dict).items():
        value = container[index]
        if isinstance(value, Tensor):
            spec = metadata["tensors"].get(key)
            if spec is None:
                raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
            shape = tuple(value.global_shape if isinstance(value, DTensor) else value._data.shape)
            if tuple(spec["shape"]) != shape:
                raise RuntimeError(
                    f"Size mismatch for {key}: the checkpoint holds shape {spec['shape']}, the state_dict {list(shape)}"
                )
            rows = shape[0] if shape else 1
            start, stop = 0, rows
            if isinstance(value, DTensor):
                mesh = value.device_mesh
                dim = mesh.ndim - 1
                start, stop = chunk_bounds(rows, mesh.size(dim), mesh.get_local_rank(dim))
            data = _rows_from(directory, spec, start, stop, files)
            np.copyto(value._data, data.reshape(value._data.shape).astype(value._data.dtype, copy=False))
            value._bump_version()
        elif key in metadata["plain"]:
            container[index] = metadata["plain"][key]
        else:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
