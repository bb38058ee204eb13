"""``torch.distributed.rpc``: remote procedure calls between the processes of a job.

Workers meet with :func:`init_rpc` (``MASTER_ADDR``/``MASTER_PORT`` or an ``init_method``,
as ``init_process_group``; an RPC job may run beside a process group), call functions on
each other with :func:`rpc_sync`, :func:`rpc_async` (a ``torch.futures.Future``) and
:func:`remote` (an :class:`RRef` to a result that stays where it was computed), and leave
together with :func:`shutdown`. ``torch.distributed.autograd`` runs backward passes across
these calls, and ``torch.distributed.optim.DistributedOptimizer`` steps the parameters
where they live.

The files, bottom to top: ``options.py`` (options, ``WorkerInfo``), ``serialization.py``
(pickles with out-of-band tensors), ``dist_autograd_container.py`` (what each autograd
context sent and received), ``agent.py`` (the authenticated ZeroMQ sockets and their
thread), ``owned.py`` (values kept for other workers' RRefs), ``api.py`` (the calls),
``rref.py`` (``RRef`` and ``remote``), ``functions.py`` (``async_execution``).

Differences from PyTorch: CPU tensors only (no device maps); the one backend runs on
disttorch's ZeroMQ transport and answers to ``BackendType.TENSORPIPE``.
"""

from . import functions
from .api import get_worker_info, init_rpc, rpc_async, rpc_sync, shutdown
from .options import (
    DEFAULT_RPC_TIMEOUT_SEC,
    UNSET_RPC_TIMEOUT,
    BackendType,
    TensorPipeRpcBackendOptions,
    WorkerInfo,
)
from .rref import RRef, remote

__all__ = [
    "BackendType",
    "DEFAULT_RPC_TIMEOUT_SEC",
    "RRef",
    "TensorPipeRpcBackendOptions",
    "UNSET_RPC_TIMEOUT",
    "WorkerInfo",
    "functions",
    "get_worker_info",
    "init_rpc",
    "is_available",
    "remote",
    "rpc_async",
    "rpc_sync",
    "shutdown",
]


def is_available() -> bool:
    """True: disttorch has RPC."""
    return True
