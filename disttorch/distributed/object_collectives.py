"""Collectives of picklable Python objects: ``broadcast_object_list``, ``all_gather_object``,
``gather_object``, ``scatter_object_list``, and their point-to-point pair ``send_object_list``/
``recv_object_list``.

Objects are serialized with cloudpickle (so lambdas and locally defined classes travel too)
into uint8 arrays, which then move through the ordinary tensor collectives: first their
sizes, then the bytes. Unpickling runs code chosen by the sender, which is safe here only
because every peer connection has been authenticated with the job secret before any of its
frames is read (``base/auth.py``, ``wire/transport.py``): never use these with untrusted peers.
"""

from __future__ import annotations

import pickle
from typing import Any

import cloudpickle
import numpy as np

from . import collectives as c
from . import p2p
from .comm_record import counted_as
from .groups import collective_root, member_group, root_global_rank

__all__ = [
    "broadcast_object_list",
    "all_gather_object",
    "gather_object",
    "scatter_object_list",
    "send_object_list",
    "recv_object_list",
]


def _to_bytes(obj: Any) -> np.ndarray:
    return np.frombuffer(cloudpickle.dumps(obj), np.uint8)


def _from_bytes(buf: np.ndarray) -> Any:
    return pickle.loads(buf.tobytes())


def _padded(buf: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, np.uint8)
    out[: buf.size] = buf
    return out


def _all_gather(out: np.ndarray, piece: np.ndarray, group: Any) -> None:
    """Every rank's ``piece`` into ``out``, counted (``CommDebugMode``) as the list all-gather
    (``c10d.allgather_``) PyTorch's object collectives issue."""
    with counted_as("c10d.allgather_"):
        c.all_gather_into_tensor(out, piece, group)


def _holds_one_per_rank(objects: list, size: int, name: str) -> None:
    """PyTorch's ``IndexError`` for a list too short for one object per rank (longer lists
    keep their extra entries), raised before anything is sent."""
    if len(objects) < size:
        raise IndexError(
            f"list assignment index out of range: {name} has {len(objects)} entries, the group {size} ranks"
        )


def broadcast_object_list(
    object_list: list, src: int | None = None, group=None, device: Any = None, group_src: int | None = None
) -> None:
    """Replace ``object_list``'s entries on every rank by those of global rank ``src`` (or
    ``group``'s rank ``group_src``).

    Every rank passes a list of the same length; non-src entries are placeholders.
    """
    pg = member_group(group, "broadcast_object_list")
    if pg is None:
        return
    root = collective_root(pg, src, group_src, "broadcast")
    is_src = pg.rank() == root
    payloads = [_to_bytes(o) for o in object_list] if is_src else []
    sizes = np.array([p.size for p in payloads] if is_src else [0] * len(object_list), np.int64)
    c.broadcast(sizes, group=group, group_src=root)
    data = np.concatenate(payloads) if is_src and payloads else np.empty(int(sizes.sum()), np.uint8)
    c.broadcast(data, group=group, group_src=root)
    if not is_src:
        edges = np.cumsum([0, *sizes])
        for i in range(len(object_list)):
            object_list[i] = _from_bytes(data[edges[i] : edges[i + 1]])


def all_gather_object(object_list: list, obj: Any, group=None) -> None:
    """Fill ``object_list``'s first ``world_size`` entries with ``obj`` from every rank of
    ``group`` (entry ``i`` from group rank ``i``; entries past them are left as they are)."""
    pg = member_group(group, "all_gather_object")
    if pg is None:
        return
    _holds_one_per_rank(object_list, pg.size(), "object_list")
    payload = _to_bytes(obj)
    sizes = np.empty(pg.size(), np.int64)
    _all_gather(sizes, np.array([payload.size], np.int64), group)
    width = int(sizes.max())
    gathered = np.empty(pg.size() * width, np.uint8)
    _all_gather(gathered, _padded(payload, width), group)
    for r in range(pg.size()):
        object_list[r] = _from_bytes(gathered[r * width : r * width + sizes[r]])


def gather_object(
    obj: Any,
    object_gather_list: list | None = None,
    dst: int | None = None,
    group=None,
    group_dst: int | None = None,
) -> None:
    """Collect ``obj`` from every rank into ``object_gather_list`` on global rank ``dst`` (or
    ``group``'s rank ``group_dst``; ``None`` elsewhere)."""
    pg = member_group(group, "gather_object")
    if pg is None:
        return
    root = collective_root(pg, dst, group_dst, "gather")
    is_dst = pg.rank() == root
    if is_dst:
        if not object_gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _holds_one_per_rank(object_gather_list, pg.size(), "object_gather_list")
    payload = _to_bytes(obj)
    sizes = np.empty(pg.size(), np.int64)
    _all_gather(sizes, np.array([payload.size], np.int64), group)
    width = int(sizes.max())
    outputs = [np.empty(width, np.uint8) for _ in range(pg.size())] if is_dst else None
    c.gather(_padded(payload, width), outputs, group=group, group_dst=root)
    if is_dst:
        for r in range(pg.size()):
            object_gather_list[r] = _from_bytes(outputs[r][: sizes[r]])


def scatter_object_list(
    scatter_object_output_list: list,
    scatter_object_input_list: list | None = None,
    src: int | None = None,
    group=None,
    group_src: int | None = None,
) -> None:
    """Send ``scatter_object_input_list[i]`` from global rank ``src`` (or ``group``'s rank
    ``group_src``) to group rank ``i``, which finds it in ``scatter_object_output_list[0]``."""
    pg = member_group(group, "scatter_object_list")
    if pg is None:
        return
    root = collective_root(pg, src, group_src, "broadcast")
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    is_src = pg.rank() == root
    if is_src and scatter_object_input_list is None:
        raise ValueError("source rank must provide non-None scatter_object_input_list")
    if is_src and len(scatter_object_input_list) != pg.size():
        raise RuntimeError(
            f"ProcessGroupGloo::scatter: Incorrect input list size {len(scatter_object_input_list)}. "
            f"Input list size should be {pg.size()}, same as size of the process group."
        )
    payloads = [_to_bytes(o) for o in scatter_object_input_list] if is_src else []
    sizes = np.array([p.size for p in payloads] if is_src else [0] * pg.size(), np.int64)
    c.broadcast(sizes, group=group, group_src=root)
    width = int(sizes.max())
    mine = np.empty(width, np.uint8)
    c.scatter(mine, [_padded(p, width) for p in payloads] if is_src else None, group=group, group_src=root)
    scatter_object_output_list[0] = _from_bytes(mine[: sizes[pg.rank()]])


def send_object_list(
    object_list: list,
    dst: int | None = None,
    group=None,
    device: Any = None,
    group_dst: int | None = None,
    use_batch: bool = False,
) -> None:
    """Send ``object_list``'s objects to global rank ``dst`` (or ``group``'s rank
    ``group_dst``), where :func:`recv_object_list` with a list of the same length receives
    them: two messages (their sizes, then their bytes) with tag 0, in order with the other
    messages between the two ranks."""
    pg = member_group(group, "send_object_list")
    if pg is None:
        return
    dst = root_global_rank(pg, dst, group_dst)
    payloads = [_to_bytes(o) for o in object_list]
    p2p.send(np.array([p.size for p in payloads], np.int64), dst, group)
    p2p.send(np.concatenate(payloads) if payloads else np.empty(0, np.uint8), dst, group)


def recv_object_list(
    object_list: list,
    src: int | None = None,
    group=None,
    device: Any = None,
    group_src: int | None = None,
    use_batch: bool = False,
) -> int:
    """Fill ``object_list`` with the objects :func:`send_object_list` sent from global rank
    ``src`` (or ``group``'s rank ``group_src``; any rank if neither). Returns the sender's
    global rank (-1 on ranks outside ``group``). The list's length must be the sender's."""
    pg = member_group(group, "recv_object_list")
    if pg is None:
        return -1
    sizes = np.empty(len(object_list), np.int64)
    sender = p2p.recv(sizes, src, group, group_src=group_src)
    data = np.empty(int(sizes.sum()), np.uint8)
    p2p.recv(data, sender, group)
    edges = np.cumsum([0, *sizes])
    for i in range(len(object_list)):
        object_list[i] = _from_bytes(data[edges[i] : edges[i + 1]])
    return sender
