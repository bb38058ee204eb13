"""disttorch.distributed: process groups and collectives over ZeroMQ (mirrors torch.distributed).

    import disttorch.distributed as dist
    dist.init_process_group()                 # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    dist.all_reduce(t, op=dist.ReduceOp.SUM)  # in place, on every rank
    work = dist.all_reduce(t, async_op=True)  # queued on the group's communication thread
    work.wait()

Where things live, floor by floor (each imports only the floors below it):

- API (this folder): ``groups.py`` (init, groups, ranks), ``collectives.py`` (tensor
  collectives and barriers), ``p2p.py`` (send/recv), ``object_collectives.py``,
  ``rendezvous.py`` (``init_method`` and the launcher's variables to a store),
  ``tensor_io.py``, ``reduce_ops.py``; ``algorithms/`` (ring, tree, star ..., over a
  ``Channel``) and ``optim/`` (ZeRO) beside it.
- ``engine/``: the process group (communication thread, ordering, timeouts, dead peers),
  its ``Work``, and the ``PeerChannel`` that carries one collective's messages.
- ``wire/``: the transport over ZeroMQ, the message header, shared memory.
- ``store/``: the rendezvous stores (TCP, file, hash, prefix).
- ``base/``: errors, the job-secret handshake (the store's server and the transport both
  require it), addresses, a rate-limited log.

Environment variables:

=============================  ============================================================
``DISTTORCH_TIMEOUT``          default collective timeout in seconds (else 30 minutes)
``DISTTORCH_STALL_WARNING``    seconds before a waiting collective warns who is behind (10)
``DISTTORCH_HOST_ADDR``        address other hosts reach this rank at
``DISTTORCH_IFNAME``           interface whose address other hosts reach this rank at
``DISTTORCH_SAME_HOST_TRANSPORT``  ``ipc`` (default) or ``tcp`` between ranks of one host
``DISTTORCH_JOB_SECRET``       the job secret every connection must prove (``base/auth.py``)
``DISTTORCH_ALGORITHM``        force an algorithm family (``algorithms/select.py``)
``DISTTORCH_DETERMINISTIC``    rank-ordered reductions (``algorithms/select.py``)
``DISTTORCH_SHM``              ``0``: no shared memory between a host's ranks (``wire/shm.py``)
``DISTTORCH_SHM_ARENA_MB``     MiB of each rank's arena in the segment (256; 0: none)
``DISTTORCH_FAULT``            fault injection (``disttorch/_faults.py``)
=============================  ============================================================
"""

from .base.errors import (
    AuthenticationError,
    CollectiveMismatchError,
    DistBackendError,
    DistError,
    DistNetworkError,
    DistStoreError,
    DistTimeoutError,
    PeerDiedError,
)
from .coalesced import all_gather_coalesced, all_reduce_coalesced
from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    monitored_barrier,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .debug import DebugLevel, breakpoint, get_debug_level, set_debug_level, set_debug_level_from_env
from .engine.process_group import ProcessGroup
from .engine.work import Future, Work
from .grad_bucket import GradBucket
from .groups import (
    Backend,
    GroupMember,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_backend_config,
    get_global_rank,
    get_group_rank,
    get_pg_count,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_backend_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_ucc_available,
    is_xccl_available,
    new_group,
)
from .launch_defaults import get_default_backend_for_device, get_node_local_rank, is_torchelastic_launched
from .object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from .p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send
from .process_group_ops import (  # (binds ProcessGroup's own collectives: pg.allreduce, ...)
    AllgatherOptions,
    AllreduceCoalescedOptions,
    AllreduceOptions,
    AllToAllOptions,
    BarrierOptions,
    BroadcastOptions,
    GatherOptions,
    ReduceOptions,
    ReduceScatterOptions,
    ScatterOptions,
)
from .reduce_ops import ReduceOp, reduce_op, supports_complex
from .remote_device import _remote_device
from .store import FileStore, HashStore, PrefixStore, Store, TCPStore
from .subgroups import new_subgroups, new_subgroups_by_enumeration

#: ``dist.group.WORLD`` is the default group, as in PyTorch.
group = GroupMember

__all__ = [
    "init_process_group",
    "destroy_process_group",
    "is_initialized",
    "is_available",
    "get_rank",
    "is_gloo_available",
    "is_backend_available",
    "is_nccl_available",
    "is_ucc_available",
    "is_xccl_available",
    "is_mpi_available",
    "Backend",
    "get_world_size",
    "get_backend",
    "new_group",
    "new_subgroups",
    "new_subgroups_by_enumeration",
    "get_pg_count",
    "get_backend_config",
    "GroupMember",
    "group",
    "ProcessGroup",
    "get_process_group_ranks",
    "get_global_rank",
    "get_group_rank",
    "default_pg_timeout",
    "ReduceOp",
    "reduce_op",
    "AllgatherOptions",
    "AllreduceCoalescedOptions",
    "AllreduceOptions",
    "AllToAllOptions",
    "BarrierOptions",
    "BroadcastOptions",
    "GatherOptions",
    "ReduceOptions",
    "ReduceScatterOptions",
    "ScatterOptions",
    "supports_complex",
    "Work",
    "Future",
    "Store",
    "TCPStore",
    "FileStore",
    "HashStore",
    "PrefixStore",
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all",
    "all_to_all_single",
    "all_reduce_coalesced",
    "all_gather_coalesced",
    "barrier",
    "monitored_barrier",
    "send",
    "recv",
    "isend",
    "irecv",
    "P2POp",
    "batch_isend_irecv",
    "broadcast_object_list",
    "all_gather_object",
    "gather_object",
    "scatter_object_list",
    "send_object_list",
    "recv_object_list",
    "GradBucket",
    "DebugLevel",
    "get_debug_level",
    "set_debug_level",
    "set_debug_level_from_env",
    "breakpoint",
    "DistError",
    "DistBackendError",
    "DistNetworkError",
    "DistStoreError",
    "AuthenticationError",
    "CollectiveMismatchError",
    "DistTimeoutError",
    "PeerDiedError",
    "get_default_backend_for_device",
    "get_node_local_rank",
    "is_torchelastic_launched",
]

#: the submodules ``import torch.distributed`` makes attributes in PyTorch; here each loads
#: on first use (``torch.distributed.distributed_c10d._get_default_group()`` after a bare
#: ``import torch``)
_EAGER_IN_PYTORCH = ("autograd", "constants", "device_mesh", "distributed_c10d", "rpc", "utils")


#: names PyTorch re-exports from ``torch.distributed.device_mesh`` (loaded on first use here)
_FROM_DEVICE_MESH = ("DeviceMesh", "init_device_mesh")

#: private helpers PyTorch's own modules reach for as ``torch.distributed.X``
_FROM_C10D = ("_rank_not_in_group",)


def __getattr__(name: str):
    if name in _EAGER_IN_PYTORCH:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in _FROM_DEVICE_MESH:
        from . import device_mesh

        return getattr(device_mesh, name)
    if name in _FROM_C10D:
        from . import distributed_c10d

        return getattr(distributed_c10d, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
