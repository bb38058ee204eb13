"""Point-to-point messages: ``send``, ``recv``, ``isend``, ``irecv``.

A message carries a user ``tag``: a ``recv`` takes the oldest message from its source with
the same tag, so differently tagged streams between two ranks do not block each other.
Messages between two ranks with the same tag arrive in the order they were sent. The
header's dtype and element count are checked against the receiving tensor: a mismatch
raises naming both sides instead of reinterpreting bytes. Sends and receives run on the
group's communication thread, in order with its collectives; a receive waiting for its
message does not hold that thread up (see ``engine/receives.py``).
"""

from __future__ import annotations

from typing import Any

from .base.errors import DistBackendError
from .engine.work import Work
from .groups import group_rank_of, member_group, peer_global_rank, root_global_rank
from .tensor_io import Flat
from .wire import frames as wire

__all__ = ["send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv"]


def _peer(pg, rank: int | None, what: str) -> int | None:
    if rank is None:
        return None
    peer = group_rank_of(pg, rank, what)
    if peer == pg.rank():
        raise ValueError(
            f"Invalid {what} rank: {what} rank should not be the same as the rank "
            f"of the current process ({rank})."
        )
    return peer


def isend(
    tensor: Any, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None
) -> Work | None:
    """Send ``tensor`` to global rank ``dst`` (or ``group``'s rank ``group_dst``)
    asynchronously; do not modify it before ``wait()``."""
    pg = member_group(group, "isend")
    if pg is None:
        return None
    dst = root_global_rank(pg, dst, group_dst)
    peer = _peer(pg, dst, "destination")
    flat = Flat(tensor, write=False)
    header = wire.Header(
        wire.P2P,
        pg.group_id,
        0,
        int(tag),
        wire.op_code("send"),
        wire.dtype_code(flat.flat.dtype),
        -1,
        flat.flat.size,
        0,
        pg.rank(),
        flat.flat.nbytes,
    )

    def body(op, _work: Work) -> None:
        tracker = pg.transport.send(peer, header, flat.flat)
        if tracker is not None:
            pg.link.wait_sent(op, tracker, peer, p2p=True)

    return pg.point_to_point(
        f"send({flat.flat.dtype}[{flat.flat.size}]) to rank {dst} tag {tag}", body, async_op=True
    )


def irecv(
    tensor: Any, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None
) -> Work | None:
    """Receive into ``tensor`` from global rank ``src`` (or ``group``'s rank ``group_src``;
    any rank if neither) asynchronously.

    ``work.result()`` is ``[tensor]``; the sender's global rank is ``work.source_rank``
    after completion.
    """
    pg = member_group(group, "irecv")
    if pg is None:
        return None
    src = peer_global_rank(pg, src, group_src)
    peer = _peer(pg, src, "source")
    flat = Flat(tensor, read=False)
    tag = int(tag)
    description = (
        f"recv({flat.flat.dtype}[{flat.flat.size}]) from "
        f"{'any rank' if src is None else f'rank {src}'} tag {tag}"
    )

    def finish(h: wire.Header, work: Work) -> None:
        if (h.dtype, h.numel, h.nbytes) != (
            wire.dtype_code(flat.flat.dtype),
            flat.flat.size,
            flat.flat.nbytes,
        ):
            raise DistBackendError(
                f"{pg.name(h.sender)} sent {wire.dtype_of(h.dtype)}[{h.numel}] with tag {tag} but "
                f"{pg.name(pg.rank())} posted {description}; sender and receiver must agree on "
                "dtype and number of elements"
            )
        flat.write_back()
        work.source_rank = pg.ranks[h.sender]

    return pg.post_receive(description, peer, tag, flat.flat, finish, result=[tensor])


def send(tensor: Any, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None) -> None:
    """Send ``tensor`` to global rank ``dst`` (or ``group``'s rank ``group_dst``; returns once
    ``tensor`` may be modified)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor: Any, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor`` from global rank ``src`` (or ``group``'s rank ``group_src``;
    any rank if neither).

    Returns:
        The sender's global rank (-1 on ranks outside ``group``).
    """
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source_rank


class P2POp:
    """One send or receive for :func:`batch_isend_irecv`.

    Args:
        op: :func:`isend` or :func:`irecv`.
        tensor: what to send, or where to receive.
        peer: global rank of the other side.
        group: the process group (default: the default group).
        tag: the message tag.
    """

    def __init__(self, op, tensor: Any, peer: int, group=None, tag: int = 0) -> None:
        if op not in (isend, irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``dist.isend`` or ``dist.irecv``."
            )
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag

    def __repr__(self) -> str:
        return f"P2POp({self.op.__name__}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Issue every send and receive of ``p2p_op_list`` asynchronously; return their Works.

    Sends never wait for the receiver to post its receive, so any order of the list on the
    two sides completes (e.g. every rank sending to its right and receiving from its left).
    """
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("batch_isend_irecv expects a non-empty list of P2POp")
    works = [p.op(p.tensor, p.peer, p.group, p.tag) for p in p2p_op_list]
    return [w for w in works if w is not None]
