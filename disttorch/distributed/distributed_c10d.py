"""``torch.distributed.distributed_c10d``: the module where PyTorch defines the process-group
API that ``torch.distributed`` re-exports. Libraries import from it by this name, public
names and a few private helpers alike; here it re-exports ``disttorch.distributed``'s API and
adds those helpers."""

from __future__ import annotations

from . import *  # noqa: F403 (the whole public API, by the package's __all__)
from . import __all__ as _api
from .engine.process_group import ProcessGroup
from .groups import GroupMember, _default, _state, get_global_rank
from .store import PrefixStore, Store

__all__ = list(_api)

#: PyTorch's private name for :func:`get_global_rank`.
_get_global_rank = get_global_rank


def _get_default_group() -> ProcessGroup:
    """The default process group (``init_process_group``'s); ValueError before it exists."""
    return _default()


def _get_default_store() -> Store:
    """The store ``init_process_group`` made or was given, under the default group's own key
    prefix (keys set through it cannot clash with the job's own); ValueError before init."""
    _default()
    return PrefixStore("default_pg", _state.store)


def _rank_not_in_group(group: ProcessGroup | None) -> bool:
    """Whether this process is outside ``group`` (``new_group`` handed it the non-member
    marker); ``None`` means the default group, which every rank is in."""
    return group is not None and group is GroupMember.NON_GROUP_MEMBER
