"""An FSDP unit: the parameters one ``fully_shard`` call manages, gathered and reduced together.

Per dtype of its parameters the unit has one flat layout: the padded shards side by side
(``S`` elements per rank). Gathering is one ``all_gather_into_tensor`` of ``S`` elements per
rank into an ``(n, S)`` buffer, from which every parameter's whole is cut; reducing is one
``reduce_scatter_tensor`` of an ``(n, S)`` buffer of padded gradients, after which each rank
holds the sum of its own shard's gradients. With a 2-D mesh (hybrid sharding) the reduced
shard is then all-reduced across the replicate dimension. Gradients are averaged over every
data-parallel rank, so N ranks with batch b match one process with batch N*b.

Collectives are asynchronous (``async_op=True``): an all-gather started by a prefetch runs on
the communication thread while the training thread computes, and so do reduce-scatters
launched during backward; ``finish_reduce`` waits for them at the end of the backward pass.
The all-gather moves bytes (any dtype); a bfloat16 reduction is summed in float32, as the
wire reduces no bfloat16 (a difference from PyTorch, which sums in bfloat16).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...._dtype import to_numpy
from ....distributed import collectives
from ....distributed.device_mesh import DeviceMesh
from ._param import FSDPParam

__all__ = ["FSDPUnit"]


class _Layout:
    """The flat layout of the unit's parameters of one dtype."""

    def __init__(self, params: list[FSDPParam], comm_dtype: np.dtype, reduce_dtype: np.dtype) -> None:
        self.params = params
        self.comm_dtype, self.reduce_dtype = comm_dtype, reduce_dtype
        self.offsets, total = [], 0
        for p in params:
            self.offsets.append(total)
            total += p.padded_numel
        self.size = total


class FSDPUnit:
    """Gather, free and reduce-scatter for the parameters of one ``fully_shard`` call.

    Args:
        params: the unit's parameters.
        mesh: 1-D (shard) or 2-D (replicate, shard).
        param_dtype, reduce_dtype: the mixed-precision policy's dtypes (``None``: the parameter's).
    """

    def __init__(
        self, params: list[FSDPParam], mesh: DeviceMesh, param_dtype: Any = None, reduce_dtype: Any = None
    ) -> None:
        self.params = params
        self.mesh = mesh
        self.shard_group, self.n = mesh.get_group(mesh.ndim - 1), mesh.size(mesh.ndim - 1)
        self.replicate_group = mesh.get_group(0) if mesh.ndim == 2 else None
        self.replicas = mesh.size(0) if mesh.ndim == 2 else 1
        by_dtype: dict[np.dtype, list[FSDPParam]] = {}
        for p in params:
            by_dtype.setdefault(p.dtype, []).append(p)
        self.layouts = []
        for dtype, ps in by_dtype.items():
            floating = dtype.kind == "f"
            comm = to_numpy(param_dtype) if param_dtype is not None and floating else dtype
            reduce = to_numpy(reduce_dtype) if reduce_dtype is not None and floating else comm
            if reduce.kind != "f":  # bfloat16 (no reduction on the wire): summed in float32
                reduce = np.dtype(np.float32)
            self.layouts.append(_Layout(ps, comm, reduce))
        self.state = "sharded"  # "sharded" | "gathering" | "unsharded"
        self._gathers: list[tuple[_Layout, Any, np.ndarray]] = []
        self._reduces: list[tuple[_Layout, Any, np.ndarray]] = []
        self.divide_factor: float | None = None

    # ------------------------------------------------------------------ gather / free
    def unshard(self, async_op: bool = False) -> None:
        """Start gathering the whole parameters (no-op unless sharded); wait unless ``async_op``.

        A gather waited for at once is issued synchronously: with nothing else queued it then
        runs in this thread, without the two hand-overs to the communication thread."""
        if self.state == "sharded":
            for layout in self.layouts:
                send = np.empty(layout.size, layout.comm_dtype)
                for p, offset in zip(layout.params, layout.offsets):
                    p.write_padded_shard(send[offset : offset + p.padded_numel])
                if self.n == 1:
                    self._gathers.append((layout, None, send))
                    continue
                recv = np.empty(self.n * layout.size, layout.comm_dtype)
                work = collectives.all_gather_into_tensor(  # a copy: as bytes, whatever the dtype
                    recv.view(np.uint8), send.view(np.uint8), group=self.shard_group, async_op=async_op
                )
                self._gathers.append((layout, work, recv))
            self.state = "gathering"
        if not async_op:
            self.wait_for_unshard()

    def wait_for_unshard(self) -> None:
        """Finish a started gather and put the whole parameters into the modules."""
        if self.state != "gathering":
            return
        for layout, work, recv in self._gathers:
            if work is not None:
                work.wait()
            pieces = recv.reshape(self.n, layout.size)
            for p, offset in zip(layout.params, layout.offsets):
                p.set_unsharded(pieces[:, offset : offset + p.padded_numel])
        self._gathers = []
        self.state = "unsharded"

    def reshard(self) -> None:
        """Free the whole parameters; the modules hold their shards again."""
        if self.state == "gathering":
            self.wait_for_unshard()
        if self.state == "unsharded":
            for p in self.params:
                p.free_unsharded()
            self.state = "sharded"

    # ------------------------------------------------------------------ reduce
    def start_reduce(self) -> None:
        """Launch the reduce-scatter of the whole gradients (a parameter without one counts
        as zeros, so every rank issues the same collectives); the whole gradients are freed."""
        for layout in self.layouts:
            if not any(p.requires_grad for p in layout.params):
                continue
            send = np.empty((self.n, layout.size), layout.reduce_dtype)
            for p, offset in zip(layout.params, layout.offsets):
                grad = p.unsharded._grad if p.requires_grad else None
                if grad is not None:  # laid out as its parameter (a Partial tensor-parallel one: reduced)
                    relaid = getattr(grad, "_piece_laid_out_as", None)
                    grad = grad._data if relaid is None else relaid(p.unsharded)
                p.write_padded_grad(send[:, offset : offset + p.padded_numel], grad)
                p.unsharded._grad = None
            recv = np.empty(layout.size, layout.reduce_dtype)
            if self.n == 1:
                recv[...] = send.reshape(-1)
                self._reduces.append((layout, None, recv))
            else:
                work = collectives.reduce_scatter_tensor(recv, send, group=self.shard_group, async_op=True)
                self._reduces.append((layout, work, recv))

    def finish_reduce(self) -> None:
        """Wait for the reduce-scatters, all-reduce across replicas (hybrid sharding), average,
        and add each rank's shard of the gradients into its sharded parameters' ``.grad``."""
        for layout, work, recv in self._reduces:
            if work is not None:
                work.wait()
            if self.replicate_group is not None and self.replicas > 1:
                collectives.all_reduce(recv, group=self.replicate_group)
            recv /= self.divide_factor or self.n * self.replicas
            for p, offset in zip(layout.params, layout.offsets):
                if p.requires_grad:
                    p.accumulate_sharded_grad(recv[offset : offset + p.padded_numel])
        self._reduces = []

    @property
    def has_unsharded_grads(self) -> bool:
        return any(p.unsharded._grad is not None for p in self.params)
