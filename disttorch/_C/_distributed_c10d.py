"""``torch._C._distributed_c10d``: the compiled home of PyTorch's C10d classes.

PyTorch defines its process groups, stores, work handles and DDP's reducer here and
``torch.distributed`` re-exports them; libraries sometimes name them by this path (Lightning's
manual optimisation reaches DDP's ``Reducer`` as ``torch._C._distributed_c10d.Reducer``). The
names are disttorch's own classes, resolved on first use (they live in higher layers).
"""

from __future__ import annotations

from typing import Any

#: the names PyTorch's module shares with ``torch.distributed`` (the same objects there)
_DISTRIBUTED_NAMES = frozenset(
    "AllToAllOptions AllreduceCoalescedOptions AllreduceOptions BarrierOptions BroadcastOptions "
    "BuiltinCommHookType DebugLevel FileStore GatherOptions GradBucket HashStore Logger PrefixStore "
    "ProcessGroup ProcessGroupGloo ReduceOp ReduceOptions ReduceScatterOptions ScatterOptions Store "
    "TCPStore Work get_debug_level set_debug_level set_debug_level_from_env".split()
)


def __getattr__(name: str) -> Any:
    if name == "Reducer":
        from ..nn.parallel.reducer import Reducer

        return Reducer
    if name in _DISTRIBUTED_NAMES:
        from .. import distributed

        if hasattr(distributed, name):
            return getattr(distributed, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
