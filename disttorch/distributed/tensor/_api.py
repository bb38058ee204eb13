"""``DTensor``: a tensor spread over a ``DeviceMesh``, one piece per rank.

Here a DTensor's own memory is its local piece: its ``shape``, arithmetic and optimiser
updates are those of the local shard (FSDP's optimisers run on the shards this way).
Where PyTorch's DTensor reports the global shape, ours keeps it in ``global_shape`` (the
one difference: PyTorch dispatches every op to the local piece behind a global-shape
facade). ``full_tensor()`` gathers the whole; ``to_local()`` is the piece.

Supported layouts: ``Shard(0)`` along a mesh dimension and ``Replicate()`` along the others.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..._tensor import Tensor
from .. import collectives, groups
from ..device_mesh import DeviceMesh, init_device_mesh
from ._layout import chunk_bounds, gather_rows
from .placement_types import Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor"]


def _check_placements(mesh: DeviceMesh, placements: Sequence[Placement]) -> tuple[Placement, ...]:
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(
            f"DTensor needs one placement per mesh dimension: the mesh is {mesh.ndim}-D, "
            f"got {len(placements)} placements {placements}"
        )
    for p in placements:
        if not (isinstance(p, Replicate) or (type(p) is Shard and p.dim == 0)):
            raise NotImplementedError(f"DTensor here supports Shard(0) and Replicate() placements, got {p}")
    if sum(isinstance(p, Shard) for p in placements) > 1:
        raise NotImplementedError("DTensor here shards along one mesh dimension at most")
    return placements


def _shard_dim(placements: tuple[Placement, ...]) -> int | None:
    """The mesh dimension that splits the rows, if any."""
    return next((i for i, p in enumerate(placements) if isinstance(p, Shard)), None)


class DTensor(Tensor):
    """A tensor whose memory is this rank's piece of a whole laid out over ``device_mesh``.

    Build one with :func:`distribute_tensor` or :meth:`DTensor.from_local`.
    """

    _mesh: DeviceMesh
    _placements: tuple[Placement, ...]
    _global_shape: tuple[int, ...]

    def _init_spec(
        self, mesh: DeviceMesh, placements: Sequence[Placement], global_shape: Sequence[int]
    ) -> None:
        self._mesh = mesh
        self._placements = _check_placements(mesh, placements)
        self._global_shape = tuple(int(s) for s in global_shape)

    @classmethod
    def _wrap(
        cls, local: np.ndarray, mesh: DeviceMesh, placements: Sequence[Placement], global_shape: Any
    ) -> "DTensor":
        t = object.__new__(cls)
        Tensor._init_state(t, local)
        t._init_spec(mesh, placements, global_shape)
        return t

    @property
    def device_mesh(self) -> DeviceMesh:
        return self._mesh

    @property
    def placements(self) -> tuple[Placement, ...]:
        return self._placements

    @property
    def global_shape(self) -> tuple[int, ...]:
        """The shape of the whole tensor (``shape`` is the local piece's)."""
        return self._global_shape

    def detach(self) -> "DTensor":
        """A DTensor sharing this one's piece and layout, outside the graph."""
        out = DTensor._wrap(self._data, self._mesh, self._placements, self._global_shape)
        out._version_box = self._version_box
        return out

    def _same_layout(self, local: np.ndarray) -> "DTensor":
        """A DTensor laid out as this one (mesh, placements, global shape) holding ``local``,
        an array of this one's local shape (an optimiser's state of a DTensor parameter)."""
        return DTensor._wrap(local, self._mesh, self._placements, self._global_shape)

    def to_local(self, *, grad_placements: Any = None) -> Tensor:
        """This rank's piece, as a plain tensor sharing memory."""
        return Tensor._make(self._data)

    def full_tensor(self, *, grad_placements: Any = None) -> Tensor:
        """The whole tensor, gathered from the shards (a collective: every rank calls it)."""
        dim = _shard_dim(self._placements)
        if dim is None:
            return Tensor._make(self._data.copy())
        rows_shape = self._global_shape or (1,)
        local = self._data.reshape((-1,) + tuple(rows_shape[1:]))
        whole = gather_rows(local, rows_shape[0], self._mesh.get_group(dim), self._mesh.size(dim))
        return Tensor._make(whole.reshape(self._global_shape))

    @staticmethod
    def from_local(
        local_tensor: Tensor,
        device_mesh: DeviceMesh | None = None,
        placements: Sequence[Placement] | None = None,
        *,
        run_check: bool = False,
        shape: Sequence[int] | None = None,
        stride: Any = None,
        grad_placements: Any = None,
    ) -> "DTensor":
        """Make a DTensor from every rank's piece; the global shape is gathered unless ``shape`` is given."""
        if device_mesh is None:
            raise ValueError("DTensor.from_local needs a device_mesh")
        placements = _check_placements(device_mesh, placements or [Replicate()] * device_mesh.ndim)
        local = local_tensor._data
        dim = _shard_dim(placements)
        if shape is None:
            shape = local.shape
            if dim is not None:
                rows = np.array([local.shape[0] if local.ndim else 1], np.int64)
                every = np.empty(device_mesh.size(dim), np.int64)
                collectives.all_gather_into_tensor(every, rows, group=device_mesh.get_group(dim))
                shape = (int(every.sum()),) + local.shape[1:]
        return DTensor._wrap(local, device_mesh, placements, shape)

    def __repr__(self) -> str:
        return (
            f"DTensor(local_tensor={Tensor._make(self._data)!r}, device_mesh={self._mesh!r}, "
            f"placements={self._placements})"
        )


def distribute_tensor(
    tensor: Tensor,
    device_mesh: DeviceMesh | None = None,
    placements: Sequence[Placement] | None = None,
    *,
    src_data_rank: int | None = 0,
) -> DTensor:
    """Cut the whole ``tensor`` into this rank's piece: the whole of mesh rank
    ``src_data_rank`` (broadcast first), or with ``None`` every rank's own (then it must be
    the same everywhere). ``device_mesh`` defaults to a 1-D mesh over every rank."""
    if device_mesh is None:
        device_mesh = init_device_mesh("cpu", (groups.get_world_size(),))
    placements = _check_placements(device_mesh, placements or [Replicate()] * device_mesh.ndim)
    whole = tensor._data
    if src_data_rank is not None and device_mesh.size() > 1:
        whole = np.ascontiguousarray(whole).copy()
        collectives.broadcast(whole, src=int(device_mesh._ranks.reshape(-1)[src_data_rank]))
    local = whole
    dim = _shard_dim(placements)
    if dim is not None:
        rows = whole.reshape((-1,) + whole.shape[1:]) if whole.ndim else whole.reshape(1)
        start, stop = chunk_bounds(rows.shape[0], device_mesh.size(dim), device_mesh.get_local_rank(dim))
        local = rows[start:stop]
    out = DTensor._wrap(np.array(local, copy=True), device_mesh, placements, whole.shape)
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out
