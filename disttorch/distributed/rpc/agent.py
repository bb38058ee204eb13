"""The RPC agent: the ZeroMQ sockets of one worker and the thread that owns them.

Each worker binds one ROUTER socket, where the other workers' requests arrive and its replies
leave, and connects one DEALER socket to every worker's ROUTER (its own included), where its
requests leave and their replies arrive. Every connection proves the job secret inside
ZeroMQ's handshake (``base/auth.py``) before a single message of it is read, and a message
whose framing is wrong is dropped and logged.

One thread (the *I/O thread*) owns the sockets, as ZeroMQ sockets are not thread-safe.
Other threads hand it messages through an in-process queue socket; it sends them, reads
what arrives, completes the futures of replies, hands requests to the ``serve`` callback,
and marks with an error every call that ran past its deadline or whose worker is gone.

A message is a header frame (kind, message id, how many wire frames each part takes) and its
parts; a part larger than :data:`~disttorch.distributed.wire.transport.MAX_FRAME` travels as
several frames, so that no frame exceeds the limit every socket sets (``ZMQ_MAXMSGSIZE``)
for connections that have not authenticated yet.

Liveness is the transport's: ZMTP heartbeats on every DEALER, and a worker whose connection
dropped (killed, frozen, cut off) and did not come back within ``DEATH_GRACE`` seconds is
dead: its calls in flight fail, and so do new ones.
"""

from __future__ import annotations

import itertools
import logging
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import zmq

from ...futures import Future
from ..base import auth
from ..base.log import RateLimitedLog
from ..base.sockets import new_socket
from ..wire import transport as wire_limits

__all__ = ["Agent", "REQUEST", "REPLY_OK", "REPLY_ERROR"]

REQUEST, REPLY_OK, REPLY_ERROR = 1, 2, 3
_HEAD = struct.Struct("!BQI")  # kind, message id, number of parts; then one u32 per part
_PIECES = struct.Struct("!I")

logger = logging.getLogger("disttorch.distributed.rpc")
_dropped = RateLimitedLog(logger)

#: How often the I/O thread looks at deadlines and peers when nothing arrives (seconds).
_TICK = 0.05


def timeout_message(timeout: float) -> str:
    """PyTorch's words for a call that ran past its timeout."""
    return (
        f"RPC ran for more than set timeout ({int(timeout * 1000)} ms) and will now be marked with an error"
    )


@dataclass
class _Pending:
    future: Future
    peer: int
    deadline: float | None
    timeout: float


def _to_wire(kind: int, msg_id: int, parts: list) -> list:
    """Header plus the parts cut into frames of at most ``MAX_FRAME`` bytes."""
    frames: list = []
    counts = []
    for part in parts:
        view = memoryview(part).cast("B")
        pieces = [view[i : i + wire_limits.MAX_FRAME] for i in range(0, len(view), wire_limits.MAX_FRAME)]
        pieces = pieces or [b""]
        counts.append(len(pieces))
        frames.extend(pieces)
    head = _HEAD.pack(kind, msg_id, len(parts)) + b"".join(_PIECES.pack(c) for c in counts)
    return [head, *frames]


def _from_wire(frames: list) -> tuple[int, int, list]:
    """(kind, message id, parts) of a message; ``ValueError`` if its framing is wrong."""
    head = frames[0].bytes
    if len(head) < _HEAD.size:
        raise ValueError("short header")
    kind, msg_id, n = _HEAD.unpack_from(head)
    if kind not in (REQUEST, REPLY_OK, REPLY_ERROR) or len(head) != _HEAD.size + n * _PIECES.size:
        raise ValueError(f"malformed header (kind {kind}, {n} parts, {len(head)} bytes)")
    counts = [_PIECES.unpack_from(head, _HEAD.size + i * _PIECES.size)[0] for i in range(n)]
    if sum(counts) != len(frames) - 1:
        raise ValueError(f"the header announces {sum(counts)} frames, {len(frames) - 1} came")
    parts, at = [], 1
    for c in counts:
        chunk = frames[at : at + c]
        parts.append(chunk[0].buffer if c == 1 else b"".join(f.buffer for f in chunk))
        at += c
    return kind, msg_id, parts


def _configure(sock: zmq.Socket) -> None:
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.setsockopt(zmq.RCVHWM, 0)
    sock.setsockopt(zmq.SNDBUF, wire_limits.SOCKET_BUFFER)
    sock.setsockopt(zmq.RCVBUF, wire_limits.SOCKET_BUFFER)
    sock.setsockopt(zmq.HEARTBEAT_IVL, wire_limits.HEARTBEAT_IVL_MS)
    sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, wire_limits.HEARTBEAT_TIMEOUT_MS)
    sock.setsockopt(zmq.HEARTBEAT_TTL, wire_limits.HEARTBEAT_TIMEOUT_MS)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.MAXMSGSIZE, wire_limits.MAX_FRAME + wire_limits.FRAME_SLACK)
    sock.setsockopt(zmq.HANDSHAKE_IVL, wire_limits.HANDSHAKE_TIMEOUT_MS)


class _Peer:
    """The DEALER to one worker and what its monitor says about the connection."""

    def __init__(self, rank: int, name: str, dealer: zmq.Socket, has_secret: bool) -> None:
        self.rank = rank
        self.name = name
        self.dealer = dealer
        self.watcher = auth.ConnectionWatcher(dealer, f"RPC worker {name!r}", has_secret)
        self.failure: str | None = None  # why the peer cannot be reached, once known

    def check(self, now: float) -> None:
        """Read connection events; set :attr:`failure` once the peer is refused or gone."""
        try:
            self.watcher.check()
        except auth.AuthenticationError as e:
            self.failure = str(e)
            return
        down = self.watcher.disconnected_since
        if down is not None and now - down > wire_limits.DEATH_GRACE:
            self.failure = (
                f"the connection to RPC worker {self.name!r} (id {self.rank}) was lost: the process died, "
                "froze or cannot be reached"
            )


class Agent:
    """The sockets and the I/O thread of one worker.

    Args:
        rank: this worker's id.
        context: the ZeroMQ context (the agent terminates it in :meth:`stop`).
        router: the bound, configured ROUTER socket.
        serve: ``serve(peer_rank, msg_id, parts)``, called on the I/O thread for each request;
            it must not block, and answers later with :meth:`reply`.
    """

    def __init__(self, rank: int, context: zmq.Context, router: zmq.Socket, serve: Callable) -> None:
        self.rank = rank
        self._ctx = context
        self._router = router
        self._serve = serve
        self._peers: dict[int, _Peer] = {}
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._serving = 0  # requests received and not yet answered
        self.activity = 0  # messages sent and received so far (shutdown compares it across rounds)
        self._outbox_addr = f"inproc://disttorch.rpc.outbox.{id(self)}"
        self._inbox = new_socket(context, zmq.PULL)
        self._inbox.setsockopt(zmq.RCVHWM, 0)
        self._inbox.bind(self._outbox_addr)
        self._outbox = new_socket(context, zmq.PUSH)
        self._outbox.setsockopt(zmq.SNDHWM, 0)
        self._outbox.connect(self._outbox_addr)
        self._outbox_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="disttorch-rpc-io", daemon=True)

    # -------------------------------------------------------------- set-up and tear-down
    @staticmethod
    def bind(host: str, secret: bytes | None) -> tuple[zmq.Context, zmq.Socket, str]:
        """A new context and a ROUTER bound at ``host`` on a free port; returns its endpoint too."""
        auth.raise_descriptor_limit()
        context = zmq.Context()
        router = new_socket(context, zmq.ROUTER)
        _configure(router)
        router.setsockopt(zmq.ROUTER_MANDATORY, 0)
        # a worker's new connection takes over its routing id from one this side has not dropped
        # yet (a link back from an outage): else its requests, and the replies, wait behind the dead one
        router.setsockopt(zmq.ROUTER_HANDOVER, 1)
        auth.configure_server(router, secret, encrypt=auth.encrypt_connections_at(host))
        router.bind(f"tcp://{host}:*")
        return context, router, router.getsockopt(zmq.LAST_ENDPOINT).decode()

    def connect(self, peers: dict[int, tuple[str, str]], secret: bytes | None) -> None:
        """Connect a DEALER to every worker (``rank -> (name, endpoint)``) and start the I/O thread."""
        for rank, (name, endpoint) in peers.items():
            dealer = new_socket(self._ctx, zmq.DEALER)
            _configure(dealer)
            dealer.setsockopt(zmq.ROUTING_ID, _PIECES.pack(self.rank))
            dealer.setsockopt(zmq.RECONNECT_IVL, 100)
            host = endpoint.rsplit(":", 1)[0].removeprefix("tcp://")
            auth.configure_client(dealer, secret, encrypt=auth.encrypt_connections_at(host))
            peer = _Peer(rank, name, dealer, secret is not None)
            dealer.connect(endpoint)
            self._peers[rank] = peer
        self._thread.start()

    def stop(self) -> None:
        """Stop the I/O thread, fail what is still pending, close every socket."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()
        for peer in self._peers.values():
            peer.watcher.close()
            peer.dealer.close(linger=0)
        self._router.close(linger=0)
        self._outbox.close(linger=0)
        self._inbox.close(linger=0)
        auth.stop_authenticator(self._ctx)
        self._ctx.term()
        with self._lock:
            pending, self._pending = self._pending, {}
        for p in pending.values():
            p.future.set_exception(RuntimeError("RPC agent was shut down before the call completed"))

    # ----------------------------------------------------------------- used by any thread
    def idle(self) -> bool:
        """No call of this worker is waiting for its reply, and no request for an answer."""
        with self._lock:
            return not self._pending and self._serving == 0

    def failures(self) -> list[str]:
        """Why each worker that cannot be reached any more is gone."""
        return [p.failure for p in self._peers.values() if p.failure is not None]

    def request(self, peer: int, parts: list, timeout: float) -> Future:
        """Send a request to worker ``peer``; the future gets the reply's parts (or an error).

        ``timeout`` in seconds; 0 or less waits without a deadline (until the peer is gone).
        """
        future: Future = Future()
        msg_id = next(self._ids)
        deadline = time.monotonic() + timeout if timeout > 0 else None
        with self._lock:
            failure = self._peers[peer].failure
            if failure is None:
                self._pending[msg_id] = _Pending(future, peer, deadline, timeout)
        if failure is not None:
            future.set_exception(RuntimeError(failure))
            return future
        self._push([b"q", _PIECES.pack(peer), *_to_wire(REQUEST, msg_id, parts)])
        return future

    def reply(self, peer: int, msg_id: int, parts: list, ok: bool = True) -> None:
        """Answer request ``msg_id`` of worker ``peer`` with ``parts`` (an error when not ``ok``)."""
        with self._lock:
            self._serving -= 1
        kind = REPLY_OK if ok else REPLY_ERROR
        self._push([b"r", _PIECES.pack(peer), *_to_wire(kind, msg_id, parts)])

    def _push(self, frames: list) -> None:
        with self._outbox_lock:
            self._outbox.send_multipart(frames, copy=False)

    # ----------------------------------------------------------------- the I/O thread
    def _loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self._inbox, zmq.POLLIN)
        poller.register(self._router, zmq.POLLIN)
        dealers = {}
        for peer in self._peers.values():
            poller.register(peer.dealer, zmq.POLLIN)
            dealers[peer.dealer] = peer
        while not self._stop.is_set():
            ready = dict(poller.poll(int(_TICK * 1000)))
            if self._inbox in ready:
                self._drain(self._inbox, self._send_out)
            if self._router in ready:
                self._drain(self._router, self._on_request)
            for sock in ready:
                if sock in dealers:
                    self._drain(sock, lambda frames, p=dealers[sock]: self._on_reply(p, frames))
            self._expire()

    def _drain(self, sock: zmq.Socket, handle: Callable[[list], None]) -> None:
        while True:
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            try:
                handle(frames)
            except Exception:  # noqa: BLE001 - one bad message must not stop the I/O thread
                logger.exception("RPC worker %d failed to handle a message", self.rank)

    def _send_out(self, frames: list) -> None:
        where, peer = frames[0].bytes, _PIECES.unpack(frames[1].bytes)[0]
        self.activity += 1
        if where == b"q":
            self._peers[peer].dealer.send_multipart(frames[2:], copy=False)
        else:
            self._router.send_multipart([_PIECES.pack(peer), *frames[2:]], copy=False)

    def _on_request(self, frames: list) -> None:
        try:
            identity = frames[0].bytes
            peer = _PIECES.unpack(identity)[0] if len(identity) == _PIECES.size else -1
            if peer not in self._peers:
                raise ValueError(f"unknown sender identity {identity!r}")
            kind, msg_id, parts = _from_wire(frames[1:])
            if kind != REQUEST:
                raise ValueError(f"a message of kind {kind} where a request was expected")
        except ValueError as e:
            _dropped.warning("RPC worker %d dropped a malformed request: %s", self.rank, e)
            return
        self.activity += 1
        with self._lock:
            self._serving += 1
        self._serve(peer, msg_id, parts)

    def _on_reply(self, peer: _Peer, frames: list) -> None:
        try:
            kind, msg_id, parts = _from_wire(frames)
            if kind == REQUEST:
                raise ValueError("a request where a reply was expected")
        except ValueError as e:
            _dropped.warning("RPC worker %d dropped a malformed reply from %s: %s", self.rank, peer.name, e)
            return
        self.activity += 1
        with self._lock:
            pending = self._pending.pop(msg_id, None)
        if pending is None:
            return  # it timed out meanwhile
        pending.future.set_result((kind == REPLY_OK, parts))

    def _expire(self) -> None:
        """Fail the calls past their deadline and those to workers that are gone."""
        now = time.monotonic()
        for peer in self._peers.values():
            if peer.failure is None:
                peer.check(now)
        failed = []
        with self._lock:
            for msg_id, p in list(self._pending.items()):
                failure = self._peers[p.peer].failure
                if failure is not None:
                    failed.append((p, failure))
                elif p.deadline is not None and now > p.deadline:
                    failed.append((p, timeout_message(p.timeout)))
                else:
                    continue
                del self._pending[msg_id]
        for p, why in failed:
            p.future.set_exception(RuntimeError(why))
