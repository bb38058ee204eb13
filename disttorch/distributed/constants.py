"""``torch.distributed.constants``: the default timeout of process groups (30 minutes, as
PyTorch's; ``init_process_group(timeout=...)`` overrides it)."""

from .groups import default_pg_timeout

#: PyTorch's NCCL default; disttorch has no NCCL, its groups use ``default_pg_timeout``
default_pg_nccl_timeout = default_pg_timeout

__all__ = ["default_pg_nccl_timeout", "default_pg_timeout"]
