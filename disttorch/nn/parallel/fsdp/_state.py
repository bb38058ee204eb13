"""The hooks of one ``fully_shard``-ed module, and the root that runs a whole iteration.

Per module (``FSDPState``):

- forward pre-hook: gather this unit (or wait for its prefetched gather), start the
  prefetch of the next unit in forward order, cast inputs (mixed precision);
- forward hook: free the whole parameters (``reshard_after_forward``) and hook the outputs,
  so that the arrival of their gradients gathers the unit again before its backward;
- post-accumulate-grad hooks on the whole parameters: when the last one of the unit has
  its gradient, the unit launches its reduce-scatter and frees its parameters.

The root (the outermost fully-sharded module, found at the first forward) orders the units
(its forward order is recorded once and used for prefetching both ways) and, from the first
pre-backward hook of a pass, queues an end-of-backward callback that reduces what is left
(units whose parameters got no gradient on this rank), waits for every reduce-scatter,
writes the sharded gradients and frees every unit.
"""

from __future__ import annotations

from typing import Any

from ...._tensor import Tensor
from ....autograd import grad_mode
from ....autograd.engine import queue_callback
from ._same_units import check_same_units
from ._unit import FSDPUnit

__all__ = ["FSDPState"]


def _map_tensors(obj: Any, fn: Any) -> Any:
    """``fn`` applied to every tensor in nested tuples, lists and dicts."""
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, (tuple, list)):
        mapped = [_map_tensors(x, fn) for x in obj]
        return type(obj)(*mapped) if hasattr(obj, "_fields") else type(obj)(mapped)
    if isinstance(obj, dict):
        return type(obj)((k, _map_tensors(v, fn)) for k, v in obj.items())
    return obj


def _cast_floating(obj: Any, dtype: Any) -> Any:
    if dtype is None:
        return obj
    return _map_tensors(obj, lambda t: t.to(dtype) if t.is_floating_point() and t.dtype != dtype else t)


class FSDPState:
    """What ``fully_shard`` attaches to a module: its unit (``None`` without parameters of
    its own), its policies and its hooks."""

    def __init__(
        self, module: Any, unit: FSDPUnit | None, reshard_after_forward: bool, mp_policy: Any
    ) -> None:
        self.module = module
        self.unit = unit
        self.reshard_after_forward = reshard_after_forward
        self.reshard_after_backward = True
        self.requires_gradient_sync = True
        self.mp_policy = mp_policy
        self.root: FSDPState | None = None
        self.forward_prefetch: list[FSDPState] | None = None  # set_modules_to_forward_prefetch
        self.backward_prefetch: list[FSDPState] | None = None
        self._pending: set[int] = set()
        self._in_backward = False
        # root only
        self.states: list[FSDPState] = []
        self.order: list[FSDPState] = []
        self._order_recorded = False
        self._callback_queued = False
        if unit is not None:
            for p in unit.params:
                if p.requires_grad:
                    p.unsharded.register_post_accumulate_grad_hook(self._grad_hook(id(p)))
        module.register_forward_pre_hook(self._pre_forward, prepend=True, with_kwargs=True)
        module.register_forward_hook(self._post_forward, prepend=False)

    # ------------------------------------------------------------------ root
    @property
    def is_root(self) -> bool:
        return self.root is self

    def _lazy_init(self) -> None:
        """At the first forward, the module called first becomes the root of every
        fully-sharded module below it (and of those alone)."""
        if self.root is not None:
            return
        self.root = self
        self.states = [m._fsdp_state for m in self.module.modules() if hasattr(m, "_fsdp_state")]
        for state in self.states:  # shards put into the modules since fully_shard
            for p in state.unit.params if state.unit is not None else ():
                p.reset_sharded_param()
        for state in self.states:
            if state is not self:
                if state.root is not None and state.root is not state:
                    continue
                state.root = self
        self.reshard_after_forward = False  # backward needs the root's parameters at once
        check_same_units(self.module, self.states)

    # ------------------------------------------------------------------ forward
    def _pre_forward(self, module: Any, args: tuple, kwargs: dict) -> tuple:
        self._lazy_init()
        root = self.root
        if self.is_root:
            self._begin_iteration()
        elif not root._order_recorded and self not in root.order:
            root.order.append(self)
        if self.unit is not None:
            self.unit.unshard()
        for nxt in self._next_in(self.forward_prefetch, +1):
            nxt.unit.unshard(async_op=True)
        if self.mp_policy.cast_forward_inputs and self.mp_policy.param_dtype is not None:
            args = _cast_floating(args, self.mp_policy.param_dtype)
            kwargs = _cast_floating(kwargs, self.mp_policy.param_dtype)
        return args, kwargs

    def _begin_iteration(self) -> None:
        if self.order and not self._order_recorded:
            self._order_recorded = True
        if not self.order:
            self.order.append(self)
        self._callback_queued = False
        for state in self.states:  # a forward whose backward never ran leaves nothing behind
            state._in_backward = False

    def _post_forward(self, module: Any, args: tuple, output: Any) -> Any:
        wants_grad = False

        def hook(t: Tensor) -> Tensor:
            nonlocal wants_grad
            if t.requires_grad:
                wants_grad = True
                t.register_hook(self._pre_backward)
            return t

        if grad_mode.is_grad_enabled():
            _map_tensors(output, hook)
        # a forward run again inside this unit's backward (activation checkpointing) keeps
        # the parameters: the backward about to run reads them
        if self.unit is not None and not self._in_backward and (self.reshard_after_forward or not wants_grad):
            self.unit.reshard()
        if self.is_root:
            if not wants_grad:  # no backward follows: nothing stays gathered
                for state in self.states:
                    if state.unit is not None:
                        state.unit.reshard()
            output = _cast_floating(output, self.mp_policy.output_dtype)
        return output

    def _next_in(self, explicit: list | None, step: int) -> list["FSDPState"]:
        """The units to prefetch after this one: the explicit list, else the neighbour in
        the recorded forward order (``step`` +1 forward, -1 backward). Backward runs the
        forward order in reverse after the root (first in that order, its parameters still
        gathered), so the root's backward prefetches the last unit."""
        if explicit is not None:
            return [s for s in explicit if s.unit is not None]
        root = self.root
        if root is None or not root._order_recorded or self not in root.order:
            return []
        i = root.order.index(self) + step
        if self is root and step < 0:
            i = len(root.order) - 1
        if 0 <= i < len(root.order) and root.order[i] is not self and root.order[i].unit is not None:
            return [root.order[i]]
        return []

    # ------------------------------------------------------------------ backward
    def _pre_backward(self, grad: Tensor) -> None:
        root = self.root
        if not root._callback_queued:
            root._callback_queued = True
            queue_callback(root._finish_backward)
        if self._in_backward or self.unit is None:
            return
        self._in_backward = True
        self.unit.unshard()
        self._pending = {id(p) for p in self.unit.params if p.requires_grad}
        for nxt in self._next_in(self.backward_prefetch, -1):
            nxt.unit.unshard(async_op=True)

    def _grad_hook(self, param_id: int) -> Any:
        return lambda _param: self._grad_ready(param_id)

    def _grad_ready(self, param_id: int) -> None:
        if not self._in_backward:
            return
        self._pending.discard(param_id)
        if not self._pending:
            self._post_backward()

    def _post_backward(self) -> None:
        self._in_backward = False
        if self.requires_gradient_sync:
            self.unit.start_reduce()
        if self.reshard_after_backward:
            self.unit.reshard()

    def _finish_backward(self) -> None:
        """End of the backward pass (root only): reduce what is left, in one order on every
        rank, wait for every reduction, and free every unit."""
        for state in reversed(self.states):
            if state._in_backward:
                state._post_backward()
        for state in self.states:
            if state.unit is None:
                continue
            state.unit.finish_reduce()
            if state.reshard_after_backward:
                state.unit.reshard()
        self._callback_queued = False
