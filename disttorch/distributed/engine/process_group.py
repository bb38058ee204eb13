"""``ProcessGroup``: a set of ranks, its communication thread, and the health of its collectives.

Every operation on a group (collective or point-to-point) is queued, in the order the caller
issues it, to the group's single communication thread, which runs them one after another.
A receive only posts itself there (``engine/receives.py``): it waits for its message without
holding the thread, so collectives and sends issued after it (by its thread or another) go
on, and whatever next pumps the sockets completes it.
The caller's thread only validates arguments and enqueues; a synchronous call then waits
for its :class:`~disttorch.distributed.engine.work.Work`, an ``async_op=True`` call returns it.
(A synchronous call that finds the group idle runs in the caller's thread: same order,
same checks, without the two thread hand-overs, which cost 100-200 us on a busy 2-core
machine. ``run_async_inline`` extends this to asynchronous calls the caller waits on
right away.)
Since every rank issues the same collectives in the same order, the n-th collective of a
group is the same call on every rank: its sequence number ``#n`` is stamped in every message
it sends, together with the op, dtype, element count and root.

While it waits for a peer the communication thread checks, every 0.1 s:

- **Mismatch**: the first message from a peer must carry this rank's seq, op, dtype, size
  and root (:class:`~disttorch.distributed.engine.peer_channel.PeerChannel` compares them). On a
  mismatch the rank raises ``CollectiveMismatchError`` naming both sides and sends the
  text to every peer (an ``ERROR`` message), which raise it too.
- **Dead peers**: a peer whose connection dropped without a goodbye is dead; every pending
  and later operation raises ``PeerDiedError`` naming it.
- **Timeout**: an operation still running after the group's ``timeout`` raises
  ``DistTimeoutError`` naming the collective, the peer it waits for and where every rank is.
- **Mismatch no message shows**: ranks that each wait for the other to send first (a
  ``monitored_barrier`` against an ``all_reduce``, say) see no message. After
  :data:`MISMATCH_PROBE_AFTER` seconds a waiting rank reads the others' progress from the store
  (in the background, so a store that stopped answering holds up nothing) and raises the
  mismatch when a rank is in another collective under the same sequence number.
- **Crossed groups**: two ranks blocked (synchronous calls) in collectives of two groups
  they share, each in the one the other has not called, wait for each other for ever; seen
  in the store's progress for :data:`CROSSED_WAIT` seconds, this is raised as a
  ``CollectiveMismatchError`` naming both groups and ranks. (Issued with ``async_op=True``,
  such collectives complete: each group has its own communication thread.)
- **Stalls**: after ``DISTTORCH_STALL_WARNING`` seconds (default 10) a warning names the
  ranks that are behind. Every rank publishes "the collective I am in / last finished" (or
  the send or receive it waits in, after which collective) in
  the store at most once a second while it is busy, so this costs nothing per collective.

Nothing sent is lost at exit: ZeroMQ sends from its own I/O thread, so when an operation
returns its last messages may still be queued in this process. ``destroy`` (and so the exit
of a script, through ``destroy_process_group`` at exit) waits for them to leave, and while
a group is open ``os._exit`` is wrapped to do the same first (for up to
:data:`EXIT_FLUSH_TIMEOUT` seconds): forked ``multiprocessing`` workers and scripts that end
with ``os._exit`` right after a collective or ``send`` lose nothing.

Threads and processes: a group's collectives are issued by one thread at a time (any
thread, once the previous one's are done); a collective issued while another thread's are
pending raises ``DistBackendError`` naming both and breaks the group on every rank (see
:meth:`ProcessGroup._claim_for_this_thread`). A process forked from the group's own cannot
use it: every call raises at once, and its ``destroy`` only forgets the group.

After a failed collective the group is broken: the error is raised by the failed operation
and by every later call on the group (create a new job, or group, to continue). A failed
send or receive only raises to its caller.
"""

from __future__ import annotations

import collections
import copy
import logging
import os
import queue
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator, NoReturn

import numpy as np
import zmq

from ... import _faults
from ..base.errors import (
    CollectiveMismatchError,
    DistBackendError,
    DistNetworkError,
    DistTimeoutError,
    PeerDiedError,
)
from ..wire import frames as wire
from ..wire.transport import POLL_SLICE, Transport, flush_sent
from .peer_channel import Link, PeerChannel, Signature
from .receives import PostedReceives
from .work import Work

__all__ = ["ProcessGroup", "ENV_STALL_WARNING"]

ENV_STALL_WARNING = "DISTTORCH_STALL_WARNING"
ENV_FAULT = "DISTTORCH_FAULT"
#: Seconds between two publications of a rank's progress in the store.
STATE_INTERVAL = 1.0
#: Seconds a collective waits before this rank reads the others' progress (in the background,
#: then every half :data:`STATE_INTERVAL`) to see whether one is in another collective under the
#: same sequence number: a mismatch no message shows (each waits for the other to send first).
MISMATCH_PROBE_AFTER = 1.0
#: Seconds ``destroy`` waits for the peers' goodbyes (to see a collective they disagreed on).
GOODBYE_WAIT = 0.5
#: How many finished collectives' signatures are kept to name a late mismatch.
RECENT_SIGNATURES = 256
#: Seconds two ranks must be seen blocked in collectives of two groups, each in one the other
#: has not called, before it is reported as the deadlock it is (the progress they publish may
#: be up to :data:`STATE_INTERVAL` old).
CROSSED_WAIT = 2.0
#: Longest poll of the communication thread while receives are posted (how long an operation
#: queued meanwhile may wait for it).
RECEIVE_POLL = 0.02
#: What an operation's ``run`` returns when its Work completes later (a posted receive).
_DEFERRED = object()

logger = logging.getLogger("disttorch.distributed")

# Error classes carried in the ``tag`` field of ERROR messages, so peers re-raise the same type.
_ERROR_CLASSES = (DistBackendError, CollectiveMismatchError, DistTimeoutError, PeerDiedError)


#: Longest ``os._exit`` waits for the messages this process still has queued.
EXIT_FLUSH_TIMEOUT = 5.0
_live_groups: weakref.WeakSet = weakref.WeakSet()
_os_exit = os._exit


def flush_open_groups(timeout: float = EXIT_FLUSH_TIMEOUT) -> None:
    """Close the sockets of every open group of this process and wait (up to ``timeout``
    seconds) until what they had queued has left the process. The groups are unusable after."""
    pid = os.getpid()
    for pg in list(_live_groups):
        t = pg.transport
        if pg._pid == pid and t is not None and not t.closed and pg._exec_lock.acquire(timeout=1.0):
            try:
                t.close(linger=timeout)
            finally:
                pg._exec_lock.release()
    flush_sent(timeout)


def _exit_after_flush(status: int) -> NoReturn:
    """``os._exit`` while a process group is open: first let the queued messages leave."""
    try:
        flush_open_groups()
    finally:
        _os_exit(status)


def _parse(state: bytes | str) -> tuple[int, str, str, bool]:
    """A rank's published progress ``seq|what|phase[|blocked]`` as (seq, what, phase, blocked)."""
    seq, what, phase, *blocked = (state.decode() if isinstance(state, bytes) else state).split("|")
    return int(seq), what, phase, bool(blocked)


def _raise(error: BaseException) -> NoReturn:
    raise error


class _PeerLocalError(Exception):
    """Wraps the failure of a send or receive: it is raised to the caller but, unlike a
    failed collective, leaves the group usable and is not reported to the other ranks."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class _Op:
    """The operation the communication thread is running: what, since when, until when."""

    def __init__(self, seq: int, description: str, timeout: float, stall: float) -> None:
        self.seq = seq
        self.description = description
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.stall_at = self.started + stall
        self.probe_at = self.started + MISMATCH_PROBE_AFTER
        self.heard: set[int] = set()
        self.crossed_since: float | None = None  # since when a crossed-groups deadlock is seen
        #: more health checks of the running collective (the channel's look at the host's board)
        self.watch: Callable[[], None] | None = None


_CALL_TIMEOUT = threading.local()


@contextmanager
def call_timeout(seconds: float | None) -> Iterator[None]:
    """Give the collectives this thread issues in the block ``seconds`` as their timeout
    (``None``: the group's own), as the timeouts of PyTorch's ``ProcessGroup`` methods."""
    before = getattr(_CALL_TIMEOUT, "seconds", None)
    _CALL_TIMEOUT.seconds = seconds
    try:
        yield
    finally:
        _CALL_TIMEOUT.seconds = before


def _call_timeout_seconds() -> float | None:
    return getattr(_CALL_TIMEOUT, "seconds", None)


class ProcessGroup:
    """One group of ranks with its own sockets, sequence numbers and communication thread.

    Args:
        store: the job's rendezvous store.
        rank: this process's rank in the group.
        ranks: global ranks of the members, in group-rank order.
        group_id: the group's id (0 for the default group), equal on every rank.
        timeout: seconds after which an operation raises ``DistTimeoutError``.
        backend: the backend name reported by ``get_backend``.
        prefix: store key prefix for the group's endpoints and progress reports.
        left_for: maps a global rank to the seconds since it left the job (its connection
            to the store dropped for good; ``None`` while it has not): a member that left
            before it published its address is named instead of waited for.
    """

    def __init__(
        self,
        store,
        rank: int,
        ranks: list[int],
        group_id: int,
        timeout: float,
        backend: str = "zmq",
        prefix: str | None = None,
        left_for: Callable[[int], float | None] = lambda rank: None,
    ) -> None:
        self.store = store
        self._rank = rank
        self.ranks = list(ranks)
        self.group_id = group_id
        self.timeout = timeout
        self.backend = backend
        self.prefix = prefix or f"disttorch/pg/{group_id}/"
        self.stall_warning = float(os.environ.get(ENV_STALL_WARNING, "10"))
        self._state = "0|-|idle"
        self._state_published = ""
        self._state_time = 0.0
        self._state_to_publish = ""
        self._state_posted = threading.Event()
        self._publisher: threading.Thread | None = None
        self._probe = False  # the progress thread is to read every rank's progress
        self._seen_states: list[bytes] | None = None  # what it read last
        self._seen_elsewhere: list[tuple[int, ProcessGroup, bytes]] = []  # behind ranks, other groups
        self.store.set(f"{self.prefix}state/{rank}", self._state)
        self.transport = (
            Transport(
                store, self.prefix, rank, len(ranks), group_id, timeout, self.name, self._left(left_for)
            )
            if len(ranks) > 1
            else None
        )
        self._receives = PostedReceives(self.transport) if self.transport is not None else None
        self._receives_checked = 0.0
        self._settled = self._state  # the state to show again when no send or receive is waiting
        self.link = (
            Link(self.transport, self.check, self._receives.serve) if self.transport is not None else None
        )
        self._seq = 0
        self.recent: collections.OrderedDict[int, str] = collections.OrderedDict()  # seq -> signature
        self._error: BaseException | None = None
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._pending = 0  # operations queued or running
        self._pending_lock = threading.Lock()
        self._idle = threading.Condition(self._pending_lock)  # notified when _pending drops
        self._closing = False
        self._exec_lock = threading.Lock()  # held while an operation uses the sockets
        self._caller = threading.local()  # .inline: run_async_inline() is active
        self._current: _Op | None = None
        self._issuers: dict[threading.Thread, int] = {}  # threads with collectives pending
        self._pid = os.getpid()
        _live_groups.add(self)
        if os._exit is not _exit_after_flush:
            os._exit = _exit_after_flush
        self._faults = bool(os.environ.get(ENV_FAULT))
        if self._faults:
            _faults.register_drop_handler(self._on_drop_fault)
        self._thread = threading.Thread(
            target=self._loop, daemon=True, name=f"disttorch-pg{group_id}-rank{ranks[rank]}"
        )
        self._thread.start()

    # ------------------------------------------------------------------ identity
    def rank(self) -> int:
        """This process's rank in the group."""
        return self._rank

    def size(self) -> int:
        """Number of ranks in the group."""
        return len(self.ranks)

    def name(self, group_rank: int) -> str:
        """How messages name a member: its global rank (and group rank in subgroups)."""
        if self.group_id == 0:
            return f"rank {self.ranks[group_rank]}"
        return f"rank {self.ranks[group_rank]} (group {self.group_id} rank {group_rank})"

    def _left(self, left_for: Callable[[int], float | None]) -> Callable[[int], PeerDiedError | None]:
        """The transport's check of a member that left the job before it could connect."""

        def left(group_rank: int) -> PeerDiedError | None:
            seconds = left_for(self.ranks[group_rank])
            if seconds is None:
                return None
            return PeerDiedError(
                f"{self.name(group_rank)} left the job before {self.name(self._rank)} could connect "
                f"to it: its connection to the store dropped {seconds:.0f} s ago and did not come "
                "back (its process ended, was killed or frozen, or its host was cut off; its output or "
                "its launcher says why)",
                self.ranks[group_rank],
            )

        return left

    def __repr__(self) -> str:
        return (
            f"ProcessGroup(id={self.group_id}, rank={self._rank}, ranks={self.ranks}, "
            f"backend={self.backend!r})"
        )

    # ------------------------------------------------------------------ issuing
    def collective(
        self,
        op: str,
        dtype: np.dtype,
        numel: int,
        root: int,
        body: Callable[[PeerChannel], None],
        result: Any = None,
        async_op: bool = False,
        timeout: float | None = None,
        redop: str = "",
    ) -> Work | None:
        """Queue collective ``op`` whose per-rank work is ``body(channel)``.

        ``dtype``, ``numel`` (-1 when ranks may legitimately differ), ``root`` (group
        rank, -1 if none) and ``redop`` (a ``ReduceOp`` name, ``""`` if none) form the
        signature every rank must agree on. ``result`` is what
        ``Work.result()`` returns. Returns the Work if ``async_op``, else waits and returns
        ``None``.
        """
        self._raise_if_broken()
        self._inject_faults()
        sig = Signature(wire.op_code(op), wire.dtype_code(dtype), numel, root, wire.REDOPS.index(redop))
        with self._pending_lock:  # one sequence number per call, taken by one thread at a time
            self._claim_for_this_thread(wire.describe(*sig))
            self._seq += 1
            seq = self._seq
            self.recent[seq] = wire.describe(*sig)
            if len(self.recent) > RECENT_SIGNATURES:
                self.recent.popitem(last=False)
        description = f"{wire.describe(*sig)} #{seq}"
        work = Work(description, result)
        issuer = threading.current_thread()
        work.get_future().add_done_callback(lambda _f: self._release(issuer))
        return self._submit(
            work,
            self._run_collective,
            (seq, sig, description, body, timeout or _call_timeout_seconds() or self.timeout, not async_op),
            async_op,
        )

    def _claim_for_this_thread(self, what: str) -> None:
        """Count a collective issued by the calling thread; raise if another thread's
        collectives on this group are still pending (call with ``_pending_lock`` held).

        Every rank numbers a group's collectives in the order they are issued. Two threads
        issuing concurrently take the numbers in an order that differs between ranks, so
        their collectives pair up wrongly across ranks (same sizes: wrong sums, no error).
        There is no order both sides could agree on without the threads' help, so this is
        refused: the group breaks on every rank (its peers are told), with an error naming
        both threads. The group's own communication thread (callbacks of ``Future.then``)
        is exempt: it runs one operation at a time, in the group's order."""
        me = threading.current_thread()
        if me is self._thread:
            return
        other = next((t for t, n in self._issuers.items() if n and t is not me), None)
        if other is not None:
            error = DistBackendError(
                f"thread {me.name!r} issued {what} on process group {self.group_id} while "
                f"collectives that thread {other.name!r} issued on it are still pending: "
                "the ranks could pair the two threads' collectives in different orders and "
                "give wrong results. Issue a group's collectives from one thread at a time "
                "(wait for the other thread's work first), or give each thread its own group "
                "(new_group)"
            )
            self._pending += 1  # the group breaks after the pending work, on every rank
            self._queue.put((Work(f"refuse {what} from thread {me.name!r}"), _raise, (error,)))
            raise error
        self._issuers[me] = self._issuers.get(me, 0) + 1

    def _release(self, issuer: threading.Thread) -> None:
        """A collective ``issuer`` issued has finished (or failed)."""
        with self._pending_lock:
            left = self._issuers.pop(issuer, 0) - 1
            if left > 0:
                self._issuers[issuer] = left

    def point_to_point(
        self, description: str, body: Callable[[_Op, Work], Any], async_op: bool, result: Any = None
    ) -> Work | None:
        """Queue a send or receive; ``body(op, work)`` runs on the communication thread and may
        record what it learns on ``work`` (it can run before this call returns)."""
        self._raise_if_broken()
        work = Work(description, result)
        return self._submit(work, self._run_p2p, (description, body, work), async_op)

    def post_receive(
        self, description: str, peer: int | None, tag: int, out: np.ndarray, finish, result: Any = None
    ) -> Work:
        """Post a receive into contiguous ``out`` from group rank ``peer`` (``None``: any) on
        ``tag``; ``finish(header, work)`` checks the message once it is in ``out`` (it raises
        to fail the receive). Returns its Work, completed when the message has arrived."""
        self._raise_if_broken()
        work = Work(description, result)
        op_args = (description, peer, tag, out, finish, work)
        return self._submit(work, self._post_receive, op_args, async_op=True)

    def _post_receive(self, description: str, peer: int | None, tag: int, out, finish, work: Work):
        op = _Op(self._seq, description, self.timeout, self.stall_warning)
        self._receives.post(op, peer, tag, out, finish, work)
        self._show_receives()
        if getattr(self._caller, "inline", False):  # run_async_inline: complete it here and now
            while not work.is_completed():
                self._pump_receives(POLL_SLICE)
        return _DEFERRED

    @contextmanager
    def run_async_inline(self) -> Iterator[None]:
        """In this block, ``async_op=True`` operations that this thread issues while the
        group is idle run at once in this thread, like synchronous ones, and return a
        completed Work. For a caller that would wait on them straight away (DDP's last
        bucket): the hand-over to the communication thread and back costs it more than
        the whole exchange of a small buffer."""
        before = getattr(self._caller, "inline", False)
        self._caller.inline = True
        try:
            yield
        finally:
            self._caller.inline = before

    def _submit(self, work: Work, run: Callable[..., None], args: tuple, async_op: bool) -> Work | None:
        """Queue ``run(*args)`` for the communication thread; wait for it unless ``async_op``.

        A synchronous operation issued while nothing is queued or running runs right here
        in the caller's thread instead (holding the group's execution lock, so the
        sockets are still used by one thread at a time, in issue order): this saves the
        two thread hand-overs, 100-200 us per call on a busy 2-core machine. So does an
        asynchronous one inside :meth:`run_async_inline`.
        """
        with self._pending_lock:
            inline = (not async_op or getattr(self._caller, "inline", False)) and self._pending == 0
            self._pending += 1
        if inline:
            try:
                with self._exec_lock:
                    self._execute(work, run, args)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()
        else:
            self._queue.put((work, run, args))
        if async_op:
            return work
        work.wait()
        return None

    def _raise_if_broken(self) -> None:
        if os.getpid() != self._pid:
            raise DistBackendError(
                f"process group {self.group_id} belongs to process {self._pid}, which this process "
                f"({os.getpid()}) was forked from: its connections and communication thread stay "
                "with the parent. Communicate from the parent, or start the child with "
                "multiprocessing's 'spawn' and call init_process_group there"
            )
        if self._error is not None:
            error = copy.copy(self._error)
            error.args = (f"process group {self.group_id} is unusable after an earlier error: {self._error}",)
            raise error from self._error
        if self._closing:
            raise DistBackendError(f"process group {self.group_id} has been destroyed")

    def _inject_faults(self) -> None:
        if self._faults:
            _faults.maybe_inject("collective")

    # ------------------------------------------------------------------ the communication thread
    def _loop(self) -> None:
        while True:
            waiting = bool(self._receives)
            try:
                item = self._queue.get_nowait() if waiting else self._queue.get(timeout=STATE_INTERVAL)
            except queue.Empty:
                if waiting:
                    with self._exec_lock:
                        self._pump_receives(RECEIVE_POLL)
                else:
                    self._publish_state()
                continue
            if item is None:
                return
            with self._exec_lock:
                self._execute(*item)
            item = None  # the operation's buffers go now, not when the next one arrives
            with self._idle:
                self._pending -= 1
                self._idle.notify_all()

    def _execute(self, work: Work, run: Callable[..., None], args: tuple) -> None:
        if self._error is not None:
            work._fail(self._error)
            return
        try:
            deferred = run(*args) is _DEFERRED
        except _PeerLocalError as e:
            work._fail(e.error)
        except BaseException as e:  # noqa: BLE001 - every failure goes to the Work
            self._break(e)
            work._fail(e)
            if self._receives:
                self._receives.fail_all(e)
        else:
            if not deferred:
                work._complete()
        finally:
            self._current = None

    def _pump_receives(self, timeout: float) -> None:
        """While receives are posted and nothing else runs: take in what arrives within
        ``timeout`` seconds, complete the receives it is for, and (every poll slice, and at
        the first deadline) fail those whose peer is gone or whose deadline passed."""
        if self.transport.closed:
            self._receives.fail_all(
                DistNetworkError(f"{self.name(self._rank)} has closed its connections to the group")
            )
        else:
            deadline = self._receives.deadline()
            try:
                self.transport.pump(max(0.0, min(timeout, deadline - time.monotonic())))
            except Exception as e:  # noqa: BLE001 - a damaged stream breaks the group
                self._break(e)
                self._receives.fail_all(e)
                return
            self._receives.serve()
            now = time.monotonic()
            if now >= min(self._receives_checked + POLL_SLICE, deadline):
                self._receives_checked = now
                self._receives.check(self.check)
        self._show_receives()

    def _show_receives(self) -> None:
        """Show the receive waiting longest in this rank's progress, between collectives."""
        if _parse(self._state)[2] == "in":
            return
        first = self._receives.first() if self._receives else None
        if first is None:
            if self._state.endswith("|p2p"):
                self._state = self._settled
            return
        if not self._state.endswith("|p2p"):
            self._settled = self._state
        self._state = f"{self._settled.split('|', 1)[0]}|{first.op.description}|p2p"

    def _run_collective(
        self,
        seq: int,
        sig: Signature,
        description: str,
        body: Callable[[PeerChannel], None],
        timeout: float,
        blocked: bool,
    ) -> None:
        """Run collective ``seq``; ``blocked``: its caller waits for it (a synchronous call)."""
        self._current = op = _Op(seq, description, timeout, self.stall_warning)
        self._set_state(f"{seq}|{description.rsplit(' #', 1)[0]}|in{'|blocked' if blocked else ''}")
        if self.transport is not None:
            if self.transport.closed:
                raise DistNetworkError(
                    f"{self.name(self._rank)} has closed its connections to "
                    f"the group (fault injection 'drop' or destroy); "
                    f"{description} cannot run"
                )
            self.transport.pump(0)
            self.check(op, None)
            self.check_leftovers(seq)
        body(PeerChannel(self.link, self.group_id, self._rank, self.size(), self.name, op, sig, self.recent))
        self._set_state(f"{seq}|{description.rsplit(' #', 1)[0]}|done")

    def _run_p2p(self, description: str, body: Callable[[_Op, Work], Any], work: Work) -> None:
        self._current = op = _Op(self._seq, description, self.timeout, self.stall_warning)
        if not self._state.endswith("|p2p"):  # after the last collective this thread ran
            self._settled = self._state
        self._set_state(f"{self._settled.split('|', 1)[0]}|{description}|p2p")  # a progress report names it
        try:
            body(op, work)
        except Exception as e:  # noqa: BLE001 - concerns this pair of ranks only
            raise _PeerLocalError(e) from e
        finally:
            self._set_state(self._settled)
            self._show_receives()

    def _break(self, error: BaseException) -> None:
        """Mark the group broken and tell the peers why (unless a peer told us)."""
        first = self._error is None
        self._error = self._error or error
        if not first or self.transport is None or self.transport.closed:
            return
        if getattr(error, "from_peer", False):
            return
        cls = next((i for i, c in reversed(list(enumerate(_ERROR_CLASSES))) if isinstance(error, c)), 0)
        seq = self._current.seq if self._current else self._seq
        # For a dead peer, the root field names it (as a group rank) so the error peers raise does too.
        dead = self.ranks.index(error.rank) if isinstance(error, PeerDiedError) else -1
        header = wire.Header(wire.ERROR, self.group_id, seq, cls, 0, 0, dead, -1, 0, self._rank, 0)
        text = f"{error}".encode()
        for peer in range(self.size()):
            if peer != self._rank and peer not in self.transport.gone_peers():
                self.transport.send_control(peer, header, text)

    # ------------------------------------------------------------------ waiting
    def check(self, op: _Op, waiting_for: int | None, p2p: bool = False) -> None:
        """Raise if a peer reported an error or is gone, or the deadline passed; warn on stalls.

        A collective fails when any member died, or when the peer it waits for left the group
        (a peer that left after doing its part of the collective is no reason to fail); a
        point-to-point operation fails only when its peer (any-source: every peer) is gone.
        """
        t = self.transport
        if t.errors:
            header, text = t.errors[0]
            error = _ERROR_CLASSES[header.tag if header.tag < len(_ERROR_CLASSES) else 0]
            exc = (
                error(f"{text} (reported by {self.name(header.sender)})", self.ranks[header.root])
                if error is PeerDiedError
                else error(f"{text} (reported by {self.name(header.sender)})")
            )
            exc.from_peer = True
            raise exc
        gone = t.gone_peers()
        if p2p:
            wanted = {waiting_for} if waiting_for is not None else set(range(self.size())) - {self._rank}
            gone = gone if wanted <= gone.keys() else {}
        else:  # a peer that left in good order did its part; it matters only if we wait for it
            gone = {p: how for p, how in gone.items() if how == "died" or p == waiting_for}
        now = time.monotonic()
        if now >= op.deadline:  # the timeout came first: a peer that then left in order
            gone = {p: how for p, how in gone.items() if how == "died"}  # (its own timeout) is no news
        if gone:
            peer, how = sorted(gone.items())[0]
            stopped = t.stopped_pid(peer) if how == "died" else None
            what = (
                "left the group (destroy_process_group or exit)"
                if how == "left"
                else f"stopped responding: it is stopped by a signal (SIGSTOP, or SIGTSTP: Ctrl-Z; pid "
                f"{stopped}) and runs nothing until it gets SIGCONT"
                if stopped is not None
                else "died or stopped responding (its connection dropped without a goodbye)"
            )
            raise PeerDiedError(
                f"{self.name(peer)} {what}; {self.name(self._rank)} was in "
                f"{op.description}. Check that rank's log or the launcher's "
                "report for why it stopped",
                self.ranks[peer],
            )
        if op.watch is not None:
            op.watch()
        self._publish_state()
        if now >= op.started + MISMATCH_PROBE_AFTER and _parse(self._state)[2] == "in":
            mismatch = self._mismatch(self._seen_states) or self._crossed(op, now)
            if mismatch is not None:
                raise mismatch
            if now >= op.probe_at:
                op.probe_at = now + STATE_INTERVAL / 2
                self._request_probe()
        if now >= op.deadline:
            raise DistTimeoutError(
                f"{op.description} timed out on {self.name(self._rank)} after "
                f"{now - op.started:.1f} s{self._waiting(op, waiting_for)}. "
                f"{self._progress()}"
            )
        if now >= op.stall_at:
            op.stall_at = float("inf")
            progress = self._progress(raise_on_mismatch=op)
            logger.warning(
                "%s on %s has waited %.0f s%s. %s",
                op.description,
                self.name(self._rank),
                now - op.started,
                self._waiting(op, waiting_for),
                progress,
            )

    def check_leftovers(self, seq: int) -> None:
        """Raise ``CollectiveMismatchError`` if a message of a collective before ``seq`` is
        still waiting: its sender disagreed with this rank about that collective (e.g. both
        ranks named themselves the root of a broadcast, so neither received)."""
        h = self.transport.stale(seq) if self.transport is not None else None
        if h is None:
            return
        mine = self.recent.get(h.seq, "another collective")
        raise CollectiveMismatchError(
            f"{self.name(self._rank)} called {mine} #{h.seq} but {self.name(h.sender)} called "
            f"{wire.describe(h.op, h.dtype, h.numel, h.root, h.redop)} #{h.seq}; every rank must issue "
            "the same collectives in the same order with the same dtype, size, root and reduce op"
        )

    def _waiting(self, op: _Op, waiting_for: int | None) -> str:
        silent = [self.name(p) for p in range(self.size()) if p != self._rank and p not in op.heard]
        text = f" waiting for {self.name(waiting_for)}" if waiting_for is not None else ""
        if silent:
            text += f" (not heard from in this operation: {', '.join(silent)})"
        return text

    # ------------------------------------------------------------------ progress in the store
    def _set_state(self, state: str) -> None:
        self._state = state

    def _publish_state(self, wait: bool = False) -> None:
        """Put this rank's progress in the store, at most once per :data:`STATE_INTERVAL`.

        Unless ``wait``, a background thread does the writing: a store whose host is frozen
        or cut off must not hold up the liveness checks of a waiting collective."""
        now = time.monotonic()
        if (
            self._state == self._state_published
            or now - self._state_time < STATE_INTERVAL
            or self._closing
            or self._error is not None
        ):
            return
        self._state_time, self._state_published = now, self._state
        if wait:
            self._store_state(self._state)
            return
        self._state_to_publish = self._state
        self._wake_publisher()

    def _request_probe(self) -> None:
        """Have the progress thread read every rank's progress (into ``_seen_states``)."""
        self._probe = True
        self._wake_publisher()

    def _wake_publisher(self) -> None:
        if self._publisher is None:
            self._publisher = threading.Thread(
                target=self._publish_loop, daemon=True, name=f"disttorch-pg{self.group_id}-progress"
            )
            self._publisher.start()
        self._state_posted.set()

    def _publish_loop(self) -> None:
        published = None
        while not self._closing:
            self._state_posted.wait()
            self._state_posted.clear()
            if self._closing:
                return
            if self._state_to_publish != published:
                published = self._state_to_publish
                self._store_state(published)
            if self._probe:
                self._probe = False
                try:
                    states = self.store.multi_get([f"{self.prefix}state/{r}" for r in range(self.size())])
                    mine = _parse(self._state)[0]
                    behind = [m for m, raw in enumerate(states) if _parse(raw)[0] < mine]
                    where = self._shared_groups(behind)
                    elsewhere = self.store.multi_get([key for _, _, key in where]) if where else []
                    self._seen_states = states
                    self._seen_elsewhere = [(r, pg, raw) for (r, pg, _), raw in zip(where, elsewhere)]
                except Exception as e:  # noqa: BLE001 - progress reports are best effort
                    logger.debug("could not read the ranks' progress: %s", e)

    def _store_state(self, state: str) -> None:
        try:
            self.store.set(f"{self.prefix}state/{self._rank}", state)
        except Exception as e:  # noqa: BLE001 - progress reports are best effort
            logger.debug("could not publish progress: %s", e)

    def _progress(self, raise_on_mismatch: _Op | None = None) -> str:
        """Where every rank is, e.g. "rank 2 is done with all_reduce(...) #41; ranks 0, 1, 3 are
        in ... #42; rank 4 is in recv(float32[8]) from rank 0 tag 0, after #41"."""
        self._state_time = 0.0
        self._publish_state(wait=True)
        try:
            states = self.store.multi_get([f"{self.prefix}state/{r}" for r in range(self.size())])
        except Exception as e:  # noqa: BLE001 - the store may be gone with rank 0
            return f"(progress of the other ranks unknown: {e})"
        mismatch = self._mismatch(states) if raise_on_mismatch is not None else None
        if mismatch is not None:
            raise mismatch
        groups: dict[tuple[int, str, str], list[int]] = {}
        for r, raw in enumerate(states):
            seq, what, phase, _ = _parse(raw)
            groups.setdefault((seq, what, phase), []).append(r)
        mine = _parse(self._state)
        parts = []
        for (seq, what, phase), members in sorted(groups.items()):
            many = len(members) > 1
            who = f"rank{'s' if many else ''} {', '.join(str(self.ranks[m]) for m in members)}"
            if phase == "p2p":  # a send or receive, between two collectives
                after = f"after #{seq}" if seq else "before any collective"
                parts.append(f"{who} {'are' if many else 'is'} in {what}, {after}")
            elif seq == 0:
                parts.append(f"{who} {'have' if many else 'has'} not started a collective")
            else:
                where = "in" if phase == "in" else "done with"
                parts.append(f"{who} {'are' if many else 'is'} {where} {what} #{seq}")
        behind = [m for (seq, _, _), members in groups.items() if seq < mine[0] for m in members]
        return "Progress: " + "; ".join(parts) + self._elsewhere(behind)

    def _mismatch(self, states: list[bytes] | None) -> CollectiveMismatchError | None:
        """The error for a rank whose progress in ``states`` (as the ranks published it) is
        another collective under the sequence number of the one this rank is in, if any. (A
        published state may be old, but a rank's n-th collective stays what it was.)"""
        seq, mine, phase, _ = _parse(self._state)
        if states is None or phase != "in":
            return None
        for r, raw in enumerate(states):
            their_seq, what, their_phase, _ = _parse(raw)
            if their_seq == seq and their_phase == "in" and what != mine:
                return CollectiveMismatchError(
                    f"{self.name(self._rank)} called {mine} #{seq} but {self.name(r)} called {what} "
                    f"#{seq}; every rank must issue the same collectives in the same order"
                )
        return None

    def _shared_groups(self, members: list[int]) -> list[tuple[int, ProcessGroup, str]]:
        """``(global rank, group, store key of its progress there)`` for every other group of
        this process that each of ``members`` (group ranks) belongs to."""
        return [
            (self.ranks[m], pg, f"{pg.prefix}state/{pg.ranks.index(self.ranks[m])}")
            for m in members
            for pg in sorted(_live_groups, key=lambda g: g.group_id)
            if pg is not self and pg.store is self.store and self.ranks[m] in pg.ranks
        ]

    def _crossed(self, op: _Op, now: float) -> CollectiveMismatchError | None:
        """The error for this rank and another being blocked, for :data:`CROSSED_WAIT` seconds,
        in collectives of two groups, each in one the other has not called (from the progress
        the last probe read), after breaking the other group with it too; ``None`` while that
        is not (or not long enough) the case."""
        seq, what, _, blocked = _parse(self._state)
        hit = None
        if blocked and self._seen_states is not None:
            for r, pg, raw in self._seen_elsewhere:
                their_seq, their_what, phase, their_blocked = _parse(raw)
                here = _parse(self._seen_states[self.ranks.index(r)])[0]
                if phase == "in" and their_blocked and their_seq > pg._seq and here < seq:
                    hit = (r, pg, their_what, their_seq)
                    break
        if hit is None:
            op.crossed_since = None
            return None
        op.crossed_since = op.crossed_since or now
        if now - op.crossed_since < CROSSED_WAIT:
            return None
        r, pg, their_what, their_seq = hit
        me = self.ranks[self._rank]
        error = CollectiveMismatchError(
            f"rank {me} is blocked in {what} #{seq} of group {self.group_id}, waiting for rank {r}, "
            f"which is blocked in {their_what} #{their_seq} of group {pg.group_id}, which rank {me} has "
            f"not called: ranks {me} and {r} called the collectives of groups {self.group_id} and "
            f"{pg.group_id} in different orders and wait for each other for ever. Call the "
            "collectives of groups that share ranks in the same order on every rank (or issue "
            "them with async_op=True and wait for them after)"
        )
        pg._break_soon(error)  # the other rank waits in that group: it is told there
        return error

    def _break_soon(self, error: BaseException) -> None:
        """Break this group with ``error`` after its pending work, on every rank."""
        with self._pending_lock:
            self._pending += 1
        self._queue.put((Work(f"break: {error}"), _raise, (error,)))

    def _elsewhere(self, members: list[int]) -> str:
        """The collectives that ``members`` (behind in this group) are in, in the other groups
        of this process that they belong to: e.g. two ranks that each wait in another group."""
        where = self._shared_groups(members)
        try:
            states = self.store.multi_get([key for _, _, key in where])
        except Exception:  # noqa: BLE001 - the store may be gone with rank 0
            return ""
        notes = []
        for (r, pg, _), raw in zip(where, states):
            seq, what, phase, _ = _parse(raw)
            if phase == "in" and seq > pg._seq:  # one this process has not called
                notes.append(f"rank {r} is in {what} #{seq} of group {pg.group_id}")
        if not notes:
            return ""
        return (
            f". Meanwhile {'; '.join(notes)}, which rank {self.ranks[self._rank]} has not called: "
            "ranks must call the collectives of the groups they share in the same order"
        )

    # ------------------------------------------------------------------ shutdown
    def _on_drop_fault(self, fault: Any) -> None:
        """Fault injection ``drop``: close this rank's peer connections without a goodbye."""
        if self.transport is not None:
            self._submit(Work("drop connections"), self.transport.close, (), async_op=False)

    def destroy(self) -> None:
        """Stop the communication thread after the queued work, say goodbye, close sockets.

        In a process forked from the group's own, only forget the group: the sockets and the
        thread are the parent's."""
        _live_groups.discard(self)
        self._closing = True
        if os.getpid() != self._pid:
            return
        self._state_posted.set()  # the progress thread ends
        with self._idle:  # let queued work finish (it is bounded by its own timeout)
            self._idle.wait_for(lambda: self._pending == 0, timeout=self.timeout)
        self._queue.put(None)
        # The idle thread may be inside a progress report to a store whose host has exited;
        # it touches no socket, so it is left to finish on its own (it is a daemon).
        self._thread.join(timeout=0.5)
        if self._faults:
            _faults.unregister_drop_handler(self._on_drop_fault)
        if self._receives:
            with self._exec_lock:
                if not self.transport.closed:
                    self.transport.pump(0)
                    self._receives.serve()
                self._receives.fail_all(
                    DistBackendError(
                        f"process group {self.group_id} was destroyed while this receive waited for its message"
                    )
                )
        if self.transport is not None:
            mismatch = None
            goodbye = wire.Header(wire.BYE, self.group_id, self._seq, 0, 0, 0, -1, -1, 0, self._rank, 0)
            if isinstance(self._error, PeerDiedError) and self._error.rank in self.ranks:
                self.transport.declare_dead(self.ranks.index(self._error.rank))  # no linger for it
            if self._error is None and not self.transport.closed:
                try:  # a message of a finished collective still waiting: the ranks disagreed on it
                    self.transport.say_goodbye(goodbye, GOODBYE_WAIT)
                    self.check_leftovers(self._seq + 1)
                except CollectiveMismatchError as e:
                    mismatch = e
                except zmq.ZMQError:
                    pass
            self.transport.close(goodbye)
            if mismatch is not None:
                raise mismatch
