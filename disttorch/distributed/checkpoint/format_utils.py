"""Conversions between a distributed checkpoint directory and one ``torch.save`` file:
``dcp_to_torch_save`` gathers every tensor whole (in this process, no process group) into the
nested state dict that was saved; ``torch_save_to_dcp`` writes a saved state dict as a
one-rank checkpoint that ``dcp.load`` re-cuts for any world size."""

from __future__ import annotations

import os
from typing import Any

from ..._tensor import Tensor
from ...serialization import load, save
from ._format import nest, read_metadata
from ._plain import plain_from_json
from .state_dict_loader import _box_from
from .state_dict_saver import save as dcp_save
from .state_dict_saver import wait_for_background_saves

__all__ = ["dcp_to_torch_save", "torch_save_to_dcp"]


def dcp_to_torch_save(dcp_checkpoint_dir: str | os.PathLike, torch_save_path: str | os.PathLike) -> None:
    """Write the checkpoint in ``dcp_checkpoint_dir`` to ``torch_save_path`` with
    ``torch.save``: its state dict, every tensor whole (after this process's background
    saves into the directory)."""
    directory = os.fspath(dcp_checkpoint_dir)
    wait_for_background_saves(directory)
    metadata = read_metadata(directory)
    files: dict[int, Any] = {}
    leaves: dict[str, Any] = {key: plain_from_json(value, key) for key, value in metadata["plain"].items()}
    for key, spec in metadata["tensors"].items():
        shape = tuple(spec["shape"])
        rows = shape or (1,)  # a 0-d tensor is laid out as one row
        data = _box_from(directory, spec, (0,) * len(rows), rows, files)
        leaves[key] = Tensor._make(data.reshape(shape).copy())
    paths = metadata.get("paths") or {key: key.split(".") for key in leaves}
    save(nest(leaves, paths), torch_save_path)


def torch_save_to_dcp(torch_save_path: str | os.PathLike, dcp_checkpoint_dir: str | os.PathLike) -> None:
    """Write the state dict saved in ``torch_save_path`` as a distributed checkpoint in
    ``dcp_checkpoint_dir`` (a one-rank checkpoint, without collectives)."""
    dcp_save(load(torch_save_path, weights_only=False), checkpoint_id=dcp_checkpoint_dir, no_dist=True)
