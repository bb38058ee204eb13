"""Shared-memory rings that carry large payloads between ranks on the same host.

For every same-host peer, a rank owns an *outbox*: a file in ``/dev/shm`` (mode 0600, so
only this user can map it) holding a ring of :data:`RING_BYTES` bytes, plus a read counter
the receiving peer advances. A large collective message is copied into the ring and only
its header travels over the ZeroMQ connection (kind ``SHM``, the ring position in the
header's ``tag``); the receiver copies the bytes out and advances the read counter.

Why: over a socket a payload is copied three times (into the kernel, out of it into a
ZeroMQ message, into the destination) by three threads; through the ring it is copied
twice, by the two ranks themselves, and ZeroMQ's I/O threads only see 52-byte headers,
which matters on machines with few cores.

Ordering and flow control: headers still travel in order over the peer's connection, so
messages are received in the order they were sent whatever path their bytes took. A
sender never waits for ring space: a message that does not fit (ring full, or larger than
half the ring) goes over the socket instead. Only collective messages use the ring; they
are consumed in order, so the ring is freed in order.

Setting ``DISTTORCH_SHM=0`` turns the rings off (everything goes over the sockets).
"""

from __future__ import annotations

import mmap
import os
import secrets

import numpy as np

__all__ = ["Outbox", "Inbox", "RING_BYTES", "MIN_BYTES", "enabled"]

#: Size of each ring (one per ordered pair of same-host ranks).
RING_BYTES = 8 << 20
#: Smaller payloads go over the socket (the header alone costs as much).
MIN_BYTES = 64 << 10
_DATA = 4096  # ring data starts one page into the file
_DIR = "/dev/shm"


def enabled() -> bool:
    """Whether shared-memory rings may be used here (``DISTTORCH_SHM`` and ``/dev/shm``)."""
    return os.environ.get("DISTTORCH_SHM", "1") != "0" and os.access(_DIR, os.W_OK)


def new_token() -> str:
    """A random name prefix for this rank's outboxes."""
    return f"disttorch-{os.getpid()}-{secrets.token_hex(8)}"


def path(token: str, receiver: int) -> str:
    return os.path.join(_DIR, f"{token}-to{receiver}")


class _Ring:
    def __init__(self, file: str, create: bool) -> None:
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        fd = os.open(file, flags, 0o600)
        try:
            if create:
                try:  # reserve the pages now: a full /dev/shm must fail here, not as SIGBUS later
                    os.posix_fallocate(fd, 0, _DATA + RING_BYTES)
                except OSError:
                    os.unlink(file)
                    raise
            self._map = mmap.mmap(fd, _DATA + RING_BYTES)
        finally:
            os.close(fd)
        self.counter = np.frombuffer(self._map, np.uint64, 1, 0)  # bytes consumed so far
        self.data = np.frombuffer(self._map, np.uint8, RING_BYTES, _DATA)

    def close(self) -> None:
        del self.counter, self.data
        self._map.close()


class Outbox(_Ring):
    """This rank's ring towards one same-host peer (created here, removed at close)."""

    def __init__(self, token: str, receiver: int) -> None:
        self.file = path(token, receiver)
        super().__init__(self.file, create=True)
        self.written = 0  # bytes written so far (ring position of the next one)

    def put(self, buf: np.ndarray) -> int | None:
        """Copy contiguous ``buf`` into the ring; return its position, or ``None`` if it does
        not fit now (the caller then sends it over the socket)."""
        n = buf.nbytes
        if n > RING_BYTES // 2:
            return None
        pos = self.written
        if pos % RING_BYTES + n > RING_BYTES:  # would wrap: start at the ring's beginning
            pos += RING_BYTES - pos % RING_BYTES
        if pos + n - int(self.counter[0]) > RING_BYTES:
            return None
        start = pos % RING_BYTES
        np.copyto(self.data[start : start + n], buf.reshape(-1).view(np.uint8))
        self.written = pos + n
        return pos

    def close(self) -> None:
        super().close()
        try:
            os.unlink(self.file)
        except FileNotFoundError:
            pass


class Inbox(_Ring):
    """A peer's outbox towards this rank, mapped once the peer has made it (during the
    group's start); the file is unlinked at once, so no ending can leave it behind."""

    def __init__(self, token: str, receiver: int) -> None:
        file = path(token, receiver)
        super().__init__(file, create=False)
        try:
            os.unlink(file)  # both ends have it mapped: nothing is left behind if a rank dies
        except FileNotFoundError:
            pass

    @staticmethod
    def valid(pos: int, nbytes: int) -> bool:
        """Whether a message at ring position ``pos`` of ``nbytes`` bytes lies inside the ring."""
        return 0 <= nbytes <= RING_BYTES // 2 and pos >= 0 and pos % RING_BYTES + nbytes <= RING_BYTES

    def take(self, pos: int, nbytes: int, out: np.ndarray | None) -> None:
        """Copy the ``nbytes`` at ``pos`` into ``out`` (if given) and free their ring space."""
        if out is not None and nbytes:
            start = pos % RING_BYTES
            np.copyto(out.reshape(-1).view(np.uint8), self.data[start : start + nbytes])
        self.counter[0] = pos + nbytes
