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

Importing this package loads nothing else: its names come from ``_api.py`` on the first use
of one of them or the first import of a submodule outside ``store/`` and ``base/``, which
need no NumPy (the launcher hosts and joins a store without the tensor stack).

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

import importlib as _importlib

from .._names_first import NamesFirst

#: submodules that need no tensors (the standard library and pyzmq): importing them loads
#: no other floor, so the launcher hosts and reaches a store without NumPy
LIGHT_SUBMODULES = frozenset({"store", "base"})


_API = NamesFirst(globals(), f"{__name__}._api", lambda parts: parts[0] not in LIGHT_SUBMODULES).install()
_load_api = _API.load


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
    if name.startswith("__"):  # (probes such as __wrapped__ load nothing)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    api = _load_api()
    if name in globals():  # a submodule the API imported (``dist.algorithms``)
        return globals()[name]
    if name in vars(api):  # (while the API loads: the names so far)
        return vars(api)[name]
    if name in _EAGER_IN_PYTORCH:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _FROM_DEVICE_MESH:
        from . import device_mesh

        return getattr(device_mesh, name)
    if name in _FROM_C10D:
        from . import distributed_c10d

        return getattr(distributed_c10d, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    """Every name of the package, those of the API not loaded yet included."""
    _load_api()
    return sorted({*globals(), *_EAGER_IN_PYTORCH, *_FROM_DEVICE_MESH})
