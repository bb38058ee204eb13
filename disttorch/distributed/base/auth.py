"""Job authentication for the ZeroMQ sockets of disttorch.distributed (store and peers).

Every connection must prove it belongs to the job before anything it sends
reaches the application. The proof is checked inside ZeroMQ's handshake by a
ZAP handler (ZeroMQ's authentication protocol, RFC 27), so a connection
without it is closed before it can deliver a single message.

The secret
    A per-job secret, a hex string in the environment variable
    ``DISTTORCH_JOB_SECRET`` (``disttorch-launch`` generates one per job; for
    multi-node jobs give every node the same one, e.g. from
    ``python -c "import secrets; print(secrets.token_hex(32))"``). A
    ``secret=`` argument overrides the variable.

    Secrets shorter than 128 bits (32 hex digits) are refused.

Mechanisms
    * secret set, peers reached off loopback (a multi-node job; the default there):
      ZeroMQ CURVE with server and client key pairs derived from the secret.
      Traffic is encrypted and authenticated, and a recorded handshake cannot be
      replayed (each CURVE session has fresh short-term keys and a server cookie).
    * secret set, single-host job (``MASTER_ADDR`` on loopback; the default there):
      ZeroMQ PLAIN, user ``disttorch``, password a token derived from the secret with
      HMAC-SHA256 (the secret itself never travels). Only this host's loopback and
      ipc sockets carry it.
    * ``DISTTORCH_ENCRYPT=1`` forces CURVE everywhere; ``DISTTORCH_ENCRYPT=0`` forces
      PLAIN (faster off loopback, but whoever can *observe* the network could reuse
      the token: only on networks you trust).
    * no secret (a process started by hand): NULL mechanism, and only peers on
      this host are accepted: from a loopback address, or over ipc from a process
      of the same user (ZeroMQ reports ipc peers as ``localhost:<uid>:<gid>:<pid>``).
      Multi-node jobs need a secret; so do hosts shared with other users, who can
      reach loopback too (``disttorch-launch`` always sets one).

    Before authenticating, a connection is bounded by the options of the socket it
    reaches (``ZMQ_MAXMSGSIZE``, ``ZMQ_HANDSHAKE_IVL``; see ``transport.py`` and
    ``store/tcp_server.py``).

    The rendezvous store (``TCPStore``) always uses CURVE when a secret is set,
    whatever ``DISTTORCH_ENCRYPT`` says: its messages are few and small.

Use (options apply at ``bind``/``connect`` time, so configure first)::

    server = ctx.socket(zmq.ROUTER)
    auth.configure_server(server, secret)    # before server.bind(...)
    client = ctx.socket(zmq.DEALER)
    auth.configure_client(client, secret)    # before client.connect(...)

``secret`` is what :func:`resolve_secret` returns (bytes, or ``None``). One
ZAP handler thread serves each ZeroMQ context; servers with different secrets
may share a context (each secret gets its own ZAP domain).
:class:`ConnectionWatcher` lets a client notice that a server refused it (and
raise :class:`AuthenticationError` instead of waiting for a timeout) or went away.
"""

from __future__ import annotations

import binascii
import errno
import hashlib
import hmac
import itertools
import logging
import os
import secrets
import struct
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import zmq
from zmq.utils import z85

from .addresses import is_loopback, owns_address
from .errors import AuthenticationError
from .log import RateLimitedLog
from .sockets import new_socket


def parse_monitor_message(frames: list) -> dict:
    """Decode a ZeroMQ socket-monitor event: ``[event id (u16) + value (u32), endpoint]``.

    (pyzmq's own helper lives in a module that imports asyncio, which would add a tenth
    of a second to every rank's start-up.)
    """
    if len(frames) != 2 or len(frames[0]) != 6:
        raise RuntimeError(f"malformed socket monitor message: {frames!r}")
    event, value = struct.unpack("=HI", frames[0])
    return {"event": event, "value": value, "endpoint": frames[1]}


_monitor_ids = itertools.count()


def monitor_socket(socket: zmq.Socket, events: int) -> zmq.Socket:
    """A socket receiving ``socket``'s monitor ``events``, at an address of its own.

    pyzmq's default address is made from the socket's file descriptor, which a socket opened
    just after another one closed can reuse while libzmq is still tearing down the old
    monitor: the new monitor then fails with "Address already in use".
    """
    return socket.get_monitor_socket(
        events, addr=f"inproc://disttorch.monitor.{os.getpid()}.{next(_monitor_ids)}"
    )


__all__ = [
    "ENV_SECRET",
    "ENV_ENCRYPT",
    "AuthenticationError",
    "ConnectionWatcher",
    "configure_client",
    "configure_server",
    "configured_without_secret",
    "encryption_enabled",
    "generate_secret",
    "monitor_socket",
    "resolve_secret",
    "stop_authenticator",
]

ENV_SECRET = "DISTTORCH_JOB_SECRET"
ENV_ENCRYPT = "DISTTORCH_ENCRYPT"
#: Shortest job secret accepted, in bytes (128 bits).
MIN_SECRET_BYTES = 16
PLAIN_USERNAME = b"disttorch"
_ZAP_ENDPOINT = "inproc://zeromq.zap.01"

logger = logging.getLogger("disttorch.distributed.auth")
_rejections = RateLimitedLog(logger)


def raise_descriptor_limit() -> None:
    """Raise this process's soft limit of open files to its hard limit (Linux/Unix).

    Connections waiting to authenticate are dropped after a few seconds, but a flood of them
    can hold many descriptors meanwhile; with the usual soft limit of 1024 the process's own
    files (checkpoints, logs) would then fail to open, and ZeroMQ would spin on ``accept``.
    """
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):
            pass


def generate_secret() -> str:
    """Return a fresh random job secret (64 hex characters) for ``DISTTORCH_JOB_SECRET``."""
    return secrets.token_hex(32)


def resolve_secret(secret: str | bytes | None = None) -> bytes | None:
    """Return the job secret as bytes: ``secret`` if given, else ``DISTTORCH_JOB_SECRET``, else ``None``.

    A string secret must be hex (as :func:`generate_secret` makes); bytes are used as they are.

    Raises:
        ValueError: if the secret is a string that is not hex, or shorter than 128 bits
            (:data:`MIN_SECRET_BYTES`).
    """
    source = "the secret argument"
    if secret is None:
        secret = os.environ.get(ENV_SECRET)
        source = ENV_SECRET
        if secret is None:
            return None
    if isinstance(secret, str):
        try:
            secret = bytes.fromhex(secret.strip())
        except ValueError:
            raise ValueError(
                f'{source} must be a hex string (e.g. from `python -c "import secrets; '
                f'print(secrets.token_hex(32))"`), got {len(secret)} characters that are not hex'
            ) from None
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(
            f"{source} is {len(secret) * 8} bits long; a job secret needs at least {MIN_SECRET_BYTES * 8} bits "
            f'({MIN_SECRET_BYTES * 2} hex digits), e.g. from `python -c "import secrets; '
            f'print(secrets.token_hex(32))"`'
        )
    return bytes(secret)


def encryption_enabled(encrypt: bool | None = None, default: bool = False) -> bool:
    """Whether to use CURVE encryption: ``encrypt`` if given, else ``DISTTORCH_ENCRYPT``
    (``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``), else ``default``."""
    if encrypt is not None:
        return encrypt
    text = os.environ.get(ENV_ENCRYPT, "").strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    return default


def encrypt_connections_at(address: str) -> bool:
    """Whether connections to a socket listening at ``address`` use CURVE: yes off loopback
    (replay-proof and encrypted), no on loopback, unless ``DISTTORCH_ENCRYPT`` says otherwise."""
    return encryption_enabled(default=not is_loopback(address))


def derive_key(secret: bytes, purpose: str) -> bytes:
    """Derive a 32-byte key for ``purpose`` from the job secret (HMAC-SHA256)."""
    return hmac.new(secret, b"disttorch/" + purpose.encode(), hashlib.sha256).digest()


def plain_token(secret: bytes) -> bytes:
    """The PLAIN password proving knowledge of ``secret`` (hex of an HMAC, never the secret)."""
    return binascii.hexlify(derive_key(secret, "zap-plain-password"))


@dataclass(frozen=True)
class CurveKeys:
    """CURVE key pairs derived from a job secret (Z85-encoded, as ZeroMQ takes them)."""

    server_public: bytes
    server_secret: bytes
    client_public: bytes
    client_secret: bytes


def curve_keys(secret: bytes) -> CurveKeys:
    """Derive the server and client CURVE key pairs from ``secret``."""
    if not zmq.has("curve"):
        raise RuntimeError(f"{ENV_ENCRYPT}=1 needs a libzmq built with CURVE support; this one has none")
    server_secret = z85.encode(derive_key(secret, "curve-server"))
    client_secret = z85.encode(derive_key(secret, "curve-client"))
    return CurveKeys(
        zmq.curve_public(server_secret), server_secret, zmq.curve_public(client_secret), client_secret
    )


def _is_local_peer(address: str) -> bool:
    """Whether a ZAP peer address is on this host: a loopback IP or one of this host's own
    addresses (tcp), or an ipc peer of this user (ZeroMQ reports ipc peers as
    ``localhost:<uid>:<gid>:<pid>`` from ``SO_PEERCRED``)."""
    parts = address.split(":")
    if len(parts) == 4 and parts[0] == "localhost":
        return parts[1] == str(os.geteuid())
    return is_loopback(address) or owns_address(address)


@dataclass(frozen=True)
class _Policy:
    """What a ZAP domain accepts: a mechanism and a check on (credentials, peer address)."""

    mechanism: bytes
    accepts: Callable[[list[bytes], str], bool]
    refusal: str  # why a peer failing the check was refused (for the log)


def _policy(secret: bytes | None, encrypt: bool) -> tuple[bytes, _Policy]:
    """Return (ZAP domain, policy) for a server with this secret and encryption choice."""
    if secret is None:
        return b"disttorch/loopback", _Policy(
            b"NULL",
            lambda _creds, address: _is_local_peer(address),
            f"no {ENV_SECRET} is set here, so only peers on this host (loopback or ipc, same user) are "
            "admitted (set it on every node)",
        )
    tag = binascii.hexlify(derive_key(secret, "zap-domain")[:8])
    if encrypt:
        client_public = z85.decode(curve_keys(secret).client_public)

        def check_curve(creds: list[bytes], _address: str) -> bool:  # creds: the client's public key
            return len(creds) == 1 and hmac.compare_digest(creds[0], client_public)

        return b"disttorch/curve/" + tag, _Policy(b"CURVE", check_curve, "its CURVE key is not this job's")
    token = plain_token(secret)

    def check_plain(creds: list[bytes], _address: str) -> bool:  # creds: user name, password
        return len(creds) == 2 and creds[0] == PLAIN_USERNAME and hmac.compare_digest(creds[1], token)

    return b"disttorch/plain/" + tag, _Policy(
        b"PLAIN", check_plain, "its token does not match this job's secret"
    )


class _ZapHandler(threading.Thread):
    """Answers ZAP requests for one ZeroMQ context, applying the policy of each domain."""

    def __init__(self, context: zmq.Context) -> None:
        super().__init__(name="disttorch-zap", daemon=True)
        self._socket = new_socket(context, zmq.REP)
        self._socket.linger = 0
        self._socket.bind(_ZAP_ENDPOINT)
        self._policies: dict[bytes, _Policy] = {}
        self._lock = threading.Lock()
        self._stop_requested = threading.Event()

    def register(self, domain: bytes, policy: _Policy) -> None:
        with self._lock:
            self._policies[domain] = policy

    def stop(self) -> None:
        self._stop_requested.set()
        self.join(timeout=5)

    def run(self) -> None:
        try:
            while not self._stop_requested.is_set():
                if self._socket.poll(100):
                    self._socket.send_multipart(self._answer(self._socket.recv_multipart()))
        except zmq.ContextTerminated:
            pass
        finally:
            self._socket.close(linger=0)

    def _answer(self, request: list[bytes]) -> list[bytes]:
        # ZAP request: version, request id, domain, address, identity, mechanism, credentials...
        if len(request) < 6:
            _rejections.warning("malformed ZAP request with %d frames dropped", len(request))
            return [
                b"1.0",
                request[1] if len(request) > 1 else b"",
                b"500",
                b"malformed ZAP request",
                b"",
                b"",
            ]
        version, request_id, domain, address, _identity, mechanism, *credentials = request
        with self._lock:
            policy = self._policies.get(domain)
        peer = address.decode("ascii", "replace")
        if policy is None:
            ok, reason = False, f"unknown ZAP domain {domain!r}"
        elif mechanism != policy.mechanism:
            ok, reason = (
                False,
                f"mechanism {mechanism.decode('ascii', 'replace')} where {policy.mechanism.decode()} is required",
            )
        else:
            ok = policy.accepts(credentials, peer)
            reason = policy.refusal
        if not ok:
            _rejections.warning("refused connection from %s: %s", peer, reason)
            return [version, request_id, b"400", b"not a member of this job", b"", b""]
        return [version, request_id, b"200", b"OK", b"disttorch", b""]


_handlers: weakref.WeakKeyDictionary[zmq.Context, _ZapHandler] = weakref.WeakKeyDictionary()
_handlers_lock = threading.Lock()


def _handler_for(context: zmq.Context) -> _ZapHandler:
    with _handlers_lock:
        handler = _handlers.get(context)
        if handler is None or not handler.is_alive():
            handler = _ZapHandler(context)
            handler.start()
            _handlers[context] = handler
        return handler


def stop_authenticator(context: zmq.Context) -> None:
    """Stop the ZAP handler thread of ``context`` now, if it has one.

    Optional: ``context.term()`` ends the handler too (it exits when its context terminates).
    """
    with _handlers_lock:
        handler = _handlers.pop(context, None)
    if handler is not None:
        handler.stop()


#: whether this process has made a socket without a job secret (see configured_without_secret)
_configured_without_secret = False


def configured_without_secret() -> bool:
    """Whether this process has configured a socket (a store, a peer) without a job secret:
    processes it starts for the same job must then go without one too (``mp.spawn``)."""
    return _configured_without_secret


def configure_server(socket: zmq.Socket, secret: bytes | None, *, encrypt: bool | None = None) -> None:
    """Make ``socket`` accept only connections proving they belong to the job. Call before ``bind``.

    Args:
        socket: the listening socket (any type: ROUTER, PULL, ...).
        secret: the job secret from :func:`resolve_secret`; ``None`` accepts only loopback peers.
        encrypt: use CURVE (see module docs); ``None`` reads ``DISTTORCH_ENCRYPT``.
    """
    global _configured_without_secret
    _configured_without_secret |= secret is None
    encrypt = encryption_enabled(encrypt) and secret is not None
    domain, policy = _policy(secret, encrypt)
    _handler_for(socket.context).register(domain, policy)
    socket.zap_domain = domain
    if encrypt:
        keys = curve_keys(secret)  # type: ignore[arg-type]
        socket.curve_secretkey = keys.server_secret
        socket.curve_publickey = keys.server_public
        socket.curve_server = True
    elif secret is not None:
        socket.plain_server = True


def configure_client(socket: zmq.Socket, secret: bytes | None, *, encrypt: bool | None = None) -> None:
    """Give ``socket`` the credentials of the job. Call before ``connect``.

    Args:
        socket: the connecting socket.
        secret: the job secret from :func:`resolve_secret`; ``None`` connects without credentials
            (accepted only by servers without a secret, from loopback).
        encrypt: use CURVE (see module docs); ``None`` reads ``DISTTORCH_ENCRYPT``.
    """
    global _configured_without_secret
    if secret is None:
        _configured_without_secret = True
        return
    if encryption_enabled(encrypt):
        keys = curve_keys(secret)
        socket.curve_serverkey = keys.server_public
        socket.curve_publickey = keys.client_public
        socket.curve_secretkey = keys.client_secret
    else:
        socket.plain_username = PLAIN_USERNAME
        socket.plain_password = plain_token(secret)


def missing_secret_message(peer: str) -> str:
    """What to tell a process without a job secret that ``peer`` refused."""
    return (
        f"the {peer} refused this process, which has no {ENV_SECRET}: without a secret only "
        f"processes on the same host (loopback or ipc) are admitted, so a multi-node job needs "
        f"the same {ENV_SECRET} on every process, e.g. export {ENV_SECRET}=$(python -c "
        f'"import secrets; print(secrets.token_hex(32))") on every node (or the other '
        f"processes have a secret and this one lacks it)"
    )


#: Said of a handshake that failed without a reason: it may not be a disttorch store at all.
_OTHER_PROGRAM = (
    "; or that port is used by another program rather than this job's rank 0 (then choose a free MASTER_PORT)"
)

#: Handshake failures that mean the two sides use different mechanisms or keys.
_SECURITY_MISMATCH = frozenset(
    (
        zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH,
        zmq.PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC,
        zmq.PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE,
    )
)

_WATCHED_EVENTS = (
    zmq.EVENT_HANDSHAKE_SUCCEEDED
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_DISCONNECTED
)


#: How long a listener may keep closing connections mid-handshake before that is a refusal (s).
RESET_GRACE = 1.0
_CLOSED = (errno.ECONNRESET, errno.EPIPE)  # the listener closed the connection under the handshake


class ConnectionWatcher:
    """Watches a client socket's connection, so a refusal or a lost server raises instead of waiting.

    Create it before ``connect``; poll :attr:`socket` (the monitor socket) next to
    the client socket and call :meth:`check` when it is readable. :meth:`check`
    raises :class:`AuthenticationError` when the server refuses the handshake and
    returns whether a handshake has succeeded.

    Args:
        socket: the client socket to watch.
        peer: how to name the server in error messages (e.g. ``"store at 10.0.0.1:29500"``).
        has_secret: whether this process connects with a job secret (the advice differs).

    Attributes:
        authenticated: a handshake has succeeded.
        handshakes: how many have (more than one: the connection dropped and came back).
        disconnected_since: ``time.monotonic()`` when the connection dropped after
            authenticating, ``None`` while it is up (ZeroMQ keeps reconnecting meanwhile).
    """

    def __init__(self, socket: zmq.Socket, peer: str, has_secret: bool = True) -> None:
        self._watched = socket
        self.peer = peer
        self.has_secret = has_secret
        self.authenticated = False
        self.handshakes = 0
        self.disconnected_since: float | None = None
        self._reset_since: float | None = None
        self.socket: zmq.Socket | None = monitor_socket(socket, _WATCHED_EVENTS)

    def check(self) -> bool:
        """Read pending connection events; return whether a handshake has succeeded."""
        while self.socket is not None and self.socket.poll(0):
            event = parse_monitor_message(self.socket.recv_multipart())
            kind = event["event"]
            if kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self.authenticated = True
                self.handshakes += 1
                self.disconnected_since = self._reset_since = None
            elif kind == zmq.EVENT_DISCONNECTED:
                if self.authenticated and self.disconnected_since is None:
                    self.disconnected_since = time.monotonic()
            elif self._closed_mid_handshake(event):
                continue  # ZeroMQ reconnects: to the next listener on the port, or it fails again
            elif not self.has_secret and event["value"] != errno.EAGAIN:  # (EAGAIN: no answer at all)
                hint = _OTHER_PROGRAM if kind == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL else ""
                raise AuthenticationError(missing_secret_message(self.peer) + hint)
            elif kind == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                raise AuthenticationError(
                    f"the {self.peer} refused this process's credentials (ZAP status {event['value']}): "
                    f"the job secrets differ. Give every process the same {ENV_SECRET} (hex), "
                    "or leave it unset everywhere for a single-host job"
                )
            elif kind == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL and event["value"] in _SECURITY_MISMATCH:
                raise AuthenticationError(
                    f"the {self.peer} uses other security settings (ZeroMQ protocol error "
                    f"{event['value']:#x}): the job secrets differ, or one side has none. Set the "
                    f"same {ENV_SECRET} and {ENV_ENCRYPT} for every process of the job"
                )
            else:
                raise AuthenticationError(self._no_handshake(event))
        return self.authenticated

    def _closed_mid_handshake(self, event: dict) -> bool:
        """A listener that closed the connection in the middle of the handshake (a store shutting
        down while a rank re-initialising reaches it) is forgiven for :data:`RESET_GRACE`
        seconds; one that keeps doing so is refusing this process."""
        if event["event"] != zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL or event["value"] not in _CLOSED:
            return False
        now = time.monotonic()
        if self._reset_since is None:
            self._reset_since = now
        return now - self._reset_since < RESET_GRACE

    def _no_handshake(self, event: dict) -> str:
        """What to say when the handshake failed without a reason: the listener timed out or
        closed the connection (a program that does not speak ZeroMQ, or other security)."""
        if event["value"] == errno.EAGAIN:  # ZeroMQ's handshake timer ran out: no answer at all
            return (
                f"the {self.peer} did not answer the handshake (ZeroMQ event {event['event']:#x}, "
                f"value {event['value']:#x}: timed out): that process is stalled, overloaded or out "
                "of file descriptors (see its log and `ulimit -n`)" + _OTHER_PROGRAM
            )
        return (
            f"the handshake with the {self.peer} failed (ZeroMQ event {event['event']:#x}, value "
            f"{event['value']:#x}): the job secrets differ, or one side has none (set the same "
            f"{ENV_SECRET} and {ENV_ENCRYPT} for every process of the job)" + _OTHER_PROGRAM
        )

    def close(self) -> None:
        """Stop watching (safe to call more than once)."""
        if self.socket is not None:
            self._watched.disable_monitor()
            self.socket.close(linger=0)
            self.socket = None
