"""``torch.autograd.graph``: the graph's node type and saved-tensor hooks.

``saved_tensors_hooks(pack_hook, unpack_hook)`` makes every node recorded inside the block
pass what it saves for backward through ``pack_hook``, and its backward read it back through
``unpack_hook`` (see :mod:`.saved_hooks` for where and what); ``save_on_cpu`` is such a pair
that keeps a CPU copy (disttorch's tensors are all on the CPU, so it is a copy and nothing
else); ``disable_saved_tensors_hooks(message)`` makes installing hooks raise ``message``.
``register_multi_grad_hook`` calls one hook with the gradients of several tensors;
``get_gradient_edge`` names where a tensor's gradient flows in, ``increment_version`` marks
tensors as changed in place; ``allow_mutation_on_saved_tensors()`` lets a program change in
place a tensor the graph saved and still run backward on the values it had.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .._tensor import Tensor
from . import engine, saved_hooks
from .function import GradientEdge, Node, gradient_edge

__all__ = [
    "GradientEdge",
    "Node",
    "allow_mutation_on_saved_tensors",
    "get_gradient_edge",
    "increment_version",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]


class saved_tensors_hooks:
    """``with saved_tensors_hooks(pack_hook, unpack_hook):`` ``pack_hook(tensor)`` is called on
    every tensor the graph saves for backward and may return anything; ``unpack_hook(packed)``
    must return a tensor equal in value to the one packed when backward needs it."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        saved_hooks.push((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward. Every
    disttorch tensor is on the CPU, so each saved tensor is kept as a copy; ``pin_memory``
    has no effect (there is no device to pin for)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(tensor: Tensor) -> tuple:
            return tensor.device, tensor.detach().clone()

        def unpack(packed: tuple) -> Tensor:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block: the copies of the tensors
    saved inside it (``clear()`` drops them; leaving the block does)."""

    def __init__(self) -> None:
        self.cloned: list[Tensor] = []
        self.active = True

    def clear(self) -> None:
        self.cloned.clear()


_mutation_state = threading.local()
_BACKWARD_OUTSIDE = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Within this block, a tensor saved for backward may be changed in place: backward (run
    inside the same block) reads the values it had when it was saved. PyTorch clones a saved
    tensor when it is about to be mutated; disttorch has no hook before an in-place write, so
    it keeps a copy of every tensor saved inside the block (memory as if each were mutated).
    Blocks do not nest; backward after the block raises ``AssertionError``."""
    if getattr(_mutation_state, "ctx", None) is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def pack(tensor: Tensor) -> int:
        ctx.cloned.append(tensor.detach().clone())
        return len(ctx.cloned) - 1

    def unpack(index: int) -> Tensor:
        if not ctx.active:
            raise AssertionError(_BACKWARD_OUTSIDE)
        return ctx.cloned[index]

    pack.packs_everything = True  # every tensor a node keeps, PyTorch's saved fields or not
    _mutation_state.ctx = ctx
    try:
        with saved_tensors_hooks(pack, unpack):
            yield ctx
    finally:
        _mutation_state.ctx = None
        ctx.active = False
        ctx.clear()


class disable_saved_tensors_hooks:
    """Within this block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        saved_hooks.push(self.error_message)

    def __exit__(self, *exc: Any) -> None:
        saved_hooks.pop()


class _MultiHandle:
    """Removes the tensor hooks of one ``register_multi_grad_hook`` call."""

    def __init__(self, handles: list) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Any, fn: Callable, *, mode: str = "all") -> _MultiHandle:
    """Call ``fn`` with the gradients of several tensors, once per backward pass.

    ``mode="all"``: ``fn(grads)``, a tuple with each tensor's gradient (None for a tensor the
    pass gave none), when the pass has computed them (disttorch: at the end of the pass).
    ``mode="any"``: ``fn(grad)`` with the first gradient the pass computes for any of them.
    Returns a handle whose ``remove()`` unregisters it.
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "any":
        last_pass: list = [None]

        def first(grad: Tensor) -> None:
            current = engine._callback_stack[-1] if engine._callback_stack else None
            if last_pass[0] is not current:
                last_pass[0] = current
                fn(grad)

        return _MultiHandle([t.register_hook(first) for t in tensors if t.requires_grad])
    pending: dict = {}  # id of a pass's callback list -> the gradients gathered in it

    def gather(i: int) -> Callable:
        def hook(grad: Tensor) -> None:
            key = id(engine._callback_stack[-1])
            grads = pending.get(key)
            if grads is None:
                grads = pending[key] = [None] * len(tensors)
                engine.queue_callback(lambda: fn(tuple(pending.pop(key))))
            grads[i] = grad

        return hook

    return _MultiHandle([t.register_hook(gather(i)) for i, t in enumerate(tensors) if t.requires_grad])


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The node (and output) a gradient for ``tensor`` flows into: its ``grad_fn``, or a leaf's
    ``AccumulateGrad``; ``autograd.grad`` takes it as an input."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require gradients"
        )
    return GradientEdge(*gradient_edge(tensor))


def increment_version(tensor: Any) -> None:
    """Count ``tensor`` (or each tensor of an iterable) as modified in place, as an in-place op
    does: a node that saved it then refuses to run backward."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._version_box[0] += 1
