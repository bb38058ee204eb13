"""Wire format of the TCP store: bytes only, validated frame by frame, never pickled.

A request is a ZeroMQ multipart message sent by a DEALER client::

    [header] [argument frames ...]
    header = struct "!BBQ": protocol version, command, request id

A reply carries the request id back so a client can discard a late reply to a
request it already gave up on::

    [header] [payload frames ...]
    header = struct "!QB": request id, status

Argument frames by command (keys and values are raw bytes; integers are
big-endian signed 64-bit; timeouts are milliseconds)::

    SET          key, value                 -> (empty)
    GET          key, timeout_ms            -> value          (waits for the key)
    ADD          key, amount                -> new value (i64)
    APPEND       key, value                 -> (empty)
    CHECK        key, key, ...              -> b"\\x01" or b"\\x00"
    WAIT         timeout_ms, key, key, ...  -> (empty)        (waits for all keys)
    COMPARE_SET  key, expected, desired     -> resulting value
    DELETE       key                        -> b"\\x01" or b"\\x00"
    NUM_KEYS     (none)                     -> count (i64)
    HELLO        (none)                     -> (empty)        (a client checks in)
    WAIT_WORKERS count, timeout_ms          -> (empty)        (waits for count check-ins)
    GONE         client id, client id, ...  -> ms since each one's connection dropped (i64;
                                               -1: connected, or never seen)

Status OK carries the payload above; TIMEOUT (a get/wait/wait_workers whose
deadline passed) carries the keys still missing, one per frame, or for
WAIT_WORKERS a message; ERROR carries a UTF-8 message.

A client sends one request at a time, with growing ids, and sends a request again (same id)
over a connection that dropped and came back; the server applies each id of a command in
:data:`CHANGES` once and answers its resend with the first reply (see :mod:`.recent_replies`).

``parse_request`` turns frames into a :class:`Request` or raises
:class:`ProtocolError` naming what was wrong; the server drops such messages.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

PROTOCOL_VERSION = 1

#: Largest value the store accepts (one frame). The server socket's
#: ``zmq.MAXMSGSIZE`` is set just above it, so larger frames never reach Python, and a
#: connection that has not authenticated can make the server hold at most one such frame.
MAX_VALUE_BYTES = 4 * 1024 * 1024
#: Largest key, in bytes (after UTF-8 encoding).
MAX_KEY_BYTES = 4096
#: Most keys one CHECK/WAIT request may name.
MAX_KEYS_PER_REQUEST = 65536
#: Longest a request may ask the server to wait (7 days, in milliseconds).
MAX_TIMEOUT_MS = 7 * 24 * 3600 * 1000
#: Most frames in any request (a WAIT for MAX_KEYS_PER_REQUEST keys, plus header and timeout).
MAX_FRAMES = MAX_KEYS_PER_REQUEST + 2

#: ZeroMQ heartbeats on both ends of a store connection: a peer silent for the
#: timeout (a dead host, a stopped process) is disconnected.
HEARTBEAT_INTERVAL_MS = 500
HEARTBEAT_TIMEOUT_MS = 2500

_REQUEST_HEADER = struct.Struct("!BBQ")
_REPLY_HEADER = struct.Struct("!QB")
_I64 = struct.Struct("!q")


class Command(enum.IntEnum):
    SET = 1
    GET = 2
    ADD = 3
    APPEND = 4
    CHECK = 5
    WAIT = 6
    COMPARE_SET = 7
    DELETE = 8
    NUM_KEYS = 9
    HELLO = 10
    WAIT_WORKERS = 11
    GONE = 12


#: The commands that change the store (HELLO counts a worker): the server applies each request
#: id of a client once, and answers the same request sent again with the same reply.
CHANGES = frozenset(
    (Command.SET, Command.ADD, Command.APPEND, Command.COMPARE_SET, Command.DELETE, Command.HELLO)
)


class Status(enum.IntEnum):
    OK = 0
    TIMEOUT = 1
    ERROR = 2


class ProtocolError(ValueError):
    """A message does not follow the store protocol (the server drops it)."""


class VersionMismatch(ProtocolError):
    """A request of another protocol version: its sender runs another disttorch."""


@dataclass(frozen=True)
class Request:
    """One validated request: command, request id, keys, and the other arguments."""

    command: Command
    request_id: int
    keys: tuple[bytes, ...] = ()
    values: tuple[bytes, ...] = ()
    number: int = 0
    timeout_ms: int = 0


def pack_i64(value: int) -> bytes:
    return _I64.pack(value)


def unpack_i64(frame: bytes, what: str) -> int:
    if len(frame) != _I64.size:
        raise ProtocolError(f"{what} must be {_I64.size} bytes, got {len(frame)}")
    return _I64.unpack(frame)[0]


def encode_request(command: Command, request_id: int, *args: bytes) -> list[bytes]:
    return [_REQUEST_HEADER.pack(PROTOCOL_VERSION, command, request_id), *args]


def encode_reply(request_id: int, status: Status, *payload: bytes) -> list[bytes]:
    return [_REPLY_HEADER.pack(request_id, status), *payload]


def decode_reply(frames: list[bytes]) -> tuple[int, Status, list[bytes]]:
    """Split a reply into (request id, status, payload frames)."""
    if not frames or len(frames[0]) != _REPLY_HEADER.size:
        raise ProtocolError(f"reply header must be {_REPLY_HEADER.size} bytes")
    request_id, status = _REPLY_HEADER.unpack(frames[0])
    try:
        return request_id, Status(status), frames[1:]
    except ValueError:
        raise ProtocolError(f"unknown reply status {status}") from None


# Number of argument frames each command takes (None: variable, checked below).
_ARITY: dict[Command, int | None] = {
    Command.SET: 2,
    Command.GET: 2,
    Command.ADD: 2,
    Command.APPEND: 2,
    Command.CHECK: None,
    Command.WAIT: None,
    Command.COMPARE_SET: 3,
    Command.DELETE: 1,
    Command.NUM_KEYS: 0,
    Command.HELLO: 0,
    Command.WAIT_WORKERS: 2,
    Command.GONE: None,
}


def _key(frame: bytes) -> bytes:
    if not 0 < len(frame) <= MAX_KEY_BYTES:
        raise ProtocolError(f"key must be 1 to {MAX_KEY_BYTES} bytes, got {len(frame)}")
    return frame


def _value(frame: bytes) -> bytes:
    if len(frame) > MAX_VALUE_BYTES:
        raise ProtocolError(f"value must be at most {MAX_VALUE_BYTES} bytes, got {len(frame)}")
    return frame


def _timeout(frame: bytes) -> int:
    timeout_ms = unpack_i64(frame, "timeout")
    if not 0 <= timeout_ms <= MAX_TIMEOUT_MS:
        raise ProtocolError(f"timeout must be 0 to {MAX_TIMEOUT_MS} ms, got {timeout_ms}")
    return timeout_ms


def request_id_of(frame: bytes) -> int | None:
    """The request id in a request header of any protocol version (``None``: no header)."""
    return _REQUEST_HEADER.unpack(frame)[2] if len(frame) == _REQUEST_HEADER.size else None


def parse_header(frame: bytes) -> tuple[Command, int]:
    """Validate a request header; return (command, request id)."""
    if len(frame) != _REQUEST_HEADER.size:
        raise ProtocolError(f"request header must be {_REQUEST_HEADER.size} bytes, got {len(frame)}")
    version, command, request_id = _REQUEST_HEADER.unpack(frame)
    if version != PROTOCOL_VERSION:
        raise VersionMismatch(
            f"store protocol version {version} where the store speaks {PROTOCOL_VERSION}: the "
            "process and the store run different disttorch versions; install the same one "
            "on every host"
        )
    try:
        return Command(command), request_id
    except ValueError:
        raise ProtocolError(f"unknown command byte {command}") from None


def parse_request(frames: list[bytes]) -> Request:
    """Validate the frames of one request (without the router's identity frame)."""
    if not frames or len(frames) > MAX_FRAMES:
        raise ProtocolError(f"a request has 1 to {MAX_FRAMES} frames, got {len(frames)}")
    command, request_id = parse_header(frames[0])
    args = frames[1:]
    arity = _ARITY[command]
    if arity is not None and len(args) != arity:
        raise ProtocolError(f"{command.name} takes {arity} argument frames, got {len(args)}")
    if command in (Command.SET, Command.APPEND):
        return Request(command, request_id, keys=(_key(args[0]),), values=(_value(args[1]),))
    if command is Command.GET:
        return Request(command, request_id, keys=(_key(args[0]),), timeout_ms=_timeout(args[1]))
    if command is Command.ADD:
        return Request(command, request_id, keys=(_key(args[0]),), number=unpack_i64(args[1], "amount"))
    if command in (Command.CHECK, Command.GONE):
        if not args:
            raise ProtocolError(f"{command.name} needs at least one key")
        return Request(command, request_id, keys=tuple(_key(k) for k in args))
    if command is Command.WAIT:
        if len(args) < 2:
            raise ProtocolError("WAIT needs a timeout and at least one key")
        return Request(
            command, request_id, keys=tuple(_key(k) for k in args[1:]), timeout_ms=_timeout(args[0])
        )
    if command is Command.COMPARE_SET:
        return Request(command, request_id, keys=(_key(args[0]),), values=(_value(args[1]), _value(args[2])))
    if command is Command.DELETE:
        return Request(command, request_id, keys=(_key(args[0]),))
    if command is Command.WAIT_WORKERS:
        count = unpack_i64(args[0], "worker count")
        if count < 1:
            raise ProtocolError(f"worker count must be positive, got {count}")
        return Request(command, request_id, number=count, timeout_ms=_timeout(args[1]))
    return Request(command, request_id)  # NUM_KEYS, HELLO
