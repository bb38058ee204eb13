"""What describes an RPC job: the backend options, the backend names and ``WorkerInfo``."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "BackendType",
    "TensorPipeRpcBackendOptions",
    "WorkerInfo",
    "DEFAULT_RPC_TIMEOUT_SEC",
    "DEFAULT_NUM_WORKER_THREADS",
    "DEFAULT_INIT_METHOD",
    "UNSET_RPC_TIMEOUT",
]

#: PyTorch's defaults (``torch.distributed.rpc.constants``).
DEFAULT_RPC_TIMEOUT_SEC = 60.0
DEFAULT_NUM_WORKER_THREADS = 16
DEFAULT_INIT_METHOD = "env://"
#: ``timeout=`` left out: the agent's default (``rpc_timeout`` of the options) applies.
UNSET_RPC_TIMEOUT = -1.0


class BackendType(enum.Enum):
    """The RPC backends. disttorch has one, reachable under PyTorch's name ``TENSORPIPE``;
    it runs on disttorch's authenticated ZeroMQ sockets, not on TensorPipe."""

    TENSORPIPE = "TENSORPIPE"


class TensorPipeRpcBackendOptions:
    """Options of :func:`init_rpc`, named as PyTorch's.

    Args:
        num_worker_threads: threads that run incoming calls (default 16).
        rpc_timeout: default timeout of every call, in seconds (default 60; 0 or less: none).
        init_method: where the workers meet: ``env://`` (``MASTER_ADDR``/``MASTER_PORT``),
            ``tcp://host:port`` or ``file:///path``, as for ``init_process_group``.
        device_maps, devices, _transports, _channels: accepted for compatibility; CPU only,
            so device maps must be empty.
    """

    def __init__(
        self,
        *,
        num_worker_threads: int = DEFAULT_NUM_WORKER_THREADS,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT_SEC,
        init_method: str = DEFAULT_INIT_METHOD,
        device_maps: dict | None = None,
        devices: list | None = None,
        _transports: list | None = None,
        _channels: list | None = None,
    ) -> None:
        if int(num_worker_threads) < 1:
            raise ValueError(f"num_worker_threads must be at least 1, got {num_worker_threads}")
        if device_maps:
            raise ValueError(
                f"device_maps need accelerator devices; disttorch is CPU only (got {device_maps})"
            )
        self.num_worker_threads = int(num_worker_threads)
        self.rpc_timeout = float(rpc_timeout)
        self.init_method = init_method
        self.device_maps: dict = {}
        self.devices = list(devices or [])

    def set_device_map(self, to: str, device_map: dict) -> None:
        """Device maps move tensors between accelerators; disttorch has none."""
        raise ValueError(f"set_device_map({to!r}, ...) needs accelerator devices; disttorch is CPU only")

    def __repr__(self) -> str:
        return (
            f"TensorPipeRpcBackendOptions(num_worker_threads={self.num_worker_threads}, "
            f"rpc_timeout={self.rpc_timeout}, init_method={self.init_method!r})"
        )


@dataclass(frozen=True)
class WorkerInfo:
    """A worker of the RPC job: its unique ``name`` and its ``id`` (its rank)."""

    name: str
    id: int

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, name={self.name})"
