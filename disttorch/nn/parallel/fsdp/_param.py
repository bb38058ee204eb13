"""One parameter under FSDP: its shard (what the rank keeps), and its gathered form.

The original parameter of global shape ``(d0, *rest)`` is cut along dim 0 as
``torch.chunk`` cuts it: rank ``r`` of the shard group keeps rows
``[r*c, min((r+1)*c, d0))`` with ``c = ceil(d0 / n)`` (a 0-d parameter counts as one row).
For collectives every shard is padded to ``c`` rows, so all ranks send equal sizes.

Two parameter objects stand for it, and exactly one of them sits in the module at a time:

- ``sharded``: a ``DTensor`` made a parameter (as ``nn.Parameter(dtensor)`` makes one, of
  type ``DTensor``, as PyTorch's) whose memory is the local shard. The optimiser sees only
  these; ops on them outside forward run by sharding propagation, as on any DTensor.
- ``unsharded``: a plain ``nn.Parameter`` that holds the whole parameter while its unit is
  gathered and an empty array otherwise. Of a tensor-parallel parameter (a ``DTensor`` on
  another mesh, 2-D FSDP + TP), "whole" is this rank's tensor-parallel piece: FSDP shards
  that piece over its own mesh, and the gathered piece is a ``DTensor`` with the
  tensor-parallel layout again, so the ops of the forward run by sharding propagation. The
  shard is then, as in PyTorch, one DTensor over ``(dp, tp)`` of the global shape
  (``_with_tensor_parallel``); ``global_shape`` here stays the shape FSDP gathers. The same object lives across iterations, so
  autograd nodes that saved it read the refilled memory when backward gathers again.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...._tensor import Tensor
from ....distributed.device_mesh import DeviceMesh
from ....distributed.tensor import DTensor, Replicate, Shard
from ....distributed.tensor._layout import chunk_bounds, chunk_rows
from ....distributed.tensor.placement_types import _StridedShard
from ...parameter import Parameter

__all__ = ["FSDPParam"]


class FSDPParam:
    """The shard layout, the two parameter objects and the module slots of one parameter.

    Args:
        param: the original (whole) parameter, the same on every rank.
        slots: every ``(module, attribute name)`` that holds it (several for tied weights).
        mesh: 1-D (shard) or 2-D (replicate, shard); the last dimension shards.
    """

    def __init__(self, param: Parameter, slots: list[tuple[Any, str]], mesh: DeviceMesh) -> None:
        self.slots = slots
        param.__dict__["_fsdp_sharded"] = True  # a later unit meeting it again is a broken tie
        self.global_shape = tuple(param._data.shape)
        rows_shape = self.global_shape or (1,)
        self.rows, self.row_shape = rows_shape[0], tuple(rows_shape[1:])
        self.row_numel = math.prod(self.row_shape)
        n, r = mesh.size(mesh.ndim - 1), mesh.get_local_rank(mesh.ndim - 1)
        self.chunk = chunk_rows(self.rows, n)
        self.padded_numel = self.chunk * self.row_numel
        start, stop = chunk_bounds(self.rows, n, r)
        self.sharded_start = start
        # subok: a parameter on the meta device gives a meta shard (until to_empty)
        local = np.array(param._data.reshape(rows_shape)[start:stop], copy=True, subok=True)
        placements = (Shard(0),) if mesh.ndim == 1 else (Replicate(), Shard(0))
        layout = (mesh, placements, self.global_shape)
        if isinstance(param, DTensor):
            layout = _with_tensor_parallel(mesh, placements, param) or layout
        self.sharded = DTensor._wrap(local, *layout)
        self.sharded.__dict__["_is_param"] = True  # a Parameter of type DTensor, as PyTorch's
        self.requires_grad = param.requires_grad
        if self.requires_grad:
            self.sharded.requires_grad_(True)
        empty = np.empty(0, local.dtype)
        if isinstance(param, DTensor):  # a tensor-parallel piece: gathered, it is that DTensor again
            empty = DTensor._wrap(empty, param.device_mesh, param.placements, param.global_shape)
        else:
            empty = Tensor._make(empty)
        self.unsharded = Parameter(empty, self.requires_grad)

    @property
    def dtype(self) -> np.dtype:
        return self.sharded._data.dtype

    def write_padded_shard(self, out: np.ndarray) -> None:
        """Write the local shard, flat and padded with zeros, into ``out`` (``padded_numel``
        elements of the collective's dtype): one copy, cast on the way."""
        local = self.sharded._data.reshape(-1)
        out[: local.size] = local
        out[local.size :] = 0

    def set_unsharded(self, pieces: np.ndarray) -> None:
        """Install the whole parameter from every rank's padded shard (``(n, padded_numel)``)."""
        whole = pieces.reshape((-1,) + self.row_shape)[: self.rows]
        self.unsharded._data = np.ascontiguousarray(whole).reshape(self.global_shape)
        self._install(self.unsharded)

    def free_unsharded(self) -> None:
        """Drop the whole parameter's memory and put the shard back into the module."""
        self.unsharded._data = np.empty(0, self.unsharded._data.dtype)
        self._install(self.sharded)

    def write_back_unsharded(self) -> None:
        """Copy this rank's rows of the whole parameter (changed in place) into its shard."""
        whole = self.unsharded._data
        if whole.size:
            local = self.sharded._data
            rows = whole.reshape((self.rows,) + self.row_shape)
            start = self.sharded_start
            np.copyto(local, rows[start : start + local.shape[0]].reshape(local.shape).astype(local.dtype))

    def reset_sharded_param(self) -> None:
        """Adopt a shard that replaced ours in the module (``load_state_dict(assign=True)``
        with ``nn.Parameter(distribute_tensor(...))``, as PyTorch's FSDP2 does): it must be a
        DTensor with the same global shape, placements, local shape and dtype."""
        module, name = self.slots[0]
        new = module._parameters.get(name)
        if new is self.sharded or new is self.unsharded:
            return
        qualname = f"{type(module).__name__}.{name}"
        if not isinstance(new, DTensor):
            raise RuntimeError(
                f"fully_shard: parameter '{qualname}' was replaced by a {type(new).__name__}; a "
                "fully-sharded module takes only DTensor shards (nn.Parameter(distribute_tensor("
                "full, param.device_mesh, param.placements)))"
            )
        want = (self.sharded.global_shape, self.sharded.placements, self.sharded._data.shape, self.dtype)
        got = (new.global_shape, new.placements, new._data.shape, new._data.dtype)
        if got != want:
            raise RuntimeError(
                f"fully_shard: the shard assigned to '{qualname}' has (global shape, placements, "
                f"local shape, dtype) {got}, expected {want}"
            )
        new.requires_grad_(self.requires_grad)
        self.sharded = new
        self._install(new)

    def _install(self, param: Parameter) -> None:
        for module, name in self.slots:
            module._parameters[name] = param

    def write_padded_grad(self, out: np.ndarray, grad: np.ndarray | None) -> None:
        """Write the whole gradient into ``out``, this parameter's ``(n, padded_numel)`` columns
        of the reduce-scatter buffer: row ``r`` gets rank ``r``'s chunk of rows, padded with
        zeros (all zeros without a gradient). One copy, cast on the way, no temporary."""
        n = out.shape[0]
        if grad is None or self.padded_numel == 0:
            out[...] = 0
            return
        pieces = out.reshape(n, self.chunk, self.row_numel, copy=False)  # the columns, split
        rows = grad.reshape(self.rows, self.row_numel)
        full, rest = divmod(self.rows, self.chunk)
        pieces[:full] = rows[: full * self.chunk].reshape(full, self.chunk, self.row_numel)
        if full < n:
            pieces[full, :rest] = rows[full * self.chunk :]
            pieces[full, rest:] = 0
            pieces[full + 1 :] = 0

    def accumulate_sharded_grad(self, padded: np.ndarray) -> None:
        """Add this rank's reduced gradient (its padded shard) into ``sharded.grad``."""
        local = self.sharded._data
        grad = padded[: local.size].reshape(local.shape).astype(local.dtype, copy=False)
        current = self.sharded._grad
        if current is None:
            self.sharded._grad = self.sharded._same_layout(np.array(grad, copy=True))
        else:
            current._data += grad


def _with_tensor_parallel(mesh: DeviceMesh, placements: tuple, param: DTensor) -> tuple | None:
    """The layout of FSDP's shard of tensor-parallel piece ``param`` as PyTorch gives it: one
    DTensor of ``param``'s global shape over the mesh of both (``(dp, tp)``, sliced from their
    common root), FSDP's ``Shard(0)`` cutting inside the tensor-parallel pieces
    (``_StridedShard(0, sf)``) when those cut dim 0 too. None where the meshes share no root."""
    tp = param.device_mesh
    root = mesh._root_mesh
    if root is None or root is not tp._root_mesh or not mesh.mesh_dim_names or not tp.mesh_dim_names:
        return None
    both = root[mesh.mesh_dim_names + tp.mesh_dim_names]
    cuts = math.prod(tp.size(i) for i, p in enumerate(param.placements) if p.is_shard(0))
    fsdp = _StridedShard(0, split_factor=cuts) if cuts > 1 else Shard(0)
    return both, placements[:-1] + (fsdp,) + tuple(param.placements), param.global_shape
