"""``DistributedDataParallel``: the same model on every rank, gradients averaged across
ranks while backward runs, so every rank takes the same optimiser step.

Construction checks that every rank has the same parameters and copies rank 0's
parameters and buffers to all. A forward may broadcast buffers (``broadcast_buffers``,
under PyTorch's rule) and arms the :class:`~disttorch.nn.parallel.reducer.Reducer`, whose hooks reduce
gradient buckets during backward. A script only writes ``loss.backward();
optimizer.step()``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...distributed.utils import _broadcast_coalesced
from ...utils import trace
from ..modules.module import Module
from .reducer import Reducer

__all__ = ["DistributedDataParallel"]


def _dist():
    from ... import distributed as dist

    return dist


def _join():
    from ...distributed.algorithms import join

    return join


def _params_expecting_sparse_grads(module: Module) -> set[int]:
    """ids of the weights of ``nn.Embedding``/``nn.EmbeddingBag`` modules with ``sparse=True``."""
    from ..modules.sparse import Embedding, EmbeddingBag

    return {id(m.weight) for m in module.modules() if isinstance(m, (Embedding, EmbeddingBag)) and m.sparse}


class DistributedDataParallel(Module):
    """Data-parallel training of ``module`` across the ranks of ``process_group``.

    Args:
        module: the model (the same architecture on every rank).
        device_ids, output_device: as for a CPU module in PyTorch: ``device_ids`` must be
            None or empty (a list of devices raises ValueError); ``output_device`` is ignored.
        broadcast_buffers: copy rank 0's buffers (e.g. BatchNorm statistics) to all ranks
            before a forward, when the previous forward ran with gradients enabled and
            outside ``no_sync`` (PyTorch's ``require_forward_param_sync``; the first forward
            always does). A no-grad evaluation on one rank alone thus keeps the ranks in step.
            Inside ``Join`` the buffers come from the highest rank still training.
        process_group: the group to average over (default: the whole world).
        bucket_cap_mb: target size of a gradient bucket, in MiB.
        find_unused_parameters: allow forward passes that do not use every parameter.
        gradient_as_bucket_view: make ``.grad`` views into the buckets (saves a copy and
            memory; ``.grad`` then must not be replaced by the user).
        static_graph: accepted; the reducer already handles a fixed graph optimally.

    Buckets are first laid out in reverse order of registration. As in PyTorch, the
    first backward with gradient synchronisation records the order in which gradients
    become ready, and the next forward lays the buckets out again, once, in rank 0's
    order (broadcast to all ranks): ``self.reducer.bucket_param_indices`` lists the
    parameter indices of each bucket. Unlike PyTorch, this also happens with
    ``find_unused_parameters=True``; parameters unused in that first backward go last.
    A communication hook may see different buckets from the second iteration on.

    The weights of ``nn.Embedding``/``nn.EmbeddingBag`` with ``sparse=True`` get sparse COO
    gradients: they stay out of the buckets and their gradients are averaged as sparse
    tensors (every rank's indices and values all-gathered, coalesced, divided by the world
    size), as PyTorch does with gloo. Communication hooks see only the dense buckets.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Any = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
    ) -> None:
        super().__init__()
        if device_ids:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{list(device_ids)}, output_device {output_device}, and module parameters "
                "{device(type='cpu')}. disttorch modules are CPU modules: leave device_ids out "
                "(device_ids=None)."
            )
        dist = _dist()
        if not dist.is_initialized():
            raise ValueError(
                "Default process group has not been initialized, please make sure to call init_process_group."
            )
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._join_config = _join()._JoinConfig.construct_disabled_join_config()
        self._divide_by_initial_world_size = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have "
                "any parameter that requires a gradient."
            )
        self._check_same_parameters(module)
        with no_grad():
            _broadcast_coalesced(
                [p for _, p in module.named_parameters()] + list(module.buffers()), src=0, group=process_group
            )
        cap = 25.0 if bucket_cap_mb is None else bucket_cap_mb
        sparse_params = _params_expecting_sparse_grads(module)
        self.reducer = Reducer(
            named,
            process_group,
            int(cap * 1024 * 1024),
            find_unused_parameters,
            gradient_as_bucket_view,
            [id(p) in sparse_params for _, p in named],
        )

    # ------------------------------------------------------------------ construction
    def _check_same_parameters(self, module: Module) -> None:
        """Every rank must hold the same parameter names, shapes and dtypes: PyTorch's error
        for a count or a shape that differs (on every rank here), naming both sides."""
        dist = _dist()
        mine = [(n, tuple(p.shape), p.dtype.name) for n, p in module.named_parameters()]
        everyone: list = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(everyone, mine, group=self.process_group)
        me = dist.get_rank(self.process_group)
        fix = "every rank must build the same model."
        other = next((r for r, theirs in enumerate(everyone) if len(theirs) != len(mine)), None)
        if other is not None:
            raise RuntimeError(
                f"DDP expects same model across all ranks, but Rank {me} has {len(mine)} params, while rank "
                f"{other} has inconsistent {len(everyone[other])} params. DistributedDataParallel: {fix}"
            )
        ref = everyone[0]
        for r, theirs in enumerate(everyone):
            for i, ((n0, s0, d0), (n1, s1, d1)) in enumerate(zip(ref, theirs)):
                if (n0, s0, d0) == (n1, s1, d1):
                    continue
                detail = f"rank 0 has '{n0}' {list(s0)} {d0} where rank {r} has '{n1}' {list(s1)} {d1}"
                if s0 != s1:
                    where = "this process" if r == me else f"process {r}"
                    raise RuntimeError(
                        f"[{r}]: params[{i}] in {where} with sizes {list(s1)} appears not to match sizes "
                        f"of the same param in process 0. DistributedDataParallel: {detail}; {fix}"
                    )
                raise RuntimeError(
                    f"DistributedDataParallel: parameters differ between ranks: {detail}; {fix}"
                )

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if is_grad_enabled():
            self.reducer.ensure_prior_reduction_finished()
        with trace.span("forward", "step"):
            active = self._notify_join_context()
            self._sync_buffers(candidate=True)
            out = self.module(*inputs, **kwargs)
        # As in PyTorch, the next forward broadcasts buffers only after a forward that will be
        # followed by a synchronised backward; a no-grad forward on one rank (evaluating on
        # the main rank) thus issues the broadcast its next training forward then skips.
        self.require_forward_param_sync = is_grad_enabled() and self.require_backward_grad_sync
        if self.require_forward_param_sync:
            self.reducer.prepare_for_backward(
                out if self.find_unused_parameters else None, active_ranks=active
            )
        else:
            self.reducer.disarm()
        return out

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside keep their gradients local (accumulating in ``.grad``);
        the first backward after the block averages the accumulated sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state: Any, hook: Callable) -> None:
        """Reduce buckets with ``hook(state, bucket) -> Future`` instead of the default
        all-reduce (see ``disttorch.nn.parallel.comm_hooks``). The bfloat16 hooks
        (``bf16_compress_hook``, ``bf16_compress_wrapper(...)``) raise ``TypeError`` here, as
        in PyTorch's CPU build."""
        if not callable(hook):
            raise TypeError(f"communication hook must be callable, got {type(hook).__name__}")
        if getattr(hook, "__name__", None) in ("bf16_compress_hook", "bf16_compress_wrapper_hook"):
            # PyTorch's CPU build refuses them (they need NCCL or XCCL); so does disttorch
            raise TypeError(
                "BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ or XPU and XCCL"
            )
        self.reducer.comm_state, self.reducer.comm_hook = state, hook

    # ------------------------------------------------------------------ uneven inputs
    def join(
        self,
        divide_by_initial_world_size: bool = True,
        enable: bool = True,
        throw_on_early_termination: bool = False,
    ) -> Any:
        """Train on uneven inputs: ``Join([self], ...)``. A rank that runs out of data keeps
        answering the other ranks' collectives with zeros until every rank is done, then all
        ranks take the parameters of the last rank to join.

        Args:
            divide_by_initial_world_size: divide the summed gradients by the size of the
                process group even while some ranks have joined (their contribution counts
                as zero). With False, divide by the number of ranks still training, so a
                step's gradient is the mean over the batches that were actually seen.
            enable: with False this context manager does nothing.
            throw_on_early_termination: raise on every rank as soon as one runs out of
                inputs, instead of shadowing them.

        With ``divide_by_initial_world_size=False`` DDP multiplies whatever a communication
        hook returns by ``world size / ranks still training``. That is right for
        ``allreduce_hook``, ``fp16_compress_hook`` and any hook that, like them, returns
        the sum divided by the process group's size; a custom hook that divides by
        something else ends up off by the same factor. (PyTorch applies the number of
        ranks still training only to its built-in reduction, not to a registered hook.)
        """
        return _join().Join(
            [self],
            enable,
            throw_on_early_termination,
            divide_by_initial_world_size=divide_by_initial_world_size,
        )

    def join_hook(self, **kwargs: Any) -> Any:
        """The ``JoinHook`` of a rank that has joined: it shadows the buffer broadcast and the
        gradient all-reduces of each step, then syncs the final model (``Join``'s keyword
        ``divide_by_initial_world_size``, default True, is read here)."""
        self._divide_by_initial_world_size = kwargs.get("divide_by_initial_world_size", True)
        return _DDPJoinHook(self)

    @property
    def join_device(self) -> Any:
        from ... import device

        return device("cpu")

    @property
    def join_process_group(self) -> Any:
        return self.process_group

    def _common_rank(self, candidate: bool) -> int:
        """The highest rank (global) among the ranks for which ``candidate`` is True, agreed
        by an all-reduce over the process group (PyTorch's ``_find_common_rank``)."""
        dist = _dist()
        rank = dist.get_rank(self.process_group)
        common = Tensor._make(np.array([rank if candidate else -1], dtype=np.int64))
        dist.all_reduce(common, op=dist.ReduceOp.MAX, group=self.process_group)
        authority = int(common._data[0])
        if self.process_group is None:
            return authority
        return dist.get_global_rank(self.process_group, authority)

    def _sync_buffers(self, candidate: bool) -> None:
        """Broadcast the buffers before a forward when ``broadcast_buffers`` asks for it: from
        rank 0, or, inside ``Join``, from the highest rank still training (``candidate`` is
        whether this rank is one: a joined rank shadows the broadcast with False), since
        rank 0 may have joined with stale buffers, as PyTorch does."""
        bufs = list(self.module.buffers())
        if not (self.require_forward_param_sync and self.broadcast_buffers and bufs):
            return
        src = self._common_rank(candidate) if self._join_config.enable else 0
        with no_grad():
            _broadcast_coalesced(bufs, src=src, group=self.process_group)

    def _notify_join_context(self) -> int | None:
        """Send ``Join``'s heartbeat; return how many ranks are still training if the
        gradients are to be divided by that number, else None."""
        if not self._join_config.enable:
            return None
        work = _join().Join.notify_join_context(self)
        if work is None or self._divide_by_initial_world_size:
            return None
        return int(work.result()[0].item())

    def _get_ddp_logging_data(self) -> dict[str, Any]:
        """The construction settings PyTorch's DDP logger reports (libraries read them to
        suggest options); the run-time statistics of PyTorch's logger are not collected."""
        dist = _dist()
        return {
            "world_size": dist.get_world_size(self.process_group),
            "rank": dist.get_rank(self.process_group),
            "module_name": type(self.module).__name__,
            "backend_name": "gloo",
            "broadcast_buffers": int(self.broadcast_buffers),
            "find_unused_parameters": int(self.find_unused_parameters),
            "gradient_as_bucket_view": int(self.gradient_as_bucket_view),
            "static_graph": int(self.static_graph),
        }

    def __getstate__(self) -> dict:
        raise RuntimeError("DistributedDataParallel cannot be pickled; save ddp.module.state_dict()")


class _DDPJoinHook:
    """What a joined rank runs for DDP: per step of the others, their buffer broadcast and
    gradient all-reduces with zeros; at the end, the parameters (and, with
    ``broadcast_buffers``, the buffers) of the highest rank among the last to join, on every
    rank."""

    def __init__(self, ddp: DistributedDataParallel) -> None:
        self.ddp = ddp

    def main_hook(self) -> None:
        ddp = self.ddp
        ddp._sync_buffers(candidate=False)
        with no_grad():
            ddp.reducer.shadow_backward()
        ddp.require_forward_param_sync = True  # the shadowed backward was synchronised

    def post_hook(self, is_last_joiner: bool) -> None:
        ddp = self.ddp
        authority = ddp._common_rank(is_last_joiner)
        tensors = [p for _, p in ddp.module.named_parameters()]
        if ddp.broadcast_buffers:
            tensors += list(ddp.module.buffers())
        with no_grad():
            _broadcast_coalesced(tensors, src=authority, group=ddp.process_group)
