"""The store server's memory of each client's last change, so a resent request is applied once.

A client sends one request at a time, with ids that only grow, from a routing id it keeps
across reconnects. When its connection drops and comes back while a request waits, it sends
the same request (same id) again: the server may or may not have applied it. The server
remembers, per client, the id of the last request that changed the store and the reply it
gave: a request with that id again is answered with the remembered reply instead of being
applied a second time.

Memory is bounded twice: at most :data:`MAX_CLIENTS` clients are remembered (the one silent
longest is forgotten first), and their remembered replies hold at most :data:`MAX_REPLY_BYTES`
bytes (a ``compare_set`` reply can be a 4 MiB value; beyond the cap the oldest replies are
dropped, their ids kept). A resend whose reply was dropped is answered with an error saying
the change was applied, never applied again. A client forgotten altogether (more than
``MAX_CLIENTS`` others changed the store while it was cut off) would have its resend applied
again.
"""

from __future__ import annotations

from collections import OrderedDict

#: Most clients whose last change is remembered.
MAX_CLIENTS = 65_536
#: Most bytes of remembered replies, all clients together.
MAX_REPLY_BYTES = 64 * 1024 * 1024

#: What :meth:`RecentReplies.replay` returns for a repeat whose reply was dropped for space.
REPLY_DROPPED: list[bytes] = []


class RecentReplies:
    """Per client, the id of its last change to the store and the reply frames it got.

    Args:
        max_clients: most clients remembered.
        max_reply_bytes: most bytes of replies remembered, all clients together.
    """

    def __init__(self, max_clients: int = MAX_CLIENTS, max_reply_bytes: int = MAX_REPLY_BYTES) -> None:
        self.max_clients = max_clients
        self.max_reply_bytes = max_reply_bytes
        self._last_id: OrderedDict[bytes, int] = OrderedDict()  # least recent first
        self._replies: OrderedDict[bytes, list[bytes]] = OrderedDict()  # least recent first
        self._reply_bytes = 0

    def __len__(self) -> int:
        return len(self._last_id)

    @property
    def reply_bytes(self) -> int:
        """Bytes of replies remembered now."""
        return self._reply_bytes

    def replay(self, client: bytes, request_id: int) -> list[bytes] | None:
        """The reply already given to ``client``'s request ``request_id``; ``None`` if that
        request is new; :data:`REPLY_DROPPED` if it was applied but its reply was dropped."""
        if self._last_id.get(client) != request_id:
            return None
        return self._replies.get(client, REPLY_DROPPED)

    def remember(self, client: bytes, request_id: int, reply: list[bytes]) -> None:
        """Record that ``client``'s request ``request_id`` changed the store and got ``reply``."""
        self._forget_reply(client)
        self._last_id[client] = request_id
        self._last_id.move_to_end(client)
        self._replies[client] = reply
        self._reply_bytes += sum(map(len, reply))
        while len(self._last_id) > self.max_clients:
            oldest, _ = self._last_id.popitem(last=False)
            self._forget_reply(oldest)
        while self._reply_bytes > self.max_reply_bytes and self._replies:
            self._forget_reply(next(iter(self._replies)))

    def _forget_reply(self, client: bytes) -> None:
        reply = self._replies.pop(client, None)
        if reply is not None:
            self._reply_bytes -= sum(map(len, reply))
