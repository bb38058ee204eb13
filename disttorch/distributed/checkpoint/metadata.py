"""What a distributed checkpoint holds, as PyTorch's ``torch.distributed.checkpoint.metadata``
describes it: ``FileSystemReader(path).read_metadata()`` gives a :class:`Metadata` whose
``state_dict_metadata`` maps every flattened key (``"model.layer.weight"``,
``"optim.param_groups.0.lr"``) to a :class:`TensorStorageMetadata` (dtype, global size and
the chunk each rank wrote) or a :class:`BytesStorageMetadata` (a plain value)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Union

from ..._dtype import _by_name, dtype
from ..._layout import layout, strided
from ..._memory_format import contiguous_format, memory_format
from ..._tensor import Size

__all__ = [
    "BytesStorageMetadata",
    "ChunkStorageMetadata",
    "Metadata",
    "MetadataIndex",
    "STATE_DICT_TYPE",
    "StorageMeta",
    "TensorProperties",
    "TensorStorageMetadata",
]

STATE_DICT_TYPE = dict[str, Any]


@dataclass
class ChunkStorageMetadata:
    """One rank's piece of a tensor: where it starts in every dim and its size."""

    offsets: Size
    sizes: Size


@dataclass
class TensorProperties:
    """How a saved tensor is made again (PyTorch's fields; only ``dtype`` varies here)."""

    dtype: dtype = field(default_factory=lambda: _by_name("float32"))
    layout: layout = field(default=strided)
    requires_grad: bool = False
    memory_format: memory_format = field(default=contiguous_format)
    pin_memory: bool = False


@dataclass
class TensorStorageMetadata:
    """A tensor of the checkpoint: its properties, global size and pieces."""

    properties: TensorProperties
    size: Size
    chunks: list[ChunkStorageMetadata]


@dataclass
class BytesStorageMetadata:
    """A plain (non-tensor) value of the checkpoint."""


STORAGE_TYPES = Union[TensorStorageMetadata, BytesStorageMetadata]


@dataclass
class StorageMeta:
    """Where the checkpoint lies (PyTorch's ``save_id``/``load_id`` are not recorded)."""

    checkpoint_id: str | os.PathLike | None = None
    save_id: str | None = None
    load_id: str | None = None
    modules: list[str] = field(default_factory=list)


@dataclass
class Metadata:
    """The checkpoint's keys (``state_dict_metadata``) and, in ``planner_data``, each key's
    path in the nested state dict (a tuple of dict keys and list indices)."""

    state_dict_metadata: dict[str, STORAGE_TYPES]
    planner_data: Any = None
    storage_data: Any = None
    storage_meta: StorageMeta | None = None
    version: str | None = None


@dataclass(frozen=True)
class MetadataIndex:
    """A key of the checkpoint, and optionally which of its pieces (by ``offset`` or ``index``)."""

    fqn: str
    offset: Size | None = None
    index: int | None = field(hash=False, compare=False, default=None)


def _chunk(first: Any, piece_shape: list, ndim: int) -> ChunkStorageMetadata:
    if isinstance(first, int):  # a first row, as checkpoints written before pieces had several dims
        first = [first] + [0] * (ndim - 1) if ndim else []
    return ChunkStorageMetadata(Size(first), Size(piece_shape))


def from_checkpoint(raw: dict, path: str | os.PathLike) -> Metadata:
    """The :class:`Metadata` of a checkpoint's checked ``.metadata`` (``_format.read_metadata``)."""
    entries: dict[str, STORAGE_TYPES] = {}
    for key, spec in raw["tensors"].items():
        ndim = len(spec["shape"])
        chunks = [_chunk(first, shape, ndim) for _, first, shape, _ in spec["pieces"]]
        entries[key] = TensorStorageMetadata(
            TensorProperties(_by_name(spec["dtype"])), Size(spec["shape"]), chunks
        )
    for key in raw["plain"]:
        entries[key] = BytesStorageMetadata()
    paths = {
        key: tuple(step[0] if isinstance(step, list) else step for step in steps)
        for key, steps in raw.get("paths", {}).items()
    }
    return Metadata(
        entries, planner_data=paths, storage_meta=StorageMeta(checkpoint_id=path), version="1.0.0"
    )
