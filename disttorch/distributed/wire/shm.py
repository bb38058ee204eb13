"""One shared-memory segment per host, shared by the ranks of a process group that live there.

The segment (what ``algorithms/shm.py`` computes in) holds, for each of the host's ``n``
ranks, one 128-byte control line, a *slot* of two halves of :data:`SLOT_BYTES` each and an
*arena* of :func:`arena_bytes`::

    | line 0 | ... | line n-1 | pad | slot 0 (half 0, half 1) | ... | arena 0 | arena 1 | ... |

Memory therefore grows with the ranks of a host, not with their square, and only the pages
a collective really touches are ever allocated (a fresh segment is all holes).

Arenas: buffers that already live in the segment
    A rank may keep buffers of its own in its arena (:meth:`Board.lease`): DDP's gradient
    buckets, which an all-reduce then reads where they are instead of copying them into
    a slot first (``algorithms/shm.py``). Leases are taken in the same order with the same
    sizes on every rank (one bucket layout for the group), so a buffer sits at the same
    offset of every rank's arena; the all-reduce checks that at its first sync (the
    sync's *tag*). The arena is reserved, not allocated: its pages cost memory only once
    a buffer is written there, memory the buffer would take in the process anyway.

No name, nothing left behind
    The host's first rank (its *leader*) makes the segment with ``memfd_create``: an
    anonymous file that lives only as long as some process holds its descriptor or a
    mapping of it, so no ending (SIGKILL included, with or without the launcher) can
    leave it behind, and no other user can open it. The descriptor reaches the host's
    other ranks over a Unix socket in the *abstract* namespace (no file either) with
    ``SCM_RIGHTS``. Both ends check the other's process id with ``SO_PEERCRED`` (a fact the
    kernel vouches for) against the id that process published in the job's store, which
    only holders of the job secret can write: a process the job does not know gets
    nothing.

Synchronisation: per-rank counters, no lock
    Every rank owns the first word of its control line, a counter that only it writes.
    :meth:`Session.sync` is a barrier: the rank raises its counter to ``c`` and waits
    until every other counter reached ``c``. Before raising it, the rank writes what it
    is doing (a *stamp*: the collective's sequence number and signature) into the record
    ``c % 2`` of its line; after the wait it compares every rank's record ``c % 2`` with
    its own, so ranks in different collectives fail at once instead of reading each
    other's data. (A rank can overwrite record ``c % 2`` only at sync ``c + 2``, which
    it reaches after everyone arrived at ``c + 1``, so after everyone compared at ``c``.)
    Waiting spins a little, then sleeps in the kernel on the late rank's counter (a
    ``futex``: the owner wakes its waiters after each raise), so ranks that outnumber the
    cores do not steal them from the ranks still working. Every :data:`CHECK_EVERY`
    seconds the waiter wakes anyway and calls the caller's ``idle`` hook, which raises
    when a peer died, froze or reported an error, or the deadline passed.

    A rank also writes the stamp of every collective it enters into its line
    (:meth:`Board.announce`), whether or not the collective syncs on the board, so a rank
    waiting for a peer (at a sync or on the sockets) sees at once when that peer is in
    another collective under the same sequence number (:meth:`Session.disagreeing`).

    Counters and data are plain stores to shared memory. On x86 stores are seen by
    other cores in program order, so a rank that sees a counter also sees the data
    written before it; on weaker memory models that needs fences Python cannot issue,
    so :func:`enabled` is false there and collectives use the sockets.

Double buffering
    :meth:`Session.slots` hands out the slots of the next *round*, alternating halves. A
    round writes its own slot, syncs, then reads others' slots. The half of round ``k``
    is written again in round ``k + 2``, after round ``k + 1``'s sync, which no rank
    passes before every rank finished reading round ``k``: one sync per round suffices.

``DISTTORCH_SHM=0`` turns the segment off (the algorithms then go over the sockets).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import secrets
import socket
import struct
import time
from typing import Callable, Sequence

import numpy as np

from ..._process_state import ended

__all__ = [
    "SLOT_BYTES",
    "Board",
    "Session",
    "StampMismatch",
    "TagMismatch",
    "enabled",
    "new_segment",
    "listen",
    "hand_out",
    "fetch",
]

ENV_SHM = "DISTTORCH_SHM"
#: Environment variable: MiB of each rank's arena (read by the host's first rank).
ENV_ARENA = "DISTTORCH_SHM_ARENA_MB"
#: Default MiB of a rank's arena: reserved address space, memory only where written.
ARENA_MB = 256
_ALIGN = 64  # leases start on a cache line
#: Bytes of one half of a rank's slot: the most a rank moves through the segment per round.
SLOT_BYTES = 2 << 20
#: Seconds between two calls of the ``idle`` hook while a rank waits at a sync.
CHECK_EVERY = 0.1
#: Seconds a process of the job has, once connected to the hand-over socket, to name its rank.
HAND_OVER_READ_S = 2.0
_LINE = 128  # one control line per rank: counter, record 0 (3 words), record 1 (3 words), tag,
# then the collective the rank is in now (3 words)
_TAG = 7  # the word of a line holding the tag of a sync: its counter << 32 | the tag
_NOW = 8  # the first of the three words: the stamp of the collective the rank is in now
_PAGE = 4096
_SPINS = 8  # counter reads before sleeping in the kernel: spinning longer takes the CPU
# from the ranks still working whenever ranks outnumber cores
_SYS_FUTEX, _FUTEX_WAIT, _FUTEX_WAKE = 202, 0, 1  # x86-64 Linux
_libc = ctypes.CDLL(None, use_errno=True)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _futex_wait(address: int, expected: int, seconds: float) -> None:
    """Sleep while the 32-bit word at ``address`` holds ``expected`` (at most ``seconds``)."""
    ts = _Timespec(int(seconds), int(seconds % 1 * 1e9))
    _libc.syscall(
        _SYS_FUTEX,
        ctypes.c_void_p(address),
        _FUTEX_WAIT,
        ctypes.c_uint32(expected),
        ctypes.byref(ts),
        None,
        0,
    )


def _futex_wake(address: int) -> None:
    """Wake every process or thread sleeping on the word at ``address``."""
    _libc.syscall(_SYS_FUTEX, ctypes.c_void_p(address), _FUTEX_WAKE, ctypes.c_int(1 << 30), None, None, 0)


#: A stamp: three words every rank must agree on at a sync (e.g. seq, op/dtype/root, numel).
Stamp = tuple[int, int, int]


def enabled() -> bool:
    """Whether ranks of this host may share a segment (``DISTTORCH_SHM``, memfd, x86-64)."""
    return (
        os.environ.get(ENV_SHM, "1") != "0"
        and hasattr(os, "memfd_create")
        and platform.machine().lower() in ("x86_64", "amd64")
    )


def arena_bytes() -> int:
    """Bytes of each rank's arena: ``DISTTORCH_SHM_ARENA_MB`` MiB (default :data:`ARENA_MB`)."""
    text = os.environ.get(ENV_ARENA, str(ARENA_MB)).strip()
    try:
        mib = int(text)
    except ValueError:
        mib = -1
    if mib < 0:
        raise ValueError(f"{ENV_ARENA} must be a whole number of MiB (0 for no arena), got {text!r}")
    return mib << 20


def segment_bytes(size: int, slot_bytes: int = SLOT_BYTES, arena: int = 0) -> int:
    """Bytes of the segment for ``size`` ranks with halves of ``slot_bytes`` and arenas of
    ``arena`` bytes."""
    control = -(-size * _LINE // _PAGE) * _PAGE
    return control + size * (2 * slot_bytes + arena)


class StampMismatch(Exception):
    """Raised by :meth:`Session.sync` when a rank stamped the same sync differently.

    Attributes:
        peer (int): that rank's index on the board.
        theirs (tuple): its stamp; ``mine`` this rank's.
    """

    def __init__(self, peer: int, theirs: Stamp, mine: Stamp) -> None:
        super().__init__(f"board rank {peer} stamped {theirs}, this rank {mine}")
        self.peer, self.theirs, self.mine = peer, theirs, mine


class TagMismatch(Exception):
    """Raised by :meth:`Session.sync` when a rank passed another tag (or none) to the sync.

    Attributes:
        peer (int): that rank's index on the board; ``theirs`` its tag (``None``: it gave
            none to this sync); ``mine`` this rank's.
    """

    def __init__(self, peer: int, theirs: int | None, mine: int) -> None:
        said = "no tag" if theirs is None else f"tag {theirs}"
        super().__init__(
            f"board rank {peer} came to this sync with {said}, this rank with tag {mine}: the "
            "ranks disagree about where the buffer lies in the segment (every rank must keep "
            "it at the same offset of its arena, or none in the arena)"
        )
        self.peer, self.theirs, self.mine = peer, theirs, mine


class Board:
    """The segment as seen by one of the host's ranks.

    Args:
        memory: a writable buffer of :func:`segment_bytes` ``(size, slot_bytes, arena)``
            bytes (a shared mapping between processes; any array between threads); what
            lies beyond the slots is shared out as the ranks' arenas.
        rank (int): this rank's index among the host's ranks.
        size (int): number of ranks on the host.
        slot_bytes (int): bytes of one half of a slot.
    """

    def __init__(self, memory, rank: int, size: int, slot_bytes: int = SLOT_BYTES) -> None:
        raw = np.frombuffer(memory, np.uint8)
        if raw.size < segment_bytes(size, slot_bytes):
            raise ValueError(
                f"a board of {size} ranks needs {segment_bytes(size, slot_bytes)} bytes, got {raw.size}"
            )
        self.rank, self.size, self.slot_bytes = rank, size, slot_bytes
        self.lines = raw[: size * _LINE].view(np.uint64).reshape(size, _LINE // 8)
        start = segment_bytes(size, slot_bytes) - size * 2 * slot_bytes
        self.halves = raw[start : start + size * 2 * slot_bytes].reshape(size, 2, slot_bytes)
        arena = (raw.size - segment_bytes(size, slot_bytes)) // size // _ALIGN * _ALIGN
        start += size * 2 * slot_bytes
        self.arenas = raw[start : start + size * arena].reshape(size, arena)
        self.leases: dict[int, int] = {}  # offset -> bytes of this rank's leases, in its arena
        self.counter = int(self.lines[rank, 0])
        self.round = 0

    def lease(self, nbytes: int) -> np.ndarray | None:
        """``nbytes`` of this rank's arena (``uint8``, cache-line aligned) at the lowest
        offset where they fit, or ``None`` if they do not. Every rank that asks for the
        same sizes in the same order gets the same offsets."""
        at = 0
        for start, size in sorted(self.leases.items()):
            if start - at >= nbytes:
                break
            at = -(-(start + size) // _ALIGN) * _ALIGN
        if nbytes <= 0 or at + nbytes > self.arenas.shape[1]:
            return None
        self.leases[at] = nbytes
        return self.arenas[self.rank, at : at + nbytes]

    def release(self, buf: np.ndarray) -> None:
        """Give back the lease that starts where ``buf`` starts (nothing if none does)."""
        at = self.offset(buf)
        if at is not None:
            self.leases.pop(at, None)

    def offset(self, buf: np.ndarray) -> int | None:
        """Where ``buf`` starts in this rank's arena, if it lies wholly inside it."""
        if self.arenas.size == 0:
            return None
        at = buf.__array_interface__["data"][0] - self.arenas[self.rank].ctypes.data
        return at if 0 <= at and at + buf.nbytes <= self.arenas.shape[1] else None

    def address(self, rank: int) -> int:
        """Memory address of ``rank``'s counter (its low 32 bits are the futex word)."""
        return self.lines.ctypes.data + rank * _LINE

    def announce(self, stamp: Stamp) -> None:
        """Publish ``stamp`` as the collective this rank is in now (sequence number last,
        after a zero, so a reader never takes one collective's sequence number with another's
        signature)."""
        line = self.lines[self.rank]
        line[_NOW] = 0
        line[_NOW + 1] = stamp[1]
        line[_NOW + 2] = stamp[2]
        line[_NOW] = stamp[0]

    def current(self, rank: int) -> Stamp | None:
        """The stamp of the collective board rank ``rank`` is in now (``None``: none yet, or it
        is writing a new one)."""
        line = self.lines[rank]
        seq = int(line[_NOW])
        code, numel = int(line[_NOW + 1]), int(line[_NOW + 2])
        return (seq, code, numel) if seq != 0 and int(line[_NOW]) == seq else None

    def session(self, stamp: Stamp, idle: Callable[[list[int], float], None]) -> "Session":
        """The board for one collective: syncs carry ``stamp``; ``idle(late, waited)`` runs
        every :data:`CHECK_EVERY` seconds of waiting, with the board ranks not there yet and
        the seconds waited so far at this sync (it raises to stop waiting)."""
        return Session(self, stamp, idle)

    def close(self) -> None:
        """Drop this rank's views (the mapping goes once its owner closes it, and leased
        buffers keep it while they live)."""
        del self.lines, self.halves
        self.arenas, self.leases = np.empty((self.size, 0), np.uint8), {}


class Session:
    """What an algorithm sees of the board during one collective (``ch.board``): a sync
    whose stamp differs on another rank raises ``mismatch(peer, their_stamp)``.

    Attributes:
        rank (int), size (int): this rank's index on the host and the host's rank count.
        slot_bytes (int): bytes a rank may put in its slot per round.
    """

    def __init__(self, board: Board, stamp: Stamp, idle: Callable[[list[int], float], None]) -> None:
        self._board, self._stamp, self._idle = board, stamp, idle
        self.rank, self.size, self.slot_bytes = board.rank, board.size, board.slot_bytes
        board.announce(stamp)
        #: ``mismatch(peer, their_stamp)`` makes the exception a disagreeing sync raises
        self.mismatch: Callable[[int, Stamp], Exception] = lambda peer, theirs: StampMismatch(
            peer, theirs, stamp
        )

    def is_late(self, peer: int) -> bool:
        """Whether board rank ``peer`` has not yet reached the sync this rank is at."""
        return int(self._board.lines[peer, 0]) < self._board.counter

    def disagreeing(self) -> tuple[int, Stamp] | None:
        """The first board rank in a collective of this one's sequence number but with another
        signature, and its stamp (``None`` if there is none)."""
        for peer in range(self.size):
            theirs = self._board.current(peer) if peer != self.rank else None
            if theirs is not None and theirs[0] == self._stamp[0] and theirs != self._stamp:
                return peer, theirs
        return None

    def offset(self, buf: np.ndarray) -> int | None:
        """Where ``buf`` starts in this rank's arena, if it lies wholly inside it."""
        return self._board.offset(buf)

    def arena_views(self, at: int, nbytes: int) -> list[np.ndarray]:
        """``nbytes`` at offset ``at`` of every host rank's arena (``uint8``)."""
        return [arena[at : at + nbytes] for arena in self._board.arenas]

    def slots(self) -> list[np.ndarray]:
        """The slots of the next round (one ``uint8`` array per host rank), the other half
        from the previous round's."""
        b = self._board
        half = b.round % 2
        b.round += 1
        return [b.halves[r, half] for r in range(b.size)]

    def sync(self, tag: int | None = None) -> None:
        """Wait until every host rank reached this point; raise ``mismatch(...)`` if one is
        in another collective, or whatever ``idle`` raises while waiting.

        With ``tag`` (below 2**32), every rank must have passed the same tag to this very
        sync (an arena offset, say), else :class:`TagMismatch` names the first that did
        not. Check it before the next sync: a rank may overwrite its tag after that."""
        b = self._board
        c = b.counter + 1
        record = 1 + 3 * (c % 2)
        b.lines[b.rank, record : record + 3] = self._stamp
        if tag is not None:
            b.lines[b.rank, _TAG] = c << 32 | tag
        b.lines[b.rank, 0] = c
        b.counter = c
        _futex_wake(b.address(b.rank))
        self._wait(c)
        stamps = b.lines[:, record : record + 3]
        if not (stamps == stamps[b.rank]).all():
            peer = int(np.flatnonzero((stamps != stamps[b.rank]).any(axis=1))[0])
            raise self.mismatch(peer, tuple(int(x) for x in stamps[peer]))
        if tag is not None:
            tags = b.lines[:, _TAG]
            if not (tags == tags[b.rank]).all():
                peer = int(np.flatnonzero(tags != tags[b.rank])[0])
                theirs = int(tags[peer])
                raise TagMismatch(peer, theirs & 0xFFFFFFFF if theirs >> 32 == c else None, tag)

    def _wait(self, c: int) -> None:
        b = self._board
        counters = b.lines[:, 0]
        for _ in range(_SPINS):
            if counters.min() >= c:
                return
        start = time.monotonic()
        check = start + CHECK_EVERY
        while True:
            late = np.flatnonzero(counters < c)
            if late.size == 0:
                return
            now = time.monotonic()
            if now >= check:
                check = now + CHECK_EVERY
                self._idle([int(r) for r in late], now - start)
            seen = int(counters[late[0]])
            if seen < c:
                _futex_wait(b.address(int(late[0])), seen & 0xFFFFFFFF, max(1e-3, check - now))


# ---------------------------------------------------------------------- the segment's hand-over


def new_segment(size: int, slot_bytes: int = SLOT_BYTES, arena: int = 0) -> tuple[int, mmap.mmap]:
    """Make an anonymous segment for ``size`` ranks (arenas of ``arena`` bytes): its
    descriptor and a mapping of it."""
    fd = os.memfd_create("disttorch-board", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, segment_bytes(size, slot_bytes, arena))
        return fd, mmap.mmap(fd, segment_bytes(size, slot_bytes, arena))
    except BaseException:
        os.close(fd)
        raise


def listen(backlog: int) -> tuple[socket.socket, str]:
    """A Unix socket listening under a random abstract name (no file); the socket and name."""
    name = f"disttorch-{secrets.token_hex(12)}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.bind("\0" + name)
        sock.listen(max(1, backlog))
    except BaseException:
        sock.close()
        raise
    return sock, name


def _peer_pid(conn: socket.socket) -> tuple[int, int]:
    pid, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return pid, uid


def hand_out(
    server: socket.socket, fd: int, pids: dict[int, int], deadline: float, describe: Callable[[int], str]
) -> None:
    """Give descriptor ``fd`` to each process of ``pids`` (rank -> pid) that connects to
    ``server`` and names its rank, if the kernel says it is that pid of this user.

    Raises ``TimeoutError`` naming the ranks that have not come by ``deadline``, or as soon
    as one of them has ended; connections from anyone else are closed unanswered.
    """
    waiting = dict(pids)
    while waiting:
        gone = sorted(r for r, pid in waiting.items() if ended(pid))
        if gone:
            names = ", ".join(f"{describe(r)} (process {waiting[r]})" for r in gone)
            raise TimeoutError(f"{names} ended before it fetched the shared-memory segment")
        left = deadline - time.monotonic()
        server.settimeout(max(0.01, min(left, CHECK_EVERY)))
        try:
            conn, _ = server.accept()
        except socket.timeout:
            if left > CHECK_EVERY:
                continue
            names = ", ".join(describe(r) for r in sorted(waiting))
            raise TimeoutError(f"{names} did not fetch the shared-memory segment") from None
        with conn:
            # The name is visible in /proc/net/unix to every user of the host: a process
            # that is not one of the job's is closed before anything is read from it, and a
            # rank has a short while to name itself, so no connection holds up the others.
            conn.settimeout(max(0.01, min(HAND_OVER_READ_S, deadline - time.monotonic())))
            try:
                pid, uid = _peer_pid(conn)
                if pid not in waiting.values() or uid != os.getuid():
                    continue
                rank = struct.unpack("<i", _recv_exact(conn, 4))[0]
                if waiting.get(rank) == pid:
                    socket.send_fds(conn, [b"ok"], [fd])
                    del waiting[rank]
            except OSError:
                continue  # it went away or lied: it gets nothing


def fetch(name: str, rank: int, leader_pid: int, deadline: float) -> int:
    """Ask the leader listening at abstract ``name`` (process ``leader_pid``) for the
    segment's descriptor, naming this process's ``rank``; return the descriptor."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as conn:
        conn.settimeout(max(0.01, deadline - time.monotonic()))
        conn.connect("\0" + name)
        pid, uid = _peer_pid(conn)
        if pid != leader_pid or uid != os.getuid():
            raise PermissionError(
                f"the shared-memory hand-over socket belongs to process {pid} (user {uid}), "
                f"not to the job's process {leader_pid}"
            )
        conn.sendall(struct.pack("<i", rank))
        _, fds, _, _ = socket.recv_fds(conn, 16, 1)
        if len(fds) != 1:
            raise ConnectionError("the leader closed the hand-over socket without a descriptor")
        return fds[0]


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("hand-over connection closed early")
        data += chunk
    return data


def map_segment(fd: int, size: int, slot_bytes: int = SLOT_BYTES) -> mmap.mmap:
    """Map the segment behind ``fd`` (``size`` ranks; its arenas as its maker sized them)
    and close ``fd``."""
    try:
        length = os.fstat(fd).st_size
        if length < segment_bytes(size, slot_bytes):
            raise ValueError(f"the segment has {length} bytes, too few for {size} ranks")
        return mmap.mmap(fd, length)
    finally:
        os.close(fd)


def host_groups(hosts: Sequence[str]) -> list[list[int]]:
    """Ranks grouped by host key, in order of each host's first rank."""
    groups: dict[str, list[int]] = {}
    for rank, host in enumerate(hosts):
        groups.setdefault(host, []).append(rank)
    return list(groups.values())
