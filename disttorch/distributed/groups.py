"""Process-group management: ``init_process_group``, ``new_group``, ranks and sizes.

This module holds the state of the process: the default group (``GroupMember.WORLD``),
the subgroups made by :func:`new_group`, and the store they rendezvoused through. Group ids
are given in creation order, which is the same on every rank because, as in PyTorch, every
rank of the default group calls :func:`new_group` for every subgroup, member or not.
"""

from __future__ import annotations

import atexit
import io
import os
import sys
import time
import warnings
from datetime import timedelta
from typing import Any, Iterable

import numpy as np

from .algorithms import select
from .base.errors import AuthenticationError, DistBackendError
from .engine.process_group import EXIT_FLUSH_TIMEOUT, ProcessGroup
from .rendezvous import LeftRanks, check_in, claim_rank, release_rank, rendezvous
from .store import TCPStore
from .wire.transport import flush_sent

__all__ = [
    "init_process_group",
    "destroy_process_group",
    "is_initialized",
    "is_available",
    "is_gloo_available",
    "is_backend_available",
    "is_nccl_available",
    "is_ucc_available",
    "is_xccl_available",
    "is_mpi_available",
    "Backend",
    "get_rank",
    "get_world_size",
    "get_backend",
    "get_backend_config",
    "get_pg_count",
    "new_group",
    "GroupMember",
    "get_process_group_ranks",
    "get_global_rank",
    "get_group_rank",
    "default_pg_timeout",
    "ENV_TIMEOUT",
]

ENV_TIMEOUT = "DISTTORCH_TIMEOUT"
#: Default timeout of collectives, as PyTorch's (30 minutes).
default_pg_timeout = timedelta(minutes=30)
_BACKENDS = ("zmq", "gloo")
_AUTH_REPORTS = "disttorch/auth-failure-reports"  # ranks that read who could not join
_AUTH_REPORT_GRACE = 2.0  # seconds the store's host waits for them before closing the store


class _NonGroupMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """``WORLD`` is the default group; ``NON_GROUP_MEMBER`` is what :func:`new_group` returns
    to ranks outside the new group (collectives on it do nothing and return ``None``)."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = _NonGroupMember()


class _State:
    def __init__(self) -> None:
        self.store = None
        self.owns_store = False
        self.generation = 0
        self.groups: dict[int, ProcessGroup] = {}
        self.next_group_id = 1
        self.pid = 0  # the process that initialized the default group
        #: the members of the latest new_group this rank is outside of (PyTorch records them
        #: under NON_GROUP_MEMBER: get_process_group_ranks of it answers them)
        self.non_member_ranks: list[int] | None = None


_state = _State()


class Backend:
    """Backend names, as strings (``dist.Backend.GLOO == "gloo"``). ``GLOO`` and ``ZMQ`` both
    select disttorch's ZeroMQ backend; the GPU and MPI backends are not available."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    ZMQ = "zmq"
    NCCL = "nccl"
    MPI = "mpi"
    #: the backend PyTorch names for each device type (only "cpu"'s runs here)
    default_device_backend_map = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl", "mps": "gloo"}
    backend_list = [UNDEFINED, GLOO, ZMQ, NCCL, MPI]
    #: the device types each backend can run collectives on here
    backend_capability = {"gloo": ["cpu"], "zmq": ["cpu"], "nccl": [], "mpi": []}


def is_available() -> bool:
    """Whether ``disttorch.distributed`` can be used (always ``True``)."""
    return True


def is_gloo_available() -> bool:
    """``True``: the ``"gloo"`` backend name is accepted (it selects the ZeroMQ backend)."""
    return True


def is_nccl_available() -> bool:
    """``False``: disttorch has no GPU backend."""
    return False


def is_mpi_available() -> bool:
    """``False``: disttorch has no MPI backend (``env://`` reads Open MPI's variables, though)."""
    return False


def is_backend_available(backend: str) -> bool:
    """Whether ``backend`` can run here: the ZeroMQ backend (``"gloo"``, ``"zmq"``), not the
    GPU, MPI or UCC ones PyTorch names."""
    return str(backend).lower() in (Backend.GLOO, Backend.ZMQ)


def is_ucc_available() -> bool:
    """``False``: disttorch has no UCC backend."""
    return False


def is_xccl_available() -> bool:
    """``False``: disttorch has no XPU backend."""
    return False


def is_initialized() -> bool:
    """Whether the default process group has been initialized."""
    return GroupMember.WORLD is not None


def _default() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to call init_process_group."
        )
    return GroupMember.WORLD


def resolve_group(group: Any) -> ProcessGroup | None:
    """The ProcessGroup meant by ``group`` (``None``: the default), or ``None`` for non-members."""
    if group is None or group is GroupMember.WORLD:
        return _default()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group() or None, got {type(group).__name__}")
    return group


def member_group(group: Any, op: str) -> ProcessGroup | None:
    """:func:`resolve_group` for collective ``op``; on a rank outside ``group``, PyTorch's
    warning that ``op`` runs on a rank that does not belong to it (and ``None``)."""
    pg = resolve_group(group)
    if pg is None:
        warnings.warn(
            f"Running {op} on global rank {get_rank()} which does not belong to the given group.",
            stacklevel=3,
        )
    return pg


def _timeout_seconds(timeout: timedelta | float | None) -> float:
    if timeout is None:
        env = os.environ.get(ENV_TIMEOUT)
        if env:
            try:
                return float(env)
            except ValueError:
                raise ValueError(f"{ENV_TIMEOUT} must be a number of seconds, got {env!r}") from None
        return default_pg_timeout.total_seconds()
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    if seconds <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    return seconds


#: Backends a CPU build of PyTorch names but lacks, with the ``RuntimeError`` it raises for each.
_NOT_BUILT_IN = {
    "nccl": "Distributed package doesn't have NCCL built in",
    "xccl": "Distributed package doesn't have XCCL built in",
    "mpi": "Distributed package doesn't have MPI built in. MPI is only included if you build "
    "PyTorch from source on a host that has MPI installed.",
}


def _backend_name(backend: str | None) -> str:
    """The name :func:`get_backend` reports for ``backend``: ``None`` is ``"zmq"``; ``"zmq"``
    and ``"gloo"`` (any case, also as ``"cpu:gloo"`` or ``"cpu:gloo,cuda:gloo"``) name
    disttorch's. A GPU or MPI backend, in any part, raises PyTorch's CPU-build ``RuntimeError``;
    another name PyTorch's ``AssertionError`` (after its warning for a bare name)."""
    if backend is None:
        return "zmq"
    name = str(backend).lower()
    parts = [p.partition(":")[2] for p in name.split(",")] if ":" in name else [name]
    hint = "disttorch runs collectives over ZeroMQ on CPUs: use backend='gloo' or leave it out"
    for part in parts:
        missing = _NOT_BUILT_IN.get(part)
        if missing:
            raise RuntimeError(f"{missing} ({hint})")
    for part in parts:
        if part not in _BACKENDS:
            if ":" not in name:
                warnings.warn(
                    f"Device capability of {part} unknown, assuming `cpu` and `cuda`. You can specify it "
                    "in `device:backend` format in `init_process_group` call.",
                    stacklevel=3,
                )
            raise AssertionError(f"Unknown backend type {part} ({hint}; 'zmq' names the same backend)")
    return name


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Initialize the default process group (every rank must call it).

    Args:
        backend: ``None``, ``"zmq"`` or ``"gloo"``: all select disttorch's ZeroMQ backend
            (``"gloo"`` is accepted so PyTorch CPU scripts run unchanged, and is what
            :func:`get_backend` then reports). ``"nccl"``, ``"xccl"`` and ``"mpi"`` raise
            PyTorch's CPU-build ``RuntimeError`` (also as a part: ``"cpu:gloo,cuda:nccl"``);
            other names PyTorch's ``AssertionError``.
        init_method: ``"env://"`` (default: ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
            ``MASTER_PORT``), ``"tcp://host:port"`` or ``"file://path"``. Exclusive with
            ``store``.
        timeout: how long a collective may take before raising ``DistTimeoutError``.
            Default: ``DISTTORCH_TIMEOUT`` seconds if set, else 30 minutes (PyTorch's).
        world_size: number of ranks (``-1``: from the init method).
        rank: this process's rank (``-1``: from the init method).
        store: a key-value store all ranks share (then ``rank`` and ``world_size`` are required).
        group_name, pg_options: accepted for compatibility; unused.
        device_id: the accelerator to bind the group to; this CPU build has none, so any
            value but ``None`` raises ``ValueError``, as PyTorch's CPU build answers.

    Raises:
        ValueError: the default group exists already, or the arguments are inconsistent.
    """
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    _check_device_id(device_id)
    name = _backend_name(backend)
    seconds = _timeout_seconds(timeout)
    if store is None:
        store, rank, world_size = rendezvous(
            init_method or "env://", rank, world_size, timedelta(seconds=seconds)
        )
        _state.owns_store = True
    else:
        if init_method is not None:
            raise ValueError("Cannot specify both init_method and store.")
        if rank < 0 or world_size <= 0:
            raise ValueError(
                f"with store=, rank and world_size must be given; got rank={rank}, world_size={world_size}"
            )
        _state.owns_store = False
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is outside a world of {world_size} ranks")
    _state.store = store
    _state.pid = os.getpid()
    try:
        claim_rank(store, rank)
        # A per-rank counter makes the keys of a re-initialized group (same store) fresh.
        _state.generation = store.add(f"disttorch/generation/{rank}", 1)
        check_in(store, rank, world_size, seconds, _state.generation)
        GroupMember.WORLD = _create(0, rank, list(range(world_size)), seconds, name)
    except AuthenticationError as e:
        missing = _ranks_not_joined(store, world_size)
        _hold_store_for_reports(store, world_size - len(missing))
        _release_store()
        if not missing:
            raise
        who = ", ".join(f"rank {r}" for r in missing)
        raise AuthenticationError(f"{who} cannot join the job: {e}") from None
    except BaseException:
        _release_store()
        raise
    atexit.register(_destroy_at_exit)
    _prefix_uncaught_errors(rank)


def _prefix_uncaught_errors(rank: int) -> None:
    """As PyTorch once a default group exists: the report of an uncaught exception has every
    line prefixed with ``[rank<r>]: `` (each init wraps the hook again, as PyTorch's does).
    Not under disttorch's launcher, which prefixes every line of a rank's output already."""
    if os.environ.get("DISTTORCH_AGENT_PID"):
        return
    previous, prefix = sys.excepthook, f"[rank{rank}]: "

    def report(*exc_info: Any) -> None:
        stderr, sys.stderr = sys.stderr, io.StringIO()
        try:
            previous(*exc_info)
        finally:
            text, sys.stderr = sys.stderr.getvalue(), stderr
        sys.stderr.write("\n".join(prefix + line if line else "" for line in text.split("\n")))
        sys.stderr.flush()

    sys.excepthook = report


def _check_device_id(device_id: Any) -> None:
    """Refuse a ``device_id``: there is no accelerator to bind a group to (PyTorch's CPU
    build refuses an index, an accelerator and the CPU alike, with these messages)."""
    if device_id is None:
        return
    if isinstance(device_id, int):
        raise ValueError(
            "device_id is an int, but no accelerator support is found from the current compilation. "
            "Please use a different compiled version that supports your accelerator."
        )
    if getattr(device_id, "type", None) != "cpu":
        raise ValueError(
            f"device_id {device_id} does not match the current compilation's accelerator support: None. "
            "Please use a different compiled version that supports your accelerator."
        )
    raise ValueError("init_process_group device_id parameter must be an accelerator with an index")


def _ranks_not_joined(store, world_size: int) -> list[int]:
    """Ranks that never checked in with ``store`` (after an authentication failure)."""
    try:
        return [r for r in range(world_size) if not store.check([f"disttorch/generation/{r}"])]
    except Exception:  # noqa: BLE001 - the store may be gone with its host
        return []


def _hold_store_for_reports(store, joined: int) -> None:
    """Every rank that joined asks the store which ranks did not, so that each can name them.
    The store lives in the process that hosts it: that one keeps it open until all ``joined``
    ranks have asked, or :data:`_AUTH_REPORT_GRACE` seconds have passed."""
    try:
        asked = store.add(_AUTH_REPORTS, 1)
        deadline = time.monotonic() + _AUTH_REPORT_GRACE
        while _state.owns_store and asked < joined and time.monotonic() < deadline:
            time.sleep(0.02)
            asked = store.add(_AUTH_REPORTS, 0)
    except Exception:  # noqa: BLE001 - the store may be gone with its host
        pass


def _create(group_id: int, rank: int, ranks: list[int], seconds: float, backend: str) -> ProcessGroup:
    pg = ProcessGroup(
        _state.store,
        rank,
        ranks,
        group_id,
        seconds,
        backend,
        prefix=f"disttorch/{_state.generation}/pg/{group_id}/",
        left_for=LeftRanks(_state.store).left_for,
    )
    _state.groups[group_id] = pg
    return pg


def new_group(
    ranks: Iterable[int] | None = None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
):
    """Create a subgroup of the default group (every rank of the default group must call it).

    Args:
        ranks: global ranks of the members (``None``: all). Group ranks follow their sorted
            order, as in PyTorch.
        timeout: the subgroup's collective timeout (default: the default group's).
        backend: as for :func:`init_process_group` (default: the default group's).
        use_local_synchronization: with ``False`` (the default) every rank of the default
            group must call ``new_group``; the member lists are compared then, and ranks
            that disagree raise ``DistBackendError`` naming who passed what. ``True``
            skips that check (and, unlike PyTorch, still needs every rank to call).
        pg_options, group_desc: accepted for compatibility.

    Returns:
        The new :class:`ProcessGroup` on members, ``GroupMember.NON_GROUP_MEMBER`` elsewhere.
        A subgroup has its own connections, sequence numbers and communication thread.
    """
    world = _default()
    members = sorted(range(world.size()) if ranks is None else (int(r) for r in ranks))
    if len(set(members)) != len(members) or any(not 0 <= r < world.size() for r in members):
        raise ValueError(f"new_group ranks must be distinct ranks in [0, {world.size()}), got {members}")
    group_id = _state.next_group_id
    _state.next_group_id += 1
    if not use_local_synchronization:
        _agree_on_members(world, group_id, members)
    if world.rank() not in members:
        _state.non_member_ranks = members
        return GroupMember.NON_GROUP_MEMBER
    seconds = world.timeout if timeout is None else _timeout_seconds(timeout)
    name = world.backend if backend is None else _backend_name(backend)
    return _create(group_id, members.index(world.rank()), members, seconds, name)


def _agree_on_members(world: ProcessGroup, group_id: int, members: list[int]) -> None:
    """Every rank of the default group tells every other which members it passed to
    :func:`new_group` (an all-gather of one row of the membership table each), and all raise
    ``DistBackendError`` naming the ranks if the rows differ.

    Without it, ranks that disagree connect to each other under the same group id and give
    wrong results silently. A rank that skipped this ``new_group`` meets it with its next
    collective on the default group and every rank raises ``CollectiveMismatchError`` (a
    rank that issues nothing is named by the stall warning, then the timeout)."""
    n = world.size()
    table = np.zeros((n, n), np.uint8)  # row r: the members rank r listed

    def body(ch) -> None:
        table[ch.rank, members] = 1
        if n > 1:
            select.all_gather(ch, table.reshape(-1), [n] * n)

    world.collective("new_group", table.dtype, n, -1, body)
    rows: dict[bytes, list[int]] = {}
    for r in range(n):
        rows.setdefault(table[r].tobytes(), []).append(r)
    if len(rows) > 1:
        said = "; ".join(
            f"rank{'s' if len(who) > 1 else ''} {', '.join(map(str, who))} passed "
            f"{np.flatnonzero(table[who[0]]).tolist()}"
            for who in rows.values()
        )
        raise DistBackendError(
            f"new_group (group {group_id}): the ranks disagree about its members: {said}. Every "
            "rank of the default group must call new_group for every subgroup, in the same "
            "order and with the same ranks"
        )


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Destroy ``group``, or with ``None`` every group and the default one.

    Queued work finishes first; peers are told this rank left (so a peer still waiting for
    it gets ``PeerDiedError`` saying it left rather than a timeout).
    """
    if group is None or group is GroupMember.WORLD:
        if not is_initialized():
            raise ValueError(
                "Default process group has not been initialized, please make sure to call init_process_group."
            )
        if os.getpid() != _state.pid:  # a forked child: the groups and store are the parent's
            _forget_parents_groups()
            return
        if _state.owns_store and isinstance(_state.store, TCPStore):
            _state.store.retire()  # a rank re-initialising meanwhile waits for the next store
        else:
            release_rank(_state.store, GroupMember.WORLD.rank())
        try:
            for gid in sorted(_state.groups, reverse=True):
                _state.groups.pop(gid).destroy()
        finally:
            GroupMember.WORLD = None
            _state.next_group_id = 1
            _state.non_member_ranks = None
            flush_sent(EXIT_FLUSH_TIMEOUT)  # the goodbyes and last messages leave before we return
            _release_store()
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    _state.groups.pop(group.group_id, None)
    group.destroy()


def _forget_parents_groups() -> None:
    """In a process forked after ``init_process_group``: drop the groups and the store without
    touching their sockets, threads or server, which belong to the parent."""
    for pg in _state.groups.values():
        pg.destroy()  # only forgets, in a forked process
    _state.groups.clear()
    GroupMember.WORLD = None
    _state.next_group_id = 1
    _state.store = None


def _release_store() -> None:
    if _state.owns_store and _state.store is not None:
        _state.store.close()
    _state.store = None


def _destroy_at_exit() -> None:
    if is_initialized():
        try:
            destroy_process_group()
        except Exception:  # noqa: BLE001 - best effort at interpreter exit
            pass


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (default: the default group); -1 if not a member."""
    pg = resolve_group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """Number of ranks in ``group`` (default: the default group); -1 if not a member."""
    pg = resolve_group(group)
    return -1 if pg is None else pg.size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """Name of the backend of ``group`` (``"zmq"``, or ``"gloo"`` if the script asked for it)."""
    pg = resolve_group(group)
    if pg is None:
        raise ValueError("Invalid process group specified: this rank is not a member of it")
    return pg.backend


def get_backend_config(group: ProcessGroup | None = None) -> str:
    """The devices and backends of ``group`` as PyTorch writes them (``"cpu:gloo,cuda:gloo"``
    for gloo, whose name PyTorch registers for both devices; ``"cpu:zmq"``)."""
    pg = resolve_group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    if ":" in pg.backend:  # as the program wrote it ("cpu:gloo")
        return pg.backend
    return "cpu:gloo,cuda:gloo" if pg.backend == Backend.GLOO else f"cpu:{pg.backend}"


def get_pg_count() -> int:
    """How many process groups this process has created since ``init_process_group`` (the
    default one included; 0 before it), as PyTorch counts them: every ``new_group`` call,
    on members and non-members alike."""
    return _state.next_group_id if is_initialized() else 0


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """Global ranks of ``group``'s members, in group-rank order. For
    ``GroupMember.NON_GROUP_MEMBER``, as PyTorch: the members of the latest group
    :func:`new_group` made that this rank is outside of (``KeyError`` when none)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        if _state.non_member_ranks is None:
            raise KeyError(f"{group!r}: this rank is outside of no group made by new_group")
        return list(_state.non_member_ranks)
    return list(resolve_group(group).ranks)


def _ranks_of(group: Any) -> list[int]:
    """:func:`get_process_group_ranks`, with PyTorch's ``ValueError`` for a group that has
    no ranks recorded (``get_global_rank``/``get_group_rank`` of ``NON_GROUP_MEMBER``)."""
    try:
        return get_process_group_ranks(group)
    except KeyError:
        raise ValueError(
            f"Group {group!r} is not registered, please create group with torch.distributed.new_group API"
        ) from None


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of ``group_rank`` in ``group``."""
    ranks = _ranks_of(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"group rank {group_rank} is not part of a group of {len(ranks)}")
    return ranks[group_rank]


def peer_global_rank(pg: ProcessGroup, global_rank: int | None, group_rank: int | None) -> int | None:
    """The global rank of a collective's root or a message's peer, given as a global rank
    (``src``/``dst``) or as a rank in ``pg`` (``group_src``/``group_dst``), never both;
    None when neither is given."""
    if group_rank is None:
        return global_rank
    if global_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    return get_global_rank(pg, group_rank)


def root_global_rank(pg: ProcessGroup, global_rank: int | None, group_rank: int | None) -> int:
    """:func:`peer_global_rank` for a rank that must be given (a collective's root, a send's
    destination)."""
    rank = peer_global_rank(pg, global_rank, group_rank)
    if rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    return rank


def collective_root(pg: ProcessGroup, global_rank: int | None, group_rank: int | None, op: str) -> int:
    """The rank in ``pg`` of a collective's root, given as a global rank (``src``/``dst``) or
    as a rank of ``pg`` (``group_src``/``group_dst``), never both, refused as PyTorch refuses
    it: a global rank outside a subgroup is a ``ValueError``; a root outside the group's
    ranks (the default group's ranks are the global ones) is gloo's ``RuntimeError``, as in
    ``ProcessGroupGloo::broadcast: invalid root rank: 3`` (``op``: gloo's name of the
    collective)."""
    if group_rank is None:
        if global_rank is None:
            raise ValueError("Must specify global_rank or group_rank")
        group_rank = int(global_rank)
        if pg is not _default():
            if group_rank not in pg.ranks:
                raise ValueError(f"Global rank {global_rank} is not part of group {pg!r}")
            group_rank = pg.ranks.index(group_rank)
    elif global_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if not 0 <= group_rank < pg.size():
        raise RuntimeError(f"ProcessGroupGloo::{op}: invalid root rank: {group_rank}")
    return int(group_rank)


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in ``group`` of global rank ``global_rank``."""
    if group is GroupMember.NON_GROUP_MEMBER:
        ranks = _ranks_of(group)
        if global_rank not in ranks:
            raise ValueError(f"Global rank {global_rank} is not part of group {group!r}")
        return ranks.index(global_rank)
    return group_rank_of(resolve_group(group), global_rank)


def group_rank_of(pg: ProcessGroup, global_rank: int, what: str = "rank") -> int:
    """Translate a global rank into ``pg``'s rank numbering.

    Raises:
        ValueError: ``global_rank`` is not a member of ``pg``.
    """
    try:
        return pg.ranks.index(int(global_rank))
    except ValueError:
        raise ValueError(
            f"{what} {global_rank} is not part of group {pg.group_id} (its global ranks are {pg.ranks})"
        ) from None
