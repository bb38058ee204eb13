"""Posted point-to-point receives of one process group, completed as their messages arrive.

A ``recv``/``irecv`` does not hold the group's communication thread while it waits (as with
gloo, where point-to-point has its own pairs and tags): it is posted here, and whatever
next pumps the group's sockets completes it (a collective's receive loop, a send waiting for
its buffer, or the communication thread itself while it has nothing else to run). So a
thread waiting in ``recv`` holds up no collective another thread issues, nor a ``send``
issued after an ``irecv`` on the same rank.

Receives of one stream (source, tag) complete in the order they were posted; so do an
any-source receive and the receives of one source on its tag.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Callable, Deque

import numpy as np

from ..wire import frames as wire
from ..wire.transport import Transport
from .work import Work

if TYPE_CHECKING:
    from .process_group import _Op

__all__ = ["PostedReceives", "Receive"]


class Receive:
    """One posted receive: into ``out`` from group rank ``peer`` (``None``: any) on ``tag``.
    ``finish(header, work)`` checks and delivers the message once it is in ``out``."""

    __slots__ = ("number", "op", "peer", "tag", "out", "finish", "work")

    def __init__(
        self,
        number: int,
        op: _Op,
        peer: int | None,
        tag: int,
        out: np.ndarray,
        finish: Callable[[wire.Header, Work], None],
        work: Work,
    ) -> None:
        self.number, self.op, self.peer, self.tag = number, op, peer, tag
        self.out, self.finish, self.work = out, finish, work


class PostedReceives:
    """The receives of one group waiting for their message (used under the group's
    execution lock, like its transport)."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._streams: dict[tuple[int | None, int], Deque[Receive]] = {}
        self._posted = 0

    def __bool__(self) -> bool:
        return bool(self._streams)

    def post(self, op: _Op, peer: int | None, tag: int, out: np.ndarray, finish, work: Work) -> None:
        """Post a receive (completed at once if its message is already here). Only the
        streams it can take a message from are looked at: a full :meth:`serve` per post
        made thousands of receives posted beside thousands of stashed messages quadratic."""
        self._posted += 1
        self._streams.setdefault((peer, tag), collections.deque()).append(
            Receive(self._posted, op, peer, tag, out, finish, work)
        )
        t = self._transport
        while self._serve_keys(
            [(peer, tag)] if peer is not None else [(p, tag) for p in t.waiting_from(tag)]
        ):
            pass

    def first(self) -> Receive | None:
        """The receive waiting longest."""
        return min((q[0] for q in self._streams.values()), key=lambda r: r.number, default=None)

    def deadline(self) -> float:
        """The earliest deadline of the posted receives (``time.monotonic()`` seconds)."""
        return min((q[0].op.deadline for q in self._streams.values()), default=float("inf"))

    def serve(self) -> None:
        """Complete every receive whose message the transport has stashed."""
        t = self._transport
        progress = True
        while progress and self._streams:
            if len(self._streams) <= t.stashed():
                keys = [
                    (p, tag)
                    for peer, tag in list(self._streams)
                    for p in ([peer] if peer is not None else t.waiting_from(tag))
                ]
            else:
                keys = t.p2p_waiting()
            progress = self._serve_keys(keys)

    def _serve_keys(self, keys: list[tuple[int, int]]) -> bool:
        """Complete the receives that the messages stashed on ``keys`` (peer, tag) are for;
        whether any was."""
        t, progress = self._transport, False
        for peer, tag in keys:
            r = self._next(peer, tag)
            header = t.take(peer, tag, r.out) if r is not None else None
            if header is None:
                continue
            self._pop(r)
            r.op.heard.add(header.sender)
            try:
                r.finish(header, r.work)
            except Exception as e:  # noqa: BLE001 - concerns this receive only
                r.work._fail(e)
            else:
                r.work._complete()
            progress = True
        return progress

    def check(self, check: Callable[[_Op, int | None, bool], None]) -> None:
        """Fail each receive for which the group's health check ``check(op, peer, p2p)``
        raises (its peer is gone, its deadline passed, a peer reported an error). Within a
        stream the later receives have the same peer and later deadlines: each stream is
        checked from its oldest receive up to the first that passes."""
        for key, q in list(self._streams.items()):
            while q:
                try:
                    check(q[0].op, q[0].peer, True)
                    break
                except Exception as e:  # noqa: BLE001 - handed to the receive's Work
                    q.popleft().work._fail(e)
            if not q:
                del self._streams[key]

    def fail_all(self, error: BaseException) -> None:
        """Fail every posted receive with ``error`` (the group broke or was destroyed)."""
        streams, self._streams = self._streams, {}
        for q in streams.values():
            for r in q:
                r.work._fail(error)

    def _next(self, peer: int, tag: int) -> Receive | None:
        """The receive that the next message from ``peer`` on ``tag`` is for."""
        heads = [q[0] for q in (self._streams.get((peer, tag)), self._streams.get((None, tag))) if q]
        return min(heads, key=lambda r: r.number, default=None)

    def _pop(self, r: Receive) -> None:
        q = self._streams[(r.peer, r.tag)]
        q.popleft()
        if not q:
            del self._streams[(r.peer, r.tag)]
