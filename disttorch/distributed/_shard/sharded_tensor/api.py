"""``ShardedTensor`` (mirrors ``torch.distributed._shard.sharded_tensor``): a whole tensor
cut into shards held by several ranks, described by its metadata (every shard's offsets,
sizes and rank) and holding this rank's shards as plain tensors.

PyTorch's FSDP1 wrapper gives its ``SHARDED_STATE_DICT`` values in this (deprecated) form;
here one is made from a parameter's ``DTensor`` (:meth:`ShardedTensor._from_dtensor`: its
local shard shares the DTensor's memory) and turned back into one to load. Unlike
PyTorch's, it is not a ``Tensor`` subclass: it offers the metadata API (``local_shards``,
``local_tensor``, ``metadata``, ``size``, ``dtype``, ``device``, ``requires_grad``, ``numel``),
no arithmetic, so state-dict walkers that act on ``isinstance(v, Tensor)`` values (moving them
to a device, casting) pass it by, where PyTorch's answers most of those calls with itself.
``torch.save``/``torch.load`` keep it, as PyTorch's: the local shards, the metadata and the
mesh's ranks (its groups are made again when it is loaded into a model, on every rank). As
PyTorch's, ``torch.load`` takes it only once the default process group is up (``RuntimeError``:
"Need to initialize default process group ...") and only into the rank and world size that saved
it ("Local rank at save time was 1, but at load time was 0"): its shard would silently land in
another rank's place.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np

from ...._dtype import to_numpy
from ...._memory_format import contiguous_format
from ...._tensor import Size, Tensor, device
from ...tensor import DTensor
from ...tensor._utils import compute_local_shape_and_global_offset
from ..metadata import ShardMetadata

__all__ = ["Shard", "ShardedTensor", "ShardedTensorMetadata", "TensorProperties"]


@dataclasses.dataclass
class Shard:
    """One shard: its tensor and where it lies (``metadata``)."""

    tensor: Tensor
    metadata: ShardMetadata


@dataclasses.dataclass
class TensorProperties:
    """The whole tensor's properties."""

    dtype: Any = None
    layout: Any = None
    requires_grad: bool = False
    memory_format: Any = None
    pin_memory: bool = False


@dataclasses.dataclass
class ShardedTensorMetadata:
    """Every shard's metadata, the whole's size and properties."""

    shards_metadata: list[ShardMetadata] = dataclasses.field(default_factory=list)
    size: Size = dataclasses.field(default_factory=lambda: Size([]))
    tensor_properties: TensorProperties = dataclasses.field(default_factory=TensorProperties)


class ShardedTensor:
    """A tensor cut into shards over ranks: this rank's shards and everyone's metadata."""

    def __init__(
        self, local_shards: list[Shard], metadata: ShardedTensorMetadata, layout: Any = None
    ) -> None:
        self._local_shards = list(local_shards)
        self._metadata = metadata
        self._layout = layout  # (mesh, placements) of the DTensor it was made from

    def __getstate__(self) -> dict:
        """The shards and metadata; the mesh as its ranks and names (its groups do not pickle)."""
        from ...groups import get_rank, get_world_size, is_initialized

        state = dict(self.__dict__)
        if is_initialized():
            state["_saved_by"] = (get_rank(), get_world_size())
        if self._layout is not None:
            mesh, placements = self._layout
            state["_layout"] = (mesh._state(), placements)
        return state

    def __setstate__(self, state: dict) -> None:
        from ...groups import is_initialized

        if not is_initialized():  # (PyTorch's words)
            raise RuntimeError(
                'Need to initialize default process group using "init_process_group" before loading ShardedTensor'
            )
        self.__dict__.update(state)
        self._check_saved_here()

    def _check_saved_here(self) -> None:
        """Raise PyTorch's error when this rank or world size is not the one that saved it."""
        saved = self.__dict__.get("_saved_by")
        if saved is None:  # made here, or saved without a process group
            return
        from ...groups import get_rank, get_world_size

        hint = (
            ": a sharded state dict loads only into the rank that saved it, in a job of as many ranks; "
            "save it with torch.distributed.checkpoint (dcp.save, dcp.load) to load it into another"
        )
        for what, then, now in (
            ("Local rank", saved[0], get_rank()),
            ("Local world size", saved[1], get_world_size()),
        ):
            if then != now:
                raise RuntimeError(f"{what} at save time was {then}, but at load time was {now}{hint}")

    def _mesh_and_placements(self) -> tuple[Any, Any]:
        """The layout's mesh (made again, collectively, after unpickling) and placements."""
        mesh, placements = self._layout
        if isinstance(mesh, tuple):  # ranks and names from __getstate__
            from ...device_mesh import mesh_from_state

            mesh = mesh_from_state(mesh)
            self._layout = (mesh, placements)
        return mesh, placements

    @classmethod
    def _from_dtensor(cls, d: Any, requires_grad: bool = False) -> "ShardedTensor":
        """The shards of DTensor ``d`` along its ``Shard`` mesh dimensions (its replicas over
        the others are one shard): this rank's shares ``d``'s memory; empty ones are left
        out, as PyTorch's chunking leaves them out."""
        mesh, placements, shape = d.device_mesh, tuple(d.placements), tuple(d.global_shape)
        mine = mesh.get_coordinate()
        grid = mesh.mesh.numpy()
        cut = [m for m, p in enumerate(placements) if p.is_shard()]
        shards, local = [], []
        for picks in itertools.product(*(range(mesh.size(m)) for m in cut)):
            coordinate = list(mine)
            for m, i in zip(cut, picks):
                coordinate[m] = i
            sizes, offsets = compute_local_shape_and_global_offset(shape, mesh, placements, coordinate)
            if 0 in sizes:
                continue
            meta = ShardMetadata(list(offsets), list(sizes), f"rank:{int(grid[tuple(coordinate)])}/cpu")
            shards.append(meta)
            if coordinate == list(mine):
                local.append(Shard(Tensor._make(d._data), meta))
        properties = TensorProperties(d.dtype, d.layout, requires_grad, contiguous_format, False)
        return cls(local, ShardedTensorMetadata(shards, Size(shape), properties), (mesh, placements))

    def _to_dtensor(self) -> Any:
        """The DTensor this was made from, over the local shard's current values."""
        if self._layout is None:
            raise ValueError("this ShardedTensor was not made from a DTensor: it cannot be loaded as one")
        data = self._local_shards[0].tensor._data if self._local_shards else None
        mesh, placements = self._mesh_and_placements()
        if data is None:  # an empty shard: this rank holds no rows
            local, _ = compute_local_shape_and_global_offset(tuple(self.size()), mesh, placements)
            data = np.empty(local, dtype=to_numpy(self.dtype))
        return DTensor._wrap(data, mesh, placements, tuple(self.size()))

    def local_shards(self) -> list[Shard]:
        """This rank's shards."""
        return self._local_shards

    def local_tensor(self) -> Tensor:
        """This rank's only shard's tensor."""
        if len(self._local_shards) != 1:
            raise NotImplementedError("Only single local shard is supported.")
        return self._local_shards[0].tensor

    def metadata(self) -> ShardedTensorMetadata:
        """Every shard's metadata and the whole's size and properties."""
        return self._metadata

    def size(self, dim: int | None = None) -> Any:
        """The whole tensor's size (of dimension ``dim``)."""
        return self._metadata.size if dim is None else self._metadata.size[dim]

    @property
    def shape(self) -> Size:
        return self._metadata.size

    @property
    def dtype(self) -> Any:
        return self._metadata.tensor_properties.dtype

    @property
    def requires_grad(self) -> bool:
        return self._metadata.tensor_properties.requires_grad

    @property
    def device(self) -> Any:
        """This rank's device: the CPU."""
        return device("cpu")

    is_meta = False
    is_cuda = False

    def numel(self) -> int:
        """The whole tensor's number of elements."""
        return int(np.prod(tuple(self._metadata.size), dtype=np.int64))

    def dim(self) -> int:
        return len(self._metadata.size)

    ndim = property(dim)

    def __repr__(self) -> str:
        return f"ShardedTensor({self._metadata})"
