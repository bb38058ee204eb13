"""The reducer: DDP's gradient buckets and the hooks that fill and launch them.

At construction the parameters are laid out, in reverse order of registration (roughly
the order backward produces their gradients), into buckets of about ``bucket_cap_mb``
(the first one smaller, so communication starts early). Every bucket owns one flat
buffer. As in PyTorch, the first synchronised backward records the order in which the
gradients actually become ready, and the next iteration, before its backward, lays the
buckets out again once in that order: rank 0's order, broadcast to every rank, so all
ranks keep the same layout and issue the same collectives. During backward:

1. a parameter's post-accumulate-grad hook copies its ``.grad`` into its slot of the
   bucket buffer and counts the bucket down;
2. when a bucket is complete, and every bucket before it has been launched, it is handed
   to the communication hook (asynchronous all-reduce) while backward goes on: buckets
   are launched in index order, so every rank issues the same collectives in the same
   order;
3. at the end of the backward pass (a callback queued on the autograd engine) the reducer
   launches what is left, waits for every bucket, and writes the averaged gradients
   back into ``.grad``.

Inside a distributed backward (``torch.distributed.autograd``) the same hooks fire, but a
parameter's gradient lives in the autograd context instead of ``.grad``: the reducer reads
and writes gradients through ``autograd.grad_sink``, which sees the context's value there.

The last bucket is always launched in step 3, and its exchange runs in the training
thread when the communication thread is idle (``ProcessGroup.run_async_inline``): it holds
the first layers' gradients, which backward produces at its very end, so there is nothing
left to overlap it with, and handing it to the communication thread and back would only
add latency (about 0.15 ms per step on a 2-core machine).

When the group's ranks share one host and its all-reduce runs through shared memory,
each bucket's flat buffer is made in this rank's arena of the segment
(``distributed/segment_buffers.py``) where it fits: the all-reduce then reads every
rank's bucket where it is instead of copying it in first. Every rank builds the same
buckets in the same order, so they lie at the same offsets; rebuilding takes the new
buffers before giving the old ones back (a ``.grad`` that is a bucket view moves from the
old to the new). A bucket that does not fit, or any bucket of another group, is a
private array; results are the same bits either way. A reducer's buffers stay leased until
its buckets are rebuilt or the group ends (a ``.grad`` may still be a view of them).

A parameter that got no gradient is reported by name (``find_unused_parameters=False``)
or counted as a zero contribution (``find_unused_parameters=True``, where a parameter
unused on every rank keeps ``grad=None``). Either way the bucket is still reduced, so
the ranks' collectives stay aligned and nothing hangs; without ``find_unused_parameters``
that rank's gradients are then left as its backward made them (its own, not averaged; the
unused parameter's ``None``), as PyTorch leaves a reduction it never finished.

Parameters that expect sparse gradients (``nn.Embedding``/``nn.EmbeddingBag`` with
``sparse=True``) stay out of the buckets, as in PyTorch: after the dense buckets, each one's
sparse COO gradient is all-reduced (every rank's indices and values gathered, coalesced)
and divided by the world size, in registration order on every rank. A rank where such a
parameter got no gradient contributes an empty sparse tensor. Communication hooks see only
the dense buckets. A sparse gradient of any other parameter (``F.embedding(..., sparse=True)``
on a plain ``Parameter``) is reduced in its dense bucket and comes back dense.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..._native_warnings import warn
from ..._tensor import Tensor
from ...autograd.engine import queue_callback, reachable_leaves
from ...autograd.grad_sink import grad_of, set_grad
from ...utils import trace
from .comm_hooks import GradBucket, allreduce_hook

__all__ = ["Reducer"]

_FIRST_BUCKET_BYTES = 1024 * 1024

#: PyTorch's TORCH_WARN_ONCE when ``find_unused_parameters=True`` finds every parameter used.
_NOTHING_UNUSED = (
    "find_unused_parameters=True was specified in DDP constructor, but did not find any unused "
    "parameters in the forward pass. This flag results in an extra traversal of the autograd graph "
    "every iteration,  which can adversely affect performance. If your model indeed never has any "
    "unused parameters in the forward pass, consider turning this flag off. Note that this warning "
    "may be a false positive if your model has flow control causing later iterations to have unused "
    "parameters."
)


class _Bucket:
    """Parameters sharing one flat buffer, and this iteration's progress."""

    def __init__(self, index: int, params: list, dtype: np.dtype, group: Any) -> None:
        from ...distributed.segment_buffers import segment_buffer

        self.index = index
        self.params = params
        self.offsets, total = [], 0
        for p in params:
            self.offsets.append(total)
            total += p._data.size
        shared = segment_buffer(group, total, dtype)
        self.buffer = np.zeros(total, dtype=dtype) if shared is None else shared
        self.pending = len(params)
        self.future: Any = None

    def slot(self, i: int) -> np.ndarray:
        p = self.params[i]
        return self.buffer[self.offsets[i] : self.offsets[i] + p._data.size].reshape(p._data.shape)


def assign_buckets(
    params: list,
    cap_bytes: int,
    first_cap_bytes: int = _FIRST_BUCKET_BYTES,
    order: list[int] | None = None,
    skip: set[int] | None = None,
) -> list[list[int]]:
    """Group parameter indices into buckets, taking the parameters in ``order`` (default:
    reverse registration order) except those in ``skip``: one dtype per bucket, about
    ``cap_bytes`` each (the first at most ``first_cap_bytes``, and never more than ``cap_bytes``)."""
    first_cap_bytes = min(first_cap_bytes, cap_bytes)
    buckets: list[list[int]] = []
    open_: dict[np.dtype, tuple[list[int], int]] = {}
    for i in reversed(range(len(params))) if order is None else order:
        if skip is not None and i in skip:
            continue
        p = params[i]
        dt = p._data.dtype
        idxs, size = open_.get(dt, ([], 0))
        limit = first_cap_bytes if not buckets else cap_bytes
        nbytes = p._data.nbytes
        if idxs and size + nbytes > limit:
            buckets.append(idxs)
            idxs, size = [], 0
        idxs.append(i)
        open_[dt] = (idxs, size + nbytes)
    buckets.extend(idxs for idxs, _ in open_.values() if idxs)
    return buckets


class Reducer:
    """Buckets, gradient hooks and the end-of-backward reduction for one DDP model."""

    def __init__(
        self,
        named_params: list[tuple[str, Tensor]],
        process_group: Any,
        bucket_cap_bytes: int,
        find_unused_parameters: bool,
        gradient_as_bucket_view: bool,
        expect_sparse_gradient: list[bool] | None = None,
    ) -> None:
        self.names = [n for n, _ in named_params]
        self.params = [p for _, p in named_params]
        sparse_flags = expect_sparse_gradient or [False] * len(self.params)
        self.sparse_indices = [i for i, f in enumerate(sparse_flags) if f]
        self.process_group = process_group
        self.find_unused = find_unused_parameters
        self.as_view = gradient_as_bucket_view
        self.cap_bytes = bucket_cap_bytes
        self.buckets: list[_Bucket] = []
        self.bucket_param_indices: list[list[int]] = []
        self.locate: dict[int, tuple[_Bucket, int, int]] = {}
        self._lay_out(assign_buckets(self.params, bucket_cap_bytes, skip=set(self.sparse_indices)))
        self._recording = True  # until the first synchronised backward has ended
        self._order: list[int] = []
        self._rebuild_from: list[int] | None = None
        self._grad_scale = 1.0
        self.comm_state: Any = process_group
        self.comm_hook: Callable = allreduce_hook
        self._armed = False
        self._callback_queued = False
        self._finalizing = False
        self._unreduced: list[int] = []  # parameters the last backward left without a gradient
        self._next = 0
        self._ready = np.zeros(len(self.params), dtype=np.bool_)
        self._used = np.zeros(len(self.params), dtype=np.bool_)
        self.handles = [p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in self.params]

    # ------------------------------------------------------------------ bucket layout
    def _lay_out(self, layout: list[list[int]]) -> None:
        """Make the buckets of ``layout`` (lists of parameter indices). With
        ``gradient_as_bucket_view`` a ``.grad`` moves into its new slot, keeping its values."""
        from ...distributed.segment_buffers import release_segment_buffer

        old, group = self.buckets, self._group()
        self.buckets = [
            _Bucket(b, [self.params[i] for i in idxs], self.params[idxs[0]]._data.dtype, group)
            for b, idxs in enumerate(layout)
        ]
        self.bucket_param_indices = layout
        self.locate = {}
        for b, idxs in zip(self.buckets, layout):
            for slot, i in enumerate(idxs):
                p = self.params[i]
                self.locate[id(p)] = (b, slot, i)
                if self.as_view and p._grad is not None:
                    view = b.slot(slot)
                    np.copyto(view, p._grad._data)
                    p._grad = Tensor._make(view)
        for b in old:  # after the moves: the new buffers never overlap the old ones
            release_segment_buffer(group, b.buffer)

    def _rebuild_if_due(self) -> bool:
        """Once, after the first synchronised backward: lay the buckets out in rank 0's
        order of ready gradients; True when it did. A collective: every rank of the group
        calls it at the same point (:meth:`prepare_for_backward`, :meth:`shadow_backward` on a
        joined rank, or PyTorch's name for it, ``_rebuild_buckets``, which Lightning calls
        before re-arming the reducer for a manual backward)."""
        if self._rebuild_from is None:
            return False
        from ... import distributed as dist

        with trace.span("rebuild buckets", "ddp"):
            order = Tensor._make(np.array(self._rebuild_from, dtype=np.int64))
            group = self._group()
            dist.broadcast(order, src=dist.get_global_rank(group, 0), group=group)
            self._rebuild_from = None
            self._lay_out(
                assign_buckets(
                    self.params, self.cap_bytes, order=order._data.tolist(), skip=set(self.sparse_indices)
                )
            )
        return True

    _rebuild_buckets = _rebuild_if_due

    def _end_recording(self, order: list[int]) -> None:
        """The first synchronised backward is over: rebuild from ``order`` before the next."""
        self._recording = False
        self._rebuild_from = order

    # ------------------------------------------------------------------ per iteration
    def prepare_for_backward(self, outputs: Any = None, active_ranks: int | None = None) -> None:
        """Arm the hooks for the next backward; with ``find_unused_parameters`` mark the
        parameters the outputs do not depend on as ready (zero contribution) right away.

        First rebuilds the buckets, once, if the first synchronised backward has ended.
        ``active_ranks``: divide the summed gradients by this many ranks instead of the
        group's size (``join(divide_by_initial_world_size=False)`` while ranks have joined).
        """
        if self._armed and self._callback_queued:
            raise RuntimeError(
                "DistributedDataParallel: the previous iteration's reduction did "
                "not finish (backward was interrupted?)"
            )
        self._rebuild_if_due()
        self._grad_scale = 1.0 if active_ranks is None else self._group().size() / active_ranks
        self._order.clear()
        for b in self.buckets:
            b.pending = len(b.params)
            b.future = None
        self._ready[:] = False
        self._used[:] = False
        self._next = 0
        self._armed = True
        self._callback_queued = False
        self._finalizing = False
        if self.find_unused and outputs is not None:
            reached = _reachable_leaves(outputs)
            unused = [p for p in self.params if id(p) not in reached]
            for p in unused:
                self._mark_unused(p)
            if not unused:
                warn(_NOTHING_UNUSED, once=True)

    def disarm(self) -> None:
        """Gradients of the next backward stay local (``no_sync`` or eval)."""
        self._armed = False

    def _on_grad_ready(self, p: Tensor) -> None:
        if not self._armed:
            return
        if not self._callback_queued:
            self._callback_queued = True
            queue_callback(self.finalize)
        where = self.locate.get(id(p))
        if where is None:  # a sparse-gradient parameter: reduced in finalize
            i = self._index_of_sparse(p)
            if not self._ready[i]:
                self._ready[i] = self._used[i] = True
            return
        bucket, slot, i = where
        if self._ready[i]:
            return
        self._used[i] = True
        if self._recording:
            self._order.append(i)
        dst = bucket.slot(slot)
        # a sparse grad of a parameter DDP did not expect one for (e.g. F.embedding(..., sparse=True)
        # on a plain Parameter) is reduced densely; the parameter then gets a dense averaged grad
        grad = grad_of(p)
        src = grad.to_dense()._data if grad.is_sparse else grad._data
        if not np.shares_memory(src, dst):
            np.copyto(dst, src)
        self._mark_ready(bucket, i)

    def _index_of_sparse(self, p: Tensor) -> int:
        return next(i for i in self.sparse_indices if self.params[i] is p)

    def _mark_unused(self, p: Tensor) -> None:
        if id(p) not in self.locate:  # a sparse-gradient parameter: contributes nothing
            self._ready[self._index_of_sparse(p)] = True
            return
        bucket, slot, i = self.locate[id(p)]
        bucket.slot(slot).fill(0)
        self._mark_ready(bucket, i)

    def _mark_ready(self, bucket: _Bucket, i: int) -> None:
        self._ready[i] = True
        bucket.pending -= 1
        if bucket.pending == 0:
            trace.instant(f"bucket {bucket.index} ready", "ddp", bucket=bucket.index)
            self._launch_ready()

    def _launch_ready(self) -> None:
        """Launch complete buckets in index order (the same order on every rank); the last
        one only from :meth:`finalize`."""
        end = len(self.buckets) if self._finalizing else len(self.buckets) - 1
        while self._next < end and self.buckets[self._next].pending == 0:
            self._launch(self.buckets[self._next])
            self._next += 1

    def _launch(self, b: _Bucket) -> None:
        start = trace.begin("all_reduce", "comm")
        grad_bucket = GradBucket(b.index, b.buffer, b.params, b.offsets, b.index == len(self.buckets) - 1)
        b.future = self.comm_hook(self.comm_state, grad_bucket)
        if start is not None:
            b.future.add_done_callback(
                lambda _f, s=start, i=b.index, n=b.buffer.nbytes: trace.end(
                    f"all_reduce bucket {i}", s, "comm", bucket=i, bytes=n
                )
            )

    # ------------------------------------------------------------------ end of backward
    def finalize(self) -> None:
        """Launch the rest, wait for every bucket, write averaged gradients to ``.grad``."""
        missing = [i for i in range(len(self.params)) if not self._ready[i]]
        for i in missing:
            self._mark_unused(self.params[i])
        self._finalizing = True
        with self._group().run_async_inline():
            self._launch_ready()
        globally_used = self._global_usage() if self.find_unused else None
        self._armed = False
        self._callback_queued = False
        if self._recording:  # unused parameters go last, in reverse registration order
            self._end_recording(
                self._order + [i for i in reversed(range(len(self.params))) if not self._used[i]]
            )
        # PyTorch never finishes the reduction of a backward that left a parameter without a
        # gradient (find_unused_parameters=False): every .grad stays this rank's own, an unused
        # parameter's stays None. The buckets are still reduced, so the ranks' collectives stay aligned.
        write_back = self.find_unused or not missing
        start = trace.begin("wait for buckets", "ddp")
        for b in self.buckets:
            result = self._wait_bucket(b)
            if not write_back:
                continue
            if isinstance(result, Tensor) and result._data is not b.buffer:
                np.copyto(b.buffer, result._data.reshape(-1), casting="unsafe")
            if self._grad_scale != 1.0:
                np.multiply(b.buffer, self._grad_scale, out=b.buffer, casting="unsafe")
            for slot, p in enumerate(b.params):
                self._write_grad(p, b.slot(slot), globally_used)
        trace.end("wait for buckets", start, "ddp")
        self._reduce_sparse(globally_used, local=True)
        self._unreduced = [] if self.find_unused else missing

    def ensure_prior_reduction_finished(self) -> None:
        """Raise PyTorch's error, naming the parameters, when the last synchronised backward
        left parameters without a gradient and ``find_unused_parameters`` is off (called by
        the next forward with grad enabled, where PyTorch raises it)."""
        if not self._unreduced:
            return
        from ...distributed.groups import get_rank

        rank = get_rank(self.process_group)
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new one. "
            "This error indicates that your module has parameters that were not used in producing "
            "loss. You can enable unused parameter detection by passing the keyword argument "
            "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
            "\nmaking sure all `forward` function outputs participate in calculating loss. \nIf you "
            "already have done the above, then the distributed data parallel module wasn't able to "
            "locate the output tensors in the return value of your module's `forward` function. "
            "Please include the loss function and the structure of the return value of `forward` of "
            "your module when reporting this issue (e.g. list, dict, iterable).\nParameter indices "
            f"which did not receive grad for rank {rank}: {' '.join(map(str, self._unreduced))}\n"
            f"Parameters which did not receive grad for rank {rank}: "
            + ", ".join(self.names[i] for i in self._unreduced)
        )

    @staticmethod
    def _wait_bucket(b: _Bucket) -> Any:
        from ...distributed import PeerDiedError

        try:
            return b.future.wait()
        except PeerDiedError as e:
            raise PeerDiedError(
                f"DistributedDataParallel: a rank stopped taking part in training while this one "
                f"still reduces gradients: {e}. If the ranks have different numbers of batches, "
                "wrap the training loop in `with model.join():` (or give every rank the same "
                "number of batches, e.g. DistributedSampler(drop_last=True))",
                e.rank,
            ) from e

    def _group(self) -> Any:
        from ...distributed.groups import resolve_group

        return resolve_group(self.process_group)

    def _global_usage(self) -> np.ndarray:
        """Which parameters got a gradient on at least one rank (one small all-reduce)."""
        from ... import distributed as dist

        used = Tensor._make(self._used.astype(np.int32))
        dist.all_reduce(used, op=dist.ReduceOp.MAX, group=self.process_group)
        return used._data.astype(bool)

    def _reduce_sparse(self, globally_used: np.ndarray | None, local: bool) -> None:
        """Average the sparse gradients over the ranks, one parameter at a time in index
        order. ``local=False`` (a joined rank): contribute nothing and keep the result to
        the training ranks. A parameter unused on every rank (``find_unused_parameters``)
        is skipped by all ranks alike and keeps ``grad=None``."""
        from ...distributed.sparse_collectives import sparse_sum_across_ranks
        from ...ops.sparse import SparseTensor

        for i in self.sparse_indices:
            if globally_used is not None and not globally_used[i]:
                continue
            p = self.params[i]
            grad = grad_of(p) if local and self._used[i] else None
            if grad is not None and (not grad.is_sparse or grad.sparse_dim() != 1):
                grad = grad.to_dense().to_sparse(1)  # e.g. the user replaced it by a dense tensor
            if grad is None:
                idx = np.zeros((1, 0), np.int64)
                val = np.zeros((0,) + tuple(p.shape[1:]), p._data.dtype)
            else:
                grad = grad.coalesce()
                idx, val = grad._sp_indices, grad._sp_values.detach()._data
            with trace.span("all_reduce sparse grad", "comm"):
                all_idx, all_val = sparse_sum_across_ranks(idx, val, tuple(p.shape), self.process_group)
            if not local:
                continue
            scale = self._grad_scale / self._group().size()
            summed = SparseTensor._build(all_idx, Tensor._make(all_val), tuple(p.shape), False).coalesce()
            values = summed._sp_values._data * np.asarray(scale, summed._sp_values._data.dtype)
            set_grad(p, SparseTensor._build(summed._sp_indices, Tensor._make(values), tuple(p.shape), True))

    def _write_grad(self, p: Tensor, averaged: np.ndarray, globally_used: np.ndarray | None) -> None:
        if globally_used is not None and not globally_used[self.locate[id(p)][2]]:
            return
        grad = grad_of(p)
        if self.as_view:
            set_grad(p, Tensor._make(averaged))
        elif grad is None or grad.is_sparse:
            set_grad(p, Tensor._make(averaged.copy()))
        else:
            np.copyto(grad._data, averaged)
            grad._bump_version()

    def shadow_backward(self) -> None:
        """For a rank that has joined (no data left): reduce zero buckets in the same
        order as the ranks still training, so their collectives complete.

        It takes part in the bucket rebuild as the training ranks do, so its layout stays
        theirs. A rank that joined before its first synchronised backward counts this one
        as that backward, offering the current layout's order if it is rank 0."""
        self._rebuild_if_due()
        for b in self.buckets:
            b.buffer.fill(0)
            self._launch(b)
        globally_used = None
        if self.find_unused:
            from ... import distributed as dist

            used = Tensor._make(np.zeros(len(self.params), np.int32))
            dist.all_reduce(used, op=dist.ReduceOp.MAX, group=self.process_group)
            globally_used = used._data.astype(bool)
        for b in self.buckets:
            b.future.wait()
        self._reduce_sparse(globally_used, local=False)
        if self._recording:
            self._end_recording([i for idxs in self.bucket_param_indices for i in idxs])

    def remove_hooks(self) -> None:
        for h in self.handles:
            h.remove()


def _reachable_leaves(outputs: Any) -> set[int]:
    """ids of the leaf tensors the autograd graph of ``outputs`` reaches."""
    return {id(t) for t in reachable_leaves(_tensors_in(outputs))}


def _tensors_in(obj: Any) -> list[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors_in(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors_in(o)]
    return []
