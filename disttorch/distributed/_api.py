"""The names ``disttorch.distributed`` exports, loaded on first use of one of them.

``disttorch.distributed`` itself imports nothing (see its header): the rendezvous floor
(``store/``, ``base/``) loads without NumPy, so the launcher reaches a store without the
tensor stack. The first use of any other name, or the first import of any other submodule,
imports this module, which imports every floor in the same order as ever.
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
