"""Rendezvous: turn an ``init_method`` into a store, this process's rank, and the world size.

``init_method`` forms (as torch.distributed's):

``env://`` (the default)
    Rank and world size from the environment, from the first of these launchers
    whose rank variable is set (rank, world size, local rank):

    * torchrun / disttorch-launch: ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``
    * SLURM ``srun``: ``SLURM_PROCID``, ``SLURM_NTASKS``, ``SLURM_LOCALID``
    * Open MPI ``mpirun``: ``OMPI_COMM_WORLD_RANK``, ``OMPI_COMM_WORLD_SIZE``,
      ``OMPI_COMM_WORLD_LOCAL_RANK``

    The store lives at ``MASTER_ADDR:MASTER_PORT``. Under SLURM without
    ``MASTER_ADDR``, it is the first host of ``SLURM_STEP_NODELIST`` /
    ``SLURM_JOB_NODELIST`` / ``SLURM_NODELIST`` (``127.0.0.1`` for a one-node job);
    under Open MPI with every rank on one host, ``127.0.0.1``. Without
    ``MASTER_PORT``, SLURM and Open MPI jobs derive a port in 20000-29999 from
    their job id, so every rank computes the same one. Multi-node jobs also
    need the same ``DISTTORCH_JOB_SECRET`` on every rank (``srun`` and
    ``mpirun -x`` pass it on); see :mod:`.auth`.
``tcp://host:port``
    The store at ``host:port``; rank and world size from the arguments (or a
    ``?rank=..&world_size=..`` query).
``file:///path``
    A :class:`FileStore` on a file every process can reach.

The rank-0 process hosts the :class:`TCPStore` (it listens on loopback when
the address is a loopback one; see :mod:`.base.addresses`). When
``DISTTORCH_USE_AGENT_STORE=1``, the launcher's agent hosts it instead and
every rank is a client.

Under ``torchrun`` (``TORCHELASTIC_RUN_ID`` set, and not by ``disttorch-launch``),
``torchrun``'s agent already hosts PyTorch's c10d TCPStore on ``MASTER_PORT``. Rank 0 then
hosts disttorch's store on a free port of its host and announces ``host:port`` in the
agent's store (key ``disttorch/store/<run id>/<restart count>``, through
:class:`~.store.c10d_client.C10dStoreClient`); the other ranks read it there and connect.

Check-in (:func:`check_in`, run by ``init_process_group`` once the store is reached)
    Every rank writes what it believes about the job (world size, how it secures its peer
    connections); rank 0 waits for every rank, compares, and posts a verdict that every
    rank reads. Settings that differ (``WORLD_SIZE``, ``DISTTORCH_ENCRYPT``, a job secret on
    some ranks only) fail every rank at once, naming the setting and the ranks. A rank that
    never calls ``init_process_group`` is named by rank 0 after :data:`JOIN_NOTICE_S`
    seconds (and every :data:`JOIN_NOTICE_S` after), and when the timeout ends every rank
    raises naming it, instead of a silent wait.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import socket
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

from .._process_state import start_time
from .._public_name import package_name
from .base import auth
from .base.addresses import address_towards, check_resolves
from .base.errors import DistStoreError
from .store import FileStore, Store, TCPStore
from .store.c10d_client import C10dStoreClient
from .wire.transport import _host_key, _pid_namespace, host_address

__all__ = [
    "DEFAULT_TIMEOUT",
    "JOIN_NOTICE_S",
    "check_in",
    "claim_rank",
    "release_rank",
    "RendezvousConfig",
    "expand_hostlist",
    "local_rank",
    "parse_init_method",
    "rendezvous",
]

#: torch.distributed's default process-group timeout.
DEFAULT_TIMEOUT = timedelta(minutes=30)
#: Seconds rank 0 waits for every rank to check in before it names the missing ones (and
#: again every as many seconds, until the timeout).
JOIN_NOTICE_S = 10.0

logger = logging.getLogger("disttorch.distributed.rendezvous")


def _env_error() -> str:
    """PyTorch's prefix of an env:// error, under the name the program imported (``torch``)."""
    return f"Error initializing {package_name()}.distributed using env:// rendezvous: "


_HOW_TO = (
    "Run with disttorch-launch (it sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT), "
    "or set them yourself (e.g. RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500), "
    "or pass rank= and world_size= to init_process_group()"
)


@dataclass(frozen=True)
class _Launcher:
    """The environment variables one kind of launcher sets."""

    name: str
    rank: str
    world_size: str
    local_rank: str


_LAUNCHERS = (
    _Launcher("torchrun/disttorch-launch", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
    _Launcher("SLURM", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
    _Launcher("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
)


def _int_var(env: Mapping[str, str], name: str, least: int | None = None) -> int:
    text = env[name]
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {text!r}") from None
    if least is not None and value < least:
        raise ValueError(f"environment variable {name} must be an integer >= {least}, got {value}")
    return value


def local_rank(env: Mapping[str, str] | None = None) -> int:
    """Return this process's rank on its node: ``LOCAL_RANK``, else ``SLURM_LOCALID``, else
    ``OMPI_COMM_WORLD_LOCAL_RANK``; 0 when none is set (a single process started by hand).

    Args:
        env: the environment to read (``os.environ`` by default).
    """
    env = os.environ if env is None else env
    for launcher in _LAUNCHERS:
        if launcher.local_rank in env:
            return _int_var(env, launcher.local_rank)
    return 0


def expand_hostlist(hostlist: str) -> list[str]:
    """Expand a SLURM host list such as ``"node[01-03,07],gpu7"`` into host names.

    Ranges keep the zero padding of their start (``node[08-10]`` gives ``node08, node09,
    node10``); several bracket groups in one name expand to every combination.

    Raises:
        ValueError: if the brackets are unbalanced or a range is malformed.
    """
    hosts: list[str] = []
    for item in _split_top_level(hostlist):
        pieces = re.split(r"(\[[^\[\]]*\])", item)
        choices: list[list[str]] = []
        for piece in pieces:
            if piece.startswith("["):
                choices.append(_expand_ranges(piece[1:-1], hostlist))
            elif "[" in piece or "]" in piece:
                raise ValueError(f"unbalanced brackets in host list {hostlist!r}")
            else:
                choices.append([piece])
        hosts.extend("".join(combination) for combination in itertools.product(*choices))
    return hosts


def _split_top_level(hostlist: str) -> list[str]:
    items, depth, start = [], 0, 0
    for index, char in enumerate(hostlist):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth not in (0, 1):
            raise ValueError(f"unbalanced brackets in host list {hostlist!r}")
        if char == "," and depth == 0:
            items.append(hostlist[start:index])
            start = index + 1
    if depth != 0:
        raise ValueError(f"unbalanced brackets in host list {hostlist!r}")
    items.append(hostlist[start:])
    return [item.strip() for item in items if item.strip()]


def _expand_ranges(ranges: str, hostlist: str) -> list[str]:
    names = []
    for part in ranges.split(","):
        match = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", part)
        if match is None:
            raise ValueError(f"malformed range {part!r} in host list {hostlist!r}; expected e.g. 01-04 or 7")
        first, last = match.group(1), match.group(2) or match.group(1)
        if int(last) < int(first):
            raise ValueError(f"range {part!r} in host list {hostlist!r} runs backwards")
        names.extend(str(n).zfill(len(first)) for n in range(int(first), int(last) + 1))
    return names


def _env_rank_and_size(
    env: Mapping[str, str], rank: int, world_size: int
) -> tuple[int, int, _Launcher | None]:
    launcher = next((lch for lch in _LAUNCHERS if lch.rank in env), None)
    if launcher is not None:
        if rank < 0:
            rank = _int_var(env, launcher.rank, least=0)
        if world_size < 0:
            if launcher.world_size not in env:
                raise ValueError(
                    _env_error() + "environment variable "
                    f"{launcher.world_size} expected (as {launcher.rank} is set by {launcher.name}), but not set. "
                    + _HOW_TO
                )
            world_size = _int_var(env, launcher.world_size, least=1)
    for value, name in ((rank, "RANK"), (world_size, "WORLD_SIZE")):
        if value < 0:
            raise ValueError(_env_error() + f"environment variable {name} expected, but not set. " + _HOW_TO)
    return rank, world_size, launcher


def _master_addr(env: Mapping[str, str], launcher: _Launcher | None) -> str:
    if env.get("MASTER_ADDR"):
        return env["MASTER_ADDR"]
    if launcher is not None and launcher.name == "SLURM":
        if env.get("SLURM_JOB_NUM_NODES", env.get("SLURM_NNODES")) == "1":
            return "127.0.0.1"
        for name in ("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"):
            if env.get(name):
                return expand_hostlist(env[name])[0]
    if launcher is not None and launcher.name == "Open MPI":
        if env.get("OMPI_COMM_WORLD_LOCAL_SIZE") == env.get("OMPI_COMM_WORLD_SIZE"):
            return "127.0.0.1"
        raise ValueError(
            _env_error() + "environment variable MASTER_ADDR "
            "expected for a multi-node Open MPI job, but not set. Export it to every rank, e.g. "
            "mpirun -x MASTER_ADDR=<host of rank 0> -x MASTER_PORT=29500 ..."
        )
    raise ValueError(_env_error() + "environment variable MASTER_ADDR expected, but not set. " + _HOW_TO)


def _master_port(env: Mapping[str, str], launcher: _Launcher | None) -> int:
    if env.get("MASTER_PORT"):
        port = _int_var(env, "MASTER_PORT")
        if not 1 <= port <= 65535:
            raise ValueError(f"environment variable MASTER_PORT must be a port number 1..65535, got {port}")
        return port
    job_vars = {"SLURM": ("SLURM_JOB_ID",), "Open MPI": ("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid")}
    for name in job_vars.get(launcher.name if launcher else "", ()):
        if env.get(name):
            return 20000 + zlib.crc32(env[name].encode()) % 10000
    raise ValueError(_env_error() + "environment variable MASTER_PORT expected, but not set. " + _HOW_TO)


def _check_rank(rank: int, world_size: int) -> None:
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, world_size - 1] = [0, {world_size - 1}], got rank {rank}")


def _query_int(query: dict[str, list[str]], name: str, default: int) -> int:
    if name not in query:
        return default
    try:
        return int(query[name][-1])
    except ValueError:
        raise ValueError(
            f"init_method query parameter {name} must be an integer, got {query[name][-1]!r}"
        ) from None


@dataclass(frozen=True)
class RendezvousConfig:
    """Where the store is and who this process is, as read from an ``init_method`` and the environment.

    ``kind`` is ``"tcp"`` (``host``/``port`` set; ``env://`` resolves to this too)
    or ``"file"`` (``path`` set). ``is_master`` says whether this process hosts the TCP store.
    """

    kind: str
    rank: int
    world_size: int
    host: str = ""
    port: int = 0
    path: str = ""
    is_master: bool = False


def parse_init_method(
    init_method: str | None = None, rank: int = -1, world_size: int = -1, env: Mapping[str, str] | None = None
) -> RendezvousConfig:
    """Read ``init_method`` (and, for ``env://``, the environment) without connecting to anything.

    Arguments as for :func:`rendezvous`. Raises ``ValueError`` naming what is missing and how to set it.
    """
    env = os.environ if env is None else env
    url = urlparse(init_method or "env://")
    query = parse_qs(url.query)
    rank = _query_int(query, "rank", rank)
    world_size = _query_int(query, "world_size", world_size)
    agent_hosts_store = env.get("DISTTORCH_USE_AGENT_STORE", "").lower() in ("1", "true", "yes")
    if url.scheme == "env":
        rank, world_size, launcher = _env_rank_and_size(env, rank, world_size)
        _check_rank(rank, world_size)
        host, port = _master_addr(env, launcher), _master_port(env, launcher)
        return RendezvousConfig(
            "tcp", rank, world_size, host, port, is_master=rank == 0 and not agent_hosts_store
        )
    if url.scheme not in ("tcp", "file"):
        raise ValueError(
            f"unsupported init_method {init_method!r}: expected env://, tcp://host:port or file:///path"
        )
    if rank < 0 or world_size < 0:
        raise ValueError(
            f"{url.scheme}:// init_method needs rank and world_size: pass rank= and world_size= to "
            f"init_process_group() or add ?rank=..&world_size=.. to the URL (got rank={rank}, "
            f"world_size={world_size})"
        )
    _check_rank(rank, world_size)
    if url.scheme == "file":
        path = url.netloc + url.path
        if not path:
            raise ValueError(
                f"file:// init_method needs a path, e.g. file:///tmp/job-store, got {init_method!r}"
            )
        return RendezvousConfig("file", rank, world_size, path=path)
    try:
        port = url.port
    except ValueError:
        port = None
    if not url.hostname or not port:
        raise ValueError(
            f"tcp:// init_method needs a host and a port, e.g. tcp://10.0.0.1:29500, got {init_method!r}"
        )
    return RendezvousConfig(
        "tcp", rank, world_size, url.hostname, port, is_master=rank == 0 and not agent_hosts_store
    )


def under_torchrun(env: Mapping[str, str]) -> bool:
    """Whether this process was started by PyTorch's ``torchrun`` (not ``disttorch-launch``,
    which sets the same ``TORCHELASTIC_*`` variables plus its own ``DISTTORCH_RUN_ID``)."""
    return "TORCHELASTIC_RUN_ID" in env and "DISTTORCH_RUN_ID" not in env


def _store_beside_torchrun(config: RendezvousConfig, timeout: timedelta, env: Mapping[str, str]) -> Store:
    """Rank 0 hosts disttorch's store on a free port and announces it in torchrun's store."""
    seconds = timeout.total_seconds()
    key = f"disttorch/store/{env['TORCHELASTIC_RUN_ID']}/{env.get('TORCHELASTIC_RESTART_COUNT', '0')}"
    agent = C10dStoreClient(config.host, config.port, seconds)
    try:
        if config.rank == 0:
            host = address_towards(config.host)
            store = TCPStore(
                host, 0, config.world_size, is_master=True, timeout=timeout, wait_for_workers=False
            )
            agent.set(key, f"{host}:{store.port}".encode())
            return store
        host, _, port = agent.get(key).decode().rpartition(":")
    finally:
        agent.close()
    return TCPStore(host, int(port), config.world_size, timeout=timeout)


def rendezvous(
    init_method: str | None = None,
    rank: int = -1,
    world_size: int = -1,
    timeout: timedelta = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> tuple[Store, int, int]:
    """Connect to the job's store as described by ``init_method``; return ``(store, rank, world_size)``.

    Args:
        init_method: ``"env://"`` (also when ``None``), ``"tcp://host:port"`` or ``"file:///path"``.
        rank: this process's rank, or -1 to take it from the environment / URL query.
        world_size: the number of processes, or -1 to take it from the environment / URL query.
        timeout: how long to wait for the store and for every rank to connect.
        env: the environment to read (``os.environ`` by default).

    Raises:
        ValueError: naming the missing or malformed setting and how to provide it.
        DistNetworkError, AuthenticationError, DistStoreError: if the store cannot be reached or joined.
    """
    env = os.environ if env is None else env
    config = parse_init_method(init_method, rank, world_size, env)
    if config.kind == "tcp":
        check_resolves(
            config.host, "MASTER_ADDR" if (init_method or "env://").startswith("env") else "the host"
        )
    store: Store
    if config.kind == "file":
        store = FileStore(config.path, config.world_size, timeout=timeout)
    elif under_torchrun(env) and (init_method or "env://").startswith("env://"):
        store = _store_beside_torchrun(config, timeout, env)
    else:
        # The master waits for the workers in init_process_group, which can name a rank that fails to join.
        store = TCPStore(
            config.host,
            config.port,
            config.world_size,
            is_master=config.is_master,
            timeout=timeout,
            wait_for_workers=False,
        )
    return store, config.rank, config.world_size


def _peer_security() -> str:
    """How this process secures its peer connections: ``CURVE``, ``PLAIN`` or ``none``
    (no job secret), decided as the transport decides it."""
    if auth.resolve_secret() is None:
        return "none"
    return "CURVE" if auth.encrypt_connections_at(host_address()) else "PLAIN"


def _describe_security(mechanism: str) -> str:
    return {
        "CURVE": "encrypts its peer connections (CURVE)",
        "PLAIN": "does not encrypt its peer connections (PLAIN)",
        "none": f"has no {auth.ENV_SECRET}",
    }.get(mechanism, mechanism)


def _disagreement(rank: int, theirs: dict, mine: dict) -> str | None:
    """What rank ``rank``'s check-in says differently from rank 0's, or None."""
    if theirs.get("world_size") != mine["world_size"]:
        return (
            f"WORLD_SIZE differs between ranks: rank 0 has {mine['world_size']}, rank {rank} "
            f"has {theirs.get('world_size')}; give every rank the same WORLD_SIZE"
        )
    if theirs.get("security") != mine["security"]:
        return (
            f"the ranks' security settings differ: rank 0 {_describe_security(mine['security'])}, "
            f"rank {rank} {_describe_security(theirs.get('security', '?'))}; set the same "
            f"{auth.ENV_ENCRYPT} and {auth.ENV_SECRET} on every rank"
        )
    return None


def check_in(store: Store, rank: int, world_size: int, timeout: float, generation: int) -> None:
    """Announce this rank in ``store`` and agree with rank 0 that every rank joined the same job.

    Every rank writes its world size and peer security; rank 0 waits (up to ``timeout``
    seconds) for ranks ``0 .. world_size - 1``, logs which are missing every
    :data:`JOIN_NOTICE_S` seconds, compares what they wrote with its own, and posts the
    verdict every rank reads.

    Raises:
        ValueError: a setting differs between ranks (naming it and the ranks).
        DistStoreError: a rank never checked in within ``timeout`` (naming it).
    """
    prefix = f"disttorch/{generation}/checkin/"
    mine = {"world_size": world_size, "security": _peer_security(), "host": socket.gethostname()}
    store.set(f"{prefix}{rank}", json.dumps(mine))
    if rank == 0:
        verdict = _gather_check_ins(store, prefix, mine, timeout)
        store.set(f"{prefix}verdict", json.dumps(verdict))
        if verdict["error"]:  # the store lives in this process: keep it until they have read it
            _await_readers(store, f"{prefix}read", world_size - 1)
    else:
        key = f"{prefix}verdict"
        store.wait([key], timedelta(seconds=timeout + 2 * JOIN_NOTICE_S))
        verdict = json.loads(store.get(key))
        if verdict["error"]:
            store.add(f"{prefix}read", 1)
        elif verdict["world_size"] != world_size:
            verdict = {
                "kind": "ValueError",
                "error": f"WORLD_SIZE differs between ranks: rank 0 has {verdict['world_size']}, "
                f"rank {rank} has {world_size}; give every rank the same WORLD_SIZE",
            }
    if verdict["error"]:
        raise (ValueError if verdict["kind"] == "ValueError" else DistStoreError)(verdict["error"])


#: Longest time rank 0 keeps the store open for the other ranks to read a failed verdict.
_VERDICT_GRACE_S = 5.0


def _await_readers(store: Store, counter: str, readers: int) -> None:
    """Wait until ``readers`` ranks counted themselves in ``counter`` (a rank that checks in
    after the verdict reads it too), for at most :data:`_VERDICT_GRACE_S`."""
    deadline = time.monotonic() + _VERDICT_GRACE_S
    while store.add(counter, 0) < readers and time.monotonic() < deadline:
        time.sleep(0.02)


def _started_size_hint(world_size: int) -> str:
    """Why ranks may never come: a ``world_size`` other than the ``WORLD_SIZE`` started."""
    started = os.environ.get("WORLD_SIZE", "")
    if not started.isdigit() or int(started) == world_size:
        return ""
    return (
        f"; init_process_group was given world_size={world_size}, but WORLD_SIZE={started} ranks "
        "were started: leave world_size out, or pass int(os.environ['WORLD_SIZE'])"
    )


def _gather_check_ins(store: Store, prefix: str, mine: dict, timeout: float) -> dict:
    """Rank 0's side of :func:`check_in`: the verdict (``error`` empty when all is well)."""
    world_size = mine["world_size"]
    seen = {0: mine}
    # The master of a TCPStore first waits for the processes to connect, which also makes a
    # handshake refused before now (a rank with another secret) fail this wait fast.
    connected = not (isinstance(store, TCPStore) and store._server is not None)
    started, hint = time.monotonic(), _started_size_hint(world_size)
    deadline, notice = started + timeout, started + JOIN_NOTICE_S
    while True:
        for r in range(world_size):
            if r not in seen and store.check([f"{prefix}{r}"]):
                seen[r] = json.loads(store.get(f"{prefix}{r}"))
                problem = _disagreement(r, seen[r], mine)
                if problem:
                    return _verdict(world_size, "ValueError", problem)
        missing = [r for r in range(world_size) if r not in seen]
        if not missing:
            return _verdict(world_size, "", "")
        now = time.monotonic()
        names = ", ".join(f"rank {r}" for r in missing)
        if now >= deadline:
            return _verdict(
                world_size,
                "DistStoreError",
                f"{names} never called init_process_group: rank 0 waited {timeout:g} s for "
                f"them ({len(seen)} of {world_size} ranks checked in). Are they started, with "
                f"the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE?{hint}",
            )
        if now >= notice:
            logger.warning(
                "rank 0 has waited %.0f s for %s to call init_process_group (%d of %d checked in%s)",
                now - started,
                names,
                len(seen),
                world_size,
                hint,
            )
            notice += JOIN_NOTICE_S
        if not connected:  # waits longer than the store's grace after a refused handshake
            until = max(0.0, min(notice, deadline) - now)
            connected = store.workers_joined(world_size, timedelta(seconds=until))
            continue
        pause = timedelta(seconds=min(1.0, deadline - now))
        try:
            store.wait([f"{prefix}{r}" for r in missing], pause)
        except DistStoreError:
            pass  # not all of them yet: read who did check in, then wait again


def _holder_key(rank: int) -> str:
    return f"disttorch/holder/{rank}"


def claim_rank(store: Store, rank: int) -> None:
    """Record this process as ``rank``'s in ``store``, refusing when another live process of
    this host holds it: a process started by a rank (``torch.multiprocessing.spawn``, a
    ``multiprocessing`` pool, ``os.fork``) inherits ``RANK``, ``WORLD_SIZE`` and
    ``MASTER_PORT`` and would join the running job as that rank, waiting out the timeout.

    Raises:
        RuntimeError: ``rank`` is held by another process of this host that is still running.
    """
    me = {
        "host": _host_key(),
        "pidns": _pid_namespace(),
        "pid": os.getpid(),
        "started": start_time(os.getpid()),
        "client": (store.client_id() or b"").hex(),  # for LeftRanks: how the store knows us
    }
    key, mine = _holder_key(rank), json.dumps(me).encode()
    seen = b""  # (an absent key): each holder replaced atomically, so two claims at once see each other
    while (now := _as_bytes(store.compare_set(key, seen, mine))) != mine:
        holder = json.loads(now)
        if (
            holder.get("pid") != me["pid"]
            and (holder.get("host"), holder.get("pidns")) == (me["host"], me["pidns"])
            and me["started"] is not None
            and holder.get("started") == start_time(holder.get("pid", -1))
        ):
            raise RuntimeError(
                f"init_process_group: rank {rank} of this job is already taken by process "
                f"{holder['pid']} of this host, which is still in the job: this process was "
                "started by a rank (torch.multiprocessing.spawn, a multiprocessing pool, "
                "os.fork), whose RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT it inherited, or "
                "belongs to another job on the same MASTER_PORT. Give it a job of its own "
                "(init_method=, rank=, world_size=, a free port)"
            )
        seen = now  # a holder that has ended (or this process, again): replace it


#: Seconds a rank's connection to the store stays down before the ranks waiting for it take it
#: to have left the job (ended, killed, or its host cut off): longer than a link's blip.
LEFT_AFTER_S = 5.0


class LeftRanks:
    """Which ranks have left the job: the store's server saw the connection of the process
    holding a rank (:func:`claim_rank`) drop, :data:`LEFT_AFTER_S` ago or more, and not come
    back. A rank that ended before it published its address is then named within seconds,
    where only the timeout would end the wait (its launcher alone, if any, knows more).
    Stores without connections (file, hash) never tell."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._clients: dict[int, bytes] = {}  # rank -> its holder's store client

    def left_for(self, rank: int) -> float | None:
        """Seconds since ``rank``'s holder left the store (``None``: it has not, or none can tell)."""
        client = self._client(rank)
        if client is None:
            return None
        seconds = self._store.gone_for([client])[0]
        return seconds if seconds is not None and seconds >= LEFT_AFTER_S else None

    def _client(self, rank: int) -> bytes | None:
        if rank not in self._clients:
            key = _holder_key(rank)
            if not self._store.check([key]):
                return None
            client = json.loads(self._store.get(key)).get("client")
            if not client:
                return None
            self._clients[rank] = bytes.fromhex(client)
        return self._clients[rank]


def _as_bytes(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def release_rank(store: Store, rank: int) -> None:
    """Forget this process as ``rank``'s holder (best effort: the store may be gone)."""
    try:
        store.delete_key(_holder_key(rank))
    except Exception:  # noqa: BLE001 - rank 0's store may have closed already
        pass


def _verdict(world_size: int, kind: str, error: str) -> dict:
    return {"world_size": world_size, "kind": kind, "error": error}
