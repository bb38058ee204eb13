"""``torch.utils.data._utils.worker``: ``get_worker_info`` and ``WorkerInfo``."""

from ..worker import WorkerInfo, get_worker_info

__all__ = ["WorkerInfo", "get_worker_info"]
