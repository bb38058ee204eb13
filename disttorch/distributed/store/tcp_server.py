"""The TCP store server: a ZeroMQ ROUTER socket serving a key-value table from a daemon thread.

The master ``TCPStore`` starts one. Its loop never blocks on a client: a
``get``/``wait`` for a missing key becomes a pending waiter, answered when
the key is set or with a TIMEOUT reply at its deadline.

Defences (every one of them keeps the loop running and memory bounded):

* connections must pass :mod:`disttorch.distributed.base.auth` (ZAP) before any
  message reaches this loop;
* ``zmq.MAXMSGSIZE`` drops any peer sending a frame above the value cap, and
  a small receive high-water mark bounds what each peer may queue;
* every request is validated by :func:`protocol.parse_request`; malformed ones
  are logged (rate-limited, logger ``disttorch.distributed.store``) and dropped,
  with an ERROR reply when the header was readable;
* the table caps keys and bytes, and the number of pending waiters is capped.

The server learns which client each connection carries from its messages, and remembers when
the connection of a client dropped (and no other took its place): ``GONE`` tells a waiting
rank that the process it waits for ended or was cut off, instead of letting it wait out the
timeout.

A failed handshake (a process with another job secret, or none where one is set) is
watched on the server socket. If get/wait requests are still pending
:data:`AUTH_FAILURE_GRACE` seconds later, they are answered with an authentication
error (and so are new ones until another process checks in): the ranks waiting for a
rank that cannot join fail fast instead of waiting out the whole timeout. A wait for
workers that starts only after such a failure (the host was slower than the refused
process) gets the same grace from when it starts, until a wait for workers is met. Once
one is met and none is pending, every process the job waits for has joined: a refused
handshake then comes from an outsider, and is logged and otherwise ignored. (An outsider
who can reach the port during rendezvous can therefore end a job that is still waiting
for a rank; it cannot join it or read it, nor end it once it runs.)
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import zmq

from ..base import auth
from ..base.addresses import endpoint_host
from ..base.errors import DistNetworkError
from ..base.log import RateLimitedLog
from ..base.sockets import new_socket
from . import protocol
from .protocol import CHANGES, Command, ProtocolError, Request, Status
from .recent_replies import REPLY_DROPPED, RecentReplies
from .table import KeyValueTable, StoreFullError

logger = logging.getLogger("disttorch.distributed.store")

#: Most get/wait requests pending at once, and most bytes of keys they may name
#: (requests beyond either are answered with an error).
MAX_WAITERS = 100_000
MAX_WAITING_KEY_BYTES = 64 * 1024 * 1024
#: Queued inbound messages per peer before ZeroMQ stops reading from it.
RECEIVE_HWM = 64
#: An unauthenticated connection that has not finished its handshake is closed after this.
HANDSHAKE_TIMEOUT_MS = 3_000
#: Seconds after a failed handshake before the requests still waiting are failed.
AUTH_FAILURE_GRACE = 2.0
#: Prefix of the ERROR replies that clients raise as ``AuthenticationError``.
AUTH_ERROR_PREFIX = "AUTH: "
#: The ERROR reply a retiring server gives a new client's HELLO (the client tries again,
#: and reaches the server that replaces it on the same port).
RETIRING = "RETIRING: this store is closing; a new one may take its port"
_HANDSHAKE_FAILURES = (
    zmq.EVENT_HANDSHAKE_FAILED_AUTH
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
)
#: Most clients whose dropped connection the server remembers (for ``GONE``); the oldest go first.
MAX_GONE_CLIENTS = 4096
#: How long closing the server may take to deliver the replies it has queued: the last
#: client's acknowledgement must not vanish with the process that hosts the store.
CLOSE_LINGER_MS = 1_000


def _descriptor(frame: zmq.Frame) -> int | None:
    """The socket descriptor of the connection ``frame`` came over (``None`` where libzmq
    does not say: then no client is ever reported gone)."""
    try:
        return frame.get(zmq.SRCFD)
    except zmq.ZMQError:
        return None


@dataclass(eq=False)
class _Waiter:
    """A client's get/wait/wait_workers request that cannot be answered yet."""

    identity: bytes
    request: Request
    deadline: float
    missing: set[bytes] = field(default_factory=set)
    done: bool = False


class StoreServer:
    """Serves a :class:`KeyValueTable` on ``tcp://host:port`` from a daemon thread.

    Args:
        host: the address to bind (see :func:`addresses.listen_address`).
        port: the port; 0 picks a free one (read it back from :attr:`port`).
        secret: the job secret (``auth.resolve_secret``); ``None`` admits loopback peers only.
        encrypt: with a secret, use CURVE rather than PLAIN (see :mod:`disttorch.distributed.base.auth`).
        table: the table to serve (a fresh one by default).
    """

    def __init__(
        self,
        host: str,
        port: int,
        secret: bytes | None,
        encrypt: bool = True,
        table: KeyValueTable | None = None,
    ) -> None:
        self.table = table if table is not None else KeyValueTable()
        self._recent = RecentReplies()  # each client's last change, so a resend is applied once
        self.malformed = 0  # requests dropped as malformed (for tests and diagnostics)
        self._bad_input = RateLimitedLog(logger)
        auth.raise_descriptor_limit()
        self._context = zmq.Context()
        self._socket = new_socket(self._context, zmq.ROUTER)
        self._socket.linger = 0
        self._socket.maxmsgsize = protocol.MAX_VALUE_BYTES + 1024
        self._socket.rcvhwm = RECEIVE_HWM
        self._socket.handshake_ivl = HANDSHAKE_TIMEOUT_MS
        self._socket.router_handover = 1  # a reconnecting client keeps its identity
        self._socket.heartbeat_ivl = protocol.HEARTBEAT_INTERVAL_MS
        self._socket.heartbeat_timeout = protocol.HEARTBEAT_TIMEOUT_MS
        self._socket.ipv6 = ":" in host
        auth.configure_server(self._socket, secret, encrypt=encrypt)
        self._monitor = auth.monitor_socket(self._socket, _HANDSHAKE_FAILURES | zmq.EVENT_DISCONNECTED)
        # which client each connection carries (learnt from its messages), and when the
        # connection of a client dropped without another taking its place: a process that
        # ended (or a host cut off) is told apart from one that never came
        self._client_of: dict[int, bytes] = {}  # socket descriptor -> client id
        self._connection_of: dict[bytes, int] = {}  # client id -> socket descriptor
        self._gone: OrderedDict[bytes, float] = OrderedDict()  # client id -> when it dropped
        self._secret_set = secret is not None
        self._auth_failed_at: float | None = None  # time of a failed handshake not yet acted on
        self._auth_error: str | None = None  # sticky: answer get/wait with this
        self._refusal: str | None = None  # why the last process was refused (None: its handshake failed)
        self._refused_before_all_joined = False  # a handshake failed; no wait for workers met since
        self._all_in = False  # a wait for workers was met and none is pending
        try:
            if port == 0:
                self.port = self._socket.bind_to_random_port(f"tcp://{endpoint_host(host)}")
            else:
                self._socket.bind(f"tcp://{endpoint_host(host)}:{port}")
                self.port = port
        except zmq.ZMQError as error:
            self._close_sockets()
            raise DistNetworkError(
                f"the store cannot listen on {host}:{port}: {error} (another program or job is "
                "using that port: give the job a free MASTER_PORT; TCPStore(port=0) picks one)"
            ) from None
        self.host = host
        self._wake_address = f"inproc://disttorch-store-wake-{id(self)}"
        self._wake = new_socket(self._context, zmq.PAIR)
        self._wake.bind(self._wake_address)
        # made now: close() needs no new descriptor (a process out of them could not close)
        self._waker = new_socket(self._context, zmq.PAIR)
        self._waker.linger = 0
        self._waker.connect(self._wake_address)
        self._waiters: dict[bytes, list[_Waiter]] = {}
        self._worker_waiters: list[_Waiter] = []
        self._deadlines: list[tuple[float, int, _Waiter]] = []
        self._sequence = itertools.count()
        self._pending = 0
        self._waiting_key_bytes = 0
        self._workers = 0
        self._retiring = False
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name=f"disttorch-store-{self.port}", daemon=True)
        self._thread.start()

    def retire(self) -> None:
        """Turn new clients away from now on (its process is about to close it): a process
        that starts a new rendezvous on this port then waits for the store that replaces
        this one instead of joining a store that is about to vanish with its keys."""
        self._retiring = True

    def close(self) -> None:
        """Stop the server thread and release its port. Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        self._waker.send(b"stop")
        self._thread.join(timeout=10)
        self._close_sockets(CLOSE_LINGER_MS)

    def _close_sockets(self, linger_ms: int = 0) -> None:
        monitor = getattr(self, "_monitor", None)
        if monitor is not None:
            self._socket.disable_monitor()
        self._socket.close(linger=linger_ms)
        for sock in (getattr(self, "_wake", None), getattr(self, "_waker", None), monitor):
            if sock is not None:
                sock.close(linger=0)
        self._context.term()  # also ends this context's ZAP handler thread

    # ------------------------------------------------------------------ loop

    def _serve(self) -> None:
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        poller.register(self._wake, zmq.POLLIN)
        poller.register(self._monitor, zmq.POLLIN)
        while True:
            ready = dict(poller.poll(self._poll_timeout_ms()))
            if self._wake in ready:
                return
            if self._monitor in ready:
                self._on_connection_events()
            if self._socket in ready:
                self._drain()
            now = time.monotonic()
            self._expire(now)
            if self._auth_failed_at is not None and now - self._auth_failed_at >= AUTH_FAILURE_GRACE:
                self._fail_waiters_on_auth()

    def _on_connection_events(self) -> None:
        while self._monitor.poll(0):
            message = auth.parse_monitor_message(self._monitor.recv_multipart())
            if message["event"] & _HANDSHAKE_FAILURES:
                self._refused(None)
            elif message["event"] == zmq.EVENT_DISCONNECTED:
                self._dropped(int(message["value"]))

    def _heard_from(self, descriptor: int | None, client: bytes) -> None:
        """A message of ``client`` came over the connection with socket ``descriptor``."""
        if descriptor is not None and self._connection_of.get(client) != descriptor:
            self._client_of[descriptor] = client
            self._connection_of[client] = descriptor
            self._gone.pop(client, None)

    def _dropped(self, descriptor: int) -> None:
        """The connection with socket ``descriptor`` dropped: its client is gone, unless it
        came back over another connection already."""
        client = self._client_of.pop(descriptor, None)
        if client is None or self._connection_of.get(client) != descriptor:
            return
        del self._connection_of[client]
        self._gone[client] = time.monotonic()
        if len(self._gone) > MAX_GONE_CLIENTS:
            self._gone.popitem(last=False)

    def _refused(self, why: str | None) -> None:
        """A process that can never join was turned away: ``why`` (``None``: its handshake
        failed). Before every process joined, the waits still pending a grace later fail."""
        if self._all_in:
            self._bad_input.warning(
                "refused a process after every process of the job joined (%s); the job goes on",
                why or "its handshake failed: another program or an outsider",
            )
            return
        self._refused_before_all_joined = True
        self._refusal = why
        if self._auth_failed_at is None:
            self._auth_failed_at = time.monotonic()

    def _fail_waiters_on_auth(self) -> None:
        """A process was refused a while ago: whoever still waits is probably waiting for that
        process, which can never join. Fail them (and later waits) with a clear error."""
        self._auth_failed_at = None
        if not self._pending:
            return
        need = (
            f"{auth.ENV_SECRET} (the same on every process)"
            if self._secret_set
            else f"the same {auth.ENV_SECRET} on every process: this one has none, and a store without "
            "a secret admits only processes on its host that have none either"
        )
        self._auth_error = (
            f"{AUTH_ERROR_PREFIX}a process failed to authenticate with the store "
            f"(another job secret, none where one is set, or another host); it can never "
            f"join, so this request is failed instead of waiting for it. Set {need}"
            if self._refusal is None
            else f"a process was refused by the store: {self._refusal}. It can never join, so "
            "this request is failed instead of waiting for it"
        )
        for _, _, waiter in list(self._deadlines):
            if not waiter.done:
                self._retire(waiter)
                self._reply(
                    waiter.identity,
                    waiter.request.request_id,
                    Status.ERROR,
                    self._auth_error.encode(),
                    *sorted(waiter.missing),
                )

    def _poll_timeout_ms(self) -> int | None:
        while self._deadlines and self._deadlines[0][2].done:
            heapq.heappop(self._deadlines)
        if self._auth_failed_at is not None:
            return 100
        if not self._deadlines:
            return None
        return max(0, int((self._deadlines[0][0] - time.monotonic()) * 1000) + 1)

    def _drain(self) -> None:
        for _ in range(1000):  # bounded, so deadlines and the stop signal are still seen
            try:
                parts = self._socket.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            frames = [part.bytes for part in parts]
            self._heard_from(_descriptor(parts[0]), frames[0])
            try:
                self._handle(frames)
            except Exception:  # a bug must not kill the store; keep serving the others
                logger.exception("store server failed on a request; the request was dropped")

    def _handle(self, frames: list[bytes]) -> None:
        if len(frames) < 2:
            self._drop(frames[0] if frames else b"", None, "message has no request frames")
            return
        identity, body = frames[0], frames[1:]
        try:
            request = protocol.parse_request(body)
        except ProtocolError as error:
            self._drop(identity, body[0], str(error))
            if isinstance(error, protocol.VersionMismatch):
                self._refused(str(error))
            return
        if request.command in CHANGES:
            self._change(identity, request)
            return
        try:
            self._execute(identity, request)
        except (ValueError, StoreFullError) as error:
            self._reply(identity, request.request_id, Status.ERROR, str(error).encode())

    def _drop(self, identity: bytes, header: bytes | None, reason: str) -> None:
        self.malformed += 1
        self._bad_input.warning(
            "dropped malformed store request from peer %s: %s", identity.hex()[:16], reason
        )
        request_id = protocol.request_id_of(header) if header is not None else None
        if request_id is not None:
            self._reply(identity, request_id, Status.ERROR, f"malformed request: {reason}".encode())

    def _reply(self, identity: bytes, request_id: int, status: Status, *payload: bytes) -> None:
        self._socket.send_multipart([identity, *protocol.encode_reply(request_id, status, *payload)])

    # ------------------------------------------------------------ commands

    def _change(self, identity: bytes, request: Request) -> None:
        """Apply a request that changes the store once: the same request again (its client
        resending it over a connection that came back) gets the reply it got the first time."""
        earlier = self._recent.replay(identity, request.request_id)
        if earlier is REPLY_DROPPED:
            self._reply(
                identity,
                request.request_id,
                Status.ERROR,
                f"{request.command.name} was sent again after a reconnect; it was applied the first "
                "time, but its reply was not kept (the store keeps at most "
                f"{self._recent.max_reply_bytes} bytes of replies to resend)".encode(),
            )
            return
        if earlier is None:
            try:
                status, payload = self._apply(request)
            except (ValueError, StoreFullError) as error:
                status, payload = Status.ERROR, (str(error).encode(),)
            earlier = protocol.encode_reply(request.request_id, status, *payload)
            self._recent.remember(identity, request.request_id, earlier)
        self._socket.send_multipart([identity, *earlier])

    def _apply(self, request: Request) -> tuple[Status, tuple[bytes, ...]]:
        """Carry out one of :data:`CHANGES`, answer the waiters it releases, return its reply."""
        table, command = self.table, request.command
        key = request.keys[0] if request.keys else b""
        if command is Command.SET:
            table.set(key, request.values[0])
            self._key_set(key)
            return Status.OK, ()
        if command is Command.ADD:
            total = table.add(key, request.number)
            self._key_set(key)
            return Status.OK, (protocol.pack_i64(total),)
        if command is Command.APPEND:
            table.append(key, request.values[0])
            self._key_set(key)
            return Status.OK, ()
        if command is Command.COMPARE_SET:
            result = table.compare_set(key, request.values[0], request.values[1])
            if key in table:  # waiters only wait for keys to exist
                self._key_set(key)
            return Status.OK, (result,)
        if command is Command.DELETE:
            return Status.OK, (b"\x01" if table.delete(key) else b"\x00",)
        if self._retiring:  # HELLO
            return Status.ERROR, (RETIRING.encode(),)
        self._workers += 1
        self._auth_error = None  # someone new joined: waiting may be worth it again
        self._workers_changed()
        return Status.OK, ()

    def _execute(self, identity: bytes, request: Request) -> None:
        """Answer a request that only reads, or park it until it can be answered."""
        table, command, rid = self.table, request.command, request.request_id
        key = request.keys[0] if request.keys else b""
        if command is Command.GET:
            value = table.get(key)
            if value is not None:
                self._reply(identity, rid, Status.OK, value)
            else:
                self._park(identity, request, {key})
        elif command is Command.CHECK:
            self._reply(
                identity, rid, Status.OK, b"\x01" if all(k in table for k in request.keys) else b"\x00"
            )
        elif command is Command.WAIT:
            missing = {k for k in request.keys if k not in table}
            if missing:
                self._park(identity, request, missing)
            else:
                self._reply(identity, rid, Status.OK)
        elif command is Command.NUM_KEYS:
            self._reply(identity, rid, Status.OK, protocol.pack_i64(len(table)))
        elif command is Command.GONE:
            now = time.monotonic()
            gone = (self._gone.get(client) for client in request.keys)
            self._reply(
                identity,
                rid,
                Status.OK,
                *(protocol.pack_i64(-1 if when is None else int((now - when) * 1000)) for when in gone),
            )
        elif command is Command.WAIT_WORKERS:
            if self._workers >= request.number:
                self._all_joined()
                self._reply(identity, rid, Status.OK)
            else:
                self._all_in = False
                self._park(identity, request, set())
                if self._refused_before_all_joined and self._auth_failed_at is None:
                    self._auth_failed_at = time.monotonic()  # the refused process may be one of them

    # ------------------------------------------------------------- waiters

    def _park(self, identity: bytes, request: Request, missing: set[bytes]) -> None:
        if self._auth_error is not None:
            self._reply(
                identity, request.request_id, Status.ERROR, self._auth_error.encode(), *sorted(missing)
            )
            return
        if self._pending >= MAX_WAITERS:
            raise StoreFullError(
                f"the store already has its maximum of {MAX_WAITERS} pending get/wait requests"
            )
        key_bytes = sum(map(len, request.keys))
        if self._waiting_key_bytes + key_bytes > MAX_WAITING_KEY_BYTES:
            raise StoreFullError(
                f"pending get/wait requests would name more than {MAX_WAITING_KEY_BYTES} bytes of keys"
            )
        self._waiting_key_bytes += key_bytes
        waiter = _Waiter(identity, request, time.monotonic() + request.timeout_ms / 1000, missing)
        if request.command is Command.WAIT_WORKERS:
            self._worker_waiters.append(waiter)
        for key in missing:
            self._waiters.setdefault(key, []).append(waiter)
        heapq.heappush(self._deadlines, (waiter.deadline, next(self._sequence), waiter))
        self._pending += 1

    def _retire(self, waiter: _Waiter) -> None:
        waiter.done = True
        self._pending -= 1
        self._waiting_key_bytes -= sum(map(len, waiter.request.keys))
        if waiter.request.command is Command.WAIT_WORKERS:
            self._worker_waiters.remove(waiter)
        for key in waiter.request.keys:
            waiting = self._waiters.get(key)
            if waiting is not None and waiter in waiting:
                waiting.remove(waiter)
                if not waiting:
                    del self._waiters[key]

    def _key_set(self, key: bytes) -> None:
        for waiter in list(self._waiters.get(key, ())):
            waiter.missing.discard(key)
            if not waiter.missing:
                self._retire(waiter)
                request = waiter.request
                if request.command is Command.GET:
                    value = self.table.get(key)
                    self._reply(
                        waiter.identity, request.request_id, Status.OK, value if value is not None else b""
                    )
                else:
                    self._reply(waiter.identity, request.request_id, Status.OK)

    def _all_joined(self) -> None:
        """A wait for workers is met: the processes it counted have joined, so a handshake
        refused before now was not one of them and need not cut later waits short."""
        self._refused_before_all_joined = False
        self._auth_failed_at = None
        self._all_in = not any(w.request.number > self._workers for w in self._worker_waiters)

    def _workers_changed(self) -> None:
        for waiter in list(self._worker_waiters):
            if self._workers >= waiter.request.number:
                self._all_joined()
                self._retire(waiter)
                self._reply(waiter.identity, waiter.request.request_id, Status.OK)

    def _expire(self, now: float) -> None:
        while self._deadlines and self._deadlines[0][0] <= now:
            _, _, waiter = heapq.heappop(self._deadlines)
            if waiter.done:
                continue
            self._retire(waiter)
            request = waiter.request
            if request.command is Command.WAIT_WORKERS:
                detail = [f"{self._workers} of {request.number} checked in".encode()]
            else:
                detail = sorted(waiter.missing)
            self._reply(waiter.identity, request.request_id, Status.TIMEOUT, *detail)
