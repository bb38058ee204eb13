"""The posted receives of a group (``engine/receives.py``) over a stand-in transport: many
receives posted beside many stashed messages complete in time linear in their number."""

from __future__ import annotations

import collections
import time
from types import SimpleNamespace

import numpy as np

from disttorch.distributed.engine.receives import PostedReceives


class _Stash:
    """The part of a transport the posted receives use: messages stashed by (peer, tag)."""

    def __init__(self, size: int) -> None:
        self.size, self.messages = size, collections.defaultdict(collections.deque)

    def take(self, peer, tag, out):
        queue = self.messages.get((peer, tag))
        if not queue:
            return None
        header = queue.popleft()
        if not queue:
            del self.messages[(peer, tag)]
        return header

    def waiting_from(self, tag):
        return [p for p in range(self.size) if self.messages.get((p, tag))]

    def p2p_waiting(self):
        return list(self.messages)

    def stashed(self):
        return len(self.messages)


class _Work:
    def __init__(self, done: list) -> None:
        self.done = done

    def _complete(self):
        self.done.append(True)

    def _fail(self, error):
        raise error


def test_receives_posted_beside_thousands_of_stashed_messages_take_linear_time():
    """Each post served every stream: 3,000 receives waiting beside 3,000 messages stashed
    for later receives took seconds (8,000 messages between two ranks sent in the reverse
    order of their receives: 15 s)."""
    n, stash = 3000, _Stash(2)
    for tag in range(n, 2 * n):
        stash.messages[(0, tag)].append(SimpleNamespace(sender=0))
    receives, done = PostedReceives(stash), []
    op = SimpleNamespace(heard=set(), deadline=float("inf"))
    out = np.zeros(1, np.float32)
    start = time.monotonic()
    for tag in range(2 * n):  # the first n wait for messages not here yet
        receives.post(op, 0 if tag % 2 else None, tag, out, lambda header, work: None, _Work(done))
    assert time.monotonic() - start < 0.5
    assert len(done) == n and stash.stashed() == 0
    for tag in range(n):
        stash.messages[(0, tag)].append(SimpleNamespace(sender=0))
    receives.serve()
    assert len(done) == 2 * n and not receives
