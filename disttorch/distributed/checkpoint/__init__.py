"""``disttorch.distributed.checkpoint`` (mirrors ``torch.distributed.checkpoint``): save and
load sharded state dicts, each rank writing and reading only its own shards.

    state = {"model": get_model_state_dict(model), "optim": get_optimizer_state_dict(model, opt)}
    dcp.save(state, checkpoint_id="ckpt/step100")
    dcp.load(state, checkpoint_id="ckpt/step100")      # in place, then set_*_state_dict
    dcp.async_save(state, checkpoint_id="ckpt/step200").result()  # saved before it returns

``state_dict.py`` makes and loads the state dicts of sharded models (full or sharded);
``_format.py`` is the directory layout (NumPy ``.npz`` bytes and JSON: nothing pickled).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from . import _format, metadata
from .api import CheckpointException
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner
from .metadata import BytesStorageMetadata, ChunkStorageMetadata, Metadata, TensorStorageMetadata
from .state_dict_loader import load, load_state_dict
from .state_dict_saver import AsyncCheckpointerType, async_save, save, save_state_dict

__all__ = [
    "AsyncCheckpointerType",
    "CheckpointException",
    "async_save",
    "save",
    "load",
    "save_state_dict",
    "load_state_dict",
    "FileSystemWriter",
    "FileSystemReader",
    "Metadata",
    "BytesStorageMetadata",
    "ChunkStorageMetadata",
    "TensorStorageMetadata",
    "DefaultLoadPlanner",
    "DefaultSavePlanner",
]


@dataclass
class FileSystemWriter:
    """Where :func:`save` writes (``save(..., storage_writer=FileSystemWriter(path))``).
    PyTorch's tuning arguments are accepted and change nothing: every rank writes one file
    (``single_file_per_rank``), synced, whole or not at all."""

    path: str | os.PathLike
    single_file_per_rank: bool = True
    sync_files: bool = True
    thread_count: int = 1
    per_thread_copy_ahead: int = 10_000_000
    cache_staged_state_dict: bool = False
    overwrite: bool = True
    _extensions: Any = None
    serialization_format: Any = None


@dataclass
class FileSystemReader:
    """Where :func:`load` reads; :meth:`read_metadata` says what the checkpoint holds."""

    path: str | os.PathLike
    _extension_registry: Any = None

    @property
    def checkpoint_id(self) -> str | os.PathLike:
        """The checkpoint's directory, as given."""
        return self.path

    def read_metadata(self) -> Metadata:
        """The checkpoint's keys with their sizes, dtypes and pieces (a directory that is not
        a checkpoint raises ``FileNotFoundError``, a malformed ``.metadata`` ``ValueError``)."""
        return metadata.from_checkpoint(_format.read_metadata(os.fspath(self.path)), self.path)
