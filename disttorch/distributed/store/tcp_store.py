"""``TCPStore``: the rendezvous store hosted by one process (rank 0) and reached over ZeroMQ.

The master process runs a :class:`~.tcp_server.StoreServer` in a daemon thread
and is also a client of it. Every client holds one long-lived DEALER socket,
guarded by a lock so threads may share the store. Requests carry an id; a reply
to a request the client already gave up on is recognised and discarded.

A connection that drops and comes back while a request waits may have lost the request or
its reply: the request is sent again, with the same id. The server applies a change
(``set``, ``add``, ``append``, ``compare_set``, ``delete``, ``HELLO``) once per id and answers a
resend with the reply it gave the first time (see :mod:`.recent_replies`), so every request
is applied exactly once across a healed outage; one that the server never saw (a new server
took the port) is applied by the new one. A new client's ``HELLO``
that a retiring server turns away (see :meth:`StoreServer.retire`) is repeated until the
store replacing it answers.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Sequence
from datetime import timedelta

import zmq

from ..base import auth
from ..base.addresses import endpoint_host, listen_address
from ..base.errors import AuthenticationError, DistNetworkError, DistStoreError
from ..base.sockets import new_socket
from . import protocol
from .base import DEFAULT_TIMEOUT, Key, Store, Value, key_bytes, timeout_error, value_bytes
from .protocol import Command, Status
from .tcp_server import AUTH_ERROR_PREFIX, HANDSHAKE_TIMEOUT_MS, RETIRING, StoreServer

logger = logging.getLogger("disttorch.distributed.store")
#: A client still trying to reach the store says so after this many seconds, and every as many after.
CONNECT_NOTICE_S = 10.0

#: Where the master's own client connects when the server listens on all interfaces.
_LOCAL_FOR_ANY = {"0.0.0.0": "127.0.0.1", "::": "::1"}

#: A request fails this long after its connection to the store dropped (if it did not come back).
DISCONNECT_GRACE_S = 2.0

#: Extra time a client waits beyond a get/wait timeout for the server's TIMEOUT reply.
_REPLY_GRACE_S = 10.0

#: Pause between HELLOs while a retiring server turns this client away.
_RETIRING_RETRY_S = 0.05


def _port_of_listening_fd(fd: int, is_master: bool) -> int:
    """The port a listening socket is bound to, the socket closed (the server binds it anew)."""
    if not is_master:
        raise ValueError("master_listen_fd is only used by the master (is_master=True)")
    listener = socket.socket(fileno=fd)
    try:
        return listener.getsockname()[1]
    finally:
        listener.close()


class TCPStore(Store):
    """A key-value store served over TCP by the master process (mirrors ``torch.distributed.TCPStore``).

    Args:
        host_name: the host name or IP address of the master; clients connect there
            and the master listens on it (see :mod:`.addresses`: loopback stays loopback).
        port: the master's port. On the master, 0 picks a free port (see :attr:`port`).
        world_size: the number of processes using the store, master included;
            ``None`` for any number.
        is_master: run the server in this process.
        timeout: how long to wait to connect, for keys in ``get``/``wait``, and for
            all workers to check in.
        wait_for_workers: on the master, wait in the constructor until ``world_size``
            processes have connected.
        multi_tenant: PyTorch's sharing of one server by several stores of a process on one
            port; ``True`` raises ``NotImplementedError``.
        master_listen_fd: on the master, a bound listening socket to serve on: disttorch
            closes it and serves on its port (the port is free for an instant in between).
        use_libuv: accepted (PyTorch's choice of server implementation); read back as
            ``libuvBackend``.
        secret: the job secret (hex string or bytes); defaults to the
            ``DISTTORCH_JOB_SECRET`` environment variable. Without a secret the
            store accepts only loopback connections. With a secret, the store's
            connections always use CURVE encryption (whatever ``DISTTORCH_ENCRYPT``
            says): its messages are small, and a recorded CURVE session cannot be
            replayed. See :mod:`disttorch.distributed.base.auth`.

    Raises:
        DistNetworkError: if the master cannot be reached within ``timeout``.
        AuthenticationError: if the master refuses this process's secret.

    Example::

        >>> server = TCPStore("127.0.0.1", 0, world_size=2, is_master=True, wait_for_workers=False)
        >>> client = TCPStore("127.0.0.1", server.port, world_size=2)
        >>> client.set("first_key", "first_value")
        >>> server.get("first_key")
        b'first_value'
    """

    def __init__(
        self,
        host_name: str,
        port: int,
        world_size: int | None = None,
        is_master: bool = False,
        timeout: timedelta = DEFAULT_TIMEOUT,
        wait_for_workers: bool = True,
        multi_tenant: bool = False,
        master_listen_fd: int | None = None,
        use_libuv: bool = True,
        secret: str | bytes | None = None,
    ) -> None:
        super().__init__(timeout)
        if multi_tenant:
            raise NotImplementedError(
                "TCPStore(multi_tenant=True) is not supported by disttorch: give each store its own "
                "port (or port 0 on the master), or share one TCPStore object"
            )
        #: PyTorch's name for which server implementation runs; disttorch has one (ZeroMQ)
        self.libuvBackend = bool(use_libuv)
        if master_listen_fd is not None:
            port = _port_of_listening_fd(master_listen_fd, is_master)
        if world_size is not None and world_size < 1:
            raise ValueError(f"world_size must be a positive number of processes or None, got {world_size}")
        if not 0 <= port <= 65535 or (port == 0 and not is_master):
            raise ValueError(f"port must be 1..65535 (or 0 on the master to pick one), got {port}")
        secret_bytes = auth.resolve_secret(secret)
        self.host = host_name
        self.world_size = world_size
        encrypt = zmq.has("curve")  # the store always encrypts when it can (see the class docs)
        self._server = (
            StoreServer(listen_address(host_name), port, secret_bytes, encrypt) if is_master else None
        )
        self.port = self._server.port if self._server is not None else port
        connect_host = (
            host_name if self._server is None else _LOCAL_FOR_ANY.get(self._server.host, self._server.host)
        )
        self._lock = threading.Lock()
        self._request_ids = iter(range(1, 1 << 63))
        self._context = zmq.Context()
        self._socket = new_socket(self._context, zmq.DEALER)
        self._socket.linger = 0
        self._id = os.urandom(16)
        self._socket.routing_id = self._id  # stable across reconnects, so replies find us
        self._socket.reconnect_ivl = 100
        self._socket.reconnect_ivl_max = 1000
        self._socket.heartbeat_ivl = protocol.HEARTBEAT_INTERVAL_MS
        self._socket.heartbeat_timeout = protocol.HEARTBEAT_TIMEOUT_MS
        # a listener that is no disttorch store (another program on the port) never finishes
        # the handshake: give up on it as soon as the server gives up on a silent client
        self._socket.handshake_ivl = HANDSHAKE_TIMEOUT_MS
        self._socket.ipv6 = ":" in connect_host
        auth.configure_client(self._socket, secret_bytes, encrypt=encrypt)
        self._watcher = auth.ConnectionWatcher(
            self._socket, f"store at {self._where}", secret_bytes is not None
        )
        # close() from another thread wakes a request blocked in get/wait through this pair
        self._interrupt_address = f"inproc://disttorch-store-client-{id(self)}"
        self._interrupted = new_socket(self._context, zmq.PAIR)
        self._interrupted.bind(self._interrupt_address)
        # made now: close() needs no new descriptor (a process out of them could not close)
        self._interrupter = new_socket(self._context, zmq.PAIR)
        self._interrupter.linger = 0
        self._interrupter.connect(self._interrupt_address)
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        self._poller.register(self._watcher.socket, zmq.POLLIN)
        self._poller.register(self._interrupted, zmq.POLLIN)
        self._closing = False
        self._closed = False
        try:
            self._socket.connect(f"tcp://{endpoint_host(connect_host)}:{self.port}")
            self._hello()
            if is_master and wait_for_workers and world_size is not None:
                self._wait_for_workers(world_size)
        except BaseException:
            self.close()
            raise

    def _hello(self) -> None:
        """Check in with the server; while a retiring one turns us away, try again."""
        deadline = time.monotonic() + self.timeout.total_seconds()
        while True:
            try:
                self._request(Command.HELLO, wait=None, connecting=True)
                return
            except DistStoreError as error:
                if RETIRING not in str(error) or time.monotonic() > deadline:
                    raise
            time.sleep(_RETIRING_RETRY_S)

    def retire(self) -> None:
        """On the master: turn new clients away from now on (see :meth:`StoreServer.retire`)."""
        if self._server is not None:
            self._server.retire()

    def workers_joined(self, world_size: int, timeout: timedelta) -> bool:
        """On the master: wait up to ``timeout`` until ``world_size`` processes have connected;
        return whether they have. (While it waits, a process refused at the handshake fails
        the waiting requests of the job, as described in :mod:`.tcp_server`.)"""
        status, _ = self._request(
            Command.WAIT_WORKERS, protocol.pack_i64(world_size), self._timeout_frame(timeout), wait=timeout
        )
        return status is Status.OK

    def _wait_for_workers(self, world_size: int) -> None:
        status, payload = self._request(
            Command.WAIT_WORKERS,
            protocol.pack_i64(world_size),
            self._timeout_frame(self.timeout),
            wait=self.timeout,
        )
        if status is Status.TIMEOUT:
            detail = payload[0].decode("utf-8", "replace") if payload else ""
            raise DistStoreError(
                f"the store at {self._where} waited {self.timeout.total_seconds():g} s for {world_size} "
                f"processes to connect, but only {detail}; are all ranks started, with the same "
                "MASTER_ADDR, MASTER_PORT and job secret?"
            )

    @property
    def _where(self) -> str:
        return f"{self.host}:{self.port}"

    # ------------------------------------------------------------ API

    def set(self, key: Key, value: Value) -> None:
        self._request(Command.SET, _key(key), _value(value))

    def get(self, key: Key) -> bytes:
        k = _key(key)
        status, payload = self._request(Command.GET, k, self._timeout_frame(self.timeout), wait=self.timeout)
        if status is Status.TIMEOUT:
            raise timeout_error("get", [k], self.timeout)
        return _single(payload, "GET")

    def add(self, key: Key, amount: int) -> int:
        _, payload = self._request(Command.ADD, _key(key), protocol.pack_i64(int(amount)))
        return protocol.unpack_i64(_single(payload, "ADD"), "ADD reply")

    def append(self, key: Key, value: Value) -> None:
        self._request(Command.APPEND, _key(key), _value(value))

    def check(self, keys: Sequence[Key]) -> bool:
        _, payload = self._request(Command.CHECK, *_keys(keys))
        return _single(payload, "CHECK") == b"\x01"

    def wait(self, keys: Sequence[Key], timeout: timedelta | None = None) -> None:
        timeout = self.timeout if timeout is None else timeout
        encoded = _keys(keys)
        status, payload = self._request(Command.WAIT, self._timeout_frame(timeout), *encoded, wait=timeout)
        if status is Status.TIMEOUT:
            raise timeout_error("wait", [k for k in encoded if k in payload] or encoded, timeout)

    def compare_set(self, key: Key, expected_value: Value, desired_value: Value) -> bytes:
        _, payload = self._request(
            Command.COMPARE_SET, _key(key), _value(expected_value), _value(desired_value)
        )
        return _single(payload, "COMPARE_SET")

    def delete_key(self, key: Key) -> bool:
        _, payload = self._request(Command.DELETE, _key(key))
        return _single(payload, "DELETE") == b"\x01"

    def num_keys(self) -> int:
        _, payload = self._request(Command.NUM_KEYS)
        return protocol.unpack_i64(_single(payload, "NUM_KEYS"), "NUM_KEYS reply")

    def client_id(self) -> bytes | None:
        return self._id

    def gone_for(self, client_ids: Sequence[bytes]) -> list[float | None]:
        if not client_ids:
            return []
        _, payload = self._request(Command.GONE, *(_key(c) for c in client_ids))
        if len(payload) != len(client_ids):
            raise DistStoreError(f"GONE reply has {len(payload)} frames for {len(client_ids)} clients")
        ms = [protocol.unpack_i64(frame, "GONE reply") for frame in payload]
        return [None if m < 0 else m / 1000 for m in ms]

    def close(self) -> None:
        """Close this client; on the master, also stop the server. Safe to call more than once.

        A ``get``/``wait`` blocked in another thread raises :class:`DistStoreError` at once.
        """
        if self._closing:
            return
        self._closing = True
        self._interrupter.send(b"")
        with self._lock:
            self._interrupter.close()
            if self._closed:  # another thread's close() got here first
                return
            self._closed = True
            self._watcher.close()
            self._interrupted.close(linger=0)
            self._socket.close(linger=0)
            self._context.term()
        if self._server is not None:
            self._server.close()

    def __repr__(self) -> str:
        role = "master" if self._server is not None else "client"
        return f"TCPStore(host_name={self.host!r}, port={self.port}, world_size={self.world_size}, {role})"

    # ------------------------------------------------------------ plumbing

    @staticmethod
    def _timeout_frame(timeout: timedelta) -> bytes:
        milliseconds = min(int(timeout.total_seconds() * 1000), protocol.MAX_TIMEOUT_MS)
        return protocol.pack_i64(max(0, milliseconds))

    def _request(
        self,
        command: Command,
        *args: bytes,
        wait: timedelta | None = None,
        connecting: bool = False,
    ) -> tuple[Status, list[bytes]]:
        """Send one request and return (status, payload) of its reply; raise on ERROR or no reply.

        ``wait`` is how long the server may hold the request (get/wait); the client
        gives the server that plus a grace period, or the store timeout for others.
        ``connecting`` marks the first request, whose timeout means "never reached".
        """
        patience = wait.total_seconds() + _REPLY_GRACE_S if wait is not None else self.timeout.total_seconds()
        with self._lock:
            if self._closed:
                raise DistStoreError(f"{command.name} on a closed TCPStore ({self._where})")
            request_id = next(self._request_ids)
            self._socket.sndtimeo = max(1, int(patience * 1000))
            frames = protocol.encode_request(command, request_id, *args)
            self._send(command, frames, patience)
            status, payload = self._await_reply(command, request_id, patience, connecting, frames)
        if status is Status.ERROR:
            message = payload[0].decode("utf-8", "replace") if payload else "no reason given"
            if message.startswith(AUTH_ERROR_PREFIX):
                waited = ", ".join(k.decode("utf-8", "replace") for k in payload[1:])
                raise AuthenticationError(
                    message[len(AUTH_ERROR_PREFIX) :]
                    + (f" (this process was waiting for {waited})" if waited else "")
                )
            raise DistStoreError(f"the store at {self._where} refused {command.name}: {message}")
        return status, payload

    def _send(self, command: Command, frames: list[bytes], patience: float) -> None:
        """Send a request within ``patience`` seconds (lock held). ZeroMQ holds a DEALER's
        messages while it has no connection, and a handshake the server refused leaves none:
        meanwhile a refusal raises AuthenticationError, as it does while a reply is awaited
        (a blocking send would wait out ``patience`` and report the store unreachable)."""
        deadline = time.monotonic() + patience
        poller = None
        while True:
            try:
                self._socket.send_multipart(frames, flags=zmq.NOBLOCK)
                return
            except zmq.Again:
                pass
            now = time.monotonic()
            if now >= deadline:
                raise DistNetworkError(
                    f"could not send {command.name} to the store at {self._where} within {patience:g} s"
                )
            if poller is None:
                poller = zmq.Poller()
                poller.register(self._socket, zmq.POLLOUT)
                poller.register(self._watcher.socket, zmq.POLLIN)
            if self._watcher.socket in dict(poller.poll(max(1, int(min(deadline - now, 0.1) * 1000)))):
                self._watcher.check()

    def _await_reply(
        self,
        command: Command,
        request_id: int,
        patience: float,
        connecting: bool,
        frames: list[bytes],
    ) -> tuple[Status, list[bytes]]:
        """Wait up to ``patience`` seconds for the reply to ``request_id`` (lock held).

        Meanwhile: a handshake refusal raises AuthenticationError, a connection lost for
        DISCONNECT_GRACE_S raises DistNetworkError, a connection that came back gets the
        request (``frames``, its id unchanged) again, and close() from another thread raises.
        """
        started = time.monotonic()
        deadline, notice = started + patience, started + CONNECT_NOTICE_S
        self._watcher.check()  # a connection that came back while no request waited is up again
        handshakes = self._watcher.handshakes
        while True:
            now = time.monotonic()
            if connecting and now >= notice < deadline:  # a wait that may last minutes: say why
                logger.warning(
                    "still trying to reach the store at %s after %.0f s (giving up after %g s): is its "
                    "host (rank 0, or node 0's launcher) running, and are MASTER_ADDR/MASTER_PORT right?",
                    self._where,
                    now - started,
                    patience,
                )
                notice += CONNECT_NOTICE_S
            if now >= deadline:
                if connecting:
                    raise DistNetworkError(
                        f"could not reach the store at {self._where} within {patience:g} s: is its "
                        "host running (rank 0; with disttorch-launch --nnodes, node 0's launcher), and "
                        "are MASTER_ADDR/MASTER_PORT (--master-addr/--master-port) right?"
                    )
                raise DistNetworkError(
                    f"the store at {self._where} did not answer {command.name} within {patience:g} s"
                )
            lost = self._watcher.disconnected_since
            if lost is not None and now - lost > DISCONNECT_GRACE_S:
                raise DistNetworkError(
                    f"lost the connection to the store at {self._where} during {command.name} and could not "
                    f"reconnect within {DISCONNECT_GRACE_S:g} s: the process hosting it (rank 0, or the "
                    "launcher's agent) has probably exited, or the network to its host is down"
                )
            ready = dict(self._poller.poll(max(1, int(min(deadline - now, 0.5) * 1000))))
            if self._interrupted in ready:
                raise DistStoreError(f"the TCPStore ({self._where}) was closed during {command.name}")
            if self._watcher.socket in ready:
                self._watcher.check()
                if self._watcher.handshakes > max(handshakes, 1):
                    handshakes = self._watcher.handshakes
                    self._socket.send_multipart(frames)  # the server applies an id once
            if self._socket in ready:
                reply = self._receive(request_id)
                if reply is not None:
                    return reply

    def _receive(self, request_id: int) -> tuple[Status, list[bytes]] | None:
        """Read one reply; return it if it answers ``request_id``, ``None`` for a stale one."""
        frames = self._socket.recv_multipart()
        try:
            reply_id, status, payload = protocol.decode_reply(frames)
        except protocol.ProtocolError as error:
            raise DistStoreError(f"the store at {self._where} sent a malformed reply: {error}") from None
        return (status, payload) if reply_id == request_id else None


def _key(key: Key) -> bytes:
    encoded = key_bytes(key)
    if not 0 < len(encoded) <= protocol.MAX_KEY_BYTES:
        raise ValueError(f"store keys must be 1 to {protocol.MAX_KEY_BYTES} bytes, got {len(encoded)}")
    return encoded


def _keys(keys: Sequence[Key]) -> list[bytes]:
    if isinstance(keys, (str, bytes)):
        raise TypeError(f"expected a list of keys, got a single {type(keys).__name__} {keys!r}")
    encoded = [_key(k) for k in keys]
    if not 0 < len(encoded) <= protocol.MAX_KEYS_PER_REQUEST:
        raise ValueError(f"expected 1 to {protocol.MAX_KEYS_PER_REQUEST} keys, got {len(encoded)}")
    return encoded


def _value(value: Value) -> bytes:
    encoded = value_bytes(value)
    if len(encoded) > protocol.MAX_VALUE_BYTES:
        raise ValueError(f"store values must be at most {protocol.MAX_VALUE_BYTES} bytes, got {len(encoded)}")
    return encoded


def _single(payload: list[bytes], what: str) -> bytes:
    if len(payload) != 1:
        raise DistStoreError(f"malformed {what} reply from the store: {len(payload)} frames, expected 1")
    return payload[0]
