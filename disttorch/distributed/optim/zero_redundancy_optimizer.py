"""``ZeroRedundancyOptimizer``: each rank keeps optimiser state for its share of the
parameters only (ZeRO stage 1), so optimiser memory shrinks with the world size.

Every rank still holds every parameter and the full, averaged gradients (DDP gave them).
``step()``:

1. runs the wrapped optimiser on this rank's shard only;
2. broadcasts each shard's updated parameters from the rank that owns it (one flat
   buffer per rank and dtype), so all replicas are identical again. On ranks of one host
   sharing memory the parameters live in the segment and are broadcast where they lie,
   without a copy (``shard_layout.py``).

Shards are assigned greedily, largest parameter first, to the rank with the fewest
elements so far: the same assignment on every rank, balanced by size.

``overlap_with_ddp=True`` builds the optimiser as PyTorch's does (its local step deferred to
DDP's ``ddp_zero_hook``), and that hook refuses the CPU backend, as PyTorch's refuses Gloo:
``step()`` then warns and does nothing, and the state-dict methods raise.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any, Callable, Iterable

import numpy as np

from ..._tensor import Tensor
from ...optim.optimizer import Optimizer
from ..algorithms.join import Join, Joinable, JoinHook
from .shard_layout import ShardLayout

__all__ = ["ZeroRedundancyOptimizer"]

logger = logging.getLogger(__name__)

#: the optimisers PyTorch has a functional twin of (``overlap_with_ddp=True`` needs one)
_FUNCTIONAL = ("Adagrad", "Adam", "AdamW", "SGD", "Adadelta", "RMSprop", "Rprop", "Adamax")


def _has_functional_twin(optimizer_class: type) -> bool:
    from ... import optim

    return any(optimizer_class is getattr(optim, name) for name in _FUNCTIONAL)


def _dist():
    from ... import distributed as dist

    return dist


def partition(sizes: list[int], world_size: int) -> list[int]:
    """Owner rank of each parameter: largest first, to the least-loaded rank."""
    load = [0] * world_size
    owner = [0] * len(sizes)
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        r = min(range(world_size), key=lambda r: (load[r], r))
        owner[i] = r
        load[r] += sizes[i]
    return owner


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """Wrap ``optimizer_class`` so its state is sharded across the ranks of ``process_group``.

    Args:
        params: tensors or parameter groups, as for any optimiser.
        optimizer_class: e.g. ``disttorch.optim.Adam``.
        process_group: the group to shard over (default: the world).
        parameters_as_bucket_view: accepted for compatibility (see the README).
        overlap_with_ddp: defer the step to DDP's ``ddp_zero_hook`` (which, as PyTorch's on
            Gloo, refuses to run: see the module's docstring).
        **defaults: options for ``optimizer_class`` (``lr=...``).
    """

    def __init__(
        self,
        params: Iterable[Any],
        optimizer_class: type,
        process_group: Any = None,
        parameters_as_bucket_view: bool = False,
        overlap_with_ddp: bool = False,
        **defaults: Any,
    ) -> None:
        from ..groups import resolve_group

        dist = _dist()
        self.process_group = process_group
        self.world_size = dist.get_world_size(process_group)
        self.rank = dist.get_rank(process_group)
        self.optimizer_class = optimizer_class
        self._overlap_with_ddp = overlap_with_ddp
        if overlap_with_ddp and not _has_functional_twin(optimizer_class):
            raise ValueError(
                "Using `ddp_with_overlap=True` requires using a functional optimizer, but there is "
                f"no supported functional optimizer equivalent for {optimizer_class}"
            )
        super().__init__(params, defaults)
        Joinable.__init__(self)
        self._all_params = [p for g in self.param_groups for p in g["params"]]
        self.owner = partition([p._data.size for p in self._all_params], self.world_size)
        owner_of = {id(p): r for p, r in zip(self._all_params, self.owner)}
        local_groups = []
        for g in self.param_groups:
            mine = [p for p in g["params"] if owner_of[id(p)] == self.rank]
            local_groups.append({**g, "params": mine})
        self._local_group_nonempty = [bool(g["params"]) for g in local_groups]
        kept = [g for g in local_groups if g["params"] and not overlap_with_ddp]
        self.optim = optimizer_class(kept, **defaults) if kept else None
        self._fill_group_options(optimizer_class, defaults)
        self._consolidated: dict | None = None
        self._layout = ShardLayout(self._all_params, self.owner)
        if overlap_with_ddp:
            if parameters_as_bucket_view:
                logger.warning(
                    "`parameters_as_bucket_view=True` will be ignored since `overlap_with_ddp=True`; "
                    "instead, a different bucketing strategy will be used"
                )
        elif self._layout.place(resolve_group(process_group)):
            weakref.finalize(self, self._layout.close).atexit = False

    def _fill_group_options(self, optimizer_class: type, defaults: dict) -> None:
        """Give ``param_groups`` every option of the wrapped optimiser (its defaults included),
        as PyTorch's do; a rank that owns no parameter asks an optimiser over an empty one."""
        local = self.optim
        if local is None:
            from ... import zeros

            local = optimizer_class([zeros(0, requires_grad=True)], **defaults)
        for g in self.param_groups:
            for key, value in local.defaults.items():
                g.setdefault(key, value)

    def _sync_options(self) -> None:
        """Copy options set on ``param_groups`` (e.g. by a scheduler) into the local optimiser."""
        if self.optim is None:
            return
        local = iter(self.optim.param_groups)
        for g, nonempty in zip(self.param_groups, self._local_group_nonempty):
            if nonempty:
                lg = next(local)
                lg.update({k: v for k, v in g.items() if k != "params"})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update this rank's shard, then broadcast every shard from its owner."""
        if self._overlap_with_ddp:
            logger.warning(
                "`step()` should not be included in the training loop when `overlap_with_ddp=True`"
            )
            return None
        Join.notify_join_context(self)
        self._sync_options()
        loss = self.optim.step(closure) if self.optim is not None else (closure() if closure else None)
        self._broadcast_shards()
        return loss

    def join_hook(self, **kwargs: Any) -> JoinHook:
        """A joined rank still steps (with the gradients it has) and broadcasts its shard."""
        return _ZeROJoinHook(self)

    @property
    def join_device(self) -> Any:
        from ... import device

        return device("cpu")

    @property
    def join_process_group(self) -> Any:
        return self.process_group

    def _broadcast_shards(self) -> None:
        self._layout.broadcast(self.rank, self._broadcast)

    def _broadcast(self, flat: np.ndarray, owner: int) -> None:
        """Broadcast ``flat`` from group rank ``owner`` over the group."""
        dist = _dist()
        src = dist.get_global_rank(self.process_group, owner) if self.process_group is not None else owner
        dist.broadcast(Tensor._make(flat), src=src, group=self.process_group)

    # ---------------------------------------------------------------- checkpoints
    def _check_overlap_initialized(self) -> None:
        """With ``overlap_with_ddp=True`` the local optimiser would be built by DDP's hook,
        which never runs here: PyTorch's error for a method called before that."""
        if self._overlap_with_ddp:
            raise RuntimeError(
                "This method should not be called until this ZeroRedundancyOptimizer instance has "
                "been fully initialized"
            )

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every shard's optimiser state on rank ``to`` (call on all ranks)."""
        self._check_overlap_initialized()
        dist = _dist()
        local = self.optim.state_dict() if self.optim is not None else {"state": {}, "param_groups": []}
        gathered: list | None = [None] * self.world_size if self.rank == to else None
        dst = dist.get_global_rank(self.process_group, to) if self.process_group is not None else to
        dist.gather_object(local, gathered, dst=dst, group=self.process_group)
        self._consolidated = None
        if self.rank == to:
            state: dict[int, Any] = {}
            for r, sd in enumerate(gathered):
                # the local optimiser lists its parameters in global order
                mine = [i for i, o in enumerate(self.owner) if o == r]
                for local_idx, st in sd["state"].items():
                    state[mine[int(local_idx)]] = st
            groups, index = [], 0
            for g in self.param_groups:
                packed = {k: v for k, v in g.items() if k != "params"}
                packed["params"] = list(range(index, index + len(g["params"])))
                index += len(g["params"])
                groups.append(packed)
            self._consolidated = {"state": state, "param_groups": groups}

    def state_dict(self) -> dict:
        """The full optimiser state; only on the rank given to ``consolidate_state_dict``."""
        self._check_overlap_initialized()
        if self._consolidated is None:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. Please call "
                "`consolidate_state_dict(to=...)` on all ranks beforehand if you "
                "meant to save the global state."
            )
        return self._consolidated

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a full state dict (from ``state_dict()``); each rank keeps its shard."""
        self._check_overlap_initialized()
        for g, saved in zip(self.param_groups, state_dict["param_groups"]):
            g.update({k: v for k, v in saved.items() if k != "params"})
        if self.optim is None:
            return
        mine = [i for i, o in enumerate(self.owner) if o == self.rank]
        local_state = {j: state_dict["state"][i] for j, i in enumerate(mine) if i in state_dict["state"]}
        local, local_groups, index = iter(self.optim.param_groups), [], 0
        for g, nonempty in zip(self.param_groups, self._local_group_nonempty):
            if nonempty:  # the saved options over the local optimiser's own (Adam's betas, ...)
                og = next(local)
                packed = {**og, **{k: v for k, v in g.items() if k != "params"}}
                packed["params"] = list(range(index, index + len(og["params"])))
                index += len(og["params"])
                local_groups.append(packed)
        self.optim.load_state_dict({"state": local_state, "param_groups": local_groups})


class _ZeROJoinHook(JoinHook):
    def __init__(self, zero: ZeroRedundancyOptimizer) -> None:
        self.zero = zero

    def main_hook(self) -> None:
        self.zero.step()
