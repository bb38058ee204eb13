"""How the node agents of a job agree on the world, and tell each other when it fails.

A single-node job needs no meeting: :class:`LocalRendezvous` only picks a free port for
the workers' ``MASTER_PORT`` each attempt. A multi-node job meets at a
``disttorch.distributed.store.TCPStore`` hosted by node 0's agent at
``--master-addr:--master-port`` (imported only then, so single-node start-up stays
stdlib-only). Keys, for attempt ``a``::

    run_id, nnodes            set by node 0 (run_id: random or --rdzv-id); others check nnodes
    node/<k>                  counter: more than one agent claiming node rank k is an error
    aborted                   a note from an agent that gave up (interrupted) while others wait
    attempt<a>/nproc/<k>      node k's local world size; global ranks follow node order
    attempt<a>/worker_port    node 0 picks a free port: the workers' MASTER_PORT
    attempt<a>/failed         counter: > 0 once any node's workers failed (every agent polls it)
    attempt<a>/beat/<k>       counter node k's agent counts up each second while its workers run
    attempt<a>/report/<k>     node k's rank exits after its group stopped (JSON)
    attempt<a>/finished       counter of nodes whose group has stopped
    left                      counter of agents done with the store (node 0 closes it last)
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
import time
from datetime import timedelta
from typing import Callable, Dict, List, Optional, Tuple, Union

from .cli import LaunchConfig
from .failure import RankExit
from .worker_env import WorldInfo

REPORT_GRACE = 2.0  # seconds, beyond --stop-grace, to wait for other nodes' reports once a failure is known
#: An agent waiting for other nodes says which, after this many seconds and every as many after.
WAIT_NOTICE_S = 10.0
#: Seconds between two beats of a node's agent (and its looks at the other nodes' beats).
NODE_BEAT_S = 1.0


class RendezvousError(RuntimeError):
    """The nodes could not meet: the store is unreachable, a node never came, or one gave up."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the kernel picks it), on ``host``'s interface."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, 0))
        except OSError:  # a name or address not on this machine: any interface
            sock.bind(("", 0))
        return sock.getsockname()[1]


class LocalRendezvous:
    """The single-node case: this node is the world."""

    def __init__(self, config: LaunchConfig) -> None:
        self.config = config
        self.run_id = config.run_id or secrets.token_hex(4)

    def next_round(self, attempt: int) -> WorldInfo:
        """The world for ``attempt``: ranks 0..nproc-1, a fresh free port unless one was given."""
        addr = self.config.master_addr or "127.0.0.1"
        port = self.config.master_port or free_port(addr)
        return WorldInfo(
            world_size=self.config.nproc,
            rank_offset=0,
            nnodes=1,
            node_rank=0,
            master_addr=addr,
            master_port=port,
            run_id=self.run_id,
            restart_count=attempt,
        )

    def remote_failure(self, attempt: int) -> bool:
        return False

    def silent_nodes(self, attempt: int) -> List[int]:
        return []

    def abort(self, note: str) -> None:
        pass

    def announce_failure(self, attempt: int) -> None:
        pass

    def gather(
        self, attempt: int, exits: List[RankExit], note: Optional[str]
    ) -> Tuple[List[RankExit], List[str]]:
        """All ranks' exits and notes (here: this node's own)."""
        return exits, [note] if note else []

    def close(self) -> None:
        pass


def _other_ranks(nnodes: int) -> str:
    """The node ranks other than 0: ``"1"``, ``"1..3"``."""
    return "1" if nnodes == 2 else f"1..{nnodes - 1}"


class _SayHandler(logging.Handler):
    """Shows the store client's warnings (still trying to reach node 0) as launcher lines."""

    def __init__(self, say: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.say = say

    def emit(self, record: logging.LogRecord) -> None:
        self.say(record.getMessage())


class StoreRendezvous:
    """The multi-node case: agents meet at node 0's TCPStore (see the module docstring for keys)."""

    def __init__(self, config: LaunchConfig, say: Callable[[str], None]) -> None:
        try:  # only multi-node jobs pay for these imports
            from disttorch.distributed.base.addresses import is_this_machine
            from disttorch.distributed.store import TCPStore
        except Exception as exc:  # noqa: BLE001 - a broken install must be reported, not crash the agent
            raise RendezvousError(
                f"multi-node jobs need disttorch.distributed.store, which failed to import: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        self.config = config
        self._say = say
        store_log = logging.getLogger("disttorch.distributed.store")
        if not any(isinstance(h, _SayHandler) for h in store_log.handlers):
            store_log.addHandler(_SayHandler(say))
            store_log.propagate = False
        is_master = config.node_rank == 0
        where = f"{config.master_addr}:{config.master_port}"
        say(
            f"node {config.node_rank} of {config.nnodes}: "
            + (
                f"hosting the agents' store at {where}"
                if is_master
                else f"joining the agents' store at {where}"
            )
        )
        if is_master and not is_this_machine(config.master_addr):
            say(
                f"--master-addr {config.master_addr} is not this machine, yet this node is node 0, "
                "which hosts the store (--node-rank defaults to 0): if this is another node, start "
                f"it with its own --node-rank ({_other_ranks(config.nnodes)}; disttorch-launch numbers "
                "nodes by --node-rank, not by torchrun's c10d rendezvous)"
            )
        try:
            self.store = TCPStore(
                config.master_addr,
                config.master_port,
                world_size=config.nnodes,
                is_master=is_master,
                timeout=timedelta(seconds=config.join_timeout),
                wait_for_workers=False,
                secret=config.job_secret,
            )
            if is_master:
                self.store.set("run_id", config.run_id or secrets.token_hex(4))
                self.store.set("nnodes", str(config.nnodes))
            self.run_id = self.store.get("run_id").decode()
            nnodes = int(self.store.get("nnodes"))
            claims = self.store.add(f"node/{config.node_rank}", 1)
        except Exception as exc:  # noqa: BLE001 - any store error means the nodes cannot meet
            raise RendezvousError(
                f"node {config.node_rank} could not "
                f"{'host' if is_master else 'reach'} the agents' store at {where}: {exc}"
            ) from None
        problem = None
        if nnodes != config.nnodes:
            problem = (
                f"node 0 was started with --nnodes {nnodes}, node {config.node_rank} with --nnodes "
                f"{config.nnodes}; give every node the same"
            )
        elif claims > 1:
            problem = (
                f"two agents joined as --node-rank {config.node_rank}; "
                f"give each node its own rank 0..{config.nnodes - 1}"
            )
        if problem is not None:
            # the agents still waiting to meet stop too, with the same message; the nodes of a
            # job that met already go on (and meet again at a restart) without this one
            if not self.store.check([f"attempt0/nproc/{k}" for k in range(nnodes)]):
                self.abort(problem)
            self.store.close()  # not counted among the agents that joined and leave
            raise RendezvousError(problem)
        self.store.add("joined", 1)
        self._next_beat = 0.0  # when this agent beats next (see silent_nodes)
        self._beats: Dict[Tuple[int, int], Tuple[int, float]] = {}  # (attempt, node) -> count, when it moved

    def next_round(self, attempt: int) -> WorldInfo:
        """Publish this node's nproc, wait for every node's, and derive this node's ranks. A
        store out of reach (the link to node 0 cut) is tried again until ``--join-timeout``."""
        deadline, said = time.monotonic() + self.config.join_timeout, False
        while True:
            try:
                return self._meet(attempt)
            except RendezvousError:
                raise
            except Exception as exc:  # noqa: BLE001 - the store went away or failed: the nodes cannot meet
                where = f"the agents' store at {self.config.master_addr}:{self.config.master_port}"
                if time.monotonic() >= deadline:
                    raise RendezvousError(
                        f"lost {where} while meeting for attempt {attempt}: {exc}"
                    ) from None
                if not said:
                    self._say(
                        f"cannot reach {where} to meet for attempt {attempt} ({exc}); trying again "
                        f"until --join-timeout {self.config.join_timeout:g} s"
                    )
                    said = True
                time.sleep(max(self.config.monitor_interval, 0.5))

    def _meet(self, attempt: int) -> WorldInfo:
        c, key = self.config, f"attempt{attempt}/"
        self.store.set(f"{key}nproc/{c.node_rank}", str(c.nproc))
        if c.node_rank == 0:
            self.store.set(f"{key}worker_port", str(free_port(c.master_addr)))
        self._wait_for_nodes([f"{key}nproc/{k}" for k in range(c.nnodes)] + [f"{key}worker_port"])
        counts = [int(self.store.get(f"{key}nproc/{k}")) for k in range(c.nnodes)]
        return WorldInfo(
            world_size=sum(counts),
            rank_offset=sum(counts[: c.node_rank]),
            nnodes=c.nnodes,
            node_rank=c.node_rank,
            master_addr=c.master_addr,
            master_port=int(self.store.get(f"{key}worker_port")),
            run_id=self.run_id,
            restart_count=attempt,
        )

    def _wait_for_nodes(self, keys: List[str]) -> None:
        """Poll until every key exists; give up on ``aborted`` or after ``--join-timeout``,
        saying every :data:`WAIT_NOTICE_S` seconds which nodes are awaited."""
        started = time.monotonic()
        deadline, notice = started + self.config.join_timeout, started + WAIT_NOTICE_S
        advice = (
            "is disttorch-launch running there with the same --nnodes, --master-addr, "
            "--master-port and job secret, and its own --node-rank (without one it is node 0 "
            "too, hosting a store of its own)?"
        )
        while not self.store.check(keys):
            if self.store.check(["aborted"]):
                raise RendezvousError(self.store.get("aborted").decode())
            now = time.monotonic()
            missing = [k.rsplit("/", 1)[-1] for k in keys if "nproc/" in k and not self.store.check([k])]
            nodes = f"node(s) {', '.join(missing) or '0'}"
            if now > deadline:
                problem = (
                    f"{nodes} did not join within --join-timeout {self.config.join_timeout:g} s: {advice}"
                )
                self.abort(problem)  # the agents that did join stop now too, with the same message
                raise RendezvousError(problem)
            if now >= notice:
                self._say(
                    f"waiting for {nodes} to join ({now - started:.0f} s of --join-timeout "
                    f"{self.config.join_timeout:g} s): {advice}"
                )
                notice += WAIT_NOTICE_S
            time.sleep(self.config.monitor_interval)

    def abort(self, note: str) -> None:
        """Tell agents still waiting to meet that this one gave up (``note`` says why)."""
        self.store.compare_set("aborted", "", note)

    def remote_failure(self, attempt: int) -> bool:
        """Has any node announced a failure in ``attempt``? (One store round trip.)"""
        return self.store.add(f"attempt{attempt}/failed", 0) > 0

    def silent_nodes(self, attempt: int) -> List[int]:
        """Count this node's beat up (at most every :data:`NODE_BEAT_S` seconds) and return the
        other nodes whose beat has stood still for ``--node-timeout`` seconds of this agent's
        clock (a node's clock never counts: hosts' clocks differ). A node that never beat
        counts from this agent's first look; one that reported its exits (its workers ended,
        it waits in :meth:`gather`) is not silent."""
        c, now = self.config, time.monotonic()
        if not c.node_timeout or now < self._next_beat:
            return []
        self._next_beat = now + NODE_BEAT_S
        key = f"attempt{attempt}/beat/"
        self.store.add(f"{key}{c.node_rank}", 1)
        silent = []
        for k in range(c.nnodes):
            if k == c.node_rank:
                continue
            count, last = self.store.add(f"{key}{k}", 0), self._beats.get((attempt, k))
            if last is None or last[0] != count:
                self._beats[(attempt, k)] = (count, now)
            elif now - last[1] >= c.node_timeout and not self.store.check([f"attempt{attempt}/report/{k}"]):
                silent.append(k)
        return silent

    def announce_failure(self, attempt: int) -> None:
        """Tell every agent that this node's group failed (or was interrupted), so they stop theirs."""
        self.store.add(f"attempt{attempt}/failed", 1)

    def gather(
        self, attempt: int, exits: List[RankExit], note: Optional[str]
    ) -> Tuple[List[RankExit], List[str]]:
        """Publish this node's exits, wait for the other nodes' (bounded once a failure is known),
        and return every rank's exit plus the nodes' notes (and one for each node that never reported)."""
        c, key = self.config, f"attempt{attempt}/"
        report = {"exits": [e.to_json() for e in exits], "note": note}
        self.store.set(f"{key}report/{c.node_rank}", json.dumps(report))
        self.store.add(f"{key}finished", 1)
        deadline = None
        while self.store.add(f"{key}finished", 0) < c.nnodes:
            if deadline is None and (self.remote_failure(attempt) or self.silent_nodes(attempt)):
                # every node learned of the failure about when we did and has had --stop-delay
                # already; a node cut off from this store (or silent) never reports, so do not wait long
                deadline = time.monotonic() + c.stop_grace + REPORT_GRACE
            if deadline is not None and time.monotonic() > deadline:
                break
            time.sleep(c.monitor_interval)
        all_exits: List[RankExit] = []
        notes: List[str] = []
        self._reported = 0
        for k in range(c.nnodes):
            if not self.store.check([f"{key}report/{k}"]):
                notes.append(f"node {k} did not report (its launcher may have died)")
                continue
            self._reported += 1
            data = json.loads(self.store.get(f"{key}report/{k}"))
            all_exits.extend(RankExit.from_json(e) for e in data["exits"])
            if data["note"]:
                notes.append(data["note"])
        return sorted(all_exits, key=lambda e: e.rank), notes

    def close(self) -> None:
        """Leave the store; node 0 keeps serving it until every agent that reported at the last
        gather (or, when the nodes never met, that joined) has left, or a few seconds."""
        try:
            self.store.add("left", 1)
            deadline = time.monotonic() + 5.0
            expected = getattr(self, "_reported", None) or self.store.add("joined", 0)
            while self.config.node_rank == 0 and self.store.add("left", 0) < expected:
                if time.monotonic() > deadline:
                    break
                time.sleep(self.config.monitor_interval)
        except Exception:  # noqa: BLE001 - the store may already be gone; leaving must not fail
            pass
        self.store.close()


Rendezvous = Union[LocalRendezvous, StoreRendezvous]
