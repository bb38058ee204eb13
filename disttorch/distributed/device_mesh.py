"""``DeviceMesh`` and ``init_device_mesh``: the ranks of a job laid out as an n-D array.

A mesh of shape ``(2, 4)`` over 8 ranks is ``[[0, 1, 2, 3], [4, 5, 6, 7]]``. Every mesh
dimension has one process group per line along it: along dim 1 the groups are ``{0..3}``
and ``{4..7}``, along dim 0 they are ``{0, 4}``, ``{1, 5}``, ... Each rank keeps the group
it belongs to for each dimension (``mesh.get_group(dim)``). Hybrid sharding uses a 2-D mesh
``(replicate, shard)``: shard inside a host (dim 1), replicate across hosts (dim 0).

Every rank must create the same meshes in the same order (``new_group`` is collective).
Only the ``"cpu"`` device type exists here, as every rank is a CPU rank.
"""

from __future__ import annotations

import math
import os
import weakref
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import groups

__all__ = ["DeviceMesh", "init_device_mesh"]


def _check_device_type(device_type: str) -> str:
    if device_type != "cpu":
        raise RuntimeError(
            f"DeviceMesh: device_type {device_type!r} is not available; disttorch ranks are 'cpu'"
        )
    return device_type


class DeviceMesh:
    """An n-D arrangement of global ranks with a process group along each dimension.

    Args:
        device_type: ``"cpu"``.
        mesh: the global ranks, an n-D array-like (list, NumPy array or Tensor of ints)
            holding every rank of the default group exactly once.
        mesh_dim_names: a name per dimension, for ``mesh["name"]`` and ``get_group("name")``.
    """

    def __init__(
        self,
        device_type: str,
        mesh: Any,
        *,
        mesh_dim_names: tuple[str, ...] | None = None,
        _init_backend: bool = True,
    ) -> None:
        self.device_type = _check_device_type(device_type)
        ranks = np.asarray(mesh._data if isinstance(mesh, Tensor) else mesh, dtype=np.int64)
        if ranks.ndim == 0:
            raise ValueError("DeviceMesh: mesh must have at least one dimension")
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != ranks.ndim or len(set(mesh_dim_names)) != len(mesh_dim_names):
                raise RuntimeError(
                    f"mesh_dim_names must be {ranks.ndim} distinct names (one per mesh dimension), "
                    f"got {mesh_dim_names}"
                )
        self._ranks = ranks
        self.mesh_dim_names = mesh_dim_names
        self._root_mesh: DeviceMesh | None = None  # the mesh this one was sliced from (mesh["dp"])
        self._flattened: dict[str, DeviceMesh] = {}  # a root mesh's _flatten()ed sub-meshes, by name
        self._groups: list[Any] = []
        if _init_backend:
            world = groups.get_world_size()
            if sorted(ranks.reshape(-1).tolist()) != list(range(world)):
                raise RuntimeError(
                    f"DeviceMesh: the mesh must hold every rank of the default group (0..{world - 1}) "
                    f"exactly once, got {ranks.tolist()}"
                )
            self._groups = [_group_along(ranks, dim) for dim in range(ranks.ndim)]
        _live_meshes[id(self)] = self

    # ------------------------------------------------------------------ shape
    @property
    def mesh(self) -> Tensor:
        """The global ranks as an integer tensor of the mesh's shape."""
        return Tensor._make(self._ranks.astype(np.int32))  # PyTorch keeps the ranks as int32

    @property
    def ndim(self) -> int:
        return self._ranks.ndim

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._ranks.shape)

    def size(self, mesh_dim: int | None = None) -> int:
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        return self._ranks.size if mesh_dim is None else self._ranks.shape[self._dim(mesh_dim)]

    def _dim(self, mesh_dim: int | str | None) -> int:
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(
                    f"Found the DeviceMesh have {self.ndim} dimensions; pass mesh_dim to choose one"
                )
            return 0
        if isinstance(mesh_dim, str):
            if not self.mesh_dim_names or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist; names are {self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"mesh_dim {mesh_dim} is out of range for a {self.ndim}-D mesh")
        return mesh_dim % self.ndim

    # ------------------------------------------------------------------ this rank
    def get_rank(self) -> int:
        """This process's global rank."""
        return groups.get_rank()

    def get_coordinate(self) -> tuple[int, ...] | None:
        """This rank's index along every mesh dimension, a tuple as in PyTorch 2.13 (``None`` if
        it is not in the mesh)."""
        where = np.argwhere(self._ranks == groups.get_rank())
        return tuple(int(i) for i in where[0]) if len(where) else None

    def get_local_rank(self, mesh_dim: int | str | None = None) -> int:
        """This rank's index along ``mesh_dim`` (its rank in that dimension's group)."""
        coordinate = self.get_coordinate()
        if coordinate is None:
            raise RuntimeError(f"rank {groups.get_rank()} is not part of this DeviceMesh")
        return coordinate[self._dim(mesh_dim)]

    def get_group(self, mesh_dim: int | str | None = None) -> Any:
        """The process group of this rank along ``mesh_dim`` (may be omitted for a 1-D mesh)."""
        if not self._groups:  # unpickled before its job's groups existed: made now, collectively
            self._groups = mesh_from_state(self._state())._groups
        return self._groups[self._dim(mesh_dim)]

    def _state(self) -> tuple[list, tuple[str, ...] | None]:
        """What a pickle keeps of the mesh: its ranks and names (its groups do not pickle)."""
        return self._ranks.tolist(), self.mesh_dim_names

    def get_all_groups(self) -> list[Any]:
        """This rank's group along every dimension, in dimension order."""
        return list(self._groups)

    # ------------------------------------------------------------------ sub-meshes
    def __getitem__(self, names: str | tuple[str, ...]) -> "DeviceMesh":
        """The sub-mesh of the named dimensions that contains this rank (``mesh["shard"]``)."""
        if isinstance(names, str) and names in self._flattened:
            return self._flattened[names]
        wanted = (names,) if isinstance(names, str) else tuple(names)
        dims = [self._dim(name) for name in wanted]
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"DeviceMesh: repeated dimension names in {wanted}")
        coordinate = self.get_coordinate()
        if coordinate is None:
            raise RuntimeError(f"rank {groups.get_rank()} is not part of this DeviceMesh")
        index = tuple(slice(None) if d in dims else coordinate[d] for d in range(self.ndim))
        kept = sorted(dims)
        ranks = np.transpose(self._ranks[index], [kept.index(d) for d in dims])
        sub = DeviceMesh(self.device_type, ranks, mesh_dim_names=wanted, _init_backend=False)
        sub._groups = [self._groups[d] for d in dims]
        _live_meshes[id(sub)] = sub
        sub._root_mesh = self._root_mesh or self
        return sub

    def _flatten(self, mesh_dim_name: str | None = None) -> "DeviceMesh":
        """This (sub-)mesh's ranks as one dimension named ``mesh_dim_name`` (default: its
        dimension names joined by ``_``), with a process group over them, as PyTorch's private
        ``_flatten`` (``mesh["dp_replicate", "dp_shard"]._flatten("dp")``); every rank must
        call it (it creates groups). The root mesh then answers ``mesh["dp"]`` with it."""
        if not self.mesh_dim_names:
            raise RuntimeError("Cannot flatten a DeviceMesh without mesh_dim_names.")
        name = mesh_dim_name or "_".join(self.mesh_dim_names)
        root = self._root_mesh or self
        if name in root._flattened:
            return root._flattened[name]
        if (
            root.mesh_dim_names
            and name in root.mesh_dim_names
            and (self.ndim != 1 or name != self.mesh_dim_names[0])
        ):
            raise RuntimeError(f"{name} already exists in the root mesh as a dimension name")
        dims = [root._dim(n) for n in self.mesh_dim_names]
        others = [d for d in range(root.ndim) if d not in dims]
        lines = np.transpose(root._ranks, others + dims).reshape(-1, self.size())
        group = _group_along(lines, 1)
        mine = lines[np.nonzero((lines == groups.get_rank()).any(axis=1))[0][0]]
        flat = DeviceMesh(self.device_type, mine, mesh_dim_names=(name,), _init_backend=False)
        flat._groups, flat._root_mesh = [group], root
        _live_meshes[id(flat)] = flat
        root._flattened[name] = flat
        return flat

    @classmethod
    def from_group(
        cls, group: Any, device_type: str, mesh: Any = None, *, mesh_dim_names: tuple[str, ...] | None = None
    ) -> "DeviceMesh":
        """A 1-D mesh over an existing process group (no new group is created)."""
        ranks = groups.get_process_group_ranks(group) if mesh is None else mesh
        out = cls(device_type, ranks, mesh_dim_names=mesh_dim_names, _init_backend=False)
        if out.ndim != 1:
            raise ValueError("DeviceMesh.from_group makes a 1-D mesh from one group")
        out._groups = [group]
        _live_meshes[id(out)] = out
        return out

    # ------------------------------------------------------------------ identity
    def _strides(self) -> tuple[int, ...]:
        """How far apart in global rank neighbours along each dimension are (for a size-1
        dimension, the row-major stride)."""
        out = []
        for d, size in enumerate(self._ranks.shape):
            if size > 1:
                first = self._ranks.reshape(-1)[0]
                out.append(int(np.moveaxis(self._ranks, d, 0)[1].reshape(-1)[0] - first))
            else:
                out.append(math.prod(self._ranks.shape[d + 1 :]))
        return tuple(out)

    def __repr__(self) -> str:
        """PyTorch's form: ``DeviceMesh((dp=2, tp=2), 'cpu', stride=(2, 1))`` (the ranks
        too when ``TORCH_DISTRIBUTED_DEBUG=DETAIL``)."""
        if self.mesh_dim_names:
            sizes = "(" + ", ".join(f"{k}={v}" for k, v in zip(self.mesh_dim_names, self.shape)) + ")"
        else:
            sizes = str(self.shape)
        detail = (
            f", Mesh: {self._ranks.tolist()}"
            if os.environ.get("TORCH_DISTRIBUTED_DEBUG", "") == "DETAIL"
            else ""
        )
        return f"DeviceMesh({sizes}, '{self.device_type}', stride={self._strides()}{detail})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeviceMesh)
            and np.array_equal(self._ranks, other._ranks)
            and self.mesh_dim_names == other.mesh_dim_names
        )

    def __hash__(self) -> int:
        return hash((self._ranks.tobytes(), self._ranks.shape, self.mesh_dim_names))


_live_meshes: weakref.WeakValueDictionary[int, DeviceMesh] = weakref.WeakValueDictionary()


def mesh_from_state(state: tuple[list, tuple[str, ...] | None], *, lazy: bool = False) -> DeviceMesh:
    """The mesh of ``DeviceMesh._state()``, made again: a live mesh of this job with those
    ranks and names when there is one (no collective), else a new one, its groups made now
    (collectively) or, with ``lazy``, on first use (so a pickle loads without a process group)."""
    ranks, names = np.asarray(state[0], dtype=np.int64), state[1]
    if groups.is_initialized():
        # groups of this job only (not of a process group destroyed since)
        live = {id(g) for g in groups._state.groups.values()} | {id(groups.GroupMember.WORLD)}
        for mesh in list(_live_meshes.values()):
            if (
                mesh._groups
                and all(id(g) in live for g in mesh._groups)
                and mesh.mesh_dim_names == names
                and np.array_equal(mesh._ranks, ranks)
            ):
                return mesh
    if lazy:
        return DeviceMesh("cpu", ranks, mesh_dim_names=names, _init_backend=False)
    return DeviceMesh("cpu", ranks, mesh_dim_names=names)


def _group_along(ranks: np.ndarray, dim: int) -> Any:
    """Create every group along ``dim`` (collectively, in one order on every rank) and
    return the one holding this rank. A line that spans the whole job reuses the default group."""
    me = groups.get_rank()
    lines = np.moveaxis(ranks, dim, -1).reshape(-1, ranks.shape[dim])
    if (
        lines.shape[0] == 1
        and lines.shape[1] == groups.get_world_size()
        and lines[0].tolist() == sorted(lines[0])
    ):
        return groups.GroupMember.WORLD
    mine = None
    for line in lines:
        group = groups.new_group(ranks=line.tolist())
        if me in line:
            mine = group
    return mine


def init_device_mesh(
    device_type: str,
    mesh_shape: tuple[int, ...],
    *,
    mesh_dim_names: tuple[str, ...] | None = None,
    backend_override: dict | None = None,
) -> DeviceMesh:
    """Lay the ranks of the default group out as ``mesh_shape`` (row-major) and create the
    process groups along every dimension. Initialises the default group from the
    environment (``env://``) if it does not exist yet, as PyTorch does.

    Args:
        device_type: ``"cpu"``.
        mesh_shape: sizes whose product is the world size, e.g. ``(world,)`` or ``(hosts, per_host)``.
        mesh_dim_names: a name per dimension, e.g. ``("replicate", "shard")``.
        backend_override: accepted for compatibility; every group uses the default backend.
    """
    _check_device_type(device_type)
    mesh_shape = tuple(int(s) for s in mesh_shape)
    if not groups.is_initialized():
        groups.init_process_group()
    world = groups.get_world_size()
    if math.prod(mesh_shape) != world:
        raise RuntimeError(
            f"init_device_mesh: mesh_shape {mesh_shape} holds {math.prod(mesh_shape)} ranks "
            f"but the world size is {world}"
        )
    ranks = np.arange(world, dtype=np.int64).reshape(mesh_shape)
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)
