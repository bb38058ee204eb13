"""Which collectives a thread issues, by PyTorch's operator names, for ``CommDebugMode``.

Each collective records itself under the name of the operator PyTorch's dispatcher would
see for it: the ``torch.distributed`` calls as ``c10d.allreduce_``, ``c10d.broadcast_``, ...;
the functional collectives, and the collectives a DTensor's redistribution issues, as
``c10d_functional.all_reduce``, ``c10d_functional.all_gather_into_tensor``, ... A collective
built from others (a functional all-reduce, an object all-gather) is recorded once, under its
own name: :func:`counted_as` names it and silences the collectives it runs.

Both families are registered as ``torch.ops.c10d.<op>`` and ``torch.ops.c10d_functional.<op>``
(the keys of ``CommDebugMode``'s counts); calling one raises ``NotImplementedError`` naming the
``torch.distributed`` function to call instead.

Recording is per thread, as PyTorch's dispatch modes are: :func:`start_listening` adds a
listener for the calling thread; without one, :func:`record` costs one attribute lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..ops.op_namespace import REGISTERED

__all__ = ["C10D_NAMES", "FUNCOL_NAMES", "counted_as", "record", "start_listening", "stop_listening"]

#: the ``c10d`` operators of the ``torch.distributed`` collectives
C10D_NAMES = (
    "_allgather_base_",
    "_reduce_scatter_base_",
    "allgather_",
    "allgather_coalesced_",
    "allgather_into_tensor_coalesced_",
    "allreduce_",
    "allreduce_coalesced_",
    "alltoall_",
    "alltoall_base_",
    "broadcast_",
    "gather_",
    "reduce_",
    "reduce_scatter_",
    "reduce_scatter_tensor_coalesced_",
    "scatter_",
)
#: the ``c10d_functional`` operators of the functional collectives
FUNCOL_NAMES = (
    "all_gather_into_tensor",
    "all_gather_into_tensor_coalesced",
    "all_reduce",
    "all_reduce_coalesced",
    "all_to_all_single",
    "broadcast",
    "reduce_scatter_tensor",
    "reduce_scatter_tensor_coalesced",
)


def _named_only(qualified: str, instead: str) -> Callable[..., None]:
    def call(*args: object, **kwargs: object) -> None:
        raise NotImplementedError(
            f"torch.ops.{qualified.replace('::', '.')} names the collective (CommDebugMode counts by it); "
            f"disttorch does not run it as an operator: call {instead}"
        )

    return call


for _op in C10D_NAMES:
    REGISTERED[f"c10d::{_op}"] = _named_only(f"c10d::{_op}", "the torch.distributed collective")
for _op in FUNCOL_NAMES:
    REGISTERED[f"c10d_functional::{_op}"] = _named_only(
        f"c10d_functional::{_op}", "torch.distributed._functional_collectives"
    )


class _State(threading.local):
    def __init__(self) -> None:
        self.listeners: list[Callable[[str], None]] = []
        self.silenced = 0


_state = _State()


def record(name: str) -> None:
    """A collective ``name`` (``"c10d.allreduce_"``) is being issued by this thread."""
    if _state.listeners and not _state.silenced:
        for listener in list(_state.listeners):
            listener(name)


@contextmanager
def counted_as(name: str) -> Iterator[None]:
    """Record ``name`` once, and none of the collectives the block issues."""
    record(name)
    _state.silenced += 1
    try:
        yield
    finally:
        _state.silenced -= 1


def start_listening(listener: Callable[[str], None]) -> None:
    """Call ``listener(name)`` for each collective this thread issues from now on."""
    _state.listeners.append(listener)


def stop_listening(listener: Callable[[str], None]) -> None:
    """Stop calling ``listener`` (added by :func:`start_listening` on this thread)."""
    _state.listeners.remove(listener)
