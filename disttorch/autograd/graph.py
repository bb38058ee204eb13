"""``torch.autograd.graph``: the graph's node type and saved-tensor hooks.

``saved_tensors_hooks(pack_hook, unpack_hook)`` makes every node recorded inside the block
pass what it saves for backward through ``pack_hook``, and its backward read it back through
``unpack_hook`` (see :mod:`.saved_hooks` for where and what); ``save_on_cpu`` is such a pair
that keeps a CPU copy (disttorch's tensors are all on the CPU, so it is a copy and nothing
else); ``disable_saved_tensors_hooks(message)`` makes installing hooks raise ``message``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from . import saved_hooks
from .function import Node

__all__ = [
    "Node",
    "disable_saved_tensors_hooks",
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


class disable_saved_tensors_hooks:
    """Within this block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        saved_hooks.push(self.error_message)

    def __exit__(self, *exc: Any) -> None:
        saved_hooks.pop()
