"""ZeroMQ connections between the ranks of one process group.

Each rank of a group binds one ROUTER socket (where it receives from every peer) and
connects one DEALER socket to each peer's ROUTER (where it sends). The sockets live as long
as the group; no socket is ever made per operation. Every connection is authenticated with
the job secret (``base/auth.py``: ZeroMQ PLAIN or CURVE checked by a ZAP handler) before a single
frame of it reaches this module, and every frame is then validated (``wire.unpack``):
malformed frames are dropped and logged, never acted on.

Endpoints
    A rank publishes ``{"host": ..., "pid": ..., "ipc": ..., "board": ..., "tcp": ...}`` in
    the store under ``<prefix>ep/<rank>``. A peer on the same host (same hostname, boot id
    and network namespace) is reached over ``ipc://`` (a Unix socket in the abstract
    namespace: it has no file, so nothing is left behind, and like the tcp endpoint it
    serves only connections that prove the job secret), others over
    ``tcp://`` on the address of the interface that routes to ``MASTER_ADDR`` (never a
    hostname that may resolve to loopback). ``DISTTORCH_HOST_ADDR`` (an address) or
    ``DISTTORCH_IFNAME`` (an interface name) override it. When ``MASTER_ADDR`` is a
    loopback address (a single-node job) the tcp endpoint listens on 127.0.0.1 only.
    When it is not, the peer connections use CURVE (encrypted, replay-proof; see ``auth.py``).

Before authentication a connection can make this process hold at most one frame of
:data:`MAX_FRAME` bytes (``ZMQ_MAXMSGSIZE``; larger payloads travel as several frames) for
at most :data:`HANDSHAKE_TIMEOUT_MS`, and the open-files limit is raised to its hard limit
so that a flood of connections does not take this process's own descriptors.

    ipc versus tcp loopback, measured on the development machine (2 cores, pyzmq 27 /
    libzmq 4.3.5, one DEALER->ROUTER ping-pong, copy-free for >= 64 KiB)::

        size      tcp 127.0.0.1       ipc
        4 KiB     95 us round trip    81 us
        64 KiB    0.51 GB/s           0.66 GB/s
        1 MiB     1.60 GB/s           2.14 GB/s
        16 MiB    1.20 GB/s           1.75 GB/s

    so same-host peers use ipc (``DISTTORCH_SAME_HOST_TRANSPORT=tcp`` switches to tcp).

Shared memory
    The ranks of one host also share one anonymous segment (``shm.py``): the host's first
    rank makes it and hands its descriptor to the others over the abstract Unix socket
    named ``board`` in its endpoint, checked against the ``pid`` each published. The
    algorithms of ``algorithms/shm.py`` compute in it (:attr:`Transport.board`); it is
    used only when every rank of the group published one (:attr:`Transport.shared`), so
    that all ranks choose the same algorithms.

Liveness
    Each DEALER has a socket monitor. A ``DISCONNECTED`` event from a peer that has not said
    goodbye (a ``BYE`` message, sent by ``destroy_process_group``) marks it dead after
    :data:`DEATH_GRACE` seconds, enough for a goodbye racing the disconnect to arrive. ZMTP
    heartbeats (every 0.5 s, 2.5 s timeout) catch peers that are frozen (SIGSTOP), cut off
    or whose host vanished without closing its sockets; a reconnection counts only once its
    new handshake succeeds, which a frozen or dead process never finishes. A killed, frozen
    or cut-off process is therefore reported by every survivor within about 3.5 seconds. A
    link that comes back within the grace is ridden out: the peer's new connection takes over
    its routing id on our ROUTER (``ROUTER_HANDOVER``) even while the old one lingers there,
    and a message lost with the old one fails the message-number check.

    Before the first handshake, a peer that ended is seen three ways while the group starts:
    the reason it published in the store (its start failed), its pid (a peer of this host),
    or its published address failing every connect for :data:`UNREACHABLE_GIVE_UP_S`
    seconds (a remote peer killed after it published, or its host unreachable).

Threading: after construction a Transport is used by one thread at a time (whichever holds
its group's execution lock); ZeroMQ sockets are not thread-safe.
"""

from __future__ import annotations

import collections
import fcntl
import json
import logging
import mmap
import os
import secrets
import socket
import struct
import threading
import time
from datetime import timedelta
from typing import Callable, Deque

import numpy as np
import zmq

from ..._process_state import ended, stopped_by_signal
from ..base import auth
from ..base.addresses import address_towards
from ..base.errors import AuthenticationError, DistNetworkError, DistStoreError
from ..base.log import RateLimitedLog
from ..base.sockets import new_socket
from . import frames as wire
from . import shm

__all__ = ["Transport", "host_address", "ENV_HOST_ADDR", "ENV_IFNAME"]

ENV_HOST_ADDR = "DISTTORCH_HOST_ADDR"
ENV_IFNAME = "DISTTORCH_IFNAME"
ENV_SAME_HOST = "DISTTORCH_SAME_HOST_TRANSPORT"

#: Payloads of at least this many bytes are sent without copying (and their send tracked).
ZERO_COPY_MIN = 64 * 1024
#: Largest frame a peer socket accepts (``ZMQ_MAXMSGSIZE``); larger payloads travel as
#: several frames of one message. Before a connection has authenticated it can make this
#: process hold at most one such frame, for at most :data:`HANDSHAKE_TIMEOUT_MS`.
MAX_FRAME = 4 * 1024 * 1024
#: What a frame may grow by on the way: CURVE sends each frame inside a MESSAGE command (its
#: name, a nonce and a MAC: 33 bytes more), and ``ZMQ_MAXMSGSIZE`` counts those bytes too,
#: so a limit of exactly :data:`MAX_FRAME` dropped the connection under a full frame.
FRAME_SLACK = 1024
#: An unauthenticated connection that has not finished its handshake is dropped after this.
HANDSHAKE_TIMEOUT_MS = 3000
#: Kernel socket buffer sizes requested for every peer socket.
SOCKET_BUFFER = 4 * 1024 * 1024
#: ZMTP heartbeats on every peer connection: a PING every interval; a connection silent for
#: the timeout (a frozen process, a cut link, a vanished host) is dropped. With
#: :data:`DEATH_GRACE`, every survivor reports such a peer within about 3.5 s.
HEARTBEAT_IVL_MS = 500
HEARTBEAT_TIMEOUT_MS = 2500
#: Seconds between a peer's disconnect and declaring it dead, unless it said goodbye.
DEATH_GRACE = 0.5
#: Longest single poll, in seconds: how often the caller's ``check`` hook runs while waiting.
POLL_SLICE = 0.1
#: Seconds between two looks at the store, while a group starts, for a peer that failed to start it.
FAILURE_LOOK_S = 0.5
#: Message numbers on a connection count modulo this (the header's ``link`` is a u32).
LINK_MODULUS = 1 << 32

#: Seconds a peer's published address may keep failing every connect (refused, no route)
#: before the group's start gives up on it: it bound that address before publishing it, so
#: an address that stays shut means its process ended (a remote peer killed before it
#: connected) or the network to it is down.
UNREACHABLE_GIVE_UP_S = 5.0

_MONITOR_EVENTS = (
    zmq.EVENT_HANDSHAKE_SUCCEEDED
    | zmq.EVENT_CONNECTED
    | zmq.EVENT_CONNECT_RETRIED
    | zmq.EVENT_DISCONNECTED
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
)

logger = logging.getLogger("disttorch.distributed.transport")
_dropped = RateLimitedLog(logger)

Key = int | None  # None: collective traffic; an int: point-to-point traffic with that tag
_context: zmq.Context | None = None
_context_pid = 0


def _shared_context() -> zmq.Context:
    global _context, _context_pid
    if _context is None or _context.closed or _context_pid != os.getpid():
        auth.raise_descriptor_limit()
        _context = zmq.Context()  # a forked child never uses its parent's context
        _context_pid = os.getpid()
        _context.setsockopt(zmq.MAX_SOCKETS, 4096)
    return _context


def flush_sent(timeout: float) -> bool:
    """Wait up to ``timeout`` seconds until every message queued on this process's peer
    sockets has been handed to the kernel, by terminating the shared ZeroMQ context (which
    waits for each closed socket's linger). Call after closing every transport. Returns
    whether everything left in time."""
    global _context
    ctx = _context
    if ctx is None or ctx.closed or _context_pid != os.getpid():
        return True
    _context = None
    done = threading.Event()

    def term() -> None:
        ctx.term()
        done.set()

    threading.Thread(target=term, name="disttorch-flush", daemon=True).start()
    return done.wait(timeout)


def _host_key() -> str:
    """What ranks that can share memory and abstract Unix sockets have in common: the
    host name, the kernel's boot id and the network namespace."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        netns = os.readlink("/proc/self/ns/net")
    except OSError:
        boot = netns = ""
    return f"{socket.gethostname()}/{boot}/{netns}"


def _pid_namespace() -> str:
    """This process's pid namespace ("" where ``/proc`` cannot tell): a peer's pid names the
    same process here only within the same one."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _interface_address(ifname: str) -> str:
    """IPv4 address of network interface ``ifname`` (Linux ``SIOCGIFADDR``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", ifname[:15].encode()))
        except OSError as e:
            raise DistNetworkError(
                f"{ENV_IFNAME}={ifname!r}: no IPv4 address on that interface "
                f"({e}); expected the name of an interface, e.g. eth0"
            ) from None
    return socket.inet_ntoa(packed[20:24])


def host_address(master_addr: str | None = None) -> str:
    """The address peers on other hosts reach this process at.

    ``DISTTORCH_HOST_ADDR`` if set; else the address of ``DISTTORCH_IFNAME``; else the
    address of the interface that routes to ``master_addr`` (default ``MASTER_ADDR``);
    ``127.0.0.1`` when the master is on loopback or unknown (a single-host job).
    """
    if os.environ.get(ENV_HOST_ADDR):
        return os.environ[ENV_HOST_ADDR]
    if os.environ.get(ENV_IFNAME):
        return _interface_address(os.environ[ENV_IFNAME])
    master = master_addr or os.environ.get("MASTER_ADDR")
    if not master:
        return "127.0.0.1"
    try:
        return address_towards(master)
    except OSError:
        raise DistNetworkError(
            f"MASTER_ADDR={master!r} does not resolve to an IPv4 address; "
            f"set it to the address of rank 0's host"
        ) from None


class _Peer:
    """Sending side and liveness of one peer."""

    def __init__(self, rank: int, dealer: zmq.Socket, monitor: zmq.Socket, identity: bytes) -> None:
        self.rank = rank
        self.dealer = dealer
        self.monitor = monitor
        self.identity = identity  # routing id its DEALER presents to our ROUTER
        self.connected = False
        self.disconnected_at: float | None = None
        self.said_bye = False
        self.declared_dead = False  # another rank reported it dead
        self.reconnected = False  # our connection to it dropped and came back
        self.auth_failure: str | None = None
        self.endpoint = ""
        self.failing_since: float | None = None  # every connect has failed since (never connected)
        self.failed_connects = 0


def _report_failure(store, prefix: str, rank: int, error: BaseException) -> None:
    """Publish why this rank failed to start the group, for the ranks waiting for it (best
    effort: the store may be what failed)."""
    try:
        store.set(f"{prefix}failed/{rank}", f"{type(error).__name__}: {error}"[:4096])
        store.add(f"{prefix}failures", 1)
    except Exception:  # noqa: BLE001 - the error being raised is the one to report
        logger.debug("could not publish why rank %d failed to start the group", rank, exc_info=True)


class Transport:
    """The sockets of one rank in one process group, and the messages waiting in them.

    Args:
        store: rendezvous store where endpoints are published.
        prefix: store key prefix of the group (e.g. ``"pg/0/"``).
        rank: this process's rank in the group.
        size: number of ranks in the group.
        group_id: the group's id, stamped in and checked against every header.
        timeout: seconds to wait for every peer to publish its endpoint and accept us.
        describe_rank: maps a group rank to how errors name it (e.g. its global rank).
        left: maps a group rank to the error to raise if it is known to have left the job
            (its connection to the store dropped for good), else ``None``.

    A rank whose start fails says why in the store (``<prefix>failed/<rank>``, counted in
    ``<prefix>failures``), and a rank still waiting to connect to it raises that reason at
    once; a peer of this host whose process ended is named at once too, and one that left
    the store (``left``) within seconds.
    """

    def __init__(
        self,
        store,
        prefix: str,
        rank: int,
        size: int,
        group_id: int,
        timeout: float,
        describe_rank: Callable[[int], str] = lambda r: f"rank {r}",
        left: Callable[[int], BaseException | None] = lambda r: None,
    ) -> None:
        self.rank, self.size, self.group_id = rank, size, group_id
        self._name = describe_rank
        self._left = left
        self._secret = auth.resolve_secret()
        tcp_host = host_address()
        # CURVE (encrypted, replay-proof) whenever peers may be reached off loopback
        self._encrypt = auth.encrypt_connections_at(tcp_host)
        # message numbers per connection, and payload checksums where CURVE does not
        # authenticate every byte (see frames.py)
        self._links_sent = [0] * size
        self._links_received = [0] * size
        self._checksums = not self._encrypt
        self._stash: dict[tuple[int, Key], Deque[tuple[wire.Header, list[zmq.Frame]]]] = (
            collections.defaultdict(collections.deque)
        )
        self.errors: list[tuple[wire.Header, str]] = []  # ERROR messages received from peers
        self.closed = False
        self._goodbye_sent = False
        ctx = _shared_context()
        self._router = new_socket(ctx, zmq.ROUTER)
        self._tune(self._router)
        # A peer's new connection takes over its routing id from the old one, which this side
        # may not have dropped yet (a link that came back after the peer's heartbeat timed out):
        # without this, the new connection waits unread behind the dead one, and so does the job.
        self._router.setsockopt(zmq.ROUTER_HANDOVER, 1)
        auth.configure_server(self._router, self._secret, encrypt=self._encrypt)
        same_host_ipc = os.environ.get(ENV_SAME_HOST, "ipc").lower() != "tcp"
        endpoints = {"host": _host_key(), "pid": os.getpid(), "pidns": _pid_namespace()}
        self.hosts: list[list[int]] = []  # group ranks by host, in order of their first rank
        self.shared = False  # whether every host's ranks share a segment (``self.board`` here)
        self.board: shm.Board | None = None
        self._segment: mmap.mmap | None = None
        self._poller = zmq.Poller()
        self._poller.register(self._router, zmq.POLLIN)
        self._peers: dict[int, _Peer] = {}
        self._local_pids: dict[int, int] = {}  # peer -> its pid, for the peers on this host
        self._by_monitor: dict[zmq.Socket, _Peer] = {}
        handover = None
        try:
            if same_host_ipc:  # an abstract socket name: no file exists to be left behind
                self._router.bind(f"ipc://@disttorch-{secrets.token_hex(12)}-g{group_id}-r{rank}")
                endpoints["ipc"] = self._router.getsockopt_string(zmq.LAST_ENDPOINT)
            if shm.enabled() and size > 1:
                try:
                    handover, endpoints["board"] = shm.listen(size)
                except OSError as e:  # then the whole group goes over the sockets
                    logger.warning("%s cannot offer shared memory (%s)", describe_rank(rank), e)
            self._router.bind(f"tcp://{tcp_host}:*")
            endpoints["tcp"] = self._router.getsockopt_string(zmq.LAST_ENDPOINT)
            store.set(f"{prefix}ep/{rank}", json.dumps(endpoints))
            deadline = time.monotonic() + timeout
            infos = [
                endpoints if p == rank else self._published(store, prefix, p, deadline) for p in range(size)
            ]
            self._local_pids = {
                peer: info["pid"]
                for peer, info in enumerate(infos)
                if peer != rank
                and (info.get("host"), info.get("pidns")) == (endpoints["host"], endpoints["pidns"])
                and isinstance(info.get("pid"), int)
            }
            for peer, info in enumerate(infos):
                if peer != rank:
                    local = same_host_ipc and info["host"] == endpoints["host"] and "ipc" in info
                    self._connect(peer, info["ipc"] if local else info["tcp"])
            self._await_handshakes(deadline, store, prefix)
            self.hosts = shm.host_groups([info["host"] for info in infos])
            self.shared = all("board" in info for info in infos)
            if self.shared:
                self._share_segment(infos, handover, deadline)
        except BaseException as error:
            self.close()
            _report_failure(store, prefix, rank, error)
            raise
        finally:
            if handover is not None:
                handover.close()

    # ------------------------------------------------------------------ setup
    @staticmethod
    def _tune(sock: zmq.Socket) -> None:
        sock.setsockopt(zmq.SNDHWM, 0)
        sock.setsockopt(zmq.RCVHWM, 0)
        sock.setsockopt(zmq.SNDBUF, SOCKET_BUFFER)
        sock.setsockopt(zmq.RCVBUF, SOCKET_BUFFER)
        sock.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
        sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
        sock.setsockopt(zmq.HEARTBEAT_TTL, HEARTBEAT_TIMEOUT_MS)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME + FRAME_SLACK)
        sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_TIMEOUT_MS)

    def _identity(self, rank: int) -> bytes:
        return b"disttorch/%d/%d" % (self.group_id, rank)

    def _connect(self, peer: int, endpoint: str) -> None:
        dealer = new_socket(_shared_context(), zmq.DEALER)
        self._tune(dealer)
        dealer.setsockopt(zmq.ROUTING_ID, self._identity(self.rank))
        dealer.setsockopt(zmq.RECONNECT_IVL, 100)
        auth.configure_client(dealer, self._secret, encrypt=self._encrypt)
        monitor = auth.monitor_socket(dealer, _MONITOR_EVENTS)
        dealer.connect(endpoint)
        p = _Peer(peer, dealer, monitor, self._identity(peer))
        p.endpoint = endpoint
        self._peers[peer] = p
        self._by_monitor[monitor] = p
        self._poller.register(monitor, zmq.POLLIN)

    def _share_segment(self, infos: list[dict], handover, deadline: float) -> None:
        """Map this host's shared-memory segment (``shm.py``): the host's first rank makes
        it and hands its descriptor to the others, each checked against the pid it
        published in the store."""
        local = next(h for h in self.hosts if self.rank in h)
        if len(local) == 1:
            return
        leader = local[0]
        try:
            if self.rank == leader:
                fd, self._segment = shm.new_segment(len(local), arena=shm.arena_bytes())
                try:
                    pids = {r: infos[r]["pid"] for r in local[1:]}
                    shm.hand_out(handover, fd, pids, deadline, self._name)
                finally:
                    os.close(fd)
            else:
                fd = shm.fetch(infos[leader]["board"], self.rank, infos[leader]["pid"], deadline)
                self._segment = shm.map_segment(fd, len(local))
        except (OSError, TimeoutError) as e:
            raise DistNetworkError(
                f"{self._name(self.rank)} could not share memory with the ranks of its host "
                f"({e}); are they running? (DISTTORCH_SHM=0 sends everything over sockets)"
            ) from e
        self.board = shm.Board(self._segment, local.index(self.rank), len(local))

    def _await_handshakes(self, deadline: float, store, prefix: str) -> None:
        look = time.monotonic() + FAILURE_LOOK_S
        while True:
            missing = [p for p in self._peers.values() if not p.connected]
            for p in missing:
                if p.auth_failure:
                    self.close()
                    raise AuthenticationError(p.auth_failure)
            if not missing:
                return
            for p in missing:
                pid = self._local_pids.get(p.rank)
                if pid is not None and ended(pid):
                    self.close()
                    raise DistNetworkError(
                        f"{self._name(p.rank)} (process {pid} of this host) ended before "
                        f"{self._name(self.rank)} could connect to it: its output says why"
                    )
            if time.monotonic() >= look:
                look = time.monotonic() + FAILURE_LOOK_S
                self._raise_if_failed(store, prefix, [p.rank for p in missing])
                self._raise_if_unreachable(missing)
            if time.monotonic() > deadline:
                names = ", ".join(self._name(p.rank) for p in missing)
                self.close()
                raise DistNetworkError(
                    f"{self._name(self.rank)} could not connect to {names} "
                    "within the timeout: are those processes running and "
                    "reachable (check DISTTORCH_HOST_ADDR / firewalls)?"
                )
            self.pump(POLL_SLICE)

    def _raise_if_unreachable(self, missing: list[_Peer]) -> None:
        """Raise for a peer whose published address has failed every connect for
        :data:`UNREACHABLE_GIVE_UP_S` seconds, the one sign of a remote peer that ended
        before we could connect (its launcher alone knows more)."""
        for p in missing:
            if p.failing_since is not None and time.monotonic() - p.failing_since >= UNREACHABLE_GIVE_UP_S:
                self.close()
                raise DistNetworkError(
                    f"{self._name(p.rank)} published its address {p.endpoint}, but every connect "
                    f"to it failed for {time.monotonic() - p.failing_since:.0f} s "
                    f"({p.failed_connects} tries): its process ended before {self._name(self.rank)} "
                    "could connect to it (killed? its output or its launcher says why), or the "
                    "network between the two hosts is down"
                )

    def _published(self, store, prefix: str, peer: int, deadline: float) -> dict:
        """The endpoints ``peer`` published, once it has (until ``deadline``); raise at once
        if it failed to start the group instead."""
        key = f"{prefix}ep/{peer}"
        while True:
            left = deadline - time.monotonic()
            try:
                store.wait([key], timedelta(seconds=max(1e-3, min(left, FAILURE_LOOK_S))))
                return json.loads(store.get(key))
            except DistStoreError:  # not yet there: did it fail? (a broken store raises here)
                self._raise_if_failed(store, prefix, [peer])
                if left <= FAILURE_LOOK_S:
                    raise DistStoreError(
                        f"{self._name(peer)} did not publish its address ({key!r} in the store) within "
                        "the timeout: is that process running, and does it create this group too?"
                    ) from None

    def _raise_if_failed(self, store, prefix: str, missing: list[int]) -> None:
        """Raise the reason a peer in ``missing`` published for failing to start the group,
        or the error of one that left the job without saying why."""
        failures = store.add(f"{prefix}failures", 0)
        for peer in missing:
            if failures and store.check([f"{prefix}failed/{peer}"]):
                reason = store.get(f"{prefix}failed/{peer}").decode("utf-8", "replace")
                self.close()
                raise DistNetworkError(
                    f"{self._name(peer)} failed to start the group, so {self._name(self.rank)} cannot "
                    f"connect to it: {reason}"
                )
        for peer in missing:
            error = self._left(peer)
            if error is not None:
                self.close()
                raise error

    # ------------------------------------------------------------------ sending
    def send(self, peer: int, header: wire.Header, buf: np.ndarray) -> zmq.MessageTracker | None:
        """Queue ``header`` and the bytes of contiguous ``buf`` for ``peer``.

        Returns a tracker to wait on before ``buf`` may be reused (large payloads are sent
        without a copy), or ``None`` when ``buf`` was copied and is free at once.
        """
        dealer = self._peers[peer].dealer
        data = buf.reshape(-1).view(np.uint8) if buf.size else b""
        dealer.send(self._header_frame(peer, header, data), zmq.SNDMORE)
        if buf.nbytes < ZERO_COPY_MIN:
            dealer.send(data, copy=True)
            return None
        trackers = []
        for start in range(0, buf.nbytes, MAX_FRAME):
            last = start + MAX_FRAME >= buf.nbytes
            trackers.append(
                dealer.send(
                    data[start : start + MAX_FRAME], 0 if last else zmq.SNDMORE, copy=False, track=True
                )
            )
        return trackers[0] if len(trackers) == 1 else zmq.MessageTracker(*trackers)

    def send_control(self, peer: int, header: wire.Header, payload: bytes = b"") -> None:
        """Send a small control message (``ERROR`` text or ``BYE``) if the socket is still open."""
        p = self._peers.get(peer)
        if p is not None and not p.dealer.closed:
            p.dealer.send_multipart(
                [self._header_frame(peer, header._replace(nbytes=len(payload)), payload), payload]
            )

    def _header_frame(self, peer: int, header: wire.Header, payload=b"") -> bytes:
        """``header`` packed for the next message to ``peer``: numbered, with the payload's
        checksum where connections are not encrypted."""
        link = self._links_sent[peer]
        self._links_sent[peer] = (link + 1) % LINK_MODULUS
        check = wire.checksum([payload]) if self._checksums and len(payload) else 0
        return wire.pack(header._replace(link=link, check=check))

    # ------------------------------------------------------------------ receiving
    def take(self, peer: int, key: Key, out: np.ndarray | None) -> wire.Header | None:
        """Pop the oldest stashed message from ``peer`` on ``key``; copy its payload into ``out``.

        Returns its header, or ``None`` when nothing is waiting. When the payload size
        differs from ``out.nbytes`` nothing is copied; the caller compares ``header.nbytes``.
        """
        queue = self._stash.get((peer, key))
        if not queue:
            return None
        header, payload = queue.popleft()
        if not queue:  # one entry per (peer, tag) with messages waiting, never more
            del self._stash[(peer, key)]
        fits = out is not None and header.nbytes == out.nbytes
        if fits and header.nbytes:
            _copy_frames(payload, out)
        return header

    def first(self, peer: int, key: Key) -> wire.Header | None:
        """The header of the oldest stashed message from ``peer`` on ``key``, left in place."""
        queue = self._stash.get((peer, key))
        return queue[0][0] if queue else None

    def stale(self, before_seq: int) -> wire.Header | None:
        """A stashed collective message of a collective before ``before_seq`` (which this rank
        has finished, so nobody will take it: the ranks disagreed about that collective)."""
        for peer in range(self.size):
            queue = self._stash.get((peer, None))
            if queue and queue[0][0].seq < before_seq:
                return queue[0][0]
        return None

    def waiting_from(self, key: Key) -> list[int]:
        """Peers that have a stashed message on ``key``."""
        return [peer for peer in range(self.size) if self._stash.get((peer, key))]

    def p2p_waiting(self) -> list[tuple[int, int]]:
        """(peer, tag) of every point-to-point stream with a stashed message."""
        return [key for key in self._stash if key[1] is not None]

    def stashed(self) -> int:
        """How many streams have a stashed message."""
        return len(self._stash)

    def pump(self, timeout: float, want: tuple[int, Key, np.ndarray] | None = None) -> wire.Header | None:
        """Wait up to ``timeout`` seconds for traffic and file it away.

        Incoming data messages are stashed by (sender, key); if one matches ``want``
        (peer, key, out) and nothing older from that peer is stashed, it is received
        straight into ``out`` and its header returned. Monitor events update liveness.
        """
        got = self._drain(want)
        if got is not None:
            return got
        for sock, _ in self._poller.poll(timeout * 1000):
            if sock is self._router:
                got = self._drain(want) or got
            else:
                self._on_monitor(self._by_monitor[sock])
        return got

    def _drain(self, want: tuple[int, Key, np.ndarray] | None) -> wire.Header | None:
        router, got = self._router, None
        while router.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            frames = router.recv_multipart(copy=False)
            header = self._validate(frames)
            if header is None:
                continue
            payload = frames[2:]
            if header.kind == wire.ERROR:
                text = b"".join(bytes(f.buffer) for f in payload)
                self.errors.append((header, text.decode("utf-8", "replace")))
                continue
            if header.kind == wire.BYE:
                self._peers[header.sender].said_bye = True
                continue
            if header.kind == wire.SYNC:
                continue  # its number was checked: nothing was lost before it
            key = header.tag if header.kind == wire.P2P else None
            if (
                got is None
                and want is not None
                and want[0] == header.sender
                and want[1] == key
                and header.nbytes == want[2].nbytes
                and not self._stash.get((header.sender, key))
            ):
                if header.nbytes:
                    _copy_frames(payload, want[2])
                got = header
            else:
                self._stash[(header.sender, key)].append((header, payload))
        return got

    def _validate(self, frames: list[zmq.Frame]) -> wire.Header | None:
        """The header of ``[identity, header, payload...]`` if the message is well formed and
        comes over the connection of the rank it names; otherwise ``None`` (logged)."""
        if len(frames) < 3:
            _dropped.warning(
                "dropped a %d-frame message on the peer socket of group %d "
                "(expected identity, header, payload)",
                len(frames),
                self.group_id,
            )
            return None
        identity, raw = frames[:2]
        nbytes = sum(len(f) for f in frames[2:])
        try:
            header = wire.unpack(raw.bytes, self.group_id, self.size)
        except wire.DamagedStream as e:
            raise self._damaged(identity.bytes, str(e)) from None
        except wire.VersionMismatch as e:
            raise DistNetworkError(
                f"{self._sender(identity.bytes)} sent {self._name(self.rank)} a message in {e}: the "
                "ranks run different disttorch versions; install the same one on every host"
            ) from None
        except wire.MalformedHeader as e:
            _dropped.warning(
                "dropped a malformed message on the peer socket of group %d: %s", self.group_id, e
            )
            return None
        if header.sender == self.rank or identity.bytes != self._identity(header.sender):
            _dropped.warning(
                "dropped a message claiming to come from group rank %d over the connection of %r",
                header.sender,
                identity.bytes,
            )
            return None
        expected = self._links_received[header.sender]
        if header.link != expected:
            raise self._damaged(identity.bytes, self._out_of_turn(header, expected))
        self._links_received[header.sender] = (expected + 1) % LINK_MODULUS
        if nbytes != header.nbytes:
            raise self._damaged(
                identity.bytes, f"a payload of {nbytes} bytes where its header announced {header.nbytes}"
            )
        if self._checksums and nbytes and wire.checksum(f.buffer for f in frames[2:]) != header.check:
            raise self._damaged(identity.bytes, f"the payload of message {header.link} fails its checksum")
        return header

    def _sender(self, identity: bytes) -> str:
        """The rank on the connection of routing id ``identity``, by name."""
        sender = next((r for r in range(self.size) if self._identity(r) == identity), None)
        return self._name(sender) if sender is not None else f"connection {identity!r}"

    def _damaged(self, identity: bytes, what: str) -> DistNetworkError:
        """The error for a damaged message on the connection of routing id ``identity``."""
        return DistNetworkError(
            f"the stream from {self._sender(identity)} to {self._name(self.rank)} is damaged: {what}. A network "
            f"fault or tampering; on networks you do not trust, leave {auth.ENV_ENCRYPT} unset "
            "or 1 (CURVE authenticates every byte)"
        )

    def _out_of_turn(self, header: wire.Header, expected: int) -> str:
        """What a message numbered other than ``expected`` shows: messages lost with a connection
        that came back (the sender's SYNC says so, or ours to it dropped too), or a damage."""
        said = f"message {header.link} arrived where message {expected} was expected"
        lost = (header.link - expected) % LINK_MODULUS
        peer = self._peers[header.sender]
        self._on_monitor(peer)  # whether our connection to it dropped too, as a silent link drops both
        dropped = peer.reconnected or peer.disconnected_at is not None
        if lost < LINK_MODULUS // 2 and (header.kind == wire.SYNC or dropped):
            return (
                f"{said}: the connection dropped and came back, and {lost} message(s) sent over it were "
                f"lost (a link silent for longer than the {HEARTBEAT_TIMEOUT_MS / 1000:g} s heartbeat "
                "timeout, as in a network outage, is dropped with what it carried)"
            )
        return f"{said} (a message was lost, duplicated or reordered)"

    # ------------------------------------------------------------------ liveness
    def _on_monitor(self, p: _Peer) -> None:
        while p.monitor.poll(0):
            event = auth.parse_monitor_message(p.monitor.recv_multipart())["event"]
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                if p.connected:  # a new connection: tell the peer how many messages it should have
                    sync = wire.Header(wire.SYNC, self.group_id, 0, 0, 0, 0, -1, -1, 0, self.rank, 0)
                    p.dealer.send_multipart([self._header_frame(p.rank, sync), b""])
                    p.reconnected = True
                p.connected, p.disconnected_at = True, None
            elif event == zmq.EVENT_CONNECTED:  # the address answers: its handshake decides
                p.failing_since = None
            elif event == zmq.EVENT_CONNECT_RETRIED:  # a connect failed: refused, no route, timed out
                p.failing_since = p.failing_since or time.monotonic()
                p.failed_connects += 1
            elif event == zmq.EVENT_DISCONNECTED and p.connected:
                p.disconnected_at = p.disconnected_at or time.monotonic()
            elif event == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
                continue  # the connection broke mid-handshake (the peer exited?): liveness decides
            elif self._secret is None:
                p.auth_failure = auth.missing_secret_message(f"{self._name(p.rank)}")
            elif event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                p.auth_failure = (
                    f"{self._name(p.rank)} refused this process's credentials: the "
                    f"job secrets differ. Give every process the same "
                    f"{auth.ENV_SECRET}"
                )
            elif event == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
                p.auth_failure = (
                    f"the handshake with {self._name(p.rank)} failed: the two "
                    f"processes disagree on security; set the same "
                    f"{auth.ENV_SECRET} and {auth.ENV_ENCRYPT} everywhere"
                )

    def gone_peers(self) -> dict[int, str]:
        """Peers that died or left the group, each with the reason (``"died"``/``"left"``)."""
        now, gone = time.monotonic(), {}
        for p in self._peers.values():
            if p.said_bye:
                gone[p.rank] = "left"
            elif p.declared_dead or (
                p.disconnected_at is not None and now - p.disconnected_at >= DEATH_GRACE
            ):
                gone[p.rank] = "died"
        return gone

    def stopped_pid(self, peer: int) -> int | None:
        """``peer``'s pid when it runs on this host and is stopped by a signal (SIGSTOP,
        SIGTSTP): why it stopped answering; else ``None``."""
        pid = self._local_pids.get(peer)
        return pid if pid is not None and stopped_by_signal(pid) else None

    def declare_dead(self, peer: int) -> None:
        """Treat ``peer`` as gone (another rank reported it dead): nothing waits for it at close."""
        if peer in self._peers:
            self._peers[peer].declared_dead = True

    # ------------------------------------------------------------------ shutdown
    def say_goodbye(self, goodbye: wire.Header, wait: float) -> None:
        """Send ``goodbye`` (a ``BYE`` header) to live peers, then wait up to ``wait`` seconds
        for theirs: what they sent before it has then arrived (see ``ProcessGroup.destroy``).
        A damaged stream noticed meanwhile closes the transport and raises."""
        try:
            self._exchange_goodbyes(goodbye, wait)
        except DistNetworkError:
            self.close()
            raise

    def _exchange_goodbyes(self, goodbye: wire.Header, wait: float) -> None:
        self.pump(0)
        gone = self.gone_peers()
        live = [p for p in self._peers.values() if p.rank not in gone and p.connected]
        for p in live:
            p.dealer.send_multipart([self._header_frame(p.rank, goodbye), b""])
        self._goodbye_sent = True
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and not all(p.rank in self.gone_peers() for p in live):
            self.pump(min(POLL_SLICE, max(0.0, deadline - time.monotonic())))

    def close(self, goodbye: wire.Header | None = None, linger: float = 1.0) -> None:
        """Close every socket; first send ``goodbye`` (a ``BYE`` header) to live peers.

        What is queued for live peers keeps being sent for up to ``linger`` seconds, or
        until :func:`flush_sent` has waited for it."""
        if self.closed:
            return
        try:
            self.pump(0)  # learn who has left or died: no goodbye (and no linger) for them
        except (zmq.ZMQError, DistNetworkError):
            pass  # closing anyway (a damaged stream was reported by whoever pumped before)
        self.closed = True
        gone = self.gone_peers()
        for p in self._peers.values():
            if goodbye is not None and p.rank not in gone and p.connected and not self._goodbye_sent:
                p.dealer.send_multipart([self._header_frame(p.rank, goodbye), b""])
            p.dealer.disable_monitor()
            p.monitor.close(linger=0)
            p.dealer.close(linger=0 if p.rank in gone or not p.connected else int(linger * 1000))
        self._router.close(linger=0)
        self._stash.clear()
        if self.board is not None:
            self.board.close()
            self.board = None
        if self._segment is not None:
            try:  # the memory goes when the host's last rank lets go of it
                self._segment.close()
            except BufferError:
                pass  # a view is still alive (e.g. in a traceback): unmapped when it goes
            self._segment = None


def _copy_frames(frames: list[zmq.Frame], out: np.ndarray) -> None:
    """Copy the payload frames of one message, in order, into contiguous ``out``."""
    dest = out.reshape(-1).view(np.uint8)
    if len(frames) == 1:
        np.copyto(dest, np.frombuffer(frames[0].buffer, np.uint8))
        return
    pos = 0
    for f in frames:
        chunk = np.frombuffer(f.buffer, np.uint8)
        dest[pos : pos + chunk.size] = chunk
        pos += chunk.size
