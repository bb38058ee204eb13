"""A minimal client of PyTorch's c10d ``TCPStore`` wire protocol, to run under ``torchrun``.

``torchrun``'s agent already hosts a c10d TCPStore on ``MASTER_PORT``, so a disttorch
script started by ``torchrun`` cannot host disttorch's store there. Instead (see
:mod:`..rendezvous`) rank 0 hosts disttorch's own :class:`~.tcp_store.TCPStore` on a free
port and announces its address through the agent's store with this client; the other
ranks read it there. Only what that takes is spoken here: ``VALIDATE`` and ``PING`` (to
check that the port really is a c10d store), ``SET``, ``WAIT`` and ``GET``.

The protocol, as PyTorch 2.x speaks it over one TCP connection: a request is a one-byte
query type followed by its arguments; strings are a little-endian u64 length then the
bytes; keys carry the ``/`` prefix PyTorch's client adds.

==========  ====  ===========================================  ====================
query       code  arguments                                    reply
==========  ====  ===========================================  ====================
VALIDATE    0     u32 magic ``0x3C85F7CE``                     none
SET         1     key, value                                   none
GET         3     key                                          value (u64 + bytes)
WAIT        6     u64 count, keys                              u8 (0: ready)
PING        13    u32 nonce                                    u32 the same nonce
==========  ====  ===========================================  ====================

Nothing is authenticated by this protocol (as in PyTorch): only the address of the
disttorch store travels over it, and connecting to that store needs the job secret
(or, without one, a process on the same host). Whatever listens on the port is not trusted
further: every answer must arrive whole within its time (bytes trickled in one by one do not
stretch it), and a value longer than :data:`~.protocol.MAX_VALUE_BYTES` is refused before
any memory is taken for it.
"""

from __future__ import annotations

import os
import socket
import struct
import time

from ..base.errors import DistNetworkError, DistStoreError
from .protocol import MAX_VALUE_BYTES

__all__ = ["C10dStoreClient"]

_VALIDATE, _SET, _GET, _WAIT, _PING = 0, 1, 3, 6, 13
_MAGIC = 0x3C85F7CE
_KEY_PREFIX = b"/"
#: Most seconds an answer may take once the store has it ready (and at most the client's timeout).
_ANSWER_S = 10.0


def _string(data: bytes) -> bytes:
    return struct.pack("<Q", len(data)) + data


class C10dStoreClient:
    """A connection to a PyTorch c10d ``TCPStore`` (e.g. ``torchrun``'s) at ``host:port``.

    Args:
        host: the store's host (``MASTER_ADDR`` under torchrun).
        port: its port (``MASTER_PORT``).
        timeout: seconds to connect and to wait in :meth:`get`.

    Raises:
        DistNetworkError: the store cannot be reached, or does not answer as a c10d store.
    """

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self._timeout = timeout
        self._where = f"{host}:{port}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._sock = socket.create_connection((host, port), timeout=min(5.0, timeout))
                break
            except OSError as e:
                if time.monotonic() > deadline:
                    raise DistNetworkError(f"cannot reach torchrun's store at {self._where}: {e}") from None
                time.sleep(0.2)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        nonce = os.getpid() & 0xFFFFFFFF
        try:
            self._sock.sendall(struct.pack("<BI", _VALIDATE, _MAGIC) + struct.pack("<BI", _PING, nonce))
            answer = struct.unpack("<I", self._receive(4, min(_ANSWER_S, timeout)))[0]
        except (OSError, DistNetworkError) as e:
            self.close()
            raise DistNetworkError(
                f"the process at {self._where} does not answer as torchrun's c10d store "
                f"({e}); is MASTER_PORT right?"
            ) from None
        if answer != nonce:
            self.close()
            raise DistNetworkError(f"the process at {self._where} does not answer as torchrun's c10d store")

    def set(self, key: str, value: bytes) -> None:
        """Set ``key`` to ``value``."""
        self._send(struct.pack("<B", _SET) + _string(_KEY_PREFIX + key.encode()) + _string(value))

    def get(self, key: str) -> bytes:
        """Wait until ``key`` is set (at most the timeout) and return its value."""
        name = _KEY_PREFIX + key.encode()
        self._send(struct.pack("<BQ", _WAIT, 1) + _string(name))
        try:
            self._receive(1, self._timeout)
        except DistNetworkError as e:
            raise DistStoreError(
                f"torchrun's store at {self._where}: {key!r} was not set within {self._timeout:g} s ({e})"
            ) from None
        self._send(struct.pack("<B", _GET) + _string(name))
        answer_s = min(_ANSWER_S, self._timeout)
        size = struct.unpack("<Q", self._receive(8, answer_s))[0]
        if size > MAX_VALUE_BYTES:
            raise DistStoreError(
                f"torchrun's store at {self._where} answered {key!r} with a value of {size} bytes, "
                f"more than the {MAX_VALUE_BYTES} a store value may have; is MASTER_PORT right?"
            )
        return self._receive(size, answer_s)

    def close(self) -> None:
        """Close the connection."""
        self._sock.close()

    def _send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as e:
            raise DistNetworkError(f"lost torchrun's store at {self._where}: {e}") from None

    def _receive(self, n: int, timeout: float) -> bytes:
        """``n`` bytes, all of them within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        chunks, got = [], 0
        while got < n:
            try:
                self._sock.settimeout(max(1e-3, deadline - time.monotonic()))
                chunk = self._sock.recv(min(n - got, 1 << 16))
            except TimeoutError:
                chunk = None
            except OSError as e:
                raise DistNetworkError(f"no answer from {self._where}: {e}") from None
            if chunk is None:
                raise DistNetworkError(
                    f"no answer from {self._where}: {got} of {n} bytes came within {timeout:g} s"
                )
            if not chunk:
                raise DistNetworkError(f"{self._where} closed the connection")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
